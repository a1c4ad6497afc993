"""initcheck: reads of global memory that nothing wrote since it was allocated.

``cudalab.device_array`` memory is zeros in the emulator, but on a GPU ``cudaMalloc`` hands back
whatever the memory held before, so a kernel that reads it before writing it works here and fails
there. Each ``Allocation`` keeps which of its bytes were written (``DeviceMemory.write`` marks host
copies; this observer marks device stores); a load of a byte never written is a finding, reported
like compute-sanitizer's initcheck, once per source line.
"""
from __future__ import annotations

import numpy as np

from ...emulator.events import Observer
from ...emulator.findings import Finding

UNTRACKED = ("device malloc",)      # the device heap: initcheck follows cudaMalloc'ed memory only


def mark_all_written(memory):
    """Every live allocation counts as written (used when a launch ran without initcheck, so its
    stores were not followed: better miss a bug than report one that is not there)."""
    memory.mark_all_written()


class InitcheckObserver(Observer):
    def __init__(self, memory):
        self.memory = memory
        self.findings: list[Finding] = []
        self._by_line: dict = {}
        self._touched: dict = {}
        self.kernel = ""

    def on_launch_start(self, launch):
        self.kernel = launch.get("kernel", "") if isinstance(launch, dict) else ""

    def on_batch_start(self, batch):
        self.batch = batch

    def on_memory(self, ev):
        if ev.space != "global" or ev.lanes.size == 0:
            return
        mem = self.memory
        starts = mem.bounds()[0]
        addrs = np.asarray(ev.addresses, np.uint64)
        k = np.searchsorted(starts, addrs, side="right") - 1      # memcheck ran first: all addresses valid
        size = int(ev.size)
        for u in np.unique(k):
            a = mem.allocs[int(starts[u])]
            if a.written_all or a.label in UNTRACKED:
                continue
            sel = np.flatnonzero(k == u)
            byte = ((addrs[sel] - np.uint64(a.address)).astype(np.int64)[:, None] + np.arange(size))
            if ev.kind in ("ld", "atom", "red"):
                done = a.initialized[byte].all(axis=1) if a.initialized is not None else np.zeros(sel.size, bool)
                if not done.all():
                    bad = sel[~done]
                    self._report(ev, a, ev.lanes[bad], addrs[bad], size)
            if ev.kind != "ld":
                if a.initialized is None:
                    a.initialized = np.zeros(a.size, bool)
                a.initialized[byte.reshape(-1)] = True
                self._touched[a.address] = a

    def on_launch_end(self, stats):
        for a in self._touched.values():
            if a.initialized is not None and a.initialized.all():
                a.mark_written(0, a.size)
        self._touched.clear()

    def _report(self, ev, a, lanes, addrs, size):
        line = ev.inst.line or 0
        f = self._by_line.get(line)
        if f is not None:
            f.details["threads"] += int(lanes.size)
            return
        b = self.batch
        lane = int(lanes[0])
        blk = b.first_block + lane // b.lanes_per_block
        t = lane % b.lanes_per_block
        block = (blk % b.grid[0], (blk // b.grid[0]) % b.grid[1], blk // (b.grid[0] * b.grid[1]))
        thread = (t % b.block[0], (t // b.block[0]) % b.block[1], t // (b.block[0] * b.block[1]))
        where = f"line {line}" if line else "an unknown line"
        addr = int(addrs[0])
        access = "read" if ev.kind == "ld" else "read (an atomic reads the old value)"
        msg = (f"Uninitialized __global__ memory read of size {size} bytes\n"
               f"    at {where} in kernel {self.kernel}\n"
               f"    by thread ({thread[0]},{thread[1]},{thread[2]}) in block ({block[0]},{block[1]},{block[2]})\n"
               f"    Address 0x{addr:x} is byte {addr - a.address} of a {a.size}-byte allocation that nothing has "
               f"written since it was allocated.\n"
               "    The emulator fills new device arrays with zeros, but on a GPU they hold leftover garbage. "
               "Copy data in first (cudalab.to_device, copy_to_device) or write the memory in a kernel before "
               "reading it.")
        f = Finding("initcheck", msg, self.kernel, line or None, block, thread, addr,
                    {"access": access, "size": size, "threads": int(lanes.size)})
        self._by_line[line] = f
        self.findings.append(f)
