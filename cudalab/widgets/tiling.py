"""Shared-memory tiling: between two ``__syncthreads()``, which tile of each global array a block copied
into shared memory, and which shared elements one thread then read."""
from __future__ import annotations

import numpy as np

from .observe import KINDS, SPACES
from .svg import Svg, esc, grid, legend, table_html

MAX_CELLS = 64      # a panel draws at most 64 x 64 cells; bigger arrays are binned


def _grid_shape(shape):
    if len(shape) >= 2:
        return int(np.prod(shape[:-1])), int(shape[-1])
    n = int(shape[0])
    width = min(n, 32)
    return -(-n // width), width


def _mask(shape, elements):
    rows, cols = _grid_shape(shape)
    m = np.zeros(rows * cols, bool)
    m[np.asarray(elements, np.int64)] = True
    return m.reshape(rows, cols)


def _span(mask):
    """'rows a:b, columns c:d' of the True cells (half-open, like Python slices)."""
    r, c = np.nonzero(mask)
    if len(r) == 0:
        return ""
    return f"[{r.min()}:{r.max() + 1}, {c.min()}:{c.max() + 1}]"


def phases(trace) -> int:
    return trace.barriers + 1


def tiling_model(trace, phase=0, block=0, thread=0) -> dict:
    """Plain data for one barrier phase of one sampled block (position ``block``) and one of its threads."""
    tpb = trace.threads_per_block
    phase = int(min(max(phase, 0), phases(trace) - 1))
    acc, ev = trace.access, trace.events
    t = acc["thread"]
    mine = (t // tpb == block) & (acc["phase"] == phase)
    space = ev["space"][acc["event"]]
    kind = ev["kind"][acc["event"]]
    me = t == block * tpb + thread
    panels = []
    for a in trace.arrays.values():
        off = acc["address"] - a.address
        inside = mine & (space == SPACES.index("global")) & (off >= 0) & (off < a.size * a.itemsize)
        elem = off // a.itemsize
        rd = inside & (kind == KINDS.index("ld"))
        wr = inside & (kind != KINDS.index("ld"))
        if not inside.any():
            continue
        panels.append(dict(kind="global", name=a.name, shape=_grid_shape(a.shape),
                           block_read=_mask(a.shape, elem[rd]), block_wrote=_mask(a.shape, elem[wr]),
                           thread=_mask(a.shape, elem[inside & me])))
    for v in trace.shared.values():
        off = acc["address"] - v.offset
        inside = mine & (space == SPACES.index("shared")) & (off >= 0) & (off < v.nbytes)
        elem = off // v.itemsize
        wr = inside & (kind != KINDS.index("ld"))
        panels.append(dict(kind="shared", name=v.name, shape=_grid_shape(v.shape),
                           block_wrote=_mask(v.shape, elem[wr]), block_read=_mask(v.shape, elem[inside & ~wr]),
                           thread=_mask(v.shape, elem[inside & me & ~wr]),
                           thread_wrote=_mask(v.shape, elem[inside & me & wr])))
    copied = [f"{p['name']}{_span(p['block_read'])}" for p in panels if p["kind"] == "global" and p["block_read"].any()]
    filled = [f"{p['name']}{_span(p['block_wrote'])}" for p in panels if p["kind"] == "shared" and p["block_wrote"].any()]
    read = [f"{p['name']}: {int(p['thread'].sum())} elements" for p in panels if p["kind"] == "shared" and p["thread"].any()]
    n = phases(trace)
    where = ("before the first __syncthreads()" if phase == 0 else
             f"after __syncthreads() number {phase}" + ("" if phase == n - 1 else f", before number {phase + 1}"))
    return dict(kernel=trace.kernel, phase=phase, phases=n, where=where, block=int(trace.blocks[block]),
                block_pos=block, thread=thread, thread_idx=trace.thread_index(thread), panels=panels,
                copied=copied, filled=filled, read=read, note=trace.note)


def _binned(mask, rows, cols):
    """Shrink a bool grid to at most MAX_CELLS per side (a cell is on if any element in it is)."""
    fr, fc = -(-rows // MAX_CELLS), -(-cols // MAX_CELLS)
    if fr == 1 and fc == 1:
        return mask, 1, 1
    pad = np.zeros((-(-rows // fr) * fr, -(-cols // fc) * fc), bool)
    pad[:rows, :cols] = mask
    return pad.reshape(pad.shape[0] // fr, fr, pad.shape[1] // fc, fc).any(axis=(1, 3)), fr, fc


def render_svg(m) -> str:
    size = 180
    gap = 30
    panels = m["panels"]
    width = max(720, len(panels) * (size + gap) + 20)
    top = 76
    svg = Svg(width, top + size + 120)
    svg.text(10, 16, f"{m['kernel']}: phase {m['phase'] + 1} of {m['phases']} ({m['where']}), block {m['block']}",
             12, bold=True)
    svg.text(10, 34, ("copied " + ", ".join(m["copied"]) + " into " + ", ".join(m["filled"])) if m["filled"] else
             ("read " + ", ".join(m["copied"]) if m["copied"] else "no global reads in this phase"), 11)
    t = m["thread_idx"]
    svg.text(10, 52, f"thread ({t[0]}, {t[1]}, {t[2]}) read " + ("; ".join(m["read"]) or "nothing") +
             " from shared memory in this phase", 11)
    x = 10
    for p in panels:
        rows, cols = p["shape"]
        cell = size / max(rows, cols, 1)
        fill = p["block_read"] if p["kind"] == "global" else p["block_wrote"]
        other = p["block_wrote"] if p["kind"] == "global" else p["block_read"]
        fill, fr, fc = _binned(fill, rows, cols)
        other, _, _ = _binned(other, rows, cols)
        mine, _, _ = _binned(p["thread"], rows, cols)
        cell = size / max(fill.shape)
        svg.text(x, top - 6, f"{p['name']} ({p['kind']}, {rows}x{cols})" + (" binned" if fr * fc > 1 else ""), 11,
                 bold=True)
        colours = np.where(mine, "#d62728", np.where(fill, "#6baed6", np.where(other, "#c7e9c0", "#f3f3f3")))
        name = p["name"]
        grid(svg, x, top, cell, colours, lambda r, c: f"{name}[{r * fr}][{c * fc}]",
             (lambda r, c: f"s:{name}:{r * cols + c}") if p["kind"] == "shared" and fr * fc == 1 else None)
        x += size + gap
    legend(svg, 10, top + size + 30, [("#6baed6", "global: read by the block / shared: written by the block"),
                                      ("#c7e9c0", "shared: read by the block"),
                                      ("#d62728", "read by the chosen thread")])
    svg.text(10, top + size + 52, "Click a shared element to choose the thread that wrote it.", 10, fill="#555")
    svg.text(10, top + size + 70, m["note"], 9, fill="#555")
    return str(svg)


def details_html(m) -> str:
    rows = [("phase", f"{m['phase'] + 1} of {m['phases']}: {m['where']}"), ("block", m["block"]),
            ("copied from global", ", ".join(m["copied"]) or "-"), ("into shared", ", ".join(m["filled"]) or "-"),
            ("the thread read from shared", "; ".join(m["read"]) or "-")]
    return table_html(rows) + f"<div style='color:#555'>{esc(m['note'])}</div>"


def writer_of(trace, phase, block, name, element):
    """The thread (linear, in the block) that wrote shared ``name[element]`` in ``phase``, or None."""
    v = trace.shared[name]
    acc, tpb = trace.access, trace.threads_per_block
    hit = ((acc["thread"] // tpb == block) & (acc["phase"] == phase) & (acc["address"] == v.offset + element * v.itemsize)
           & (trace.events["space"][acc["event"]] == SPACES.index("shared"))
           & (trace.events["kind"][acc["event"]] != KINDS.index("ld")))
    rows = np.flatnonzero(hit)
    return int(acc["thread"][rows[0]] % tpb) if len(rows) else None
