"""cupy.cuda on cudalab: streams, events and the device are cudalab's (the modeled timeline);
``runtime`` is CuPy's runtime API by address (runtime_api.py), ``texture`` its texture objects
(texture.py), ``nvtx`` marks nothing; the memory pools answer for
cudalab's allocations, which are freed when their array goes (there is no pool to keep blocks)."""
from __future__ import annotations

import types

import numpy as np

from ..pykernels import host
from ..runtime import streams
from . import runtime_api, texture as _texture


class Stream(host.Stream):
    """CuPy's stream: a cudalab stream (so numba takes it too, also through ``cuda.external_stream(s.ptr)``);
    ``with stream:`` makes it the current one."""

    null: "Stream"
    _current: list = []

    def __init__(self, null=False, non_blocking=False, ptds=False, priority=0):
        super().__init__(priority=priority, handle=0 if null else None)

    @property
    def ptr(self) -> int:
        return self.handle

    def use(self):
        Stream._current[:] = [self]
        return self

    def __enter__(self):
        Stream._current.append(self)
        return self

    def __exit__(self, *exc):
        Stream._current.pop()
        return False

    def record(self, event=None):
        return (event or Event()).record(self)

    def wait_event(self, event):
        event.wait(self)

    @property
    def done(self) -> bool:
        return self.query()

    def __cuda_stream__(self):
        """The CUDA stream protocol (version, handle) that libraries read to share a stream."""
        return (0, self.ptr)


def get_current_stream(device_id=None) -> Stream:
    return Stream._current[-1] if Stream._current else Stream.null


class Event(streams.Event):
    """CuPy's event: a cudalab event on the modeled timeline (recorded on the current stream by default)."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        super().__init__(timing=not disable_timing)

    def record(self, stream=None):
        return super().record(get_current_stream() if stream is None else stream)

    @property
    def done(self) -> bool:
        return self.query()

    @property
    def ptr(self) -> int:
        """The cudaEvent_t (what ``cupy.cuda.runtime``'s event calls take)."""
        return self._core.handle


def get_elapsed_time(start_event, end_event) -> float:
    """Milliseconds between two recorded events."""
    return start_event.elapsed_time(end_event)


class Device:
    """CuPy's device: the selected device profile (cudalab emulates one device)."""

    def __init__(self, device=None):
        self.id = int(device or 0)

    @property
    def compute_capability(self) -> str:
        major, minor = host.get_current_device().compute_capability
        return f"{major}{minor}"

    @property
    def mem_info(self) -> tuple:
        return tuple(host.current_context().get_memory_info())

    @property
    def attributes(self) -> dict:
        """Every cudaDevAttr of the profile by its name without the prefix (``'MultiProcessorCount'``),
        as CuPy's dict has them."""
        from ..runtime.core.properties import ATTRIBUTE_NAMES
        from ..runtime.streams import context
        values = context().attributes
        return {name: values[number] for name, number in ATTRIBUTE_NAMES.items() if number in values}

    def synchronize(self):
        host.synchronize()

    @property
    def pci_bus_id(self) -> str:
        return "0000:00:00.0"

    def use(self):
        """Make this the current device: cudaSetDevice, which refuses a device the machine lacks (a
        course written for four GPUs asks for ``Device(3)``; the emulator is one)."""
        runtime.setDevice(self.id)
        return self

    def __enter__(self):
        return self.use()

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


def _module(name, doc, **names):
    m = types.ModuleType(name, doc)
    m.__dict__.update(names)
    return m


# cupy.cuda.runtime: CuPy's wrappers of the CUDA runtime API, by address (runtime_api.py)
runtime = _module("cupy.cuda.runtime", runtime_api.__doc__,
                  **{k: v for k, v in vars(runtime_api).items() if not k.startswith("_")
                     and (isinstance(v, int) or getattr(v, "__module__", "") == runtime_api.__name__)})

# cupy.cuda.texture: CuPy's descriptors over cudalab's CUDA arrays and texture objects (texture.py)
texture = _module("cupy.cuda.texture", _texture.__doc__, ChannelFormatDescriptor=_texture.ChannelFormatDescriptor,
                  CUDAarray=_texture.CUDAarray, ResourceDescriptor=_texture.ResourceDescriptor,
                  TextureDescriptor=_texture.TextureDescriptor, TextureObject=_texture.TextureObject,
                  SurfaceObject=_texture.SurfaceObject)
runtime.__dict__.update(_texture.CONSTANTS)

# cudaProfilerStart/Stop: what a profiler records between them; cudalab's timeline records everything
profiler = _module("cupy.cuda.profiler", "cudaProfilerStart/Stop (cudalab's timeline records every call).",
                   start=lambda: None, stop=lambda: None, initialize=lambda *args, **kwargs: None)


def is_available() -> bool:
    """CuPy's check for a usable GPU: the emulated one is."""
    return True


def _nvrtc_version() -> tuple:
    """(major, minor) of the NVRTC that compiles the stand-in's kernels: the installed wheel's."""
    from importlib import metadata
    try:
        major, minor = metadata.version("nvidia-cuda-nvrtc").split(".")[:2]
        return int(major), int(minor)
    except (metadata.PackageNotFoundError, ValueError):
        return 13, 0


# cupy.cuda.nvrtc: setup checks print its version (CuPy's getVersion is NVRTC's nvrtcVersion)
nvrtc = _module("cupy.cuda.nvrtc", "NVRTC, which compiles the stand-in's RawKernels.", getVersion=_nvrtc_version)


# NVTX ranges name spans of a profiler's timeline; cudalab's timeline has no named ranges, so they mark nothing
nvtx = _module("cupy.cuda.nvtx", "NVTX markers (they mark nothing on cudalab's timeline).",
               RangePush=lambda message, id_color=-1, argb_color=None: None, RangePop=lambda: None,
               Mark=lambda message, id_color=-1, argb_color=None: None)


# ------------------------------------------------------------------ memory: CuPy's pools over cudalab's memory
class MemoryPool:
    """CuPy's device memory pool. cudalab frees an array's memory when the array goes, so the pool
    holds no free blocks: ``used_bytes`` and ``total_bytes`` are the live device allocations,
    ``free_all_blocks`` has nothing to give back, and ``malloc`` allocates directly."""

    def __init__(self, allocator=None):
        self.limit = 0

    def malloc(self, size):
        """A MemoryPointer to ``size`` fresh bytes of device memory (``.ptr``, ``.mem``)."""
        return alloc(size)

    def used_bytes(self):
        from ..runtime import device
        memory = device.current().memory
        return sum(a.size for a in memory.allocs.values() if not a.freed)

    total_bytes = used_bytes

    def free_bytes(self):
        return 0

    def free_all_blocks(self, stream=None):
        pass

    def n_free_blocks(self):
        return 0

    def set_limit(self, size=None, fraction=None):
        self.limit = int(size or 0)

    def get_limit(self):
        return self.limit


class PinnedMemoryPool:
    """CuPy's pool of page-locked host memory: ``malloc`` gives a pinned buffer (numpy.frombuffer reads
    it), freed when nothing refers to it, so no blocks wait in the pool."""

    def __init__(self, allocator=None):
        pass

    def malloc(self, size):
        return alloc_pinned_memory(size)

    def free_all_blocks(self):
        pass

    def n_free_blocks(self):
        return 0


class UnownedMemory:
    """CuPy's memory that another library owns: ``ptr`` and ``size`` bytes, kept alive by ``owner``."""

    def __init__(self, ptr, size, owner, device_id=None):
        self.ptr, self.size, self.owner = int(ptr), int(size), owner
        self.device_id = 0 if device_id is None else int(device_id)


class MemoryPointer:
    """CuPy's pointer into a memory chunk (``a.data``): ``ptr`` is the device address, ``mem`` the chunk."""

    def __init__(self, mem, offset):
        self.mem, self.ptr = mem, int(mem.ptr) + int(offset)
        self.device_id = getattr(mem, "device_id", 0)

    def __int__(self):
        return self.ptr

    def __add__(self, offset):
        return MemoryPointer(self.mem, self.ptr - self.mem.ptr + int(offset))

    # copies by address, as CuPy's low-level examples write them (``mem`` a host address: an int or a
    # ctypes pointer such as ``numpy_array.ctypes.data_as(ctypes.c_void_p)``)
    def copy_from_host(self, mem, size):
        runtime_api.memcpy(self.ptr, _address(mem), size, runtime_api.memcpyHostToDevice)

    def copy_to_host(self, mem, size):
        runtime_api.memcpy(_address(mem), self.ptr, size, runtime_api.memcpyDeviceToHost)

    def copy_from_device(self, src, size):
        runtime_api.memcpy(self.ptr, int(src), size, runtime_api.memcpyDeviceToDevice)

    def copy_from(self, mem, size):
        src = mem if isinstance(mem, MemoryPointer) else _address(mem)
        runtime_api.memcpy(self.ptr, int(src), size, runtime_api.memcpyDefault)

    def memset(self, value, size):
        runtime_api.memset(self.ptr, value, size)

    def copy_from_host_async(self, mem, size, stream=None):
        runtime_api.memcpyAsync(self.ptr, _address(mem), size, runtime_api.memcpyHostToDevice, _stream_ptr(stream))

    def copy_to_host_async(self, mem, size, stream=None):
        runtime_api.memcpyAsync(_address(mem), self.ptr, size, runtime_api.memcpyDeviceToHost, _stream_ptr(stream))

    def copy_from_device_async(self, src, size, stream=None):
        runtime_api.memcpyAsync(self.ptr, int(src), size, runtime_api.memcpyDeviceToDevice, _stream_ptr(stream))

    def memset_async(self, value, size, stream=None):
        runtime_api.memsetAsync(self.ptr, value, size, _stream_ptr(stream))


def _address(mem) -> int:
    """A host address given as an int or a ctypes pointer (``c_void_p``'s value)."""
    return int(getattr(mem, "value", mem) or 0)


def _stream_ptr(stream) -> int:
    return 0 if stream is None else int(getattr(stream, "ptr", stream))


def alloc(size):
    """CuPy's ``cupy.cuda.alloc``: a MemoryPointer to ``size`` bytes of device memory."""
    from . import ndarray
    return ndarray((max(int(size), 1),), np.uint8).data


def malloc_managed(size):
    """CuPy's allocator of managed memory (``MemoryPool(malloc_managed)``): a MemoryPointer to ``size``
    bytes. The stand-in's arrays are read on the host through ``.get()`` either way, so this is device
    memory as ``alloc`` gives it."""
    return alloc(size)


class _Size(int):
    """A byte count that is also CuPy's ``size()`` method (PinnedMemoryPointer.size() is a method,
    numpy's ``size`` an attribute: a program may use either)."""

    def __call__(self) -> int:
        return int(self)


class PinnedMemoryPointer(np.ndarray):
    """CuPy's pointer to page-locked host memory: the bytes as a numpy buffer (``numpy.frombuffer(mem,
    dtype, count)`` reads them), ``ptr`` their host address and ``size()`` their count."""

    @property
    def size(self):
        return _Size(super().size)

    @property
    def ptr(self) -> int:
        return int(self.ctypes.data)


def alloc_pinned_memory(size):
    """CuPy's ``cupy.cuda.alloc_pinned_memory``: ``size`` bytes of page-locked host memory, a buffer
    numpy reads (``numpy.frombuffer(mem, dtype, count)``); copies from and to it are pinned ones."""
    return streams.pinned_array(max(int(size), 1), np.uint8).view(PinnedMemoryPointer)


def get_device_id() -> int:
    """The current device's number (cudalab emulates one device: 0)."""
    return 0


class using_allocator:             # noqa: N801  (CuPy's name: a context manager)
    """CuPy's ``with cupy.cuda.using_allocator(allocator):``: accepted, as ``set_allocator`` is (cudalab
    allocates device memory itself, so ``allocator`` is never called)."""

    def __init__(self, allocator=None):
        self.allocator = allocator

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class MemoryAsyncPool(MemoryPool):
    """CuPy's stream-ordered pool (cudaMallocAsync): the same live allocations as ``MemoryPool``."""

    def __init__(self, pool_handles="current"):
        super().__init__()


def set_allocator(allocator=None):
    """CuPy's ``set_allocator``: accepted; cudalab allocates device memory itself, so ``allocator``
    (a pool's ``malloc``, RMM's) is never called."""


def set_pinned_memory_allocator(allocator=None):
    """CuPy's ``set_pinned_memory_allocator``: accepted; pinned memory comes from cudalab (see
    ``alloc_pinned_memory``), so ``allocator`` is never called."""


def get_allocator():
    return MemoryPool().malloc


default_pool, default_pinned_pool = MemoryPool(), PinnedMemoryPool()

# cupy.cuda.stream: CuPy's module of the stream and event classes above
stream = _module("cupy.cuda.stream", "CuPy's streams and events, cudalab's (the modeled timeline).",
                 Stream=Stream, Event=Event, get_current_stream=get_current_stream,
                 get_elapsed_time=get_elapsed_time)
memory = _module("cupy.cuda.memory", "CuPy's memory pools over cudalab's memory.", MemoryPool=MemoryPool,
                 MemoryPointer=MemoryPointer, UnownedMemory=UnownedMemory,
                 PinnedMemoryPool=PinnedMemoryPool, alloc=alloc, set_allocator=set_allocator,
                 get_allocator=get_allocator, malloc_managed=malloc_managed, using_allocator=using_allocator,
                 MemoryAsyncPool=MemoryAsyncPool)
pinned_memory = _module("cupy.cuda.pinned_memory", "CuPy's page-locked host memory, cudalab's.",
                        PinnedMemoryPool=PinnedMemoryPool, alloc_pinned_memory=alloc_pinned_memory,
                        PinnedMemoryPointer=PinnedMemoryPointer,
                        set_pinned_memory_allocator=set_pinned_memory_allocator)


class _NullStream:
    """``Stream.null``, the legacy default stream: made when first asked (a stream needs the device)."""

    def __get__(self, obj, owner):
        if "_null" not in owner.__dict__:
            owner._null = Stream(null=True)
        return owner._null


Stream.null = _NullStream()
