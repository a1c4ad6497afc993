"""numba.cuda's host API on cudalab: the functions a numba program calls outside its kernels (arrays,
streams, events, the device), answered by cudalab's device and timeline. ``cudalab.numba.install()``
puts them on the ``numba.cuda`` module under numba's names, with numba's signatures and defaults
(``device_array``'s dtype is float64, as in numba).

Host memory that numba pins or maps (``pinned_array``, ``mapped_array``, ``managed_array``) is a numpy
array here: a kernel given one works on a copy that is copied back when it ends, so the host sees
what the kernel wrote once the launch (or ``cuda.synchronize()``) returns, as numba's programs expect.
"""
from __future__ import annotations

import contextlib
import functools
import math
import os
import numbers
import weakref
from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from ..errors import CudaError
from ..runtime import streams
from ..runtime.arrays import DeviceArray
from .devicearray import (CONTIGUOUS_BUFFER, DeviceNDArray, DeviceRecord, _core_contiguous, as_numba_array, broadcast_to,
                          c_strides, f_strides)


def _strides_for(shape, dtype, strides, order):
    dims = list(shape) if isinstance(shape, (tuple, list, np.ndarray)) and np.ndim(shape) == 1 else [shape]
    if not all(isinstance(n, (numbers.Integral, np.integer)) or (isinstance(n, np.ndarray) and n.ndim == 0
                                                                 and n.dtype.kind in "iu") for n in dims):
        # numba's TypeError: a GPU program that sizes an array by n / 2 stops here too
        raise TypeError(f"shape must be an integer or tuple of integers, not {shape!r}: n / 2 is a float in "
                        "Python 3; write n // 2, or int(...).")
    shape = tuple(int(s) for s in dims)
    if strides is not None:
        return shape, tuple(strides)
    itemsize = np.dtype(dtype).itemsize
    if order not in ("C", "F"):
        raise CudaError(f"order must be 'C' or 'F', not {order!r}.", "cudaErrorInvalidValue")
    return shape, (c_strides if order == "C" else f_strides)(shape, itemsize)


def device_array(shape, dtype=np.float64, strides=None, order="C", stream=0):
    """An uninitialized device array (the emulator's memory starts as zeros)."""
    shape, strides = _strides_for(shape, dtype, strides, order)
    return DeviceNDArray(shape, dtype, strides=strides, stream=stream)


def _like(ary):
    """(shape, dtype, strides, order) of a new contiguous array like ``ary``, by numba's own rule (a
    view's axes keep their order of strides, as numpy's zeros_like does)."""
    from numba.cuda.api import _contiguous_strides_like_array, _order_like_array
    a = as_numba_array(ary) if isinstance(ary, DeviceArray) else np.asarray(ary)
    return a.shape, a.dtype, _contiguous_strides_like_array(a), _order_like_array(a)


def device_array_like(ary, stream=0):
    """A new device array of ``ary``'s shape and dtype, laid out as numba lays it out."""
    shape, dtype, strides, order = _like(ary)
    return device_array(shape, dtype, strides=strides, order=order, stream=stream)


# numba.cuda.cudadrv.devicearray's module functions, which numba's own code and tests (and older
# programs) call to make device arrays: cudalab's arrays in numba's memory's place
def from_array_like(ary, stream=0, gpu_data=None):
    """An uninitialized device array of ``ary``'s shape and dtype (and layout, C or F)."""
    _only_cudalab_memory(gpu_data)
    return device_array_like(ary, stream=stream)


def from_record_like(rec, stream=0, gpu_data=None):
    """An uninitialized device record of ``rec``'s dtype."""
    _only_cudalab_memory(gpu_data)
    return DeviceRecord(np.dtype(rec.dtype), stream=stream)


def auto_device(obj, stream=0, copy=True, user_explicit=False):
    """(device array, whether it is new): a device array as it is, anything else copied to the device."""
    if is_cuda_array(obj):
        return obj, False
    return to_device(obj, stream=stream, copy=copy), True


def _only_cudalab_memory(gpu_data):
    if gpu_data is not None:
        raise CudaError("gpu_data=: numba's own device memory objects need a real GPU; leave it out and cudalab "
                        "allocates the array.", "cudaErrorNotSupported")


def to_device(obj, stream=0, copy=True, to=None):
    """Copy a host array (or anything numpy takes: a list, a structured scalar) to a new device array,
    or into ``to``. A device array given is returned as it is, as numba does. As numba's, the copy is
    one block of memory: a host view with gaps (``a[:, 0]``, ``a[::2]``) is numba's ValueError."""
    if to is not None:
        if copy:
            as_numba_array(to).copy_to_device(obj, stream=stream)
        return to
    if isinstance(obj, DeviceArray):
        return as_numba_array(obj)
    a = np.asarray(obj)
    if a.dtype.kind in "OUS" or (a.dtype.kind == "V" and a.dtype.fields is None):
        raise CudaError(f"only arrays of numbers or records can go to the device; this one holds {a.dtype}. "
                        "Make it with a numeric dtype, e.g. np.float32.", "cudaErrorInvalidValue")
    if a.ndim and not _core_contiguous(a):
        raise ValueError(CONTIGUOUS_BUFFER + f" (this host array is a view with gaps, strides {a.strides}: "
                         "pass np.ascontiguousarray(...) of it)")
    if isinstance(obj, np.void):        # a record (np.record too): numba's DeviceRecord, a record to kernels
        d = DeviceRecord(a.dtype, stream=stream)
    else:
        d = device_array(a.shape, a.dtype, order="F" if a.ndim > 1 and np.isfortran(a) else "C", stream=stream)
    if copy:
        d.copy_to_device(a, stream=stream)
    return d


def pinned_array(shape, dtype=np.float64, strides=None, order="C"):
    """A page-locked host array with numba's shape, strides and order arguments."""
    shape, strides = _strides_for(shape, dtype, strides, order)
    base = streams.pinned_array(math.prod(shape), dtype)      # registered as pinned; views of it are too
    return np.ndarray(shape, dtype, buffer=base, strides=strides)


def pinned_array_like(ary):
    shape, dtype, strides, order = _like(ary)
    return pinned_array(shape, dtype, strides, order)


# the buffers of mapped and managed arrays: memory a kernel reads where it is, for numba (which does
# not warn of a copy when one is launched with them)
_DEVICE_VISIBLE: dict = {}          # id(buffer) -> weak reference to it (numpy arrays are not hashable)


def _device_visible(a: np.ndarray) -> np.ndarray:
    root = a
    while isinstance(root.base, np.ndarray):
        root = root.base
    _DEVICE_VISIBLE[id(root)] = weakref.ref(root, lambda _, key=id(root): _DEVICE_VISIBLE.pop(key, None))
    return a


def is_device_visible(a) -> bool:
    """A mapped or managed array, or a view of one."""
    while isinstance(a, np.ndarray):
        ref = _DEVICE_VISIBLE.get(id(a))
        if ref is not None and ref() is a:
            return True
        a = a.base
    return False


def mapped_array(shape, dtype=np.float64, strides=None, order="C", stream=0, portable=False, wc=False):
    """Host memory a kernel can use directly: a page-locked numpy array here (see the module docstring)."""
    return _device_visible(pinned_array(shape, dtype, strides, order))


def mapped_array_like(ary, stream=0, portable=False, wc=False):
    return _device_visible(pinned_array_like(ary))


def managed_array(shape, dtype=np.float64, strides=None, order="C", stream=0, attach_global=True):
    """Unified memory: a numpy array both sides use (see the module docstring)."""
    return _device_visible(pinned_array(shape, dtype, strides, order))


def pinned(*arrays):
    """``with cuda.pinned(a, b):`` page-locks host arrays for the block (cudaHostRegister)."""
    return streams.pinned(*arrays)


@contextlib.contextmanager
def mapped(*arrays, stream=0, portable=False, wc=False):
    """``with cuda.mapped(a, b) as (da, db)``: the arrays themselves, usable by kernels."""
    with streams.pinned(*arrays):
        yield arrays[0] if len(arrays) == 1 else list(arrays)


def from_cuda_array_interface(desc, owner=None, sync=True):
    """A DeviceNDArray over memory another array describes: it must lie in the emulator's memory (a
    cudalab array's, handed on through ``__cuda_array_interface__``)."""
    ptr = int(desc["data"][0]) if desc.get("data") else 0
    if not in_emulator_memory(desc):
        raise CudaError(f"address 0x{ptr:x} is not in the emulator's memory: the array lives on a real GPU. Copy "
                        "it to the host and give cuda.to_device the numpy array.", "cudaErrorInvalidValue")
    dtype = np.dtype(desc["typestr"])
    shape = tuple(desc["shape"])
    return DeviceNDArray(shape, dtype, ptr=ptr, strides=desc.get("strides") or c_strides(shape, dtype.itemsize),
                         base=owner)


def in_emulator_memory(desc) -> bool:
    """Does a ``__cuda_array_interface__`` describe memory of the emulated device (a live allocation)?"""
    from ..runtime import device as devices
    ptr = int(desc["data"][0]) if desc.get("data") else 0
    memory = getattr(devices.current(), "memory", None)
    block = memory.find(ptr) if memory is not None and ptr else None
    return block is not None and not block.freed and block.address <= ptr < block.address + max(block.size, 1)


def is_cuda_array(obj) -> bool:
    return isinstance(obj, DeviceArray) or hasattr(obj, "__cuda_array_interface__")


def as_cuda_array(obj, sync=True):
    """A cudalab device array as numba's DeviceNDArray; an array in a real GPU's memory is refused."""
    if isinstance(obj, DeviceArray):
        return as_numba_array(obj)
    desc = getattr(obj, "__cuda_array_interface__", None)
    if desc is None:
        raise TypeError(f"{type(obj).__name__} has no __cuda_array_interface__: it is not a device array")
    return from_cuda_array_interface(desc, owner=obj, sync=sync)


def driver_version(driver=None) -> tuple:
    """numba's ``driver.get_version()``: CUDA 13.0, what the emulated driver's cudaDriverGetVersion
    answers C++ programs (13000)."""
    return (13, 0)


def code_library_cc(library, cc):
    """numba's ``CUDACodeLibrary._ensure_cc``: the architecture its PTX is built for when none is given
    (``numba.cuda.compiler.compile_ptx`` without ``cc``), the selected profile's where numba asks the
    driver's context; numba's own rule for the suffix (sm_90a and later)."""
    if cc is not None:
        return cc
    major, minor = get_current_device().compute_capability
    return major, minor, "a" if (major, minor) >= (9, 0) else ""


# ---------------------------------------------------------------------- numba's CUDA ufuncs
def ufunc_broadcast_device(mechanism, ary, shape):
    """numba's ``CUDAUFuncMechanism.broadcast_device`` for cudalab arrays (numba's own wraps the
    memory in its DeviceNDArray, which only a real GPU can read), with numba's rule for the strides:
    an axis is repeated (stride 0) where the shapes differ when compared from the first axis, not
    numpy's last, so ``ufunc(d_2x3, h_3)`` gives what it gives on a GPU."""
    ary = as_numba_array(ary)
    strides = [0] * (len(shape) - ary.ndim) + list(ary.strides)
    for ax in range(len(shape)):
        if ax >= ary.ndim or ary.shape[ax] != shape[ax]:
            strides[ax] = 0
    return ary._view(tuple(shape), tuple(strides))


def gufunc_broadcast_scalar_input(gufunc, ary, shape):
    """One element seen ``shape`` times (stride 0), as numba's CUDAGeneralizedUFunc does."""
    return as_numba_array(ary)._view((int(shape),), (0,))


def gufunc_broadcast_add_axis(gufunc, ary, newshape):
    return broadcast_to(ary, newshape)


# ---------------------------------------------------------------------- streams and events
class Stream(streams.Stream):
    """numba.cuda's Stream: cudalab's (``add_callback`` too), with numba's ``auto_synchronize``."""

    @contextlib.contextmanager
    def auto_synchronize(self):
        """``with stream.auto_synchronize():`` synchronizes the stream when the block ends."""
        yield self
        self.synchronize()

    def async_done(self):
        """An asyncio future that completes when the stream's work so far is done (the callback runs on
        the runtime's thread, so it hands the result to the loop as numba does)."""
        import asyncio
        loop = asyncio.get_event_loop()
        done = loop.create_future()
        self.add_callback(lambda s, status, f: loop.call_soon_threadsafe(f.set_result, (s, status)), done)
        return done


_DEFAULTS: dict = {}


def stream():
    return Stream()


def default_stream():
    """Stream 0 (numba's default is the legacy default stream)."""
    if "legacy" not in _DEFAULTS:
        _DEFAULTS["legacy"] = Stream(handle=0)
    return _DEFAULTS["legacy"]


def external_stream(ptr):
    """numba's wrapper of a stream another library made: here one of cudalab's own streams, by its handle
    (cudalab's CuPy stand-in gives its streams' handles as ``stream.ptr``)."""
    core = streams.context().streams.get(int(ptr))
    if core is None:
        raise CudaError(f"cuda.external_stream(0x{int(ptr):x}): no stream of the emulator has that handle (a stream "
                        "made by another library on a real GPU is not the emulator's). Use cuda.stream().",
                        "cudaErrorNotSupported")
    s = Stream.__new__(Stream)
    s._core, s.priority, s.handle = core, core.priority, core.handle
    return s


def event(timing=True):
    return streams.event(timing)


def event_elapsed_time(evtstart, evtend) -> float:
    """Milliseconds between two recorded events, on the modeled timeline."""
    return evtstart.elapsed_time(evtend)


# ---------------------------------------------------------------------- fork detection
# numba's driver remembers the process that started CUDA and refuses a forked child its calls (the
# child's copy of the parent's CUDA state is not usable on a GPU); cudalab's emulated device would work
# in the child, where the program would fail on a GPU: install() checks numba's host functions and
# launches the same way
_CUDA_PID = None


def check_fork():
    """numba's CudaDriverError in a process forked after this one first used the GPU through numba."""
    global _CUDA_PID
    pid = os.getpid()
    if _CUDA_PID is None:
        _CUDA_PID = pid
    elif pid != _CUDA_PID:
        from numba.cuda.cudadrv.error import CudaDriverError
        raise CudaDriverError(f"CUDA initialized before forking: process {pid} was forked from process {_CUDA_PID} "
                              "after it used the GPU. Start worker processes with multiprocessing's 'spawn' "
                              "context (multiprocessing.get_context('spawn')), or fork before the first CUDA call.")


def fork_checked(f, name: str):
    """``f`` (one of numba's host functions as cudalab answers it) after check_fork(), named as
    ``numba.cuda.<name>`` (what it stands for there), so that it pickles by that name, as numba's does
    (``executor.submit(cuda.to_device, a)``)."""
    @functools.wraps(f)
    def checked(*args, **kwargs):
        check_fork()
        return f(*args, **kwargs)
    checked.__module__, checked.__qualname__ = "numba.cuda", name
    return checked


# ---------------------------------------------------------------------- the device
@dataclass(frozen=True)
class EmulatedDevice:
    """What ``numba.cuda.get_current_device()`` tells a program: the selected device profile, with the
    attributes numba programs read (``MULTIPROCESSOR_COUNT``, ``MAX_THREADS_PER_BLOCK``, ...)."""

    name: str
    compute_capability: tuple
    id: int = 0

    def __getattr__(self, attr):
        # numba's names are the cudaDevAttr names in capitals (MULTIPROCESSOR_COUNT: MultiProcessorCount,
        # MAX_BLOCK_DIM_X: MaxBlockDimX): the selected profile's values, as programs see them
        from ..runtime.core.properties import ATTRIBUTE_NAMES
        wanted = attr.replace("_", "").lower()
        for name in ATTRIBUTE_NAMES:
            if name.lower() == wanted:
                return streams.device_attribute(name)
        raise AttributeError(f"the emulated device has no attribute {attr!r} (numba's names are cudaDevAttr "
                             "names in capitals, like MULTIPROCESSOR_COUNT)")

    @property
    def uuid(self):
        return "GPU-emulated"

    supports_float16 = True
    supports_bfloat16 = property(lambda self: tuple(self.compute_capability) >= (8, 0))

    def reset(self):
        pass

    def __enter__(self):         # ``with cuda.gpus[0]:`` selects the device: there is one
        return self

    def __exit__(self, *exc):
        return False


class _Gpus:
    """``cuda.gpus``: the devices numba sees — here the one emulated device."""

    def __len__(self):
        return 1

    def __getitem__(self, devnum):
        return select_device(devnum)

    def __iter__(self):
        return iter(list_devices())

    @property
    def current(self):
        return get_current_device()


gpus = _Gpus()


def _for_selected_device(name: str):
    """numba's ``numba.cuda.compiler.<name>``, where the GPU it asks about (for its compute capability
    when no ``cc`` is given, for its name while it compiles) is the selected profile."""
    def compile_for(pyfunc, sig, cc=None, **options):
        from numba.cuda import compiler
        from .compiler import stand_in_device, target_cc
        with stand_in_device():
            return getattr(compiler, name)(pyfunc, sig, cc=cc or target_cc(), **options)
    compile_for.__name__ = compile_for.__qualname__ = name
    return compile_for


compile_ptx = compile_ptx_for_current_device = _for_selected_device("compile_ptx")
compile_code = compile_for_current_device = _for_selected_device("compile")     # numba.cuda.compile
compile_all = _for_selected_device("compile_all")


def is_float16_supported() -> bool:
    return True


def is_bfloat16_supported() -> bool:
    return tuple(get_current_device().compute_capability) >= (8, 0)


def get_current_device() -> EmulatedDevice:
    from ..device import current
    p = current()
    return EmulatedDevice(p.gpu or p.name, tuple(p.cc))


def list_devices():
    return [get_current_device()]


def select_device(device_id=0):
    if int(device_id) != 0:
        raise CudaError(f"the emulator has one device, number 0, not {device_id}.", "cudaErrorInvalidDevice")
    return get_current_device()


class DriverDevice:
    """numba's ``cuda.cudadrv.driver.Device(n)``, which a lesson builds to print the GPU's name and
    compute capability (numba's own asks libcuda): the emulated device."""

    def __new__(cls, devnum=0):
        return select_device(devnum)


class _Context:
    """``cuda.current_context()``: the device and its memory."""

    device = property(lambda self: get_current_device())

    def get_memory_info(self):
        from ..runtime import device as devices
        memory = getattr(devices.current(), "memory", None)
        if memory is None:            # a real GPU: its own answer
            total = int(streams.device_properties().get("totalGlobalMem", 0))
            return _MemoryInfo(total, total)
        used = sum(a.size for a in memory.allocs.values() if not a.freed)
        return _MemoryInfo(memory.limit - used, memory.limit)

    def synchronize(self):
        synchronize()

    def reset(self):
        pass

    deallocations = property(lambda self: _Deallocations())


class _Deallocations:
    """numba's list of frees it has put off (``ctx.deallocations.clear()`` frees them now): the
    emulator frees an array when it is dropped, so nothing is ever pending."""

    def clear(self):
        pass

    def disable(self):
        return contextlib.nullcontext()

    def __len__(self):
        return 0


# numba's answer to ``get_memory_info()``: a named tuple, so programs read it by name (``.free``), by
# unpacking (``free, total = ...``) or by index (``...[0]``)
_MemoryInfo = namedtuple("MemoryInfo", "free,total")


def current_context(devnum=None):
    return _Context()


def synchronize():
    from .. import synchronize as cudalab_synchronize
    cudalab_synchronize()


def close():
    """numba frees the context; here the arrays stay valid until they are dropped."""


def detect() -> bool:
    """Print what numba's ``cuda.detect()`` prints, for the emulated device."""
    dev = get_current_device()
    print("Found 1 CUDA devices")
    print("id %d    %20s %40s" % (dev.id, dev.name, "[SUPPORTED]"))
    print("%40s: %s" % ("Compute Capability", "%d.%d" % dev.compute_capability))
    print("%40s: %s" % ("Emulated by", "cudalab"))
    print("Summary:\n\t1/1 devices are supported")
    return True


@contextlib.contextmanager
def defer_cleanup():
    yield


def profile_start():
    pass


def profile_stop():
    pass


@contextlib.contextmanager
def profiling():
    """numba's ``with cuda.profiling():`` (the region an external profiler records): cudalab's own
    profile is ``cudalab.profile``, so the region only runs its body."""
    profile_start()
    try:
        yield
    finally:
        profile_stop()


def require_context(fn):
    """numba's decorator that makes sure a CUDA context exists: the emulated device always has one."""
    return fn
