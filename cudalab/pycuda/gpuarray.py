"""pycuda.gpuarray on cudalab: ``GPUArray``, an array in emulated device memory with numpy's operators.

A GPUArray is a CuPy stand-in array (cudalab/cupy) under PyCUDA's names: what PyCUDA computes with
its own kernels (``a * 2``, ``gpuarray.sum``, ``a.astype``) is numpy's answer computed on the host over
the device memory and timed on the timeline by the stand-in's roofline, while the program's own
kernels (``SourceModule``, ``ElementwiseKernel``, ``ReductionKernel``) are emulated. ``a.gpudata`` is
the address a kernel takes (``int(a.gpudata)``), ``a.get()`` copies to the host.
"""
from __future__ import annotations

import numpy as np

from .. import cupy as _cupy
from ..pykernels.devicearray import DeviceNDArray
from ..runtime.arrays import DeviceArray
from . import driver


def _as_gpu(x):
    """A CuPy stand-in result seen as a GPUArray (the same memory; tuples element by element)."""
    if isinstance(x, _cupy.ndarray) and not isinstance(x, GPUArray):
        x.__class__ = GPUArray
    elif isinstance(x, tuple):
        return tuple(_as_gpu(v) for v in x)
    return x


class GPUArray(_cupy.ndarray):
    """PyCUDA's device array: ``GPUArray(shape, dtype)``; ``gpudata``, ``get()``, ``set()``, operators."""

    @driver.one_at_a_time
    def __init__(self, shape, dtype=np.float64, allocator=None, base=None, gpudata=None, strides=None, order="C"):
        driver._need_context("cuMemAlloc")
        shape = np.asarray(shape)           # (a number, a sequence or a numpy array of them, as PyCUDA takes)
        shape = (int(shape),) if shape.ndim == 0 else tuple(int(n) for n in shape)
        if gpudata is None and allocator is not None:     # a DeviceMemoryPool's allocate: its block, held by the array
            gpudata = allocator(int(np.prod(shape)) * np.dtype(dtype).itemsize or 1)
        ptr = None if gpudata is None else driver._address(gpudata)
        super().__init__(shape, dtype, memptr=ptr, strides=strides, order=order,
                         base=base if base is not None else (gpudata if gpudata is not None else None))

    @property
    def gpudata(self):
        return driver.DevicePointer(self.device_ptr, self)

    @property
    def __cuda_array_interface__(self) -> dict:
        """The interface with the strides always given, as PyCUDA gives them (None is C order to readers)."""
        return dict(super().__cuda_array_interface__, strides=tuple(self.strides))

    @property
    def ptr(self) -> int:
        return int(self.device_ptr)

    @property
    def mem_size(self) -> int:
        return int(self.size)

    @driver.one_at_a_time
    def get(self, ary=None, pagelocked=False, async_=False, stream=None, **kwargs):
        """The values as a numpy array (into ``ary`` if given)."""
        values = _cupy._host(self)
        driver._timeline_copy(values.nbytes, "D2H", stream, ary, blocking=not async_)
        if ary is not None:
            ary[...] = values
            return ary
        return values

    def get_async(self, stream=None, ary=None):
        return self.get(ary=ary, async_=True, stream=stream)

    @driver.one_at_a_time
    def set(self, ary, async_=False, stream=None, **kwargs):
        ary = np.asarray(ary)
        if ary.size != self.size:
            raise ValueError(f"ary and self must be the same size: {ary.size} values for an array of {self.size}")
        _cupy._store(self, ary.reshape(self.shape))
        driver._timeline_copy(self.nbytes, "H2D", stream, ary, blocking=not async_)

    def set_async(self, ary, stream=None):
        self.set(ary, async_=True, stream=stream)

    @driver.one_at_a_time
    def fill(self, value, stream=None):
        _cupy._store(self, value)
        return self

    @driver.one_at_a_time
    def copy(self):
        """A new array with the same values and layout (a Fortran-ordered array's copy is one too: the
        bytes are copied as they lie)."""
        if not (self.flags.c_contiguous or self.flags.f_contiguous):
            return _as_gpu(_cupy._device(_cupy._host(self), order="C"))
        out = empty_like(self)
        driver.memcpy_dtod(out.gpudata, self.gpudata, self.nbytes)
        return out

    def reverse(self, stream=None):
        """A new array with the values in reverse order (1D, as PyCUDA's)."""
        return _as_gpu(_cupy._on_host(np.flip, (self,), {}))

    def mul_add(self, selffac, other, otherfac, add_timer=None, stream=None, out=None):
        """``selffac * self + otherfac * other``: a new array, or written into ``out``."""
        result = selffac * self + otherfac * other
        if out is None:
            return result
        _cupy._store(out, _cupy._values(result))
        return out

    def bind_to_texref(self, texref, allow_offset=False):
        """Bind this array's memory to a module's texture reference (read with tex1Dfetch)."""
        return texref.set_address(self.gpudata, self.nbytes, allow_offset)

    def bind_to_texref_ext(self, texref, channels=1, allow_double_hack=False, allow_offset=False):
        """As bind_to_texref, the format set from the dtype (float64 as two int32 channels with
        ``allow_double_hack``, as PyCUDA's fp_tex_double reads it)."""
        from .arrays import _format_of
        fmt, n = _format_of(self.dtype, allow_double_hack)
        texref.set_format(fmt, n * int(channels) if n > 1 else int(channels))
        return texref.set_address(self.gpudata, self.nbytes, allow_offset)

    def _view(self, shape, strides, offset=0, dtype=None):
        return _as_gpu(super()._view(shape, strides, offset, dtype))


def _returning_gpuarrays(method):
    @driver.one_at_a_time
    def wrapped(self, *args, **kwargs):
        out = method(self, *args, **kwargs)
        if callable(out) and not isinstance(out, DeviceArray):        # a numpy method (__getattr__'s answer)
            return lambda *a, **k: _as_gpu(out(*a, **k))
        return _as_gpu(out)
    wrapped.__name__ = method.__name__
    return wrapped


for _name, _method in list(vars(_cupy.ndarray).items()):
    if callable(_method) and _name not in ("__init__", "__array__", "__array_ufunc__", "__array_function__",
                                           "_view", "get", "set", "__repr__", "__str__", "__format__", "__len__",
                                           "__iter__", "__hash__") and not isinstance(_method, (property, type)):
        setattr(GPUArray, _name, _returning_gpuarrays(_method))
for _name in ("__array_ufunc__", "__array_function__"):
    setattr(GPUArray, _name, _returning_gpuarrays(getattr(_cupy.ndarray, _name)))
GPUArray.__hash__ = None


def _transpose(self, axes=None):
    """PyCUDA's ``transpose(axes=None)``: a view with the axes reordered (reversed by default)."""
    return _as_gpu(_cupy.ndarray.transpose(self, *(() if axes is None else (tuple(axes),))))


def _view(self, dtype=None):
    """PyCUDA's ``view(dtype=None)``: the same bytes, as this dtype or another."""
    return _as_gpu(DeviceNDArray.view(self, self.dtype if dtype is None else dtype))


def _reshape(self, *shape, order="C"):
    """PyCUDA's reshape: a view of the same bytes in the new shape, laid out in ``order`` ('C' or 'F');
    unlike numpy's, the bytes are never rearranged (a C-ordered array reshaped with order='F' reads them
    column by column), and an array that is not contiguous is refused."""
    if not (self.flags.c_contiguous or self.flags.f_contiguous):
        raise RuntimeError("only contiguous arrays may be used as arguments to this operation")
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list, np.ndarray)) else shape
    shape = tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([n for n in shape if n != -1]))
        shape = tuple(self.size // known if n == -1 else n for n in shape)
    if int(np.prod(shape)) != self.size:
        raise ValueError("total size of new array must be unchanged")
    from ..pykernels.devicearray import c_strides, f_strides
    strides = (f_strides if order == "F" else c_strides)(shape, self.dtype.itemsize)
    return self._view(shape, strides)


def _contiguous_order(self, what) -> str:
    if not (self.flags.c_contiguous or self.flags.f_contiguous):
        raise RuntimeError(f"{what}: only contiguous arrays may be used as arguments to this operation")
    return "F" if self.flags.f_contiguous and not self.flags.c_contiguous else "C"


def _part(function, what):
    """PyCUDA's ``real``/``imag`` of a complex array: a new array of the matching real type, laid out in
    the same order (PyCUDA's kernel writes a copy; numpy's attribute is a strided view of every other
    float, which is neither C- nor Fortran-contiguous). A real array's ``real`` is itself, its ``imag``
    new zeros, as PyCUDA answers."""
    def part(self):
        if not np.issubdtype(self.dtype, np.complexfloating):
            return self if what == "real" else zeros_like(self)
        order = _contiguous_order(self, what)
        out = GPUArray(self.shape, np.finfo(self.dtype).dtype, order=order)
        _cupy._store(out, function(_cupy._values(self)))
        return out
    return property(driver.one_at_a_time(part))


def _conj(self, out=None):
    """PyCUDA's ``conj(out=None)``: the complex conjugate in a new array of the same layout, or written
    into ``out`` (converted to its type) and ``out`` returned; a real array is its own conjugate."""
    if not np.issubdtype(self.dtype, np.complexfloating):
        return self
    order = _contiguous_order(self, "conj")
    result = GPUArray(self.shape, self.dtype, order=order) if out is None else out
    if result.size != self.size:
        raise ValueError(f"conj: out has {result.size} elements, the array {self.size}")
    _cupy._store(result, np.conj(_cupy._values(self)).astype(result.dtype).reshape(result.shape))
    return result


GPUArray.real = _part(np.real, "real")
GPUArray.imag = _part(np.imag, "imag")
GPUArray.conj = GPUArray.conjugate = driver.one_at_a_time(_conj)
GPUArray.transpose = driver.one_at_a_time(_transpose)
GPUArray.view = driver.one_at_a_time(_view)
GPUArray.reshape = driver.one_at_a_time(_reshape)
GPUArray.T = property(lambda self: self.transpose())
GPUArray.__module__ = "pycuda.gpuarray"


def _numpy(function):
    """numpy's ``function`` over GPUArrays' values, the answer a GPUArray."""
    @driver.one_at_a_time
    def run(*args, **kwargs):
        kwargs.pop("stream", None)
        kwargs.pop("allocator", None)
        return _as_gpu(_cupy._on_host(function, args, kwargs))
    run.__name__ = getattr(function, "__name__", "function")
    return run


def to_gpu(ary, allocator=None) -> GPUArray:
    """A new device array holding a copy of the host array (in memory from ``allocator`` if given)."""
    ary = np.asarray(ary)
    out = GPUArray(ary.shape, ary.dtype, allocator=allocator, order="F" if _cupy._fortran(ary) else "C")
    out.set(ary)
    return out


def to_gpu_async(ary, allocator=None, stream=None) -> GPUArray:
    ary = np.asarray(ary)
    out = GPUArray(ary.shape, ary.dtype, allocator=allocator)
    out.set(ary, async_=True, stream=stream)
    return out


def empty(shape, dtype=np.float64, allocator=None, order="C") -> GPUArray:
    return GPUArray(shape, dtype, allocator=allocator, order=order)


def zeros(shape, dtype=np.float64, allocator=None, order="C") -> GPUArray:
    return GPUArray(shape, dtype, allocator=allocator, order=order).fill(0)       # (the emulator's fresh memory is zeros already)


def ones(shape, dtype=np.float64, allocator=None, order="C") -> GPUArray:
    return GPUArray(shape, dtype, allocator=allocator, order=order).fill(1)


def _like_order(other, order):
    """PyCUDA's ``order`` for the ``_like`` functions: 'K' and 'A' keep a Fortran-ordered array's layout,
    anything not contiguous becomes C-ordered."""
    if order in ("K", "A"):
        return "F" if other.flags.f_contiguous and not other.flags.c_contiguous else "C"
    return order


def empty_like(other, dtype=None, order="K") -> GPUArray:
    return GPUArray(other.shape, other.dtype if dtype is None else dtype, order=_like_order(other, order))


def zeros_like(other, dtype=None, order="K") -> GPUArray:
    return empty_like(other, dtype, order).fill(0)


def ones_like(other, dtype=None, order="K") -> GPUArray:
    return empty_like(other, dtype, order).fill(1)


def arange(*args, dtype=None, **kwargs) -> GPUArray:
    return to_gpu(np.arange(*args, dtype=dtype))


def is_gpuarray(x) -> bool:
    return isinstance(x, DeviceArray)


def splay(n, dev=None):
    """PyCUDA's launch shape for ``n`` elements: (grid, block)."""
    block = 256
    return (max(1, min(-(-int(n) // block), 65535)), 1), (block, 1, 1)


def if_positive(criterion, then_, else_, out=None, stream=None):
    return _as_gpu(_cupy._on_host(np.where, (_cupy._values(criterion) > 0, then_, else_), {}))


# PyCUDA's reductions (pycuda.reduction's kernels) read every element of their arrays in memory
# order, whatever the shape, and answer a 0-d GPUArray: ``dot`` of two matrices is the sum of their
# elementwise products, not numpy's matrix product, and ``sum``'s second parameter is the dtype
# (numpy's is the axis), which is also the sum's type (int32 elements add up to an int32).

def _allocated(result, allocator):
    """The 0-d answer in memory from the program's ``allocator`` (a DeviceMemoryPool's ``allocate``), as
    PyCUDA's reduction kernels allocate their result."""
    if allocator is None:
        return result
    out = GPUArray(result.shape, result.dtype, gpudata=allocator(result.nbytes))
    _cupy._store(out, _cupy._values(result))
    return out


@driver.one_at_a_time
def _reduce(name, function, arrays, dtype, allocator=None):
    values = [_cupy._values(a).ravel(order="K") for a in arrays]
    if len(values) == 2 and values[0].size != values[1].size:
        raise ValueError(f"gpuarray.{name}: the arrays have {values[0].size} and {values[1].size} elements; "
                         f"PyCUDA's {name} pairs them element by element, so they need as many")
    return _allocated(_as_gpu(_cupy._on_host(function, tuple(values), {} if dtype is None else {"dtype": dtype},
                                             name=name)), allocator)


def _flat_sum(a, dtype):
    return np.asarray(np.sum(a, dtype=a.dtype if dtype is None else dtype))


def _flat_dot(a, b, dtype):
    return np.asarray(np.sum(a.astype(dtype) * b.astype(dtype), dtype=dtype))


def sum(a, dtype=None, stream=None, allocator=None):      # noqa: A001  (PyCUDA's names)
    """The sum of every element of ``a``, of ``dtype`` (``a``'s own by default), as a 0-d GPUArray."""
    return _reduce("sum", lambda v, dtype=None: _flat_sum(v, dtype), (a,), dtype, allocator)


def dot(a, b, dtype=None, stream=None, allocator=None):
    """PyCUDA's dot: the sum of ``a[i] * b[i]`` over every element (not numpy's matrix product)."""
    if dtype is None:
        dtype = np.result_type(a.dtype, b.dtype)
    return _reduce("dot", lambda x, y, dtype=None: _flat_dot(x, y, dtype), (a, b), dtype, allocator)


def max(a, stream=None, allocator=None):                  # noqa: A001
    return _reduce("max", lambda v: np.asarray(np.max(v)), (a,), None, allocator)


def min(a, stream=None, allocator=None):                  # noqa: A001
    return _reduce("min", lambda v: np.asarray(np.min(v)), (a,), None, allocator)


vdot = _numpy(np.vdot)                 # (not PyCUDA's: kept for programs written against older stand-ins)
maximum = _numpy(np.maximum)
minimum = _numpy(np.minimum)
concatenate = _numpy(np.concatenate)
stack = _numpy(np.stack)
hstack = _numpy(np.hstack)
take = _numpy(np.take)
reshape = _numpy(np.reshape)
transpose = _numpy(np.transpose)


where = _numpy(np.where)
logical_and = _numpy(np.logical_and)
logical_or = _numpy(np.logical_or)
logical_not = _numpy(np.logical_not)
any = _numpy(np.any)                   # noqa: A001
all = _numpy(np.all)                   # noqa: A001


def _subset(subset, a):
    return _cupy._values(a).ravel(order="K")[_cupy._values(subset)]


def subset_dot(subset, a, b, dtype=None, stream=None, allocator=None):
    """The dot product of ``a`` and ``b`` over the (flat) indices in ``subset``."""
    dtype = a.dtype if dtype is None else dtype          # PyCUDA's get_subset_dot_kernel's default
    return _allocated(_as_gpu(_cupy._on_host(_flat_dot, (_subset(subset, a), _subset(subset, b), dtype), {},
                                             name="dot")), allocator)


def subset_sum(subset, a, dtype=None, stream=None, allocator=None):
    return _allocated(_as_gpu(_cupy._on_host(_flat_sum, (_subset(subset, a), dtype), {}, name="sum")), allocator)


def subset_max(subset, a, stream=None):
    return _as_gpu(_cupy._on_host(lambda v: np.asarray(np.max(v)), (_subset(subset, a),), {}, name="max"))


def subset_min(subset, a, stream=None):
    return _as_gpu(_cupy._on_host(lambda v: np.asarray(np.min(v)), (_subset(subset, a),), {}, name="min"))


class vec:                                  # noqa: N801  (PyCUDA's name)
    """CUDA's vector types as numpy records (fields x, y, z, w), with ``make_float3(x, y, z)``..."""


for _base, _np in (("char", np.int8), ("uchar", np.uint8), ("short", np.int16), ("ushort", np.uint16),
                   ("int", np.int32), ("uint", np.uint32), ("long", np.int64), ("ulong", np.uint64),
                   ("float", np.float32), ("double", np.float64)):
    for _n in (1, 2, 3, 4):
        _fields = "xyzw"[:_n]
        _dtype = np.dtype([(f, _np) for f in _fields], align=True)
        setattr(vec, f"{_base}{_n}", _dtype)
        setattr(vec, f"make_{_base}{_n}", staticmethod((lambda dt: lambda *v: np.array(tuple(v), dtype=dt))(_dtype)))
