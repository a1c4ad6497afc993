"""An observer that counts what Nsight Compute would report for a launch, per source line and in total.

Counts follow ncu's metric names so a student can compare them with the real tool. One caveat:
instruction counts are PTX instructions, not SASS. Loads, stores and atomics map one to one (a PTX
``ld.shared`` is one LDS, vector accesses included), so every memory metric matches ncu exactly;
``smsp__inst_executed`` and ``smsp__thread_inst_executed`` count PTX instructions and so only
approximate ncu's numbers. One PTX-to-SASS rule matters: a global ``atom`` whose result no
instruction reads becomes a RED (ptxas keeps ATOM only for exch and cas), which ncu counts under
``op_red``; so does this observer. docs/ncu_comparison.md has the launches checked against ncu.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..emulator.events import Observer
from .divergence import branch_outcome, lane_histogram, possible_lanes
from .global_sectors import dram_segments, global_sectors, in_lane_order, local_sectors, sector_map
from .shared_banks import bank_map, shared_wavefronts
from .warps import WARP_SIZE, as_int64, distinct

SHARED_KINDS = ("ld", "st", "atom")
GLOBAL_KINDS = ("ld", "st", "atom", "red")
LOCAL_KINDS = ("ld", "st")


# atom operations that ptxas turns into RED when the old value is not used
REDUCTION_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")


def _shared_kind(kind):
    return "atom" if kind == "red" else kind  # red.shared is an ATOMS, as atom.shared is


def _registers(operands):
    """Names of the registers an operand list mentions (in addresses and vectors too)."""
    for o in operands:
        if isinstance(o, tuple) and o:
            if o[0] == "reg":
                yield o[1]
            else:
                yield from _registers(o[1:])
        elif isinstance(o, (list, tuple)):
            yield from _registers(o)


def empty_metrics() -> dict:
    """Every metric this observer reports, at zero, in a stable order."""
    m = {}
    for k in SHARED_KINDS:
        m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{k}.sum"] = 0
        m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{k}.sum"] = 0
        m[f"smsp__sass_inst_executed_op_shared_{k}.sum"] = 0
    for space, kinds in (("global", GLOBAL_KINDS), ("local", LOCAL_KINDS)):
        for k in kinds:
            m[f"l1tex__t_requests_pipe_lsu_mem_{space}_op_{k}.sum"] = 0
            m[f"l1tex__t_sectors_pipe_lsu_mem_{space}_op_{k}.sum"] = 0
            m[f"smsp__sass_inst_executed_op_{space}_{k}.sum"] = 0
    m["smsp__inst_executed.sum"] = 0
    # warp matrix multiplies (mma.sync, wmma.mma): PTX instructions; SASS splits a wmma into 2 to 4 HMMAs
    m["smsp__inst_executed_pipe_tensor.sum"] = 0
    # not Nsight Compute metrics: inputs of cudalab's timing model (device/timing.py)
    m["cudalab__dram_segments_global.sum"] = 0        # 64-byte DRAM segments per load request, summed
    m["cudalab__footprint_bytes"] = 0                 # distinct global bytes (32-byte sectors) loaded
    m["smsp__thread_inst_executed.sum"] = 0
    m["smsp__thread_inst_executed_per_inst_executed.ratio"] = 0.0
    return m


@dataclass
class InstructionStats:
    """Everything counted for one PTX instruction of the launch."""

    inst: object
    warp_insts: int = 0          # warp-level executions
    thread_insts: int = 0        # sum of active lanes over those executions
    possible_threads: int = 0    # sum of lanes those warps have at all (see divergence.possible_lanes)
    histograms: dict = field(default_factory=dict)   # lane histogram (as bytes) -> executions
    space: str = ""              # memory instructions: 'shared' | 'global' | 'local' | ...
    kind: str = ""               # 'ld' | 'st' | 'atom' | 'red'
    size: int = 0
    wavefronts: int = 0          # shared
    ideal_wavefronts: int = 0
    max_ways: float = 0.0        # the worst warp's wavefronts (sectors) per ideal: its n-way conflict
    worst_excess: int = -1       # the worst warp's wavefronts (sectors) over ideal
    requests: int = 0            # global / local
    sectors: int = 0
    ideal_sectors: int = 0
    requested_bytes: int = 0
    dram_segments: int = 0
    branch_warps: int = 0        # conditional branches: warp executions
    split_warps: int = 0         # of which lanes went both ways
    worst: tuple | None = None   # (lane ids, addresses) of that warp, for bank/sector maps

    @property
    def bank_conflicts(self):
        return self.wavefronts - self.ideal_wavefronts

    @property
    def lane_histogram(self):
        """Warp executions with 0..32 active lanes (see divergence.active_lane_histogram)."""
        total = np.zeros(WARP_SIZE + 1, np.int64)
        for hist, n in self.histograms.items():
            total += np.frombuffer(hist, np.int64) * n
        return total


FOOTPRINT_MERGE = 1 << 22      # sector ids kept per event before they are merged into one sorted array


class MetricsObserver(Observer):
    """Attach to a launch; afterwards ``metrics``, ``per_line()``, ``per_instruction()`` and
    ``findings()`` say what Nsight Compute would, in numbers and in words.

    ``source``: the CUDA source, to quote the lines the report talks about.
    """

    def __init__(self, source: str | None = None):
        self.source_lines = source.splitlines() if source else []
        self.on_launch_start(None)

    def on_launch_start(self, launch):
        """Counts are per launch, as ncu's are: an observer reused for another launch starts over."""
        self.stats: dict[int, InstructionStats] = {}
        self._lanes = self._lanes_batch = self._counts = None
        self._footprint: list = []                # sector ids of global loads, per event
        self._pending = 0                         # ids added to _footprint since its last merge

    # ------------------------------------------------------------------ hooks (the hot path)
    def _lane_counts(self, lanes, batch):
        """(lane histogram as bytes, warps, lanes those warps have at all) of an active-lane set.
        The emulator hands the same array to every instruction of a straight run, so this is
        computed once a run and an instruction costs a few dict and int operations."""
        if lanes is self._lanes and batch is self._lanes_batch:
            return self._counts
        wpb = batch.lanes_per_block // WARP_SIZE
        possible = possible_lanes(np.arange(batch.nblocks * wpb), batch)
        if len(lanes) == batch.nblocks * batch.threads_per_block:   # every thread: no counting
            counts = lane_histogram(possible).tobytes(), len(possible), len(lanes)
        else:
            per_warp = np.bincount(lanes >> 5)
            hist = lane_histogram(per_warp)
            counts = hist.tobytes(), int(hist.sum()), int(np.dot(per_warp > 0, possible[:len(per_warp)]))
        self._lanes, self._lanes_batch, self._counts = lanes, batch, counts
        return counts

    def _stats(self, inst):
        st = self.stats.get(id(inst))
        if st is None:
            st = self.stats[id(inst)] = InstructionStats(inst)
        return st

    def on_instruction(self, ev):
        lanes = ev.lanes
        if len(lanes) == 0:
            return
        hist, warps, possible = self._lane_counts(lanes, ev.batch)
        st = self._stats(ev.inst)
        st.histograms[hist] = st.histograms.get(hist, 0) + 1
        st.warp_insts += warps
        st.thread_insts += len(lanes)
        st.possible_threads += possible

    def on_memory(self, ev):
        if len(ev.lanes) == 0 or ev.space not in ("shared", "global", "local"):
            return
        st = self._stats(ev.inst)
        st.space, st.kind, st.size = ev.space, ev.kind, ev.size
        if ev.space == "shared":
            r = shared_wavefronts(ev.lanes, ev.addresses, ev.size, load=ev.kind == "ld")
            cost, ideal = r.wavefronts, r.ideal
            st.wavefronts += int(cost.sum())
            st.ideal_wavefronts += int(ideal.sum())
        else:
            if ev.space == "global":
                quick = None if ev.kind in ("atom", "red") else in_lane_order(ev.lanes, ev.addresses, ev.size)
                if quick is not None:
                    r, segments, touched = quick
                else:
                    r = global_sectors(ev.lanes, ev.addresses, ev.size, atomic=ev.kind in ("atom", "red"))
                if ev.kind == "ld":          # stores merge in L2 before they reach DRAM: their sectors count
                    if quick is None:
                        segments, touched = dram_segments(ev.lanes, ev.addresses), None
                    st.dram_segments += segments
                    self._footprint.append(distinct(as_int64(ev.addresses) >> 5) if touched is None else touched)
                    self._pending += len(self._footprint[-1])
                    # a long launch: the sectors so far become one sorted array whenever what came since
                    # outgrows it (and FOOTPRINT_MERGE), so each id is merged a few times, not at every load
                    if self._pending > max(FOOTPRINT_MERGE, 2 * len(self._footprint[0])):
                        self._merge_footprint()
            else:
                r = local_sectors(ev.lanes, ev.addresses, ev.size)
            cost, ideal = r.sectors, r.ideal_sectors
            st.requests += len(r.warps)
            st.sectors += int(cost.sum())
            st.ideal_sectors += int(ideal.sum())
            st.requested_bytes += len(ev.lanes) * ev.size
        excess = cost - ideal
        worst = int(excess.argmax())
        if int(excess[worst]) > st.worst_excess:   # keep the worst warp's accesses for a picture
            st.worst_excess = int(excess[worst])
            st.max_ways = int(cost[worst]) / int(ideal[worst])
            mine = (ev.lanes >> 5) == r.warps[worst]
            st.worst = (ev.lanes[mine] % WARP_SIZE, ev.addresses[mine])

    def _merge_footprint(self):
        self._footprint = [distinct(np.concatenate(self._footprint))]
        self._pending = 0

    def on_branch(self, ev):
        if len(ev.lanes) == 0:
            return
        st = self._stats(ev.inst)
        st.branch_warps += self._lane_counts(ev.lanes, ev.batch)[1]
        taken = ev.taken
        if taken.all() or not taken.any():   # uniform, as loops mostly are: no warp splits
            return
        st.split_warps += int(branch_outcome(ev.lanes, taken).split.sum())

    # ------------------------------------------------------------------ results
    def _sass_kinds(self):
        """Global atoms whose result no executed instruction reads are REDs in SASS: their stats
        count as kind 'red' from now on (a launch's instructions have all been seen)."""
        atoms = [st for st in self.stats.values() if st.space == "global" and st.kind == "atom"
                 and st.inst.has(*REDUCTION_OPS) and st.inst.operands and st.inst.operands[0][0] == "reg"]
        if not atoms:
            return
        read = set()
        for st in self.stats.values():
            ops = st.inst.operands
            writes = ops[0] if ops and st.inst.opcode not in ("st", "red", "bra", "bar") else None
            read.update(_registers([o for o in ops if o is not writes]))
            if st.inst.guard:
                read.add(st.inst.guard[0])
        for st in atoms:
            if st.inst.operands[0][1] not in read:
                st.kind = "red"

    @property
    def metrics(self) -> dict:
        m = empty_metrics()
        self._sass_kinds()
        for st in self.stats.values():
            m["smsp__inst_executed.sum"] += st.warp_insts
            m["smsp__thread_inst_executed.sum"] += st.thread_insts
            if st.inst.opcode == "mma" or (st.inst.opcode == "wmma" and st.inst.mods[:1] == ("mma",)):
                m["smsp__inst_executed_pipe_tensor.sum"] += st.warp_insts
            if st.space == "shared":
                k = _shared_kind(st.kind)
                m[f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{k}.sum"] += st.wavefronts
                m[f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{k}.sum"] += st.bank_conflicts
                m[f"smsp__sass_inst_executed_op_shared_{k}.sum"] += st.warp_insts
            elif st.space in ("global", "local") and f"smsp__sass_inst_executed_op_{st.space}_{st.kind}.sum" in m:
                m[f"l1tex__t_requests_pipe_lsu_mem_{st.space}_op_{st.kind}.sum"] += st.requests
                m[f"l1tex__t_sectors_pipe_lsu_mem_{st.space}_op_{st.kind}.sum"] += st.sectors
                m[f"smsp__sass_inst_executed_op_{st.space}_{st.kind}.sum"] += st.warp_insts
            if st.space == "global":
                m["cudalab__dram_segments_global.sum"] += st.dram_segments
        if self._footprint:
            m["cudalab__footprint_bytes"] = 32 * len(distinct(np.concatenate(self._footprint)))
        if m["smsp__inst_executed.sum"]:
            m["smsp__thread_inst_executed_per_inst_executed.ratio"] = (
                m["smsp__thread_inst_executed.sum"] / m["smsp__inst_executed.sum"])
        return m

    def source_of(self, line):
        if line is not None and 1 <= line <= len(self.source_lines):
            return self.source_lines[line - 1].strip()
        return None

    def per_instruction(self) -> list[dict]:
        """One row per executed PTX instruction, in program order."""
        self._sass_kinds()
        rows = []
        for st in sorted(self.stats.values(), key=lambda s: s.inst.index):
            rows.append(dict(index=st.inst.index, line=st.inst.line, text=st.inst.text,
                             space=st.space, kind=st.kind, size=st.size,
                             instructions=st.warp_insts, threads=st.thread_insts,
                             active_lanes=st.thread_insts / max(st.warp_insts, 1),
                             lane_histogram=st.lane_histogram.copy(),
                             wavefronts=st.wavefronts, ideal_wavefronts=st.ideal_wavefronts,
                             bank_conflicts=st.bank_conflicts, requests=st.requests,
                             sectors=st.sectors, ideal_sectors=st.ideal_sectors,
                             branch_warps=st.branch_warps, split_warps=st.split_warps))
        return rows

    def per_line(self) -> list[dict]:
        """One row per CUDA source line (``line`` None: instructions without line info)."""
        lines: dict = {}
        for st in self.stats.values():
            row = lines.get(st.inst.line)
            if row is None:
                row = lines[st.inst.line] = dict(
                    line=st.inst.line, source=self.source_of(st.inst.line), instructions=0, threads=0,
                    possible_threads=0, shared_instructions=0, shared_wavefronts=0, ideal_wavefronts=0,
                    bank_conflicts=0, global_requests=0, sectors=0, ideal_sectors=0,
                    branch_warps=0, split_warps=0)
            row["instructions"] += st.warp_insts
            row["threads"] += st.thread_insts
            row["possible_threads"] += st.possible_threads
            if st.space == "shared":
                row["shared_instructions"] += st.warp_insts
                row["shared_wavefronts"] += st.wavefronts
                row["ideal_wavefronts"] += st.ideal_wavefronts
                row["bank_conflicts"] += st.bank_conflicts
            elif st.space in ("global", "local"):
                row["global_requests"] += st.requests
                row["sectors"] += st.sectors
                row["ideal_sectors"] += st.ideal_sectors
            row["branch_warps"] += st.branch_warps
            row["split_warps"] += st.split_warps
        rows = sorted(lines.values(), key=lambda r: (r["line"] is None, r["line"] or 0))
        for r in rows:
            r["active_lanes"] = r.pop("threads") / max(r["instructions"], 1)
            r["sectors_per_request"] = r["sectors"] / r["global_requests"] if r["global_requests"] else 0.0
            r["divergence"] = r["split_warps"] / r["branch_warps"] if r["branch_warps"] else 0.0
        return rows

    def bank_map(self, inst_index: int):
        """Bank map of the worst-conflicted warp seen at shared instruction ``inst_index``."""
        st = self._memory_stats(inst_index, "shared")
        lanes, addresses = st.worst
        return bank_map(lanes, addresses, st.size, 0, load=st.kind == "ld")

    def sector_map(self, inst_index: int):
        """Sector map of the least coalesced warp seen at global instruction ``inst_index``."""
        st = self._memory_stats(inst_index, "global")
        lanes, addresses = st.worst
        return sector_map(lanes, addresses, st.size, 0)

    def _memory_stats(self, inst_index, *spaces):
        for st in self.stats.values():
            if st.inst.index == inst_index and st.space in spaces:
                return st
        raise KeyError(f"no {'/'.join(spaces)} memory instruction with index {inst_index} ran")

    def findings(self, limit: int = 5) -> list[str]:
        """The worst lines, worst first, each with what to try, worded for a student."""
        return [text for _, text in sorted(self._findings(), key=lambda f: -f[0])[:limit]]

    def _findings(self):
        """(wasted work in warp-steps: extra wavefronts, extra sectors, split or idle warps, advice)."""
        for st in self.stats.values():
            where = f"line {st.inst.line}" if st.inst.line is not None else f"instruction {st.inst.index}"
            what = {"ld": "load", "st": "store", "atom": "atomic", "red": "atomic"}.get(st.kind, st.kind)
            if st.space == "shared" and st.bank_conflicts > 0 and st.wavefronts >= 1.5 * st.ideal_wavefronts:
                ways = int(round(st.max_ways))
                yield st.bank_conflicts, (
                    f"{where}: {ways}-way bank conflict on a shared {what}: {st.wavefronts:,} wavefronts "
                    f"where {st.ideal_wavefronts:,} would do. Threads of a warp ask one bank for different "
                    f"words, and the bank serves them one after another. If the warp walks down a column "
                    f"of a 2D shared array, pad each row by one element (e.g. [32][33] instead of [32][32]).")
            if st.space in ("global", "local") and st.sectors > 1.2 * st.ideal_sectors and st.requests:
                per_req, ideal = st.sectors / st.requests, st.ideal_sectors / st.requests
                used = min(1.0, st.requested_bytes / (32 * st.sectors))
                if st.space == "local":
                    advice = ("Threads index their local arrays differently (a run-time index); local memory "
                              "is only coalesced when all threads of a warp use the same index. Index with "
                              "constants (unrolled loops) so the array lives in registers, or use shared memory.")
                elif per_req <= ideal + 1.5:
                    advice = "The accesses are misaligned: start each warp's range on a 128-byte boundary."
                else:
                    advice = ("Make consecutive threads (threadIdx.x) access consecutive addresses, or stage "
                              "the data through shared memory.")
                yield st.sectors - st.ideal_sectors, (
                    f"{where}: uncoalesced {st.space} {what}: {per_req:.1f} sectors per request where "
                    f"{ideal:.1f} would do ({used:.0%} of the fetched bytes are used). {advice}")
            # one split warp is the grid's ragged end (`if (i >= n) return;`): not worth a word
            if st.split_warps > 1 and st.split_warps >= 0.1 * st.branch_warps:
                yield st.split_warps, (
                    f"{where}: divergent branch: {st.split_warps:,} of {st.branch_warps:,} warps split "
                    f"here ({st.split_warps / st.branch_warps:.0%}); a split warp runs both paths one "
                    f"after the other with part of its lanes idle. Make the condition the same for all "
                    f"32 threads of a warp where you can (e.g. branch on threadIdx.x / 32).")
        for row in self.per_line():
            full, used = row["possible_threads"], row["active_lanes"] * row["instructions"]
            if row["line"] is not None and row["instructions"] >= 8 and used < 0.6 * full:
                yield (full - used) / WARP_SIZE, (
                    f"line {row['line']}: warps ran it with {row['active_lanes']:.1f} active lanes on "
                    f"average, {used / full:.0%} of what they could: the other threads took another "
                    f"path or had exited.")
