"""A simulated timeline of streams on one device: copies on copy engines, kernels on the SMs, events,
host synchronization; as plain rows, with a Gantt chart to draw them.

The rules are the CUDA Programming Guide's ("Asynchronous concurrent execution"):

* Work in one stream runs in issue order; work in different streams may overlap.
* The legacy default stream (stream 0) waits for all earlier work of every stream, and all later
  work waits for it.
* A copy from or to **pageable** host memory is synchronous: the host waits until it is done, and
  it goes at about half the pinned rate (the driver stages it through a pinned buffer). A copy
  from **pinned** memory (``cudaMallocHost``) with ``cudaMemcpyAsync`` returns at once.
* Host-to-device and device-to-host copies run on separate copy engines, so they overlap each
  other and kernels, when the device has two or more copy engines (a single engine serializes them).
* Streams created with ``cudaStreamNonBlocking`` do not wait for the legacy default stream, nor
  does it wait for them.
* ``cudaEventRecord`` marks a point in a stream; ``cudaStreamWaitEvent`` makes another stream wait
  for it; ``cudaDeviceSynchronize`` / ``cudaStreamSynchronize`` block the host.
* A host function (``cudaLaunchHostFunc``) runs when its stream reaches it, on a driver thread: it
  holds up its stream, not the host.
* A kernel launched with programmatic stream serialization (sm_90's programmatic dependent launch)
  may start once every block of the kernel before it has run ``griddepcontrol.launch_dependents``;
  its part after ``griddepcontrol.wait`` waits for that kernel's end.
* **Kernels of different streams run side by side** when the device has room (Programming Guide,
  "Concurrent Kernel Execution"), as the block scheduler shares it (``place_blocks``): a kernel's
  blocks take the SMs' block slots (the occupancy calculator's blocks per SM times the SMs) and a
  share of the SMs' throughput (``timing.Estimate.device_share``: the pipe that limits it, on the
  SMs it uses), in waves of a block's time (the kernel's time over its waves). Earlier kernels come
  first: a kernel's blocks take the room the kernels issued before it leave, so another stream's
  kernel starts as the first one's last wave drains; at most ``max_resident_grids`` kernels (128 on
  sm_90) run at once. Streams reach the device through ``CUDA_DEVICE_MAX_CONNECTIONS`` hardware
  queues (8 unless set; streams take them in turn), each handing over its work in order: a kernel
  waiting for its stream holds up the streams that share its queue (16 or 32 streams of two
  dependent kernels each, issued stream by stream, run in 3 or 5 kernels' time, all streams' first
  kernels first in 2). A kernel launched on another stream than the kernel before it starts
  ``KERNEL_GAP_US`` after that one's launch at the earliest (the launches' own pace). An H100 agreed
  (``tools/overlap_gpu_probe.cu``, tests/test_timeline_overlap.py): 8 streams of kernels that each
  fill 1/8 of the block slots ran 6.8x faster than one stream, of half the slots 2.0x, of all or
  two waves 1.0x, a grid of 1.5 waves then one of half a wave 1.5x, and the queues' cases as said.
  A kernel launched without a shape (a library call) takes the whole device; a memset over 1 KiB is
  work for the SMs that needs SMs no other kernel's blocks are on, a smaller one none (``memset``, as an
  H100 showed: tools/memset_gpu_probe.cu). A
  latency-bound kernel (a dependent chain with few warps per scheduler: ``timing.py``'s latency part)
  keeps only its busiest pipe's share of its time busy, so kernels of other streams fill its waits: an
  H100's four streams of such chains ran 1.4x to 3.9x faster than one stream, the timeline says within
  35% of each (``tools/latency_gpu_probe.cu``, tests/test_timing_latency.py).
* A kernel that **waits on its clock** (``while (clock64() - t0 < n)``, or ``%globaltimer``) lasts at
  least as long as its clock reads said it waited (``kernel_timing``; the emulator measures the wait,
  ``LaunchRecord.clock_wait_us``), once per wave, and its wait keeps none of the SMs' pipes busy.
  The emulator's clock counts a waiting loop's turns in the CPU time of the thread running the kernel
  (``Exec.cycles``), so a pause of a loaded machine is not a wait (on the host's clock, as before clock round 19, NVIDIA's
  simpleHyperQ at a load of 25 on 2 cores showed 10 ms waits as 10 to 37 ms).

Simplifications: each copy engine takes work in issue order; a kernel launch and an event cost the
host nothing (a whole program's own host code between two calls moves the host's clock by its CPU
time, which the shim measures), though the host sees an event done a few microseconds after its time
stamp (``record_event``); a copy costs a fixed latency plus bytes over the host link's bandwidth, a
device-to-device copy bytes over half the DRAM bandwidth (each byte is read and written), a memset over
all of it;
kernels side by side keep the speed each would have alone, the later one waiting for the room the
earlier ones leave, or, where the block slots have room but the throughput left is short, starting at
once and running slower in what is left when that ends sooner (a GPU slows all of them a little; four
streams of a DRAM chase that together asked for 101% of the bandwidth ran 3.9x faster than one on an
H100, the timeline says 3.76x, 2x before the slower start). Times are microseconds.

This one model serves the Python host API (``cudalab.timeline()``) and whole programs (the times
their events measure), through the runtime core (``cudalab.runtime.core``).
"""
from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, replace
from functools import lru_cache

from . import current
from .occupancy import occupancy
from .profiles import get
from .timing import LAUNCH_OVERHEAD_US, estimate

COPY_LATENCY_US = 2.0
PAGEABLE_FRACTION = 0.5       # pageable copies go through a staging buffer: about half the pinned rate
HOST_COPY_GBS = 10.0          # memcpy between two host buffers
HOST_FUNCTION_US = 2.0        # a host function's hand-off to and from the driver thread
KERNEL_GAP_US = 4.5          # a kernel of another stream starts this long after the launch before it at the
#                              earliest (an H100: 8 to 160 streams' kernels started 4.2 to 4.9 us apart)
MEMSET_BLOCK_BYTES = 4096    # a memset's work in pieces of this many bytes (at most 8 an SM: MEMSET_WAVES)...
MEMSET_WAVES = 8             # ... each piece taking a whole SM while it runs (memset(): an H100's memsets waited
#                              for an SM with no other kernel's blocks, tools/memset_gpu_probe_h100.txt)
MEMSET_OFF_SM_BYTES = 1024   # a memset this small does not need the SMs (an H100's 1 KiB ran beside a full device)
EVENT_SEEN_US = 4.0           # how long after its moment the host can see that an event happened (H200: 3 to 5 us)
KINDS_COLORS = {"H2D": "#4C72B0", "D2H": "#55A868", "D2D": "#64B5CD", "memset": "#64B5CD", "H2H": "#CCB974",
                "kernel": "#C44E52", "event": "#8172B2", "sync": "#999999", "host": "#CCB974",
                "host function": "#DD8452"}


class Timeline:
    """Issue work as a host program would; ``rows()`` says when each piece ran."""

    def __init__(self, device=None):
        self.profile = get(device) if device is not None else current()
        self.host_time = 0.0
        self._rows: list = []
        self._stream_end: dict = {}          # stream -> when its last work ends
        self._engine_end: dict = {}          # engine -> when it is free
        self._events: dict = {}              # event name -> time
        self._default_end = 0.0              # end of the last default-stream work
        self._non_blocking: set = set()      # streams created with cudaStreamNonBlocking
        self._priority: dict = {}            # stream -> priority (shown on its rows)
        self._last: dict = {}                # stream -> its last row (a kernel's dependents may overlap it)
        self._seen: dict = {}                # stream -> when the host can see its event records so far happened
        self._busy: list = []                # [start, end, slots, share, kernel, its blocks per SM] groups on the SMs,
        self._busy_ends: list = []           # ... in the order of their ends (these)
        self._kernels = 0                    # kernels placed, to tell their groups apart
        self._launched = None                # (stream, moment) of the kernel launched last
        self.max_connections = max(1, min(32, int(os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") or 8)))
        self._connections: dict = {}         # stream -> its hardware queue (round robin, as streams are made)
        self._streams_made = 0
        self._queue_start: dict = {}         # hardware queue -> when the last work it took started

    def stream(self, stream, non_blocking: bool = False, priority: int = 0):
        """Declare a stream's flags: a non-blocking stream neither waits for nor holds up stream 0."""
        self._connection(stream)
        if non_blocking:
            self._non_blocking.add(stream)
        else:
            self._non_blocking.discard(stream)
        self._priority[stream] = priority

    def _connection(self, stream):
        """The hardware work queue a stream's work goes through: streams take the device's
        ``max_connections`` queues in turn as they are made (CUDA_DEVICE_MAX_CONNECTIONS, 8 unless set),
        so the 9th stream shares the 1st one's; the legacy stream has its own."""
        c = self._connections.get(stream)
        if c is None:
            c = -1 if stream == 0 else self._streams_made % self.max_connections
            self._streams_made += stream != 0
            self._connections[stream] = c
        return c

    # ---------------------------------------------------------------- issuing work
    def _engine(self, kind):
        if kind in ("kernel", "D2D", "memset"):
            return "SMs"
        if kind == "host function":
            return "host functions"
        engines = self.profile.sized().copy_engines
        return f"copy engine {'H2D' if kind == 'H2D' else 'D2H'}" if engines >= 2 else "copy engine"

    def _ready(self, stream):
        """Earliest start of the next work in ``stream`` (stream order and default-stream rules)."""
        if stream == 0:
            return max([self.host_time, self._default_end,
                        *(t for s, t in self._stream_end.items() if s not in self._non_blocking)])
        legacy = 0.0 if stream in self._non_blocking else self._default_end
        return max(self.host_time, self._stream_end.get(stream, 0.0), legacy)

    def _add(self, stream, kind, name, duration):
        engine = self._engine(kind)
        if engine == "SMs":             # a memset, a device-to-device copy: the whole device
            return self._on_sms(stream, kind, name, duration, 1, 1, 1.0)
        start = max(self._ready(stream), self._engine_end.get(engine, 0.0))
        return self._place(stream, engine, kind, name, start, start + duration)

    def _on_sms(self, stream, kind, name, duration, blocks, slots, share, whole_sms=False):
        """Work on the SMs: ``blocks`` blocks, ``slots`` of them at once on the whole device, together
        keeping ``share`` of its throughput busy, in waves of ``duration`` over its waves (place_blocks).
        It starts after the work before it in its hardware queue has started (a queue hands the device
        its work in order: a kernel waiting for its stream holds up the streams that share its queue),
        and a kernel launched on another stream than the kernel before it KERNEL_GAP_US after that one.
        ``whole_sms``: each block needs an SM that no other kernel's blocks are on (a memset's): what the
        earlier groups hold counts as the SMs they reach (their slots times their blocks per SM)."""
        waves = -(-blocks // slots)
        self._kernels += 1
        queue = self._connection(stream)
        first = max(self._ready(stream), self._queue_start.get(queue, 0.0))
        if kind == "kernel":
            moment = self.host_time
            if self._launched is not None and self._launched[0] != stream:
                moment = max(moment, self._launched[1] + KERNEL_GAP_US)
            elif self._launched is not None:
                moment = max(moment, self._launched[1])
            self._launched = (stream, moment)
            first = max(first, moment)
        # only groups that end after ``first`` can be in the way (the list is in the order of their ends)
        busy = self._busy[bisect.bisect_right(self._busy_ends, first):]
        if whole_sms:
            busy = [[g[0], g[1], min(1.0, g[2] * g[5]), *g[3:5]] for g in busy]
        groups = place_blocks(busy, first, blocks, slots, duration / waves, share, self.profile.max_resident_grids,
                              self._kernels)
        per_block = share / min(blocks, slots)
        per_sm = slots / (self.profile.sized().sms or 1)
        for g in groups:
            self._hold([g[0], g[1], g[2] / slots, g[3] if len(g) > 3 else g[2] * per_block, self._kernels, per_sm])
        self._queue_start[queue] = groups[0][0]
        row = self._place(stream, "SMs", kind, name, groups[0][0],
                          groups[0][1] if len(groups) == 1 else max(g[1] for g in groups))
        if blocks > 1:
            row["blocks"], row["waves"] = blocks, [list(g) for g in groups]
        return row

    def _hold(self, group):
        """Keep a group of blocks on the SMs, in the order of ends; those that ended before the host's
        present moment are let go (no work issued from now on can start before it)."""
        i = bisect.bisect_right(self._busy_ends, group[1])
        self._busy.insert(i, group)
        self._busy_ends.insert(i, group[1])
        gone = bisect.bisect_right(self._busy_ends, self.host_time)
        if gone:
            del self._busy[:gone], self._busy_ends[:gone]

    def _place(self, stream, engine, kind, name, start, end):
        self._engine_end[engine] = max(self._engine_end.get(engine, 0.0), end)
        self._stream_end[stream] = end
        if stream == 0:
            self._default_end = end
        row = {"stream": stream, "engine": engine, "kind": kind, "name": name, "start": start, "end": end}
        if self._priority.get(stream):
            row["priority"] = self._priority[stream]
        self._rows.append(row)
        self._last[stream] = row
        return row

    def _device_rate(self):
        """Bytes per microsecond of a device-side copy: half the DRAM bandwidth (read and write)."""
        return self.profile.sized().memory_bandwidth_gbs * 1e3 / 2

    def copy(self, nbytes: int, direction: str = "H2D", stream=0, pinned: bool = False, name: str = "",
             sync: bool = False):
        """cudaMemcpy (pageable) or cudaMemcpyAsync from pinned memory (``pinned=True``); "D2D" and
        "H2H" copies too. ``sync``: the host waits for the copy (cudaMemcpy, not ...Async)."""
        if direction not in ("H2D", "D2H", "D2D", "H2H"):
            raise ValueError("direction is 'H2D' (host to device), 'D2H' (device to host), 'D2D' or 'H2H'")
        label = name or f"{direction} {nbytes:,} B"
        if direction == "H2H":
            row = self.host(COPY_LATENCY_US + nbytes / (HOST_COPY_GBS * 1e3), label)
            row["kind"], row["bytes"] = "H2H", nbytes
            return row
        if direction == "D2D":
            row = self._add(stream, "D2D", label, COPY_LATENCY_US + nbytes / self._device_rate())
        else:
            gbs = self.profile.sized().host_link_gbs
            rate = gbs * 1e3 * (1.0 if pinned else PAGEABLE_FRACTION)      # bytes per microsecond
            row = self._add(stream, direction, label, COPY_LATENCY_US + nbytes / rate)
        row["bytes"], row["pinned"] = nbytes, pinned or direction == "D2D"
        if sync or not row["pinned"]:        # the host waits for a pageable copy
            self.host_time = max(self.host_time, row["end"])
        return row

    def memset(self, nbytes: int, stream=0, name: str = "", sync: bool = False):
        """cudaMemset(Async): bytes written at the DRAM bandwidth (a memset only writes: an H100 wrote
        256 MiB at 3.1 TB/s of its 3.35). Over MEMSET_OFF_SM_BYTES it is work for the SMs in pieces of
        ``MEMSET_BLOCK_BYTES`` (at most ``MEMSET_WAVES`` an SM), each needing an SM that no other kernel's
        blocks are on; one that small needs no SM. An H100 (tools/memset_gpu_probe_h100.txt) ran a 1 KiB
        memset at once beside a kernel holding every thread of every SM, while 64 KiB to 256 MiB waited for
        that kernel, or for one holding 7/8 of them, and got little beside one holding half of them on every
        SM (64 KiB to 1 MiB ended 30 to 40 us late, 16 MiB and more as that kernel ended)."""
        duration = COPY_LATENCY_US + nbytes / (self.profile.sized().memory_bandwidth_gbs * 1e3)
        label = name or f"memset {nbytes:,} B"
        if nbytes <= MEMSET_OFF_SM_BYTES:
            queue = self._connection(stream)
            start = max(self._ready(stream), self._queue_start.get(queue, 0.0))
            self._queue_start[queue] = start
            row = self._place(stream, "SMs", "memset", label, start, start + duration)
        else:
            sms = self.profile.sized().sms or 1
            pieces = min(MEMSET_WAVES * sms, -(-nbytes // MEMSET_BLOCK_BYTES))
            row = self._on_sms(stream, "memset", label, duration, pieces, sms, min(1.0, pieces / sms), whole_sms=True)
        row["bytes"] = nbytes
        if sync:
            self.host_time = max(self.host_time, row["end"])
        return row

    def kernel(self, name: str, duration_us, stream=0, programmatic: bool = False, triggers_at=None,
               waits_at=None, blocks: int | None = None, per_sm: int = 1, share: float = 1.0):
        """A kernel launch; ``duration_us`` is a number or a timing.Estimate.

        Its shape, for kernels of other streams that may run beside it: ``blocks`` in its grid, ``per_sm``
        of them on one SM at once (the occupancy calculator's), keeping ``share`` of the device's
        throughput busy while all run (``timing.Estimate.device_share``); without ``blocks`` it takes
        the whole device, as kernels did before concurrent kernels were modelled.

        Programmatic dependent launch (sm_90; Programming Guide, "Programmatic Dependent Launch and
        Synchronization"): ``triggers_at`` is the share of this kernel's time by which every block has
        run griddepcontrol.launch_dependents (cudaTriggerProgrammaticLaunchCompletion). The next kernel
        of the stream, launched with ``programmatic=True`` (cudaLaunchAttributeProgrammaticStreamSerialization),
        may start then and overlap it; the part of it after griddepcontrol.wait (cudaGridDependencySynchronize,
        at ``waits_at`` of its own time) waits until the kernel before it has ended."""
        us = float(getattr(duration_us, "time_us", duration_us))
        before = self._last.get(stream)
        if programmatic and before is not None and before.get("trigger") is not None:
            row = self._dependent(stream, name, us, before, waits_at)
        elif blocks is None:
            row = self._add(stream, "kernel", name, us)
        else:
            slots = max(1, per_sm) * (self.profile.sized().sms or 1)
            row = self._on_sms(stream, "kernel", name, us, max(1, int(blocks)), slots, min(1.0, max(0.0, share)))
        if triggers_at is not None:
            row["trigger"] = row["start"] + triggers_at * (row["end"] - row["start"])
        return row

    def _dependent(self, stream, name, us, before, waits_at):
        """A kernel that starts when the kernel before it in ``stream`` triggered (see kernel())."""
        self._stream_end[stream] = before["trigger"]
        start = max(self._ready(stream), before["start"])
        if waits_at is None:             # no griddepcontrol.wait: nothing of it waits for the kernel before
            end, waiting = start + us, None
        else:
            wait = start + waits_at * us
            end = max(wait, before["end"]) + (1 - waits_at) * us
            waiting = [wait, before["end"]] if before["end"] > wait else None
        row = self._place(stream, "SMs", "kernel", name, start, end)
        row["pdl"] = {"after": before["name"], "trigger": before["trigger"], "waiting": waiting}
        self._kernels += 1                      # it holds the device until it ends, beside the kernel before
        self._hold([start, end, 1.0, 1.0, self._kernels, 1.0])
        self._queue_start[self._connection(stream)] = start
        return row

    def host_function(self, stream=0, name: str = "host function", us: float = 0.0):
        """cudaLaunchHostFunc: runs when the stream reaches it, on a driver thread (not the host's),
        for ``us`` microseconds (the function's own CPU time) plus the hand-off."""
        return self._add(stream, "host function", name, HOST_FUNCTION_US + us)

    def record_event(self, name: str, stream=0):
        """cudaEventRecord: the event completes when the stream's earlier work has (``start``, its time
        stamp). The host sees it a little later (``seen``: what cudaEventQuery and cudaEventElapsedTime
        go by), as an H200 showed (tools/event_gpu_probe.cu, tests/test_event_timing.py): a record on an
        idle stream answered cudaErrorNotReady for about 3 us after the call, and one on the legacy
        stream behind another stream's copy for 3 to 5 us after the copy, which cudaStreamSynchronize of
        that stream had already waited for (behind another stream's kernel it was seen at once)."""
        t = self._ready(stream)
        self._events[name] = t
        # on an idle stream the record happens as it is issued, and is seen EVENT_SEEN_US later; behind work
        # still to come, when that work ends (a GPU's launch and the kernel itself take longer than that)
        seen = self.host_time + EVENT_SEEN_US if t <= self.host_time else t
        waited = self._waited(stream)
        if any(row is not None and row["kind"] in ("H2D", "D2H") and row["end"] >= t
               for row in map(self._last.get, waited)):
            seen = max(seen, t + EVENT_SEEN_US)
        # records complete in their stream's order (and after those of the streams it waits for): a stop
        # seen means its start is seen too
        seen = max(seen, *(self._seen.get(s, 0.0) for s in (stream, *waited)))
        row = {"stream": stream, "engine": "events", "kind": "event", "name": name, "start": t, "end": t, "seen": seen}
        self._seen[stream] = max(self._seen.get(stream, 0.0), seen)     # synchronizing its stream waits for it
        self._rows.append(row)
        return row

    def _waited(self, stream) -> list:
        """The *other* streams whose work so far work issued to ``stream`` now waits for: the legacy
        stream's implicit synchronization (stream 0 and the blocking streams wait for each other)."""
        if stream == 0:
            return [s for s in {*self._stream_end, *self._seen} if s != 0 and s not in self._non_blocking]
        return [] if stream in self._non_blocking else [0]

    def wait_event(self, name: str, stream):
        """cudaStreamWaitEvent: later work in ``stream`` starts after the event."""
        if name not in self._events:
            raise KeyError(f"event {name!r} was never recorded: call record_event({name!r}, stream) first")
        self._stream_end[stream] = max(self._stream_end.get(stream, 0.0), self._events[name])
        self._last.pop(stream, None)     # the next kernel waits for the event, whatever it overlaps

    def host(self, duration_us: float, name: str = "host work"):
        """Host code that runs between API calls (it delays the calls after it)."""
        row = {"stream": "host", "engine": "host", "kind": "host", "name": name,
               "start": self.host_time, "end": self.host_time + duration_us}
        self.host_time = row["end"]
        self._rows.append(row)
        return row

    def event_time(self, name: str):
        """When a recorded event happens (us), or None if it was never recorded."""
        return self._events.get(name)

    def stream_end(self, stream) -> float:
        """When the work issued to ``stream`` so far ends (us)."""
        return self._stream_end.get(stream, 0.0)

    def wait_until(self, t: float):
        """The host waits until time ``t`` (an event): cudaEventSynchronize."""
        self.host_time = max(self.host_time, t)

    def synchronize(self, stream=None):
        """cudaDeviceSynchronize (``stream=None``) or cudaStreamSynchronize(stream): the host waits.
        Waiting for the legacy stream (0) waits for every blocking stream too."""
        if stream is None:
            done = max([*self._stream_end.values(), *self._seen.values()], default=0.0)
        elif stream == 0:
            done = max([self._ready(0), *(t for s, t in self._seen.items() if s not in self._non_blocking)])
        else:
            done = max(self._stream_end.get(stream, 0.0), self._seen.get(stream, 0.0))
        name = "cudaDeviceSynchronize" if stream is None else f"cudaStreamSynchronize({stream})"
        row = {"stream": "host", "engine": "host", "kind": "sync", "name": name,
               "start": self.host_time, "end": max(self.host_time, done)}
        self.host_time = row["end"]
        self._rows.append(row)
        return row

    # ---------------------------------------------------------------- results
    def rows(self) -> list:
        """Every piece of work: dicts with stream, engine, kind, name, start, end (microseconds)."""
        return [dict(r) for r in self._rows]

    @property
    def end(self) -> float:
        return max((r["end"] for r in self._rows), default=0.0)

    def plot(self, by: str = "engine", ax=None):
        return plot_gantt(self.rows(), by=by, ax=ax)


def place_blocks(busy, ready: float, blocks: int, slots: int, block_us: float, share: float = 1.0,
                 max_kernels: int = 128, kernel=None) -> list:
    """When the blocks of one kernel run, as a GPU's block scheduler starts them: a pure function of
    plain data, the timeline's rule for kernels side by side.

    ``busy``: what kernels issued earlier hold, as [start, end, slots, share, kernel] groups of their
    blocks (slots and share as fractions of the device); ``ready``: the earliest start; ``slots``: how
    many of this kernel's blocks the device holds at once (blocks per SM x SMs); ``block_us``: how long
    each block runs (the kernel's time over its waves); ``share``: the share of the device's throughput
    all of its resident blocks keep busy together. As many blocks as fit in what the earlier groups
    leave free for a block's whole time start at once; the rest wait for the next earlier group to end
    (so a second kernel starts in the room the first leaves, and its later blocks as the first's last
    wave drains); no block starts while ``max_kernels`` other kernels run. Where the block slots have
    room but the throughput left is less than the blocks need, they start anyway and run slower, in what
    is left (faster as earlier groups end), when that ends sooner than waiting for room would (an H100 ran four streams of a DRAM-
    latency-bound kernel that together asked for 101% of the bandwidth 3.9x faster than one stream, not
    2x). Returns (start, end, blocks) groups in order: ``blocks`` run at once from start to end, in waves
    of ``block_us`` (once nothing else runs, a kernel's full waves are one group); blocks slowed so are
    (start, end, blocks, share) pieces, one after another, ``share`` what the same blocks hold in each."""
    slot, per_block = 1.0 / slots, share / min(blocks, slots)
    placed, left, t = [], blocks, ready
    eps = 1e-6              # microseconds: times that differ by rounding only are the same moment
    while left > 0:
        if all(g[1] <= t + eps for g in busy) and all(g[1] <= t + eps for g in placed):
            # nothing else runs from here on: the rest goes wave after wave, the full waves as one group
            at_once = min(left, slots, int(1.0 / per_block + 1e-6) if per_block > 0 else slots)
            full, rest = divmod(left, at_once)
            if full:
                placed.append((t, t + full * block_us, at_once))
            if rest:
                placed.append((t + full * block_us, t + (full + 1) * block_us, rest))
            break
        end = t + block_us
        near = [g for g in busy if g[1] > t + eps and (g[0] < end - eps or g[0] <= t + eps)]
        near += [[g[0], g[1], g[2] * slot, g[3] if len(g) > 3 else g[2] * per_block, kernel]
                 for g in placed if g[1] > t + eps]
        used_slots = used_share = 0.0
        others = set()
        for point in {t, *(g[0] for g in near if t + eps < g[0] < end - eps)}:
            at = [g for g in near if g[0] <= point + eps and g[1] > point + eps]
            used_slots = max(used_slots, sum(g[2] for g in at))
            used_share = max(used_share, sum(g[3] for g in at))
            others |= {g[4] for g in at if g[4] != kernel}
        fit = min(left, int((1.0 - used_slots) / slot + 1e-6))
        n = min(fit, int((1.0 - used_share) / per_block + 1e-6) if per_block > 0 else left)
        if fit > n and used_share < 1.0 - 1e-3 and len(others) < max_kernels:
            need = fit * per_block
            ends = sorted({g[1] for g in near if g[1] > t + eps})
            # when waiting would give them the throughput they need: the first end of an earlier group
            # after which the groups still running leave enough
            room = next((e for e in ends if sum(g[3] for g in near if g[1] > e + eps) + need <= 1.0 + 1e-6), ends[-1])
            pieces = _slowed(near, t, ends, need, block_us)
            if pieces and pieces[-1][1] < room + block_us - eps:
                placed += [(t0, t1, fit, held) for t0, t1, held in pieces]
                left -= fit
                continue
        if n >= 1 and len(others) < max_kernels:
            placed.append((t, end, n))
            left -= n
            continue
        t = min(g[1] for g in near if g[1] > t + eps)
    return placed


def _slowed(near, t: float, ends, need: float, block_us: float) -> list:
    """Blocks that need ``need`` of the device's throughput for ``block_us``, started at ``t`` in what the
    ``near`` groups leave: at that share of full speed, faster as those groups end. Returns the pieces
    of their run, (start, end, share held), until they finish ([] if they never would)."""
    pieces, done, at = [], 0.0, t
    for e in [*ends, float("inf")]:
        free = 1.0 - sum(g[3] for g in near if g[0] <= at + 1e-6 and g[1] > at + 1e-6)
        held = min(need, max(free, 0.0))
        rate = held / need
        if rate > 0 and done + rate * (e - at) >= block_us:
            pieces.append((at, at + (block_us - done) / rate, held))
            return pieces
        if rate > 0:
            pieces.append((at, e, held))
        done += rate * (e - at)
        at = e
    return []


def sub_rows(rows, lane: str = "engine") -> dict:
    """Which sub-row of its lane each row is drawn on, as Nsight Systems stacks kernels that overlap:
    {row index: (sub-row, sub-rows in that lane)}, for the rows that overlap another of their lane."""
    ends: dict = {}             # lane -> end of the last row on each of its sub-rows
    where = {}
    for i in sorted(range(len(rows)), key=lambda i: rows[i]["start"]):
        r = rows[i]
        if r["kind"] == "event" or r["end"] <= r["start"]:
            continue
        free = ends.setdefault(str(r[lane]), [])
        k = next((k for k, e in enumerate(free) if e <= r["start"] + 1e-9), len(free))
        free[k:k + 1] = [r["end"]]
        where[i] = k
    counts = {key: len(v) for key, v in ends.items()}
    return {i: (k, counts[str(rows[i][lane])]) for i, k in where.items() if counts[str(rows[i][lane])] > 1}


@dataclass(frozen=True)
class KernelTiming:
    """How long a launch takes on the device model, and its shape for kernels beside it (Timeline.kernel)."""

    us: float
    how: str                # "measured", "metrics", "instructions only"
    limiter: str | None     # the estimate's pipe, or "clock" for a kernel that waited on its clock
    blocks: int             # in its grid
    per_sm: int             # of them on one SM at once
    share: float            # of the device's throughput they keep busy


def kernel_timing(rec, profile) -> KernelTiming:
    """A launch record's KernelTiming: measured on a GPU, else ``timing.estimate`` from the emulator's
    metrics or, without them, its instruction count and the global-memory bytes its PTX moves per
    instruction (``ptx/mix.py``: a copy kernel is memory-bound). A kernel that waited on its clock
    (``rec.clock_wait_us``, the longest any batch of its blocks waited) takes at least that long in
    each wave, and keeps the SMs' pipes busy only for the time the estimate gives its instructions."""
    p = profile.sized()
    blocks = rec.grid[0] * rec.grid[1] * rec.grid[2]
    threads = rec.block[0] * rec.block[1] * rec.block[2]
    static = getattr(rec, "static_shared", 0)
    if rec.gpu_time_ms is not None:
        t = KernelTiming(rec.gpu_time_ms * 1e3, "measured", None, blocks, _per_sm(p, threads, static, rec.shared_bytes),
                         min(blocks, p.sms) / p.sms)
    else:
        t = _estimated(rec, p, blocks, threads, static)
    wait = getattr(rec, "clock_wait_us", 0.0)
    if wait and t.how != "measured":
        waited = -(-blocks // (t.per_sm * p.sms)) * wait + LAUNCH_OVERHEAD_US
        if waited > t.us:
            t = replace(t, us=waited, limiter="clock", share=t.share * t.us / waited)
    return t


@lru_cache(maxsize=256)
def _per_sm(p, threads: int, static: int, dynamic: int) -> int:
    """Blocks of a launch one SM holds at once (the occupancy calculator, 32 registers a thread as the
    timing model assumes, and the kernel's static and dynamic shared memory)."""
    return max(1, occupancy((32, static), threads, dynamic, device=p, curve=False).active_blocks)


def _estimated(rec, p, blocks, threads, static) -> KernelTiming:
    """The timing model's KernelTiming of a launch on the emulator; where its occupancy counted dynamic
    shared memory only, the ``static`` bytes bring its blocks per SM down (kept with the estimate: a
    dataclasses.replace at every launch of a kernel with __shared__ arrays cost 3 us)."""
    mapped = _mapped_metrics(rec)
    if "smsp__inst_executed.sum" in rec.metrics:
        est = estimate(rec, device=p, metrics={**rec.metrics, **mapped})
        return _with_static(KernelTiming(est.time_us, "metrics", est.limiter, blocks, est.resident_blocks,
                                         est.device_share), p, threads, static, rec.shared_bytes)
    warp_insts = -(-rec.thread_instructions // 32)
    sectors = rec.thread_instructions * getattr(rec, "global_bytes_per_instruction", 0.0) / 32
    # a kernel launched in a loop counts the same work each time: its estimate is looked up
    key = (tuple(rec.grid), tuple(rec.block), rec.shared_bytes, warp_insts, sectors, tuple(mapped.items()),
           tuple(getattr(rec, "chain_cycles", ())), getattr(rec, "longest_path", 0.0), getattr(rec, "clock_wait_us", 0.0),
           static)
    known = _ESTIMATES.get(key)
    if known is not None and known[0] is p:
        return known[1]
    est = estimate(rec, device=p, metrics={"smsp__inst_executed.sum": warp_insts,
                                           "l1tex__t_sectors_pipe_lsu_mem_global.sum": sectors, **mapped})
    if len(_ESTIMATES) >= 256:
        _ESTIMATES.clear()
    _ESTIMATES[key] = p, _with_static(KernelTiming(est.time_us, "instructions only", est.limiter, blocks,
                                                   est.resident_blocks, est.device_share),
                                      p, threads, static, rec.shared_bytes)
    return _ESTIMATES[key][1]


def _with_static(t: KernelTiming, p, threads: int, static: int, dynamic: int) -> KernelTiming:
    """``t`` with its blocks per SM as the kernel's static shared memory allows too (the estimate's
    occupancy counts dynamic shared memory only)."""
    if not static:
        return t
    return replace(t, per_sm=min(t.per_sm, _per_sm(p, threads, static, dynamic)))


def kernel_time(rec, profile):
    """(microseconds, how it was found, what limits it) for a launch record (``kernel_timing``)."""
    t = kernel_timing(rec, profile)
    return t.us, t.how, t.limiter


# launch shape and counts -> (profile, _estimated's answer) of launches timed without metrics: the
# model is a pure function of them, and a program launching one kernel 10,000 times asks 10,000 times
_ESTIMATES: dict = {}


def _mapped_metrics(rec) -> dict:
    """The part of a launch's global traffic that goes to mapped host memory (the runtime core's
    ``mapped_traffic``), as the timing model's ``cudalab__mapped_*`` metrics; {} for none."""
    load, store = getattr(rec, "mapped_bytes_per_instruction", (0.0, 0.0))
    total = getattr(rec, "global_bytes_per_instruction", 0.0)
    if not (load or store) or not total:
        return {}
    return {"cudalab__mapped_load_bytes": rec.thread_instructions * load,
            "cudalab__mapped_store_bytes": rec.thread_instructions * store,
            "cudalab__device_share": max(0.0, 1 - (load + store) / total)}


def plot_gantt(rows, by: str = "engine", ax=None):
    """Draw timeline rows as a Gantt chart, one lane per engine (or per stream: ``by="stream"``).
    Kernels that run side by side on the SMs are stacked in sub-rows of the lane (``sub_rows``), as
    Nsight Systems draws them; so is a programmatic dependent launch beside the kernel before it."""
    import matplotlib.pyplot as plt
    lanes = list(dict.fromkeys(str(r[by]) for r in rows))
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.6 * len(lanes) + 1.2))
    stacked = sub_rows(rows, by)
    for i, r in enumerate(rows):
        y = lanes.index(str(r[by]))
        color = KINDS_COLORS.get(r["kind"], "#333333")
        if r["kind"] == "event":
            ax.plot([r["start"]], [y], marker="v", color=color)
            continue
        height = 0.6
        if i in stacked:            # one of several rows of its lane at once: its own slice of the lane
            k, count = stacked[i]
            height = 0.6 / count
            y += -0.3 + (k + 0.5) * height
        ax.barh(y, r["end"] - r["start"], left=r["start"], height=height, color=color,
                edgecolor="black", linewidth=0.5)
        pdl = r.get("pdl")
        if pdl and pdl["waiting"]:      # held at griddepcontrol.wait until the kernel before it ended
            t0, t1 = pdl["waiting"]
            ax.barh(y, t1 - t0, left=t0, height=height, color="white", hatch="//", edgecolor=color, linewidth=0.5)
        if r.get("trigger") is not None:     # every block ran griddepcontrol.launch_dependents
            ax.plot([r["trigger"]] * 2, [y - height / 2, y + height / 2], color="black", linewidth=1.5)
        if r["end"] > r["start"]:
            ax.text((r["start"] + r["end"]) / 2, y, r["name"], ha="center", va="center",
                    fontsize=7 if height > 0.2 else 5, clip_on=True)
    ax.set_yticks(range(len(lanes)), [f"{by} {lane}" if by == "stream" else lane for lane in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    return ax
