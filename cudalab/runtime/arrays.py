"""Device arrays in numba.cuda's style: ``to_device``, ``device_array``, ``copy_to_host``."""
from __future__ import annotations

import functools
import math

import numpy as np

from ..errors import CudaError
from . import device as devices
from . import streams


# Arrays dropped by the garbage collector, freed at the next safe point (release_dropped). The
# collector runs __del__ at any allocation, which may be in the middle of the emulator's own memory
# bookkeeping (a bounds search over the live allocations): freeing right there would change it
# under its feet.
_DROPPED: list = []


def release_dropped(keep_pages=False):
    """Free the memory of device arrays that were garbage-collected (called before allocations and
    launches). ``keep_pages``: the freed blocks keep their pages until the next allocation
    (memory.DeviceMemory.give_back_held), which may take them for a copy that fills it
    (``_take_held_pages``): freed all the same, so a stale pointer to one is a use after free, but a
    launch does not spend its time handing pages to the system, and a new array does not fault in
    fresh ones."""
    while _DROPPED:
        device, ptr = _DROPPED.pop()
        arena = getattr(device, "memory", None) if keep_pages else None
        try:
            if arena is not None:
                arena.hold_pages = True
            device.free(ptr)
        except Exception:           # noqa: BLE001  (the device was reset meanwhile: nothing to free)
            pass
        finally:
            if arena is not None:
                arena.hold_pages = False


@functools.lru_cache(maxsize=64)
def _dtype_name(dt) -> str:
    """str(dtype), cached: numpy builds it in Python, tens of microseconds on every allocation."""
    return str(dt)


class DeviceArray:
    """An n-dimensional array in device memory (C order). ``device_ptr`` is its device address."""

    def __init__(self, shape, dtype, device=None, ptr=None, owned=True, scratch=False):
        """``scratch``: a launch's own copy of a numpy argument, freed when the launch ends (the
        device may hand it out again to the next launch's copies: memory.DeviceMemory.alloc)."""
        release_dropped(keep_pages=True)    # the allocation below may take their pages (memory._take_held_pages)
        self.shape = tuple(int(s) for s in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        if any(s < 0 for s in self.shape):
            raise CudaError(f"an array cannot have a negative size: shape {self.shape}.", "cudaErrorInvalidValue")
        self.dtype = np.dtype(dtype)
        self.device = device or devices.current()
        self.nbytes = math.prod(self.shape) * self.dtype.itemsize
        self.device_ptr = int(ptr) if ptr is not None else \
            self.device.alloc(self.nbytes, label=f"{_dtype_name(self.dtype)}{list(self.shape)}", scratch=scratch)
        self._owned = owned and ptr is None

    @property
    def size(self):
        return math.prod(self.shape)

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        return self.shape[0] if self.shape else 1

    def copy_to_device(self, ary, stream=0):
        """Copy a host array in. Same byte count: the bytes are copied as they are (so a float32
        array fills a ``__constant__ float c[4]`` seen as 16 raw bytes); same element count: the
        values are converted to this array's dtype. ``stream``: see cudalab.runtime.streams (the
        copy runs at once; the timeline says when it would have run)."""
        a = np.ascontiguousarray(np.asarray(ary))
        if a.nbytes != self.nbytes:
            if a.size != self.size:
                raise CudaError(f"cannot copy {a.nbytes} bytes (shape {a.shape}, {a.dtype}) into a device array of "
                                f"{self.nbytes} bytes (shape {self.shape}, {self.dtype}).", "cudaErrorInvalidValue")
            a = a.astype(self.dtype)
        streams.copied(self.nbytes, "H2D", ary, stream)
        if self.nbytes:
            self.device.write(self.device_ptr, a.reshape(-1).view(np.uint8))
        return self

    def copy_to_host(self, ary=None, stream=0):
        """Copy to a new host array (or into ``ary``) and return it."""
        read_into = getattr(self.device, "read_into", None)
        if (read_into is not None and isinstance(ary, np.ndarray) and ary.dtype == self.dtype and ary.size == self.size
                and ary.flags.c_contiguous and ary.flags.writeable and self.nbytes):
            # straight into the caller's array: no temporary (a launch copies every numpy argument back)
            read_into(self.device_ptr, ary.reshape(-1).view(np.uint8))
            streams.copied(self.nbytes, "D2H", ary, stream)
            return ary
        raw = self.device.read(self.device_ptr, self.nbytes) if self.nbytes else np.zeros(0, np.uint8)
        out = raw.view(self.dtype).reshape(self.shape)       # read() gave a copy of its own
        if ary is not None:
            if np.shape(ary) != self.shape and np.size(ary) != self.size:
                raise CudaError(f"cannot copy a device array of shape {self.shape} into a host array of shape "
                                f"{np.shape(ary)}: the sizes differ.", "cudaErrorInvalidValue")
        streams.copied(self.nbytes, "D2H", ary, stream)
        if ary is not None:
            ary[...] = out.reshape(np.shape(ary))
            return ary
        return out

    def free(self):
        if self._owned:
            self.device.free(self.device_ptr)
            self._owned = False

    def __del__(self):
        if getattr(self, "_owned", False):
            _DROPPED.append((self.device, self.device_ptr))     # list.append: safe at any point

    def __array__(self, dtype=None, copy=None):
        a = self.copy_to_host()
        return a if dtype is None else a.astype(dtype)

    def __repr__(self):
        return f"<DeviceArray shape={self.shape} dtype={self.dtype} on {self.device.kind} at 0x{self.device_ptr:x}>"


def to_device(ary, device=None, stream=0):
    """Copy a numpy array to the device; returns a DeviceArray of the same shape and dtype."""
    a = np.ascontiguousarray(ary)
    if a.dtype.kind in "OUSV" and a.dtype.fields is None:
        raise CudaError(f"only arrays of numbers can go to the device; this one holds {a.dtype} "
                        "(Python objects or strings). Make it with a numeric dtype, e.g. np.float32.",
                        "cudaErrorInvalidValue")
    d = DeviceArray(a.shape, a.dtype, device=device)
    return d.copy_to_device(a, stream=stream)


def device_array(shape, dtype=np.float32, device=None, stream=0):
    """An uninitialized device array (the emulator fills it with zeros). ``stream`` is accepted as
    numba.cuda does; allocating takes no time on the timeline."""
    return DeviceArray(shape, dtype, device=device)


def device_array_like(ary, device=None, stream=0):
    return DeviceArray(np.shape(ary), np.asarray(ary).dtype, device=device)
