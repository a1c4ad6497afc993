"""numba's device runtime (NRT) statistics on cudalab's device.

With ``NUMBA_CUDA_ENABLE_NRT=1`` a kernel may make arrays; numba links its ``nrt.cu`` (reference counts,
``malloc``/``free``) into the kernel (compiler.py does it too). With ``NUMBA_CUDA_NRT_STATS=1`` (or
``rtsys.memsys_enable_stats()``) those functions count allocations and frees in an ``NRT_MemSys``
structure in device memory, which numba's ``rtsys`` object (``numba.cuda.memory_management.nrt``)
allocates, initializes and reads with one-thread launches of ``memsys.cu``'s kernels, and whose address
each NRT kernel's module learns from its ``NRT_MemSys_set`` kernel before it runs. numba does all of that
through its driver and cuda.core; install() points the steps that touch them at cudalab's: compiling
``memsys.cu``, allocating the structure, the one-thread launch and the three reads that hand it a
managed array's address. The rest of ``rtsys`` (``rtsys.get_allocation_stats()``, what numba-cuda's
memory-leak checks read, and turning statistics on and off) is numba's own code.
"""
from __future__ import annotations

import ctypes
import os

import numpy as np


def compile_memsys_module(runtime):
    """numba's memsys.cu (the statistics' kernels), compiled for the selected profile."""
    from numba.cuda.memory_management.nrt import get_include

    from ..runtime.module import compile
    with open(os.path.join(get_include(), "memsys.cu")) as f:
        runtime._memsys_module = compile(f.read(), (f"-I{get_include()}",), name="memsys")


def allocate(runtime, stream=None):
    """The NRT_MemSys structure in device memory, as big as memsys.cu says it is (``memsys_size``)."""
    from .host import device_array
    if runtime._memsys_module is None:
        runtime._compile_memsys_module()
    size = int(runtime._memsys_module.get_global("memsys_size", np.uint64).copy_to_host()[0])
    runtime._memsys = device_array((size,), dtype="i1", stream=stream or 0)
    runtime.set_memsys_to_module(runtime._memsys_module, stream=stream)


def single_thread_launch(runtime, module, stream, name, params=()):
    """One thread of the kernel ``name`` of a cudalab module (memsys.cu's, or a kernel's own module for
    ``NRT_MemSys_set``); numba passes device addresses as ctypes pointers."""
    args = [int(p.value or 0) if isinstance(p, ctypes.c_void_p) else p for p in params]
    module.get_kernel(name).launch((1, 1, 1), (1, 1, 1), args, stream=stream or 0)


_STATS = np.dtype([("alloc", np.uint64), ("free", np.uint64), ("mi_alloc", np.uint64), ("mi_free", np.uint64)])


def _read(runtime, kernel: str, dtype, stream=None):
    """What one of memsys.cu's reading kernels writes (numba hands it a managed array's address; here the
    launch copies a host array in and back, as a launch given a numpy array does)."""
    runtime.ensure_allocated()
    runtime.ensure_initialized()
    out = np.zeros(1, dtype)
    runtime._single_thread_launch(runtime._memsys_module, stream, kernel, (out,))
    return out[0]


def memsys_stats_enabled(runtime, stream=None):
    return bool(_read(runtime, "NRT_MemSys_stats_enabled", np.uint8, stream))


def copy_memsys_to_host(runtime, stream=None):
    return _read(runtime, "NRT_MemSys_read", _STATS, stream)


def get_single_stat(runtime, stat, stream=None):
    return _read(runtime, f"NRT_MemSys_read_{stat}", np.uint64, stream)


def before_launch(kernel):
    """What numba's kernel binding does for a kernel that links NRT while statistics are on: point its
    module's ``TheMSys`` at the runtime's structure (once per kernel and structure)."""
    from numba.cuda import config
    if not getattr(config, "CUDA_NRT_STATS", False) or "NRT_MemSys_set" not in kernel.module.ptx:
        return
    from numba.cuda.memory_management.nrt import rtsys
    rtsys.ensure_initialized()
    if getattr(kernel, "_nrt_memsys", None) is not rtsys._memsys:
        rtsys.set_memsys_to_module(kernel.module)
        kernel._nrt_memsys = rtsys._memsys


def patches() -> list:
    """(class, name, replacement) for install(): numba's ``_Runtime`` on cudalab's device."""
    from numba.cuda.memory_management.nrt import _Runtime
    return [(_Runtime, "_compile_memsys_module", compile_memsys_module),
            (_Runtime, "allocate", allocate),
            (_Runtime, "_single_thread_launch", single_thread_launch),
            # numba reads the statistics through managed arrays' addresses; cudalab's are host arrays
            (_Runtime, "memsys_stats_enabled", memsys_stats_enabled),
            (_Runtime, "_copy_memsys_to_host", copy_memsys_to_host),
            (_Runtime, "_get_single_stat", get_single_stat)]
