"""Barriers a warp reaches in parts, where an H100 did not finish: the emulator stops the same way.

tests/kernels/split_barrier.py holds the kernels; six of them ran on an H100 and test_corpus.py compares
their outputs bit for bit. The three below did not run to the end on the H100 (record.py dropped them,
tests/kernels/recorded/provenance.json): two hung and one stopped with an illegal instruction. The SASS
says why: ptxas predicates a short if/else whose sides end at their barriers (the warp then arrives whole
at each, and the kernel goes on), but branches where a side goes on after its barrier, and the two halves
of the warp then wait at two barriers for each other; __syncthreads_count() puts a warp-wide WARPSYNC in
front of its reduction, which the other half never reaches.
"""
import numpy as np
import pytest

import cudalab
from cudalab.errors import KernelError
from kernels import cases
from kernels.split_barrier import KERNELS

CASES = {c["name"]: c for c in cases(["split_barrier"])}


def launch(name):
    case = CASES[name]
    args = case["make"]()
    cudalab.compile(case["src"]).get_kernel(case["kernel"]).launch(case["grid"], case["block"], tuple(args))
    return args


def test_two_halves_of_a_warp_at_two_barriers_that_go_on_hang_as_on_the_h100():
    with pytest.raises(KernelError, match=r"would hang: __syncthreads\(\) \(line 13\) .* waits at another "
                                          r"barrier \(line 9\)") as e:
        launch("if_else_barriers_with_their_own_tails")
    assert e.value.code == "cudaErrorLaunchTimeout"


def test_syncthreads_count_at_two_places_in_a_warp_hangs_as_on_the_h100():
    with pytest.raises(KernelError, match=r"would hang: __syncthreads_count/and/or\(\) \(line 5\)") as e:
        launch("syncthreads_count_at_two_places_in_a_warp")
    assert e.value.code == "cudaErrorLaunchTimeout"


def test_a_non_aligned_named_barrier_in_a_split_warp_is_an_illegal_instruction_as_on_the_h100():
    with pytest.raises(KernelError, match=r"`barrier.sync 1, 64` at line 9 .* only some threads of a warp") as e:
        launch("named_barrier_half_warps_barrier_sync")
    assert e.value.code == "cudaErrorIllegalInstruction"


def test_the_sides_of_a_predicated_if_else_meet_and_synccheck_names_the_second_barrier(capsys):
    # each half stores, then waits at its own __syncthreads(): the H100 went on, and every value stored
    # before either barrier is seen after them; compute-sanitizer reported the barrier that ran second
    out = launch("if_else_two_barriers_half_warps")[1]
    s = np.where(np.arange(64) & 16, 3, 1) * CASES["if_else_two_barriers_half_warps"]["make"]()[0]
    assert out.tolist() == (s[np.arange(64) ^ 16] * 10 + s[(np.arange(64) + 32) & 63]).tolist()
    assert "synccheck warning: __syncthreads() at line 13 in kernel if_else" in capsys.readouterr().err
    with cudalab.check("synccheck"):
        with pytest.raises(KernelError, match=r"Barrier error: __syncthreads\(\) at line 13 .* another barrier \(line 9\)"):
            launch("if_else_two_barriers_half_warps")


def test_threads_that_leave_a_loop_write_before_the_others_pass_its_barrier():
    # ptxas puts a WARPSYNC in front of the barrier in the loop: the threads still looping wait there
    # until those that left have written and ended, so they read the values written after the loop
    # (the H100 gave these bits; compute-sanitizer's synccheck found nothing)
    src = KERNELS["leavers_write"]
    x = np.arange(1, 65, dtype=np.int32)
    out = np.zeros(64, np.int32)
    with cudalab.check("synccheck"):
        rec = cudalab.compile(src).get_kernel("leavers_write")[1, 64](x, out)
    assert rec.findings == []
    assert out[3] == x[4] + 3 * (10 * x[5] + 4)      # lane 4 left after one turn and wrote 10 * acc + 4


HANGS_ON_THE_H100 = {"if_else_barriers_with_their_own_tails", "syncthreads_count_at_two_places_in_a_warp",
                     "named_barrier_half_warps_barrier_sync"}


@pytest.mark.parametrize("name", sorted(set(CASES) - HANGS_ON_THE_H100))
def test_a_split_warp_counts_the_same_instructions_in_either_tier(name, monkeypatch):
    # a thread's executed instructions (ncu's smsp__thread_inst_executed) do not depend on which tier ran
    # it or in which order the halves of its warp ran: the compiled tier hands such a block to the interpreter
    case = CASES[name]
    counts = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        kernel = cudalab.compile(case["src"]).get_kernel(case["kernel"])
        counts[tier] = kernel.launch(case["grid"], case["block"], tuple(case["make"]())).thread_instructions
    assert counts["compiled"] == counts["interp"]


UNEVEN_TURNS = r"""
__global__ void uneven(int* out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    for (int k = 0; k < t % 3; ++k) {     // threads of one warp leave the loop after 0, 1 or 2 turns
        __syncthreads();
        s[t] += s[63 - t];
    }
    out[t] = s[t];
}
"""


@pytest.mark.parametrize("tier", ["interp", "compiled"])
def test_a_thread_waiting_at_a_barrier_executes_it_once_a_turn(tier, monkeypatch):
    # the threads still looping wait at the barrier while those that left the loop run to their end; the
    # emulator tries the barrier again for them, but a GPU's thread issues it once and waits: the barrier
    # (line 7) counts as many thread-instructions as the loop's store (line 8), one per thread per turn
    from cudalab.analysis.metrics import MetricsObserver
    monkeypatch.setenv("CUDALAB_TIER", tier)
    kernel = cudalab.compile(UNEVEN_TURNS).get_kernel("uneven")
    obs = MetricsObserver()
    kernel.launch(1, 64, (np.zeros(64, np.int32),), observers=[obs])
    per_line = {}
    for st in obs.stats.values():
        if st.inst.opcode in ("bar", "st"):
            per_line[st.inst.line] = st.thread_insts
    assert per_line[7] == per_line[8] == sum(t % 3 for t in range(64))
    plain = kernel[1, 64](np.zeros(64, np.int32))
    with_observer = sum(st.thread_insts for st in obs.stats.values())
    assert plain.thread_instructions == with_observer
