"""A tensor-core tile: which lane of the warp holds which element of an mma or wmma fragment.

``fragment_map("mma.m16n8k16", "a", "f16")`` returns a ``FragmentMap``: plain numpy arrays over the
matrix (rows x cols) saying which lane holds each element and in which of its registers, the same
tables the emulator uses (cudalab/emulator/mma.py: the PTX ISA's layouts for mma.sync, the ones
measured on an H100 for wmma). ``render_svg`` draws it; a FragmentMap shows itself in a notebook.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..emulator import mma
from .svg import Svg

OPERANDS = {"a": "matrix A (M x K)", "b": "matrix B (K x N)", "c": "accumulator C/D (M x N)"}


@dataclass
class FragmentMap:
    """Where each element of one fragment lives. ``lane[r, c]`` is the lane holding element (r, c),
    ``element[r, c]`` its index in that lane's fragment (``frag.x[i]`` in CUDA C++; for mma.sync, the
    i-th value of the lane's registers), ``register[r, c]`` the 32-bit register it is in.
    ``copies[r, c]``: how many (lane, element) places hold it (wmma's f16 fragments repeat elements)."""

    instruction: str
    operand: str
    type: str
    lane: np.ndarray
    element: np.ndarray
    register: np.ndarray
    copies: np.ndarray

    @property
    def shape(self):
        return self.lane.shape

    def held_by(self, lane: int) -> list:
        """The (row, col) elements lane ``lane`` holds, in its fragment's order."""
        rows, cols = np.nonzero(self.lane == lane)
        order = np.argsort(self.element[rows, cols], kind="stable")
        return [(int(rows[k]), int(cols[k])) for k in order]

    def __repr__(self):
        m, n = self.shape
        lines = [f"{self.instruction} {OPERANDS[self.operand]}, .{self.type}: lane holding each element"]
        lines += [" ".join(f"{v:2d}" for v in row) for row in self.lane]
        return "\n".join(lines)

    def _repr_html_(self):
        return render_svg(self)


def fragment_map(instruction: str = "mma.m16n8k16", operand: str = "a", type: str = "f16") -> FragmentMap:
    """The fragment of ``operand`` ("a", "b" or "c") for ``instruction`` ("mma.m16n8k16",
    "wmma.m16n16k16", ...) with elements of ``type`` ("f16", "bf16", "tf32", "f64", "s8", "u8"; for
    "c" the accumulator type, "f32" by default)."""
    got = re.fullmatch(r"(w?mma)\.m(\d+)n(\d+)k(\d+)", instruction)
    if got is None:
        raise ValueError(f"fragment_map: instruction {instruction!r} should look like 'mma.m16n8k16' or "
                         "'wmma.m16n16k16'.")
    if operand not in OPERANDS:
        raise ValueError(f"fragment_map: operand {operand!r} should be one of {', '.join(OPERANDS)}.")
    kind, (m, n, k) = got.group(1), (int(x) for x in got.groups()[1:])
    if operand == "c" and type in ("f16", "bf16", "tf32", "s8", "u8"):
        type = {"f16": "f32", "bf16": "f32", "tf32": "f32", "s8": "s32", "u8": "s32"}[type]
    if type not in mma.BITS:
        raise ValueError(f"fragment_map: type {type!r} should be one of f16, bf16, tf32, f64, s8, u8.")
    if kind == "mma":
        rows, cols = mma.mma_layout(operand, m, n, k, type)
    else:
        # f16 A and B fragments have 16 elements whatever the shape (some repeated)
        rows, cols = mma.wmma_layout(operand, m, n, k, type, 16 if type == "f16" and operand != "c" else None)
    shape = {"a": (m, k), "b": (k, n), "c": (m, n)}[operand]
    lane = np.full(shape, -1)
    element = np.full(shape, -1)
    copies = np.zeros(shape, int)
    for ln in range(31, -1, -1):              # the first place of a repeated element wins
        for e in range(rows.shape[1] - 1, -1, -1):
            lane[rows[ln, e], cols[ln, e]] = ln
            element[rows[ln, e], cols[ln, e]] = e
    np.add.at(copies, (rows.ravel(), cols.ravel()), 1)
    per_reg = max(1, 32 // mma.BITS[type]) if mma.BITS[type] < 32 else 1
    return FragmentMap(instruction, operand, type, lane, element, element // per_reg, copies)


def _lane_colour(lane):
    """32 lanes as 8 groups (groupID = lane / 4: hue) of 4 (lane % 4: lightness)."""
    hues = [210, 30, 0, 175, 110, 50, 290, 340]
    g, t = lane >> 2, lane & 3
    return f"hsl({hues[g % 8]}, 60%, {38 + 12 * t}%)"


def render_svg(fm: FragmentMap, cell: int = 34) -> str:
    rows, cols = fm.shape
    left, top = 34, 46
    svg = Svg(left + cols * cell + 20, top + rows * cell + 40)
    svg.text(8, 16, f"{fm.instruction}: {OPERANDS[fm.operand]} of .{fm.type}, one warp", 12, bold=True)
    svg.text(8, 32, "each cell: the lane (thread of the warp) that holds the element, and x[i] in its fragment",
             10, fill="#555")
    for c in range(cols):
        svg.text(left + c * cell + cell / 2, top - 4, str(c), 9, "middle", fill="#555")
    for r in range(rows):
        svg.text(left - 6, top + r * cell + cell / 2 + 3, str(r), 9, "end", fill="#555")
        for c in range(cols):
            ln, e = int(fm.lane[r, c]), int(fm.element[r, c])
            x, y = left + c * cell, top + r * cell
            tip = f"element ({r}, {c}): lane {ln}, x[{e}] (register {int(fm.register[r, c])})"
            if fm.copies[r, c] > 1:
                tip += f"; held in {int(fm.copies[r, c])} places"
            svg.rect(x, y, cell - 1, cell - 1, _lane_colour(ln), title=tip)
            svg.text(x + cell / 2, y + cell / 2 - 1, f"T{ln}", 9, "middle", fill="white", bold=True)
            svg.text(x + cell / 2, y + cell / 2 + 10, f"x[{e}]", 8, "middle", fill="white")
    svg.text(8, top + rows * cell + 20, "colour: groupID = lane / 4 (hue) and lane % 4 (shade), "
             "the two numbers the PTX ISA's layout tables use", 10, fill="#555")
    return str(svg)
