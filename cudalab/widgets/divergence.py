"""Divergence: for each warp, which of its 32 lanes ran each source line, and how busy the warp was."""
from __future__ import annotations

import numpy as np

from ..analysis.divergence import possible_lanes
from ..emulator.events import BatchInfo
from .svg import Svg, category, sequential, table_html


def _possible(trace):
    """Lanes each sampled warp has at all (the last warp of a block may be short)."""
    b = BatchInfo(0, len(trace.blocks), trace.grid, trace.block, trace.threads_per_block, trace.warps_per_block * 32)
    return possible_lanes(np.arange(len(trace.blocks) * trace.warps_per_block), b)


def divergence_model(trace, block=0, warp=0) -> dict:
    """Plain data for one warp's lane-by-line picture, with every sampled warp's efficiency."""
    possible = _possible(trace)
    eff = trace.thread_insts.sum(axis=1) / np.maximum(trace.warp_insts.sum(axis=1) * possible, 1)
    w = block * trace.warps_per_block + warp
    ran = trace.warp_insts[w] > 0
    lines = trace.lines[ran]
    mask = trace.warp_mask[w, ran]
    lanes = (mask[:, None] >> np.arange(32)) & 1
    # a lane's path: the set of lines it ran; lanes with the same set took the same path
    _, path = np.unique(lanes.T, axis=0, return_inverse=True)
    per_line = trace.thread_insts[w, ran] / np.maximum(trace.warp_insts[w, ran] * possible[w], 1)
    branches = [(int(line), *trace.branches[int(line)]) for line in lines if int(line) in trace.branches]
    return dict(kernel=trace.kernel, block=int(trace.blocks[block]), block_pos=block, warp=warp,
                warps_per_block=trace.warps_per_block, lines=lines.tolist(),
                source=[trace.source_line(int(line)) for line in lines], lanes=lanes.astype(bool),
                path=path.ravel(), paths=int(path.max()) + 1 if len(path) else 0, line_efficiency=per_line,
                efficiency=float(eff[w]), all_efficiency=eff, possible=int(possible[w]), branches=branches,
                warp_insts=int(trace.warp_insts[w].sum()), thread_insts=int(trace.thread_insts[w].sum()),
                note=trace.note, sampled_blocks=trace.blocks.tolist())


def render_svg(m) -> str:
    cw, ch, left = 18, 18, 34
    src_x = left + 32 * cw + 60
    nl = len(m["lines"])
    top = 100
    svg = Svg(src_x + 300, top + nl * ch + 70)
    svg.text(10, 16, f"{m['kernel']}: warp {m['warp']} of block {m['block']}: {m['paths']} path"
             f"{'s' * int(m['paths'] != 1)} through the code, lanes busy {m['efficiency']:.0%} of the time", 12,
             bold=True, fill="#a50f15" if m["paths"] > 1 else "#006d2c")
    svg.text(10, 34, "Every recorded warp (click one): bar height = share of lanes busy", 10, fill="#555")
    eff = m["all_efficiency"]
    bw = max(3, min(14, (src_x + 280) // max(len(eff), 1)))
    wpb = m["warps_per_block"]
    chosen = m["block_pos"] * wpb + m["warp"]
    colours = sequential(eff, 0, 1)
    for i, e in enumerate(eff):
        h = 30 * e
        svg.rect(10 + i * bw, 70 - h, bw - 1, max(h, 1), "#e31a1c" if i == chosen else colours[i],
                 title=f"block {m['sampled_blocks'][i // wpb]}, warp {i % wpb}: {e:.0%} of lanes busy",
                 pick=f"w:{i}")
    svg.text(left - 4, top - 6, "line", 9, "end", "#555")
    for c in range(0, 32, 4):
        svg.text(left + c * cw + cw / 2, top - 6, str(c), 9, "middle", "#555")
    svg.text(left + 32 * cw + 4, top - 6, "busy", 9, fill="#555")
    for r, line in enumerate(m["lines"]):
        y = top + r * ch
        svg.text(left - 4, y + ch * 0.7, str(line), 9, "end")
        for lane in range(32):
            on = m["lanes"][r, lane]
            svg.rect(left + lane * cw, y, cw - 1, ch - 1, category(m["path"][lane]) if on else "#f3f3f3",
                     title=f"lane {lane} {'ran' if on else 'did not run'} line {line} (path {m['path'][lane] + 1})")
        e = m["line_efficiency"][r]
        svg.rect(left + 32 * cw + 4, y + 3, 50 * e, ch - 7, "#9ecae1")
        svg.text(left + 32 * cw + 8, y + ch * 0.7, f"{e:.0%}", 9)
        svg.text(src_x, y + ch * 0.7, m["source"][r][:48], 10, fill="#333")
    y = top + nl * ch + 20
    svg.text(10, y, "A coloured cell: that lane ran the line; colours are paths (lanes that ran the same lines).", 10,
             fill="#555")
    svg.text(10, y + 16, m["note"], 9, fill="#555")
    return str(svg)


def details_html(m) -> str:
    rows = [("warp instructions", f"{m['warp_insts']:,}"), ("thread instructions", f"{m['thread_insts']:,}"),
            ("lanes busy", f"{m['efficiency']:.1%} of {m['possible']} lanes")]
    for line, warps, split in m["branches"]:
        rows.append((f"branch at line {line}", f"split {split} of {warps} recorded warp executions"))
    return table_html(rows)
