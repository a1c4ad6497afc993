"""The compiled tier on tensor-core kernels: every corpus kernel of tests/kernels/mma.py, run with the
compiled tier forced (CUDALAB_TIER=compiled, a fresh native cache) and in the interpreter, must
leave the same bytes in every argument.

A GEMM's unrolled k-loop is one fused program (emulator/mma_runs.py) that runs the address arithmetic
between its wmma instructions itself, while the compiled tier (emulator/compiled.py) builds groups from
the integer instructions around it. Those two once disagreed about who runs that arithmetic: the tier
left a kernel parameter's register unstored, the program's interpreted arithmetic read nothing there,
and wmma.load reported a null pointer (bf16, tf32 and f64 wmma kernels). The auto tier builds the same
code for a long launch, so the forced tier stands in for it here.
"""
import numpy as np
import pytest

from kernels import cases
from test_corpus import run_on_emulator

MMA_CASES = cases(("mma",))


def launched(case, tier, monkeypatch):
    """The case's arguments after one launch under CUDALAB_TIER=``tier``."""
    monkeypatch.setenv("CUDALAB_TIER", tier)
    args = case["make"]()
    run_on_emulator(case, args)
    return args


@pytest.mark.parametrize("case", MMA_CASES, ids=[c["name"] for c in MMA_CASES])
def test_a_tensor_core_kernel_gives_the_interpreters_bytes_in_the_compiled_tier(case, tmp_path, monkeypatch):
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded from an older build
    want = launched(case, "interp", monkeypatch)
    got = launched(case, "compiled", monkeypatch)
    for k, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, np.ndarray):
            assert g.tobytes() == w.tobytes(), f"argument {k} differs between the compiled tier and the interpreter"
