"""Kernels cut down from the fuzzer's differences between the emulator and an H100, on the emulator.

Each case in tests/fuzz/found.py runs a family of operations over edge values, one output row per
operation; tests/fuzz/found.npz holds the rows an H100 wrote (tools/fuzz_gpu.py --found, same PTX).
Every row is one test, named case-operation. Rows listed in found.OPEN still differ on the emulator:
they are expected failures (xfail, not strict) that name the cause, so the suite stays green and the
difference stays visible; a fixed one shows up as XPASS and can leave OPEN.
"""
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from . import found, found_v2

# found.py: cut from the version-1 run (2026-11-23); found_v2.py: every version-2 operation (2026-11-26)
SOURCES = {"found": found, "found_v2": found_v2}
CASES = found.CASES + found_v2.CASES
OPEN = {**found.OPEN, **found_v2.OPEN}
BY_NAME = {c["name"]: c for c in CASES}
MODULE = {c["name"]: m for m, mod in SOURCES.items() for c in mod.CASES}


def params():
    out = []
    for c in CASES:
        for arg, ops in c["rows"].items():
            for row, op in enumerate(ops):
                key = f"{c['name']}/{arg}/{op}"
                marks = [pytest.mark.xfail(strict=False, reason=OPEN[key])] if key in OPEN else []
                out.append(pytest.param(c["name"], arg, row, id=f"{c['name']}-{op}", marks=marks))
    return out


@lru_cache(maxsize=None)
def emulated(name):
    """Every array argument after the case ran on the emulator, as uint32 bits."""
    import cudalab
    from cudalab.device import current, set_device
    case = BY_NAME[name]
    args = case["make"]()
    options = list(case.get("options", ()))
    before = current()
    if "-arch=compute_90" in options:
        set_device("H100")
    try:
        cudalab.compile(case["src"], options=options).get_kernel(case["kernel"]).launch(case["grid"], case["block"], args)
    finally:
        set_device(before)
    return {i: np.asarray(a).view(np.uint32) for i, a in enumerate(args) if isinstance(a, np.ndarray)}


@lru_cache(maxsize=None)
def recorded(name):
    path = Path(__file__).parent / f"{MODULE[name]}.npz"
    if not path.exists():
        return {}
    with np.load(path) as z:
        return {int(k.split("/")[1][3:]): z[k].view(np.uint32) for k in z.files if k.startswith(name + "/")}


def inputs_of(name, i):
    args = BY_NAME[name]["make"]()
    return [hex(int(np.asarray(a).view(np.uint32)[i % np.asarray(a).size])) for a in args
            if isinstance(a, np.ndarray) and a.size and np.asarray(a).size < 3 * 10 ** 4 and a.dtype.itemsize == 4][:3]


@pytest.mark.parametrize("name,arg,row", params())
def test_emulator_row_has_the_gpu_bits(name, arg, row):
    if not (Path(__file__).parent / f"{MODULE[name]}.npz").exists():
        pytest.skip(f"{MODULE[name]}.npz is not recorded yet (tools/fuzz_gpu.py --found)")
    want = recorded(name).get(arg)
    assert want is not None, f"no GPU result recorded for {name}"
    n = want.size // len(BY_NAME[name]["rows"][arg])
    got = emulated(name)[arg][row * n:(row + 1) * n]
    want = want[row * n:(row + 1) * n]
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, (f"{bad.size} of {n} differ; first: " + "; ".join(
        f"inputs {inputs_of(name, int(i))}: emulator {int(got[i]):#010x}, GPU {int(want[i]):#010x}" for i in bad[:3]))
