"""Occupancy calculator: blocks per SM allowed by warps, blocks, registers and shared memory, the
limiting one highlighted, and occupancy over every block size (numbers from cudalab.device.occupancy)."""
from __future__ import annotations

from ..device.occupancy import BIG, LIMITS, occupancy
from .svg import Svg, esc, table_html


def occupancy_model(block_size=256, registers=32, shared=0, device=None, cluster=1) -> dict:
    """Plain data: cudalab.device.occupancy for a block size, registers per thread and shared bytes per block;
    with ``cluster`` blocks per cluster (compute capability 9.0), how many clusters are resident at once
    (cudalab.device.clusters)."""
    o = occupancy((int(registers), int(shared)), int(block_size), device=device)
    m = dict(device=o.device, block_size=o.block_size, registers=o.registers_per_thread, shared=int(shared),
             active_blocks=o.active_blocks, active_warps=o.active_warps, max_warps=o.max_warps,
             occupancy=o.occupancy, limiter=o.limiter, limiters=o.limiters,
             limits={k: (None if v >= BIG else v) for k, v in o.block_limits.items()},
             curve=o.curve, summary=o.summary(), reason=o.reason, clusters=None)
    from ..device.profiles import get
    from ..device import current
    p = get(device) if device is not None else current()
    if p.cc >= (9, 0) and p.sms:
        from ..device.clusters import max_active_clusters
        c = max_active_clusters((int(registers), int(shared)), int(block_size), int(cluster), device=p,
                                non_portable=int(cluster) > 8)
        m["clusters"] = dict(size=c.cluster_size, resident=c.max_active_clusters, measured=c.measured,
                             summary=c.summary())
    return m


def render_svg(m) -> str:
    svg = Svg(760, 330)
    svg.text(10, 18, f"{m['device']}: {m['block_size']} threads/block, {m['registers']} registers/thread, "
             f"{m['shared']:,} B shared/block", 12, bold=True)
    svg.text(10, 38, f"{m['active_blocks']} blocks = {m['active_warps']} of {m['max_warps']} warps per SM: "
             f"occupancy {m['occupancy']:.0%}, limited by {' and '.join(m['limiters'])}", 12,
             fill="#a50f15" if m["occupancy"] < 0.5 else "#006d2c")
    svg.text(10, 64, "blocks per SM each resource allows", 10, fill="#555")
    most = max([v for v in m["limits"].values() if v] + [1])
    for i, k in enumerate(LIMITS):
        v = m["limits"][k]
        y = 74 + i * 26
        hot = k in m["limiters"]
        svg.text(110, y + 15, k, 11, "end", bold=hot)
        w = 200 * (v if v is not None else most) / most
        svg.rect(116, y, max(w, 1), 20, "#e15759" if hot else "#9ecae1", title=f"{k}: {v if v is not None else 'no limit'}")
        svg.text(120 + max(w, 1), y + 15, "no limit" if v is None else str(v), 10)
    # curve: occupancy over block sizes
    x0, y0, w, h = 400, 70, 330, 200
    svg.rect(x0, y0, w, h, "#fafafa", "#ccc")
    curve = m["curve"]
    top = max((c["block_size"] for c in curve), default=1024)
    for frac in (0, 0.5, 1):
        svg.text(x0 - 4, y0 + h - frac * h + 4, f"{frac:.0%}", 9, "end", "#555")
    for c in curve:
        x = x0 + c["block_size"] / top * w
        bh = c["occupancy"] * h
        chosen = c["block_size"] == m["block_size"]
        svg.rect(x - w / len(curve) + 1, y0 + h - bh, max(w / len(curve) - 1, 1), bh,
                 "#e15759" if chosen else "#6baed6",
                 title=f"{c['block_size']} threads: {c['occupancy']:.0%} ({c['active_blocks']} blocks), "
                       f"limited by {c['limiter']}", pick=f"bs:{c['block_size']}")
    svg.text(x0 + w / 2, y0 + h + 28, "threads per block (click a bar)", 10, "middle", "#555")
    for bs in (32, top // 2, top):
        svg.text(x0 + bs / top * w, y0 + h + 13, str(bs), 9, "middle", "#555")
    svg.text(x0, y0 - 8, "occupancy over block sizes", 10, fill="#555")
    if m["reason"]:
        svg.text(10, 300, m["reason"][:120], 10, fill="#a50f15")
    elif m.get("clusters"):
        c = m["clusters"]
        svg.text(10, 300, f"clusters of {c['size']} block{'s' * (c['size'] > 1)}: {c['resident']} resident on the GPU at "
                 f"once{' (H100 driver)' if c['measured'] else ' (upper bound)'}", 10, fill="#555")
    return str(svg)


def details_html(m) -> str:
    extra = f"<div>{esc(m['clusters']['summary'])}</div>" if m.get("clusters") else ""
    return (f"<div>{esc(m['summary'])}</div>{extra}" +
            table_html([(k, "no limit" if v is None else v) for k, v in m["limits"].items()],
                       ["resource", "blocks per SM"]))
