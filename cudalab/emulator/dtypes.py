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
    b = np.asarray(f, np.float32).view(np.uint32)
    if rounding == "rz":
        out = b >> np.uint32(16)
    else:
        lsb = (b >> np.uint32(16)) & np.uint32(1)
        out = (b + np.uint32(0x7FFF) + lsb) >> np.uint32(16)
    nan = np.isnan(np.asarray(f, np.float32))
    out = np.where(nan, (b >> np.uint32(16)) | np.uint32(0x40), out)
    return out.astype(np.uint16)


# ------------------------------------------------------------------ exact fused multiply-add

def _two_sum(a, b):
    s = a + b
    bb = s - a
    err = (a - (s - bb)) + (b - bb)
    return s, err


def _round_to_odd_sum(a, b):
    """a + b in float64 rounded to odd: the last bit records inexactness, so a later rounding to a
    narrower format is correct (Boldo & Melquiond, 'Emulation of FMA and correctly rounded sums')."""
    s, err = _two_sum(a, b)
    sb = s.view(np.uint64) if isinstance(s, np.ndarray) else np.asarray(s).view(np.uint64)
    inexact = (err != 0) & np.isfinite(s)
    even = (sb & np.uint64(1)) == 0
    fix = inexact & even
    if np.any(fix):
        up = (np.sign(err) == np.sign(s))  # exact value is farther from zero than s
        sb = np.where(fix, np.where(up, sb + np.uint64(1), sb - np.uint64(1)), sb)
        s = sb.view(np.float64)
    return s


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


def _split(a):
    c = a * 134217729.0  # 2^27 + 1 (Dekker)
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    return p, err


def fma_f64(a, b, c):
    """Correctly rounded float64 a*b+c from error-free transformations (Boldo & Melquiond):
    (ph, pl) = a*b exactly; (uh, ul) = ph + c exactly; result = uh + RO(pl + ul)."""
    a, b, c = (np.asarray(x, np.float64) for x in (a, b, c))
    shape = np.broadcast(a, b, c).shape
    a, b, c = (np.broadcast_to(x, shape).ravel() for x in (a, b, c))
    with np.errstate(all="ignore"):
        ph, pl = _two_prod(a, b)
        uh, ul = _two_sum(c, ph)
        v = _round_to_odd_sum(pl, ul)
        r = uh + v
        plain = a * b + c
        ok = np.isfinite(r) & np.isfinite(ph) & (np.abs(ph) < 1e300) & (np.abs(a) > 1e-280) | (ph == 0)
        # products near over/underflow lose exactness in Dekker's split: fall back to the plain sum
        r = np.where(ok & np.isfinite(pl), r, plain)
        r = np.where((a == 0) | (b == 0), c + a * b, r)
    return r.reshape(shape) if shape else r[0]


def flush_subnormal(x):
    """.ftz: subnormal inputs and results become zero of the same sign."""
    x = np.asarray(x)
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros((), x.dtype), x), x)
