"""racecheck's view of asynchronous copies and mbarriers (the AsyncEvents of emulator/asyncops.py).

Two things that ``__syncthreads()`` epochs cannot express:

* **Bytes in flight.** Between its issue and its completion an async copy's destination belongs to
  the copy: any access to it, even by the issuing thread, is a hazard, and a ``__syncthreads()``
  does not end it. A copy completed by the issuing thread's own wait (cp.async.wait_group) becomes
  that thread's write; one completed by an mbarrier phase may be used by the threads that saw that
  phase complete (or that passed a ``__syncthreads()`` after it), and is a hazard for the others.
* **mbarrier synchronization.** A thread that arrived on a phase and a thread that then saw the
  phase complete are ordered: what the first did before arriving happens before what the second
  does after its wait (release/acquire). Per block, ``knows[b, a]`` is the clock of the latest
  arrival of warp ``a`` whose phase warp ``b`` has seen complete; a hazard between an access of
  warp ``a`` at clock ``c`` and a later access of warp ``b`` is excused when ``knows[b, a] > c``.
"""
from __future__ import annotations

import numpy as np

NONE = -1


class AsyncHazards:
    """The async-copy and mbarrier state of one racecheck batch (see the module docstring)."""

    def __init__(self, batch, n):
        self.wpb = batch.lanes_per_block // 32
        self.flight_lane = np.full(n, NONE, np.int64)    # the lane whose copy will write the byte
        self.flight_line = np.zeros(n, np.int32)
        self.guard = np.full(n, NONE, np.int64)          # the mbarrier whose phase made the byte visible ...
        self.need = np.zeros(n, np.int64)                # ... and how many of its phases a reader must have seen
        self.observed: dict = {}                         # barrier -> per lane: phases seen complete
        self.arrivals: dict = {}                         # barrier -> {phase: clock of each warp's last arrival}
        self.knows = np.full((batch.nblocks, self.wpb, self.wpb), NONE, np.int64)
        self.used = False                                # any mbarrier arrival seen: ordered() has work to do

    def clear(self, blocks, stride):
        """A __syncthreads(): landed bytes are visible to every thread of those blocks."""
        self.guard.reshape(-1, stride)[blocks] = NONE

    # ---------------------------------------------------------------- events
    def arrive(self, ev, clock):
        warps = np.asarray(ev.lanes, np.int64) >> 5
        for slot, phase in {(int(s), int(p)) for s, p in zip(ev.barrier.tolist(), ev.phase.tolist())}:
            m = (ev.barrier == slot) & (ev.phase == phase)
            stamps = self.arrivals.setdefault(slot, {}).setdefault(phase, np.full(self.knows.shape[0] * self.wpb,
                                                                                  NONE, np.int64))
            stamps[warps[m]] = clock
        self.used = True

    def observe(self, ev, nlanes):
        lanes = np.asarray(ev.lanes, np.int64)
        for slot in np.unique(ev.barrier).tolist():
            m = ev.barrier == slot
            seen = self.observed.setdefault(slot, np.zeros(nlanes, np.int64))
            np.maximum.at(seen, lanes[m], ev.phase[m])
            phases = self.arrivals.get(slot, {})
            for w in np.unique(lanes[m] >> 5).tolist():
                upto = int(seen[lanes[m][(lanes[m] >> 5) == w]].max())
                got = [s for p, s in phases.items() if p < upto]
                if got:
                    b, i = divmod(w, self.wpb)
                    own = np.max(got, axis=0)[b * self.wpb:(b + 1) * self.wpb]
                    np.maximum(self.knows[b, i], own, out=self.knows[b, i])

    def issue(self, where, lanes, line):
        self.flight_lane[where] = lanes
        self.flight_line[where] = line

    def land(self, where, slot, phase):
        """The bytes were written: by the issuing thread's wait (slot -1) or a phase's completion."""
        self.flight_lane[where] = NONE
        self.guard[where] = slot
        self.need[where] = phase + 1

    def overwrite(self, where):
        self.guard[where] = NONE

    # ---------------------------------------------------------------- checks
    def in_flight(self, where):
        return self.flight_lane[where] != NONE

    def unseen(self, where, lanes):
        """Accesses to bytes an mbarrier phase made visible, by threads that did not see the phase."""
        guarded = self.guard[where] != NONE
        bad = np.zeros(where.size, bool)
        if guarded.any():
            g, gl, need = self.guard[where][guarded], lanes[guarded], self.need[where][guarded]
            ok = np.zeros(g.size, bool)
            for slot in np.unique(g).tolist():
                seen = self.observed.get(slot)
                m = g == slot
                if seen is not None:
                    ok[m] = seen[gl[m]] >= need[m]
            bad[np.flatnonzero(guarded)[~ok]] = True
        return bad

    def ordered(self, warp_now, warp_before, clock_before):
        """Is each earlier access (warp_before at clock_before) ordered before a later access by
        warp_now through an mbarrier phase (release by the arrival, acquire by the wait)?"""
        if not self.used:
            return np.zeros(np.shape(warp_now), bool)
        b, i = np.divmod(warp_now, self.wpb)
        return self.knows[b, i, np.asarray(warp_before) % self.wpb] > clock_before

    def message(self, kind, second, block, t1, t2, offset, l1, l2, kernel, why):
        b = f"block ({block[0]},{block[1]},{block[2]})"
        who = f"thread ({t2[0]},{t2[1]},{t2[2]})"
        did = "read" if second == "Read" else "wrote"
        if why == "flight":
            return (f"Race reported between Write access at {l1} (an asynchronous copy still in flight) and {second} "
                    f"access at {l2} in kernel {kernel} ({kind} hazard on __shared__ memory)\n"
                    f"    thread ({t1[0]},{t1[1]},{t1[2]}) started a copy into shared byte offset {offset} of {b}, and "
                    f"{who} {did} that byte before the copy was complete: the copy may land before or after it (the "
                    "emulator lands it at the wait, so a read sees the old bytes).\n"
                    "    Wait for the copy first: cp.async.wait_group / __pipeline_wait_prior / pipe.consumer_wait() "
                    "in the thread that issued it, or a wait on the barrier that tracks it (bar.wait(token), "
                    "mbarrier.try_wait); then __syncthreads() if other threads use the data.")
        return (f"Race reported on an asynchronous copy's data at {l2} in kernel {kernel} ({kind} hazard on "
                f"__shared__ memory)\n    {who} of {b} {did} shared byte offset {offset}, which a copy completed "
                "through an mbarrier phase, without waiting on that barrier: only the threads that waited on the "
                "phase (or passed a __syncthreads() after it) may use the data.\n    Wait on the barrier in this "
                "thread too (bar.wait(token), mbarrier.try_wait), or put a __syncthreads() after the wait.")
