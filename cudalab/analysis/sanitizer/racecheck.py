"""racecheck: shared-memory hazards between warps of a block that no ``__syncthreads()`` separates.

The emulator runs a block's warps in lock step, so a missing barrier never shows as a wrong value
here (on a GPU it does, sometimes). Like compute-sanitizer's racecheck, this observer finds the
hazard from the access pattern instead: between two barriers of a block, a shared byte written by
one thread and read (RAW, WAR) or written (WAW) by a thread of *another warp* is a race. Atomics do
not race with atomics. State is one small record per shared byte of the batch, reset for a block at
each of its barriers (a new *epoch*); every step is a numpy operation over the event's lanes.
Asynchronous copies and mbarriers add bytes in flight and release/acquire ordering (asyncrace.py).
"""
from __future__ import annotations

import numpy as np

from ...emulator.events import Observer
from ...emulator.findings import Finding
from .asyncrace import AsyncHazards

NONE = -1


def _xyz(linear, dims):
    linear = int(linear)
    return (linear % dims[0], (linear // dims[0]) % dims[1], linear // (dims[0] * dims[1]))


class _Accesses:
    """Who last touched each shared byte of the batch in the current epoch: warp, thread, line."""

    def __init__(self, n):
        self.warp = np.full(n, NONE, np.int32)
        self.lane = np.full(n, NONE, np.int32)
        self.line = np.zeros(n, np.int32)
        self.clock = np.zeros(n, np.int64)       # when (racecheck's event count): mbarriers order by it

    def clear(self, blocks, stride):
        """A new epoch for the blocks where ``blocks`` is True (they passed a barrier)."""
        if blocks.all():
            self.warp.fill(NONE)
        else:
            self.warp.reshape(-1, stride)[blocks] = NONE

    def set(self, where, warp, lane, line, clock=0):
        self.warp[where], self.lane[where], self.line[where], self.clock[where] = warp, lane, line, clock


class RacecheckObserver(Observer):
    """Attach to a launch; ``findings`` holds one Finding per (hazard kind, line pair)."""

    def __init__(self):
        self.findings: list[Finding] = []
        self._by_key: dict = {}
        self.kernel = ""

    def on_launch_start(self, launch):
        self.kernel = launch.get("kernel", "") if isinstance(launch, dict) else ""
        self.shared = launch.get("shared", 0) if isinstance(launch, dict) else 0

    def on_batch_start(self, batch):
        self.batch = batch
        self.stride = max(int(self.shared), 1)
        n = batch.nblocks * self.stride if self.shared else 0
        self.writer = _Accesses(n)
        self.atomic = np.zeros(n, bool)          # the last write was an atomic
        self.reader = _Accesses(n)               # a reader of the epoch
        self.reader2 = _Accesses(n)              # a reader from a warp other than ``reader``'s
        self.sync = AsyncHazards(batch, n)       # async copies in flight, mbarrier ordering
        self.clock = 0

    # ---------------------------------------------------------------- events
    def on_barrier(self, ev):
        if "warp" in getattr(ev.inst, "mods", ()) or not self.shared:
            return                               # __syncwarp orders a warp, not the block
        here = np.zeros(self.batch.nblocks, bool)
        here[ev.lanes // self.batch.lanes_per_block] = True
        for acc in (self.writer, self.reader, self.reader2):
            acc.clear(here, self.stride)
        self.sync.clear(here, self.stride)

    def on_memory(self, ev):
        if ev.space != "shared" or ev.lanes.size == 0:
            return
        size = int(ev.size)
        lanes = np.repeat(ev.lanes, size)
        byte = (np.asarray(ev.addresses, np.int64)[:, None] + np.arange(size)).reshape(-1)
        where = lanes // self.batch.lanes_per_block * self.stride + byte
        warp = lanes // 32
        line = ev.inst.line or 0
        self.clock += 1
        self._check_async(where, lanes, line, "Read" if ev.kind == "ld" else "Write")
        if ev.kind == "ld":
            self._check(where, warp, lanes, line, self.writer, np.ones(where.size, bool), "RAW", "Write", "Read")
            self._read(where, warp, lanes, line)
            return
        atomic = ev.kind in ("atom", "red")
        self._write(where, warp, lanes, line, atomic)
        if not atomic:
            # two warps writing one byte in the same instruction: the loser races with the winner
            lost = self.writer.warp[where] != warp
            if lost.any():
                self._report("WAW", "Write", "Write", where[lost], self.writer.lane[where[lost]], line,
                             lanes[lost], line)

    def on_async(self, ev):
        """An async copy issued, landed or read its source; an mbarrier arrival or completed wait."""
        if not self.shared or ev.lanes.size == 0:
            return
        self.clock += 1
        if ev.kind == "arrive":
            return self.sync.arrive(ev, self.clock)
        if ev.kind == "observe":
            return self.sync.observe(ev, self.batch.nblocks * self.batch.lanes_per_block)
        size = int(ev.size)
        lanes = np.repeat(np.asarray(ev.lanes, np.int64), size)
        byte = (np.asarray(ev.addresses, np.int64)[:, None] + np.arange(size)).reshape(-1)
        where = lanes // self.batch.lanes_per_block * self.stride + byte
        warp, line = lanes // 32, ev.inst.line or 0
        if ev.kind == "land":
            slot = np.repeat(ev.barrier, size)
            mine = slot == NONE          # landed by the issuing thread's wait: its own write from now on
            self.writer.set(where[mine], warp[mine], lanes[mine], line, self.clock)
            self.writer.warp[where[~mine]] = NONE
            self.atomic[where] = False
            self.sync.land(where, slot, np.repeat(ev.phase, size))
            return
        self._check_async(where, lanes, line, "Write" if ev.kind == "issue" else "Read")
        if ev.kind == "read":            # a bulk copy reads its shared source when issued
            self._check(where, warp, lanes, line, self.writer, np.ones(where.size, bool), "RAW", "Write", "Read")
            self._read(where, warp, lanes, line)
            return
        self._write(where, warp, lanes, line, False, record=False)
        self.sync.issue(where, lanes, line)

    # ---------------------------------------------------------------- helpers
    def _write(self, where, warp, lanes, line, atomic, record=True):
        plain = np.ones(where.size, bool) if not atomic else ~self.atomic[where]
        self._check(where, warp, lanes, line, self.writer, plain, "WAW", "Write", "Write")
        for r in (self.reader, self.reader2):
            self._check(where, warp, lanes, line, r, np.ones(where.size, bool), "WAR", "Read", "Write")
        if record:
            self.writer.set(where, warp, lanes, line, self.clock)
            self.atomic[where] = atomic

    def _check_async(self, where, lanes, line, access):
        kind = "RAW" if access == "Read" else "WAW"
        hit = self.sync.in_flight(where)
        if hit.any():
            w = where[hit]
            self._report(kind, "Write", access, w, self.sync.flight_lane[w], self.sync.flight_line[w], lanes[hit],
                         line, why="flight")
        if access != "Read":     # an overwrite is ordered (or not) like any write: _check's business
            self.sync.overwrite(where)
            return
        bad = self.sync.unseen(where, lanes)
        if bad.any():
            self._report(kind, "Write", access, where[bad], lanes[bad], 0, lanes[bad], line, why="unseen")

    def _check(self, where, warp, lanes, line, prior, mask, kind, first, second):
        pw = prior.warp[where]
        hit = (pw != NONE) & (pw != warp) & mask
        if hit.any() and self.sync.used:         # ordered through an mbarrier phase: no hazard
            hit[hit] = ~self.sync.ordered(warp[hit], pw[hit], prior.clock[where[hit]])
        if hit.any():
            self._report(kind, first, second, where[hit], prior.lane[where[hit]], prior.line[where[hit]],
                         lanes[hit], line)

    def _read(self, where, warp, lanes, line):
        new = self.reader.warp[where] == NONE
        self.reader.set(where[new], warp[new], lanes[new], line, self.clock)
        other = (self.reader.warp[where] != warp) & (self.reader2.warp[where] == NONE)
        self.reader2.set(where[other], warp[other], lanes[other], line, self.clock)

    def _report(self, kind, first, second, where, lane1, line1, lane2, line2, why=""):
        line1 = np.broadcast_to(line1, where.shape)
        # one finding per (kind, line pair); count the hazards (accesses of the second kind) of each
        for l1 in np.unique(line1):
            sel = line1 == l1
            key = (kind, int(l1), int(line2), why)
            f = self._by_key.get(key)
            count = int(np.unique(np.broadcast_to(lane2, where.shape)[sel]).size)
            if f is not None:
                f.details["hazards"] += count
                continue
            k = int(np.flatnonzero(sel)[0])
            self._by_key[key] = self._finding(kind, first, second, int(where[k]), int(lane1[k]), int(l1),
                                              int(np.broadcast_to(lane2, where.shape)[k]), int(line2), count, why)

    def _finding(self, kind, first, second, where, lane1, line1, lane2, line2, count, why=""):
        b = self.batch
        block = _xyz(b.first_block + where // self.stride, b.grid)
        t1 = _xyz(lane1 % b.lanes_per_block, b.block)
        t2 = _xyz(lane2 % b.lanes_per_block, b.block)
        offset = where % self.stride
        l1 = f"line {line1}" if line1 else "an unknown line"
        l2 = f"line {line2}" if line2 else "an unknown line"
        what = {"RAW": "wrote a value that", "WAR": "read a value that", "WAW": "wrote a value that"}[kind]
        then = {"RAW": "read", "WAR": "overwrote", "WAW": "overwrote"}[kind]
        msg = self.sync.message(kind, second, block, t1, t2, offset, l1, l2, self.kernel, why) if why else (
               f"Race reported between {first} access at {l1} and {second} access at {l2} in kernel "
               f"{self.kernel} ({kind} hazard on __shared__ memory)\n"
               f"    thread ({t1[0]},{t1[1]},{t1[2]}) {what} thread ({t2[0]},{t2[1]},{t2[2]}), of another warp, "
               f"{then} in block ({block[0]},{block[1]},{block[2]}), at shared byte offset {offset},\n"
               f"    with no __syncthreads() between the two accesses: on a GPU the result depends on which "
               f"warp runs first.\n    " + (f"Put a __syncthreads() between {l1} and {l2}." if line1 != line2 else
                                            f"Both accesses are at {l1}, in different loop iterations or calls: "
                                            "put a __syncthreads() between them (e.g. at the end of the loop body)."))
        f = Finding("racecheck", msg, self.kernel, line2, block, t2, offset,
                    {"hazard": kind, "lines": (line1, line2), "threads": (t1, t2), "hazards": count,
                     **({"async": why} if why else {})})
        self.findings.append(f)
        return f
