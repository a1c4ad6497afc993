"""numpy's BLAS runs on one thread in the process that serves a program.

cuBLAS calls are computed with numpy in the serving process (runtime/libraries), and numpy's
OpenBLAS splits a dot product of more than 10,000 elements, a gemv or a gemm over all the cores,
whose threads spin while they wait for the next piece of work. A conjugate-gradient solver calls
cublasDdot on 16,384 doubles a few thousand times between small kernels: on a shared two-core
machine each call then took 31 ms of wall time instead of 2 us, and the threads' spinning charged
the program's CPU-time limit seven times what the work needed (CSCS's summer-school miniapp, 5 time
steps: 7.2 s of the server's CPU with OpenBLAS's threads, 1.1 s with one). A GPU-sized gemm is
refused before it runs (``operands.CPU_FLOPS``), so what numpy is given fits one core anyway.

A BLAS thread count that the user set in the environment (``OPENBLAS_NUM_THREADS``,
``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``) is left as it is.
"""
from __future__ import annotations

import ctypes
import os

_SET = ("openblas_set_num_threads", "openblas_set_num_threads64_", "openblas_set_num_threads_64",
        "scipy_openblas_set_num_threads", "scipy_openblas_set_num_threads64_", "MKL_Set_Num_Threads")
_NAMES = ("openblas", "libmkl_rt")          # how the loaded BLAS libraries' files are named
_USER = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def loaded_blas() -> list:
    """Paths of the BLAS libraries this process has loaded (numpy's own among them); Linux only
    (``/proc/self/maps``), an empty list elsewhere."""
    import numpy  # noqa: F401  (loads numpy's BLAS)
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split(None, 5)[5].strip() for line in maps if len(line.split(None, 5)) == 6}
    except OSError:
        return []
    return sorted(p for p in paths if any(n in os.path.basename(p).lower() for n in _NAMES))


def one_blas_thread() -> bool:
    """Make every loaded BLAS library use one thread; False where none could be told (another
    platform, another BLAS) or the user chose a thread count."""
    if any(os.environ.get(v) for v in _USER):
        return False
    told = False
    for path in loaded_blas():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _SET:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter.argtypes, setter.restype = (ctypes.c_int,), None
                setter(1)
                told = True
    return told
