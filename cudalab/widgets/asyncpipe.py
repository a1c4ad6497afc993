"""Async-copy pipeline: for each stage, what each warp of a block issued and what it waited for.

``pipeline(kernel, grid, block, args)`` launches a kernel on the emulator with a ``PipelineTrace``
observer on one block and returns its LaunchRecord with ``rec.reports["pipeline"]``: plain data
(``PipelineData``). A *stage* is a set of async copies that complete together: a cp.async commit group
(the n-th group of each thread) when the threads' own waits complete them, or a phase of an mbarrier
when they complete on a barrier (cp.async.mbarrier.arrive, cp.async.bulk with complete_tx).
``pipeline_model`` turns that into a warps x stages table; ``render_svg`` draws it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..emulator.events import Observer
from .svg import Svg, esc, legend, table_html

ISSUED, WAITED, BOTH = "#4e79a7", "#f28e2b", "#59a14f"


@dataclass
class PipelineData:
    """What the warps of one block did with async copies, in the order they did it.

    ``copies``: one dict per (instruction, warp) that issued copies: ``warp, line, text, bytes, copies,
    dst`` (shared byte range), ``stage`` (set when they landed) and ``step`` (order of issue).
    ``stages``: key -> ``label``, ``landed`` (step), ``waits`` {warp: (line, text, step)}: the wait
    through which each warp got the stage's bytes (its own cp.async wait, or its successful mbarrier
    test/try_wait). ``shared``: the kernel's __shared__ arrays as (name, offset, bytes, itemsize, shape).
    """

    kernel: str
    block: int
    warps: int
    copies: list = field(default_factory=list)
    stages: dict = field(default_factory=dict)
    shared: list = field(default_factory=list)
    steps: int = 0


def _shown(text):
    """An instruction as the picture shows it: one statement, single spaces (inline asm from
    library headers keeps its own spacing, which differs between CCCL versions)."""
    return " ".join(text.split(";")[0].split())


class PipelineTrace(Observer):
    """Follows the async copies, commits, waits and mbarrier waits of the warps of block ``block``."""

    def __init__(self, kernel, block=0, shared=()):
        self.data = PipelineData(kernel, block, 0, shared=list(shared))
        self.block = block
        self.pending = {}          # (lane, shared offset) -> index in data.copies, until the bytes land
        self.commits = {}          # warp -> cp.async groups committed
        self.current = {}          # warp -> (line, text, step) of the last wait-like instruction
        self.stride = 16
        self.active = False

    def on_launch_start(self, launch):
        self.stride = max(16, (int(launch.get("shared", 0)) + 15) // 16 * 16)

    def on_batch_start(self, batch):
        k = self.block - batch.first_block
        self.active = 0 <= k < batch.nblocks
        self.k, self.lpb = k, batch.lanes_per_block
        self.data.warps = batch.lanes_per_block // 32

    def _mine(self, lanes):
        lanes = np.asarray(lanes, np.int64)
        m = (lanes // self.lpb) == self.k
        return lanes[m], m

    def _warps(self, lanes):
        return ((lanes % self.lpb) // 32).astype(int)

    def on_instruction(self, ev):
        inst = ev.inst
        if not self.active or inst.opcode not in ("cp", "mbarrier"):
            return
        lanes, _ = self._mine(ev.lanes)
        if lanes.size == 0:
            return
        mods = inst.mods
        self.data.steps += 1
        for w in np.unique(self._warps(lanes)).tolist():
            if inst.opcode == "cp" and "commit_group" in mods and "bulk" not in mods:
                self.commits[w] = self.commits.get(w, 0) + 1
            if "wait_group" in mods or "wait_all" in mods or "try_wait" in mods or "test_wait" in mods:
                self.current[w] = (inst.line or 0, _shown(inst.text), self.data.steps)

    def on_async(self, ev):
        if not self.active or ev.kind not in ("issue", "land", "observe"):
            return
        lanes, m = self._mine(ev.lanes)
        if lanes.size == 0:
            return
        self.data.steps += 1
        if ev.kind == "issue":
            return self._issue(ev, lanes, np.asarray(ev.addresses, np.int64)[m])
        if ev.kind == "land":
            return self._land(ev, lanes, np.asarray(ev.addresses, np.int64)[m], ev.barrier[m], ev.phase[m])
        for w, slot, seen in zip(self._warps(lanes).tolist(), ev.barrier[m].tolist(), ev.phase[m].tolist()):
            for p in range(seen):          # the phases this warp has now seen complete
                st = self.data.stages.get(("barrier", slot, p))
                if st is not None and w not in st["waits"]:
                    st["waits"][w] = self.current.get(w, (ev.inst.line or 0, _shown(ev.inst.text), self.data.steps))

    def _issue(self, ev, lanes, addrs):
        warps = self._warps(lanes)
        for w in np.unique(warps).tolist():
            sel = warps == w
            rec = dict(warp=w, line=ev.inst.line or 0, text=_shown(ev.inst.text),
                       bytes=int(sel.sum()) * int(ev.size), copies=int(np.unique(lanes[sel]).size),
                       dst=(int(addrs[sel].min()), int(addrs[sel].max()) + int(ev.size)),
                       group=self.commits.get(w, 0), stage=None, step=self.data.steps)
            self.data.copies.append(rec)
            for lane, a in zip(lanes[sel].tolist(), addrs[sel].tolist()):
                self.pending[(lane, a)] = len(self.data.copies) - 1

    def _land(self, ev, lanes, addrs, slots, phases):
        for lane, a, slot, phase in zip(lanes.tolist(), addrs.tolist(), slots.tolist(), phases.tolist()):
            k = self.pending.pop((lane, a), None)
            if k is None:
                continue
            rec = self.data.copies[k]
            key = ("group", rec["group"]) if slot < 0 else ("barrier", slot, phase)
            if rec["stage"] is None:
                rec["stage"] = key
            st = self.data.stages.get(key)
            if st is None:
                st = self.data.stages[key] = dict(label=self._label(key), landed=self.data.steps, waits={})
            w = rec["warp"]
            if slot < 0 and w not in st["waits"]:       # the issuing warp's own cp.async wait
                st["waits"][w] = self.current.get(w, (ev.inst.line or 0, "", self.data.steps))

    def _label(self, key):
        if key[0] == "group":
            return f"cp.async group {key[1]}"
        offset = key[1] * 8 - self.k * self.stride
        return f"mbarrier {shared_name(self.data.shared, offset, offset + 8)} phase {key[2]}"


def shared_name(shared, lo, hi):
    """``tile[1][0:128]``-style name of the shared bytes [lo, hi): the elements of the array holding them."""
    for name, offset, nbytes, itemsize, shape in shared:
        if not offset <= lo < offset + nbytes:
            continue
        a, b = (lo - offset) // itemsize, (min(hi, offset + nbytes) - offset - 1) // itemsize
        if nbytes == itemsize or (lo == offset and hi >= offset + nbytes):   # the whole variable
            return name
        ia, ib = np.unravel_index(a, shape), np.unravel_index(b, shape)
        if len(shape) > 1 and tuple(ia[:-1]) == tuple(ib[:-1]):        # within one row
            return name + "".join(f"[{i}]" for i in ia[:-1]) + f"[{ia[-1]}:{ib[-1] + 1}]"
        return f"{name}[{a}]" if a == b else f"{name}[{a}:{b + 1}] (flat)" if len(shape) > 1 else f"{name}[{a}:{b + 1}]"
    return f"shared bytes {lo}:{hi}"


def pipeline(kernel, grid, block, args=(), shared: int = 0, watch_block: int = 0):
    """Launch ``kernel`` on the emulator following block ``watch_block``'s async copies; returns the
    LaunchRecord with ``rec.reports["pipeline"]`` (PipelineData). Arrays are copied back as usual."""
    from .observe import shared_vars
    from ..runtime.module import specialized
    kernel = specialized(kernel, args)
    source = kernel.module.source
    svars = shared_vars(kernel, source)
    tracer = PipelineTrace(kernel.name, watch_block,
                           [(v.name, v.offset, v.nbytes, v.itemsize, v.shape) for v in svars.values()])
    rec = _launch(kernel, grid, block, args, shared, tracer)
    rec.reports["pipeline"] = tracer.data
    return rec


def _launch(kernel, grid, block, args, shared, tracer):
    from ..runtime.arrays import to_device
    dev, copies = [], []
    for a in args:
        if isinstance(a, np.ndarray) and a.ndim > 0:
            d = to_device(a)
            copies.append((a, d))
            a = d
        dev.append(a)
    try:
        return kernel.launch(grid, block, tuple(dev), shared=shared, observers=[tracer])
    finally:
        for host, d in copies:
            if host.flags.writeable:
                host[...] = d.copy_to_host()
            d.free()


def pipeline_model(data: PipelineData, stage=None, warp=None) -> dict:
    """Plain data of the picture: stages in the order they landed, and per (warp, stage) cell what the
    warp issued for the stage and the wait that gave it the data."""
    order = sorted(data.stages, key=lambda k: data.stages[k]["landed"])
    cells = {}
    for rec in data.copies:
        if rec["stage"] is None:
            continue
        c = cells.setdefault((rec["warp"], order.index(rec["stage"])), dict(issued=[], wait=None))
        c["issued"].append(rec)
    for s, key in enumerate(order):
        for w, wait in data.stages[key]["waits"].items():
            cells.setdefault((w, s), dict(issued=[], wait=None))["wait"] = wait
    stages = []
    for key in order:
        recs = [r for r in data.copies if r["stage"] == key]
        lo = min((r["dst"][0] for r in recs), default=0)
        hi = max((r["dst"][1] for r in recs), default=0)
        stages.append(dict(label=data.stages[key]["label"], bytes=sum(r["bytes"] for r in recs),
                           dst=shared_name(data.shared, lo, hi) if recs else "", landed=data.stages[key]["landed"]))
    in_flight = [r for r in data.copies if r["stage"] is None]
    warps = sorted({w for w, _ in cells} | {r["warp"] for r in data.copies})
    if (warp, stage) not in cells:           # the first cell of the first stage
        first = min(cells, key=lambda c: (c[1], c[0]), default=(None, None))
        warp, stage = first
    return dict(kernel=data.kernel, block=data.block, warps=warps, stages=stages, cells=cells,
                never_landed=len(in_flight), chosen=(stage, warp))


def render_svg(m) -> str:
    left, top, cw, ch = 70, 92, 140, 38
    ns, nw = len(m["stages"]), len(m["warps"])
    svg = Svg(left + max(ns, 1) * cw + 20, top + max(nw, 1) * ch + 50)
    svg.text(10, 16, f"{m['kernel']}: async-copy pipeline of block {m['block']}: {ns} stage"
             f"{'s' * int(ns != 1)}, {nw} warp{'s' * int(nw != 1)} taking part", 12, bold=True)
    if m["never_landed"]:
        svg.text(10, 32, f"{m['never_landed']} copies were never waited for (their bytes never landed)", 10,
                 fill="#a50f15")
    for s, st in enumerate(m["stages"]):
        x = left + s * cw
        how, _, phase = st["label"].partition(" phase ")
        svg.text(x + cw / 2, top - 42, f"stage {s}", 10, "middle", bold=True)
        svg.text(x + cw / 2, top - 30, how + (f", phase {phase}" if phase else ""), 8, "middle")
        svg.text(x + cw / 2, top - 18, st["dst"], 9, "middle", fill="#555")
        svg.text(x + cw / 2, top - 6, f"{st['bytes']} B", 9, "middle", fill="#555")
    for r, w in enumerate(m["warps"]):
        y = top + r * ch
        svg.text(left - 8, y + ch / 2 + 4, f"warp {w}", 10, "end")
        for s in range(ns):
            c = m["cells"].get((w, s))
            x = left + s * cw
            if c is None:
                svg.rect(x, y, cw - 4, ch - 4, "#f4f4f4")
                continue
            fill = BOTH if c["issued"] and c["wait"] else ISSUED if c["issued"] else WAITED
            tip = _cell_text(c)
            svg.rect(x, y, cw - 4, ch - 4, fill, "#e31a1c" if (s, w) == m["chosen"] else "#333",
                     2 if (s, w) == m["chosen"] else 0.5, title=tip, pick=f"c:{s}:{w}")
            if c["issued"]:
                n = sum(i["bytes"] for i in c["issued"])
                svg.text(x + 4, y + 13, f"issued {n} B (line {c['issued'][0]['line']})", 9, fill="white")
            if c["wait"]:
                svg.text(x + 4, y + 27, f"waited at line {c['wait'][0]}", 9, fill="white")
    legend(svg, left, top + nw * ch + 24, [(ISSUED, "issued copies"), (WAITED, "waited for the stage"),
                                           (BOTH, "issued and waited")])
    return str(svg)


def _cell_text(c):
    parts = [f"{i['copies']} thread(s) issued {i['bytes']} B: {i['text']} (line {i['line']})" for i in c["issued"]]
    if c["wait"]:
        parts.append(f"got the data through: {c['wait'][1]} (line {c['wait'][0]})")
    return "; ".join(parts)


def details_html(m) -> str:
    s, w = m["chosen"]
    if s is None:
        return "<div>No async copies landed in this block.</div>"
    c = m["cells"][(w, s)]
    rows = [("issued", f"line {i['line']}", f"{i['copies']} threads, {i['bytes']} B", i["text"]) for i in c["issued"]]
    if c["wait"]:
        rows.append(("waited", f"line {c['wait'][0]}", "", c["wait"][1]))
    head = f"<div><b>warp {w}, {esc(m['stages'][s]['label'])}</b> ({esc(m['stages'][s]['dst'])})</div>"
    return head + table_html(rows, ["", "where", "how much", "PTX"])

