"""Thread hierarchy: grid -> blocks -> warps -> threads, and what one picked thread did."""
from __future__ import annotations

import numpy as np

from .observe import KINDS, SPACES
from .svg import EMPTY, Svg, category, esc, legend, sequential, table_html

COLOURS = ("warp", "lane", "global index", "lines run")


def colour_choices(trace) -> list:
    """What threads can be coloured by: the fixed choices (and the cluster of a cluster launch), then
    each array the kernel wrote."""
    extra = ["cluster", "rank in cluster"] if _cluster_size(trace) > 1 else []
    return list(COLOURS) + extra + [f"written {n}" for n, w in trace.writes.items() if w.any()]


def _cluster_size(trace):
    c = getattr(trace, "cluster", (1, 1, 1))
    return c[0] * c[1] * c[2]


def cluster_of(trace, block):
    """(cluster index (x, y, z), rank in the cluster) of a linear block index: what %clusterid and
    %cluster_ctarank say in that block."""
    bx, by, bz = trace.block_index(block)
    cx, cy, cz = getattr(trace, "cluster", (1, 1, 1))
    return (bx // cx, by // cy, bz // cz), (bx % cx) + (by % cy) * cx + (bz % cz) * cx * cy


def _layout(block):
    """Display rows x columns of a block's z-slice: 2-D blocks as they are, 1-D blocks wrapped at 32
    threads (one warp per row)."""
    bx, by, _ = block
    if by == 1 and bx > 32:
        return -(-bx // 32), 32
    return by, bx


def thread_values(trace, colour, values=None):
    """Per sampled thread (sample numbering) the number to colour it by (NaN: nothing to show)."""
    tpb = trace.threads_per_block
    t = np.arange(len(trace.blocks) * tpb)
    block = trace.blocks[t // tpb]
    linear = t % tpb
    if values is not None:
        v = np.asarray(values, float)
        gidx = _global_xyz(trace, block, linear)
        if v.size == trace.total_blocks * tpb and v.ndim == 1:
            return v[block * tpb + linear]
        idx = tuple(g for g in gidx[::-1][-v.ndim:])   # (.., y, x) order, as numpy indexes images
        inside = np.all([i < s for i, s in zip(idx, v.shape)], axis=0)
        out = np.full(len(t), np.nan)
        out[inside] = v[tuple(i[inside] for i in idx)]
        return out
    if colour == "warp":
        return (linear // 32).astype(float)
    if colour == "lane":
        return (linear % 32).astype(float)
    if colour == "global index":
        return (block * tpb + linear).astype(float)
    if colour == "lines run":
        return trace.executed.sum(axis=1).astype(float)
    if colour in ("cluster", "rank in cluster"):
        gx, gy, _ = trace.grid
        cx, cy, cz = trace.cluster
        bxs, bys, bzs = block % gx, (block // gx) % gy, block // (gx * gy)
        if colour == "rank in cluster":
            return ((bxs % cx) + (bys % cy) * cx + (bzs % cz) * cx * cy).astype(float)
        return ((bxs // cx) + (bys // cy) * (gx // cx) + (bzs // cz) * (gx // cx) * (gy // cy)).astype(float)
    if colour.startswith("written "):
        name = colour[len("written "):]
        a = trace.arrays[name]
        rows = trace.rows(space="global", kind="st")
        addr = trace.access["address"][rows]
        thread = trace.access["thread"][rows]
        elem = (addr - a.address) // a.itemsize
        ok = (elem >= 0) & (elem < a.size)
        out = np.full(len(t), np.nan)
        out[thread[ok]] = np.asarray(a.values, float).reshape(-1)[elem[ok]]   # the last store wins
        return out
    raise ValueError(f"colour threads by one of {', '.join(colour_choices(trace))}, not {colour!r}")


def _global_xyz(trace, block, linear):
    bix = trace.block_index(block)
    tix = trace.thread_index(linear)
    return tuple(b * d + t for b, d, t in zip(bix, trace.block, tix))


def hierarchy_model(trace, block: int = 0, thread: int = 0, colour: str = "warp", values=None) -> dict:
    """Plain data for the hierarchy picture: the grid, the picked block's threads (coloured), and
    everything about the picked thread (linear block and thread indices)."""
    tpb = trace.threads_per_block
    block = int(block) % trace.total_blocks
    thread = int(thread) % tpb
    pos = np.flatnonzero(trace.blocks == block)
    k = int(pos[0]) if len(pos) else None
    m = dict(kernel=trace.kernel, grid=trace.grid, block_dim=trace.block, total_blocks=trace.total_blocks,
             sampled_blocks=trace.blocks.tolist(), block=block, block_idx=trace.block_index(block),
             thread=thread, thread_idx=trace.thread_index(thread), recorded=k is not None,
             colour=colour, note=trace.note, layout=_layout(trace.block))
    tz = m["thread_idx"][2]
    bx, by, _ = trace.block
    linear = np.arange(tz * bx * by, (tz + 1) * bx * by)
    m["slice_threads"] = linear
    m["warp"], m["lane"] = thread // 32, thread % 32
    m["cluster_dim"] = tuple(getattr(trace, "cluster", (1, 1, 1)))
    m["cluster_idx"], m["cluster_rank"] = cluster_of(trace, block)
    m["global_xyz"] = tuple(int(v) for v in _global_xyz(trace, block, thread))
    m["global_linear"] = block * tpb + thread
    if k is None:
        m.update(colours=None, lines=[], writes=[], reads=[], vmin=None, vmax=None)
        return m
    vals = thread_values(trace, colour, values)
    mine = vals[k * tpb + linear]
    m["values"] = mine
    finite = vals[np.isfinite(vals)]
    m["vmin"], m["vmax"] = (float(finite.min()), float(finite.max())) if len(finite) else (None, None)
    st = k * tpb + thread
    m["value"] = float(vals[st]) if np.isfinite(vals[st]) else None
    m["lines"] = [(int(line), trace.source_line(line)) for line in trace.lines[trace.executed[st]]]
    m["writes"], m["reads"] = _accesses(trace, st)
    return m


def _accesses(trace, sample_thread):
    """(writes, reads) of one thread: lists of (space, 'A[5]', line, value after the launch or None)."""
    mine = trace.access["thread"] == sample_thread
    ev = trace.access["event"][mine]
    addr = trace.access["address"][mine]
    writes, reads, seen = [], [], set()
    for e, a in zip(ev, addr):
        space, kind, line = SPACES[trace.events["space"][e]], KINDS[trace.events["kind"][e]], trace.events["line"][e]
        if space == "global":
            name, i = trace.element(a)
            arr = trace.arrays.get(name)
            where = f"{name}[{_index(arr.shape, i)}]" if name else f"0x{int(a):x}"
            value = arr.values.reshape(-1)[i].item() if name and arr.values is not None else None
        elif space == "shared":
            name, i = trace.shared_element(a)
            var = trace.shared.get(name)
            where = f"{name}[{_index(var.shape, i)}]" if name else f"shared+{int(a)}"
            value = None
        else:
            where, value = f"{space}+{int(a)}", None
        key = (kind, where, int(line))
        if key in seen:
            continue
        seen.add(key)
        (reads if kind == "ld" else writes).append((space, where, int(line), value))
    return writes, reads


def _index(shape, i):
    if len(shape) <= 1:
        return str(i)
    return "][".join(str(int(x)) for x in np.unravel_index(i, shape))


# ---------------------------------------------------------------------- static picture
def render_svg(m) -> str:
    gx, gy, gz = m["grid"]
    bz_total = m["block_dim"][2]
    show_x, show_y = min(gx, 64), min(gy, 16)
    cell = max(8, min(28, 560 // max(show_x, 1)))
    rows, cols = m["layout"]
    tcell = max(10, min(26, 640 // cols))
    width = max(show_x * cell, cols * tcell, 560) + 80
    top = 40
    grid_h = show_y * cell
    tb_top = top + grid_h + 56
    height = tb_top + rows * tcell + 48
    svg = Svg(width, height)
    bidx = m["block_idx"]
    svg.text(10, 16, f"grid {gx}x{gy}x{gz} blocks of {m['block_dim'][0]}x{m['block_dim'][1]}x{bz_total} threads"
             + (f"  (showing gridDim.z slice z={bidx[2]})" if gz > 1 else ""), 12, bold=True)
    svg.text(10, 32, "Blocks (click one)" + ("; grey = not recorded" if len(m["sampled_blocks"]) < m["total_blocks"]
                                             else ""), 10, fill="#555")
    sampled = set(m["sampled_blocks"])
    for y in range(show_y):
        for x in range(show_x):
            lin = (bidx[2] * gy + y) * gx + x
            fill = "#c6dbef" if lin in sampled else EMPTY
            chosen = lin == m["block"]
            svg.rect(40 + x * cell, top + y * cell, cell - 1, cell - 1, "#2171b5" if chosen else fill,
                     "#08306b" if chosen else "#9ecae1", 1, title=f"blockIdx = ({x}, {y}, {bidx[2]})",
                     pick=f"b:{lin}")
    if gx > show_x or gy > show_y:
        svg.text(44 + show_x * cell, top + 10, "...", 12)
    tix = m["thread_idx"]
    svg.text(10, tb_top - 24, f"Block ({bidx[0]}, {bidx[1]}, {bidx[2]}): threads coloured by {m['colour']}"
             + (f", slice threadIdx.z = {tix[2]}" if bz_total > 1 else "")
             + ("; thick lines separate warps" if m["colour"] != "warp" else ""), 12, bold=True)
    if not m["recorded"]:
        svg.text(10, tb_top, "This block was not recorded (large launch, sampled): pick a blue block.", 11,
                 fill="#a50f15")
        return str(svg)
    linear = m["slice_threads"]
    vals = m["values"]
    cat = m["colour"] in ("warp",)
    colours = [category(v) for v in vals] if cat else sequential(vals, m["vmin"], m["vmax"])
    bx = m["block_dim"][0]
    wrap = cols if m["block_dim"][1] == 1 else bx
    x0, y0 = 40, tb_top
    for i, t in enumerate(linear):
        r, c = divmod(i, wrap)
        if r >= rows:
            break
        ti = (t % bx, t // bx % m["block_dim"][1], tix[2])
        v = vals[i]
        title = (f"threadIdx = {ti}, warp {t // 32}, lane {t % 32}" + (f", value {v:g}" if np.isfinite(v) else ""))
        svg.rect(x0 + c * tcell, y0 + r * tcell, tcell - 1, tcell - 1, colours[i], title=title, pick=f"t:{t}")
    for i, t in enumerate(linear):          # warp boundaries
        r, c = divmod(i, wrap)
        if c + 1 < wrap and i + 1 < len(linear) and (t + 1) // 32 != t // 32:
            svg.line(x0 + (c + 1) * tcell - 0.5, y0 + r * tcell, x0 + (c + 1) * tcell - 0.5, y0 + (r + 1) * tcell,
                     "#000", 2.5)
        if i + wrap < len(linear) and linear[i + wrap] // 32 != t // 32:
            svg.line(x0 + c * tcell, y0 + (r + 1) * tcell - 0.5, x0 + (c + 1) * tcell, y0 + (r + 1) * tcell - 0.5,
                     "#000", 2.5)
    i = int(np.flatnonzero(linear == m["thread"])[0])
    r, c = divmod(i, wrap)
    svg.rect(x0 + c * tcell - 1.5, y0 + r * tcell - 1.5, tcell + 2, tcell + 2, "none", "#e31a1c", 3)
    for c in range(0, wrap, 8 if wrap > 16 else 4):
        svg.text(x0 + c * tcell + tcell / 2, y0 - 4, str(c), 9, "middle", "#555")
    for r in range(rows):
        label = r * wrap if m["block_dim"][1] == 1 else r
        svg.text(x0 - 4, y0 + r * tcell + tcell * 0.7, str(label), 9, "end", "#555")
    axis = "threadIdx.x (row start)" if m["block_dim"][1] == 1 and wrap < bx else "threadIdx.y"
    svg.text(12, y0 + rows * tcell / 2, axis, 9, "middle", "#555", rotate=-90)
    yb = y0 + rows * tcell + 20
    if cat:
        nw = -(-len(linear) // 32)
        legend(svg, 40, yb, [(category(w), f"warp {w}") for w in range(min(nw, 8))])
    elif m["vmin"] is not None:
        for j in range(10):
            svg.rect(40 + j * 14, yb - 9, 14, 10, sequential([j], 0, 9)[0])
        svg.text(40, yb + 12, f"{m['vmin']:g}", 9)
        svg.text(180, yb + 12, f"{m['vmax']:g}", 9, "end")
    if m["note"]:
        svg.text(10, height - 8, m["note"], 9, fill="#555")
    return str(svg)


def details_html(m) -> str:
    """What the picked thread is and did, as an HTML table."""
    t, b = m["thread_idx"], m["block_idx"]
    g = m["global_xyz"]
    rows = [("threadIdx", f"({t[0]}, {t[1]}, {t[2]})"), ("blockIdx", f"({b[0]}, {b[1]}, {b[2]})"),
            ("global (x, y, z)", f"({g[0]}, {g[1]}, {g[2]})  = blockIdx * blockDim + threadIdx"),
            ("global thread number", f"{m['global_linear']:,}"),
            ("warp / lane", f"warp {m['warp']} of the block, lane {m['lane']}")]
    cd = m.get("cluster_dim", (1, 1, 1))
    if cd[0] * cd[1] * cd[2] > 1:
        ci = m["cluster_idx"]
        rows.append(("cluster", f"clusterIdx ({ci[0]}, {ci[1]}, {ci[2]}) of shape {cd}, block rank {m['cluster_rank']}: "
                                "its blocks share their shared memory (cluster.map_shared_rank)"))
    if not m["recorded"]:
        rows.append(("recorded", "no: this block was not sampled"))
        return table_html(rows)
    if m.get("value") is not None:
        rows.append((m["colour"], f"{m['value']:g}"))
    for space, where, line, value in m["writes"]:
        rows.append(("wrote", f"{where}" + (f" = {value:g}" if isinstance(value, (int, float)) else "")
                     + f"  ({space}, line {line})"))
    for space, where, line, _ in m["reads"][:12]:
        rows.append(("read", f"{where}  ({space}, line {line})"))
    if len(m["reads"]) > 12:
        rows.append(("read", f"... and {len(m['reads']) - 12} more"))
    src = "".join(f"<div><code>{line:4d}: {esc(text)}</code></div>" for line, text in m["lines"])
    return (f"<div><b>Thread {m['global_linear']:,}</b></div>{table_html(rows)}"
            f"<div style='margin-top:4px'><b>Source lines it executed</b></div>{src}")
