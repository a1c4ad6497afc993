"""Coalescing: one warp's global access against 32-byte sectors and 128-byte lines, wasted bytes shaded."""
from __future__ import annotations

import numpy as np

from ..analysis.global_sectors import SECTOR_BYTES, global_sectors, sector_map
from .observe import KINDS
from .svg import Svg, category, table_html

LINE_BYTES = 128


def coalescing_model(trace, line=None, inst=None, block=0, warp=0, occurrence=0) -> dict:
    """Plain data for the sector picture of one warp's execution of one global-memory instruction."""
    inst = trace.pick_instruction("global", inst, line)
    lanes, addresses, size, occurrences = trace.warp_access(inst, block, warp, occurrence)
    sm = sector_map(lanes, addresses, size, 0)
    nsec = len(sm.sector_address)
    used = np.zeros(nsec * SECTOR_BYTES, bool)
    byte = (np.asarray(sm.address)[:, None] + np.arange(size)).ravel()
    sec = np.searchsorted(sm.sector_address, byte // SECTOR_BYTES * SECTOR_BYTES)
    used[sec * SECTOR_BYTES + byte % SECTOR_BYTES] = True
    used = used.reshape(nsec, SECTOR_BYTES)
    lines = np.unique(sm.sector_address // LINE_BYTES)
    e = int(np.flatnonzero(trace.events["inst"] == inst)[0])
    rows = np.flatnonzero(trace.events["inst"][trace.access["event"]] == inst)
    requests = sectors = ideal = 0
    for ev in np.unique(trace.access["event"][rows]):
        r = rows[trace.access["event"][rows] == ev]
        g = global_sectors(trace.lanes(trace.access["thread"][r]), trace.access["address"][r],
                           int(trace.events["size"][ev]), atomic=KINDS[trace.events["kind"][ev]] in ("atom", "red"))
        requests += g.requests
        sectors += int(g.sectors.sum())
        ideal += int(g.ideal_sectors.sum())
    names = sorted({trace.element(a)[0] or "?" for a in addresses})
    return dict(inst=inst, line=int(trace.events["line"][e]), text=trace.events["text"][e],
                source=trace.source_line(int(trace.events["line"][e])), arrays=names, size=size,
                block=int(trace.blocks[block]), warp=warp, occurrence=min(occurrence, occurrences - 1),
                occurrences=occurrences, lane=sm.lane, address=sm.address, sector=sm.sector,
                sector_address=sm.sector_address, used=used, sectors=nsec, lines=len(lines),
                line_address=lines * LINE_BYTES, line_label=[_label(trace, a) for a in lines * LINE_BYTES],
                requested=len(sm.lane) * size,
                wasted=int((~used).sum()), launch_requests=requests, launch_sectors=sectors, launch_ideal=ideal,
                sectors_per_request=sectors / max(requests, 1), ideal_per_request=ideal / max(requests, 1),
                note=trace.note, instructions=trace.instructions("global"))


def _label(trace, address):
    """'in + 384 B': where a 128-byte line starts, relative to the array it falls in."""
    for a in trace.arrays.values():
        if a.address <= address + LINE_BYTES and address < a.address + a.size * a.itemsize:
            return f"{a.name} {'+' if address >= a.address else '-'} {abs(int(address) - a.address)} B"
    return f"0x{int(address):x}"


def render_svg(m) -> str:
    lane_w, left = 24, 70
    line_addr = list(m["line_address"])
    per_row = min(8, len(line_addr))                # 128-byte lines per row of the picture
    sec_w = lane_w * 32 / (per_row * 4)
    shown = line_addr[:4 * 8]
    nrows = max(1, -(-len(shown) // per_row))
    top = 70
    strip = top + 90
    height = strip + nrows * 70 + 60
    svg = Svg(left + 32 * lane_w + 30, height)
    what = f"line {m['line']}: {m['source']}" if m["source"] else m["text"]
    svg.text(10, 16, what[:110], 12, bold=True)
    svg.text(10, 34, f"block {m['block']}, warp {m['warp']} (execution {m['occurrence'] + 1} of {m['occurrences']}): "
             f"{len(m['lane'])} lanes x {m['size']} bytes of {', '.join(m['arrays'])}", 11)
    bad = m["sectors"] > -(-m["requested"] // 32) * 1.2
    svg.text(10, 52, f"{m['sectors']} sectors of 32 bytes in {m['lines']} line{'s' * (m['lines'] > 1)} of 128 bytes "
             f"for {m['requested']} bytes asked: {m['wasted']} bytes fetched for nothing",
             13, bold=True, fill="#a50f15" if bad else "#006d2c")
    svg.text(left - 8, top + 15, "lane", 10, "end")
    for i in range(32):
        svg.rect(left + i * lane_w, top, lane_w - 2, 20, "#deebf7", "#6baed6", title=f"lane {i}")
        svg.text(left + i * lane_w + lane_w / 2 - 1, top + 14, str(i), 9, "middle")

    def sector_x(sector_address):
        li = shown.index(sector_address // LINE_BYTES * LINE_BYTES)
        r, c = divmod(li, per_row)
        return left + c * 4 * sec_w + (sector_address % LINE_BYTES) // SECTOR_BYTES * sec_w, strip + r * 70

    for li, la in enumerate(shown):
        r, c = divmod(li, per_row)
        x, y = left + c * 4 * sec_w, strip + r * 70
        svg.rect(x, y - 3, 4 * sec_w - 2, 32, "none", "#555", 1, dash="3,2", title=f"128-byte line at 0x{la:x}")
        svg.text(x + 2, y + 42, m["line_label"][li], 8, fill="#555")
    for s, sa in enumerate(m["sector_address"]):
        if sa // LINE_BYTES * LINE_BYTES not in shown:
            continue
        x, y = sector_x(sa)
        u = m["used"][s]
        svg.rect(x + 1, y, sec_w - 4, 26, "#fcbba1", "#a50f15", 1,
                 title=f"sector 0x{sa:x}: {int(u.sum())} of 32 bytes used")
        runs = np.flatnonzero(np.diff(np.r_[0, u.astype(int), 0]))
        for a, b in zip(runs[::2], runs[1::2]):
            svg.rect(x + 1 + a * (sec_w - 4) / 32, y, (b - a) * (sec_w - 4) / 32, 26, "#74c476")
    for j, lane in enumerate(m["lane"]):
        sa = m["sector_address"][m["sector"][j]]
        if sa // LINE_BYTES * LINE_BYTES not in shown:
            continue
        x, y = sector_x(sa)
        bx = x + 1 + (m["address"][j] % SECTOR_BYTES) * (sec_w - 4) / 32
        svg.line(left + lane * lane_w + lane_w / 2 - 1, top + 20, bx, y, category(m["sector"][j]), 1.3, 0.8,
                 title=f"lane {lane}: address 0x{m['address'][j]:x}, sector {m['sector'][j] + 1}")
    if len(line_addr) > len(shown):
        svg.text(10, height - 40, f"... {len(line_addr) - len(shown)} more lines not drawn", 10, fill="#a50f15")
    svg.text(left, height - 26, "green: bytes a thread asked for; red: fetched with the sector but unused", 10,
             fill="#555")
    svg.text(10, height - 10, f"All recorded warps at this instruction: {m['sectors_per_request']:.2f} sectors per "
             f"request (ideal {m['ideal_per_request']:.2f}). {m['note']}", 10, fill="#555")
    return str(svg)


def details_html(m) -> str:
    rows = [("instruction", f"{m['inst']}: {m['text']}"), ("sectors (this request)", m["sectors"]),
            ("128-byte lines", m["lines"]), ("bytes asked / fetched", f"{m['requested']} / {m['sectors'] * 32}"),
            ("sectors per request (recorded warps)", f"{m['sectors_per_request']:.2f}")]
    return table_html(rows)
