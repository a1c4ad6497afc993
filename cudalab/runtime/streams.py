"""Streams, events and pinned host memory in numba.cuda's names, and the session's timeline of when
each copy, kernel, event and synchronization would run on a real GPU.

The emulator runs every Python operation at once, in the order the program issues it (always a
legal order, so results are exact; whole programs queue their launches instead, ``core.queues``). What streams and events mean is the runtime core's
(``cudalab.runtime.core.Context``, the same one whole programs use): this module is its Python face.
*When* work would have run comes from the device model, ``cudalab.device.timeline.Timeline``, which
follows the Programming Guide's rules: work in one
stream runs in order, different streams overlap, the legacy default stream (``0``) waits for and
is waited for by every stream, host-to-device and device-to-host copies have their own copy
engines, a copy from pageable memory blocks the host and goes at half the pinned rate, a copy
from pinned memory on a stream returns at once. Durations:

* copies: 2 us + bytes over the profile's host link (PCIe) bandwidth;
* kernels: ``cudalab.device.timing.estimate`` from what the emulator counted. Inside
  ``with cudalab.record_timeline():`` every emulated launch carries a MetricsObserver, so the
  estimate includes memory traffic; outside, a launch without metrics is timed from its
  instruction count alone (issue and block dispatch, no memory), which is quicker to run;
* events and launches cost the host nothing; the host sees an event done 4 us after it happened at the
  earliest (``Timeline.record_event``'s ``seen``, as an H200 did): ``query()`` right after ``record()`` is False.

On a real GPU (``cudalab.use("gpu")``) everything runs on the default stream and synchronously;
kernel rows carry the kernel time the GPU measured, copies are still modeled, so an event's
``elapsed_time`` mixes measured kernels with modeled copies.

    s = cudalab.stream()
    h = cudalab.pinned_array(n, np.float32)
    d = cudalab.to_device(h, stream=s)
    kernel[grid, block, s](d, n)
    d.copy_to_host(h, stream=s)
    s.synchronize()
    cudalab.timeline().plot()            # rows: stream, engine, kind, name, start, end (us)
"""
from __future__ import annotations

import contextlib
import itertools
import threading
import time
import weakref

import numpy as np

from ..device import current as current_profile
from ..device.timeline import Timeline, kernel_time, plot_gantt  # noqa: F401 - kernel_time: for old callers
from ..errors import CudaError
from .core import Context

_CONTEXT: list = [None]


class _HostThread(threading.local):
    """``.active`` on the thread that runs host functions. A class default rather than
    ``getattr(local, "active", False)``: on the other threads that getattr raised and caught an
    AttributeError inside, 1.3 us, and a launch asks eight times (launch19)."""
    active = False


_HOST_THREAD = _HostThread()


def context() -> Context:
    """The Python session's runtime context: streams, events and the timeline (no memory of its own:
    device arrays live on the device, ``cudalab.runtime.device``). Its timeline is the current recording's."""
    _not_in_host_function()
    if _CONTEXT[0] is None:
        _CONTEXT[0] = Context(timeline=lambda: current().model)
        _CONTEXT[0].call_host = _call_host
    return _CONTEXT[0]


def _not_in_host_function():
    """CUDA calls from a host function are refused (an H200 answered cudaErrorNotPermitted to every call
    but cudaGetDeviceCount: tests/runtime_api/host_order.cu)."""
    if _HOST_THREAD.active:
        raise CudaError("a stream callback (host function) may not use CUDA: no launches, copies, streams or "
                        "events from inside it. Do that work after the stream's synchronize(), or in the stream "
                        "itself.", "cudaErrorNotPermitted")


def _call_host(fn, data, status: int = 0) -> float:
    """The core's ``call_host`` for Python: ``fn(data)`` on a thread of the runtime's, as a GPU's driver
    thread runs it; the caller waits until it returns (the Python API runs every operation at once), and
    an exception in it is raised to the caller. Returns its CPU time in microseconds. (``status`` is
    always 0 here: a Python launch's fault is raised at the launch.)"""
    result = {}

    def run():
        _HOST_THREAD.active = True
        start = time.thread_time()
        try:
            fn(data)
        except BaseException as e:      # noqa: BLE001 - handed to the caller below
            result["error"] = e
        result["us"] = (time.thread_time() - start) * 1e6

    thread = threading.Thread(target=run, name="cudalab host function")
    thread.start()
    thread.join()
    if "error" in result:
        raise result["error"]
    return result["us"]


# ---------------------------------------------------------------------- the recorded timeline
class Rows(list):
    """Timeline rows: plain dicts ``stream, engine, kind, name, start, end`` (microseconds)."""

    @property
    def end(self) -> float:
        """When the last piece of work ends (us): the modeled total time."""
        return max((r["end"] for r in self), default=0.0)

    def plot(self, by: str = "engine", ax=None):
        """A Gantt chart (matplotlib axes), one lane per engine, or per stream with ``by="stream"``."""
        return plot_gantt(self, by=by, ax=ax)


class Recording:
    """One timeline being recorded: the device model, and whether launches carry full metrics."""

    def __init__(self, device=None, metrics: bool = False):
        self.model = Timeline(device)
        self.metrics = metrics                 # attach a MetricsObserver to emulated launches

    def rows(self) -> Rows:
        return Rows(self.model.rows())

    @property
    def end(self) -> float:
        return self.model.end

    def plot(self, by: str = "engine", ax=None):
        return self.rows().plot(by=by, ax=ax)

    def copy(self, nbytes, direction, host, stream):
        """A copy between ``host`` (a numpy array, or None for a new one) and the device."""
        s, sync = _core_stream(stream), not isinstance(stream, Stream)
        pinned = host is not None and is_pinned(host)
        what = "pinned" if pinned else "pageable"
        # stream 0 as a number is numba's synchronous copy: the host waits even when pinned
        return context().transfer(nbytes, direction, s, pinned, sync, name=f"{direction} {int(nbytes):,} B ({what})")

    def kernel(self, rec, stream):
        return context().kernel_ran(rec, _core_stream(stream))

    def synchronize(self, stream=None):
        ctx = context()
        if stream is None:
            ctx.device_synchronize()
        else:
            ctx.stream_synchronize(_core_stream(stream))
        return self.model.rows()[-1]


_SESSION: list = [None]       # the session's recording, made on first use
_SCOPES: list = []            # record_timeline() recordings, innermost last


def current() -> Recording:
    """The recording operations go to: the innermost ``record_timeline()``, else the session's (which
    starts over when ``cudalab.set_device`` picks another device profile)."""
    _not_in_host_function()
    if _SCOPES:
        return _SCOPES[-1]
    if _SESSION[0] is None or _SESSION[0].model.profile is not current_profile():
        _SESSION[0] = Recording()
    return _SESSION[0]


def timeline(reset: bool = False) -> Rows:
    """The rows recorded so far (``.plot()`` draws them); ``reset=True`` returns them and starts over."""
    rec = current()
    rows = rec.rows()
    if reset:
        fresh = Recording(metrics=rec.metrics) if rec is _SESSION[0] else Recording(rec.model.profile, rec.metrics)
        if _SCOPES:
            _SCOPES[-1] = fresh
        else:
            _SESSION[0] = fresh
    return rows


@contextlib.contextmanager
def record_timeline(device=None):
    """Record the operations of a ``with`` block on a fresh timeline (for ``device``, a profile name
    like "H100"; the selected one by default). Emulated kernels are timed from full metrics here."""
    rec = Recording(device, metrics=True)
    _SCOPES.append(rec)
    try:
        yield rec
    finally:
        _SCOPES.remove(rec)


# ---------------------------------------------------------------------- streams and events
class Stream:
    """A CUDA stream: work issued to it runs in order; work in different streams may overlap.

    ``priority`` is kept (``cudaStreamCreateWithPriority``, clamped to CUDA's range 0 .. -5) and
    shown on the timeline's rows; the timeline starts kernels' blocks in issue order, whatever the
    priority (kernels of different streams side by side where the device has room)."""

    def __init__(self, priority: int = 0, handle: int | None = None):
        ctx = context()
        self._core = ctx.streams[0] if handle == 0 else ctx.stream_create(0, int(priority))
        self.priority = self._core.priority
        self.handle = self._core.handle

    def synchronize(self):
        """cudaStreamSynchronize: the host waits until the stream's work is done."""
        current().synchronize(self)
        _gpu_synchronize()

    def query(self) -> bool:
        """cudaStreamQuery: True when the stream's work is done at this point of the host's time."""
        return context().stream_query(self._core)

    def add_callback(self, callback, arg=None):
        """cudaStreamAddCallback (numba's name): ``callback(stream, status, arg)`` runs once the stream's
        work so far is done, on a thread of the runtime's, not the caller's, and the stream's later work
        waits for it. The Python API runs every operation at once, so it runs now and this call returns
        when it has (a callback must not wait for something the caller does next); calling CUDA from it
        raises cudaErrorNotPermitted, as on a GPU."""
        self._host_call(lambda: callback(self, 0, arg), callback, as_callback=True)

    def launch_host_func(self, callback, arg=None):
        """cudaLaunchHostFunc (CuPy's name): ``callback(arg)`` runs once the stream's work so far is done,
        as ``add_callback``'s does, but with no status: behind a kernel that faulted it is not called."""
        self._host_call(lambda: callback(arg), callback, as_callback=False)

    def _host_call(self, run, callback, as_callback):
        ctx = context()
        _gpu_synchronize()
        name = getattr(callback, "__name__", "host function")
        ctx.host_function(self._core, lambda _: run(), None, name=name, callback=as_callback)
        ctx.finish(ctx.follows(self._core))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __int__(self):
        return self.handle

    def __repr__(self):
        kind = "the legacy default stream" if self.handle == 0 else f"stream {self.handle}"
        return f"<cudalab Stream: {kind}>"


_DEFAULT: list = [None]


def stream(priority: int = 0) -> Stream:
    """A new stream (``cudaStreamCreate``); give it to copies (``stream=s``) and launches (``k[g, b, s]``)."""
    return Stream(priority)


def default_stream() -> Stream:
    """The legacy default stream (stream 0) as a Stream object: copies given it are asynchronous."""
    if _DEFAULT[0] is None:
        _DEFAULT[0] = Stream(handle=0)
    return _DEFAULT[0]


class Event:
    """A CUDA event: ``record(stream)`` marks a point in a stream; ``elapsed_time`` measures between two."""

    def __init__(self, timing: bool = True):
        self.timing = bool(timing)
        self._core = context().event_create(0 if timing else 2)

    @property
    def time(self):
        """When the event happens on its timeline (us), None before it is recorded."""
        return self._core.time

    @property
    def name(self):
        return self._core.name if self._core.time is not None else None

    def record(self, stream=0):
        """cudaEventRecord: the event happens when the stream's earlier work is done."""
        context().event_record(self._core, _core_stream(stream))
        return self

    def wait(self, stream=0):
        """cudaStreamWaitEvent: later work in ``stream`` starts after this event (one never recorded
        has nothing to wait for, as in CUDA)."""
        context().stream_wait_event(_core_stream(stream), self._core)

    def synchronize(self):
        """cudaEventSynchronize: the host waits until the event has happened (at once for one never
        recorded, as in CUDA)."""
        context().event_synchronize(self._core)
        _gpu_synchronize()

    def query(self) -> bool:
        """cudaEventQuery: True when the event has happened at this point of the host's time (CUDA
        answers cudaSuccess for an event never recorded: True)."""
        return context().event_query(self._core)

    def elapsed_time(self, end: "Event") -> float:
        """cudaEventElapsedTime: milliseconds from this event to ``end`` on the modeled timeline."""
        return context().elapsed_time(self._core, end._core)

    def __repr__(self):
        when = f" at {self.time:.1f} us" if self.time is not None else " (not recorded)"
        return f"<cudalab Event{' ' + self.name if self.name else ''}{when}>"


def event(timing: bool = True) -> Event:
    """A new event (``cudaEventCreate``; ``timing=False`` is ``cudaEventDisableTiming``)."""
    return Event(timing)


def _handle(stream) -> int:
    if stream is None or (isinstance(stream, (int, np.integer)) and not isinstance(stream, bool) and stream == 0):
        return 0
    if isinstance(stream, Stream):
        return stream.handle
    raise CudaError(f"{stream!r} is not a stream: give a stream made by cudalab.stream(), "
                      "cudalab.default_stream(), or 0 for the default stream.", "cudaErrorInvalidResourceHandle")


def _core_stream(stream):
    """The runtime core's stream behind ``stream`` (a Stream, 0 or None)."""
    return context().stream(_handle(stream))


def _gpu_synchronize():
    from . import device
    dev = device.current()
    if dev.kind == "gpu":
        dev.backend.synchronize()


# ---------------------------------------------------------------------- pinned host memory
# page-locked ranges live in the runtime core's registry (core.memory.PinnedHost), as a program's
# cudaHostRegister'ed ones do
_KEYS = itertools.count()


def _span(ary):
    a = np.asarray(ary)
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def _register(ary):
    key = ("python", next(_KEYS))
    context().pinned_host.pin(*_span(ary), key)
    return key


def _unregister(key):
    context().pinned_host.unpin(key)


def is_pinned(ary) -> bool:
    """Whether the host array ``ary`` lies in page-locked memory (pinned_array, or inside ``pinned()``)."""
    if not isinstance(ary, np.ndarray) or ary.nbytes == 0:
        return False
    return context().pinned_host.holds(*_span(ary))


def pinned_array(shape, dtype=np.float64) -> np.ndarray:
    """A host array in page-locked memory (``cudaMallocHost``): copies from and to it can be
    asynchronous and go at the full host-link rate. Slices of it are pinned too."""
    a = np.zeros(shape, dtype)
    key = _register(a)
    weakref.finalize(a, _unregister, key)            # freed memory is pageable again
    return a


@contextlib.contextmanager
def pinned(*arrays):
    """Page-lock existing host arrays for a ``with`` block (``cudaHostRegister``)."""
    for a in arrays:
        if not isinstance(a, np.ndarray):
            raise CudaError(f"cudalab.pinned() page-locks numpy arrays; got {type(a).__name__}.",
                            "cudaErrorInvalidValue")
    keys = [_register(a) for a in arrays]
    try:
        yield
    finally:
        for k in keys:
            _unregister(k)


# ---------------------------------------------------------------------- hooks for arrays.py and module.py
def copied(nbytes, direction, host=None, stream=0):
    """A copy ran: put it on the timeline (``host`` is the numpy side, None for a new array)."""
    current().copy(nbytes, direction, host, stream)


def before_launch(stream, device, observers):
    """Check the launch's stream; add a MetricsObserver to emulated launches inside record_timeline()."""
    _not_in_host_function()
    _handle(stream)
    if device.kind == "emu" and current().metrics:
        from ..analysis.metrics import MetricsObserver
        if not any(isinstance(o, MetricsObserver) for o in observers):
            observers = tuple(observers) + (MetricsObserver(),)
    return observers


def launched(rec, stream):
    """A kernel ran: put it on the timeline with its estimated (or measured) duration."""
    current().kernel(rec, stream)


def device_synchronized():
    """cudaDeviceSynchronize: the host waits for all streams."""
    current().synchronize()


def device_properties() -> dict:
    """Every cudaDeviceProp field of the selected device profile (``cudalab.set_device``), as the
    runtime core gives them to whole programs too; ``totalGlobalMem`` is the emulator's memory."""
    return dict(context().props)


def device_attribute(attr) -> int:
    """``cudaDeviceGetAttribute``: a cudaDevAttr number, or its name ("MultiProcessorCount" or
    "cudaDevAttrMultiProcessorCount")."""
    from .core.properties import ATTRIBUTE_NAMES
    number = ATTRIBUTE_NAMES.get(str(attr).removeprefix("cudaDevAttr"), attr)
    value = context().attributes.get(number) if isinstance(number, int) else None
    if value is None:
        raise CudaError(f"{attr!r} is not a device attribute (a cudaDevAttr number from 1 to 147 or its name, "
                        "like 'MultiProcessorCount').", "cudaErrorInvalidValue")
    return value


def device_limit(limit) -> int:
    """``cudaDeviceGetLimit``: a cudaLimit number or its name ("MallocHeapSize" or "cudaLimitMallocHeapSize")."""
    return context().get_limit(_limit_number(limit))


def set_device_limit(limit, value: int):
    """``cudaDeviceSetLimit`` for this session: kernels launched later see it (device code's
    cudaDeviceGetLimit; the device runtime's pending-launch count), as a program's kernels do."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
        raise CudaError(f"a device limit is a number of bytes or a count (0 or more), not {value!r}.",
                        "cudaErrorInvalidValue")
    context().set_limit(_limit_number(limit), int(value))


def _limit_number(limit) -> int:
    from .core.properties import LIMIT_NAMES
    names = [n.removeprefix("cudaLimit") for n in LIMIT_NAMES]
    name = str(limit).removeprefix("cudaLimit")
    if name in names:
        return names.index(name)
    if isinstance(limit, (int, np.integer)) and not isinstance(limit, bool):
        return int(limit)
    raise CudaError(f"{limit!r} is not a device limit: use a cudaLimit number or one of {', '.join(names)}.",
                    "cudaErrorInvalidValue")
