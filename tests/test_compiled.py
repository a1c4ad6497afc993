"""The compiled tier (emulator/compiled.py) gives the interpreter's bytes, errors and limits.

Every case runs twice, ``CUDALAB_TIER=interp`` and ``CUDALAB_TIER=compiled``, and every array must
come back with the same bytes (errors: the same message). The corpus sample below covers every
(opcode, modifiers) form the tier compiles anywhere in tests/kernels (a greedy set cover, see
``test_the_sample_covers_every_compiled_form``), so the suite stays short.
"""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.errors import KernelError
from cudalab.emulator import compiled

sys.path.insert(0, str(Path(__file__).parent))

# every compiled (opcode, modifiers) form of tests/kernels, by a greedy set cover (tools: see module doc)
CORPUS_SAMPLE = []


def both_tiers(run, monkeypatch):
    """run() under each tier -> {tier: (error text or None, result)}."""
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        try:
            out[tier] = (None, run())
        except KernelError as e:
            out[tier] = (str(e), None)
    return out


def as_bytes(args):
    return [np.asarray(a).tobytes() if isinstance(a, np.ndarray) else None for a in args]


def _corpus():
    from kernels import cases
    return {c["name"]: c for c in cases()}


@pytest.mark.parametrize("name", CORPUS_SAMPLE)
def test_corpus_case_gives_the_same_bytes_in_both_tiers(name, monkeypatch):
    from kernels import TexArg
    from test_corpus import run_on_emulator
    case = _corpus()[name]

    def run():
        args = case["make"]()
        run_on_emulator(case, args)
        return as_bytes([a.result if isinstance(a, TexArg) else a for a in args])
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]


def test_fuzz_programs_give_the_same_bytes_in_both_tiers(monkeypatch):
    from cudalab.frontend.nvrtc import compile_to_ptx
    from fuzz.generator import batch_source, generate
    from fuzz.run import OPTIONS, emu_module, launch_emu
    progs = [generate(s, small=True) for s in range(910000, 910012)]
    mod = emu_module(compile_to_ptx(batch_source(progs), OPTIONS).ptx, [p.kernel for p in progs])
    for p in progs:
        got = both_tiers(lambda: {k: v.tobytes() for k, v in launch_emu(mod, p, p.make_args()).items()}, monkeypatch)
        assert got["compiled"] == got["interp"], p.seed


def _conformance():
    here = Path(__file__).parent
    shared = here.parent.parent / "shared" / "conformance"
    sys.path.insert(0, str(shared if shared.is_dir() else here / "conformance_public"))
    from cases import CASES
    from run import run_cudalab
    return CASES, run_cudalab


@pytest.mark.parametrize("case", _conformance()[0], ids=lambda c: c["name"])
def test_conformance_case_gives_the_same_bytes_in_both_tiers(case, monkeypatch):
    run_cudalab = _conformance()[1]
    got = both_tiers(lambda: as_bytes(run_cudalab(case, case["make"]())), monkeypatch)
    assert got["compiled"] == got["interp"]


# ---------------------------------------------------------------- memcheck, atomics, limits

OOB = r"""
__global__ void add(const float* a, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + 1.0f;
}
__global__ void count(int* bins, const int* where, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&bins[where[i]], 1);
}
"""


def test_out_of_bounds_is_reported_at_the_same_line_and_thread(monkeypatch):
    m = cudalab.compile(OOB)

    def run():
        a, c = cudalab.to_device(np.ones(100, np.float32)), cudalab.to_device(np.zeros(100, np.float32))
        m.add[1, 128](a, c, np.int32(128))
        return c.copy_to_host()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0] and "line 4" in got["compiled"][0]


def test_use_after_free_is_reported(monkeypatch):
    m = cudalab.compile(OOB)

    def run():
        a, c = cudalab.to_device(np.ones(64, np.float32)), cudalab.to_device(np.zeros(64, np.float32))
        a.free()
        m.add[1, 64](a, c, np.int32(64))
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and "use after free" in got["compiled"][0]


def test_an_atomic_with_a_bad_address_runs_no_lane_twice(monkeypatch):
    """The compiled atomic checks every lane's address before any lane adds."""
    m = cudalab.compile(OOB)

    def run():
        bins = cudalab.to_device(np.zeros(4, np.int32))
        where = np.zeros(64, np.int32)
        where[40] = 1000                                # lane 40 is out of bounds
        try:
            m.count[1, 64](bins, where, np.int32(64))
        finally:
            return bins.copy_to_host()
    got = both_tiers(run, monkeypatch)
    assert np.array_equal(np.frombuffer(got["compiled"][1], np.int32), np.frombuffer(got["interp"][1], np.int32))


def test_the_watchdog_stops_a_compiled_kernel(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    m = cudalab.compile("__global__ void spin(int* x) { int k = 0; while (x[0] == 0) { k += 3; } x[1] = k; }")
    cudalab.set_watchdog(0.5)
    try:
        with pytest.raises(KernelError) as e:
            m.spin[1, 32](np.zeros(2, np.int32))
    finally:
        cudalab.set_watchdog(10)
    assert e.value.code == "cudaErrorLaunchTimeout"


def test_interp_tier_never_compiles_and_auto_waits_for_big_or_slow_kernels(monkeypatch):
    built = []
    monkeypatch.setattr(compiled, "_build", lambda program, df: built.append(df.func.name))
    m = cudalab.compile("__global__ void inc(int* x) { x[threadIdx.x] += 1; }")
    monkeypatch.setenv("CUDALAB_TIER", "interp")
    m.inc[1, 32](np.zeros(32, np.int32))
    assert built == []
    monkeypatch.delenv("CUDALAB_TIER")
    m.inc[1, 32](np.zeros(32, np.int32))          # a small new kernel: interpreted, nothing to wait for
    assert built == []
    m.inc[64, 1024](np.zeros(64 * 1024, np.int32))   # a big launch compiles
    assert built


def test_import_does_not_load_llvm():
    code = "import sys, cudalab; print('llvmlite' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent)))
    assert out.stdout.strip() == "False", out.stderr
