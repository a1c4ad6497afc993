"""Memory heatmap: how often each element of a global array was read and written, and by which block."""
from __future__ import annotations

import numpy as np

from .svg import EMPTY, Svg, category, grid, sequential, table_html
from .tiling import MAX_CELLS, _grid_shape

MODES = ("reads", "writes", "writer block", "first reader block")


def heatmap_model(trace, array=None, mode="reads") -> dict:
    """Per-element counts of one array (every block of the launch, not only the sampled ones),
    shaped as the array (1-D arrays in rows of 32), binned to at most 64 x 64 cells."""
    if not trace.arrays:
        raise ValueError(f"{trace.kernel} was given no arrays to draw.")
    name = array or next(iter(trace.arrays))
    a = trace.arrays[name]
    data = {"reads": trace.reads, "writes": trace.writes, "writer block": trace.writer,
            "first reader block": trace.reader}[mode][name]
    rows, cols = _grid_shape(a.shape)
    grid = np.full(rows * cols, np.nan if "block" in mode else 0.0)
    grid[:a.size] = data
    if "block" in mode:
        grid[:a.size][data < 0] = np.nan
    grid = grid.reshape(rows, cols)
    fr, fc = -(-rows // MAX_CELLS), -(-cols // MAX_CELLS)
    if fr * fc > 1:
        pad = np.full((-(-rows // fr) * fr, -(-cols // fc) * fc), np.nan)
        pad[:rows, :cols] = grid
        blocks = pad.reshape(pad.shape[0] // fr, fr, pad.shape[1] // fc, fc)
        with np.errstate(all="ignore"):
            # counts add up over a bin; for a block id keep the first one
            grid = np.nansum(blocks, axis=(1, 3)) if "block" not in mode else blocks[:, 0, :, 0]
    return dict(kernel=trace.kernel, array=name, mode=mode, shape=a.shape, rows=rows, cols=cols, grid=grid,
                bin=(fr, fc), total_reads=int(trace.reads[name].sum()), total_writes=int(trace.writes[name].sum()),
                max_reads=int(trace.reads[name].max(initial=0)), max_writes=int(trace.writes[name].max(initial=0)),
                arrays=list(trace.arrays))


def render_svg(m) -> str:
    g = m["grid"]
    cell = max(3, min(22, 520 // max(g.shape)))
    left, top = 40, 50
    svg = Svg(max(left + g.shape[1] * cell + 20, 560), top + g.shape[0] * cell + 60)
    binned = m["bin"] != (1, 1)
    svg.text(10, 16, f"{m['kernel']}: {m['array']} {tuple(m['shape'])}, {m['mode']} per element"
             + (f" (each cell sums {m['bin'][0]}x{m['bin'][1]} elements)" if binned else ""), 12, bold=True)
    svg.text(10, 34, f"{m['total_reads']:,} element reads (at most {m['max_reads']} of one element), "
             f"{m['total_writes']:,} writes (at most {m['max_writes']}), over every block", 10, fill="#555")
    cat = "block" in m["mode"]
    colours = (np.array([[category(v) if np.isfinite(v) else EMPTY for v in row] for row in g], object)
               if cat else sequential(np.where(g > 0, g, np.nan), 0 if np.nanmax(g, initial=0) <= 1 else None))
    name, (fr, fc) = m["array"], m["bin"]

    def title(r, c):
        v = g[r, c]
        what = "none" if not np.isfinite(v) else f"block {int(v)}" if cat else f"{v:g}"
        return f"{name} row {r * fr}, column {c * fc}: {what}"
    grid(svg, left, top, cell, colours, title)
    y = top + g.shape[0] * cell + 20
    if cat:
        svg.text(10, y, "colour = block (grey: no block)", 10, fill="#555")
    else:
        hi = np.nanmax(g, initial=0)
        for j in range(10):
            svg.rect(10 + j * 14, y - 9, 14, 10, sequential([j], 0, 9)[0])
        svg.text(160, y, f"1 ... {hi:g} {m['mode']} (grey: none)", 10, fill="#555")
    return str(svg)


def details_html(m) -> str:
    return table_html([("array", f"{m['array']} {tuple(m['shape'])}"), ("reads", f"{m['total_reads']:,}"),
                       ("writes", f"{m['total_writes']:,}")])
