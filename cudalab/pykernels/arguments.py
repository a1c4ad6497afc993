"""Launch arguments of a Python kernel: their numba types (which pick the compiled specialization) and
the parameter bytes numba-cuda's ABI expects.

numba passes an array as its whole struct, flattened into separate kernel parameters:
``meminfo, parent, nitems, itemsize, data, shape[0..ndim), strides[0..ndim)`` (numba.cuda's
``_Kernel._prepare_args``); meminfo and parent are 0 on the device. Complex numbers are two
parameters (real, imaginary); tuples are their elements in order; an enum member is its value. Host numpy arrays are copied to
the device as C-contiguous arrays and typed that way, as numba does for what it copies.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import LaunchError


@functools.lru_cache(maxsize=256)
def _array_type(dtype, ndim, layout="C"):
    """numba's array type (cached: building one costs tens of microseconds, on every launch)."""
    from numba import from_dtype, types
    return types.Array(from_dtype(np.dtype(dtype)), ndim, layout)


def is_fortran(a) -> bool:
    """A host array in Fortran order only (np.asfortranarray, a C array's .T): numba types it 'F' and
    the kernel reads it with Fortran strides."""
    return isinstance(a, np.ndarray) and a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous


def cuda_array_interface(a):
    """``__cuda_array_interface__`` of a device array from another library (numba, CuPy), or None."""
    return getattr(a, "__cuda_array_interface__", None)


def numba_type(a, where: str, registered: bool = False):
    """The numba type the kernel is compiled for when it gets ``a``. ``registered``: the kernel has
    dispatcher extensions, so a library's object of any type it registered with numba's typeof is
    taken (its extension turns it into what the kernel gets at the launch)."""
    from numba import typeof, types
    from ..runtime.arrays import DeviceArray
    if isinstance(a, np.ndarray) and a.dtype.hasobject:      # numba: "non-precise type", at a wrong line
        raise LaunchError(f"{where} is a numpy array of Python objects (dtype={a.dtype}); a kernel reads "
                          "numbers and records. Convert it first, e.g. a.astype(np.float64).", "cudaErrorInvalidValue")
    from .devicearray import DeviceRecord
    if isinstance(a, DeviceRecord):         # numba's record on the device: a record, passed by address
        return a._numba_type_
    if isinstance(a, (np.ndarray, DeviceArray)):
        # a host array keeps its order (C, or Fortran's); a device array's view (d[:, ::2], d.T) its layout.
        # A 0-d array is an array too, as in numba (a result holder the kernel writes with r[()] = ...)
        return _array_type(a.dtype, len(a.shape), getattr(a, "layout", "C") if isinstance(a, DeviceArray)
                           else "F" if is_fortran(a) else "C")
    cai = cuda_array_interface(a)
    if cai is not None:         # strides None: C-contiguous (the interface's rule)
        return _array_type(np.dtype(cai["typestr"]), len(cai["shape"]), "C" if cai.get("strides") is None else "A")
    try:
        t = typeof(a)
    except ValueError:
        t = None
    # (a library's own object that it registered with numba's typeof as an array or a pointer, e.g.
    # numba-examples' cuRAND states: its dispatcher extension hands the kernel the memory at the launch)
    if registered and t is not None and t != types.pyobject:
        return t
    if not isinstance(t, (types.Number, types.Boolean, types.BaseTuple, types.Record, types.EnumMember,
                          types.Array, types.CPointer)):
        hint = " Make it a numpy array first: np.array(...)." if isinstance(a, (list, range)) else ""
        raise LaunchError(f"{where}: a Python kernel takes numpy arrays, device arrays, numbers, records, enum "
                          f"members and tuples of numbers, not {type(a).__name__}.{hint}", "cudaErrorInvalidValue")
    return t


class Typed:
    """A launch argument with the numba type a dispatcher extension gave it (numba-examples' cuRAND
    states become ``(uint64, address)``): packed as that type, not as the kernel's parameter type."""

    def __init__(self, numba_type, value):
        self.type, self.value = numba_type, value


def flatten(a, t, pointer_of, out: list):
    """Append the kernel-parameter values of argument ``a`` (numba type ``t``) to ``out`` as
    (value, numpy dtype) pairs; ``pointer_of(a)`` gives an array's device address (copying a host
    array in)."""
    from numba import types
    from ..runtime.arrays import DeviceArray
    if isinstance(t, types.CPointer):          # a raw address: an int, or where an array lies
        out.append((int(a) if isinstance(a, (int, np.integer)) else pointer_of(a), np.uint64))
    elif isinstance(t, types.Record):          # numba passes a record by address (PyKernel.launch holds it)
        out.append((pointer_of(a), np.uint64))
    elif isinstance(t, types.Array):
        cai = cuda_array_interface(a)
        if cai is not None and pointer_of(a) is None:
            ptr, shape = cai["data"][0], tuple(cai["shape"])
            strides = cai.get("strides") or _c_strides(shape, np.dtype(cai["typestr"]).itemsize)
            itemsize = np.dtype(cai["typestr"]).itemsize
        else:
            ptr, shape = pointer_of(a), tuple(a.shape)
            itemsize = np.dtype(a.dtype).itemsize
            strides = getattr(a, "strides", None) if isinstance(a, DeviceArray) else None
            strides = strides or _c_strides(shape, itemsize)
        if t.ndim == 0:          # a 0-d array launched as its one-element view (PyKernel.launch)
            shape, strides = (), ()
        nitems = math.prod(shape)
        out.extend((v, np.int64) for v in (0, 0, nitems, itemsize))
        out.append((ptr, np.uint64))
        out.extend((v, np.int64) for v in (*shape, *strides))
    elif isinstance(t, types.EnumMember):      # an Enum or IntEnum member: numba passes its value
        flatten(a.value, t.dtype, pointer_of, out)
    elif isinstance(t, types.BaseTuple):
        for v, ti in zip(a, t):
            flatten(v, ti, pointer_of, out)
    elif isinstance(t, types.Complex):
        part = np.float32 if t.bitwidth == 64 else np.float64
        out.extend(((complex(a).real, part), (complex(a).imag, part)))
    elif isinstance(t, types.Boolean):
        out.append((bool(a), np.uint8))
    else:
        from numba.np.numpy_support import as_dtype
        out.append((a, as_dtype(t)))


def _c_strides(shape, itemsize):
    strides, step = [], itemsize
    for n in reversed(shape):
        strides.append(step)
        step *= n
    return tuple(reversed(strides))


def pack(kernel: str, params, values) -> bytes:
    """The parameter buffer: each value at its PTX parameter's alignment, in the parameter's size."""
    if len(values) != len(params):
        raise LaunchError(f"{kernel}: numba's compiled kernel takes {len(params)} parameters but the arguments "
                          f"make {len(values)}; this is a bug in cudalab's Python kernels, please report it.",
                          "cudaErrorInvalidValue")
    buf = bytearray()
    for p, (v, dt) in zip(params, values):
        off = (len(buf) + p.align - 1) // p.align * p.align
        buf += b"\0" * (off - len(buf))
        if type(v) is int and dt in _WORDS and p.size == 8:
            raw = (v & 0xFFFF_FFFF_FFFF_FFFF).to_bytes(8, "little")     # an array's words: astype's wrap-around
        else:
            raw = np.array(v).astype(dt).tobytes()
        buf += raw[:p.size].ljust(p.size, b"\0")
    return bytes(buf)


_WORDS = (np.int64, np.uint64)      # an array's meminfo, parent, sizes, pointer, shape and strides
