"""cupyx.jit on cudalab: CuPy's Python kernels (``@jit.rawkernel()``) are numba.cuda's dialect with
``jit.`` where numba writes ``cuda.``, so they compile through cudalab's Python kernels (numba-cuda)
with the ``jit`` module read as numba.cuda, and launch as CuPy launches them:
``kernel(grid, block, (args...))`` or ``kernel[grid, block](*args)``.

What numba.cuda names the same way (threadIdx, blockIdx, blockDim, gridDim, grid, gridsize,
syncthreads, syncwarp, laneid, warpsize, the shfl_*_sync family) works; CuPy's own spellings that
numba lacks (``jit.shared_memory``, ``jit.atomic_add`` and the other atomics) are numba's calls
through jit_spellings.py.
"""
from __future__ import annotations

import sys
import types

from numba import cuda as _cuda

from .jit_spellings import NAMES as _CUPY_NAMES, respell as _respell, shared_memory, atomic_cas  # noqa: F401
from .jit_spellings import kernel_cupy as _kernel_cupy
from . import jit_cg as cg
from ..runtime.letgo import lets_arguments_go

threadIdx, blockIdx, blockDim, gridDim = _cuda.threadIdx, _cuda.blockIdx, _cuda.blockDim, _cuda.gridDim
grid, gridsize, laneid, warpsize = _cuda.grid, _cuda.gridsize, _cuda.laneid, _cuda.warpsize
syncthreads, syncwarp = _cuda.syncthreads, _cuda.syncwarp
shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync = (_cuda.shfl_sync, _cuda.shfl_up_sync, _cuda.shfl_down_sync,
                                                          _cuda.shfl_xor_sync)


def _as_numba(func):
    """``func`` with every global or closure variable that is this module (``from cupyx import jit``)
    read as numba.cuda, ``cupyx.jit.cg`` as numba.cuda.cg, and every one that is the cupy stand-in read as a kernel reads it (dtypes and
    math functions: ``cupy.sqrt(x[i])``)."""
    this = sys.modules[__name__]
    cupy = sys.modules.get("cudalab.cupy")
    swap = {id(this): _cuda, id(cg): _cuda.cg}
    if cupy is not None:
        swap[id(cupy)] = _kernel_cupy()

    def swapped(v):
        return swap.get(id(v), v) if isinstance(v, types.ModuleType) else v

    def cell_value(cell):
        try:
            return cell.cell_contents
        except ValueError:          # a variable not yet assigned
            return None
    closure = func.__closure__ or ()
    if not any(swapped(v) is not v for v in func.__globals__.values()) and \
            not any(swapped(cell_value(c)) is not cell_value(c) for c in closure):
        return func
    names = {k: swapped(v) for k, v in func.__globals__.items()}
    cells = tuple(types.CellType(swapped(cell_value(c))) if swapped(cell_value(c)) is not cell_value(c) else c
                  for c in closure) or None
    new = types.FunctionType(_respell(func.__code__, names), names, func.__name__, func.__defaults__, cells)
    new.__module__, new.__qualname__, new.__doc__ = func.__module__, func.__qualname__, func.__doc__
    return new


class _RawKernel:
    """A ``@jit.rawkernel()`` kernel: compiled at its first launch (as CuPy does), when the globals it
    reads are all defined."""

    def __init__(self, func):
        self.func = func
        self._kernel = None

    @property
    def kernel(self):
        if self._kernel is None:
            from ..pykernels import jit as cudalab_jit
            self._kernel = cudalab_jit(_as_numba(self.func))
            self._kernel.warns_as_numba = False         # CuPy says nothing of small grids
            self._kernel.returns_record = False         # CuPy's launch returns None
        return self._kernel

    @lets_arguments_go
    def __call__(self, grid, block, args, shared_mem=0, stream=None):
        from ..cupy.kernels import _launch
        _launch(self.kernel, grid, block, args, shared_mem, stream)

    def __getitem__(self, config):
        return self.kernel[config]

    # CuPy keeps the CUDA C++ it generated for each argument types; cudalab compiles the same Python
    # through numba, so what it keeps is numba's PTX, headed by a line that says so
    @property
    def cached_codes(self) -> dict:
        """CuPy's ``cached_codes``: the code compiled for each argument types (here: numba's PTX)."""
        kernels = self._kernel._kernels if self._kernel is not None else {}
        return {argtypes: _PTX_NOTE + k.module.ptx for (argtypes, _), k in kernels.items()}

    @property
    def cached_code(self) -> str:
        """CuPy's ``cached_code``: the code of the one compiled specialization (here: numba's PTX)."""
        codes = self.cached_codes
        if not codes:
            raise RuntimeError("No codes are cached because compilation is deferred until the first "
                               "function call.")
        if len(codes) > 1:
            raise RuntimeError("The kernel has been compiled for several argument types: use "
                               "cached_codes, a dict from argument types to code.")
        return next(iter(codes.values()))


_PTX_NOTE = ("// cudalab compiles cupyx.jit kernels with numba-cuda: this is the PTX it made (CuPy shows the\n"
             "// CUDA C++ it generates from the same Python)\n")


def rawkernel(*, mode="cuda", device=False):
    """CuPy's decorator: a kernel, or with ``device=True`` a device function the kernels call."""
    def decorate(func):
        if device:
            from ..pykernels import jit as cudalab_jit
            return cudalab_jit(_as_numba(func), device=True)
        return _RawKernel(func)
    return decorate
