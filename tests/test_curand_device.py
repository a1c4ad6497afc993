"""cuRAND's device API on the emulator: curand_init's skip-ahead runs natively and gives a GPU's numbers.

A Monte Carlo lesson starts every thread with ``curand_init(seed, id, 0, &state)``. cuRAND's header jumps
ahead with 160 x 160 bit matrices, about 21,000 instructions a thread when interpreted; cudalab's front
for the header (cudalab/frontend/curand) turns the jump into one call the emulator answers natively
(emulator/xorwow_jump.py). The states and numbers must still be the GPU's, bit for bit:
libraries/curand_device_h200.json is what an H200 wrote for libraries/curand_device_cases.cuh
(recorded with libraries/curand_device_probe.cu, NVIDIA's header unchanged).
"""
import json
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.analysis.report import profile
from cudalab.emulator import xorwow_jump
from cudalab.ptx import inline

HERE = Path(__file__).parent / "libraries"
CASES = (HERE / "curand_device_cases.cuh").read_text()
RECORDED = json.loads((HERE / "curand_device_h200.json").read_text())
RECORD = 48
XORWOW, PHILOX, MRG = slice(0, 24), slice(24, 39), slice(39, 47)


def run_cases(cases, options=()):
    """Each case (seed, subsequence, offset) on one thread of the record kernel: its RECORD words."""
    kernel = cudalab.compile(CASES, options).get_kernel("record")
    n = len(cases)
    records = np.zeros(n * RECORD, np.uint32)
    rec = kernel[(n + 63) // 64, 64](np.array(cases, np.uint64).ravel(), records, np.int32(n))
    return records.reshape(n, RECORD), rec


@pytest.fixture(scope="module")
def emulated():
    return run_cases(RECORDED["cases"])


def test_the_recording_covers_zero_small_and_huge_seeds_subsequences_and_offsets():
    cases = np.array(RECORDED["cases"], np.uint64)
    for column in range(3):
        values = set(cases[:, column].tolist())
        assert 0 in values and 1 << 63 <= max(values)
    assert RECORDED["gpu"] == "NVIDIA H200" and len(RECORDED["records"]) == len(cases)


def test_xorwow_states_and_numbers_equal_the_h200s(emulated):
    got, _ = emulated
    want = np.array(RECORDED["records"], np.uint32)
    # state after curand_init, four curand(), uniform, two normals, a uniform and a normal double,
    # then the state and a number after skipahead(offset + 17) and skipahead_sequence(subsequence % 1000 + 1)
    np.testing.assert_array_equal(got[:, XORWOW], want[:, XORWOW])
    assert (got[:, -1] == 0xC0DA1AB).all()


def test_philox_and_mrg32k3a_equal_the_h200s(emulated):
    got, _ = emulated
    want = np.array(RECORDED["records"], np.uint32)
    np.testing.assert_array_equal(got[:, PHILOX], want[:, PHILOX])
    # MRG32k3a takes subsequences below 2^51 only: beyond, cuRAND's jump reads past the end of its own
    # table (mrg32k3aM1SubSeq), and what a GPU finds there is no number to compare with
    cases = np.array(RECORDED["cases"], np.uint64)
    fine = cases[:, 1] < np.uint64(1 << 51)
    assert fine.sum() >= len(cases) - 2
    np.testing.assert_array_equal(got[fine, MRG], want[fine, MRG])


def test_one_seed_on_consecutive_subsequences_is_the_usual_setup_and_matches_too(emulated):
    got, _ = emulated
    cases = np.array(RECORDED["cases"], np.uint64)
    usual = (cases[:, 0] == 2026) & (cases[:, 2] == 0)
    assert usual.sum() == 256 and (cases[usual, 1] == np.arange(256)).all()
    np.testing.assert_array_equal(got[usual, XORWOW], np.array(RECORDED["records"], np.uint32)[usual, XORWOW])


def test_the_native_jump_gives_the_words_the_interpreted_loops_give():
    # CUDALAB_CURAND_LOOPS leaves NVIDIA's header as it is: its loops run instruction by instruction
    # (subsequences below 2^51: MRG32k3a's jump reads past its table beyond, see above)
    cases = [(5, 0, 0), (5, 3, 7), (99, 1 << 21, 1 << 20), (2 ** 64 - 1, 2 ** 51 - 11, 2 ** 63 + 3)]
    native, _ = run_cases(cases)
    looped, _ = run_cases(cases, ("-DCUDALAB_CURAND_LOOPS",))
    np.testing.assert_array_equal(native, looped)


def test_a_setup_kernel_costs_a_few_dozen_instructions_a_thread():
    kernel = cudalab.compile(r'''
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState *states, unsigned long long seed) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(seed, id, 0, &states[id]);
}''').get_kernel("setup")
    states = cudalab.device_array((4096 * 48,), np.uint8)
    rec = kernel[16, 256](states, np.uint64(1234))
    assert rec.instructions * 32 / 4096 < 100        # warp-level instructions, as threads: was about 21,000
    words = states.copy_to_host().view(np.uint32).reshape(4096, 12)
    from cudalab.runtime.libraries import rand       # the host API's XORWOW (its jumps are the native path's)
    v, d = rand.xorwow_states(1234, 4096)
    np.testing.assert_array_equal(words[:, 1:6], v)
    assert (words[:, 0] == d).all()


def test_memcheck_names_curand_inits_line_for_a_state_past_the_allocation():
    kernel = cudalab.compile(r'''
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState *states) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(7, id, 0, &states[id]);
}''').get_kernel("setup")
    states = cudalab.device_array((40 * 48,), np.uint8)     # room for 40 states, 64 threads
    with cudalab.check("memcheck"), pytest.raises(cudalab.KernelError) as e:
        kernel[1, 64](states)
    assert "Invalid __global__ write" in str(e.value) and "at line 5 in kernel setup" in str(e.value)
    assert "thread (40,0,0)" in str(e.value)


def test_profile_counts_the_state_stores_at_curand_inits_line():
    kernel = cudalab.compile(r'''
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState *states) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(7, id, 0, &states[id]);
    if (id == 0) printf("%u\\n", states[0].v[0]);
}''').get_kernel("setup")
    states = cudalab.device_array((64 * 48,), np.uint8)
    rec = profile(kernel, 1, 64, (states,))
    # the lines are the cell's (the front's function comes first in the PTX, and its header is file 1 there)
    lines = {r["line"]: r for r in rec.reports["per_line"]}
    assert lines[5]["source"] == "curand_init(7, id, 0, &states[id]);" and 0 < lines[5]["instructions"] < 200
    assert {3, 4, 5, 6, 7} <= set(lines)
    with cudalab.check("racecheck"):
        assert kernel[1, 64](states).findings == []


@pytest.mark.parametrize("numbers", [0, 1])
def test_every_way_of_jumping_agrees(numbers):
    rng = np.random.default_rng(numbers)
    lanes = 9000                                                  # past NUMBA_LANES: the compiled loop
    v = rng.integers(0, 2 ** 32, (lanes, 5), dtype=np.uint64).astype(np.uint32)
    n = rng.integers(0, 2 ** 63, lanes, dtype=np.uint64) >> rng.integers(0, 63, lanes).astype(np.uint64)
    table = xorwow_jump.tables(numbers, xorwow_jump.LEVELS)
    each = xorwow_jump._jump_numpy(v, n, table, xorwow_jump.LEVELS)
    np.testing.assert_array_equal(xorwow_jump.jump(v, n, numbers), each)
    shared = np.repeat(v[:1], lanes, 0)                           # one seed: the shared-prefix path
    np.testing.assert_array_equal(xorwow_jump.jump(shared, n, numbers),
                                  xorwow_jump._jump_numpy(shared, n, table, xorwow_jump.LEVELS))
    ids = np.arange(lanes, dtype=np.uint64)                       # curand_init(seed, id, 0): sorted distances
    np.testing.assert_array_equal(xorwow_jump.jump(shared, ids, numbers),
                                  xorwow_jump._jump_numpy(shared, ids, table, xorwow_jump.LEVELS))


def test_a_distance_of_zero_leaves_the_state_alone():
    v = np.arange(50, dtype=np.uint32).reshape(10, 5)
    np.testing.assert_array_equal(xorwow_jump.jump(v, np.zeros(10, np.uint64), 0), v)


def test_inlining_keeps_the_call_the_emulator_answers():
    assert xorwow_jump.NAME in inline.NATIVE_CALLS


def test_mrg32k3a_matrix_power_is_exact_modular_arithmetic():
    # cuRAND multiplies modulo m in doubles split so that nothing rounds; 64-bit integers give the same words
    from cudalab.emulator import mrg_jump
    rng = np.random.default_rng(3)
    table = rng.integers(0, 2 ** 32, (mrg_jump.ENTRIES, 3, 3), dtype=np.uint64)
    n = rng.integers(0, 2 ** 63, 40, dtype=np.uint64)
    m = 4294944443                                            # MRG32K3A_MOD2
    got = mrg_jump.power(table, n, m)
    for lane, distance in enumerate(n.tolist()):
        want = [[int(i == j) for j in range(3)] for i in range(3)]
        for bit in range(64):
            if distance >> bit & 1:
                a = table[bit].tolist()
                want = [[sum(a[r][k] * want[k][c] for k in range(3)) % m for c in range(3)] for r in range(3)]
        assert got[lane].tolist() == [x for row in want for x in row]


def test_an_mrg32k3a_setup_kernel_runs_natively_and_gives_the_loops_words():
    source = r'''
#include <curand_kernel.h>
extern "C" __global__ void setup(curandStateMRG32k3a_t *states) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init(2026, 1000 * id, 99, &states[id]);
}'''
    words, counts = [], []
    for options in ((), ("-DCUDALAB_CURAND_LOOPS",)):
        states = cudalab.device_array((64 * 64,), np.uint8)
        rec = cudalab.compile(source, options).get_kernel("setup")[1, 64](states)
        words.append(states.copy_to_host())
        counts.append(rec.instructions)
    np.testing.assert_array_equal(words[0], words[1])
    assert counts[0] * 5 < counts[1]


PROGRAM = r'''
#include <cstdio>
#HOST_TOO
#include <curand_kernel.h>
__global__ void setup(curandState *x, curandStateMRG32k3a_t *m, int n) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) { curand_init(77, id, 5, &x[id]); curand_init(77, id, 5, &m[id]); }
}
int main() {
    const int n = 64;
    curandState *x; curandStateMRG32k3a_t *m;
    cudaMallocManaged(&x, n * sizeof(*x)); cudaMallocManaged(&m, n * sizeof(*m));
    setup<<<1, n>>>(x, m, n);
    cudaDeviceSynchronize();
    printf("%u %u %u\n", x[n - 1].v[0], x[n - 1].d, m[n - 1].s2[2]);
#ifdef HOST_TOO
    curandState hx; curandStateMRG32k3a_t hm;               // cuRAND's host path: the _host tables
    curand_init(77, n - 1, 5, &hx); curand_init(77, n - 1, 5, &hm);
    printf("%u %u %u\n", hx.v[0], hx.d, hm.s2[2]);
#endif
    return 0;
}
'''


@pytest.mark.parametrize("host_too", [False, True])
def test_a_whole_program_builds_with_the_front_and_its_host_path_agrees(host_too):
    # NVIDIA's header is device-only unless a program defines QUALIFIERS as __host__ __device__ itself
    from cudalab.programs import run_program_source
    line = "#define HOST_TOO\n#define QUALIFIERS static __forceinline__ __host__ __device__" if host_too else ""
    r = run_program_source(PROGRAM.replace("#HOST_TOO", line))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.split("\n")
    assert all(int(w) for w in lines[0].split()) and len(lines[0].split()) == 3
    if host_too:
        assert lines[1] == lines[0]


def test_a_host_compilers_cpp_file_that_includes_the_header_builds(tmp_path, monkeypatch):
    # nvcc hands a .cpp file to g++ with the same -I folders, the front's included: no CUDA keywords there
    from cudalab.programs import run_program
    (tmp_path / "sizes.cpp").write_text('#include <curand_kernel.h>\n#include <cstdio>\n'
                                        'int main() { printf("%d\\n", (int)sizeof(curandState)); return 0; }\n')
    monkeypatch.chdir(tmp_path)
    r = run_program("sizes.cpp")
    assert (r.returncode, r.stdout) == (0, "48\n"), r.stderr
