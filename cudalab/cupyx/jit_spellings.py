"""CuPy's own spellings in cupyx.jit kernels, made numba.cuda calls.

cupyx.jit writes ``jit.shared_memory(cupy.float32, 1024)`` where numba writes
``cuda.shared.array(1024, float32)``, ``jit.atomic_add(y, 0, v)`` where numba writes
``cuda.atomic.add(y, 0, v)``, calls ``jit.laneid()`` where numba reads ``cuda.laneid``, and loops over
``jit.range(n)`` where numba uses Python's ``range``. cudalab compiles cupyx.jit kernels with
numba-cuda, reading the ``jit`` module as numba.cuda (jit.py); numba types a module's attributes by
the module itself, so these names cannot live on a module of cudalab's. Instead each is something
numba-cuda compiles (an intrinsic for the shared array, made where it is called as in CuPy's generated
C++; ``overload(..., inline="always")`` for the others), kept on numba.cuda under a private name, and
a kernel's code object reads ``jit.shared_memory`` as that name (``respell``).
"""
from __future__ import annotations

import builtins
import math
import types as pytypes

import numpy as np
from numba import cuda
from numba.core import errors, types
from numba.core.extending import intrinsic, overload
from numba.cuda.cudadrv import nvvm
from numba.cuda.cudaimpl import _generic_array, _get_unique_smem_id

from . import jit_groups

PREFIX = jit_groups.PREFIX
# CuPy's atomic_* and the numba.cuda.atomic function each one is
ATOMICS = {"add": "add", "sub": "sub", "exch": "exch", "min": "min", "max": "max", "inc": "inc",
           "dec": "dec", "and": "and_", "or": "or_", "xor": "xor"}
NAMES = ["shared_memory", "atomic_cas", *(f"atomic_{name}" for name in ATOMICS), "laneid", "range",
         *jit_groups.NAMES]


def respell(code, names):
    """``code`` with each CuPy-only attribute name it reads renamed to numba.cuda's private name for
    it, nested code objects too. A code object keeps one table of names for attributes and globals
    alike, so a global or builtin of the same name (Python's ``range`` beside ``jit.range``) is renamed
    too: ``names``, the globals the function will run with, gets the private name for it as well."""
    import builtins as _builtins
    renamed = tuple(PREFIX + n if n in NAMES else n for n in code.co_names)
    for n in set(code.co_names) & set(NAMES):
        if n in names:
            names[PREFIX + n] = names[n]
        elif hasattr(_builtins, n):
            names[PREFIX + n] = getattr(_builtins, n)
    consts = tuple(respell(c, names) if hasattr(c, "co_names") else c for c in code.co_consts)
    if renamed == code.co_names and consts == code.co_consts:
        return code
    return code.replace(co_names=renamed, co_consts=consts)


def _literal_size(size):
    if size is None or isinstance(size, (types.NoneType, types.Omitted)):
        return 0                        # CuPy's dynamic shared memory: numba's array of size 0
    if isinstance(size, types.IntegerLiteral):
        return size.literal_value
    raise errors.TypingError("jit.shared_memory(dtype, size): the size must be a constant (a number or a global "
                             f"constant) known when the kernel compiles, not a {size}.")


def _element_type(dtype):
    if isinstance(dtype, (types.NumberClass, types.DType)):
        return getattr(dtype, "instance_type", None) or dtype.dtype
    raise errors.TypingError(f"jit.shared_memory(dtype, size): the dtype must be a numpy type such as "
                             f"cupy.float32, not {dtype}.")


@intrinsic(prefer_literal=True)
def shared_memory(typingctx, dtype, size, alignment=None):
    """CuPy's ``jit.shared_memory(dtype, size, alignment=None)``: a block's shared array of ``size``
    elements (None: dynamic), the array numba's ``cuda.shared.array(size, dtype)`` makes. An intrinsic:
    numba makes it where the call is (a device function may not return a shared array made in it)."""
    n, element = _literal_size(size), _element_type(dtype)
    align = alignment.literal_value if isinstance(alignment, types.IntegerLiteral) else None
    given = (dtype, size, types.none if alignment is None else alignment)

    def codegen(context, builder, signature, args):
        return _generic_array(context, builder, shape=(n,), dtype=element,
                              symbol_name=_get_unique_smem_id("_cudapy_smem"), addrspace=nvvm.ADDRSPACE_SHARED,
                              can_dynsized=True, alignment=align)
    return types.Array(element, 1, "C")(*given), codegen


def atomic_cas(array, index, compare, value):
    """CuPy's ``jit.atomic_cas``: numba's ``cuda.atomic.cas``."""
    raise NotImplementedError("jit.atomic_cas works inside a cupyx.jit kernel only")


@overload(atomic_cas, target="cuda", inline="always")
def _atomic_cas(array, index, compare, value):
    def cas(array, index, compare, value):
        return cuda.atomic.cas(array, index, compare, value)
    return cas


def laneid():
    """CuPy's ``jit.laneid()``, a call where numba reads the attribute ``cuda.laneid``."""
    raise NotImplementedError("jit.laneid works inside a cupyx.jit kernel only")


@overload(laneid, target="cuda", inline="always")
def _laneid():
    def lane():
        return cuda.laneid
    return lane


def _atomic(cupy_name, numba_name):
    """CuPy's ``jit.atomic_<op>(array, index, value)``: numba's ``cuda.atomic.<op>``, which returns the
    old value as CuPy's does."""
    scope = {}
    exec(f"def stub(array, index, value):\n    raise NotImplementedError('jit.atomic_{cupy_name} works inside a "
         f"cupyx.jit kernel only')\n"
         f"def impl(array, index, value):\n    return cuda.atomic.{numba_name}(array, index, value)\n",
         {"cuda": cuda}, scope)
    stub, impl = scope["stub"], scope["impl"]
    stub.__name__ = stub.__qualname__ = f"atomic_{cupy_name}"
    overload(stub, target="cuda", inline="always")(lambda array, index, value: impl)
    return stub


for _cupy, _numba in ATOMICS.items():
    setattr(cuda, f"{PREFIX}atomic_{_cupy}", _atomic(_cupy, _numba))
setattr(cuda, PREFIX + "shared_memory", shared_memory)
setattr(cuda, PREFIX + "atomic_cas", atomic_cas)
setattr(cuda, PREFIX + "laneid", laneid)
setattr(cuda, PREFIX + "range", range)          # CuPy's jit.range: a loop, Python's range in numba


# ------------------------------------------------------------------ ``cupy`` as a kernel reads it
_DTYPES = ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
           "float32", "float64", "complex64", "complex128", "intp", "uintp")
# CuPy's (numpy's) function names in a kernel and the math or builtin function numba compiles for each
_FUNCTIONS = {"sqrt": math.sqrt, "exp": math.exp, "log": math.log,
              "log10": math.log10, "log2": math.log2, "log1p": math.log1p, "expm1": math.expm1,
              "sin": math.sin, "cos": math.cos, "tan": math.tan, "arcsin": math.asin, "arccos": math.acos,
              "arctan": math.atan, "arctan2": math.atan2, "sinh": math.sinh, "cosh": math.cosh,
              "tanh": math.tanh, "arcsinh": math.asinh, "arccosh": math.acosh, "arctanh": math.atanh,
              "floor": math.floor, "ceil": math.ceil, "trunc": math.trunc, "fabs": math.fabs,
              "hypot": math.hypot, "fmod": math.fmod, "copysign": math.copysign, "isnan": math.isnan,
              "isinf": math.isinf, "isfinite": math.isfinite, "erf": math.erf, "erfc": math.erfc,
              "power": math.pow, "degrees": math.degrees, "radians": math.radians, "abs": builtins.abs,
              "absolute": builtins.abs, "minimum": builtins.min, "maximum": builtins.max}


def kernel_cupy():
    """The ``cupy`` a cupyx.jit kernel reads: its dtypes (``cupy.float32(0)``), constants and math
    functions (``cupy.sqrt(x[i])``) as numba compiles them. numba types a module's attributes by their
    values, so a plain module of math functions serves where CuPy's host functions could not."""
    m = pytypes.ModuleType("cupy", "cupy as a cupyx.jit kernel reads it (cudalab)")
    for name in _DTYPES:
        setattr(m, name, getattr(np, name))
    m.pi, m.e, m.inf, m.nan = math.pi, math.e, math.inf, math.nan
    for name, function in _FUNCTIONS.items():
        setattr(m, name, function)
    return m
