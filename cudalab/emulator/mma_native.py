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

INTEGERS = {"s8": True, "u8": False, "s4": True, "u4": False}          # signed?
_KERNELS = {}

# Loading numba and the compiled loops costs a process 0.6 s of CPU with numba's disk cache warm, and
# 4.8 s the first time (numba compiles the loops into it): measured on notebook 16's one-warp wmma
# launch. The numpy path costs about 15 us more a warp-level operation. So a process's first COLD_WARPS
# warp-level operations take the numpy path (0.3 s at most): a lesson's launch of a few warps answers
# at once, and a GEMM of many warps loads the loops once, after a few of its batches.
COLD_WARPS = 20_000
_numpy_warps = 0
_loaded = False


def worth_loading(warps: int) -> bool:
    """Whether the compiled loops should answer ``warps`` more warp-level operations: once they are
    loaded, or once the numpy path has answered COLD_WARPS of them in this process."""
    global _numpy_warps
    if _loaded or _numpy_warps >= COLD_WARPS:
        return True
    _numpy_warps += warps
    return False


def kernels(shape, block):
    """The compiled loops for one mMnNkK shape and hardware step (numba is imported, and a loop
    compiled or read from its cache, on first use)."""
    global _loaded
    if (shape, block) not in _KERNELS:
        from . import mma_loops
        _KERNELS[shape, block] = mma_loops.make(*shape, block)
        _loaded = True
    return _KERNELS[shape, block]


def loader():
    """The compiled wmma.load from shared memory."""
    global _loaded
    from . import mma_loops
    _loaded = True
    return mma_loops.load_shared


def plan(places, elements, dplaces, shape, atype, btype, ctype, dtype, sat, block):
    """A function (warps, the registers of A, B and C, each a tuple of arrays over the batch's lanes)
    -> (D's registers (set at those warps' lanes), ok per warp) for the types the fast path takes, else None. ``places``: for "a",
    "b" and "c", each matrix element's place among a warp's fragment elements (mma.matrix_places);
    ``elements``: their fragments' elements a lane; ``dplaces``: the matrix element (row * n + col)
    of each of D's places (one element a register)."""
    from .mma import BITS
    m, n, k = shape
    if ctype != dtype or (atype, btype, ctype) not in _TAKEN:
        return None
    bits = {"a": BITS[atype], "b": BITS[btype], "c": BITS[ctype]}
    target = {u: _targets(places[u], elements[u]) for u in "abc"}
    # sm_70's f16 fragments repeat their elements in the later registers: those are not read
    used = {u: 1 + int(np.flatnonzero((target[u] >= 0).any(axis=0)).max()) // max(1, 32 // bits[u]) for u in "abc"}
    dsrc = np.ascontiguousarray(dplaces, np.int64)
    kind = _TAKEN[(atype, btype, ctype)]
    if kind == "floats":            # B transposed (element kk * n + j at j * k + kk): read along k as A is
        t = target["b"]
        target["b"] = np.where(t >= 0, t % n * k + t // n, -1)

    def run(warps, a, b, c):
        f = kernels(shape, block or k)[kind]
        lanes, registers = a[0].size, dsrc.size // 32
        ok = np.ones(warps.size, np.bool_)
        c = tuple(x.view(np.float32) for x in c) if kind == "floats" else c
        args = (warps, a[:used["a"]], b[:used["b"]], c[:used["c"]], target["a"], target["b"], target["c"], dsrc)
        if kind == "floats":
            d = tuple(np.empty(lanes, np.uint32) for _ in range(registers))
            f(*args, bits["a"], np.uint64(13 if atype == "tf32" else 0), *input_table(atype), d, ok)
        elif kind == "doubles":
            d = tuple(np.empty(lanes, np.uint64) for _ in range(registers))
            f(*args, tuple(x.view(np.float64) for x in d), ok)
        else:
            d = tuple(np.empty(lanes, np.uint32) for _ in range(registers))
            f(*args, bits["a"], INTEGERS[atype], bits["b"], INTEGERS[btype], sat, d)
        return d, ok
    return run


def _targets(places, elements):
    """For each fragment element (lane, element), the matrix element it holds, -1 where it repeats
    one held at an earlier place (``places``: each matrix element's first place, mma.matrix_places)."""
    places = np.asarray(places, np.int64)
    target = np.full(32 * elements, -1, np.int64)
    target[places[places >= 0]] = np.flatnonzero(places >= 0)
    return target.reshape(32, elements)


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
             if x[1:] == y[1:]}}
