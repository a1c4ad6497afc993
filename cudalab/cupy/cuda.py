"""cupy.cuda on cudalab: streams, events and the device are cudalab's (the modeled timeline);
``runtime`` and ``nvtx`` have the few calls course programs make."""
from __future__ import annotations

import types

import numpy as np

from ..pykernels import host
from ..runtime import streams


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

    def use(self):
        return self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


def _get_device_properties(device=0) -> dict:
    """cudaGetDeviceProperties, with the keys programs read (``name`` is bytes, as in CuPy)."""
    d = host.get_current_device()
    major, minor = d.compute_capability
    return {"name": d.name.encode(), "major": major, "minor": minor, "multiProcessorCount": d.MULTIPROCESSOR_COUNT,
            "maxThreadsPerBlock": d.MAX_THREADS_PER_BLOCK, "warpSize": d.WARP_SIZE,
            "sharedMemPerBlock": d.MAX_SHARED_MEMORY_PER_BLOCK, "totalGlobalMem": host.current_context().get_memory_info().total,
            "clockRate": d.CLOCK_RATE, "memoryClockRate": d.MEMORY_CLOCK_RATE, "memoryBusWidth": d.GLOBAL_MEMORY_BUS_WIDTH,
            "l2CacheSize": d.L2_CACHE_SIZE, "maxThreadsPerMultiProcessor": d.MAX_THREADS_PER_MULTI_PROCESSOR}


def _memset(ptr, value, size):
    """cudaMemset: ``size`` bytes at device address ``ptr`` set to ``value``."""
    from ..runtime import device
    device.current().write(int(ptr), np.full(int(size), value, np.uint8))


def _module(name, doc, **names):
    m = types.ModuleType(name, doc)
    m.__dict__.update(names)
    return m


runtime = _module("cupy.cuda.runtime", "The CUDA runtime calls CuPy programs make, answered by cudalab.",
                  getDeviceCount=lambda: 1, getDevice=lambda: 0, setDevice=lambda device: None,
                  deviceSynchronize=host.synchronize, getDeviceProperties=_get_device_properties,
                  memGetInfo=lambda: tuple(host.current_context().get_memory_info()), memset=_memset,
                  runtimeGetVersion=lambda: 12080, driverGetVersion=lambda: 12080,
                  CUDARuntimeError=RuntimeError)

# NVTX ranges name spans of a profiler's timeline; cudalab's timeline has no named ranges, so they mark nothing
nvtx = _module("cupy.cuda.nvtx", "NVTX markers (they mark nothing on cudalab's timeline).",
               RangePush=lambda message, id_color=-1, argb_color=None: None, RangePop=lambda: None,
               Mark=lambda message, id_color=-1, argb_color=None: None)


class _NullStream:
    """``Stream.null``, the legacy default stream: made when first asked (a stream needs the device)."""

    def __get__(self, obj, owner):
        if "_null" not in owner.__dict__:
            owner._null = Stream(null=True)
        return owner._null


Stream.null = _NullStream()
