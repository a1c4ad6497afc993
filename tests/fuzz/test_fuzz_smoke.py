"""The random-program generator's programs run on the emulator, without errors and deterministically.

The comparison with a real GPU (thousands of programs) is tools/fuzz_gpu.py + tests/fuzz/run.py;
docs/fuzz_report.md has its results. This is the cheap part that CI can run.
"""
import hashlib
import re

import numpy as np
import pytest

from .generator import NF, NI, SENTINEL_I, generate
from .run import emu_module, launch_emu, on_profile

# 20 consecutive seeds, and three more so that every version-2 operation below occurs at least once
SEEDS = list(range(900000, 900020)) + [900087, 900103, 900280]
V2_OPERATIONS = {
    "wmma", "mma_sync", "pipeline_memcpy_async", "cp_async_ca", "cp_async_cg_zfill", "cp_async_block",
    "cuda_pipeline", "cg_memcpy_async", "cuda_barrier", "cuda_barrier_split", "cuda_memcpy_async_barrier",
    "mbarrier", "mbarrier_parity", "mbarrier_try_wait", "named_barrier_groups", "named_barrier_producer_consumer",
    "elect_sync", "dpx", "fp8_convert", "half_math", "bf16_math", "half2_math", "tf32_convert", "bitfield_sm70"}


@pytest.fixture(scope="module")
def batch():
    from cudalab.frontend.nvrtc import compile_to_ptx
    from .generator import batch_source
    from .run import NO_FMAD, OPTIONS
    progs = [generate(s, small=True) for s in SEEDS]
    cs = compile_to_ptx(batch_source(progs), OPTIONS + progs[0].options + NO_FMAD)
    with on_profile(progs[0].version):
        yield progs, emu_module(cs.ptx, [p.kernel for p in progs])


def test_a_seed_always_gives_the_same_program_and_inputs():
    a, b = generate(12345), generate(12345)
    assert a.src == b.src and (a.grid, a.block, a.shared) == (b.grid, b.block, b.shared)
    for x, y in zip(a.make_args(), b.make_args()):
        assert np.array_equal(np.atleast_1d(x).view(np.uint8), np.atleast_1d(y).view(np.uint8))
    assert generate(12346).src != a.src


def sources_digest(version):
    h = hashlib.sha1()
    for s in range(0, 5000, 7):
        p = generate(s, version=version)
        h.update(p.src.encode())
        h.update(repr((p.grid, p.block, p.shared)).encode())
    return h.hexdigest()


def test_recorded_versions_never_change():
    """Version 1 made the programs of the run of 2026-11-23, version 2 those of 2026-11-26; their GPU
    outputs are recorded (differing_gpu.npz, differing_gpu_v2.npz), so their sources must stay byte
    for byte what they were: a new operation belongs in a new version."""
    assert sources_digest(1) == "a1ab3f0fc13ca23a2930fc1e0bb3d7f4cfe14b7f"
    assert sources_digest(2) == "83518d1822ffd45e39819a8e766b7fa06868411d"
    assert sources_digest(3) == "e2f2f0820eb6244b2f54111295f1f66c0a39a145"      # the run of 2026-11-26, later
    assert sources_digest(4) == "001d4d107285a3f6cc420c48d93f9704f26b15f5"      # the run of 2026-11-26 (fuzz5)
    assert generate(5, version=1).options == ("-arch=compute_80",)
    assert generate(5).options == ("-arch=compute_90",)


def test_programs_name_everything_after_their_seed_so_they_share_a_module():
    p = generate(77)
    assert p.kernel == "fz77" and 'extern "C" __global__ void fz77(' in p.src
    assert "__syncthreads" in "".join(generate(s).src for s in range(40))   # barriers do occur


def test_the_smoke_programs_cover_every_version_2_operation():
    seen = set().union(*(generate(s, small=True).features for s in SEEDS))
    assert V2_OPERATIONS <= seen, V2_OPERATIONS - seen


def test_smoke_programs_run_on_the_emulator_twice_with_the_same_bits(batch):
    progs, mod = batch
    for p in progs:
        first = launch_emu(mod, p, p.make_args())
        again = launch_emu(mod, p, p.make_args())
        for k in first:
            assert np.array_equal(first[k], again[k]), (p.seed, k)
        # every thread wrote all its values (at its early return or at the end)
        assert first["oi"].size == p.threads * NI and first["of"].size == p.threads * NF
        assert np.count_nonzero(first["oi"] == SENTINEL_I) == 0, p.seed


V3_OPERATIONS = {
    "prmt_modes", "int_ptx", "video", "fp8_ptx", "testp", "cvt_f2i_ptx", "float_ptx", "cvt_f64_f32_rounding",
    "cvt_f32_round", "f64_minmax", "match_all", "redux_more", "ldmatrix", "stmatrix", "movmatrix",
    "mbarrier_expect_tx", "cp_async_mbarrier_arrive", "mma_bf16k8", "mma_tf32k4", "mma_s8k16", "mma_m8s8",
    "mma_s4k32", "mma_u4k64", "mma_m8s4"}


def test_version_3_draws_the_instructions_the_earlier_versions_never_did():
    """Every version-3 operation occurs in its first 200 programs; version 3 never gives
    __vibmax_s16x2 a literal first operand (ptxas of CUDA 13.0 swaps its predicates then)."""
    import re
    progs = [generate(s, version=3) for s in range(200)]
    assert V3_OPERATIONS <= set().union(*(p.features for p in progs))
    assert progs[0].options == ("-arch=compute_90",)
    literal_first = re.compile(r"fzl_vibmax_s16x2\(\(?(0x[0-9a-f]+|[0-9]+)u\)?,")
    assert not any(literal_first.search(p.src) for p in progs)


def _first_argument(src, at):
    """The text of the first argument of the call whose '(' is at ``at``."""
    depth = 0
    for i in range(at, len(src)):
        depth += {"(": 1, ")": -1}.get(src[i], 0)
        if depth == 1 and src[i] == "," or depth == 0:
            return src[at + 1:i]


def test_version_4_reads_the_carry_in_its_own_asm_and_gives_vibmax_a_runtime_first_operand():
    """Version 3's carry chain read its last carry in an asm statement of its own, which NVRTC moved
    away from the chain (seeds 1092, 3713); a compile-time constant expression as __vibmax_s16x2's
    first operand makes ptxas swap its predicates (seed 1447). Version 4 does neither."""
    from .ops_v2 import RUNTIME
    progs = [generate(s, version=4) for s in range(300)]
    assert not any("fz3_addc" in p.src for p in progs) and any("fz4_addc" in p.src for p in progs)
    firsts = [_first_argument(p.src, m.end() - 1) for p in progs for m in re.finditer(r"fzl_vibmax_s16x2\(", p.src)]
    assert len(firsts) > 10 and all(RUNTIME.search(a) for a in firsts), [a for a in firsts if not RUNTIME.search(a)]
    v3 = [_first_argument(p.src, m.end() - 1) for s in range(1400, 1460)
          for p in [generate(s, version=3)] for m in re.finditer(r"fzl_vibmax_s16x2\(", p.src)]
    assert any(not RUNTIME.search(a) for a in v3)        # seed 1447's __bfloat16_as_ushort(__hneg(19))
