"""A tiny SVG writer and the colour scales the widgets share (the static pictures need no browser)."""
from __future__ import annotations

import html

import numpy as np

# Categorical colours (Tableau 10, then lighter variants): warps, wavefronts, streams, blocks.
CATEGORY = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac", "#a0cbe8", "#ffbe7d", "#ff9d9a", "#86bcb6", "#8cd17d", "#f1ce63",
            "#d4a6c8", "#fabfd2", "#d7b5a6", "#79706e"]
_VIRIDIS = np.array([[68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
                     [31, 158, 137], [53, 183, 121], [109, 205, 89], [180, 222, 44], [253, 231, 37]], float)
EMPTY = "#eeeeee"
FONT = "font-family='DejaVu Sans, Helvetica, Arial, sans-serif'"


def category(i) -> str:
    return CATEGORY[int(i) % len(CATEGORY)]


def sequential(values, lo=None, hi=None):
    """Viridis hex colours for numbers (NaN -> EMPTY)."""
    v = np.asarray(values, float)
    finite = np.isfinite(v)
    lo = np.nanmin(v[finite]) if lo is None and finite.any() else (lo or 0.0)
    hi = np.nanmax(v[finite]) if hi is None and finite.any() else (hi if hi is not None else 1.0)
    t = np.clip((v - lo) / (hi - lo), 0, 1) if hi > lo else np.full(v.shape, 0.5)
    t = np.where(finite, t, 0) * (len(_VIRIDIS) - 1)
    i = np.minimum(t.astype(int), len(_VIRIDIS) - 2)
    rgb = _VIRIDIS[i] + (_VIRIDIS[i + 1] - _VIRIDIS[i]) * (t - i)[..., None]
    out = np.array([f"#{int(r):02x}{int(g):02x}{int(b):02x}" for r, g, b in rgb.reshape(-1, 3)], object)
    out = out.reshape(v.shape)
    out[~finite] = EMPTY
    return out


def esc(s) -> str:
    return html.escape(str(s), quote=True)


class Svg:
    """Collects SVG elements; ``str(svg)`` is the picture. ``pick`` makes an element clickable in the
    live widget (it sets the widget's ``picked`` to that string)."""

    def __init__(self, width, height):
        self.width, self.height = width, height
        self.parts = []

    def rect(self, x, y, w, h, fill, stroke="none", width=1, title=None, pick=None, opacity=None, dash=None):
        extra = f" data-pick='{esc(pick)}' style='cursor:pointer'" if pick is not None else ""
        extra += f" fill-opacity='{opacity}'" if opacity is not None else ""
        extra += f" stroke-dasharray='{dash}'" if dash else ""
        tip = f"<title>{esc(title)}</title>" if title else ""
        self.parts.append(f"<rect x='{x:.1f}' y='{y:.1f}' width='{w:.1f}' height='{h:.1f}' fill='{fill}' "
                          f"stroke='{stroke}' stroke-width='{width}'{extra}>{tip}</rect>")

    def line(self, x1, y1, x2, y2, stroke="#333", width=1, opacity=None, title=None):
        op = f" stroke-opacity='{opacity}'" if opacity is not None else ""
        tip = f"<title>{esc(title)}</title>" if title else ""
        self.parts.append(f"<line x1='{x1:.1f}' y1='{y1:.1f}' x2='{x2:.1f}' y2='{y2:.1f}' stroke='{stroke}' "
                          f"stroke-width='{width}'{op}>{tip}</line>")

    def text(self, x, y, s, size=11, anchor="start", fill="#222", bold=False, rotate=None):
        weight = " font-weight='bold'" if bold else ""
        rot = f" transform='rotate({rotate} {x:.1f} {y:.1f})'" if rotate else ""
        self.parts.append(f"<text x='{x:.1f}' y='{y:.1f}' font-size='{size}' text-anchor='{anchor}' "
                          f"fill='{fill}'{weight}{rot}>{esc(s)}</text>")

    def __str__(self):
        return (f"<svg xmlns='http://www.w3.org/2000/svg' width='{self.width:.0f}' height='{self.height:.0f}' "
                f"viewBox='0 0 {self.width:.0f} {self.height:.0f}' {FONT}>"
                f"<rect width='100%' height='100%' fill='white'/>" + "".join(self.parts) + "</svg>")


def legend(svg, x, y, items, size=10):
    """A row of (colour, label) swatches starting at (x, y); returns the x after it."""
    for colour, label in items:
        svg.rect(x, y - 9, 10, 10, colour, "#666", 0.5)
        svg.text(x + 14, y, label, size)
        x += 22 + 6.2 * len(str(label))
    return x


def table_html(rows, header=None) -> str:
    """A small HTML table from rows of cells."""
    head = "".join(f"<th style='text-align:left;padding:1px 8px'>{esc(h)}</th>" for h in header) if header else ""
    body = "".join("<tr>" + "".join(f"<td style='text-align:left;padding:1px 8px'>{esc(c)}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f"<table class='cudalab-table'>{f'<tr>{head}</tr>' if head else ''}{body}</table>"


def grid(svg, x, y, cell, colours, title_of=None, pick_of=None, per_cell_limit=1024):
    """Draw a 2-D array of colours as cells. Small grids get a tooltip (``title_of(r, c)``) and a pick
    (``pick_of(r, c)``) per cell; big ones are drawn as runs of equal colour, to keep the saved
    notebook small."""
    rows, cols = colours.shape
    gap = 0.5 if cell > 4 else 0
    if rows * cols <= per_cell_limit:
        for r in range(rows):
            for c in range(cols):
                svg.rect(x + c * cell, y + r * cell, cell - gap, cell - gap, colours[r, c],
                         title=title_of(r, c) if title_of else None, pick=pick_of(r, c) if pick_of else None)
        return
    for r in range(rows):
        row = colours[r]
        starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
        for a, b in zip(starts, np.r_[starts[1:], cols]):
            svg.rect(x + a * cell, y + r * cell, (b - a) * cell - gap, cell - gap, row[a])
