"""One CUDA context on the emulated device: the runtime's semantics, once.

``Context`` owns what a CUDA runtime keeps per device: allocations (``memory.Memory``), streams and
events on the one timeline (``device.timeline.Timeline``), kernel launches with their checks,
memory pools, graphs and stream capture (``graphs.GraphAPI``), limits and cache configuration,
device properties (``properties``), and the sticky error that a faulting kernel leaves. Its
methods are named after the CUDA calls they implement and raise ``CudaError`` with CUDA's error
name when the call is misused. Two thin adapters use it: the whole-program server
(``programs/server.py``, answering the C shim) and the Python host API (``runtime/streams.py``,
``runtime/device.py``).

A program's launches wait in their streams until the host needs them done (``queues``); other
operations run at once, after the work they follow; *when* they would have run on the device
comes from the timeline, and synchronizations move the host's clock there.

A new runtime feature (CUDA arrays and textures, say) plugs in as a mixin class in its own module
under ``runtime/core/`` added to ``Context``'s bases below, with its server half as a mixin of
``programs.server.Server`` and its C half as a section of the shim (docs/INTERNALS.md).
"""
from __future__ import annotations

import collections
import itertools
import re
import time
from dataclasses import dataclass, field

import numpy as np

from ... import device as _devices     # (the profile property: not imported at each call)
from ...device.timeline import kernel_timing
from ...errors import CudaError, KernelError, LaunchError
from ...emulator.memory import DEVICE_MEMORY
from ..progress import Bar
from ..record import LaunchRecord
from .errors import CODE, STICKY
from .graphs import INVALIDATED, GraphAPI
from .textures import TextureAPI
from .memory import Memory, PinnedHost
from .pools import GraphMemory, MemPool
from .properties import ATTRIBUTES, LIMIT_NAMES, attribute, default_limits, device_properties, persisting_l2_unit
from .queues import StreamQueues

LEGACY, PER_THREAD = 1, 2               # cudaStreamLegacy / cudaStreamPerThread
NON_BLOCKING = 1                        # cudaStreamNonBlocking
EVENT_FLAGS, DISABLE_TIMING, INTERPROCESS = 0xF, 2, 4
POLL_US = 1.0                           # host time a query that answers "not ready" costs
PRIORITY_RANGE = (0, -5)                # cudaDeviceGetStreamPriorityRange: least, greatest
STREAM_ATTRIBUTES = {1: "access_policy_window", 3: "synchronization_policy", 8: "priority",
                     9: "mem_sync_domain_map", 10: "mem_sync_domain"}


@dataclass(eq=False)
class Stream:
    handle: int
    flags: int = 0
    priority: int = 0
    capture: object = None              # graphs.Capture while capturing
    attributes: dict = field(default_factory=dict)     # cudaStreamAttrID -> value

    @property
    def non_blocking(self) -> bool:
        return bool(self.flags & NON_BLOCKING)


@dataclass(eq=False)
class Event:
    handle: int
    flags: int = 0
    time: float | None = None           # us on ``timeline`` when it happens
    seen: float | None = None           # us on ``timeline`` from when the host sees it happened (timeline.record_event)
    timeline: object = None
    captured: tuple | None = None       # (Capture, dependencies) when last recorded in a capture
    work: object = None                 # queues.Work of its latest record (pending until its stream gets there)
    gone: bool = False                  # made before a cudaDeviceReset, which destroyed it

    @property
    def name(self) -> str:
        return f"event {self.handle}"

    @property
    def timing(self) -> bool:
        return not self.flags & DISABLE_TIMING


_LAZY: list = []


def _engine_and_device():
    """(the emulator.engine module, the runtime.device module), imported at the first kernel run: the
    engine loads only when a kernel runs, and an import statement at every launch costs microseconds."""
    if not _LAZY:
        from ...emulator import engine
        from .. import device
        _LAZY[:] = [engine, device]
    return _LAZY


MAPPED_KEPT = 4096      # argument lists a Function keeps mapped_traffic's answer for


@dataclass(eq=False)
class Function:
    """A kernel as the runtime knows it: its emulator program and the attributes a program can set."""

    program: object                     # emulator.engine.Program
    mangled: str
    name: str                           # the C++ name (demangled)
    params: list = field(default_factory=list)      # [(size, align)]
    registers: int = 32
    max_dynamic_shared: int | None = None   # cudaFuncAttributeMaxDynamicSharedMemorySize (None: the default)
    carveout: int = -1
    attributes: dict = field(default_factory=dict)  # other cudaFuncAttribute values set
    checked: dict = field(default_factory=dict, repr=False)     # launch shapes that passed (Context.checked_launch)
    mapped: tuple | None = field(default=None, repr=False)      # (arena bounds, {arguments: mapped_traffic's answer})

    @property
    def static_shared(self) -> int:
        global _static_shared
        if _static_shared is None:      # (the engine, imported at the first launch: not at each)
            from ...emulator.engine import static_shared as _static_shared
        return _static_shared(self.program, self.program.function(self.mangled))


_static_shared = None       # emulator.engine.static_shared, once Function.static_shared has imported it


class Context(GraphAPI, TextureAPI, StreamQueues):
    """The runtime state of one device, for one program (server) or one Python session."""

    def __init__(self, arena=None, profile=None, timeline=None):
        self.pinned_host = PinnedHost()     # page-locked host memory outside the arena
        self.memory = Memory(arena, self.pinned_host) if arena is not None else None
        self._profile = profile
        self._props = None
        self._timeline = timeline
        self._handles = itertools.count(16)
        self.streams: dict = {0: Stream(0)}
        self.per_thread_streams: dict = {}      # host thread -> its per-thread default stream
        self.caller = (0, False)        # (host thread, stream 0 means its per-thread stream): set per call
        self.events: dict = {}
        self.before_reset: set = set()  # handles of events that a cudaDeviceReset destroyed
        self.default_pool = MemPool(self.new_handle())
        self.pools = {self.default_pool.handle: self.default_pool}
        self.current_pool = self.default_pool
        self.pool_of: dict = {}         # address of a stream-ordered allocation -> its MemPool
        self.graph_memory = GraphMemory()
        self.graph_allocations = collections.Counter()    # graph memory address -> graphs holding it
        self._limits: dict = {}         # cudaLimit -> value (``limits``)
        self.cache_config = 0
        self.sticky = None              # error name: the context is broken, every call returns it
        self.sticky_news = ""           # why, said with the first call that answers it (once)
        self.fault = None               # a kernel's error the program has not synchronized with yet
        self.launches: list = []        # LaunchRecord of every kernel run
        self.observers = lambda program, kernel: []  # adapter hook: observers for a launch of kernel
        self.after_launch = lambda rec, observers: None
        self.host_memory = None         # adapter hook: the program's memory (read, write), for queued copies
        self.call_host = None           # adapter hook: call_host(fn, data) runs a host function on a thread
        #                                 of the runtime's until it returns; gives its CPU time in microseconds
        self.deadline = None            # time.monotonic() at which the whole program's time is up
        self.time_limit = None          # that limit in seconds, for messages
        self.cpu_limit = None           # the CPU-time limit (ulimit -t) in seconds, once it has run out
        self.stopped = None             # why a kernel was stopped when the time limit ran out
        for feature in type(self).__mro__:      # each feature mixin (graphs.GraphAPI, ...) sets up its state
            if "_init_feature" in feature.__dict__:
                feature.__dict__["_init_feature"](self)

    # ------------------------------------------------------------------ basics
    def new_handle(self) -> int:
        return next(self._handles)

    @property
    def profile(self):
        if self._profile is not None:
            return self._profile
        return _devices.current()

    @property
    def props(self) -> dict:
        """Every cudaDeviceProp field of the device (recomputed when cudalab.set_device changes it)."""
        return self._device()[1]

    @property
    def attributes(self) -> dict:
        """Every cudaDevAttr number the driver knows -> its value on the device."""
        return self._device()[2]

    @property
    def limits(self) -> dict:
        """cudaLimit number -> value; a device that cudalab.set_device picks starts from its defaults."""
        self._device()
        return self._limits

    def _device(self):
        # the Python session's context has no arena of its own: its device has the emulator's memory
        key = (self.profile, self.memory.arena.limit if self.memory else DEVICE_MEMORY)
        if self._props is None or self._props[0] != key:
            props = device_properties(key[0], key[1])
            if self._props is None or self._props[0][0] != key[0]:
                self._limits = default_limits(props)    # another device (cudalab.set_device): its defaults
            self._props = (key, props, {a: attribute(props, a) for a in ATTRIBUTES})
        return self._props

    def bind(self, program):
        """Give an emulator Program the device it runs on, so device code sees what the host API
        answers: the SM count (%smid, %nsmid), the clock rate (%clock ticks), the cudaDevAttr values
        and the cudaLimit values (the device runtime's cudaDeviceGetAttribute/GetLimit, and its
        launch checks). Called before every launch: cudalab.set_device and cudaDeviceSetLimit change them
        (a program given this device's attribute table and equal limits already has them all)."""
        _, props, attributes = self._device()
        if program.device_attributes is attributes and program.device_limits == self._limits:
            return program
        program.sm_count, program.clock_khz = props["multiProcessorCount"], props["clockRate"]
        program.device_attributes, program.device_limits = attributes, dict(self._limits)
        return program

    def attribute(self, attr: int, device: int = 0) -> int:
        self.check_device(device)
        value = self.attributes.get(attr)
        if value is None:
            raise CudaError(f"{attr} is not a cudaDeviceAttr this driver knows (CUDA 13.0 knows 1 to 147).",
                            "cudaErrorInvalidValue")
        return value

    @staticmethod
    def check_device(device: int, feature: str = ""):
        if device != 0:
            more = f" ({feature})" if feature else ""
            raise CudaError(f"device {device} does not exist: the emulator is one GPU, device 0{more}.",
                            "cudaErrorInvalidDevice")

    @property
    def timeline(self):
        t = self._timeline
        if t is None:
            from ...device.timeline import Timeline
            t = self._timeline = Timeline(self.profile)
        return t() if callable(t) else t

    def synchronized(self):
        """A host synchronization happened: a kernel's fault becomes the context's sticky error, and
        memory pools give memory beyond their release threshold back."""
        if self.fault:
            self.sticky, self.fault = self.fault, None
        if self.memory is not None:
            for pool in self.pools.values():
                pool.synchronized(self.memory)

    # ------------------------------------------------------------------ streams and events
    def stream(self, handle) -> Stream:
        """The stream a handle names. 0 is the legacy default stream, unless the caller was built with
        ``--default-stream per-thread``; then, like cudaStreamPerThread, it is the calling host thread's
        own default stream: a blocking stream that waits for the legacy stream but not for other streams
        (Programming Guide, "Per-thread default stream")."""
        h = int(handle or 0)
        if h == PER_THREAD or h == 0 and self.caller[1]:
            thread = self.caller[0]
            if thread not in self.per_thread_streams:
                s = self.per_thread_streams[thread] = Stream(self.new_handle())
                self.streams[s.handle] = s
                self.timeline.stream(s.handle)
            return self.per_thread_streams[thread]
        if h in (0, LEGACY):
            return self.streams[0]
        s = self.streams.get(h)
        if s is None:
            raise CudaError(f"0x{h:x} is not a stream this program created (or it was destroyed).",
                            "cudaErrorInvalidResourceHandle")
        return s

    def stream_create(self, flags: int = 0, priority: int = 0) -> Stream:
        if flags & ~NON_BLOCKING:
            raise CudaError(f"cudaStreamCreateWithFlags: 0x{flags:x} is not a stream flag (cudaStreamDefault or "
                            "cudaStreamNonBlocking).", "cudaErrorInvalidValue")
        s = Stream(self.new_handle(), flags, max(PRIORITY_RANGE[1], min(PRIORITY_RANGE[0], int(priority))))
        self.streams[s.handle] = s
        self.timeline.stream(s.handle, s.non_blocking, s.priority)
        return s

    def stream_destroy(self, s: Stream):
        if s.handle and s not in self.per_thread_streams.values():     # default streams stay
            del self.streams[s.handle]

    def stream_synchronize(self, s: Stream):
        self.forbid_while_capturing(s, "cudaStreamSynchronize")
        if s.handle == 0:
            self.legacy_stream_used("cudaStreamSynchronize")
        self.finish(self.follows(s))
        self.timeline.synchronize(s.handle)
        self.synchronized()

    def stream_query(self, s: Stream) -> bool:
        """cudaStreamQuery: is the stream's work done at the host's present time?"""
        self.forbid_while_capturing(s, "cudaStreamQuery")
        tl = self.timeline
        done = not self.still_running(self.follows(s), s) and \
            (tl._ready(0) if s.handle == 0 else tl.stream_end(s.handle)) <= tl.host_time
        if not done:
            tl.host_time += POLL_US
        return done

    def stream_wait_event(self, s: Stream, ev: Event, flags: int = 0):
        self.live_event(ev)
        if flags not in (0, 1):
            raise CudaError(f"cudaStreamWaitEvent: flags must be 0 (or cudaEventWaitExternal), not {flags}.",
                            "cudaErrorInvalidValue")
        if ev.captured is not None:
            self.capture_wait(s, ev)
        elif ev.time is not None or ev.work is not None:
            self.enqueue(s, lambda: self.timeline.wait_event(ev.name, s.handle), after=[ev.work])

    def stream_set_attribute(self, s: Stream, attr: int, value):
        if attr == 1:                  # access policy window
            base, nbytes, hit_ratio, hit, miss = value
            limit = self.props["accessPolicyMaxWindowSize"]
            if nbytes > limit or not 0.0 <= hit_ratio <= 1.0:
                raise CudaError(f"an access policy window may cover at most {limit:,} bytes with a hit ratio "
                                f"between 0 and 1; this one has {nbytes:,} bytes and {hit_ratio}.",
                                "cudaErrorInvalidValue")
        elif attr == 8:
            s.priority = max(PRIORITY_RANGE[1], min(PRIORITY_RANGE[0], int(value)))
            self.timeline.stream(s.handle, s.non_blocking, s.priority)
        elif attr not in (3, 9, 10):
            raise CudaError(f"{attr} is not a stream attribute (access policy window, synchronization policy, "
                            "priority, memory sync domain).", "cudaErrorInvalidValue")
        s.attributes[attr] = value

    def stream_get_attribute(self, s: Stream, attr: int):
        if attr == 8:
            return s.priority
        if attr == 1:
            return s.attributes.get(1, (0, 0, 0.0, 0, 0))
        if attr == 3:
            return s.attributes.get(3, -1)
        if attr in (9, 10):
            return s.attributes.get(attr, 0)
        raise CudaError(f"{attr} is not a stream attribute.", "cudaErrorInvalidValue")

    def event(self, handle) -> Event:
        """The event a handle names. One made before a cudaDeviceReset is an Event still (``gone``): an
        H200 answered cudaErrorContextIsDestroyed to every call about it but cudaEventRecord, which
        answered cudaErrorDeviceUninitialized (``live_event``)."""
        ev = self.events.get(int(handle or 0))
        if ev is None and int(handle or 0) in self.before_reset:
            return Event(int(handle), gone=True)
        if ev is None:
            raise CudaError(f"0x{int(handle or 0):x} is not an event this program created (or it was destroyed).",
                            "cudaErrorInvalidResourceHandle")
        return ev

    def event_create(self, flags: int = 0) -> Event:
        if flags & ~EVENT_FLAGS:
            raise CudaError(f"0x{flags:x} is not an event flag (cudaEventDefault, cudaEventBlockingSync, "
                            "cudaEventDisableTiming).", "cudaErrorInvalidValue")
        if flags & INTERPROCESS:
            raise CudaError("interprocess events (cudaEventInterprocess, for IPC) are not supported by the "
                            "emulated GPU.", "cudaErrorNotSupported")
        ev = Event(self.new_handle(), flags)
        self.events[ev.handle] = ev
        return ev

    def event_destroy(self, ev: Event):
        self.live_event(ev)
        self.events.pop(ev.handle, None)

    @staticmethod
    def live_event(ev: Event, code: str = "cudaErrorContextIsDestroyed"):
        """Refuse an event that a cudaDeviceReset destroyed (``event``)."""
        if ev.gone:
            raise CudaError(f"{ev.name} was created before cudaDeviceReset, which destroyed it with everything else "
                            "of the context: create it again.", code)

    def event_record(self, ev: Event, s: Stream):
        self.live_event(ev, "cudaErrorDeviceUninitialized")
        if s.capture is not None:
            c = s.capture
            if c.status != 1:
                raise CudaError("the stream's capture was invalidated by an earlier error.",
                                "cudaErrorStreamCaptureInvalidated")
            ev.captured = (c, list(c.deps.get(s, [])))
            return
        if s.handle == 0:
            self.legacy_stream_used("cudaEventRecord")
        ev.captured = None

        def record():
            tl = self.timeline
            row = tl.record_event(ev.name, s.handle)
            ev.time, ev.seen, ev.timeline = row["start"], row["seen"], tl
        ev.work = self.enqueue(s, record)

    def not_captured(self, ev: Event, call: str):
        """An event last recorded into a stream capture is a node of the graph, not a moment. While that
        capture goes on, an H200 answered cudaEventQuery about it with cudaErrorCapturedEvent and the
        capture was invalidated (cudaStreamEndCapture: cudaErrorStreamCaptureInvalidated); once the capture
        was invalid or over, cudaEventQuery, cudaEventSynchronize and cudaEventElapsedTime answered
        cudaErrorInvalidValue (tests/runtime_api/events.cu)."""
        if ev.captured is None:
            return
        c = ev.captured[0]
        if c.status != INVALIDATED and c in self.active_captures():
            self.invalidate(c, "cudaErrorCapturedEvent",
                            f"{call}: {ev.name} was last recorded into the stream capture going on, so it marks a "
                            "node of the graph, not a moment the host can wait for or time; the capture is now "
                            "invalid.")
        raise CudaError(f"{call}: {ev.name} was last recorded into a stream capture, so it marks a node of a graph, "
                        "not a moment the host can wait for or time: record it outside the capture.",
                        "cudaErrorInvalidValue")

    def event_synchronize(self, ev: Event):
        self.live_event(ev)
        self.not_captured(ev, "cudaEventSynchronize")
        self.finish([ev.work])
        if ev.time is not None and ev.timeline is self.timeline:
            self.timeline.wait_until(ev.seen)
        self.synchronized()

    def event_query(self, ev: Event) -> bool:
        self.live_event(ev)
        self.not_captured(ev, "cudaEventQuery")
        if self.still_running([ev.work], ev):
            self.timeline.host_time += POLL_US
            return False
        if ev.time is None or ev.timeline is not self.timeline or ev.seen <= self.timeline.host_time:
            return True
        self.timeline.host_time += POLL_US
        return False

    def elapsed_time(self, start: Event, end: Event) -> float:
        """cudaEventElapsedTime in milliseconds on the modeled timeline. The checks go in the H200's order
        (tests/test_event_timing.py): an event without timing, then one recorded into a capture, then one
        never recorded, then one not yet seen done (either event: a start behind work still running is
        cudaErrorNotReady too). The time may be negative, when ``end`` happened first."""
        pair = ((start, "start"), (end, "end"))
        for e, who in pair:
            self.live_event(e)
        for e, who in pair:
            if not e.timing:
                raise CudaError(f"the {who} event was created with cudaEventDisableTiming (timing=False in "
                                "Python), so it keeps no time.", "cudaErrorInvalidResourceHandle")
        for e, who in pair:
            self.not_captured(e, "cudaEventElapsedTime")
        for e, who in pair:
            if e.time is None and e.work is None:
                raise CudaError(f"the {who} event was never recorded (cudaEventRecord), so there is no time to "
                                "measure.", "cudaErrorInvalidResourceHandle")
        for e, who in pair:
            if e.work is not None and not e.work.done:
                raise CudaError(f"the {who} event has not happened yet: its stream has not got there. Call "
                                f"cudaEventSynchronize({who}) before cudaEventElapsedTime.", "cudaErrorNotReady")
        if start.timeline is not end.timeline:
            raise CudaError("the two events were recorded on different timelines (a timeline was reset or a "
                            "record_timeline() block ended in between): record both again.",
                            "cudaErrorInvalidResourceHandle")
        for e, who in pair:
            if e.seen > e.timeline.host_time:
                raise CudaError(f"the {who} event has not happened yet, as far as the host can tell: the GPU "
                                "finishes recording an event a few microseconds after the work before it, and "
                                "synchronizing another stream does not wait for that. Call "
                                f"cudaEventSynchronize({who}) before cudaEventElapsedTime.", "cudaErrorNotReady")
        return (end.time - start.time) / 1e3

    def device_synchronize(self):
        for c in self.active_captures():
            self.invalidate(c, "cudaErrorStreamCaptureUnsupported",
                            "cudaDeviceSynchronize is not allowed while a stream is being captured; the capture "
                            "is now invalid.")
        self.finish_all()
        self.timeline.synchronize()
        self.synchronized()

    # ------------------------------------------------------------------ memory
    def malloc(self, size: int, kind: str = "device") -> int:
        self.unsafe_call({"device": "cudaMalloc", "managed": "cudaMallocManaged"}.get(kind, "cudaMallocHost"))
        return self.memory.alloc(size, kind)

    def free(self, addr: int, host: bool = False):
        if host:
            self.memory.free(addr, kinds=("host",), call="cudaFreeHost")
            return
        if addr in self.graph_allocations:
            self.graph_memory.freed(addr)   # freed outside its graph: the graph may run (and allocate) again
            return
        pool = self.pool_of.pop(addr, None)
        if pool is not None:
            pool.live.pop(addr, None)
        self.memory.free(addr, kinds=("device", "managed", "pool"), call="cudaFree")

    def copy(self, dst: int, src: int, nbytes: int, kind: int, stream=0, sync: bool = True, rows: int = 1,
             dpitch: int = 0, spitch: int = 0, call: str = "cudaMemcpy", take: bool = False) -> bool:
        """Check a copy and put it on the timeline. True when the caller must not move the bytes: a
        capture took the copy, or it is an asynchronous copy between memory in the arena (device,
        managed, cudaMallocHost) queued behind work in its stream: it moves its bytes when it runs.
        ``take``: such a copy is queued even behind nothing (it runs at once), for a caller that moves
        no bytes (a program's request sent without waiting for its answer)."""
        s = self.stream(stream)
        direction = self.memory.check_copy(dst, src, nbytes, kind, call, rows, dpitch, spitch)
        if s.handle == 0:
            self.legacy_stream_used(call)
        if s.capture is not None and not sync:
            self.capture_node(s, "memcpy", dict(dst=dst, src=src, width=nbytes, height=rows, depth=1,
                                                dpitch=dpitch or nbytes, spitch=spitch or nbytes,
                                                dheight=rows, sheight=rows, kind=kind))
            return True
        host = dst if direction == "D2H" else src
        span = (max(dpitch, spitch) or nbytes) * rows
        # bytes the core can move when the copy's turn comes: the arena's, and page-locked host memory
        # (cudaHostRegister) through the adapter's view of the program's memory
        sides = [self.memory.arena if self.memory.in_arena(a, span) else self.host_memory
                 if self.host_memory is not None and self.pinned_host.holds(a, a + span) else None for a in (dst, src)]
        if not sync and None not in sides and (take or self.follows(s)):
            to, of = sides

            def move():
                for r in range(rows):
                    if to is of and to is self.memory.arena:
                        to.copy_within(dst + r * (dpitch or nbytes), src + r * (spitch or nbytes), nbytes)
                    else:
                        to.write(dst + r * (dpitch or nbytes), of.read(src + r * (spitch or nbytes), nbytes))
                self.transfer(nbytes * rows, direction, s, True, False)
            self.enqueue(s, move)
            return True
        self.finish(self.follows(s))        # the caller moves the bytes now: what they follow runs first
        self.waited_for(sync)
        self.transfer(nbytes * rows, direction, s, self.memory.pinned(host), sync)
        return False

    def waited_for(self, sync: bool):
        """A synchronous copy or memset waited for the kernels before it: the fault of one of them is
        its error, sticky from then on (programs often check only their cudaMemcpy)."""
        if sync and self.fault:
            self.sticky, self.fault = self.fault, None

    def transfer(self, nbytes: int, direction: str, s: Stream, pinned: bool, sync: bool, name: str = ""):
        """A copy whose bytes the caller moves (the Python API's numpy arrays): its row on the timeline."""
        return self.timeline.copy(int(nbytes), direction, s.handle, pinned=pinned, sync=sync, name=name)

    def memset(self, dst: int, nbytes: int, stream=0, sync: bool = True, rows: int = 1, pitch: int = 0,
               value: int = 0, element: int = 1, call: str = "cudaMemset") -> bool:
        s = self.stream(stream)
        self.memory.check(dst, (pitch or nbytes) * (rows - 1) + nbytes * element, call)
        if s.handle == 0:
            self.legacy_stream_used(call)
        if s.capture is not None and not sync:
            self.capture_node(s, "memset", dict(dst=dst, value=value, element=element, width=nbytes, height=rows,
                                                pitch=pitch or nbytes * element))
            return True
        if not sync and element == 1 and self.follows(s):     # queued behind work: it sets the bytes itself
            arena = self.memory.arena

            def fill():
                for r in range(rows):
                    arena.write(dst + r * (pitch or nbytes), np.full(nbytes, value & 0xFF, np.uint8))
                self.timeline.memset(nbytes * rows, s.handle)
            self.enqueue(s, fill)
            return True
        self.finish(self.follows(s))
        self.waited_for(sync)
        self.timeline.memset(nbytes * element * rows, s.handle, sync=sync)
        return False

    def host_function(self, s: Stream, fn, data, name: str = "host function", callback: bool = False) -> bool:
        """cudaLaunchHostFunc / cudaStreamAddCallback (``callback``): True when a capture took it. Otherwise
        it waits in its stream as a kernel does and runs when the stream gets there (``run_host_function``):
        after the work before it, before the work after it, on a thread other than the caller's."""
        if s.capture is not None:
            self.capture_node(s, "host", {"fn": fn, "data": data})
            return True
        if s.handle == 0:
            self.legacy_stream_used("cudaLaunchHostFunc")
        if self.sticky:         # a broken context takes nothing (the call answers its error, as an H200's did)
            raise CudaError("", self.sticky)
        self.enqueue(s, lambda: self.run_host_function(s, fn, data, name, callback), wait=True)
        return False

    def run_host_function(self, s: Stream, fn, data, name: str = "host function", callback: bool = False):
        """A host function's turn in stream ``s`` has come: the adapter's ``call_host`` runs it (a whole
        program's function can only be called in the program) and the stream waits until it returns,
        for as long as its CPU time. Behind a kernel that faulted, an H200 skipped a cudaLaunchHostFunc
        but called a stream callback with the fault as its status (tests/test_programs_async.py)."""
        if self.call_host is None:
            raise CudaError("host functions need a runtime that can call them (a program, or the Python API).",
                            "cudaErrorNotSupported")
        error = self.fault or self.sticky
        if error and not callback:
            return
        us = self.call_host(fn, data, CODE[error] if error else 0)
        self.timeline.host_function(s.handle, name, us)

    def node_timeline(self, node, stream):
        """A graph's memcpy or memset node, on the timeline of the stream the graph runs in."""
        p, tl = node.params, self.timeline
        if node.type == "memcpy":
            direction = self.memory.direction(p["dst"], p["src"], p["kind"], "a graph memcpy node")
            host = p["dst"] if direction == "D2H" else p["src"]
            tl.copy(p["width"] * p["height"] * p["depth"], direction, stream.handle, pinned=self.memory.pinned(host))
        else:
            tl.memset(p["width"] * p["element"] * p["height"], stream.handle)

    # ------------------------------------------------------------------ launches
    def check_launch(self, fn: Function, grid, block, shared: int, cooperative: bool = False, cluster=None):
        """CUDA's checks before a launch, with CUDA 13's codes (bad shapes: cudaErrorInvalidValue);
        returns the grid and block as (x, y, z)."""
        from dataclasses import replace

        from ..launch import check_clusters, check_config
        p = self.profile
        limits = p.limits()
        static = fn.static_shared
        if fn.max_dynamic_shared is not None and static + fn.max_dynamic_shared > limits.shared_per_block:
            limits = replace(limits, shared_per_block=min(p.shared_per_block_optin, static + fn.max_dynamic_shared))
        try:
            grid, block = check_config(fn.name, grid, block, int(shared), static, limits)
        except CudaError as e:
            code = "cudaErrorInvalidValue" if e.code == "cudaErrorInvalidConfiguration" else e.code
            raise LaunchError(e.args[0], code) from None
        bound = fn.program.function(fn.mangled).func.directives.get("maxntid")    # __launch_bounds__
        if bound and block[0] * block[1] * block[2] > int(np.prod(bound)):
            raise LaunchError(f"{fn.name}: its launch bounds allow at most {int(np.prod(bound))} threads per block, but "
                              f"block {block} has {block[0] * block[1] * block[2]}. Launch smaller blocks, or "
                              "raise the bound (__launch_bounds__, numba's launch_bounds=).", "cudaErrorInvalidValue")
        blocks = grid[0] * grid[1] * grid[2]
        if cooperative and blocks > self.occupancy(fn, block[0] * block[1] * block[2], shared) * self.props[
                "multiProcessorCount"]:
            raise CudaError(f"{fn.name}: a cooperative launch needs every block resident at once; {blocks:,} blocks "
                            "are more than the device holds (cudaOccupancyMaxActiveBlocksPerMultiprocessor x SMs).",
                            "cudaErrorCooperativeLaunchTooLarge")
        check_clusters(fn.name, cluster, p)
        return grid, block

    def checked_shape(self, fn: Function, grid, block, shared: int, cooperative: bool = False, cluster=None):
        """``check_launch`` for the Python API (``kernel[grid, block](...)``), which checks clusters in
        the engine: a shape that passed is remembered (``_remembered``), so a loop of launches checks it
        once (30 us a launch)."""
        return self._remembered(fn, ("shape", grid, block, shared, cooperative, cluster),
                                lambda: self.check_launch(fn, grid, block, shared, cooperative, cluster))

    def checked_launch(self, fn: Function, grid, block, shared: int, cooperative: bool = False, cluster=None):
        """``check_launch`` and the engine's cluster checks (__cluster_dims__, whole clusters: the kernel
        runs later, but a GPU refuses a launch of the wrong shape at the call); returns the grid as
        (x, y, z). A shape that passed is remembered (``_remembered``)."""
        def check():
            from ...emulator.cluster import launch_shape
            checked, _ = self.check_launch(fn, grid, block, shared, cooperative, cluster)
            launch_shape(fn.program.function(fn.mangled).func, checked, None if cluster is None or
                         tuple(cluster) == (1, 1, 1) else tuple(cluster), fn.name, bool(fn.attributes.get(14)))
            return checked
        return self._remembered(fn, (grid, block, shared, cooperative, cluster), check)

    def _remembered(self, fn: Function, shape: tuple, check):
        """``check()``'s answer for a launch shape that passed before, kept in ``fn.checked`` keyed by
        the shape and everything else the checks read (the function's attributes; the device and the
        program, compared on the way out), so a loop of launches checks once. A failing shape raises
        every time; a shape given as lists (unhashable) is checked every time."""
        key = (*shape, fn.max_dynamic_shared, fn.registers, fn.attributes.get(14))
        p = self.profile
        try:
            known = fn.checked.get(key)
        except TypeError:
            known, key = None, None
        if known is not None and known[0] is p and known[1] is fn.program:
            return known[2]
        checked = check()
        if key is not None:
            if len(fn.checked) >= 64:
                fn.checked.clear()
            fn.checked[key] = (p, fn.program, checked)
        return checked

    def launch(self, fn: Function, grid, block, shared: int, args: bytes, stream=0, cooperative: bool = False,
               cluster=None, attributes=None):
        """cudaLaunchKernel(Ex): checks the launch and queues the kernel in its stream (``queues``);
        it runs when the host needs it, its record then in ``launches``."""
        s = self.stream(stream)
        grid = self.checked_launch(fn, grid, block, shared, cooperative, cluster)
        if s.handle == 0:
            self.legacy_stream_used(f"the launch of {fn.name}")
        if s.capture is not None:
            self.capture_node(s, "kernel", dict(function=fn, grid=tuple(grid), block=tuple(block), shared=int(shared),
                                                args=bytes(args), cluster=cluster, attributes=dict(attributes or {})))
            return
        self.enqueue(s, lambda: self.run_kernel(fn, grid, block, shared, args, s, cluster=cluster,
                                                attributes=attributes), wait=True,
                     host_bound=self._hands_host_memory(args))

    def _hands_host_memory(self, args: bytes) -> bool:
        """Whether a launch's parameters hold a pointer to page-locked or managed memory (read as 8-byte
        words): the kernel may wait on a flag the host writes there (``queues.settle``)."""
        if self.memory is None:
            return False
        words = (int.from_bytes(args[k:k + 8], "little") for k in range(0, len(args) - 7, 8))
        return any(w and self.memory.pointer_type(w) in (1, 3) for w in words)

    def run_kernel(self, fn: Function, grid, block, shared, args, s: Stream, cluster=None, attributes=None):
        """Run a kernel now. A fault that CUDA reports later (an illegal address, an assert) becomes
        ``self.fault`` and the record is returned with ``error`` set; others raise CudaError. In a
        context such a fault broke, kernels no longer run (None), as on a GPU: their results would be
        garbage, and so would their own errors."""
        if self.fault or self.sticky:
            return None
        engine, runtime_device = _engine_and_device()
        rec = LaunchRecord(fn.name, tuple(grid), tuple(block), int(shared), "emu", arguments=hash(bytes(args)),
                           static_shared=fn.static_shared)
        rec.error = None
        observers = list(self.observers(fn.program, fn.name))
        fn.program.graph_conditionals = self.conditional_values
        extra = {"cluster": tuple(cluster)} if cluster is not None and tuple(cluster) != (1, 1, 1) else {}
        extra["non_portable_cluster"] = bool(fn.attributes.get(14))   # cudaFuncAttributeNonPortableClusterSizeAllowed
        self.bind(fn.program)
        # a program given more time (--timeout) gives its kernels that time too
        watchdog = max(runtime_device.WATCHDOG_SECONDS, self.time_limit or 0)      # (cudalab.set_watchdog sets it)
        t0 = time.perf_counter()
        bar = Bar(fn.name)
        try:
            stats = engine.launch(fn.program, fn.mangled, tuple(grid), tuple(block), int(shared), bytes(args),
                                  timeout=watchdog, kernel_name=fn.name, observers=observers, progress=bar,
                                  wall_deadline=self.deadline if self.deadline is not None else float("inf"), **extra)
        except KernelError as e:
            rec.findings.extend(e.findings)
            rec.printed = list(getattr(e, "printed", []))
            rec.wall_time, rec.cpu_time = time.perf_counter() - t0, getattr(e, "cpu_seconds", 0.0)
            self.launches.append(rec)
            message = e.args[0]
            if e.code == "cudaErrorLaunchTimeout" and self.deadline is not None and time.monotonic() >= self.deadline:
                message = self.stopped = self.time_limit_message(fn.name, message, getattr(e, "progress", None))
            if e.code not in STICKY:
                err = CudaError(message, e.code if e.code in CODE else "cudaErrorLaunchFailure")
                err.record = rec
                raise err from None
            # like the GPU, the launch itself succeeds; the error shows at the next synchronization
            self.fault, rec.error = e.code, message
            return rec
        except CudaError as e:
            raise CudaError(e.args[0], e.code if e.code in CODE else "cudaErrorNotSupported") from None
        finally:
            bar.close()
        # (CPU time as the engine's own clock reads saw it: two system calls less a launch, launch19)
        rec.wall_time, rec.cpu_time = time.perf_counter() - t0, stats.cpu_seconds
        rec.counted(stats, observers)
        rec.mapped_bytes_per_instruction = self.mapped_traffic(fn, args)
        self.after_launch(rec, observers)
        self.launches.append(rec)
        self.kernel_ran(rec, s, attributes)
        return rec

    def mapped_traffic(self, fn: Function, args: bytes) -> tuple:
        """(load, store) bytes per instruction of the kernel's hot code that go through pointer arguments
        to mapped host memory (cudaHostAlloc/cudaMallocHost: zero-copy), which cross the host link on a
        GPU (``ptx/mix.access_sources``; the timeline charges them at the link's rate)."""
        f = fn.program.module.functions.get(fn.mangled)
        if f is None or self.memory is None:
            return 0.0, 0.0
        # the same arguments while no allocation was made or freed (the arena's bounds are new arrays
        # after each): the same answer, for a kernel launched in a loop, or on each of 306 streams' chunks
        # in turn (NCI's axpy_overlapped), up to MAPPED_KEPT argument lists
        bounds = self.memory.arena.bounds()
        if fn.mapped is None or fn.mapped[0] is not bounds or len(fn.mapped[1]) >= MAPPED_KEPT:
            fn.mapped = (bounds, {})
        known = fn.mapped[1]
        args = bytes(args)
        answer = known.get(args)
        if answer is None:
            answer = known[args] = self._mapped_traffic(f, args)
        return answer

    def _mapped_traffic(self, f, args: bytes) -> tuple:
        mapped, offset = set(), 0
        for p in f.params:
            offset = -(-offset // p.align) * p.align
            if p.size == 8 and self.memory.kind_at(int.from_bytes(bytes(args[offset:offset + 8]), "little")) == "host":
                mapped.add(p.name)
            offset += p.size
        if not mapped:
            return 0.0, 0.0
        from ...ptx.mix import access_sources
        through = [v for names, v in access_sources(f).items() if names & mapped]
        return sum(v[0] for v in through), sum(v[1] for v in through)

    def kernel_ran(self, rec, s: Stream, attributes=None):
        """A kernel ran (here or on a GPU): its row on the timeline, timed by the device model (or as
        measured), with the launch's and the stream's attributes (priority, access policy window)."""
        t = kernel_timing(rec, self.profile)
        pdl = rec.reports.get("pdl", {})
        programmatic = str((attributes or {}).get("programmatic_stream_serialization", 0)) not in ("0", "False")
        row = self.timeline.kernel(rec.kernel, t.us, stream=s.handle, programmatic=programmatic,
                                   triggers_at=pdl.get("trigger_fraction"), waits_at=pdl.get("wait_fraction"),
                                   blocks=t.blocks, per_sm=t.per_sm, share=t.share)
        row["model"], row["limiter"] = t.how, t.limiter
        shown = {**{STREAM_ATTRIBUTES.get(k, k): v for k, v in s.attributes.items()}, **(attributes or {})}
        if shown:
            row["attributes"] = shown
        return row

    def limit_words(self) -> str:
        """The limit that stopped the program, as its messages name it."""
        if self.cpu_limit is not None:
            return f"CPU-time limit (ulimit -t, {self.cpu_limit:g} s)"
        return f"time limit ({self.time_limit:g} s)"

    def time_limit_message(self, kernel: str, detail: str, progress=None) -> str:
        """The watchdog's account of where the kernel was and how far it got (``progress``, the
        engine's pace.Progress), told as the program's time limit running out."""
        where = re.search(r"(?:\d+ threads were still running, e\.g\. .*?|It was stopped) at (?:line \d+(?: of \S+)?|an unknown line)\.",
                          detail)
        where = f" {where.group(0)}" if where else ""
        from ...emulator.engine import ENDLESS_LOOP
        if ENDLESS_LOOP in detail:          # a loop that can never end says so under a CPU limit too
            where += ENDLESS_LOOP
        elif where and "Does a loop there ever end?" in detail:     # no block ended, and no count of its
            where += " Does a loop there ever end?"                  # loops: the watchdog's question too
        how_far = f" {progress.describe()} {progress.describe_estimate()}".rstrip() if progress is not None else ""
        return (f"The program's {self.limit_words()} ran out while kernel {kernel} was running, so "
                f"the kernel was stopped, and then the program.{how_far}{where}")

    # ------------------------------------------------------------------ functions and occupancy
    def max_dynamic_shared(self, fn: Function) -> int:
        if fn.max_dynamic_shared is not None:
            return fn.max_dynamic_shared
        return max(self.profile.shared_per_block - fn.static_shared, 0)

    def func_attributes(self, fn: Function) -> dict:
        from ...emulator.engine import stack_size
        p = self.profile
        cc = p.cc[0] * 10 + p.cc[1]
        # ptxVersion is the architecture the PTX was built for (-arch=sm_75: 75), which a GPU's driver
        # compiles for itself (binaryVersion): CUB (Thrust) picks its tuning by it and stops with
        # cudaErrorInvalidDeviceFunction unless it is one the program was built for
        target = re.match(r"sm_(\d+)", getattr(fn.program.module, "target", "") or "")
        return {"sharedSizeBytes": fn.static_shared, "constSizeBytes": 0,
                "localSizeBytes": stack_size(fn.program, fn.program.function(fn.mangled)),
                "maxThreadsPerBlock": p.max_threads_per_block, "numRegs": fn.registers,
                "ptxVersion": int(target.group(1)) if target else cc, "binaryVersion": cc,
                "maxDynamicSharedSizeBytes": self.max_dynamic_shared(fn), "preferredShmemCarveout": fn.carveout}

    def func_set_attribute(self, fn: Function, attr: int, value: int):
        if attr == 8:                   # cudaFuncAttributeMaxDynamicSharedMemorySize
            most = self.profile.shared_per_block_optin - fn.static_shared
            if not 0 <= value <= most:
                raise CudaError(f"{fn.name} may use at most {most:,} bytes of dynamic shared memory on this device; "
                                f"{value:,} were asked for.", "cudaErrorInvalidValue")
            fn.max_dynamic_shared = value
        elif attr == 9:                 # cudaFuncAttributePreferredSharedMemoryCarveout
            if not -1 <= value <= 100:
                raise CudaError(f"the shared memory carveout is a percentage (0 to 100, or -1 for no preference), "
                                f"not {value}.", "cudaErrorInvalidValue")
            fn.carveout = value
        elif 10 <= attr <= 16:
            fn.attributes[attr] = value
        else:
            raise CudaError(f"{attr} is not a cudaFuncAttribute that can be set.", "cudaErrorInvalidValue")

    def occupancy(self, fn: Function, block_size: int, dynamic: int) -> int:
        """cudaOccupancyMaxActiveBlocksPerMultiprocessor, by the device model's calculator (cudalab.occupancy)."""
        from ...device.occupancy import occupancy
        from ...device.resources import Resources
        if block_size <= 0:
            raise CudaError(f"the block size must be positive, not {block_size}.", "cudaErrorInvalidValue")
        return occupancy(Resources(fn.registers, fn.static_shared, 0), block_size, int(dynamic), device=self.profile,
                         max_dynamic_smem=self.max_dynamic_shared(fn), curve=False).active_blocks

    def max_active_clusters(self, fn: Function, block_size: int, cluster, dynamic: int) -> int:
        """cudaOccupancyMaxActiveClusters: clusters of ``cluster`` blocks resident at once (the
        launch configuration's cluster dimension, else the kernel's ``__cluster_dims__``)."""
        from ...device.clusters import max_active_clusters
        from ...device.resources import Resources
        if 0 in tuple(cluster):
            compiled = fn.program.module.functions[fn.mangled].directives.get("reqnctapercluster")
            if compiled is None:
                raise CudaError(f"{fn.name}: cudaOccupancyMaxActiveClusters needs a cluster size: set "
                                "cudaLaunchAttributeClusterDimension in the launch configuration, or compile the "
                                "kernel with __cluster_dims__.", "cudaErrorInvalidClusterSize")
            cluster = tuple(compiled) + (1,) * (3 - len(compiled))
        if block_size <= 0:
            raise CudaError(f"the block size must be positive, not {block_size}.", "cudaErrorInvalidValue")
        occ = max_active_clusters(Resources(fn.registers, fn.static_shared, 0), block_size, tuple(cluster), dynamic,
                                  device=self.profile, non_portable=bool(fn.attributes.get(14)),
                                  max_dynamic_smem=fn.max_dynamic_shared)
        return occ.max_active_clusters

    def max_potential_cluster_size(self, fn: Function) -> int:
        from ...device.clusters import max_potential_cluster_size
        return max_potential_cluster_size(device=self.profile, non_portable=bool(fn.attributes.get(14)))

    def available_dynamic_shared(self, fn: Function, blocks: int, block_size: int) -> int:
        """cudaOccupancyAvailableDynamicSMemPerBlock: the most dynamic shared memory per block that
        still lets ``blocks`` blocks of ``block_size`` threads reside on one SM."""
        p = self.profile
        if blocks <= 0 or block_size <= 0 or self.occupancy(fn, block_size, 0) < blocks:
            raise CudaError(f"{blocks} blocks of {block_size} threads of {fn.name} cannot be resident on one SM at "
                            "once, whatever their shared memory.", "cudaErrorInvalidValue")
        unit = p.shared_allocation_unit
        per_block = p.shared_per_sm // blocks // unit * unit - p.shared_reserved_per_block - fn.static_shared
        return max(0, min(per_block, self.max_dynamic_shared(fn)))

    # ------------------------------------------------------------------ limits and configuration
    def get_limit(self, limit: int) -> int:
        if limit not in range(len(LIMIT_NAMES)):
            raise CudaError(f"{limit} is not a cudaLimit.", "cudaErrorInvalidValue")
        if limit not in self.limits:
            raise CudaError(f"{LIMIT_NAMES[limit]} does not exist on {self.profile.arch} (device-side "
                            "cudaDeviceSynchronize was removed there).", "cudaErrorUnsupportedLimit")
        return self.limits[limit]

    def set_limit(self, limit: int, value: int):
        self.get_limit(limit)
        if limit == 6:                  # persisting L2: at most the device's maximum, kept in L2/16 units
            most = self.props["persistingL2CacheMaxSize"]
            if value > most:
                raise CudaError(f"cudaLimitPersistingL2CacheSize may be at most {most:,} bytes on this device "
                                f"(cudaDevAttrMaxPersistingL2CacheSize); {value:,} were asked for.",
                                "cudaErrorInvalidValue")
            unit = persisting_l2_unit(self.props)
            value = min(-(-value // unit) * unit, most)
        self.limits[limit] = int(value)

    def set_cache_config(self, config: int):
        if config not in (0, 1, 2, 3):
            raise CudaError(f"{config} is not a cudaFuncCache (PreferNone, PreferShared, PreferL1, PreferEqual).",
                            "cudaErrorInvalidValue")
        self.cache_config = config

    # ------------------------------------------------------------------ memory pools
    def mem_pool(self, handle) -> MemPool:
        pool = self.pools.get(int(handle or 0))
        if pool is None:
            raise CudaError(f"0x{int(handle or 0):x} is not a memory pool (cudaMemPoolCreate makes one).",
                            "cudaErrorInvalidValue")
        return pool

    def pool_create(self, alloc_type: int, location_type: int, location_id: int, handle_types: int = 0) -> MemPool:
        if alloc_type != 1 or location_type != 1:
            raise CudaError("the emulated GPU makes pinned pools on the device (cudaMemAllocationTypePinned, "
                            "cudaMemLocationTypeDevice) only.", "cudaErrorNotSupported"
                            if location_type in (2, 3, 4) else "cudaErrorInvalidValue")
        if location_id != 0:
            raise CudaError(f"device {location_id} does not exist: the emulator is one GPU, device 0.",
                            "cudaErrorInvalidValue")
        if handle_types:
            raise CudaError("memory pools that can be shared with other processes (IPC handle types) are not "
                            "supported by the emulated GPU.", "cudaErrorNotSupported")
        pool = MemPool(self.new_handle())
        self.pools[pool.handle] = pool
        return pool

    def pool_access(self, pool: MemPool, device: int, flags: int | None = None) -> int:
        """cudaMemPoolSetAccess (``flags``) / cudaMemPoolGetAccess: only device 0 exists to give access to."""
        self.check_device(device, "peer access to a pool" if flags is not None else "")
        if flags is not None:
            pool.access = int(flags)
        return pool.access

    def pool_destroy(self, pool: MemPool):
        if pool is self.default_pool:
            raise CudaError("the device's default memory pool cannot be destroyed.", "cudaErrorInvalidValue")
        pool.destroy(self.memory)
        for addr in [a for a, p in self.pool_of.items() if p is pool]:
            del self.pool_of[addr]
        del self.pools[pool.handle]
        if self.current_pool is pool:
            self.current_pool = self.default_pool

    def malloc_async(self, size: int, stream, pool: MemPool | None = None) -> int:
        s = self.stream(stream)
        pool = pool or self.current_pool
        if size == 0:
            return 0
        self.finish(self.follows(s))
        if s.capture is not None:
            params = self.node_params("mem_alloc", {"size": size, "pool": pool.handle})
            self.capture_node(s, "mem_alloc", params)
            return params["address"]
        tl = self.timeline
        addr = pool.allocate(self.memory, size, s, tl.host_time, tl.stream_end)
        self.pool_of[addr] = pool
        return addr

    def free_async(self, addr: int, stream):
        s = self.stream(stream)
        if addr == 0:
            return
        self.finish(self.follows(s))
        if s.capture is not None:
            self.capture_node(s, "mem_free", {"address": addr})
            return
        pool = self.pool_of.pop(addr, None)
        if pool is not None:
            pool.release(addr, s, self.timeline.stream_end(s.handle))
        elif self.memory.kinds.get(addr) in ("device", "managed"):
            self.memory.free(addr, call="cudaFreeAsync")
        elif addr in self.graph_allocations:
            self.graph_memory.freed(addr)
        else:
            raise CudaError(f"cudaFreeAsync(0x{addr:x}): that is not the start of memory from cudaMallocAsync or "
                            "cudaMalloc.", "cudaErrorInvalidValue")

    def release_graph_allocation(self, addr: int):
        self.graph_allocations[addr] -= 1
        if self.graph_allocations[addr] <= 0:
            del self.graph_allocations[addr]
            self.memory.free(addr, kinds=("graph",), call="cudaGraphDestroy")

    # ------------------------------------------------------------------ reset
    def device_reset(self, keep=()):
        """cudaDeviceReset: every allocation but ``keep`` (the program's globals) is freed, and every
        stream, event, graph and pool is gone. A context that a kernel broke (a sticky error) is not
        repaired: the reset succeeds, and every later call answers cudaErrorDevicesUnavailable, as on an
        H100 (tests/runtime_api/sticky.cu): the process has to end and start again."""
        broken = self.sticky or self.fault
        if self.memory is not None:
            for addr, kind in list(self.memory.kinds.items()):
                if addr not in keep and not self.memory.arena.allocs[addr].freed:
                    self.memory.arena.free(addr)
                    del self.memory.kinds[addr]
        arena, profile, observers, after = (self.memory.arena if self.memory else None), self._profile, \
            self.observers, self.after_launch
        launches, deadline, limit, host_memory = self.launches, self.deadline, (self.time_limit, self.cpu_limit), \
            self.host_memory
        handles, gone = self._handles, self.before_reset | set(self.events)
        self.__init__(None, profile, None)
        self._handles, self.before_reset = handles, gone       # (an old handle never names a new event)
        if arena is not None:
            self.memory = Memory(arena, self.pinned_host)
            self.memory.kinds = {a: "managed" for a in keep}
        self.observers, self.after_launch, self.launches = observers, after, launches
        self.host_memory = host_memory
        self.deadline, (self.time_limit, self.cpu_limit) = deadline, limit
        if broken:
            self.sticky = "cudaErrorDevicesUnavailable"
            self.sticky_news = (f"cudaDeviceReset cannot repair a context that a kernel broke ({broken}): as on a "
                                "GPU, every call after it answers cudaErrorDevicesUnavailable. A program has to end "
                                "and start again after such an error.")
