"""numba.cuda's device array (``DeviceNDArray``) on cudalab's device memory: what numba programs do
with the arrays ``cuda.to_device`` gives them besides passing them to kernels — index and slice
them on the host (``d[0]``, ``d[:n]``, ``d[1:, ::2]``), reshape, transpose, iterate, copy between
them, and hand them on through ``__cuda_array_interface__``.

A slice is a view, as in numba: the same device memory at an offset, with its own shape and byte
strides, so a kernel given ``d[:n]`` writes into ``d``. Element access from the host is a copy of
those bytes, as on a GPU (each ``d[i]`` is one small device-to-host copy).
"""
from __future__ import annotations

import ctypes
import math
import operator

import numpy as np

from ..errors import CudaError
from ..runtime.arrays import DeviceArray


def c_strides(shape, itemsize: int) -> tuple:
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= n
    return tuple(reversed(out))


def f_strides(shape, itemsize: int) -> tuple:
    out, step = [], itemsize
    for n in shape:
        out.append(step)
        step *= n
    return tuple(out)


class DeviceNDArray(DeviceArray):
    """A device array as numba.cuda has it: a shape, byte ``strides`` and a pointer that may lie
    inside another array (a view keeps that array alive)."""

    # numba's mark of device memory: its driver's helpers (is_device_memory, device_pointer,
    # device_ctypes_pointer), which lessons use to build a launch's arguments by hand, take the array
    __cuda_memory__ = True

    def __init__(self, shape, dtype, device=None, ptr=None, strides=None, base=None, stream=0, scratch=False):
        super().__init__(shape, dtype, device=device, ptr=ptr, scratch=scratch)
        self.strides = tuple(int(s) for s in strides) if strides is not None else \
            c_strides(self.shape, self.dtype.itemsize)
        self._base = base
        self.stream = stream

    # ------------------------------------------------------------------ layout
    def is_c_contiguous(self) -> bool:
        return self.size <= 1 or _contiguous(self.shape, self.strides, c_strides(self.shape, self.dtype.itemsize))

    def is_f_contiguous(self) -> bool:
        return self.size <= 1 or _contiguous(self.shape, self.strides, f_strides(self.shape, self.dtype.itemsize))

    @property
    def flags(self) -> dict:
        return {"C_CONTIGUOUS": self.is_c_contiguous(), "F_CONTIGUOUS": self.is_f_contiguous()}

    @property
    def layout(self) -> str:
        """numba's array layout letter: what the kernel is compiled for when it gets this array."""
        return "C" if self.is_c_contiguous() else "F" if self.is_f_contiguous() else "A"

    @property
    def _numba_type_(self):
        """What ``numba.typeof`` answers for it (numba asks this attribute of a device array)."""
        from .arguments import numba_type
        return numba_type(self, "a device array")

    def _extent(self):
        """(lowest, highest + 1) byte offsets from device_ptr that the view touches."""
        if self.size == 0:
            return 0, 0
        lo = sum(s * (n - 1) for n, s in zip(self.shape, self.strides) if s < 0)
        hi = sum(s * (n - 1) for n, s in zip(self.shape, self.strides) if s > 0)
        return lo, hi + self.dtype.itemsize

    @property
    def alloc_size(self) -> int:
        lo, hi = self._extent()
        return hi - lo

    def _view(self, shape, strides, offset=0, dtype=None) -> "DeviceNDArray":
        return DeviceNDArray(shape, dtype or self.dtype, device=self.device, ptr=self.device_ptr + offset,
                             strides=strides, base=self._base if self._base is not None else self, stream=self.stream)

    # ------------------------------------------------------------------ copies
    def _host_view(self, raw: np.ndarray) -> np.ndarray:
        """This array's elements over ``raw``, the bytes of its extent read from the device."""
        lo, _ = self._extent()
        return np.ndarray(self.shape, self.dtype, buffer=raw, offset=-lo, strides=self.strides)

    def copy_to_host(self, ary=None, stream=0):
        """A new host array (or ``ary`` filled) with this array's elements. As numba's, a new one has
        this array's strides over a copy of the bytes it spans (an F-ordered array comes back F-ordered);
        one with negative strides (numba refuses those) comes back C-contiguous."""
        if self.is_c_contiguous():
            return super().copy_to_host(ary, stream)
        from ..runtime import streams
        lo, hi = self._extent()
        raw = self.device.read(self.device_ptr + lo, hi - lo)
        out = self._host_view(raw) if lo == 0 else np.ascontiguousarray(self._host_view(raw))
        streams.copied(hi - lo, "D2H", ary, stream)
        if ary is None:
            return out
        if np.size(ary) != self.size:
            raise CudaError(f"cannot copy a device array of shape {self.shape} into a host array of shape "
                            f"{np.shape(ary)}: the sizes differ.", "cudaErrorInvalidValue")
        ary[...] = out.reshape(np.shape(ary))
        return ary

    def copy_to_device(self, ary, stream=0):
        """Copy a host array, or another device array, into this one, with numba's rules: a copy is one
        block of memory, so this array must be contiguous (a strided view is written by assignment,
        ``d[:, ::2] = values``), and a device array given must be contiguous and laid out as this one."""
        if np.size(ary) == 0:
            return self
        if not _core_contiguous(self):
            raise ValueError(CONTIGUOUS_BUFFER + f" (this device array is a strided view, strides {self.strides}: "
                             "assign to it instead, d[...] = values)")
        if isinstance(ary, DeviceArray):
            source = as_numba_array(ary)
            if not _core_contiguous(source):
                raise ValueError(CONTIGUOUS_BUFFER)
            if source.size and tuple(s for n, s in zip(source.shape, source.strides) if n != 1) != \
                    tuple(s for n, s in zip(self.shape, self.strides) if n != 1):
                raise ValueError(f"incompatible strides: {self.strides} vs. {source.strides} (a C-ordered and an "
                                 "F-ordered array, or views of them: copy through the host, d.copy_to_host())")
        return self._write(ary, stream)

    def _write(self, ary, stream=0):
        """Copy ``ary`` (host or device values, converted to this dtype) into this array's elements,
        whatever its strides: the bytes between a view's elements stay as they are."""
        if isinstance(ary, DeviceArray):
            ary = ary.copy_to_host(stream=stream)
        if self.is_c_contiguous():
            return super().copy_to_device(ary, stream)
        from ..runtime import streams
        values = np.asarray(ary)
        if values.size != self.size:
            raise CudaError(f"cannot copy {values.size} elements (shape {values.shape}) into a device array of "
                            f"shape {self.shape}.", "cudaErrorInvalidValue")
        lo, hi = self._extent()
        raw = self.device.read(self.device_ptr + lo, hi - lo)      # the bytes between the view's elements stay
        self._host_view(raw)[...] = values.reshape(self.shape)
        self.device.write(self.device_ptr + lo, raw)
        streams.copied(hi - lo, "H2D", ary, stream)
        return self

    # ------------------------------------------------------------------ indexing
    def __getitem__(self, index):
        view = self._index(index)
        if view.shape == () and self.dtype.names is not None:
            return DeviceRecord(self.dtype, device=self.device, ptr=view.device_ptr, base=self._base if self._base is not None else self,
                                stream=self.stream)     # a record stays on the device, as numba's
        if view.shape == ():
            return view.copy_to_host()[()]          # one element: a numpy scalar, as numba gives
        return view

    def __setitem__(self, index, value):
        view = self._index(index)
        if isinstance(value, DeviceArray):
            value = value.copy_to_host()
        view._write(np.broadcast_to(np.asarray(value, dtype=self.dtype), view.shape))

    def getitem(self, index, stream=0):
        return self[index]

    def setitem(self, index, value, stream=0):
        self[index] = value

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d device array")
        return self.shape[0]

    def _index(self, index) -> "DeviceNDArray":
        """The view that ``index`` (integers, slices, ``...``, ``None``) selects."""
        index = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, (list, np.ndarray, DeviceArray)) or (isinstance(i, bool)) for i in index):
            raise CudaError("a device array is indexed with integers, slices, ... and None; to pick elements by "
                            "a list or a mask, copy it to the host first (d.copy_to_host()[...]).",
                            "cudaErrorInvalidValue")
        explicit = sum(i is not None and i is not Ellipsis for i in index)
        if explicit > self.ndim:
            raise IndexError(f"too many indices for a device array of {self.ndim} dimension"
                             f"{'s' * (self.ndim != 1)}: {explicit} were given")
        rest = (slice(None),) * (self.ndim - explicit)      # the axes not named: whole
        k = index.index(Ellipsis) if Ellipsis in index else len(index)
        index = index[:k] + rest + index[k + 1:]
        shape, strides, offset, axis = [], [], 0, 0
        for i in index:
            if i is None:
                shape.append(1)
                strides.append(0)
                continue
            n, s = self.shape[axis], self.strides[axis]
            if isinstance(i, slice):
                start, stop, step = i.indices(n)
                shape.append(len(range(start, stop, step)))
                strides.append(s * step)
                offset += start * s
            else:
                k = operator.index(i)
                if not -n <= k < n:
                    raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
                offset += (k % n) * s
            axis += 1
        return self._view(tuple(shape), tuple(strides), offset)

    # ------------------------------------------------------------------ new views
    def _order(self, order: str) -> str:
        """numpy's 'A' (and 'K'): F for an array that is F-contiguous only, else C."""
        if order in ("A", "K"):
            return "F" if self.is_f_contiguous() and not self.is_c_contiguous() else "C"
        return order

    def reshape(self, *newshape, order="C"):
        shape = newshape[0] if len(newshape) == 1 and isinstance(newshape[0], (tuple, list)) else newshape
        shape = tuple(int(s) for s in shape)
        order = self._order(order)
        if shape.count(-1) == 1:
            known = math.prod(s for s in shape if s != -1)
            shape = tuple(self.size // known if s == -1 and known else s for s in shape)
        if math.prod(shape) != self.size:
            raise ValueError(f"cannot reshape a device array of size {self.size} into shape {shape}")
        if order == "C" and self.is_c_contiguous():
            return self._view(shape, c_strides(shape, self.dtype.itemsize))
        if order == "F" and self.is_f_contiguous():
            return self._view(shape, f_strides(shape, self.dtype.itemsize))
        raise NotImplementedError("reshaping a device array that is not contiguous in that order: copy it first "
                                  "(cuda.to_device(d.copy_to_host().reshape(...)))")

    def ravel(self, order="C", stream=0):
        return self.reshape(self.size, order=order)

    def transpose(self, axes=None):
        """numba's transpose: a new C-contiguous device array holding the transposed values (numba runs
        a transpose kernel; a kernel writing into it leaves this array as it is), for 2-d arrays."""
        if axes is not None and tuple(axes) == tuple(range(self.ndim)):
            return self
        if self.ndim != 2:
            raise NotImplementedError("transposing a non-2D DeviceNDArray isn't supported")
        if axes is not None and set(axes) != {0, 1}:
            raise ValueError(f"invalid axes list {axes!r}")
        values = np.ascontiguousarray(self.copy_to_host().T)
        return DeviceNDArray(values.shape, self.dtype, device=self.device, stream=self.stream).copy_to_device(values)

    @property
    def T(self):
        return self.transpose()

    def squeeze(self, axis=None, stream=0):
        keep = [k for k, n in enumerate(self.shape) if n != 1 or (axis is not None and k not in
                                                                    ((axis,) if isinstance(axis, int) else axis))]
        return self._view(tuple(self.shape[k] for k in keep), tuple(self.strides[k] for k in keep))

    def view(self, dtype):
        """The same bytes as another dtype (numba's rules and words): one of the same size keeps the
        strides; another size needs the last axis contiguous and a whole number of elements in it."""
        dtype = np.dtype(dtype)
        if dtype.itemsize == self.dtype.itemsize:
            return self._view(self.shape, self.strides, dtype=dtype)
        if self.ndim == 0 or self.strides[-1] != self.dtype.itemsize:
            raise ValueError("To change to a dtype of a different size, the last axis must be contiguous "
                             f"(this view steps {self.strides[-1] if self.ndim else 0} bytes along it: copy it "
                             "to a new device array first).")
        last = self.shape[-1] * self.dtype.itemsize
        if last % dtype.itemsize:
            raise ValueError("When changing to a larger dtype, its size must be a divisor of the total size in bytes "
                             "of the last axis of the array.")
        shape = self.shape[:-1] + (last // dtype.itemsize,)
        return self._view(shape, self.strides[:-1] + (dtype.itemsize,), dtype=dtype)

    def split(self, section, stream=0):
        if self.ndim != 1 or not self.is_c_contiguous():
            raise ValueError("only a contiguous 1-d device array can be split")
        return [self[i:i + section] for i in range(0, self.size, section)]

    def get_ipc_handle(self):
        """numba's handle that lets another process open this memory (CUDA IPC): an emulated device's
        memory lives inside this Python process, so no other process can map it."""
        from ..errors import UnsupportedError
        raise UnsupportedError("get_ipc_handle(): sharing device memory with another process (CUDA IPC) needs a "
                               "real GPU; the emulator's device memory lives inside this Python process. Pass the "
                               "data to the other process (a numpy array) instead.")

    def bind(self, stream=0):
        v = self._view(self.shape, self.strides)
        v.stream = stream
        return v

    def __array__(self, dtype=None, copy=None):
        if copy is False:       # numba's ValueError: the elements are in device memory
            raise ValueError("`copy=False` is not supported. A copy is always created. (The elements live in "
                             "device memory: np.array(d) and d.copy_to_host() copy them to the host.)")
        return super().__array__(dtype, copy)

    # ------------------------------------------------------------------ what other code asks of an array
    @property
    def __cuda_array_interface__(self) -> dict:
        return {"shape": self.shape, "strides": None if self.is_c_contiguous() else self.strides,
                "data": (self.device_ptr if self.size else 0, False), "typestr": self.dtype.str,
                "version": 3, "stream": None}

    @property
    def device_ctypes_pointer(self):
        return ctypes.c_void_p(self.device_ptr if self.size else None)

    def as_cuda_arg(self):
        return self.device_ctypes_pointer

    def __repr__(self):
        return f"<cudalab DeviceNDArray shape={self.shape} dtype={self.dtype} on {self.device.kind}>"


class DeviceRecord(DeviceNDArray):
    """numba's record on the device: ``cuda.to_device(record)``, or ``d[i]`` of a device array of
    records. A kernel gets it as a record (by address, so it writes it in place); on the host,
    ``r["x"]`` reads one field (a copy), ``r["x"] = v`` writes it, and a field that is an array or a
    nested record is a view of its bytes on the device."""

    def __init__(self, dtype, device=None, ptr=None, base=None, stream=0):
        super().__init__((), dtype, device=device, ptr=ptr, strides=(), base=base, stream=stream)

    @property
    def _numba_type_(self):
        from numba.cuda.np import numpy_support
        return numpy_support.from_dtype(self.dtype)

    def _field(self, name):
        if name not in (self.dtype.names or ()):
            raise KeyError(f"the record has no field {name!r}; its fields are {', '.join(self.dtype.names)}")
        dtype, offset = self.dtype.fields[name][:2]
        return dtype, self.device_ptr + offset

    def __getitem__(self, name):
        dtype, ptr = self._field(name)
        owner = self._base if self._base is not None else self
        if dtype.subdtype is not None:              # an array field: a C-ordered view of its elements
            base, shape = dtype.subdtype
            return DeviceNDArray(shape, base, device=self.device, ptr=ptr, base=owner, stream=self.stream)
        if dtype.names is not None:
            return DeviceRecord(dtype, device=self.device, ptr=ptr, base=owner, stream=self.stream)
        return DeviceNDArray((), dtype, device=self.device, ptr=ptr, base=owner).copy_to_host()[()]

    def __setitem__(self, name, value):
        dtype, ptr = self._field(name)
        shape = dtype.subdtype[1] if dtype.subdtype is not None else ()
        base = dtype.subdtype[0] if dtype.subdtype is not None else dtype
        target = DeviceNDArray(shape, base, device=self.device, ptr=ptr, base=self._base if self._base is not None else self)
        if isinstance(value, DeviceArray):
            value = value.copy_to_host()
        target._write(np.broadcast_to(np.asarray(value, dtype=base), shape))

    def getitem(self, name, stream=0):
        return self[name]

    def setitem(self, name, value, stream=0):
        self[name] = value

    def __len__(self):
        raise TypeError("len() of a device record")

    def __repr__(self):
        return f"<cudalab DeviceRecord dtype={self.dtype} on {self.device.kind}>"


def broadcast_to(a, shape) -> DeviceNDArray:
    """A view of device array ``a`` with numpy's broadcasting to ``shape``: a new or a length-1 axis
    has stride 0 (what numba's CUDA ufuncs do to their inputs before they launch)."""
    a = as_numba_array(a)
    missing = len(shape) - a.ndim
    if missing < 0 or any(n not in (1, m) for n, m in zip(a.shape, shape[missing:])):
        raise ValueError(f"cannot broadcast a device array of shape {a.shape} to {tuple(shape)}")
    strides = (0,) * missing + tuple(0 if n != m else s for n, m, s in zip(a.shape, shape[missing:], a.strides))
    return a._view(tuple(shape), strides)


# numba's words for a copy into or out of a strided view (numba.cuda.cudadrv.devicearray)
CONTIGUOUS_BUFFER = ("Array contains non-contiguous buffer and cannot be transferred as a single memory region. "
                     "Please ensure contiguous buffer with numpy .ascontiguousarray()")


def _core_contiguous(a) -> bool:
    """numba's test before a copy: contiguous once the broadcast axes (stride 0) are left out."""
    keep = [(n, s) for n, s in zip(a.shape, a.strides) if s != 0]
    shape, strides = tuple(n for n, _ in keep), tuple(s for _, s in keep)
    item = a.dtype.itemsize
    return _contiguous(shape, strides, c_strides(shape, item)) or _contiguous(shape, strides, f_strides(shape, item))


def _contiguous(shape, strides, expected) -> bool:
    return all(n == 1 or s == e for n, s, e in zip(shape, strides, expected))


def as_numba_array(a) -> DeviceNDArray:
    """A cudalab DeviceArray seen as a DeviceNDArray (the same memory), so it has numba's methods."""
    if isinstance(a, DeviceNDArray):
        return a
    return DeviceNDArray(a.shape, a.dtype, device=a.device, ptr=a.device_ptr, base=a)
