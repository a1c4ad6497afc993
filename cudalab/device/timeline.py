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
* ``cudaEventRecord`` marks a point in a stream; ``cudaStreamWaitEvent`` makes another stream wait
  for it; ``cudaDeviceSynchronize`` / ``cudaStreamSynchronize`` block the host.

Simplifications: kernels run one at a time on the SMs (real GPUs run kernels of different
streams side by side when neither fills the device); each engine takes work in issue order; a
kernel launch and an event cost the host nothing; a copy costs a fixed latency plus bytes over
the host link's bandwidth. Times are microseconds.
"""
from __future__ import annotations

from . import current
from .profiles import get

COPY_LATENCY_US = 2.0
PAGEABLE_FRACTION = 0.5       # pageable copies go through a staging buffer: about half the pinned rate
KINDS_COLORS = {"H2D": "#4C72B0", "D2H": "#55A868", "kernel": "#C44E52", "event": "#8172B2",
                "sync": "#999999", "host": "#CCB974"}


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

    # ---------------------------------------------------------------- issuing work
    def _engine(self, kind):
        if kind == "kernel":
            return "SMs"
        engines = self.profile.copy_engines or 1
        return f"copy engine {'H2D' if kind == 'H2D' else 'D2H'}" if engines >= 2 else "copy engine"

    def _ready(self, stream):
        """Earliest start of the next work in ``stream`` (stream order and default-stream rules)."""
        if stream == 0:
            return max([self.host_time, self._default_end, *self._stream_end.values()])
        return max(self.host_time, self._stream_end.get(stream, 0.0), self._default_end)

    def _add(self, stream, kind, name, duration):
        engine = self._engine(kind)
        start = max(self._ready(stream), self._engine_end.get(engine, 0.0))
        end = start + duration
        self._engine_end[engine] = end
        self._stream_end[stream] = end
        if stream == 0:
            self._default_end = end
        row = {"stream": stream, "engine": engine, "kind": kind, "name": name, "start": start, "end": end}
        self._rows.append(row)
        return row

    def copy(self, nbytes: int, direction: str = "H2D", stream=0, pinned: bool = False, name: str = ""):
        """cudaMemcpy (pageable) or cudaMemcpyAsync from pinned memory (``pinned=True``)."""
        if direction not in ("H2D", "D2H"):
            raise ValueError("direction is 'H2D' (host to device) or 'D2H' (device to host)")
        gbs = self.profile.host_link_gbs or 12.0
        rate = gbs * 1e3 * (1.0 if pinned else PAGEABLE_FRACTION)      # bytes per microsecond
        row = self._add(stream, direction, name or f"{direction} {nbytes:,} B", COPY_LATENCY_US + nbytes / rate)
        row["bytes"], row["pinned"] = nbytes, pinned
        if not pinned:                   # the host waits for a pageable copy
            self.host_time = row["end"]
        return row

    def kernel(self, name: str, duration_us, stream=0):
        """A kernel launch; ``duration_us`` is a number or a timing.Estimate."""
        us = getattr(duration_us, "time_us", duration_us)
        return self._add(stream, "kernel", name, float(us))

    def record_event(self, name: str, stream=0):
        """cudaEventRecord: the event completes when the stream's earlier work has."""
        t = self._ready(stream) if stream == 0 else max(self.host_time, self._stream_end.get(stream, 0.0))
        self._events[name] = t
        row = {"stream": stream, "engine": "events", "kind": "event", "name": name, "start": t, "end": t}
        self._rows.append(row)
        return row

    def wait_event(self, name: str, stream):
        """cudaStreamWaitEvent: later work in ``stream`` starts after the event."""
        if name not in self._events:
            raise KeyError(f"event {name!r} was never recorded: call record_event({name!r}, stream) first")
        self._stream_end[stream] = max(self._stream_end.get(stream, 0.0), self._events[name])

    def host(self, duration_us: float, name: str = "host work"):
        """Host code that runs between API calls (it delays the calls after it)."""
        row = {"stream": "host", "engine": "host", "kind": "host", "name": name,
               "start": self.host_time, "end": self.host_time + duration_us}
        self.host_time = row["end"]
        self._rows.append(row)
        return row

    def synchronize(self, stream=None):
        """cudaDeviceSynchronize (``stream=None``) or cudaStreamSynchronize(stream): the host waits."""
        done = max(self._stream_end.values(), default=0.0) if stream is None else self._stream_end.get(stream, 0.0)
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


def plot_gantt(rows, by: str = "engine", ax=None):
    """Draw timeline rows as a Gantt chart, one lane per engine (or per stream: ``by="stream"``)."""
    import matplotlib.pyplot as plt
    lanes = list(dict.fromkeys(str(r[by]) for r in rows))
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.6 * len(lanes) + 1.2))
    for r in rows:
        y = lanes.index(str(r[by]))
        color = KINDS_COLORS.get(r["kind"], "#333333")
        if r["kind"] == "event":
            ax.plot([r["start"]], [y], marker="v", color=color)
            continue
        ax.barh(y, r["end"] - r["start"], left=r["start"], height=0.6, color=color, edgecolor="black", linewidth=0.5)
        if r["end"] > r["start"]:
            ax.text((r["start"] + r["end"]) / 2, y, r["name"], ha="center", va="center", fontsize=7, clip_on=True)
    ax.set_yticks(range(len(lanes)), [f"{by} {lane}" if by == "stream" else lane for lane in lanes])
    ax.invert_yaxis()
    ax.set_xlabel("time (us)")
    return ax
