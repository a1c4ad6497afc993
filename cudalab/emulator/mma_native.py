"""mma's fast path: every warp of a batch multiplied in one compiled loop (numba), where the data
make each sum exact.

mma.py's numpy path spends a dozen whole-batch passes on one warp-level mma (gathers, the exactness
test, the matrix product, the truncation): about 15 us a warp for m16n16k16, which made the
tensor-core GEMM samples take minutes. This loop reads each warp's fragment elements straight from
their bits, proves from exponents and lowest set bits that the tensor core cuts nothing (mma.py's
rule: C and every product on the grid of 2**(top - 25), element by element), sums in float64 (then
exact, in any order) and writes D's bits. A warp it cannot prove (a term the alignment would cut, an
infinity or NaN, a float32 sum outside the normal range, an f64 partial sum float64 would round) is
answered ``ok = False`` and mma.py's path computes it: the bits are the same either way, the fast path
only says sooner what the general rule says.
"""
from __future__ import annotations

import numpy as np

# (exponent bits, significand bits, low bits the tensor core ignores) of each element type
FORMATS = {"f16": (5, 10, 0), "bf16": (8, 7, 0), "tf32": (8, 10, 13), "f32": (8, 23, 0), "f64": (11, 52, 0)}
INTEGERS = {"s8": (8, True), "u8": (8, False), "s4": (4, True), "u4": (4, False), "s32": (32, True)}
_KERNELS = {}


def kernels(shape, block):
    """The compiled loops for one mMnNkK shape and hardware step (numba is imported, and a loop
    compiled or read from its cache, on first use)."""
    if (shape, block) not in _KERNELS:
        from . import mma_loops
        _KERNELS[shape, block] = mma_loops.make(*shape, block)
    return _KERNELS[shape, block]


def loader():
    """The compiled wmma.load from shared memory."""
    from . import mma_loops
    return mma_loops.load_shared


def plan(places, dplaces, shape, atype, btype, ctype, dtype, sat, block):
    """A function (A's, B's and C's element bits, each (warps, places)) -> (D's bits (warps, places),
    ok per warp) for the types the fast path takes, else None. ``places``: for "a", "b" and "c", each
    matrix element's place among a warp's fragment elements (mma.matrix_places); ``dplaces``: the
    matrix element (row * n + col) of each of D's places."""
    m, n, k = shape
    if ctype != dtype or (atype, btype, ctype) not in _TAKEN:
        return None
    src = {u: np.ascontiguousarray(places[u], np.int64) for u in "abc"}
    dsrc = np.ascontiguousarray(dplaces, np.int64)
    kind = _TAKEN[(atype, btype, ctype)]

    def run(a, b, c):
        f = kernels(shape, block or k)[kind]
        w = a.shape[0]
        ok = np.ones(w, np.bool_)
        if kind == "floats":
            out = np.empty((w, dsrc.size), np.uint32)
            f(a, b, c, src["a"], src["b"], src["c"], dsrc, a.dtype.type(13 if atype == "tf32" else 0),
              *input_table(atype), out, ok)
        elif kind == "doubles":
            out = np.empty((w, dsrc.size), np.float64)
            f(a, b, c, src["a"], src["b"], src["c"], dsrc, out, ok)
            out = out.view(np.uint64)
        else:
            out = np.empty((w, dsrc.size), np.int32)
            f(a, b, c.view(np.int32), src["a"], src["b"], src["c"], dsrc, *INTEGERS[atype], *INTEGERS[btype],
              sat, out)
            out = out.view(np.uint32)
        return out, ok
    return run


def input_table(typ):
    """(value, exponent, lowest set bit) of every bit pattern of an f16/bf16/tf32 element (tf32: its
    top 19 bits), as mma._f32_fields gives them (a zero's far out of the way); an infinity's or a
    NaN's exponent is mma_loops.NOT_FINITE."""
    if typ not in _TABLES:
        from . import mma, mma_loops
        raw = np.arange(1 << (19 if typ == "tf32" else 16), dtype=np.uint64) << np.uint64(13 if typ == "tf32" else 0)
        with np.errstate(invalid="ignore"):
            v = mma.values(raw, typ)
            e, low, _ = mma._f32_fields(v, mma.EMIN[typ])
        _TABLES[typ] = (v, np.where(np.isfinite(v), e, mma_loops.NOT_FINITE).astype(np.int64), low.astype(np.int64))
    return _TABLES[typ]


_TABLES = {}
_TAKEN = {**{(x, y, "f32"): "floats" for x in ("f16", "bf16", "tf32") for y in ("f16", "bf16", "tf32") if x == y},
          ("f64", "f64", "f64"): "doubles",
          **{(x, y, "s32"): "integers" for x in ("s8", "u8", "s4", "u4") for y in ("s8", "u8", "s4", "u4")
             if INTEGERS[x][0] == INTEGERS[y][0]}}
