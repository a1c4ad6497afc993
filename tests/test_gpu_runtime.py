"""The public API on a real GPU: the same calls as on the emulator, and the two devices agree.

Run with a GPU: ``pytest -m gpu`` (skipped elsewhere)."""
import os
import sys

import numpy as np
import pytest

import cudalab

HERE = os.path.dirname(__file__)
SHARED = os.path.join(HERE, "..", "..", "shared", "conformance")
sys.path.insert(0, SHARED if os.path.isdir(SHARED) else os.path.join(HERE, "conformance_public"))
from cases import CASES  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.fixture
def gpu():
    dev = cudalab.use("gpu")
    yield dev
    cudalab.use("emu")


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_conformance_case_runs_on_the_gpu_and_matches_the_emulator(case, gpu):
    """Every public case through the host API on the GPU, outputs compared bit for bit with the emulator."""
    mod = cudalab.compile(case["src"])
    for kind in ("emu", "gpu"):                 # __constant__ data on each device
        cudalab.use(kind)
        for name, val in case["consts"].items():
            mod.get_global(name).copy_to_device(val)
    k = mod.get_kernel(case["kernel"])
    result = k.compare(case["grid"], case["block"], case["make"](), shared=case["shared"])
    assert result.same, repr(result)


def test_device_arrays_live_on_the_gpu(gpu):
    m = cudalab.compile("__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; "
                        "if (i < n) x[i] *= 2; }")
    d = cudalab.to_device(np.arange(1000, dtype=np.float32))
    rec = m.twice[4, 256](d, 1000)
    assert rec.backend == "gpu" and rec.gpu_time_ms is not None
    assert np.array_equal(d.copy_to_host(), 2 * np.arange(1000, dtype=np.float32))
