"""Stream overlap: a Gantt chart of copies (per copy engine) and kernels (per stream) from timeline rows.

A row is a dict ``stream, engine, kind, name, start, end`` (times in µs; ``kind`` is "H2D", "D2H",
"kernel", ...; ``engine`` names the copy engine a copy used, or "" / None for kernels), as
``cudalab.device.timeline`` produces. Two timelines (1 stream vs N) can be drawn on one time axis.
"""
from __future__ import annotations

from .svg import Svg, esc, legend, table_html

KIND_COLOUR = {"H2D": "#4e79a7", "D2H": "#59a14f", "kernel": "#f28e2b", "memset": "#b07aa1"}


COPIES = ("H2D", "D2H", "D2D", "memset")
UNIT = "µs"


def _track(row):
    if row.get("stream") == "host":
        return "host"
    if row.get("kind") not in COPIES or not row.get("engine"):
        return f"stream {row.get('stream', 0)}"
    engine = str(row["engine"])
    return engine if engine.startswith("copy engine") else f"copy engine {engine}"


def timeline_model(rows, title="") -> dict:
    """Tracks (one per copy engine, then one per stream), bars, the total time and how much of it had
    a copy and a kernel running at once."""
    rows = [dict(r) for r in rows]
    t0 = min((r["start"] for r in rows), default=0.0)
    tracks = sorted({_track(r) for r in rows}, key=lambda t: (not t.startswith("copy"), t))
    bars = [dict(track=tracks.index(_track(r)), name=r.get("name", ""), kind=r.get("kind", ""),
                 stream=r.get("stream", 0), start=r["start"] - t0, end=r["end"] - t0) for r in rows]
    total = max((b["end"] for b in bars), default=0.0)
    busy = {"kernel": _union(b for b in bars if b["kind"] == "kernel"),
            "copy": sum(b["end"] - b["start"] for b in bars if b["kind"] in COPIES)}
    return dict(title=title, tracks=tracks, bars=bars, total=total, busy=busy, overlap=_overlap(bars))


def _union(bars) -> float:
    """Time during which at least one of ``bars`` runs: kernels of different streams may run side by
    side on the SMs (the timeline's concurrent kernels), and their time together is not their sum."""
    total, reach = 0.0, None
    for b in sorted(bars, key=lambda b: b["start"]):
        start = b["start"] if reach is None else max(b["start"], reach)
        if b["end"] > start:
            total += b["end"] - start
        reach = b["end"] if reach is None else max(reach, b["end"])
    return total


def _overlap(bars):
    """Time during which at least one copy and at least one kernel run at once."""
    edges = sorted({b["start"] for b in bars} | {b["end"] for b in bars})
    both = 0.0
    for a, b in zip(edges, edges[1:]):
        mid = (a + b) / 2
        live = {x["kind"] == "kernel" for x in bars if x["start"] <= mid < x["end"]
                and (x["kind"] == "kernel" or x["kind"] in COPIES)}
        if live == {True, False}:
            both += b - a
    return both


def render_svg(models) -> str:
    """One Gantt chart per model, stacked, on one time axis (to compare 1 stream with N)."""
    models = models if isinstance(models, (list, tuple)) else [models]
    left, width, th = 120, 620, 22
    scale = width / max(max(m["total"] for m in models), 1e-12)
    height = 20 + sum(40 + len(m["tracks"]) * th + 30 for m in models) + 30
    svg = Svg(left + width + 30, height)
    y = 10
    for m in models:
        speed = f"total {m['total']:.3f} µs; copies and kernels overlap {m['overlap']:.3f} µs"
        svg.text(10, y + 14, f"{m['title']}: {speed}" if m["title"] else speed, 12, bold=True)
        y += 26
        for i, track in enumerate(m["tracks"]):
            svg.text(left - 6, y + i * th + 15, track, 10, "end")
            svg.rect(left, y + i * th, width, th - 2, "#f7f7f7")
        for b in m["bars"]:
            x0 = left + b["start"] * scale
            svg.rect(x0, y + b["track"] * th + 1, max((b["end"] - b["start"]) * scale, 1), th - 4,
                     KIND_COLOUR.get(b["kind"], "#999"), "#333", 0.5,
                     title=f"{b['name']} ({b['kind']}, stream {b['stream']}): {b['start']:.3f} - {b['end']:.3f} µs")
            if (b["end"] - b["start"]) * scale > 6 * len(b["name"]):
                svg.text(x0 + 3, y + b["track"] * th + 14, b["name"], 9, fill="white")
        y += len(m["tracks"]) * th
        svg.line(left, y + 2, left + m["total"] * scale, y + 2, "#333")
        svg.text(left + m["total"] * scale, y + 14, f"{m['total']:.3f} µs", 9, "end")
        y += 30
    legend(svg, left, y + 10, [(c, k) for k, c in KIND_COLOUR.items()])
    return str(svg)


def details_html(models) -> str:
    models = models if isinstance(models, (list, tuple)) else [models]
    rows = [(m["title"] or "timeline", f"{m['total']:.3f} µs", f"{m['busy']['kernel']:.3f} µs",
             f"{m['busy']['copy']:.3f} µs", f"{m['overlap']:.3f} µs") for m in models]
    out = table_html(rows, ["timeline", "total", "kernels busy", "copies busy", "copy + kernel at once"])
    if len(models) == 2 and models[1]["total"] > 0:
        out += f"<div>{esc(models[1]['title'] or 'the second')} takes {models[0]['total'] / models[1]['total']:.2f}x " \
               f"less time than {esc(models[0]['title'] or 'the first')}.</div>"
    return out
