"""PTX types as numpy dtypes, register storage, and the bit-exact float helpers numpy lacks.

Registers are stored as unsigned integers of their declared width (``.f32`` registers as uint32),
and every instruction views them as its own type: a ``mov.b32 %f1, %r1`` is then a free
reinterpretation, as on the GPU. bf16 has no numpy dtype, so it travels as uint16 bit patterns
and is widened to float32 (exactly) for arithmetic.
"""
from __future__ import annotations

import numpy as np

DTYPE = {
    "s8": np.int8, "s16": np.int16, "s32": np.int32, "s64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "bf16": np.uint16, "f16x2": np.uint32, "bf16x2": np.uint32, "tf32": np.uint32,
    "pred": np.bool_, "e4m3": np.uint8, "e5m2": np.uint8,
}
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
SINT = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def dtype(t: str):
    try:
        return np.dtype(DTYPE[t])
    except KeyError:
        raise KeyError(f"unknown PTX type .{t}") from None


def storage(t: str):
    """The numpy dtype a register declared with PTX type ``t`` is stored in."""
    if t == "pred":
        return np.dtype(np.bool_)
    return np.dtype(UINT[dtype(t).itemsize])


def is_float(t: str) -> bool:
    return t in ("f16", "f32", "f64", "bf16", "f16x2", "bf16x2")


def is_signed(t: str) -> bool:
    return t.startswith("s")


def bits(t: str) -> int:
    return 1 if t == "pred" else dtype(t).itemsize * 8


# ------------------------------------------------------------------ reinterpretation

def convert_storage(val, src_dt, dst_dt):
    """Fit a value of dtype ``src_dt`` into ``dst_dt`` storage the way PTX moves it into a register:
    same width -> reinterpret bits; narrower -> sign/zero-extend by the source's signedness;
    wider -> keep the low bits."""
    src_dt, dst_dt = np.dtype(src_dt), np.dtype(dst_dt)
    if src_dt == dst_dt:
        return val
    if dst_dt == np.bool_:
        return np.asarray(val) != 0
    if src_dt == np.bool_:
        return np.asarray(val).astype(dst_dt)
    if src_dt.itemsize == dst_dt.itemsize:
        return np.asarray(val).view(dst_dt)
    if src_dt.kind == "f":
        val = np.asarray(val).view(UINT[src_dt.itemsize])
        src_dt = val.dtype
    if src_dt.itemsize < dst_dt.itemsize:
        wide = (SINT if src_dt.kind == "i" else UINT)[dst_dt.itemsize]
        return np.asarray(val).astype(wide).view(dst_dt)
    return np.asarray(val).astype(UINT[dst_dt.itemsize]).view(dst_dt)


# ------------------------------------------------------------------ bf16

def bf16_to_f32(u16):
    return (np.asarray(u16).astype(np.uint32) << np.uint32(16)).view(np.float32)


def f32_to_bf16(f, rounding="rn"):
    """float32 -> bf16 bits, rounded as asked; a NaN becomes 0x7FFF, as on the GPU."""
    f = np.asarray(f, np.float32)
    b = f.view(np.uint32)
    trunc = b >> np.uint32(16)
    if rounding == "rn":
        out = (b + np.uint32(0x7FFF) + (trunc & np.uint32(1))) >> np.uint32(16)
    elif rounding in ("rm", "rp"):
        # away from zero when inexact and the value lies on the side the mode rounds to
        away = ((b & np.uint32(0xFFFF)) != 0) & (np.signbit(f) == (rounding == "rm"))
        out = trunc + away.astype(np.uint32)
    else:
        out = trunc
    nan = np.isnan(f)
    if nan.any():
        out = np.where(nan, np.uint32(0x7FFF), out)
    return out.astype(np.uint16)


# ------------------------------------------------------------------ error-free transformations

def two_sum(a, b):
    """s + err == a + b exactly, s = fl(a + b) (Knuth; any order of magnitudes)."""
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err



def _round_to_odd_sum(a, b):
    """a + b in float64 rounded to odd: the last bit records inexactness, so a later rounding to a
    narrower format is correct (Boldo & Melquiond, 'Emulation of FMA and correctly rounded sums')."""
    s, err = two_sum(a, b)
    sb = s.view(np.uint64) if isinstance(s, np.ndarray) else np.asarray(s).view(np.uint64)
    inexact = (err != 0) & np.isfinite(s)
    even = (sb & np.uint64(1)) == 0
    fix = inexact & even
    if np.any(fix):
        up = (np.sign(err) == np.sign(s))  # exact value is farther from zero than s
        sb = np.where(fix, np.where(up, sb + np.uint64(1), sb - np.uint64(1)), sb)
        s = sb.view(np.float64)
    return s


def _split(a):
    c = a * 134217729.0  # 2^27 + 1 (Dekker)
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a, b):
    """p + err == a * b exactly (Dekker), valid while nothing overflows or underflows."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, err


def scaled_two_prod(a, b):
    """(p, err, e): a * b == (p + err) * 2**e exactly for any finite float64 a, b (p, err come from
    the mantissas, so Dekker's product can neither overflow nor underflow)."""
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    p, err = _two_prod(ma, mb)
    return p, err, ea + eb


def sum_sign(*terms):
    """The sign (as a float64 of that sign, or 0) of the exact sum of float64 terms that do not
    overflow: error-free passes (cascaded two_sum) until nothing changes; the terms then do not
    overlap, so the largest nonzero one decides the sign (Priest's distillation)."""
    xs = [np.asarray(t, np.float64) for t in terms]
    for _ in range(12):
        changed = False
        for i in range(len(xs) - 1):
            s, e = two_sum(xs[i], xs[i + 1])
            changed = changed | (s != xs[i + 1]) | (e != xs[i])
            xs[i], xs[i + 1] = e, s
        if not np.any(changed):
            break
    sign = xs[-1]
    for x in reversed(xs[:-1]):
        sign = np.where(sign == 0, x, sign)
    return sign


def step_directed(r, err, mode):
    """Turn a round-to-nearest result ``r`` into the ``rz``/``rm``/``rp`` result, given ``err``,
    any float64 whose sign is that of (exact - r) (NaN where r is exact or meaningless). An
    overflow to infinity steps back to the largest finite number when the mode points that way."""
    r = np.asarray(r)
    with np.errstate(invalid="ignore"):
        if mode == "rz":
            move = np.where(np.signbit(r), err > 0, err < 0)
            target = np.zeros((), r.dtype)
        elif mode == "rm":
            move, target = err < 0, np.array(-np.inf, r.dtype)
        elif mode == "rp":
            move, target = err > 0, np.array(np.inf, r.dtype)
        else:
            return r
    if not np.any(move):
        return r
    return np.where(move, np.nextafter(r, target), r).astype(r.dtype)


# ------------------------------------------------------------------ exact fused multiply-add

def fma_f32(a, b, c):
    """Correctly rounded float32 a*b+c.

    The product is exact in float64, so only the sum rounds twice (to float64, then to float32).
    That double rounding can only go wrong when the float64 sum lands exactly halfway between two
    float32 values (or in float32's subnormal range); just those lanes are redone with the sum
    rounded to odd (Boldo & Melquiond), which makes the second rounding correct."""
    a64, b64, c64 = (np.asarray(x, np.float64) for x in (a, b, c))
    p = a64 * b64
    s = p + c64
    r = s.astype(np.float32)
    sb = np.asarray(s).view(np.uint64)
    risky = ((sb & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)) | (np.abs(s) < 2.0 ** -125)
    if np.ndim(s) == 0:
        if risky:
            return _round_to_odd_sum(np.atleast_1d(p), np.atleast_1d(c64)).astype(np.float32)[0]
        return r
    if risky.any():
        k = np.flatnonzero(risky)
        pk = p[k] if np.ndim(p) else np.full(k.size, p)
        ck = c64[k] if np.ndim(c64) else np.full(k.size, c64)
        fixed = _round_to_odd_sum(pk, ck).astype(np.float32)
        r[k] = np.where(np.isfinite(fixed), fixed, r[k])
    return r


def fma_f64(a, b, c, mode="rn", nan_first="b"):
    """float64 a*b+c rounded once, to nearest or by ``mode`` (rz/rm/rp).

    Where the magnitudes leave room (2**-900 <= |a*b| <= 2**900, |a|, |b| < 2**990, |c| < 2**1000),
    the exact result is the sum of three float64s: (ph, pl) = a*b from Dekker's product, and c.
    Round to nearest is uh + RO(pl + ul) with (uh, ul) = c + ph (Boldo & Melquiond); directed
    modes step from it by the sign of the exact remainder ph + pl + c - r (see sum_sign). The
    other lanes (zeros, infinities, NaN, extreme exponents) are computed exactly, one by one."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    shape = np.broadcast(a, b, c).shape
    a, b, c = (np.broadcast_to(x, shape).ravel() for x in (a, b, c))
    with np.errstate(all="ignore"):
        ph, pl = _two_prod(a, b)
        uh, ul = two_sum(c, ph)
        r = uh + _round_to_odd_sum(pl, ul)
        ap = np.abs(ph)
        fast = ((ap >= 2.0 ** -900) & (ap <= 2.0 ** 900) & (np.abs(a) < 2.0 ** 990) & (np.abs(b) < 2.0 ** 990)
                & (np.abs(c) < 2.0 ** 1000))
        if mode in ("rz", "rm", "rp"):
            err = sum_sign(ph, pl, c, -r)
            r = step_directed(r, err, mode)
            if mode == "rm":             # IEEE 754 6.3: an exact zero sum is -0 when rounding down
                r = np.where((r == 0) & (err == 0), -0.0, r)
    slow = np.flatnonzero(~fast)
    if slow.size:
        _fma_special(a, b, c, mode, slow, r)
        slow = slow[~_is_special(a[slow], b[slow], c[slow])]
        r[slow] = [_fma_exact(float(a[k]), float(b[k]), float(c[k]), mode) for k in slow]
        nan_in = np.isnan(a) | np.isnan(b) | np.isnan(c)
        if nan_in.any():                 # one NaN operand comes out (quieted later), as on the GPU: an
            # H100 takes b's, else c's, else a's, in DFMA and in DMMA's steps (found.py's f64_fma row;
            # a negated operand keeps its NaN's sign, see decode._neg); DFMA's b is the multiplicand
            # ptxas computed later (decode.later_operand), so nan_first="a" is a, c, b
            order = (b, c, a) if nan_first == "b" else (a, c, b)
            r = np.where(nan_in, np.where(np.isnan(order[0]), order[0], np.where(np.isnan(order[1]), order[1], order[2])), r)
    return r.reshape(shape) if shape else r[0]


def _is_special(a, b, c):
    """Lanes whose fma needs no exact arithmetic: a zero product (the sum is c, or a signed zero)
    or an operand that is infinite or NaN. Sparse matrices make whole launches of zero products."""
    fin_ab = np.isfinite(a) & np.isfinite(b)
    return ~(fin_ab & np.isfinite(c)) | (a == 0) | (b == 0)


def _fma_special(a, b, c, mode, lanes, r):
    """_fma_exact's answers for the _is_special lanes among ``lanes``, all at once, into ``r``."""
    a, b, c = a[lanes], b[lanes], c[lanes]
    special = _is_special(a, b, c)
    if not special.any():
        return
    lanes, a, b, c = lanes[special], a[special], b[special], c[special]
    with np.errstate(all="ignore"):
        fin_ab = np.isfinite(a) & np.isfinite(b)
        # a finite product plus an infinity or NaN is c; infinite or NaN factors: the plain sum
        out = np.where(fin_ab, c, a * b + c)
        zero_sum = fin_ab & np.isfinite(c) & (c == 0)        # a zero product plus a zero c
        p_neg = np.signbit(a) != np.signbit(b)
        c_neg = np.signbit(c)
        neg = (p_neg | c_neg) if mode == "rm" else (p_neg & c_neg)
        out = np.where(zero_sum, np.where(neg, -0.0, 0.0), out)
    r[lanes] = out


def _fma_exact(a, b, c, mode):
    """a*b+c from the exact rational value, with IEEE's zero signs and special values (slow)."""
    import math
    from fractions import Fraction
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        if math.isfinite(a) and math.isfinite(b):
            return c                               # finite product + infinity/NaN
        with np.errstate(all="ignore"):            # NaN inputs: fma_f64 puts the GPU's NaN in
            return float(np.float64(a) * np.float64(b) + np.float64(c))
    x = Fraction(a) * Fraction(b) + Fraction(c)
    if x == 0:
        p_neg = (math.copysign(1, a) < 0) != (math.copysign(1, b) < 0)
        c_neg = math.copysign(1, c) < 0
        if a == 0 or b == 0:                       # a zero product plus a zero c
            neg = (p_neg or c_neg) if mode == "rm" else (p_neg and c_neg)
        else:
            neg = mode == "rm"
        return -0.0 if neg else 0.0
    try:
        r = x.numerator / x.denominator            # correctly rounded to nearest
    except OverflowError:
        r = math.inf if x > 0 else -math.inf
    if mode in ("rz", "rm", "rp"):
        if math.isinf(r):
            err = -1.0 if r > 0 else 1.0           # the exact value is finite
        else:
            fr = Fraction(r)
            err = 0.0 if fr == x else (1.0 if x > fr else -1.0)
        r = float(step_directed(np.float64(r), np.float64(err), mode))
    return r


def flush_subnormal(x):
    """.ftz: subnormal inputs and results become zero of the same sign."""
    x = np.asarray(x)
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros((), x.dtype), x), x)
