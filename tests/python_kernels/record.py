"""Run every Python-kernel case with real numba-cuda on a GPU and save inputs and outputs: the oracle.

usage: python tests/python_kernels/record.py OUTDIR
Writes OUTDIR/h100.npz ("<name>/in<k>" for every argument, numbers as 0-d arrays; "<name>/out<k>"
for every array argument after the launch) and OUTDIR/provenance.json (GPU, compute capability,
numba and numba-cuda versions, cases left out and why). Each case runs twice on fresh inputs; one
whose runs differ is left out as nondeterministic.
"""
import json
import os
import platform
import sys
import traceback
from importlib import metadata

import numpy as np

if __package__ in (None, ""):                  # run as a script: make `python_kernels` and cudalab importable
    _tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path[:0] = [_tests, os.path.dirname(_tests)]

from numba import cuda  # noqa: E402

from cudalab.pykernels.compiler import numpy_compat  # noqa: E402

from python_kernels import CASES, case_inputs  # noqa: E402


def run(kernel, case):
    args = case_inputs(case)
    kernel[case.grid, case.block](*args)
    cuda.synchronize()
    return [a.copy() for a in args if isinstance(a, np.ndarray)]


def _driver_version():
    try:
        return list(cuda.cudadrv.driver.driver.get_version())
    except Exception as e:          # the recording matters more than this detail
        return f"unknown ({type(e).__name__})"


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    numpy_compat()            # numba-cuda 0.30 with numpy >= 2.5
    saved, left_out = {}, {}
    for case in CASES:
        try:
            kernel = cuda.jit(case.kernel)
            first, second = run(kernel, case), run(kernel, case)
        except Exception as e:
            left_out[case.name] = f"failed: {type(e).__name__}: {e}"
            traceback.print_exc()
            continue
        if any(a.tobytes() != b.tobytes() for a, b in zip(first, second)):
            left_out[case.name] = "nondeterministic: two runs differ"
            continue
        for k, a in enumerate(case_inputs(case)):
            saved[f"{case.name}/in{k}"] = np.asarray(a)
        for k, a in enumerate(first):
            saved[f"{case.name}/out{k}"] = a
        print(f"{case.name}: recorded")
    np.savez_compressed(os.path.join(outdir, "h100.npz"), **saved)
    dev = cuda.get_current_device()
    name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
    provenance = {"gpu": name, "compute_capability": list(dev.compute_capability),
                  "numba": metadata.version("numba"), "numba-cuda": metadata.version("numba-cuda"),
                  "driver": _driver_version(), "python": platform.python_version(),
                  "left_out": left_out}
    with open(os.path.join(outdir, "provenance.json"), "w") as f:
        json.dump(provenance, f, indent=1)
    print(json.dumps(provenance, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])
