"""``cupy.cuda.runtime`` on cudalab: CuPy's thin wrappers of the CUDA runtime API, by address.

Courses that teach CUDA through CuPy show the runtime underneath the arrays: ``runtime.malloc`` gives
an address, ``runtime.memcpy(dst, src, nbytes, runtime.memcpyHostToDevice)`` copies between a numpy
array's ``ctypes.data`` and a CuPy array's ``data.ptr``, ``streamCreate``/``eventRecord``/
``eventElapsedTime`` time work, ``deviceGetAttribute`` and ``getDeviceProperties`` describe the GPU.
Each call here is the runtime core's (``cudalab.runtime.core``: the same checks, the same timeline rows
as a whole program's ``cudaMemcpy``); host addresses are the program's own memory, read and written
with ctypes, as CuPy hands them to CUDA. A misuse raises CuPy's ``CUDARuntimeError``, whose ``status``
is CUDA's error number and whose text starts with CUDA's name for it, then says what went wrong.
"""
from __future__ import annotations

import ctypes
import functools

import numpy as np

from ..errors import CudaError
from ..runtime.core.errors import ERRORS, code_of
from ..runtime.core.properties import ATTRIBUTE_NAMES

_NAMES = {number: (name, text) for number, name, text in ERRORS}


class CUDARuntimeError(RuntimeError):
    """CuPy's error for a failed runtime call: ``status`` is the cudaError_t number."""

    def __init__(self, status: int, detail: str = ""):
        self.status = int(status)
        name, text = _NAMES.get(self.status, ("cudaErrorUnknown", "unknown error"))
        super().__init__(f"{name}: {text}" + (f" ({detail})" if detail else ""))


def _raising(fn):
    """The runtime core says CudaError; CuPy's callers catch CUDARuntimeError."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except CUDARuntimeError:
            raise
        except CudaError as e:
            raise CUDARuntimeError(code_of(e.code) if e.code else 999, e.args[0]) from None
    return call


# cudaMemcpyKind, host-allocation and stream/event flags, as CuPy names them
memcpyHostToHost, memcpyHostToDevice, memcpyDeviceToHost, memcpyDeviceToDevice, memcpyDefault = range(5)
hostAllocDefault, hostAllocPortable, hostAllocMapped, hostAllocWriteCombined = 0, 1, 2, 4
cudaMemAttachGlobal, cudaMemAttachHost = 1, 2
streamDefault, streamNonBlocking = 0, 1
eventDefault, eventBlockingSync, eventDisableTiming, eventInterprocess = 0, 1, 2, 4
errorInvalidValue, errorMemoryAllocation, errorNotReady = 1, 2, 600
for _name, _number in ATTRIBUTE_NAMES.items():
    globals()[f"cudaDevAttr{_name}"] = _number

_STREAMS: dict = {}     # handle -> the Stream object a streamCreate made (kept alive until streamDestroy)
_EVENTS: dict = {}      # handle -> Event
_HOST: dict = {}        # address -> the page-locked numpy buffer mallocHost/hostAlloc made


def _device():
    from ..runtime import device
    return device.current()


def _context():
    from ..runtime import streams
    return streams.context()


def _allocations():
    dev = _device()
    if getattr(dev, "allocations", None) is None:
        raise CudaError("cupy.cuda.runtime's memory calls run on the emulator (CUDALAB_DEVICE=emu).",
                        "cudaErrorNotSupported")
    return dev.allocations


def _stream(handle):
    """The runtime core's stream for a handle CuPy passes (an int, or a Stream object)."""
    handle = int(getattr(handle, "ptr", handle) or 0)
    if handle and handle not in _STREAMS and handle not in _context().streams:
        raise CudaError(f"{handle} is not a live stream (was it destroyed?).", "cudaErrorInvalidResourceHandle")
    return _context().stream(handle)


# ------------------------------------------------------------------ device
def getDeviceCount() -> int:
    return 1


def getDevice() -> int:
    return 0


@_raising
def setDevice(device: int):
    _context().check_device(int(device))


def deviceSynchronize():
    from ..pykernels import host
    host.synchronize()


def runtimeGetVersion() -> int:
    return 12080


def driverGetVersion() -> int:
    return 12080


@_raising
def getDeviceProperties(device: int = 0) -> dict:
    """cudaGetDeviceProperties as CuPy's dict: every cudaDeviceProp field, ``name`` as bytes (the
    name numba's device gives, so a program that prints both sees one GPU)."""
    from ..pykernels import host
    _context().check_device(int(device))
    props = dict(_context().props)
    props["name"] = host.get_current_device().name.encode()
    return props


@_raising
def deviceGetAttribute(attrib: int, device: int = 0) -> int:
    """cudaDeviceGetAttribute (``runtime.cudaDevAttrMultiProcessorCount`` and the other numbers)."""
    return _context().attribute(int(attrib), int(device))


def memGetInfo() -> tuple:
    return tuple(_allocations().info())


# ------------------------------------------------------------------ memory
@_raising
def malloc(size: int) -> int:
    """cudaMalloc: the address of ``size`` bytes of device memory (free it with ``free``)."""
    return _allocations().alloc(int(size), "device")


@_raising
def mallocManaged(size: int, flags: int = cudaMemAttachGlobal) -> int:
    return _allocations().alloc(int(size), "managed")


@_raising
def free(ptr: int):
    if int(ptr):
        _allocations().free(int(ptr), kinds=("device", "managed"), call="cudaFree")


@_raising
def mallocHost(size: int) -> int:
    """cudaMallocHost: the address of ``size`` bytes of page-locked host memory."""
    from ..runtime import streams
    buf = streams.pinned_array(max(int(size), 1), np.uint8)
    _HOST[buf.ctypes.data] = buf
    return buf.ctypes.data


def hostAlloc(size: int, flags: int = hostAllocDefault) -> int:
    return mallocHost(size)


@_raising
def freeHost(ptr: int):
    if int(ptr) and _HOST.pop(int(ptr), None) is None:
        raise CudaError(f"cudaFreeHost(0x{int(ptr):x}): not an address mallocHost or hostAlloc gave.",
                        "cudaErrorInvalidValue")


def _move(dst: int, src: int, nbytes: int, direction: str):
    """Move the bytes: device sides through the emulator's memory, host sides through ctypes."""
    memory = _allocations().arena
    if direction == "D2D":
        memory.copy_within(dst, src, nbytes)
        return
    data = memory.read(src, nbytes) if direction[0] == "D" else \
        np.frombuffer(ctypes.string_at(src, nbytes), np.uint8)
    if direction[2] == "D":
        memory.write(dst, data)
    else:
        ctypes.memmove(dst, np.ascontiguousarray(data).ctypes.data, nbytes)


def _copy(dst, src, size, kind, stream, sync, call):
    dst, src, size = int(dst), int(src), int(size)
    if size == 0:
        return
    mem = _allocations()
    direction = mem.check_copy(dst, src, size, int(kind), call)
    if direction == "H2H":
        ctypes.memmove(dst, src, size)
        return
    s = _stream(stream)
    ctx = _context()
    ctx.finish(ctx.follows(s))
    _move(dst, src, size, direction)
    host = dst if direction == "D2H" else src
    ctx.transfer(size, direction, s, direction == "D2D" or mem.pinned(host) or ctx.pinned_host.holds(host, host + size),
                 sync)


@_raising
def memcpy(dst: int, src: int, size: int, kind: int):
    """cudaMemcpy(dst, src, size, kind): addresses as ints (``a.data.ptr``, ``numpy_array.ctypes.data``)."""
    _copy(dst, src, size, kind, 0, True, "cudaMemcpy")


@_raising
def memcpyAsync(dst: int, src: int, size: int, kind: int, stream: int = 0):
    """cudaMemcpyAsync: on ``stream``; the host does not wait when the host side is page-locked."""
    _copy(dst, src, size, kind, stream, False, "cudaMemcpyAsync")


def _memset(ptr, value, size, stream, sync, call):
    ptr, size = int(ptr), int(size)
    mem = _allocations()
    mem.check(ptr, size, call)
    s = _stream(stream)
    ctx = _context()
    ctx.finish(ctx.follows(s))
    mem.arena.write(ptr, np.full(size, int(value) & 0xFF, np.uint8))
    ctx.timeline.memset(size, s.handle, sync=sync)


@_raising
def memset(ptr: int, value: int, size: int):
    """cudaMemset: ``size`` bytes at device address ``ptr`` set to the byte ``value``."""
    _memset(ptr, value, size, 0, True, "cudaMemset")


@_raising
def memsetAsync(ptr: int, value: int, size: int, stream: int = 0):
    _memset(ptr, value, size, stream, False, "cudaMemsetAsync")


class PointerAttributes:
    """cudaPointerGetAttributes' answer: ``type`` 0 unregistered host, 1 host, 2 device, 3 managed."""

    def __init__(self, device, devicePointer, hostPointer, type):
        self.device, self.devicePointer, self.hostPointer, self.type = device, devicePointer, hostPointer, type


def pointerGetAttributes(ptr: int) -> PointerAttributes:
    kind = _allocations().pointer_type(int(ptr))
    return PointerAttributes(0 if kind else -2, int(ptr) if kind >= 2 else 0, int(ptr) if kind in (0, 1, 3) else 0,
                             kind)


# ------------------------------------------------------------------ streams and events
def streamCreate() -> int:
    """cudaStreamCreate: a new stream's handle (the ``ptr`` of a ``cupy.cuda.Stream``)."""
    return streamCreateWithPriority(streamDefault, 0)


def streamCreateWithFlags(flags: int) -> int:
    return streamCreateWithPriority(flags, 0)


def streamCreateWithPriority(flags: int, priority: int) -> int:
    from .cuda import Stream
    s = Stream(non_blocking=bool(flags & streamNonBlocking), priority=priority)
    _STREAMS[s.ptr] = s
    return s.ptr


@_raising
def streamDestroy(stream: int):
    made = _STREAMS.pop(int(stream), None)
    if made is None:
        raise CudaError(f"{int(stream)} is not a stream streamCreate made (or it was destroyed already).",
                        "cudaErrorInvalidResourceHandle")
    _context().stream_destroy(made._core)


def _stream_object(stream):
    from .cuda import Stream
    handle = int(getattr(stream, "ptr", stream) or 0)
    if handle == 0:
        return Stream.null
    _stream(handle)         # a dead handle is CUDA's invalid resource handle
    return _STREAMS.get(handle) or Stream.null


@_raising
def streamSynchronize(stream: int):
    _stream_object(stream).synchronize()


@_raising
def streamQuery(stream: int) -> int:
    """cudaStreamQuery's status: 0 when the stream's work is done, 600 (cudaErrorNotReady) when not."""
    return 0 if _stream_object(stream).query() else errorNotReady


def _event(handle):
    event = _EVENTS.get(int(handle))
    if event is None:
        raise CudaError(f"{int(handle)} is not a live event (eventCreate gives one).", "cudaErrorInvalidResourceHandle")
    return event


def eventCreate() -> int:
    return eventCreateWithFlags(eventDefault)


def eventCreateWithFlags(flags: int) -> int:
    from .cuda import Event
    event = Event(disable_timing=bool(flags & eventDisableTiming))
    _EVENTS[event.ptr] = event
    return event.ptr


@_raising
def eventDestroy(event: int):
    _context().event_destroy(_event(event)._core)
    del _EVENTS[int(event)]


@_raising
def eventRecord(event: int, stream: int = 0):
    _event(event).record(_stream_object(stream))


@_raising
def eventSynchronize(event: int):
    _event(event).synchronize()


@_raising
def eventQuery(event: int) -> int:
    return 0 if _event(event).query() else errorNotReady


@_raising
def eventElapsedTime(start: int, end: int) -> float:
    """Milliseconds between two recorded events on the modeled timeline."""
    return _event(start).elapsed_time(_event(end))


@_raising
def streamWaitEvent(stream: int, event: int, flags: int = 0):
    _event(event).wait(_stream_object(stream))
