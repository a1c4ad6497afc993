"""Streams, events and pinned host memory in numba.cuda's names, and the session's timeline of when
each copy, kernel, event and synchronization would run on a real GPU.

The emulator runs every operation at once, in the order the program issues it (always a legal
order, so results are exact). *When* it would have run comes from the device model,
``cudalab.device.timeline.Timeline``, which follows the Programming Guide's rules: work in one
stream runs in order, different streams overlap, the legacy default stream (``0``) waits for and
is waited for by every stream, host-to-device and device-to-host copies have their own copy
engines, a copy from pageable memory blocks the host and goes at half the pinned rate, a copy
from pinned memory on a stream returns at once. Durations:

* copies: 2 us + bytes over the profile's host link (PCIe) bandwidth;
* kernels: ``cudalab.device.timing.estimate`` from what the emulator counted. Inside
  ``with cudalab.record_timeline():`` every emulated launch carries a MetricsObserver, so the
  estimate includes memory traffic; outside, a launch without metrics is timed from its
  instruction count alone (issue and block dispatch, no memory), which is quicker to run;
* events and launches cost the host nothing.

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
import weakref

import numpy as np

from ..device import current as current_profile
from ..device.profiles import get as get_profile
from ..device.timeline import Timeline, plot_gantt
from ..errors import CudaError

TIMING_FALLBACK = "A100"      # kernels on a bare compute capability (no SM count) are timed as on this GPU


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
    """One timeline being recorded: the device model plus what ``query()`` needs to answer."""

    def __init__(self, device=None, metrics: bool = False):
        self.model = Timeline(device)
        self.metrics = metrics                 # attach a MetricsObserver to emulated launches
        self.stream_end: dict = {}             # stream handle -> end of its last work
        self._events = itertools.count(1)

    def rows(self) -> Rows:
        return Rows(self.model.rows())

    @property
    def end(self) -> float:
        return self.model.end

    def plot(self, by: str = "engine", ax=None):
        return self.rows().plot(by=by, ax=ax)

    def _done(self, row):
        self.stream_end[row["stream"]] = row["end"]
        return row

    def copy(self, nbytes, direction, host, stream):
        """A copy between ``host`` (a numpy array, or None for a new one) and the device."""
        handle, sync = _handle(stream), not isinstance(stream, Stream)
        pinned = host is not None and is_pinned(host)
        what = "pinned" if pinned else "pageable"
        row = self.model.copy(int(nbytes), direction, stream=handle, pinned=pinned,
                              name=f"{direction} {int(nbytes):,} B ({what})")
        if sync:        # stream 0 as a number is numba's synchronous copy: the host waits even when pinned
            self.model.host_time = max(self.model.host_time, row["end"])
        return self._done(row)

    def kernel(self, rec, stream):
        us, how, limiter = kernel_time(rec, self.model.profile)
        row = self._done(self.model.kernel(rec.kernel, us, stream=_handle(stream)))
        row["model"], row["limiter"] = how, limiter
        return row

    def synchronize(self, stream=None):
        return self.model.synchronize(None if stream is None else _handle(stream))


def kernel_time(rec, profile):
    """(microseconds, how it was found, what limits it) for a launch record."""
    if rec.gpu_time_ms is not None:
        return rec.gpu_time_ms * 1e3, "measured", None
    from ..device.timing import estimate
    p = profile if profile.sms else get_profile(TIMING_FALLBACK)
    if "smsp__inst_executed.sum" in rec.metrics:
        est, how = estimate(rec, device=p), "metrics"
    else:
        warp_insts = -(-rec.thread_instructions // 32)
        est, how = estimate(rec, device=p, metrics={"smsp__inst_executed.sum": warp_insts}), "instructions only"
    return est.time_us, how, est.limiter


_SESSION: list = [None]       # the session's recording, made on first use
_SCOPES: list = []            # record_timeline() recordings, innermost last


def current() -> Recording:
    """The recording operations go to: the innermost ``record_timeline()``, else the session's (which
    starts over when ``cudalab.set_device`` picks another device profile)."""
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
_HANDLES = itertools.count(1)


class Stream:
    """A CUDA stream: work issued to it runs in order; work in different streams may overlap.

    ``priority`` is kept (``cudaStreamCreateWithPriority``) but not modeled: the timeline runs
    kernels one at a time in issue order."""

    def __init__(self, priority: int = 0, handle: int | None = None):
        self.priority = int(priority)
        self.handle = next(_HANDLES) if handle is None else handle

    def synchronize(self):
        """cudaStreamSynchronize: the host waits until the stream's work is done."""
        current().synchronize(self)
        _gpu_synchronize()

    def query(self) -> bool:
        """cudaStreamQuery: True when the stream's work is done at this point of the host's time."""
        rec = current()
        return rec.stream_end.get(self.handle, 0.0) <= rec.model.host_time

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __int__(self):
        return self.handle

    def __repr__(self):
        kind = "the legacy default stream" if self.handle == 0 else f"stream {self.handle}"
        return f"<cudalab Stream: {kind}>"


_DEFAULT = Stream(handle=0)


def stream(priority: int = 0) -> Stream:
    """A new stream (``cudaStreamCreate``); give it to copies (``stream=s``) and launches (``k[g, b, s]``)."""
    return Stream(priority)


def default_stream() -> Stream:
    """The legacy default stream (stream 0) as a Stream object: copies given it are asynchronous."""
    return _DEFAULT


class Event:
    """A CUDA event: ``record(stream)`` marks a point in a stream; ``elapsed_time`` measures between two."""

    def __init__(self, timing: bool = True):
        self.timing = bool(timing)
        self.time = None              # us on the timeline of ``_recording``
        self._recording = None
        self.name = None

    def record(self, stream=0):
        """cudaEventRecord: the event happens when the stream's earlier work is done."""
        rec = current()
        self.name = f"event {next(rec._events)}"
        row = rec.model.record_event(self.name, stream=_handle(stream))
        self.time, self._recording = row["start"], rec
        return self

    def wait(self, stream=0):
        """cudaStreamWaitEvent: later work in ``stream`` starts after this event."""
        self._recorded("wait for it")
        self._recording.model.wait_event(self.name, stream=_handle(stream))

    def synchronize(self):
        """cudaEventSynchronize: the host waits until the event has happened."""
        self._recorded("wait for it")
        model = self._recording.model
        model.host_time = max(model.host_time, self.time)
        _gpu_synchronize()

    def query(self) -> bool:
        """cudaEventQuery: True when the event has happened at this point of the host's time."""
        self._recorded("query it")
        return self.time <= self._recording.model.host_time

    def elapsed_time(self, end: "Event") -> float:
        """cudaEventElapsedTime: milliseconds from this event to ``end`` on the modeled timeline."""
        for e, who in ((self, "the start event"), (end, "the end event")):
            if not e.timing:
                raise CudaError(f"{who} was made with timing=False, so it keeps no time: make it with "
                                "cudalab.event() (timing=True).", "cudaErrorInvalidResourceHandle")
            e._recorded("time it")
        if self._recording is not end._recording:
            raise CudaError("the two events were recorded on different timelines (a timeline was reset or a "
                            "record_timeline() block ended in between): record both again.",
                            "cudaErrorInvalidResourceHandle")
        if not end.query():
            raise CudaError(f"the end event ({end.name}) has not happened yet: the host has not waited for it. "
                            "Call end.synchronize() before end.elapsed_time(...).", "cudaErrorNotReady")
        return (end.time - self.time) / 1e3

    def _recorded(self, what):
        if self._recording is None:
            raise CudaError(f"this event was never recorded, so there is nothing to {what}: call "
                            "event.record(stream) first.", "cudaErrorInvalidResourceHandle")

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


def _gpu_synchronize():
    from . import device
    dev = device.current()
    if dev.kind == "gpu":
        dev.backend.synchronize()


# ---------------------------------------------------------------------- pinned host memory
_PINNED: dict = {}            # key -> (first byte address, one past the last) of page-locked host memory
_KEYS = itertools.count()


def _span(ary):
    a = np.asarray(ary)
    start = a.__array_interface__["data"][0]
    return start, start + a.nbytes


def _register(ary):
    key = next(_KEYS)
    _PINNED[key] = _span(ary)
    return key


def is_pinned(ary) -> bool:
    """Whether the host array ``ary`` lies in page-locked memory (pinned_array, or inside ``pinned()``)."""
    if not isinstance(ary, np.ndarray) or ary.nbytes == 0:
        return False
    start, end = _span(ary)
    return any(lo <= start and end <= hi for lo, hi in _PINNED.values())


def pinned_array(shape, dtype=np.float64) -> np.ndarray:
    """A host array in page-locked memory (``cudaMallocHost``): copies from and to it can be
    asynchronous and go at the full host-link rate. Slices of it are pinned too."""
    a = np.zeros(shape, dtype)
    key = _register(a)
    weakref.finalize(a, _PINNED.pop, key, None)      # freed memory is pageable again
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
            _PINNED.pop(k, None)


# ---------------------------------------------------------------------- hooks for arrays.py and module.py
def copied(nbytes, direction, host=None, stream=0):
    """A copy ran: put it on the timeline (``host`` is the numpy side, None for a new array)."""
    current().copy(nbytes, direction, host, stream)


def before_launch(stream, device, observers):
    """Check the launch's stream; add a MetricsObserver to emulated launches inside record_timeline()."""
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
