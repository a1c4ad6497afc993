"""Warp matrix operations: wmma.load/mma/store, mma.sync, ldmatrix, stmatrix, movmatrix, cvt to tf32.

A warp holds each matrix as a *fragment*: every lane keeps some of its elements in registers. The
instructions here gather the fragments of all 32 lanes into matrices (numpy arrays of shape
(warps, rows, cols)), multiply, and scatter the result back, for every warp of the batch at once.

* **Where each element lives** (``mma_layout``, ``wmma_layout``): mma.sync's fragments are the PTX
  ISA's ("Matrix fragments for mma.m16n8k16" and the other shapes: groupID = lane >> 2 picks the row,
  lane % 4 the column pair). wmma's are implementation-defined; a Hopper GPU builds them from
  mma.sync's (tools/mma_probe.py measured every type, shape and layout on an H200, the H100's chip):
  A is the m16 A fragment per 16 rows (m8: its first 8 rows), B the n8 B fragments one after the
  other (m8n32: per 16 columns, the registers of two n-blocks interleaved), C the 16x8 C fragment
  per block (m8n32: transposed, as if computed as m32n8 of B^T A^T); f16 A and B fragments keep
  sm_70's 16 elements by repeating theirs. The row/col layout in memory does not change them.
* **How the tensor core adds** (``dot_float``), measured (tests/kernels/recorded/mma.npz,
  tests/mma_probe_h200.npz): f16/bf16/tf32 products are exact; all K products of one hardware step
  and C are aligned to the largest exponent among C's and the products' (a product's exponent is the
  sum of its factors', before normalization; C counts as at least 2**-126), each cut (toward zero) 25
  bits below it, summed exactly, and the sum truncated to float32, except that a sum of 2**128 or
  more becomes infinity and one too small for float32 becomes +0.
  An f16 result is that float32 rounded to nearest (a nonzero sum that becomes zero is +0). tf32
  operands lose their low 13 bits; wmma's m16n16k8 tf32 runs as two k=4 steps. NaN results are the
  canonical 0x7fffffff. f64 (DMMA) is a chain of IEEE fmas in k order starting from C, a NaN made on
  the way kept; integers are exact, wrapping to 32 bits (.satfinite clamps).
"""
from __future__ import annotations

import functools
import re

import numpy as np

from . import alu, mma_native
from .decode import DECODERS, Unsupported, op
from .dtypes import fma_f64, storage
from .memops import gather, resolve, scatter
from .memory import SHARED_WINDOW, WINDOW_SIZE
from .operands import address_reader, reader, writer

BITS = {"f16": 16, "bf16": 16, "tf32": 32, "f32": 32, "f64": 64, "s32": 32, "s8": 8, "u8": 8, "s4": 4, "u4": 4}
FLOAT_IN = ("f16", "bf16", "tf32")
INPUTS = FLOAT_IN + ("f64", "s8", "u8", "s4", "u4")      # mma.sync's, each checked against the GPU
WMMA_INPUTS = FLOAT_IN + ("f64", "s8", "u8")             # wmma's sub-byte forms' layouts are not measured


def shape_of(mods):
    for m in mods:
        got = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", m)
        if got:
            return tuple(int(x) for x in got.groups())
    raise Unsupported("a matrix instruction without an mMnNkK shape")


# ---------------------------------------------------------------- fragment layouts: (rows, cols), each (32, elements)

_LANE = np.arange(32)
_G, _T = _LANE >> 2, _LANE & 3


def mma_layout(use, m, n, k, typ):
    """Row and column of every fragment element of mma.sync (PTX ISA 9.7.14.5): element e of
    register j of lane l. Accumulators count elements (an f16x2 register holds two)."""
    if use == "c":
        i = np.arange(m * n // 32)
        return tuple(np.broadcast_arrays(_G[:, None] + 8 * (i >> 1), 2 * _T[:, None] + (i & 1)))
    epr = max(1, 32 // BITS[typ])
    regs = (m if use == "a" else n) * k // (32 * epr)
    j = np.repeat(np.arange(regs), epr)
    e = np.tile(np.arange(epr), regs)
    if use == "a":
        half = (j & 1) if m == 16 else 0
        kblock = (j >> 1) if m == 16 else j
        rows, cols = _G[:, None] + 8 * half, _T[:, None] * epr + kblock * 4 * epr + e
    else:
        rows, cols = _T[:, None] * epr + j * 4 * epr + e, _G[:, None]
    return tuple(np.broadcast_arrays(rows, cols))


@functools.lru_cache(maxsize=None)
def wmma_layout(use, m, n, k, typ, elements=None):
    """wmma's fragments as a Hopper GPU builds them from mma.sync's (module docstring); ``elements`` is
    the fragment's size in the PTX registers, reached by repeating when the natural size is smaller.
    Kept per form (a GEMM kernel has hundreds of wmma instructions of a few forms), read-only."""
    rows, cols = _wmma_layout(use, m, n, k, typ, elements)
    rows.setflags(write=False)
    cols.setflags(write=False)
    return rows, cols


def _wmma_layout(use, m, n, k, typ, elements):
    if use == "a":
        r, c = mma_layout("a", 16, 8, k, typ)
        if m == 8:
            keep = r[0] < 8
            r, c = r[:, keep], c[:, keep]
        blocks = [(r + 16 * b, c) for b in range(max(1, m // 16))]
    elif use == "b":
        r, c = mma_layout("b", 16, 8, k, typ)
        if n <= 16:                # n-blocks of 8 one after the other
            blocks = [(r, c + 8 * nb) for nb in range(n // 8)]
        else:                      # m8n32: per 16 columns, the registers of two n-blocks interleaved
            epr = max(1, 32 // BITS[typ])
            regs = r.shape[1] // epr
            blocks = [(r[:, j * epr:(j + 1) * epr], c[:, j * epr:(j + 1) * epr] + 8 * nb + 16 * grp)
                      for grp in range(n // 16) for j in range(regs) for nb in range(2)]
    else:
        r, c = mma_layout("c", 16, 8, k, typ)
        if (m, n) == (8, 8):
            blocks = [mma_layout("c", 8, 8, k, typ)]
        elif m == 8:                   # m8n32 is computed transposed (as m32n8 of B^T A^T): so is its C
            blocks = [(c, r + 16 * nb) for nb in range(2)]
        else:
            blocks = [(r + 16 * mb, c + 8 * nb) for mb in range(max(1, m // 16)) for nb in range(n // 8)]
    rows = np.concatenate([b[0] for b in blocks], axis=1)
    cols = np.concatenate([b[1] for b in blocks], axis=1)
    reps = elements // rows.shape[1] if elements else 1
    return np.tile(rows, reps), np.tile(cols, reps)


# ---------------------------------------------------------------- element bits <-> values

def unpack(regs, bits):
    """(warps, 32, registers) raw register words -> (warps, 32, elements) raw element bits."""
    regs = regs.astype(np.uint64)
    if bits >= 32:
        return regs
    epr = 32 // bits
    shifts = np.arange(epr, dtype=np.uint64) * np.uint64(bits)
    el = (regs[..., None] >> shifts) & np.uint64((1 << bits) - 1)
    return el.reshape(*regs.shape[:-1], -1)


def pack(elements, bits):
    el = elements.astype(np.uint64)
    if bits >= 32:
        return el
    epr = 32 // bits
    el = el.reshape(*el.shape[:-1], -1, epr)
    shifts = np.arange(epr, dtype=np.uint64) * np.uint64(bits)
    return (el << shifts).sum(axis=-1, dtype=np.uint64)


def values(raw, typ):
    """Raw element bits -> float64 (float types) or int64 values."""
    if typ == "f16":               # numpy converts halves in software: a table of all 65536 is faster
        return np.take(_f16_table(), raw.astype(np.uint16, copy=False))
    if typ == "bf16":
        return (raw.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)
    if typ == "tf32":               # the tensor core reads 19 bits of a float32: the low 13 are dropped
        return (raw.astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)
    if typ == "f32":
        return raw.astype(np.uint32).view(np.float32).astype(np.float64)
    if typ == "f64":
        return raw.view(np.float64)
    if typ in ("s8", "s4", "s32"):
        b = BITS[typ]
        v = raw.astype(np.int64)
        return np.where(v >= 1 << (b - 1), v - (1 << b), v)
    if typ in ("u8", "u4"):
        return raw.astype(np.int64)
    raise Unsupported(f"matrix elements of type .{typ}")


_F16 = []


def _f16_table():
    if not _F16:
        _F16.append(np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float64))
    return _F16[0]


def raw_bits(vals):
    """Result values (float32/float16/float64/int32 arrays) -> raw element bits."""
    return np.ascontiguousarray(vals).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[vals.itemsize]) \
        .astype(np.uint64)


# ---------------------------------------------------------------- the tensor core's arithmetic

def _exponent(x, emin=-np.inf):
    """floor(log2 |x|) as float64, at least ``emin``; -inf for zeros, infinities and NaN."""
    e = np.maximum(np.frexp(x)[1].astype(np.float64) - 1, emin)
    return np.where((x != 0) & np.isfinite(x), e, -np.inf)


def _lowest_bit(x):
    """The exponent of the lowest set bit of |x| (x = 12: 2); +inf for zeros, infinities and NaN."""
    f, e = np.frexp(np.abs(x))
    with np.errstate(invalid="ignore"):
        v = (f * 2.0 ** 53).astype(np.int64)
    lb = e.astype(np.float64) - 54 + np.frexp((v & -v).astype(np.float64))[1]
    return np.where((x != 0) & np.isfinite(x), lb, np.inf)


def _truncate_f32(s):
    """float64 -> float32 toward zero; 2**128 and beyond (and what rounds there) become infinity, and
    a nonzero sum too small for float32 becomes +0 whatever its sign, as f16 results do (eight
    products of -1.7e-77 on C = -0 gave +0 on an H200: fuzz seed 1908 of 2026-11-26).
    Where every sum is a normal float32's size, cutting the float64's low 29 bits is that truncation."""
    s = np.ascontiguousarray(s, np.float64)
    u = s.view(np.uint64)
    field = (u >> np.uint64(52)).astype(np.uint16) & np.uint16(0x7FF)
    normal = (field - np.uint16(897)) < np.uint16(255)          # 2**-126 <= |s| < 2**128
    with np.errstate(over="ignore", invalid="ignore"):
        r = (u & np.uint64(0xFFFFFFFFE0000000)).view(np.float64).astype(np.float32)
    if normal.all():
        return r
    rest = np.flatnonzero(~normal)
    r.flat[rest] = _truncate_f32_rest(s.flat[rest])
    return r


def _truncate_f32_rest(s):
    """_truncate_f32 of any float64 values: zeros, infinities, NaN, sums out of float32's normal range."""
    with np.errstate(over="ignore", invalid="ignore"):
        rn = s.astype(np.float32)
    over = np.abs(rn.astype(np.float64)) > np.abs(s)
    r = np.where(over & np.isfinite(s), np.nextafter(rn, np.float32(0)), rn)
    r = np.where((r == 0) & (s != 0), np.float32(0), r)
    return np.where(np.abs(s) >= 2.0 ** 128, np.copysign(np.float32(np.inf), s).astype(np.float32), r)


# the smallest normal exponent of each input type: a subnormal factor counts as that exponent when the
# tensor core aligns the products (its significand is not normalized first)
EMIN = {"f16": -14, "bf16": -126, "tf32": -126}
# and of the accumulator: a subnormal C counts as 2**-126 (its exponent field's), so the sum is never
# aligned below it. Fuzz seed 1908 of 2026-11-26 on an H200: C = 195 * 2**-149 next to eight products
# of -15.1 * 2**-149 gave 75 * 2**-149 (each product cut at 2**-151; aligned at C's own exponent they
# keep more bits: 74). A zero C (either sign) counts as 2**-133: fifteen products of -2**-149 or
# -2**-140 and one of +s keep s down to 2**-158 and cut it from 2**-159 (2**-133 - 25), where C = 2**-149
# cuts at 2**-151 and products of -2**-130 at 2**-155 (tools/bf16_probe.py, H200, 2026-11-26)
EMIN_C = -126
ZERO_C = -133
WINDOW = 25        # the bits kept below the top of the aligned sum


def dot_float(a, b, c, block=None, emin=-126):
    """D = A B + C for f16/bf16/tf32 inputs as an H100's tensor core sums (module docstring).
    a (W, M, K), b (W, K, N), c (W, M, N) float64 values; returns float32 (W, M, N). ``block``: the
    k-steps of the hardware instructions, each summed with the previous step's float32 result.
    ``emin``: the inputs' smallest normal exponent (EMIN): a subnormal factor's exponent is taken as
    that, so its products align the sum higher up (an H100's tf32 mma.sync of 2**-135 * -1.2 * 2**102
    cut that product away where a normalized exponent keeps it: fuzz seed 688 of 2026-11-26).

    Where no term can lose a bit to the alignment (the lowest set bits of C and of every product
    are at or above the quantum, as for small integers), the sum is exact in float64 and a matrix
    product gives it; only the other elements are summed term by term."""
    k = a.shape[2]
    if block and block < k:
        for k0 in range(0, k, block):
            c = dot_float(a[:, :, k0:k0 + block], b[:, k0:k0 + block], c, emin=emin).astype(np.float64)
        return c.astype(np.float32)
    with np.errstate(all="ignore"):
        s = c + np.matmul(a, b)
        exact = _exact_elements(a, b, c, emin)
        if exact is None:
            exact = _exact_elements_f64(a, b, c, emin)
        exact &= s != 0                         # a zero's sign comes from the term-by-term sum
        if exact.all():                         # small integers, as the samples' GEMMs hold: no NaN here
            return _truncate_f32(s)
        w, m, n = np.nonzero(~exact)
        if w.size > exact.size // 4:            # mostly term by term: all of it, without gathering
            eb = _exponent(b, emin)
            bt, ebt = np.swapaxes(b, 1, 2)[:, None], np.swapaxes(eb, 1, 2)[:, None]
            s = np.where(exact, s, _aligned_sum(a[:, :, None], bt, c, _exponent(a, emin)[:, :, None] + ebt,
                                                _c_exponent(c)))
        else:
            a_, b_ = a[w, m, :], b[w, :, n]
            s[w, m, n] = _aligned_sum(a_, b_, c[w, m, n], _exponent(a_, emin) + _exponent(b_, emin),
                                      _c_exponent(c[w, m, n]))
        return alu.gpu_nan(_truncate_f32(s))


def _exact_elements_f64(a, b, c, emin):
    """The elements whose C and products all have their lowest set bit at or above the quantum
    2**(top - 25) (top: an upper bound of the largest exponent among C's and the products'), all
    finite: nothing is cut, so float64 sums them exactly. The reference for _exact_elements."""
    ea, eb = _exponent(a, emin), _exponent(b, emin)
    finite = np.isfinite(a).all(axis=2)[:, :, None] & np.isfinite(b).all(axis=1)[:, None, :] & np.isfinite(c)
    top = np.maximum(_c_exponent(c), ea.max(axis=2)[:, :, None] + eb.max(axis=1)[:, None, :])
    low = _lowest_bit(a).min(axis=2)[:, :, None] + _lowest_bit(b).min(axis=1)[:, None, :]
    return finite & (low >= top - WINDOW) & (_lowest_bit(c) >= top - WINDOW)


def _c_exponent(c):
    """C's exponent for the alignment: at least EMIN_C, ZERO_C for a zero; -inf where C is not finite."""
    return np.where(np.isfinite(c), np.where(c == 0, ZERO_C, np.maximum(_exponent(c), EMIN_C)), -np.inf)


# ---------------------------------------------------------------- the same test from float32 bits

_ZERO = np.int16(4000)       # moves a zero's exponent below, and its lowest set bit above, every other's


def _f32_fields(x, emin):
    """float64 values that float32 holds exactly -> (exponent, lowest set bit) as int16 (a zero's
    exponent below -3000 and its lowest bit above 3000; the exponent at least ``emin``), and whether
    any is infinite or NaN; None if some value is not a float32 (then the float64 formulas decide).
    All four input types and C are float32 values, and these integer passes over their bits cost a
    fraction of frexp's (numpy's where on a random mask is slower still: zeros are moved by adding)."""
    f = x.astype(np.float32)
    if not (np.array_equal(f, x) or np.array_equal(f, x, equal_nan=True)):
        return None
    u = f.view(np.uint32)
    field = ((u >> np.uint32(23)) & np.uint32(0xFF)).astype(np.int16)
    m = (u & np.uint32(0x7FFFFF)) | ((field > 0).astype(np.uint32) << np.uint32(23))
    ctz = (((m & (~m + np.uint32(1))).astype(np.float32).view(np.uint32)) >> np.uint32(23)).astype(np.int16)
    zero = (m == 0).astype(np.int16) * _ZERO
    exponent = np.maximum(field - np.int16(127), np.int16(emin)) - zero
    lowest = np.maximum(field, np.int16(1)) + ctz - np.int16(150 + 127) + zero
    return exponent, lowest, bool((field == 255).any())


_TABLES = {}


def _input_table(emin):
    """(exponent, lowest set bit) of every float32 whose low 13 bits are zero, by its top 19 bits."""
    if emin not in _TABLES:
        with np.errstate(invalid="ignore"):
            every = (np.arange(1 << 19, dtype=np.uint32) << np.uint32(13)).view(np.float32).astype(np.float64)
            e, low, _ = _f32_fields(every, emin)
        _TABLES[emin] = e, low
    return _TABLES[emin]


def _folded(x, op):
    """op reduced over axis 1, by halves while it splits evenly (numpy's reductions over a short
    axis cost several times these few whole-array steps)."""
    while x.shape[1] > 1 and x.shape[1] % 2 == 0:
        h = x.shape[1] // 2
        x = op(x[:, :h], x[:, h:])
    return op.reduce(x, axis=1)


def _input_bounds(x, emin):
    """The largest exponent and smallest lowest set bit along axis 1 of x (W, K, rows) and whether
    it holds an infinity or NaN; None where a value is no float32. f16, bf16 and tf32 values keep
    the low 13 bits of their float32 zero: a table of the 2**19 remaining bit patterns answers them
    in one lookup; other values go through _f32_fields."""
    f = x.astype(np.float32)
    u = f.view(np.uint32)
    if (u & np.uint32(0x1FFF)).any() or not np.array_equal(f, x):
        got = _f32_fields(x, emin)
        if got is None:
            return None
        e, low, bad = got
    else:
        idx = u >> np.uint32(13)
        table_e, table_low = _input_table(emin)
        top = _folded(np.take(table_e, idx), np.maximum)
        return top, _folded(np.take(table_low, idx), np.minimum), bool((top >= 128).any())   # 128: inf, NaN
    return _folded(e, np.maximum), _folded(low, np.minimum), bad


def _exact_elements(a, b, c, emin):
    """The elements of D = A B + C that the tensor core sums exactly, as dot_float's float64 test
    finds them (C and every product on the grid of the quantum 2**(top - 25), all finite), from
    the values' float32 bits; None where that cannot be used (a value float32 does not hold)."""
    fa, fb = _input_bounds(np.swapaxes(a, 1, 2), emin), _input_bounds(b, emin)
    fc = _f32_fields(c, EMIN_C)
    if fa is None or fb is None or fc is None:
        return None
    (ta, la, bad_a), (tb, lb, bad_b), (ec, lc, bad_c) = fa, fb, fc
    ec = np.where(c == 0, np.int16(ZERO_C), np.maximum(ec, np.int16(EMIN_C)))    # a zero C counts as 2**-133
    top = np.maximum(ec, ta[:, :, None] + tb[:, None, :])
    low = np.minimum(la[:, :, None] + lb[:, None, :], lc)
    exact = low >= top - np.int16(WINDOW)
    if bad_a or bad_b or bad_c:
        exact &= np.isfinite(a).all(axis=2)[:, :, None] & np.isfinite(b).all(axis=1)[:, None, :] & np.isfinite(c)
    return exact


def _aligned_sum(a, b, c, pe, ec):
    """The tensor core's sum of dot products term by term: a, b (..., K) and c (...) broadcast
    together; pe (..., K) the products' exponents (the sums of their factors'), ec C's.
    The terms are added as integers of the quantum, so a zero sum is +0, even when C and every
    product are negative zeros (eight tiny negative products cut to nothing and C = -0 gave +0 on an
    H200; fuzz seeds 153 and 3082, C = -0 and products of -0, gave +0 on an H100 and an H200)."""
    p = a * b
    pe = np.where(p != 0, pe, -np.inf)
    top = np.maximum(ec, pe.max(axis=-1))
    q = np.exp2(np.where(np.isfinite(top), top, 0) - WINDOW)
    s = np.trunc(c / q) * q + (np.trunc(p / q[..., None]) * q[..., None]).sum(axis=-1)
    s = np.where(s == 0, 0.0, s)
    return np.where(np.isfinite(p).all(axis=-1) & np.isfinite(c), s, c + p.sum(axis=-1))


def to_f16(d):
    """An f16 accumulator: the float32 sum rounded to nearest; a nonzero sum too small for f16
    becomes +0 whatever its sign (measured: tests/mma_probe_h200.npz, the denormal tiles)."""
    h = alu.gpu_nan(d.astype(np.float16))
    return np.where((h == 0) & (d != 0), np.float16(0), h)


def dot_f64(a, b, c):
    """DMMA: IEEE fmas in k order, starting from C, each choosing among NaN operands B's, else the
    sum's, else A's (an inf - inf made on the way, 0xfff8000000000000, stays unless a later B element
    is NaN; measured by tests/fuzz/found_v2.py's mma_f64 on an H100, 2026-11-26).
    When every partial sum is exact in float64 (all terms on one 53-bit grid, as for small
    integers), a matrix product gives the same bits at once."""
    with np.errstate(all="ignore"):
        bound = np.abs(c) + np.matmul(np.abs(a), np.abs(b))
        low = np.minimum(_lowest_bit(a).min(axis=2)[:, :, None] + _lowest_bit(b).min(axis=1)[:, None, :],
                         _lowest_bit(c))
        if np.all(np.isfinite(bound) & (bound != 0) & (_exponent(bound) + 2 - low <= 53)):
            return c + np.matmul(a, b)
    d = c
    for kk in range(a.shape[2]):
        x, y = np.broadcast_arrays(a[:, :, kk][:, :, None], b[:, kk, :][:, None, :])
        with np.errstate(all="ignore"):     # (an overflow or inf - inf is D's value, not a fault)
            p = x * y
            # a zero product adds nothing (IEEE's d + 0 keeps the zero signs right): only the rest need an
            # fma, whose exact fallback for zeros is slow
            step = d + p
        zero = ((x == 0) & np.isfinite(y)) | ((y == 0) & np.isfinite(x))
        full = np.flatnonzero(~zero.ravel())
        if full.size:
            step.flat[full] = fma_f64(x.ravel()[full], y.ravel()[full], d.ravel()[full], nan_first="b")
        d = step
    return alu.gpu_nan(d)


def dot_int(a, b, c, sat):
    d = c + np.einsum("wmk,wkn->wmn", a, b)
    if sat:
        return np.clip(d, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
    return d.astype(np.int64).astype(np.uint64).astype(np.uint32).view(np.int32)


def multiply(a, b, c, atype, ctype, dtype, sat, block=None):
    """The matrix product of one instruction, whatever its types; returns D as dtype's numpy type."""
    if atype in FLOAT_IN:
        d = dot_float(a, b, c, block, EMIN[atype])
        return to_f16(d) if dtype == "f16" else d
    if atype == "f64":
        return dot_f64(a, b, c)
    if atype in ("s8", "u8", "s4", "u4"):
        return dot_int(a, b, c, sat)
    raise Unsupported(f"mma with .{atype} inputs")


# ---------------------------------------------------------------- fragments in registers

def matrix_places(rows, cols, shape):
    """Where each element of a (rows, cols) matrix is read from among a warp's fragment elements
    (lane-major, as ``rows``/``cols`` list them): its first place (the lowest element index), -1
    where no lane holds it (a zero)."""
    index = np.arange(rows.size).reshape(rows.shape)
    src = np.full(shape[0] * shape[1], -1)
    src[(rows * shape[1] + cols)[:, ::-1].T.ravel()] = index[:, ::-1].T.ravel()
    return src


class Fragment:
    """The registers of one fragment operand ({%r1, %r2, ...}) and where their elements belong."""

    def __init__(self, operand, typ, rows, cols, func, d):
        regs = operand[1] if operand[0] == "vec" else (operand,)
        self.typ, self.bits = typ, BITS[typ]
        word = "b64" if self.bits == 64 else "b32"
        self.readers = [reader(o, word, func, d) for o in regs]
        self.writers = [writer(o, word, func) if o[0] == "reg" else None for o in regs]
        self.rows, self.cols = rows, cols
        self.word = np.uint64 if self.bits == 64 else np.uint32
        # the plain registers' names (mma_runs reaches them by name), None where one is not
        self.names = [o[1] for o in regs] if all(o[0] == "reg" and not o[2] for o in regs) else None
        elements = len(regs) * max(1, 32 // self.bits)
        if rows.shape[1] != elements:
            raise Unsupported(f"a {typ} fragment of {len(regs)} registers")

    def _every_warp(self, ex, warps):
        """Whether ``warps`` is every warp of the batch (then no lane needs picking out)."""
        return warps.size * 32 == ex.n

    def read(self, ex, warps):
        """Raw element bits (len(warps), 32, elements) of the given warps, as unsigned integers of the
        element's width (uint64 for sub-byte elements)."""
        every = self._every_warp(ex, warps)
        words = np.empty((warps.size * 32, len(self.readers)), self.word)
        for j, r in enumerate(self.readers):
            v = np.asarray(r(ex, None))
            v = v.view(self.word) if v.dtype.itemsize == words.itemsize and v.dtype.kind in "uif" \
                and v.dtype != np.bool_ else v.astype(self.word)
            words[:, j] = v if v.ndim == 0 else v if every else v.reshape(-1, 32)[warps].ravel()
        words = words.reshape(warps.size, 32, -1)
        if self.bits in (8, 16):                 # little-endian: element e of a word is its e-th slice
            return words.view(np.uint8 if self.bits == 8 else np.uint16)
        return words if self.bits >= 32 else unpack(words, self.bits)

    def registers(self, ex):
        """The fragment's registers as a tuple of arrays over the batch (words: uint32, f64's uint64),
        or None where one is not such an array (a constant)."""
        regs = tuple(np.asarray(r(ex, None)) for r in self.readers)
        if all(v.shape == (ex.n,) and v.dtype == self.word for v in regs):
            return regs
        return None

    def _sources(self, shape):
        """matrix_places, with one past the end where no lane holds an element, and whether any does not."""
        key = ("sources", shape)
        if key not in self.__dict__:
            src = matrix_places(self.rows, self.cols, shape)
            holes = src < 0
            self.__dict__[key] = np.where(holes, self.rows.size, src), bool(holes.any())
        return self.__dict__[key]

    def matrix(self, ex, warps, shape):
        """The fragment's values gathered into (warps, rows, cols) with one take; a repeated element
        is read from its first place."""
        src, holes = self._sources(shape)
        raw = self.read(ex, warps).reshape(warps.size, -1)
        if holes:
            raw = np.concatenate([raw, np.zeros((warps.size, 1), raw.dtype)], axis=1)
        return values(np.take(raw, src, axis=1), self.typ).reshape((warps.size,) + shape)

    def write(self, ex, warps, raw):
        """Write raw element bits (len(warps), 32, elements) into the active lanes of the warps."""
        if self.bits in (8, 16):
            words = raw.astype(np.uint8 if self.bits == 8 else np.uint16).view(np.uint32)
        elif self.bits >= 32:
            words = raw.astype(self.word, copy=False)
        else:
            words = pack(raw, self.bits).astype(self.word)                  # (W, 32, registers)
        if ex.idx.size == ex.n and self._every_warp(ex, warps):      # every lane: whole registers
            for j, w in enumerate(self.writers):
                if w is not None:
                    w(ex, None, np.ascontiguousarray(words[:, :, j]).reshape(-1))
            return
        lanes = (warps[:, None] * 32 + _LANE[None, :]).ravel()
        keep = ex.mask[lanes]
        for j, w in enumerate(self.writers):
            if w is not None:
                w(ex, lanes[keep], words[:, :, j].ravel()[keep])

    def write_registers(self, ex, lanes, regs):
        """Write whole registers (arrays over the batch, as the compiled loops give them: ``registers``)
        at ``lanes``; where those are every lane of the batch, each array as it is."""
        every = lanes.size == ex.n
        for w, reg in zip(self.writers, regs):
            if w is not None:
                w(ex, None if every else lanes, reg if every else reg[lanes])

    def store_matrix(self, ex, warps, mat):
        """Scatter a (warps, rows, cols) result into the fragment."""
        vals = np.ascontiguousarray(mat[:, self.rows, self.cols])
        self.write(ex, warps, vals.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[vals.itemsize]))


def active_warps(ex, inst):
    """The warps executing a .sync.aligned matrix instruction, which needs all 32 of their threads
    (on a GPU a partial warp hangs or computes garbage: here it stops with a synccheck finding)."""
    if ex.idx.size == ex.n and ex.n % 32 == 0:     # every lane of the batch is here
        return np.arange(ex.n >> 5)
    warps = np.unique(ex.idx >> 5)
    full = (warps[:, None] * 32 + _LANE).ravel()
    if not ex.mask[full].all():
        w = int(full[~ex.mask[full]][0]) >> 5
        n = int(ex.mask[w * 32:(w + 1) * 32].sum())
        lane = int(w * 32 + np.flatnonzero(ex.mask[w * 32:(w + 1) * 32])[0])
        ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
            f"{inst.opcode} at line {inst.line} in kernel {ex.kernel_name} is a warp-wide instruction (.sync.aligned): "
            f"all 32 threads of a warp must execute it together, but only {n} threads of the warp of thread {t} in "
            f"block {b} did (the others took another branch or exited, or the block is not a whole number of "
            "warps). Call it where the whole warp goes."))
    return warps


# ---------------------------------------------------------------- mma.sync (PTX ISA 9.7.14.5.14)

@op("mma")
def _mma(inst, d):
    if not inst.has("sync"):
        raise Unsupported("mma without .sync")
    if any(x in inst.mods for x in ("sp", "sp::ordered_metadata")) or "xor" in inst.mods or "and" in inst.mods:
        raise Unsupported("sparse and single-bit mma")
    m, n, k = shape_of(inst.mods)
    types = [t for t in inst.mods if t in BITS]
    if len(types) != 4:
        raise Unsupported("mma without its four types (.dtype.atype.btype.ctype)")
    dtype, atype, btype, ctype = types
    if atype not in INPUTS or btype not in INPUTS:
        raise Unsupported(f"mma with .{atype}/.{btype} inputs")
    if (m, n, k) == (8, 8, 4) and atype == "f16":
        raise Unsupported("mma.m8n8k4 with .f16 inputs (Volta's quad-pair layout)")
    sat = "satfinite" in inst.mods
    f = d.func
    frag = {use: Fragment(o, t, *mma_layout(use if use != "d" else "c", m, n, k, t), f, d)
            for use, o, t in (("d", inst.operands[0], dtype), ("a", inst.operands[1], atype),
                              ("b", inst.operands[2], btype), ("c", inst.operands[3], ctype))}
    return _run_mma(inst, frag, (m, n, k), atype, ctype, dtype, sat, btype=btype)


def _run_mma(inst, frag, shape, atype, ctype, dtype, sat, block=None, btype=None):
    m, n, k = shape
    dims = {"a": (m, k), "b": (k, n), "c": (m, n)}
    fast = mma_native.plan({u: matrix_places(frag[u].rows, frag[u].cols, dims[u]) for u in "abc"},
                           {u: frag[u].rows.shape[1] for u in "abc"}, (frag["d"].rows * n + frag["d"].cols).ravel(),
                           shape, atype, btype or atype, ctype, dtype, sat, block)

    def general(ex, warps):
        a, b, c = (frag[u].matrix(ex, warps, dims[u]) for u in "abc")
        return multiply(a, b, c, atype, ctype, dtype, sat, block)

    def run(ex):
        warps = active_warps(ex, inst)
        regs = fast and mma_native.worth_loading(warps.size) and [frag[u].registers(ex) for u in "abc"]
        if not regs or None in regs:
            frag["d"].store_matrix(ex, warps, general(ex, warps))
            return
        # the compiled loop answers the warps whose sums it proves exact; the numpy path the others
        d, ok = fast(warps, *regs)
        rest = np.flatnonzero(~ok)
        if rest.size:
            bits = raw_bits(general(ex, warps[rest])[:, frag["d"].rows, frag["d"].cols])
            for j, reg in enumerate(d):
                reg.reshape(-1, 32)[warps[rest]] = bits[:, :, j]
        frag["d"].write_registers(ex, (warps[:, None] * 32 + _LANE).ravel(), d)   # active_warps: all 32 lanes
    if fast and all(frag[u].names for u in "abcd"):
        run.fusion = ("mma", fast, {**{u: frag[u].names for u in "abcd"}, "words": {
            x: np.dtype(frag[u].word).itemsize for u in "abcd" for x in frag[u].names}})
    return run


# ---------------------------------------------------------------- wmma (PTX ISA 9.7.14.4)

def _wmma_types(inst):
    return [t for t in inst.mods if t in BITS]


def _wmma_fragment(operand, use, typ, shape, func, d):
    if typ not in WMMA_INPUTS + ("f32", "s32"):
        raise Unsupported(f"wmma with .{typ} elements")
    regs = len(operand[1]) if operand[0] == "vec" else 1
    elements = regs * max(1, 32 // BITS[typ])
    rows, cols = wmma_layout(use, *shape, typ, elements)
    return Fragment(operand, typ, rows, cols, func, d)


@op("wmma")
def _wmma(inst, d):
    what = inst.mods[0]
    shape = shape_of(inst.mods)
    m, n, k = shape
    types = _wmma_types(inst)
    if what == "mma":
        # .alayout/.blayout say how the fragments were loaded; on an H100 the register layout of a
        # fragment is the same either way (tools/mma_probe.py), so they change nothing here
        if len(types) == 2:                      # f16: .dtype.ctype
            dtype, ctype = types
            atype = btype = "f16"
        else:
            dtype, atype, btype, ctype = types
        sat = "satfinite" in inst.mods
        f = d.func
        frag = {"d": _wmma_fragment(inst.operands[0], "c", dtype, shape, f, d),
                "a": _wmma_fragment(inst.operands[1], "a", atype, shape, f, d),
                "b": _wmma_fragment(inst.operands[2], "b", btype, shape, f, d),
                "c": _wmma_fragment(inst.operands[3], "c", ctype, shape, f, d)}
        # ptxas runs wmma.m16n16k8's tf32 product as two k=4 steps (each one truncated to float32)
        return _run_mma(inst, frag, shape, atype, ctype, dtype, sat, block=4 if atype == "tf32" else None, btype=btype)
    if what not in ("load", "store"):
        raise Unsupported(f"wmma.{what}")
    use = inst.mods[1]
    layout = next(x for x in inst.mods if x in ("row", "col"))
    typ = types[-1]
    space = next((x for x in inst.mods if x in ("global", "shared", "shared::cta")), "generic")
    space = "shared" if space.startswith("shared") else space
    if what == "load":
        frag_op, addr_op, stride_op = inst.operands[0], inst.operands[1], inst.operands[2:3]
    else:
        addr_op, frag_op, stride_op = inst.operands[0], inst.operands[1], inst.operands[2:3]
    frag = _wmma_fragment(frag_op, "c" if use in ("c", "d") else use, typ, shape, d.func, d)
    dims = {"a": (m, k), "b": (k, n), "c": (m, n), "d": (m, n)}[use]
    major, minor = (frag.rows, frag.cols) if layout == "row" else (frag.cols, frag.rows)
    default_ld = dims[1] if layout == "row" else dims[0]
    ar = address_reader(addr_op, d.func, d)
    rs = reader(stride_op[0], "u32", d.func, d) if stride_op else (lambda ex, sel: np.uint32(default_ld))
    esize = BITS[typ] // 8
    edt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[esize]
    ne = frag.rows.shape[1]
    # sm_70's fragments repeat their elements (16 halves for 8): a load reads the first copy once
    distinct = next(d for d in range(1, ne + 1) if ne % d == 0 and (frag.rows == np.tile(frag.rows[:, :d], ne // d)).all()
                    and (frag.cols == np.tile(frag.cols[:, :d], ne // d)).all())

    def addresses(ex, lanes, count=ne):
        base = np.broadcast_to(np.asarray(ar(ex, lanes), np.uint64), lanes.shape)
        ld = np.broadcast_to(np.asarray(rs(ex, lanes)).astype(np.uint64), lanes.shape)
        lane = lanes & 31
        off = major[lane, :count].astype(np.uint64) * ld[:, None] + minor[lane, :count].astype(np.uint64)
        return (base[:, None] + off * np.uint64(esize)).ravel()

    major_u, minor_u = (np.ascontiguousarray(x[:, :distinct], np.uint64) for x in (major, minor))

    def from_shared(ex, lanes):
        """The fragment's registers (arrays over the batch, set at ``lanes``) read by the compiled
        loop, when every element lies in shared memory in bounds; else None (global memory, a bad
        address: resolve's path)."""
        if space == "global" or ex.shared_size < esize or not mma_native.worth_loading(lanes.size // 32):
            return None
        sel = None if lanes.size == ex.n else lanes
        base = np.broadcast_to(np.asarray(ar(ex, sel), np.uint64), lanes.shape)
        if space == "generic":
            if not ((base >= np.uint64(SHARED_WINDOW)) & (base < np.uint64(SHARED_WINDOW + WINDOW_SIZE))).all():
                return None
            base = base - np.uint64(SHARED_WINDOW)
        ld = np.broadcast_to(np.asarray(rs(ex, sel)).astype(np.uint64, copy=False), lanes.shape)
        regs = tuple(np.empty(ex.n, frag.word) for _ in frag.writers)
        if not mma_native.loader()(lanes, mma_native.read_only(np.ascontiguousarray(base)),
                                   mma_native.read_only(np.ascontiguousarray(ld)), mma_native.read_only(ex.shared_base),
                                   major_u, minor_u, np.uint64(ex.shared_size), np.uint64(esize.bit_length() - 1),
                                   ex.shared.view(edt), frag.bits, regs):
            return None
        return regs

    if what == "load":
        def run(ex):
            warps = active_warps(ex, inst)
            lanes = (warps[:, None] * 32 + _LANE).ravel()
            lanes = lanes[ex.mask[lanes]]
            regs = None if ex.observers else from_shared(ex, lanes)
            if regs is not None:
                frag.write_registers(ex, lanes, regs)
                return
            count = ne if ex.observers else distinct        # observers see every element's access
            addrs = addresses(ex, lanes, count)
            sel = np.repeat(lanes, count)
            raw = np.zeros(sel.size, edt)
            for sp, buf, off, pos in resolve(ex, inst, space, addrs, sel, esize, "ld"):
                raw[pos] = gather(buf, off, np.dtype(edt))
            raw = raw.reshape(-1, count)
            if count < ne:
                raw = np.tile(raw, (1, ne // count))
            if lanes.size == warps.size * 32:
                full = raw
            else:
                full = np.zeros((warps.size * 32, ne), edt)
                full[np.searchsorted((warps[:, None] * 32 + _LANE).ravel(), lanes)] = raw
            frag.write(ex, warps, full.reshape(warps.size, 32, ne))
        base = addr_op[1]
        # mma_runs takes loads from shared memory whose registers each hold elements side by side in memory;
        # a generic address (bf16TensorCoreGemm's) with the shared window taken off its offset: one outside
        # the window is then out of bounds, and the load's own path reads it wherever it points
        generic = space == "generic" and base is not None and base[0] == "reg" and \
            storage(d.func.regs[base[1]]).itemsize == 8
        per = max(1, 32 // frag.bits)
        side_by_side = distinct % per == 0 and (major_u.reshape(32, -1, per) == major_u[:, ::per, None]).all() and \
            (minor_u.reshape(32, -1, per) == minor_u[:, ::per, None] + np.arange(per, dtype=np.uint64)).all()
        if (space == "shared" or generic) and frag.names and side_by_side and (base is None or base[0] == "reg") and \
                (not stride_op or stride_op[0][0] in ("reg", "imm")) and not (stride_op and stride_op[0][0] == "reg"
                                                                            and stride_op[0][2]):
            ld = stride_op[0][1] if stride_op and stride_op[0][0] == "reg" else \
                int(rs(None, None)) if stride_op else default_ld
            words = {x: np.dtype(frag.word).itemsize for x in frag.names}
            if base is not None:
                words[base[1]] = storage(d.func.regs[base[1]]).itemsize
            if isinstance(ld, str):
                words[ld] = storage(d.func.regs[ld]).itemsize
            run.fusion = ("load", None, {
                "regs": frag.names, "base": base and base[1],
                "offset": (int(addr_op[2]) + 2 ** 63) % 2 ** 64 - 2 ** 63 - (SHARED_WINDOW if generic else 0),
                "base_word": words.get(base and base[1], 8), "ld": ld, "major": major_u, "minor": minor_u,
                "esize": esize, "bits": frag.bits, "word": np.dtype(frag.word).itemsize, "words": words})
        return run

    def run(ex):
        warps = active_warps(ex, inst)
        raw = frag.read(ex, warps).reshape(-1, ne)
        lanes = (warps[:, None] * 32 + _LANE).ravel()
        keep = ex.mask[lanes]
        lanes, raw = lanes[keep], raw[keep]
        addrs = addresses(ex, lanes)
        sel = np.repeat(lanes, ne)
        vals = raw.ravel().astype(edt)
        for sp, buf, off, pos in resolve(ex, inst, space, addrs, sel, esize, "st"):
            scatter(buf, off, np.dtype(edt), vals[pos])
    return run


# ---------------------------------------------------------------- ldmatrix / stmatrix (PTX ISA 9.7.14.5.15-16)

def _matrix_count(inst):
    return next(int(x[1]) for x in inst.mods if x in ("x1", "x2", "x4"))


def _ldst_matrix(inst, d, store):
    if "m8n8" not in inst.mods or "b16" not in inst.mods:
        raise Unsupported(f"{inst.opcode} other than .m8n8 .b16")
    count = _matrix_count(inst)
    trans = "trans" in inst.mods
    space = "shared"
    addr_op, regs_op = (inst.operands[0], inst.operands[1]) if store else (inst.operands[1], inst.operands[0])
    regs = regs_op[1] if regs_op[0] == "vec" else (regs_op,)
    ar = address_reader(addr_op, d.func, d)
    rds = [reader(o, "b32", d.func, d) for o in regs]
    wrs = [writer(o, "b32", d.func) for o in regs]
    # lane l's register i holds elements (l >> 2, 2 (l % 4) + {0, 1}) of matrix i; .trans swaps them
    r = np.repeat(_G, 2).reshape(32, 2)
    c = 2 * _T[:, None] + np.arange(2)
    rows, cols = (c, r) if trans else (r, c)

    def run(ex):
        warps = active_warps(ex, inst)
        nw = warps.size
        full = (warps[:, None] * 32 + _LANE).ravel()
        providers = (warps[:, None] * 32 + np.arange(8 * count)).ravel()     # lanes giving row addresses
        addr_all = np.zeros(ex.n, np.uint64)
        got = np.asarray(ar(ex, ex.idx), np.uint64)
        addr_all[ex.idx] = got
        addrs = addr_all[providers]
        mats = np.zeros((nw, count, 8, 8), np.uint16)
        if store:
            vals = np.stack([np.asarray(np.broadcast_to(np.asarray(rd(ex, None)).astype(np.uint32), (ex.n,)))[full]
                             for rd in rds], axis=-1).reshape(nw, 32, count)
            halves = np.stack([vals & np.uint32(0xFFFF), vals >> np.uint32(16)], axis=-1).astype(np.uint16)
            for i in range(count):
                mats[:, i, rows, cols] = halves[:, :, i, :]
            flat = mats.reshape(nw * count * 8, 8)
            for sp, buf, off, pos in resolve(ex, inst, space, addrs, providers, 16, "st"):
                for e in range(8):
                    scatter(buf, off + np.uint64(2 * e), np.dtype(np.uint16), flat[pos, e])
            return
        # one 16-byte row per providing lane: each 8x8 matrix is one phase of 8 lanes in the bank analysis
        flat = np.zeros((providers.size, 8), np.uint16)
        for sp, buf, off, pos in resolve(ex, inst, space, addrs, providers, 16, "ld"):
            for e in range(8):
                flat[pos, e] = gather(buf, off + np.uint64(2 * e), np.dtype(np.uint16))
        mats = flat.reshape(nw, count, 8, 8)
        for i, w in enumerate(wrs):
            pair = mats[:, i][:, rows, cols].astype(np.uint32)                  # (W, 32, 2)
            w(ex, full, (pair[..., 0] | (pair[..., 1] << np.uint32(16))).ravel())
    return run


@op("ldmatrix")
def _ldmatrix(inst, d):
    return _ldst_matrix(inst, d, store=False)


@op("stmatrix")
def _stmatrix(inst, d):
    return _ldst_matrix(inst, d, store=True)


@op("movmatrix")
def _movmatrix(inst, d):
    """movmatrix.sync.aligned.m8n8.trans.b16: the warp's 8x8 matrix of b16 (ldmatrix's fragment
    layout, one register a lane) transposed."""
    rd = reader(inst.operands[1], "b32", d.func, d)
    w = writer(inst.operands[0], "b32", d.func)
    r = np.repeat(_G, 2).reshape(32, 2)
    c = 2 * _T[:, None] + np.arange(2)

    def run(ex):
        warps = active_warps(ex, inst)
        full = (warps[:, None] * 32 + _LANE).ravel()
        v = np.broadcast_to(np.asarray(rd(ex, None)).astype(np.uint32), (ex.n,))[full].reshape(-1, 32)
        mat = np.zeros((warps.size, 8, 8), np.uint32)
        mat[:, r, c] = np.stack([v & np.uint32(0xFFFF), v >> np.uint32(16)], axis=-1)
        pair = mat[:, c, r]
        keep = ex.mask[full]
        w(ex, full[keep], (pair[..., 0] | (pair[..., 1] << np.uint32(16))).ravel()[keep])
    return run


# ---------------------------------------------------------------- cvt to tf32 (PTX ISA 9.7.9.21)

def to_tf32(x, mode):
    """float32 -> tf32 bits (a float32 with its low 13 bits zero): .rna rounds to nearest with ties
    away from zero, .rn ties to even, .rz truncates. NaNs and infinities just lose their low 13 bits,
    as an H100 does (0x7f800001 becomes 0x7f800000: infinity; tests/kernels mma/cvt_rna_tf32_f32)."""
    u = np.asarray(x, np.float32).view(np.uint32)
    low = u & np.uint32(0x1FFF)
    keep = u & np.uint32(0xFFFFE000)
    if mode == "rna":
        up = low >= np.uint32(0x1000)
    elif mode == "rn":
        up = (low > np.uint32(0x1000)) | ((low == np.uint32(0x1000)) & ((u & np.uint32(0x2000)) != 0))
    else:
        up = np.zeros(u.shape, bool)
    special = (u & np.uint32(0x7F800000)) == np.uint32(0x7F800000)     # inf and NaN: the bits are cut
    return np.where(up & ~special, keep + np.uint32(0x2000), keep).astype(np.uint32)


def _wrap_cvt():
    base = DECODERS["cvt"]

    def dec(inst, d):
        if inst.types[:1] != ("tf32",):
            return base(inst, d)
        mode = next((m for m in inst.mods if m in ("rna", "rn", "rz")), "rna")
        w = writer(inst.operands[0], "b32", d.func)
        r = reader(inst.operands[1], "f32", d.func, d)

        def run(ex):
            sel = ex.ridx
            w(ex, sel, to_tf32(r(ex, sel), mode))
        return run
    DECODERS["cvt"] = dec


_wrap_cvt()
