"""The random-program generator's programs run on the emulator, without errors and deterministically.

The comparison with a real GPU (thousands of programs) is tools/fuzz_gpu.py + tests/fuzz/run.py;
docs/fuzz_report.md has its results. This is the cheap part that CI can run.
"""
import numpy as np
import pytest

from .generator import NF, NI, SENTINEL_I, generate
from .run import emu_module, launch_emu

SEEDS = range(900000, 900020)


@pytest.fixture(scope="module")
def batch():
    from cudalab.frontend.nvrtc import compile_to_ptx
    from .generator import batch_source
    from .run import OPTIONS
    progs = [generate(s, small=True) for s in SEEDS]
    cs = compile_to_ptx(batch_source(progs), OPTIONS)
    return progs, emu_module(cs.ptx, [p.kernel for p in progs])


def test_a_seed_always_gives_the_same_program_and_inputs():
    a, b = generate(12345), generate(12345)
    assert a.src == b.src and (a.grid, a.block, a.shared) == (b.grid, b.block, b.shared)
    for x, y in zip(a.make_args(), b.make_args()):
        assert np.array_equal(np.atleast_1d(x).view(np.uint8), np.atleast_1d(y).view(np.uint8))
    assert generate(12346).src != a.src


def test_programs_name_everything_after_their_seed_so_they_share_a_module():
    p = generate(77)
    assert p.kernel == "fz77" and 'extern "C" __global__ void fz77(' in p.src
    assert "__syncthreads" in "".join(generate(s).src for s in range(40))   # barriers do occur


def test_twenty_programs_run_on_the_emulator_twice_with_the_same_bits(batch):
    progs, mod = batch
    for p in progs:
        first = launch_emu(mod, p, p.make_args())
        again = launch_emu(mod, p, p.make_args())
        for k in first:
            assert np.array_equal(first[k], again[k]), (p.seed, k)
        # every thread wrote all its values (at its early return or at the end)
        assert first["oi"].size == p.threads * NI and first["of"].size == p.threads * NF
        assert np.count_nonzero(first["oi"] == SENTINEL_I) == 0, p.seed
