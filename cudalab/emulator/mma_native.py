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

import math

import numpy as np

# (exponent bits, significand bits, low bits the tensor core ignores) of each element type
FORMATS = {"f16": (5, 10, 0), "bf16": (8, 7, 0), "tf32": (8, 10, 13), "f32": (8, 23, 0), "f64": (11, 52, 0)}
INTEGERS = {"s8": (8, True), "u8": (8, False), "s4": (4, True), "u4": (4, False), "s32": (32, True)}
FAR = 1 << 20            # a zero's exponent lies this far below, its lowest set bit this far above, any other's
NOT_FINITE = 1 << 10     # an infinity's or NaN's exponent in input_table
_OFFSET = 1100
_POW2 = np.ldexp(1.0, np.arange(-_OFFSET, 1000))              # 2**s for the significands' scales (f64: -1074 to 971)
_DEBRUIJN = 0x022FDD63CC95386D                              # de Bruijn sequence for a 64-bit count of trailing zeros
_CTZ = np.zeros(64, np.int64)
_CTZ[((np.uint64(1) << np.arange(64, dtype=np.uint64)) * np.uint64(_DEBRUIJN)) >> np.uint64(58)] = np.arange(64)

_KERNELS = {}


def kernels(shape, block):
    """The compiled loops for one mMnNkK shape and hardware step (numba is imported, and a loop
    compiled or read from its cache, on first use). The sizes are constants of the code: LLVM then
    unrolls and vectorizes the loops over them, several times faster than with sizes as arguments."""
    if (shape, block) not in _KERNELS:
        _KERNELS[shape, block] = _compile(*shape, block)
    return _KERNELS[shape, block]


def _compile(m, n, k, block):
    import numba

    jit = numba.njit(cache=True, nogil=True)
    # the sums are exact wherever they are used, so their order is free: reassociation lets LLVM vectorize
    exact_sums = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    pow2, ctz_table, debruijn = _POW2, _CTZ, np.uint64(_DEBRUIJN)

    @numba.njit(inline="always")
    def ctz(m):
        return ctz_table[((m & (~m + np.uint64(1))) * debruijn) >> np.uint64(58)]

    @numba.njit(inline="always")
    def decode(u, ebits, mbits):
        """An element's bits -> (value, exponent (at least the smallest normal's), lowest set bit,
        finite). A zero's exponent is -FAR and its lowest bit FAR: it bounds nothing."""
        emask = (np.uint64(1) << np.uint64(ebits)) - np.uint64(1)
        bias = (1 << (ebits - 1)) - 1
        e = (u >> np.uint64(mbits)) & emask
        sig = u & ((np.uint64(1) << np.uint64(mbits)) - np.uint64(1))
        if e == emask:
            return 0.0, 0, 0, False
        if e == 0 and sig == 0:
            return 0.0, -FAR, FAR, True
        if e > 0:
            sig |= np.uint64(1) << np.uint64(mbits)
        exponent = max(np.int64(e), 1) - bias
        scale = exponent - mbits
        v = np.float64(sig) * pow2[scale + _OFFSET]
        if (u >> np.uint64(mbits + ebits)) & np.uint64(1):
            v = -v
        return v, exponent, scale + ctz(sig), True

    @exact_sums
    def floats(a, b, c, asrc, bsrc, csrc, dsrc, shift, values, exponents, lowest, out, ok):
        """D = A B + C for f16/bf16/tf32 inputs and float32 C and D: a, b, c (warps, places) element
        bits (c: float32's), *src the place of each matrix element (row-major; -1: no lane holds it, a
        zero), dsrc the matrix element of each of D's places; values/exponents/lowest the input type's
        tables (input_table) by its bits shifted right by ``shift``. out gets D's float32 bits and ok
        whether the warp's were proven exact. The proof takes the largest exponent and the lowest set
        bit over the whole warp's A, B and C (each hardware step's k): a bound of every element's."""
        steps = (k + block - 1) // block
        av = np.empty((m, k))
        bt = np.empty((n, k))
        ta = np.empty(steps, np.int64)
        tla = np.empty(steps, np.int64)
        tb = np.empty(steps, np.int64)
        tlb = np.empty(steps, np.int64)
        s = np.empty(m * n)
        d = np.empty(m * n, np.float32)
        du = d.view(np.uint32)
        cf = c.view(np.float32)
        zero = a.dtype.type(0)
        for w in range(a.shape[0]):
            ta[:], tla[:], tb[:], tlb[:] = -FAR, FAR, -FAR, FAR
            for i in range(m):
                for kk in range(k):
                    p = asrc[i * k + kk]
                    u = a[w, p] >> shift if p >= 0 else zero
                    av[i, kk] = values[u]
                    ta[kk // block] = max(ta[kk // block], exponents[u])
                    tla[kk // block] = min(tla[kk // block], lowest[u])
            for kk in range(k):
                for j in range(n):
                    p = bsrc[kk * n + j]
                    u = b[w, p] >> shift if p >= 0 else zero
                    bt[j, kk] = values[u]
                    tb[kk // block] = max(tb[kk // block], exponents[u])
                    tlb[kk // block] = min(tlb[kk // block], lowest[u])
            good = True
            for q in range(steps):
                good &= ta[q] < NOT_FINITE and tb[q] < NOT_FINITE
            for i in range(m * n):
                p = csrc[i]
                s[i] = cf[w, p] if p >= 0 else 0.0
            du[:] = 0
            for q in range(steps):
                if not good:
                    break
                k0, k1 = q * block, min(k, q * block + block)
                ec, lc = -FAR, FAR                  # C: at least 2**-126, a zero 2**-133 (mma.ZERO_C)
                for i in range(m * n):
                    u = c[w, csrc[i]] if q == 0 and csrc[i] >= 0 else du[i] if q else np.uint32(0)
                    field = np.int64((u >> np.uint32(23)) & np.uint32(0xFF))
                    sig = np.uint64(u & np.uint32(0x7FFFFF))
                    if field == 255:
                        good = False
                    elif field == 0 and sig == 0:
                        ec = max(ec, -133)
                    else:
                        ec = max(ec, max(field, 1) - 127)
                        lc = min(lc, max(field, 1) - 150 + ctz(sig | (np.uint64(field > 0) << np.uint64(23))))
                if min(tla[q] + tlb[q], lc) < max(ec, ta[q] + tb[q]) - 25:
                    good = False
                if not good:
                    break
                for i in range(m):                  # every term on one grid, fewer than 2**32 of its steps:
                    for j in range(n):              # exact in float64, in any order
                        acc = 0.0
                        for kk in range(k0, k1):
                            acc += av[i, kk] * bt[j, kk]
                        s[i * n + j] += acc
                for i in range(m * n):              # cut toward zero to float32; an exact zero is +0
                    v = s[i]
                    if v == 0.0:
                        d[i] = 0.0
                    elif abs(v) < 2.0 ** -126 or abs(v) >= 2.0 ** 128:
                        good = False
                    else:
                        d[i] = np.float32(v)
                        if abs(np.float64(d[i])) > abs(v):
                            du[i] -= np.uint32(1)
                    s[i] = d[i]                     # the next hardware step adds to this float32
            ok[w] = good
            if good:
                for p in range(dsrc.size):
                    out[w, p] = du[dsrc[p]]

    @jit
    def doubles(a, b, c, asrc, bsrc, csrc, dsrc, out, ok):
        """DMMA where every partial sum of the fma chain is exact in float64 (all terms on one grid,
        the sum of their magnitudes below 2**53 of its steps): then it is C + A B in any order.
        Arguments as floats', the bits float64's."""
        av = np.empty(m * k)
        la = np.empty(m * k, np.int64)
        bv = np.empty(k * n)
        lb = np.empty(k * n, np.int64)
        for w in range(a.shape[0]):
            good = True
            for i in range(m * k):
                p = asrc[i]
                av[i], _, la[i], fin = decode(a[w, p] if p >= 0 else np.uint64(0), 11, 52)
                good &= fin
            for i in range(k * n):
                p = bsrc[i]
                bv[i], _, lb[i], fin = decode(b[w, p] if p >= 0 else np.uint64(0), 11, 52)
                good &= fin
            for p in range(dsrc.size):
                if not good:
                    break
                i, j = dsrc[p] // n, dsrc[p] % n
                q = csrc[dsrc[p]]
                cvalue, _, low, fin = decode(c[w, q] if q >= 0 else np.uint64(0), 11, 52)
                total, bound = cvalue, abs(cvalue)
                for kk in range(k):
                    total += av[i * k + kk] * bv[kk * n + j]
                    bound += abs(av[i * k + kk] * bv[kk * n + j])
                    low = min(low, la[i * k + kk] + lb[kk * n + j])
                if not fin or bound == 0.0 or bound > 1e300 or math.frexp(bound)[1] + 1 - low > 53:
                    good = False
                out[w, p] = total
            ok[w] = good

    @jit
    def integers(a, b, c, asrc, bsrc, csrc, dsrc, abits, asigned, bbits, bsigned, sat, out):
        """Integer mma: exact, wrapping to 32 bits or clamped (.satfinite); always proven."""
        av = np.empty(m * k, np.int64)
        bv = np.empty(k * n, np.int64)
        s = np.empty(m * n, np.int64)
        for w in range(a.shape[0]):
            for i in range(m * k):
                p = asrc[i]
                x = np.int64(a[w, p]) if p >= 0 else 0
                av[i] = x - (1 << abits) if asigned and x >= 1 << (abits - 1) else x
            for i in range(k * n):
                p = bsrc[i]
                x = np.int64(b[w, p]) if p >= 0 else 0
                bv[i] = x - (1 << bbits) if bsigned and x >= 1 << (bbits - 1) else x
            for i in range(m * n):
                p = csrc[i]
                s[i] = np.int64(c[w, p]) if p >= 0 else 0
            for i in range(m):
                for kk in range(k):
                    x = av[i * k + kk]
                    for j in range(n):
                        s[i * n + j] += x * bv[kk * n + j]
            for p in range(dsrc.size):
                v = s[dsrc[p]]
                out[w, p] = min(max(v, -2 ** 31), 2 ** 31 - 1) if sat else v     # stored: the low 32 bits

    return {"floats": floats, "doubles": doubles, "integers": integers}


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
    NaN's exponent is NOT_FINITE."""
    if typ not in _TABLES:
        from . import mma
        raw = np.arange(1 << (19 if typ == "tf32" else 16), dtype=np.uint64) << np.uint64(13 if typ == "tf32" else 0)
        with np.errstate(invalid="ignore"):
            v = mma.values(raw, typ)
            e, low, _ = mma._f32_fields(v, mma.EMIN[typ])
        _TABLES[typ] = (v, np.where(np.isfinite(v), e, NOT_FINITE).astype(np.int64), low.astype(np.int64))
    return _TABLES[typ]


_TABLES = {}
_TAKEN = {**{(x, y, "f32"): "floats" for x in ("f16", "bf16", "tf32") for y in ("f16", "bf16", "tf32") if x == y},
          ("f64", "f64", "f64"): "doubles",
          **{(x, y, "s32"): "integers" for x in ("s8", "u8", "s4", "u4") for y in ("s8", "u8", "s4", "u4")
             if INTEGERS[x][0] == INTEGERS[y][0]}}
