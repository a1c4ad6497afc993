"""cuRAND's XORWOW skip-ahead, run natively: ``curand_init``, ``skipahead`` and ``skipahead_sequence``.

XORWOW's five state words move through the sequence by a linear map over GF(2), so jumping ahead is a
160 x 160 bit matrix product. cuRAND's device header does it with the tables of ``curand_precalc.h``:
for each base-4 digit of the distance (subsequences of 2^67 numbers, or numbers), digit times the
matrix of that place. Interpreted, a ``curand_init(seed, id, 0, &s)`` costs each thread about 21,000
PTX instructions (books' piG and calc_pi, TRUBA's coalescing demo and Oxford's prac2 set up millions
of generators: 47 to 283 billion thread-instructions, GPU-sized for the emulator).

cudalab's front for the header (``frontend/curand/curand_kernel.h``) routes those loops through one
call, ``cudalab_xorwow_jump(v0..v4, n, numbers)``, whose body is the same loops (what a GPU would
run); this module answers the call for every lane at once, with the same matrices read from the
toolkit's own ``curand_precalc.h`` (pip wheel), so the words are bit for bit cuRAND's. A matrix's
power for each digit (1 to 3) is made once, and applied a byte of state at a time from a table of
the XORs of every 8-row group (20 lookups of 5 words a digit). Lanes are few in a lesson's launch:
numpy answers; a setup kernel of thousands of threads uses the numba loop (``xorwow_loops``).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache

import numpy as np

NAME = "cudalab_xorwow_jump"
LEVELS = 32                  # PRECALC_NUM_MATRICES: base-4 digits of a 64-bit distance
NUMBA_LANES = 8192           # from this many lanes on, the numba loop (numba costs 0.6 s of CPU to load)
SHARED_LANES = 64            # from this many lanes on, look for one state shared by all (_jump_shared)
_TABLES: dict = {}           # numbers (0: subsequences, 1: numbers) -> (tables, levels built)


def precalc_header() -> str:
    """The toolkit's curand_precalc.h (nvidia-curand's wheel puts it beside the runtime's headers)."""
    from ..frontend.nvrtc import include_dirs
    for d in include_dirs():
        path = os.path.join(d, "curand_precalc.h")
        if os.path.exists(path):
            return path
    raise FileNotFoundError("curand_precalc.h: no CUDA include folder has it (pip install nvidia-curand)")


@lru_cache(maxsize=2)
def jump_matrices(numbers: int) -> np.ndarray:
    """cuRAND's precalc_xorwow_matrix (``numbers`` 0: jumps of 4^i subsequences) or
    precalc_xorwow_offset_matrix (1: jumps of 4^i numbers), as (32, 160, 5) uint32: row 32 w + b of a
    matrix is XORed into the result where bit b of state word w is set."""
    name = "precalc_xorwow_offset_matrix" if numbers else "precalc_xorwow_matrix"
    with open(precalc_header()) as f:
        text = f.read()
    start = text.index(f"{name}[PRECALC_NUM_MATRICES][PRECALC_MATRIX_SIZE] = {{")
    words = re.findall(r"(\d+)UL", text[start:text.index("};", start)])
    return np.array(words, np.uint64).astype(np.uint32).reshape(LEVELS, 160, 5)


def _byte_tables(rows: np.ndarray) -> np.ndarray:
    """(20, 256, 5) for a matrix's 160 rows of 5 words: entry [j, b] is the XOR of rows 8 j + k for the
    bits k set in b (built by doubling: entries 2^k to 2^(k+1) - 1 are entries 0 to 2^k - 1 XOR row 8 j + k)."""
    groups = rows.reshape(20, 8, 5)
    table = np.zeros((20, 256, 5), np.uint32)
    for k in range(8):
        table[:, 1 << k:2 << k] = table[:, :1 << k] ^ groups[:, k, None]
    return table


def _apply(table: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Each row of ``v`` ((k, 5) words) times the matrix whose byte tables ``table`` holds."""
    state = np.ascontiguousarray(v).view(np.uint8)                      # (k, 20) bytes, little-endian words
    return np.bitwise_xor.reduce(table[np.arange(20), state], axis=1)


def tables(numbers: int, levels: int) -> np.ndarray:
    """(32, 3, 20, 256, 5) byte tables of the matrices' first, second and third powers, built for the
    first ``levels`` places (a distance below 4^levels needs no more). A power's rows are the rows of
    the power before it moved by the matrix."""
    got = _TABLES.get(numbers)
    if got is None:
        got = _TABLES[numbers] = [np.zeros((LEVELS, 3, 20, 256, 5), np.uint32), 0]
    table, built = got
    if levels > built:
        matrices = jump_matrices(numbers)
        for level in range(built, levels):
            rows = matrices[level]
            table[level, 0] = _byte_tables(rows)
            for d in (1, 2):
                rows = _apply(table[level, 0], rows)
                table[level, d] = _byte_tables(rows)
        got[1] = levels
    return table


def levels_needed(n: np.ndarray) -> int:
    """Base-4 digits of the largest distance."""
    top = int(n.max()) if n.size else 0
    return (top.bit_length() + 1) // 2


def jump(v: np.ndarray, n: np.ndarray, numbers: int) -> np.ndarray:
    """The states ``v`` ((lanes, 5) uint32) moved ahead by ``n`` (uint64, per lane) subsequences
    (``numbers`` 0) or numbers (1), as cuRAND's skipahead_sequence / skipahead move them."""
    v = np.ascontiguousarray(v, np.uint32)
    n = np.ascontiguousarray(n, np.uint64)
    levels = levels_needed(n)
    if not levels:
        return v.copy()
    table = tables(numbers, levels)
    if len(v) >= SHARED_LANES and (v == v[0]).all():
        return _jump_shared(v[0], n, table, levels)
    return _jump_lanes(v, n, table, levels)


def _jump_lanes(v: np.ndarray, n: np.ndarray, table: np.ndarray, levels: int) -> np.ndarray:
    if len(v) >= NUMBA_LANES:
        from .xorwow_loops import jump_lanes
        out = v.copy()
        jump_lanes(out, n, table.reshape(-1))
        return out
    return _jump_numpy(v, n, table, levels)


def _jump_shared(v0: np.ndarray, n: np.ndarray, table: np.ndarray, levels: int) -> np.ndarray:
    """jump for lanes that all start from the state ``v0`` (one seed; curand_init(seed, id, 0, &s)
    gives every thread the same words before its jump): lanes whose distances agree in their top
    digits share the state those digits reach, so the states are made from the top place down, one
    per distinct prefix of the distances (for consecutive subsequences about 4/3 of a jump a lane,
    where each lane alone needs one per nonzero digit, 7.5 for a million threads)."""
    order = None if (n[1:] >= n[:-1]).all() else np.argsort(n, kind="stable")
    sorted_n = n if order is None else n[order]
    states, prefixes = v0[None, :].copy(), np.zeros(1, np.uint64)
    for level in range(levels - 1, -1, -1):
        p = sorted_n >> np.uint64(2 * level)
        first = np.empty(len(p), bool)
        first[0], first[1:] = True, p[1:] != p[:-1]
        mine = p[first]                                          # the distinct prefixes, in order
        parent = np.searchsorted(prefixes, mine >> np.uint64(2))
        digit = mine & np.uint64(3)
        states = _jump_lanes(states[parent], digit << np.uint64(2 * level), table, level + 1)
        prefixes = mine
    out = states[np.cumsum(first) - 1]
    if order is not None:
        out[order] = out.copy()
    return out


def _jump_numpy(v: np.ndarray, n: np.ndarray, table: np.ndarray, levels: int) -> np.ndarray:
    out = v.copy()
    flat = table.reshape(LEVELS * 3 * 20 * 256, 5)
    for level in range(levels):
        digit = ((n >> np.uint64(2 * level)) & np.uint64(3)).astype(np.int64)
        lanes = np.flatnonzero(digit)
        if not lanes.size:
            continue
        state = np.ascontiguousarray(out[lanes]).view(np.uint8)    # (k, 20) bytes, little-endian words
        base = ((level * 3 + digit[lanes] - 1) * 20)[:, None] + np.arange(20)
        out[lanes] = np.bitwise_xor.reduce(flat[base * 256 + state], axis=1)
    return out


def _u32(ex, name, sel):
    return np.ascontiguousarray(ex.fr.param_buffer(name)[sel, 0:4]).view(np.uint32)[:, 0]


def run_call(ex, inst, rets, args):
    """The emulator's answer to ``cudalab_xorwow_jump(v0, v1, v2, v3, v4, n, numbers)`` for the
    active lanes: the five words after the jump, in the 20-byte return value."""
    sel = ex.idx
    v = np.stack([_u32(ex, a, sel) for a in args[:5]], 1)
    n = np.ascontiguousarray(ex.fr.param_buffer(args[5])[sel, 0:8]).view(np.uint64)[:, 0]
    numbers = _u32(ex, args[6], sel)
    out = np.empty_like(v)
    for kind in (0, 1):
        which = numbers == 0 if kind == 0 else numbers != 0
        if which.all():
            out = jump(v, n, kind)
        elif which.any():
            out[which] = jump(v[which], n[which], kind)
    if rets:
        ex.fr.param_buffer(rets[0])[sel, 0:20] = out.view(np.uint8).reshape(-1, 20)


HANDLERS = {NAME: run_call}
