"""A model of when an emulated program's device work would run: streams, copy engines, events.

The emulator runs every operation as soon as the program issues it, so the order is always a
legal one; what the program measures with events comes from this model instead: each
operation starts when its stream, the engine it needs (compute, copy host-to-device, copy
device-to-host) and the host are all ready, and lasts what an sm_80-class GPU on PCIe 4 would
take. The legacy default stream waits for, and is waited for by, every blocking stream
(Programming Guide, "Default Stream"); streams created with cudaStreamNonBlocking do not.
"""
from __future__ import annotations

from dataclasses import dataclass

# bytes per nanosecond
PCIE_PINNED = 25.0
PCIE_PAGEABLE = 10.0
DEVICE_BANDWIDTH = 1500.0
COPY_LATENCY_NS = 2_000
LAUNCH_LATENCY_NS = 3_000
# warp instructions issued per nanosecond by the whole GPU: 108 SMs x 4 schedulers x 1.41 GHz
ISSUE_RATE = 108 * 4 * 1.41
SYNC_NS = 5_000              # a host-side synchronization's own cost

NON_BLOCKING = 1


@dataclass
class Stream:
    flags: int = 0
    priority: int = 0
    ready: float = 0.0           # ns: when the last operation issued to it finishes


class Timeline:
    def __init__(self):
        self.host = 0.0                       # ns: the host thread's clock
        self.engines = {"compute": 0.0, "h2d": 0.0, "d2h": 0.0}
        self.streams = {0: Stream()}

    def _blocking(self, sid):
        return sid != 0 and not self.streams[sid].flags & NON_BLOCKING

    def run(self, sid: int, engine: str | None, duration: float) -> float:
        """Schedule an operation on stream ``sid``; returns its end time (ns)."""
        s = self.streams[sid]
        start = max(s.ready, self.host)
        if sid == 0:
            start = max([start] + [t.ready for k, t in self.streams.items() if self._blocking(k)])
        elif self._blocking(sid):
            start = max(start, self.streams[0].ready)
        if engine and engine != "compute":
            start = max(start, self.engines[engine])
        end = start + duration
        if engine:
            self.engines[engine] = max(self.engines[engine], end) if engine != "compute" else end
        s.ready = end
        return end

    def copy(self, sid: int, nbytes: int, direction: str, pinned: bool, sync: bool) -> float:
        if direction == "d2d":
            engine, rate = "compute", DEVICE_BANDWIDTH / 2
        elif direction == "h2h":
            engine, rate = None, PCIE_PAGEABLE * 2
        else:
            engine, rate = direction, PCIE_PINNED if pinned else PCIE_PAGEABLE
        end = self.run(sid, engine, COPY_LATENCY_NS + nbytes / rate)
        if sync or not pinned:          # a pageable copy returns only once the bytes are staged
            self.host = max(self.host, end)
        return end

    def kernel(self, sid: int, warp_instructions: int) -> float:
        self.host += LAUNCH_LATENCY_NS / 3
        # kernels of different streams may overlap: the compute engine is not exclusive
        return self.run(sid, None, LAUNCH_LATENCY_NS + warp_instructions / ISSUE_RATE)

    def wait_stream(self, sid: int):
        if sid == 0:
            self.wait_all()
        else:
            self.host = max(self.host, self.streams[sid].ready) + SYNC_NS

    def wait_all(self):
        self.host = max([self.host] + [s.ready for s in self.streams.values()]) + SYNC_NS
