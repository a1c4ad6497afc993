"""A small CuPy for programs that mix CuPy's arrays with numba.cuda kernels on cudalab.

Courses that teach numba.cuda (NVIDIA's accelerated-computing-hub, numba's own tutorial, the GPU
Python tutorial) make their arrays with CuPy (``cp.arange``, ``cp.zeros_like``, ``cp.asarray`` of a
numba array), hand them to kernels and check the results with CuPy (``cp.testing``, ``a.mean()``).
``python -m cudalab.numba`` puts this module in CuPy's place (``cudalab.numba.install()``), so such a
program runs its kernels on the emulator unchanged.

``cupy.ndarray`` is a cudalab device array (numba's DeviceNDArray, so a kernel takes it and
``__cuda_array_interface__`` hands it on); ``cupy.asarray`` of a numba array is a view of the same
memory. What CuPy itself computes (arithmetic, ``cp.sum``, ``cp.random``...) is numpy's function run
on the host over the array's values, and the result is stored in device memory: the answers are
numpy's, and these operations are not emulated kernels; each one's row on the timeline (what events
and ``cupyx.profiler.benchmark`` measure) is timed by a roofline of the device profile
(cudalab/cupy/model.py), as are copies between host and CuPy arrays. ``RawKernel``, ``RawModule``,
``ElementwiseKernel`` and ``ReductionKernel`` are CUDA C++ that cudalab compiles and emulates
(cudalab/cupy/kernels.py); CuPy's libraries (cuFFT, cuBLAS handles) need the real CuPy on a GPU.
"""
from __future__ import annotations

import functools
import importlib
import sys
import types

import numpy as np

from ..emulator.memory import GLOBAL_BASE
from ..pykernels.devicearray import DeviceNDArray
from ..runtime.arrays import DeviceArray
from . import model


class ndarray(DeviceNDArray):
    """CuPy's array: device memory with numpy's operators. Implicit conversion to numpy is refused, as
    in CuPy (``.get()`` or ``cp.asnumpy`` copies to the host)."""

    __array_priority__ = 100        # numpy's operators defer to this class's reflected ones

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C", *, base=None, device=None,
                 _filled=False):
        # memptr: CuPy's MemoryPointer (``a.data``) or a device address. _filled: the caller writes every
        # byte at once (a result CuPy computed), so the memory may be a block an earlier such result
        # freed, as CuPy's pool hands blocks out again: a program's stream of temporaries then stays in
        # the same few blocks instead of growing the emulator's arena (quarantined, like freed cudaMalloc
        # memory, for memcheck) to the device's size
        super().__init__(shape, dtype, device=device, ptr=getattr(memptr, "ptr", memptr), strides=strides,
                         base=base if base is not None else getattr(memptr, "mem", None), scratch=_filled)
        if strides is None and order == "F":
            from ..pykernels.devicearray import f_strides
            self.strides = f_strides(self.shape, self.dtype.itemsize)

    def _view(self, shape, strides, offset=0, dtype=None) -> "ndarray":
        return ndarray(shape, dtype or self.dtype, memptr=self.device_ptr + offset, strides=strides,
                       base=self._base if self._base is not None else self, device=self.device)

    # ------------------------------------------------------------------ host <-> device: copies on the timeline
    def get(self, stream=None, order="C", out=None):
        """The values as a numpy array (a copy)."""
        values = _host(self)
        model.copy(values.nbytes, "D2H", host=out)
        if out is not None:
            out[...] = values
            return out
        return values

    def set(self, arr, stream=None):
        """Overwrite the values with a host array's."""
        _store(self, arr)
        model.copy(self.nbytes, "H2D", host=arr, blocking=False)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to construct "
                        "a NumPy array explicitly.")

    # numpy's functions given a device array answer with device arrays, as CuPy's do (np.linalg.svd(a))
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _on_host(getattr(ufunc, method), inputs, kwargs, name=ufunc.__name__)

    def __array_function__(self, func, types, args, kwargs):
        return _on_host(func, args, kwargs)

    # ------------------------------------------------------------------ indexing: views, or numpy's rules
    def __getitem__(self, index):
        try:
            return self._index(index)
        except Exception:       # noqa: BLE001  (a mask or an index array: numpy picks the elements)
            return _device(_host(self)[_wrapped(_host_args(index), self.shape)], order="C")

    def __setitem__(self, index, value):
        try:
            _store(self._index(index), _host_args(value))
        except (IndexError, ValueError):
            raise
        except Exception:       # noqa: BLE001  (a mask or an index array)
            values = _host(self)
            values[_wrapped(_host_args(index), self.shape)] = _host_args(value)
            _store(self, values)

    def take(self, indices, axis=None, out=None):
        return take(self, indices, axis, out)

    def put(self, indices, values, mode="wrap"):
        put(self, indices, values, mode)

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        """numpy's astype, but a float converted to an integer as the GPU's conversion does
        (``_float_to_int``) where numpy wraps or answers what the CPU's does."""
        values = _values(self)
        target = np.dtype(dtype)
        if not copy and target == self.dtype:
            return self
        if values.dtype.kind == "f" and target.kind in "iu" and values.size:
            result = _float_to_int(values, target)
        else:
            result = values.astype(target, order=order)
        out = _wrap(result)
        model.charge("astype", (self,), out)
        return out

    def transpose(self, *axes):
        axes = tuple(axes[0]) if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = axes or tuple(reversed(range(self.ndim)))
        return self._view(tuple(self.shape[k] for k in axes), tuple(self.strides[k] for k in axes))

    @property
    def T(self):
        return self.transpose()

    def reshape(self, *shape, order="C"):
        try:
            return super().reshape(*shape, order=order)
        except NotImplementedError:        # a view that is not contiguous: a copy, as numpy and CuPy make
            return _device(_host(self).reshape(*shape, order=order), order="C")

    @property
    def flags(self):
        """CuPy's flags: ``a.flags.c_contiguous`` and ``a.flags["C_CONTIGUOUS"]``."""
        return _Flags(self.is_c_contiguous(), self.is_f_contiguous(), self._base is None)

    @property
    def data(self):
        """CuPy's MemoryPointer: ``a.data.ptr`` is the device address, ``a.data.mem`` the memory (its
        ``size`` in bytes; it keeps this array alive)."""
        return cuda.MemoryPointer(cuda.UnownedMemory(self.device_ptr, self.nbytes, owner=self), 0)

    def __len__(self):
        return super().__len__()

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    # ------------------------------------------------------------------ what prints
    def __repr__(self):
        return repr(_values(self))

    def __str__(self):
        return str(_values(self))

    def __format__(self, spec):
        return format(_host(self)[()] if self.ndim == 0 else _host(self), spec)

    # DLPack: a capsule over this array's device memory (cudalab/cupy/dlpack.py)
    def toDlpack(self):
        return dlpack.to_capsule(self)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise BufferError(f"a cupy array is on the device (2, 0), not {tuple(dl_device)}: copy it with .get() "
                              "for the host.")
        return dlpack.to_capsule(self.copy() if copy else self)

    def __dlpack_device__(self):
        return (dlpack.CUDA, 0)

    # numpy's other methods and attributes (sum, mean, astype, copy, fill, sort, real...): numpy's own on the
    # values; a method that changes the array in place (fill, sort) works on a copy that is stored back
    def __getattr__(self, name):
        if name.startswith("_") or not hasattr(np.ndarray, name):
            raise AttributeError(f"cupy.ndarray has no attribute {name!r}")
        in_place = name in _IN_PLACE
        values = _host(self) if in_place else _values(self)
        attr = getattr(values, name)
        if not callable(attr):
            return _wrap(attr)

        def method(*args, **kwargs):
            out = attr(*_host_args(args), **_host_args(kwargs))
            if in_place:
                _store(self, values)
            result = _wrap(out)
            model.charge(name, (self, *args), self if in_place else result)
            return result
        method.__name__ = name
        return method


def _float_to_int(values: np.ndarray, target: np.dtype) -> np.ndarray:
    """Floats to an integer type as CuPy's cast kernel does on a GPU (CuPy 14.2.0 on an H200, and
    cudalab's own cvt for the same ElementwiseKernel): toward zero, converted to a 32-bit integer of the
    target's sign (64-bit for a 64-bit target) with saturation, then cut to the target's width. So 300.0
    to int8 is 44 and 1e10 to int8 is -1 (2147483647's low byte), -1.5 to uint8 is 0, and NaN is 0
    except where the conversion gives its sign bit: a float64 to any 32-bit integer, anything to a 64-bit
    one (NaN to int64 is -2**63)."""
    wide = np.dtype(f"{target.kind}{8 if target.itemsize == 8 else 4}")
    info = np.iinfo(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        result = values.astype(wide)
    result[values >= float(info.max)] = info.max
    result[values <= float(info.min)] = info.min
    sign_bit = values.dtype.itemsize == 8 or wide.itemsize == 8
    result[np.isnan(values)] = (info.min if target.kind == "i" else 1 << (wide.itemsize * 8 - 1)) if sign_bit else 0
    return result.astype(target)


class _Flags(dict):
    def __init__(self, c_contiguous, f_contiguous, owndata):
        super().__init__(C_CONTIGUOUS=c_contiguous, F_CONTIGUOUS=f_contiguous, OWNDATA=owndata)
        self.c_contiguous, self.f_contiguous, self.owndata = c_contiguous, f_contiguous, owndata


_IN_PLACE = {"fill", "sort", "put", "partition", "itemset", "setfield"}     # numpy's methods that change the array


def _operator(name, inplace=False):
    op = getattr(np.ndarray, name)

    def apply(self, *others):
        out = op(_host(self) if inplace else _values(self), *_host_args(others))
        if out is NotImplemented:
            return out
        if inplace:
            _store(self, out)
            model.charge(name, (self, *others), self)
            return self
        result = _wrap(out)
        model.charge(name, (self, *others), result)
        return result
    apply.__name__ = name
    return apply


for _name in ("add sub mul truediv floordiv mod pow matmul and or xor lshift rshift lt le gt ge eq ne "
              "neg pos abs invert divmod").split():
    for _dunder in (f"__{_name}__", f"__r{_name}__", f"__i{_name}__"):
        if hasattr(np.ndarray, _dunder):
            setattr(ndarray, _dunder, _operator(_dunder, inplace=_dunder.startswith("__i") and _dunder != "__invert__"))
ndarray.__hash__ = None
for _name in ("__bool__", "__int__", "__float__", "__complex__", "__index__"):      # Python's answer, not an array
    setattr(ndarray, _name, (lambda n: lambda self: getattr(_host(self), n)())(_name))


# ---------------------------------------------------------------------- values between host and device
def _host(a) -> np.ndarray:
    """A device array's values as a new numpy array (read without a timeline entry: CuPy's own work)."""
    if not isinstance(a, DeviceNDArray):
        return a.copy_to_host()
    if a.size == 0:
        return np.empty(a.shape, a.dtype)
    lo, hi = a._extent()
    view = a._host_view(a.device.read(a.device_ptr + lo, hi - lo))
    # the bytes read are this call's own copy: a view of them over the whole of it needs no second copy
    # (a 2 GB array's second copy was a third of cp.ones's cost); a strided view is packed
    return view if hi - lo == view.nbytes else np.array(view)


def _values(a) -> np.ndarray:
    """A device array's values for numpy to read: a read-only view of the emulator's memory (no copy:
    CuPy's arrays are often hundreds of MB), or a copy where the memory is elsewhere."""
    memory = getattr(a.device, "memory", None)
    if memory is None or not isinstance(a, DeviceNDArray) or a.size == 0:
        return _host(a)
    lo, hi = a._extent()
    memory._check_host(a.device_ptr + lo, hi - lo)       # a freed array is an error, as for a copy
    off = a.device_ptr + lo - GLOBAL_BASE
    view = a._host_view(memory.data[off:off + hi - lo])
    view.flags.writeable = False
    return view


def _store(a, values):
    """Write ``values`` (broadcast to ``a``'s shape, converted to its dtype) into device array ``a``."""
    values = np.broadcast_to(np.asarray(values).astype(a.dtype, copy=False), a.shape)
    if a.size == 0:
        return
    lo, hi = a._extent()
    if hi - lo == a.nbytes and _dense(a):         # every byte is an element: write them, no read first
        laid_out = np.array(values, order="F" if _fortran_strides(a) else "C", copy=None)
        a.device.write(a.device_ptr + lo, laid_out.ravel(order="K"))   # (memory order: no copy)
        return
    raw = a.device.read(a.device_ptr + lo, hi - lo)      # the bytes between a view's elements stay
    a._host_view(raw)[...] = values
    a.device.write(a.device_ptr + lo, raw)


def _dense(a) -> bool:
    """Whether device array ``a`` is laid out C- or Fortran-contiguously (no gaps, no repeats)."""
    return a.is_c_contiguous() or a.is_f_contiguous()


def _fortran_strides(a) -> bool:
    return a.ndim > 1 and not a.is_c_contiguous() and a.is_f_contiguous()


def _fortran(values) -> bool:
    """Whether a host array is laid out in Fortran order (and not also in C order: a vector is both)."""
    return isinstance(values, np.ndarray) and values.ndim > 1 and values.flags.f_contiguous \
        and not values.flags.c_contiguous


def _device(values, order="K") -> ndarray:
    """A new device array holding a host array's values, in its layout (order 'K'; 'C' for code that
    needs C order): numpy's Fortran-ordered answer (``cp.asfortranarray(a)``, ``cp.zeros_like`` of an
    F-ordered array) stays Fortran-ordered in device memory, as CuPy's does; a raw kernel reads the
    bytes, so the layout is part of the answer."""
    order = "F" if order == "K" and _fortran(values) else "C"
    values = np.array(values, order=order, copy=None)   # (a copy only if not laid out so; ascontiguousarray
                                                        # would make a scalar 1-d)
    out = ndarray(values.shape, values.dtype, order=order, _filled=True)
    _store(out, values)
    return out


def _wrap(x):
    """numpy's result as CuPy gives it: arrays and scalars become device arrays (0-d for a scalar)."""
    if isinstance(x, (np.ndarray, np.generic)) and not isinstance(x, np.dtype):
        return _device(x)
    if isinstance(x, tuple):
        return tuple(_wrap(v) for v in x)
    return x


def _host_args(x):
    """Arguments for numpy: device arrays (CuPy's or numba's) as their values, through lists and dicts."""
    if isinstance(x, DeviceArray):
        return _values(x)
    if isinstance(x, (list, tuple)):
        return type(x)(_host_args(v) for v in x)
    if isinstance(x, dict):
        return {k: _host_args(v) for k, v in x.items()}
    return x


def _wrapped(index, shape):
    """``index`` with its integer arrays taken modulo their axis's length: CuPy wraps an out-of-bounds
    index of an integer array around (``a[cp.array([5, 6])]`` of 6 elements is ``a[[5, 0]]``) where
    numpy raises IndexError, since a GPU's gather checks nothing. Plain integers and slices keep numpy's
    rules (CuPy raises for ``a[6]`` too), and a boolean mask covers as many axes as it has."""
    items = index if isinstance(index, tuple) else (index,)
    arrays = [np.asarray(i) if isinstance(i, (list, np.ndarray)) else None for i in items]
    spanned = sum(1 if a is None or a.dtype != bool else a.ndim
                  for i, a in zip(items, arrays) if i is not None and i is not Ellipsis)
    out, axis = [], 0
    for item, a in zip(items, arrays):
        if item is Ellipsis:
            axis += len(shape) - spanned
        elif a is not None and a.dtype.kind in "iu" and axis < len(shape) and shape[axis] > 0:
            item = a % shape[axis]
            axis += 1
        elif item is not None:
            axis += a.ndim if a is not None and a.dtype == bool else 1
        out.append(item)
    return tuple(out) if isinstance(index, tuple) else out[0]


# ---------------------------------------------------------------------- cupy's own functions
def asarray(a, dtype=None, order=None, *, blocking=False):
    """A device array: ``a`` itself if it is one of this dtype, a view of a numba (or any
    ``__cuda_array_interface__``) array's memory, else a copy of host values."""
    if isinstance(a, ndarray) and (dtype is None or np.dtype(dtype) == a.dtype):
        return a
    desc = getattr(a, "__cuda_array_interface__", None)
    if desc is not None and not isinstance(a, ndarray):
        from ..pykernels.host import from_cuda_array_interface
        v = from_cuda_array_interface(desc, owner=a)
        view = ndarray(v.shape, v.dtype, memptr=v.device_ptr, strides=v.strides, base=a, device=v.device)
        return view if dtype is None or np.dtype(dtype) == view.dtype else view.astype(dtype)
    return _from_host(a, np.asarray(_host_args(a), dtype=dtype, order=order))


def array(obj, dtype=None, copy=True, order="K", ndmin=0, **kwargs):
    return _from_host(obj, np.array(_host_args(obj), dtype=dtype, order=order, ndmin=ndmin))


def _from_host(given, values) -> ndarray:
    """A new device array of ``values``: a host-to-device copy on the timeline when they came from the
    host, a copy on the device when ``given`` was a device array."""
    out = _device(values)
    if _device_arrays_in(given):
        model.charge("copy", (given,), out)
    else:
        model.copy(out.nbytes, "H2D")
    return out


def _device_arrays_in(x) -> bool:
    return bool(model._device_arrays(x, []))


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    """A host copy (numpy arrays and other values pass through, as in CuPy)."""
    values = _host(a) if isinstance(a, DeviceArray) else np.asarray(a, order=order)
    if isinstance(a, DeviceArray):
        model.copy(values.nbytes, "D2H")
    if out is not None:
        out[...] = values
        return out
    return values


def empty(shape, dtype=float, order="C"):
    """An uninitialized device array (the emulator's memory starts as zeros)."""
    return ndarray(shape, dtype, order=order)


def empty_like(a, dtype=None, order="K", subok=None, shape=None):
    """A new device array shaped like ``a``; order 'K' and 'A' keep a Fortran-ordered ``a``'s layout."""
    keep = order in ("K", "A") and shape is None and not getattr(a, "is_c_contiguous", lambda: True)() \
        and getattr(a, "is_f_contiguous", lambda: False)()
    return ndarray(a.shape if shape is None else shape, a.dtype if dtype is None else dtype,
                   order="F" if order == "F" or keep else "C")


def get_array_module(*args):
    """cupy when an argument is a device array, else numpy (CuPy's way to write code for both)."""
    return _THIS if any(isinstance(a, DeviceArray) for a in args) else np


def fuse(*args, **kwargs):
    """CuPy's kernel fusion: the function runs as it is (each operation still gives numpy's answer)."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f


def show_config(*, _full=False):
    """CuPy's configuration report, as the stand-in answers it."""
    from ..runtime import device
    print(f"CuPy Version          : {__version__} (cudalab's stand-in: arrays in emulated device memory)\n"
          f"NumPy Version         : {np.__version__}\n"
          f"CUDA Runtime Version  : {cuda.runtime.runtimeGetVersion()}\n"
          f"Device 0 Name         : {cuda.runtime.getDeviceProperties(0)['name'].decode()}\n"
          f"Device 0 Compute Capability : {cuda.Device(0).compute_capability}")


def take(a, indices, axis=None, out=None):
    """CuPy's take: the elements at ``indices`` along ``axis`` (of the flattened array if None), an
    out-of-bounds index wrapping around as CuPy's kernel does (numpy's default raises IndexError)."""
    values = _values(a) if isinstance(a, DeviceArray) else np.asarray(a)
    length = values.size if axis is None else values.shape[axis]
    return _on_host(np.take, (values, indices, axis, out), {"mode": "wrap" if length else "raise"})


def put(a, ind, v, mode="wrap"):
    """CuPy's put: ``a.flat[ind] = v`` in place, an out-of-bounds index wrapping around (``mode="wrap"``,
    CuPy's default; ``"clip"`` clamps). numpy's own put raised on the stand-in's read-only values."""
    values = _host(a)
    np.put(values, _host_args(ind), _host_args(v), mode=mode)
    _store(a, values)


def from_dlpack(array, *, device=None, copy=None):
    """An array from another library's (anything with ``__dlpack__``, or a DLPack capsule): a view of
    the same device memory, no copy (a host tensor's values are copied to the device)."""
    return dlpack.from_dlpack(array, device=device, copy=copy)


def fromDlpack(dltensor):           # noqa: N802  (CuPy's old name: a capsule only)
    """CuPy's older ``fromDlpack``: a DLPack capsule (``a.toDlpack()``) as an array viewing its memory."""
    return dlpack.from_capsule(dltensor)


def memoize(for_each_device=False):
    """CuPy's ``memoize``: a decorator caching a function's results by its arguments (CuPy keeps them per
    device; cudalab has one)."""
    def decorate(f):
        cache = {}

        def cached(*args, **kwargs):
            key = (args, tuple(sorted(kwargs.items())))
            if key not in cache:
                cache[key] = f(*args, **kwargs)
            return cache[key]
        _MEMOS.append(cache)
        return functools.wraps(f)(cached)
    return decorate


_MEMOS: list = []


def clear_memo():
    """Forget every result ``memoize`` cached."""
    for cache in _MEMOS:
        cache.clear()


def is_available() -> bool:
    """Whether CuPy has a GPU to run on: the emulated one."""
    return cuda.is_available()


def get_default_memory_pool():
    """CuPy's default device memory pool (cupy.cuda.MemoryPool: cudalab's live allocations)."""
    return cuda.default_pool


def get_default_pinned_memory_pool():
    return cuda.default_pinned_pool


def __getattr__(name):
    """numpy's name for what CuPy does the same way: dtypes and constants as they are, functions
    (``cp.zeros``, ``cp.sqrt``, ``cp.where``, ``cp.sum``...) run by numpy with device arrays in and out,
    numpy's submodules (``cp.linalg``, ``cp.fft``) likewise."""
    return _numpy_name(np, name, "cupy")


_MISSING = object()


def _numpy_name(namespace, name, where):
    attr = getattr(namespace, name, _MISSING)          # (np.newaxis is None)
    if attr is _MISSING or name.startswith("_"):
        raise AttributeError(f"cudalab's CuPy stand-in has no {where}.{name} (numpy has no such name either); it "
                             "runs CuPy's numpy-like functions only. For more, install the real CuPy on a GPU.")
    if isinstance(attr, types.ModuleType):
        return _NumpyModule(attr, f"{where}.{name}")
    if name in _INDEX_TRICKS:
        return _IndexTrick(attr, name)
    if isinstance(attr, type) or not callable(attr):
        return attr

    def function(*args, **kwargs):
        return _on_host(attr, args, kwargs)
    function.__name__ = name
    function.__doc__ = f"numpy's {name} over device arrays' values (cudalab's CuPy stand-in)."
    return function


def _on_host(function, args, kwargs, name=None):
    """numpy's ``function`` over device arrays' values; the result in device memory (``out=`` arrays
    written back)."""
    out = kwargs.get("out")
    outs = out if isinstance(out, tuple) else (out,)
    written = any(isinstance(o, DeviceArray) for o in outs)
    if written:          # numpy writes into host copies of them, stored back below
        copies = tuple(_host(o) if isinstance(o, DeviceArray) else o for o in outs)
        kwargs = dict(kwargs, out=copies if isinstance(out, tuple) else copies[0])
    result = function(*_host_args(args), **{k: v if k == "out" else _host_args(v) for k, v in kwargs.items()})
    name = name or getattr(function, "__name__", "function")
    if written:
        for device, values in zip(outs, copies):
            if isinstance(device, DeviceArray):
                _store(device, values)
        model.charge(name, (args, kwargs), out)
        return out
    result = _wrap(result)
    model.charge(name, (args, kwargs), result)
    return result


# numpy's objects indexed to make arrays (``cp.ogrid[-1.5j:1.5j:100j, -2:2:150j]``): CuPy's give device arrays
_INDEX_TRICKS = ("ogrid", "mgrid", "r_", "c_")


class _IndexTrick:
    """``cp.ogrid``, ``cp.mgrid``, ``cp.r_``, ``cp.c_``: numpy's, with the arrays they make in device memory
    (numpy's own gave host arrays, which a device array's mask then could not index)."""

    def __init__(self, trick, name):
        self._trick, self._name = trick, name

    def __getitem__(self, key):
        made = self._trick[_host_args(key)]
        result = _wrap(tuple(made) if isinstance(made, (list, tuple)) else made)
        model.charge(self._name, (key,), result)
        return list(result) if self._name == "ogrid" else result       # CuPy 14.2's ogrid gives a list


class _NumpyModule:
    """A numpy submodule (linalg, fft) seen as CuPy's: its functions take and give device arrays."""

    def __init__(self, module, where):
        self._module, self._where = module, where

    def __getattr__(self, name):
        return _numpy_name(self._module, name, self._where)


from .kernels import ElementwiseKernel, RawKernel, RawModule, ReductionKernel  # noqa: E402,F401

# the submodules use ndarray above; imported by name, since ``from . import random`` would ask __getattr__
# first, which answers numpy's
cuda, random, testing, dlpack = (importlib.import_module(f"{__name__}.{m}")
                                 for m in ("cuda", "random", "testing", "dlpack"))

__version__ = "13.0.0+cudalab"
_THIS = sys.modules[__name__]
# what a program prints of CuPy's names (``xp.__name__``, ``type(a)``) is CuPy's; the module stays
# importable as cudalab.cupy (sys.modules keeps that key)
__name__ = "cupy"                       # noqa: A001
ndarray.__module__ = "cupy"


def modules() -> dict:
    """The names under which Python finds this stand-in once cudalab.numba.install() puts it in place."""
    cupyx = importlib.import_module("cudalab.cupyx")
    profiler = importlib.import_module("cudalab.cupyx.profiler")
    jit = importlib.import_module("cudalab.cupyx.jit")
    return {"cupy": _THIS, "cupy.cuda": cuda, "cupy.cuda.nvtx": cuda.nvtx,
            "cupy.cuda.runtime": cuda.runtime, "cupy.cuda.texture": cuda.texture, "cupy.cuda.stream": cuda.stream, "cupy.cuda.memory": cuda.memory,
            "cupy.cuda.pinned_memory": cuda.pinned_memory, "cupy.cuda.profiler": cuda.profiler,
            "cupy.cuda.nvrtc": cuda.nvrtc, "cupy.random": random, "cupy.testing": testing,
            "cupyx": cupyx, "cupyx.profiler": profiler, "cupyx.jit": jit, "cupyx.scipy": cupyx.scipy,
            "cupyx.scipy.fft": cupyx.scipy.fft,
            "cupyx.jit.cg": jit.cg, **_backends()}


def _backends() -> dict:
    """``cupy_backends.cuda.api.runtime``, where CuPy defines CUDARuntimeError (programs import it from
    there to catch it): the same module as ``cupy.cuda.runtime``, under CuPy's package names."""
    names = ("cupy_backends", "cupy_backends.cuda", "cupy_backends.cuda.api")
    found = {name: types.ModuleType(name, "CuPy's backend package (cudalab's CuPy stand-in).") for name in names}
    found["cupy_backends.cuda.api.runtime"] = cuda.runtime
    for name, module in found.items():
        if "." in name:
            parent, child = name.rsplit(".", 1)
            setattr(found[parent], child, module)
    return found
