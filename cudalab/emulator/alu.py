"""Arithmetic semantics: one small numpy function per PTX operation, grouped by family.

Each entry takes the operand values (already viewed as the instruction's type) plus the
instruction's modifiers and returns the result; type handling and lane masking happen once, in
``decode``. References are to the PTX ISA (version 9.x), section "Instructions".
"""
from __future__ import annotations

import numpy as np

from .dtypes import (SINT, UINT, _two_prod, bf16_to_f32, f32_to_bf16, flush_subnormal, fma_f32, fma_f64,
                     scaled_two_prod, step_directed, two_sum)


def _u(a):
    a = np.asarray(a)
    return a.view(UINT[a.dtype.itemsize]) if a.dtype.kind != "u" else a


def _width(a):
    return np.asarray(a).dtype.itemsize * 8


# ------------------------------------------------------------------ integer (PTX ISA 9.7.1, 9.7.8)

def mul_hi(a, b):
    """High half of the double-width product (mul.hi)."""
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    n = dt.itemsize * 8
    if n <= 32:
        wide = np.int64 if dt.kind == "i" else np.uint64
        return ((a.astype(wide) * b.astype(wide)) >> n).astype(dt)
    # 64-bit: unsigned 128-bit product from 32-bit halves, then a signed correction
    ua, ub = a.view(np.uint64) if a.ndim else np.uint64(a.view(np.uint64)), \
        b.view(np.uint64) if b.ndim else np.uint64(b.view(np.uint64))
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah, bl, bh = ua & m32, ua >> s32, ub & m32, ub >> s32
    ll, lh, hl, hh = al * bl, al * bh, ah * bl, ah * bh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    if dt.kind == "i":
        hi = hi - np.where(a < 0, ub, np.uint64(0)) - np.where(b < 0, ua, np.uint64(0))
    return np.asarray(hi).view(dt) if np.ndim(hi) else np.asarray(hi).view(dt)[()]


def mul_wide(a, b):
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    wide = (SINT if dt.kind == "i" else UINT)[dt.itemsize * 2]
    return a.astype(wide) * b.astype(wide)


def idiv(a, b):
    """Truncating division; x/0 gives what the GPU gives (all ones for unsigned, -1 for signed)."""
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    zero = b == 0
    bs = np.where(zero, np.ones((), dt), b).astype(dt)
    if dt.kind == "u":
        q = a // bs
        return np.where(zero, np.array(np.iinfo(dt).max, dt), q).astype(dt)
    # trunc division in a wider type avoids INT_MIN / -1 overflow traps
    wide = np.int64 if dt.itemsize < 8 else None
    if wide is not None:
        aw, bw = a.astype(wide), bs.astype(wide)
        q = np.abs(aw) // np.abs(bw)
        q = np.where((aw < 0) != (bw < 0), -q, q).astype(dt)
    else:
        q = _div64_signed(a, bs)
    return np.where(zero, np.array(-1, dt), q).astype(dt)


def _div64_signed(a, b):
    ua = np.abs(a).view(np.uint64) if np.ndim(a) else np.uint64(abs(int(a)) & 0xFFFFFFFFFFFFFFFF)
    ub = np.abs(b).view(np.uint64) if np.ndim(b) else np.uint64(abs(int(b)) & 0xFFFFFFFFFFFFFFFF)
    q = (ua // ub).view(np.int64) if np.ndim(ua // ub) else np.int64(np.uint64(ua // ub).astype(np.int64))
    neg = (a < 0) != (b < 0)
    return np.where(neg, -q, q)


def irem(a, b):
    """Truncating remainder (sign of the dividend); x % 0 gives all ones (-1 signed), as an H100 does."""
    a, b = np.asarray(a), np.asarray(b)
    dt = np.result_type(a, b)
    zero = b == 0
    bs = np.where(zero, np.ones((), dt), b).astype(dt)
    if dt.kind == "u":
        r = a % bs
    elif dt.itemsize < 8:
        aw, bw = a.astype(np.int64), bs.astype(np.int64)
        r = (np.abs(aw) % np.abs(bw)) * np.where(aw < 0, -1, 1)
    else:
        q = _div64_signed(a, bs)
        r = a - q * bs
    return np.where(zero, np.array(-1).astype(dt), r).astype(dt)


def shl(a, b):
    a = np.asarray(a)
    n = _width(a)
    b = np.asarray(b).astype(np.uint32)
    r = np.left_shift(a, np.minimum(b, n - 1).astype(a.dtype))
    return np.where(b >= n, np.zeros((), a.dtype), r)


def shr(a, b):
    """Logical for .u/.b, arithmetic for .s; amounts past the width clamp (PTX ISA shr)."""
    a = np.asarray(a)
    n = _width(a)
    b = np.asarray(b).astype(np.uint32)
    r = np.right_shift(a, np.minimum(b, n - 1).astype(a.dtype))
    if a.dtype.kind == "i":
        return np.where(b >= n, np.where(a < 0, np.array(-1, a.dtype), np.zeros((), a.dtype)), r)
    return np.where(b >= n, np.zeros((), a.dtype), r)


def shf(a, b, c, left, clamp):
    """Funnel shift of the 64-bit value b:a (shf.l / shf.r, .clamp or .wrap)."""
    c = np.asarray(c).astype(np.uint32)
    n = np.minimum(c, 32) if clamp else (c & np.uint32(31))
    wide = (np.asarray(b).astype(np.uint64) << np.uint64(32)) | np.asarray(a).astype(np.uint64)
    n64 = n.astype(np.uint64)
    if left:
        return ((wide << n64) >> np.uint64(32)).astype(np.uint32)
    return (wide >> n64).astype(np.uint32)


def popc(a):
    x = _u(a).astype(np.uint64)
    # SWAR popcount on 64-bit
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    c = ((x * np.uint64(0x0101010101010101)) >> np.uint64(56)).astype(np.uint32)
    return c


def clz(a):
    u = _u(a).astype(np.uint64)
    n = _width(a)
    # position of the highest set bit via float64 exponent is inexact for 64-bit; use binary search
    x = u.copy() if np.ndim(u) else np.uint64(u)
    count = np.zeros(np.shape(u), np.int64)
    for s in (32, 16, 8, 4, 2, 1):
        if s >= 64:
            continue
        hi = x >> np.uint64(s)
        has = hi != 0
        count = count + np.where(has, s, 0)
        x = np.where(has, hi, x)
    nbits = count + (x != 0)
    return (n - nbits).astype(np.uint32)


def bfind(a, shiftamt):
    """Position of the most significant non-sign bit (bfind), 0xFFFFFFFF when there is none."""
    a = np.asarray(a)
    n = _width(a)
    u = _u(np.where(a < 0, ~a, a)) if a.dtype.kind == "i" else _u(a)
    pos = (n - 1) - clz(u).astype(np.int64)
    none = pos < 0
    if shiftamt:
        pos = (n - 1) - pos
    return np.where(none, np.uint32(0xFFFFFFFF), pos.astype(np.uint32))


def brev(a):
    u = _u(a)
    n = _width(a)
    x = u.astype(np.uint64)
    r = np.zeros(np.shape(x), np.uint64)
    for i in range(n):
        r = r | (((x >> np.uint64(i)) & np.uint64(1)) << np.uint64(n - 1 - i))
    return r.astype(u.dtype)


def bfe(a, b, c):
    """Bit-field extract (PTX ISA bfe): bit i of the result is a[pos+i] for i < len while pos+i is
    inside the value, else the sign bit (a[min(pos+len-1, msb)] for signed types, 0 otherwise)."""
    a = np.asarray(a)
    n = _width(a)
    msb = n - 1
    pos = np.asarray(b).astype(np.int64) & 0xFF
    ln = np.asarray(c).astype(np.int64) & 0xFF
    u = _u(a).astype(np.uint64)
    avail = np.clip(np.minimum(ln, msb + 1 - pos), 0, 64)
    shifted = np.where(pos > msb, np.uint64(0), u >> np.minimum(pos, 63).astype(np.uint64))
    mask = np.where(avail >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << np.minimum(avail, 63).astype(np.uint64)) - np.uint64(1))
    field = shifted & mask
    if a.dtype.kind == "i":
        sidx = np.minimum(pos + ln - 1, msb)
        sbit = np.where(ln == 0, np.uint64(0), (u >> np.maximum(sidx, 0).astype(np.uint64)) & np.uint64(1))
        field = np.where(sbit == 1, field | ~mask, field)
    full = np.uint64((1 << n) - 1) if n < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
    return (field & full).astype(UINT[n // 8]).view(a.dtype)


def bfi(a, b, c, d):
    """Bit-field insert: put the low d bits of a into b at position c."""
    b = np.asarray(b)
    n = _width(b)
    if np.ndim(c) == 0 and np.ndim(d) == 0:       # position and length the same in every lane (immediates)
        return _bfi_uniform(a, b, int(c) & 0xFF, int(d) & 0xFF, n)
    pos = np.asarray(c).astype(np.int64) & 0xFF
    ln = np.asarray(d).astype(np.int64) & 0xFF
    ua, ub = _u(a).astype(np.uint64), _u(b).astype(np.uint64)
    ln_eff = np.minimum(ln, np.maximum(n - pos, 0))
    mask = np.where(ln_eff >= 64, np.uint64(0xFFFFFFFFFFFFFFFF),
                    (np.uint64(1) << ln_eff.astype(np.uint64)) - np.uint64(1))
    sh = np.minimum(pos, 63).astype(np.uint64)
    r = (ub & ~(mask << sh)) | ((ua & mask) << sh)
    r = np.where(pos >= n, ub, r)
    return r.astype(UINT[n // 8]).view(b.dtype)


def _bfi_uniform(a, b, pos, ln, n):
    """bfi with one position and length: one mask for all lanes, in the operands' own width."""
    if pos >= n:
        return b.copy()
    ut = UINT[n // 8]
    mask = (1 << min(ln, n - pos)) - 1
    ua, ub = _u(a).astype(ut, copy=False), _u(b)
    r = (ub & ut(((1 << n) - 1) & ~(mask << pos))) | ((ua & ut(mask)) << ut(pos))
    return np.asarray(r, ut).view(b.dtype)


PRMT_MODES = {                       # prmt's modes: byte k of the result for c & 3 = 0..3
    "f4e": [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]],
    "b4e": [[0, 7, 6, 5], [1, 0, 7, 6], [2, 1, 0, 7], [3, 2, 1, 0]],
    "rc8": [[0, 0, 0, 0], [1, 1, 1, 1], [2, 2, 2, 2], [3, 3, 3, 3]],
    "ecl": [[0, 1, 2, 3], [1, 1, 2, 3], [2, 2, 2, 3], [3, 3, 3, 3]],
    "ecr": [[0, 0, 0, 0], [0, 1, 1, 1], [0, 1, 2, 2], [0, 1, 2, 3]],
    "rc16": [[0, 1, 0, 1], [2, 3, 2, 3], [0, 1, 0, 1], [2, 3, 2, 3]],
}


def prmt(a, b, c, mode=""):
    """Byte permute (PTX ISA prmt): bytes of {b, a} chosen by c's selector nibbles, or by one of
    the special modes (f4e forward 4 extract, b4e backward, rc8 replicate, ecl/ecr edge clamp,
    rc16 replicate 16)."""
    a, b, c = (np.asarray(x).astype(np.uint64) for x in (a, b, c))
    src = (b << np.uint64(32)) | a
    shape = np.broadcast(a, b, c).shape
    out = np.zeros(shape, np.uint64)
    if not mode:
        for k in range(4):
            sel = (c >> np.uint64(4 * k)) & np.uint64(0xF)
            byte = (src >> ((sel & np.uint64(7)) * np.uint64(8))) & np.uint64(0xFF)
            sign = (byte >> np.uint64(7)) & np.uint64(1)
            byte = np.where((sel & np.uint64(8)) != 0, np.where(sign == 1, np.uint64(0xFF), np.uint64(0)), byte)
            out = out | (byte << np.uint64(8 * k))
        return out.astype(np.uint32)
    s2 = (c & np.uint64(3)).astype(np.int64)
    table = PRMT_MODES[mode]
    tab = np.asarray(table, np.uint64)
    for k in range(4):
        sel = tab[s2, k] if np.ndim(s2) else tab[int(s2), k]
        byte = (src >> (sel * np.uint64(8))) & np.uint64(0xFF)
        out = out | (byte << np.uint64(8 * k))
    return out.astype(np.uint32)


def sad(a, b, c):
    a, b = np.asarray(a), np.asarray(b)
    d = np.where(a > b, a - b, b - a)
    return (d + c).astype(a.dtype) if a.dtype.kind == "u" else (np.abs(a.astype(np.int64) - b.astype(np.int64)) + c).astype(a.dtype)


def lop3(a, b, c, lut):
    a, b, c = (_u(x) for x in (a, b, c))
    lut = int(lut)
    r = np.zeros(np.broadcast(a, b, c).shape, a.dtype)
    for k in range(8):
        if lut >> k & 1:
            ta = a if k & 4 else ~a
            tb = b if k & 2 else ~b
            tc = c if k & 1 else ~c
            r = r | (ta & tb & tc)
    return r


def int_minmax(a, b, is_max):
    return np.maximum(a, b) if is_max else np.minimum(a, b)


def sat_add(a, b, sub=False):
    wide = np.asarray(a).astype(np.int64) + (-1 if sub else 1) * np.asarray(b).astype(np.int64)
    return np.clip(wide, -2**31, 2**31 - 1).astype(np.int32)


# ------------------------------------------------------------------ floating point (PTX ISA 9.7.3)

def fminmax(a, b, is_max, nan_mode=False):
    """min/max: a NaN operand is ignored unless .NaN is given (then NaN wins); -0 < +0."""
    a, b = np.asarray(a), np.asarray(b)
    if nan_mode:
        r = np.maximum(a, b) if is_max else np.minimum(a, b)
    else:
        r = np.fmax(a, b) if is_max else np.fmin(a, b)
        # numpy's SIMD loops may quiet a signaling NaN operand instead of returning the other one,
        # depending on the array's length and alignment: choose explicitly
        an, bn = np.isnan(a), np.isnan(b)
        if an.any() or bn.any():
            r = np.where(an & ~bn, b, np.where(bn & ~an, a, r))
    # IEEE 754-2019 / PTX: min(-0, +0) = -0, max(-0, +0) = +0
    both0 = (a == 0) & (b == 0)
    if np.any(both0):
        neg = np.signbit(a) | np.signbit(b) if not is_max else np.signbit(a) & np.signbit(b)
        r = np.where(both0, np.where(neg, -np.zeros((), r.dtype), np.zeros((), r.dtype)), r)
    # GPUs return the canonical NaN when both are NaN
    return r


def fminmax_xorsign(a, b, is_max, nan_mode=False):
    """min/max.xorsign.abs (sm_86): the min/max of |a| and |b|, with the sign a's sign XOR b's; a NaN
    result is the canonical NaN (PTX ISA 9.7.3.10/11)."""
    a, b = np.asarray(a), np.asarray(b)
    r = fminmax(np.abs(a), np.abs(b), is_max, nan_mode)
    neg = np.signbit(a) ^ np.signbit(b)
    return np.where(np.isnan(r), _CANON[r.dtype], np.where(neg, -np.abs(r), np.abs(r))).astype(r.dtype)


_CANON = {np.dtype(np.float32): np.array(0x7FFFFFFF, np.uint32).view(np.float32),
          np.dtype(np.float16): np.array(0x7FFF, np.uint16).view(np.float16)}


def gpu_nan(r):
    """A NaN result as the GPU writes it: the canonical NaN (0x7FFFFFFF, f16 0x7FFF) from every
    f32/f16 operation, the input's NaN quieted (payload kept) from f64 ones."""
    r = np.asarray(r)
    if r.dtype.kind != "f":
        return r
    nan = np.isnan(r)
    if not nan.any():
        return r
    if r.dtype == np.float64:
        quiet = r.view(np.uint64) | np.uint64(0x0008000000000000)
        return np.where(nan, quiet.view(np.float64), r)
    return np.where(nan, _CANON[r.dtype], r)


def narrowed_nan(a, r, dst="f32"):
    """f64 -> f32/f16/bf16 keeps a NaN's sign and the top bits of its payload, and quiets it
    (0x7FF8000012345678 -> 0x7FC00000, 0x7FF82468A0000000 -> 0x7FC12345): as an H100 does."""
    a = np.asarray(a, np.float64)
    nan = np.isnan(a)
    if not nan.any():
        return r
    u = a.view(np.uint64)
    sign, mant = u >> np.uint64(63), u & np.uint64((1 << 52) - 1)
    width, quiet, shift = {"f32": (32, 0x7FC00000, 29), "f16": (16, 0x7E00, 42), "bf16": (16, 0x7FC0, 45)}[dst]
    bits = (sign << np.uint64(width - 1)) | np.uint64(quiet) | (mant >> np.uint64(shift))
    r = np.asarray(r)
    return np.where(nan, bits.astype(UINT[width // 8]).view(r.dtype), r)


# ------------------------------------------------------------------ directed rounding (.rz .rm .rp)
# Every operation first rounds to nearest (numpy's IEEE arithmetic, or fma_f32/fma_f64); the
# directed result is then that value or its neighbour, decided by the sign of the exact error
# (exact - r), computed without rounding from error-free transformations.

def _f64(*xs):
    return [np.asarray(x, np.float64) for x in xs]


def _err_add(wide, r, a, b):
    s, e = two_sum(a, b)
    return (s - r) + e                             # s - r is exact (Sterbenz)


def _err_mul(wide, r, a, b):
    if not wide:                                   # a float32 product is exact in float64
        return a * b - r
    p, e, k = scaled_two_prod(a, b)
    return (p - np.ldexp(r, -k)) + e


def _err_fma(wide, r, a, b, c):                    # float32 only: fma_f64 rounds by itself
    s, e = two_sum(a * b, c)
    return (s - r) + e


def _err_div(wide, r, a, b):
    if not wide:                                   # r * b is exact in float64 for float32 r, b
        return (a - r * b) * np.sign(b)
    ma, ea = np.frexp(a)
    mb, eb = np.frexp(b)
    h, l = _two_prod(np.ldexp(r, eb - ea), mb)     # scaled so that nothing under- or overflows
    return ((ma - h) - l) * np.sign(mb)


def _err_sqrt(wide, r, a):
    if not wide:
        return a - r * r
    ma, ea = np.frexp(a)
    odd = (ea & 1).astype(bool)
    ma, ea = np.where(odd, ma * 2, ma), np.where(odd, ea - 1, ea)
    rs = np.ldexp(r, -(ea // 2))
    h, l = _two_prod(rs, rs)
    return (ma - h) - l


def _err_cvt(wide, r, a):
    return a - r                                   # exact: r is the input narrowed


_ERR = {"add": _err_add, "mul": _err_mul, "fma": _err_fma, "div": _err_div, "sqrt": _err_sqrt, "cvt": _err_cvt}


def error_sign(op, r, args, wide=None):
    """A float64 with the sign of (exact - r) for the round-to-nearest result r of ``op``; NaN
    where r is exact as an infinity or NaN. An overflow to infinity counts as too far out.
    ``wide``: the operation is float64 (default: r's type says)."""
    r = np.asarray(r)
    wide = r.dtype == np.float64 if wide is None else wide
    if op == "rcp":
        op, args = "div", (np.ones((), r.dtype), *args)
    if op == "sub":
        op, args = "add", (args[0], -np.asarray(args[1]))
    with np.errstate(all="ignore"):
        err = _ERR[op](wide, *_f64(r, *args))
        inf = np.isinf(r)
        if inf.any():
            finite = np.ones(r.shape, bool)
            for x in args:
                finite = finite & np.isfinite(np.asarray(x, np.float64))
            if op == "div":
                finite = finite & (np.asarray(args[1]) != 0)
            err = np.where(inf & finite, -r.astype(np.float64), err)
    return err


def directed(op, r, args, mode):
    """The ``mode`` (rz/rm/rp) result of ``op`` from its round-to-nearest result ``r``."""
    if mode not in ("rz", "rm", "rp"):
        return r
    if op == "fma" and np.asarray(r).dtype == np.float64:
        return fma_f64(*args, mode)                # its exact error needs more than a float64
    err = error_sign(op, r, args)
    out = step_directed(r, err, mode)
    if mode == "rm" and op in ("add", "sub", "fma"):
        zero = (out == 0) & (err == 0)
        if zero.any():
            # IEEE 754 6.3: an exact zero sum is -0 when rounding down, unless both addends are +0
            x, y = (args[0], args[1]) if op != "fma" else (args[0] * args[1], args[2])
            y = -np.asarray(y) if op == "sub" else np.asarray(y)
            plus = (np.asarray(x) == 0) & (y == 0) & ~np.signbit(x) & ~np.signbit(y)
            out = np.where(zero & ~plus, -np.zeros((), out.dtype), out)
    return out


def below_tiny(op, r, args):
    """Lanes whose result rounded up to the smallest normal from an exact value that is tiny even
    when rounded to the format's precision with an unbounded exponent (IEEE 754 'tininess after
    rounding'): .ftz flushes those too. mul.ftz.f32 0x00800000 * 0x3F7FFFFF gives 0 on an H100,
    fma.ftz.f32 0x00800000 * -1e-10 + 0x00800000 gives 0x00800000."""
    r = np.asarray(r)
    info = np.finfo(r.dtype)
    edge = np.abs(r) == info.tiny
    if not edge.any():
        return edge
    midpoint = np.copysign(float(info.tiny) * (1 - 2.0 ** -(info.nmant + 2)), r.astype(np.float64))
    return edge & (error_sign(op, midpoint, args, wide=False) * np.sign(r) < 0)


def fma(a, b, c, dt, nan_first="b"):
    """a*b+c rounded once; ``nan_first``: the multiplicand whose NaN float64 takes first (fma_f64)."""
    if dt == np.float32:
        return fma_f32(a, b, c)
    return fma_f64(a, b, c, nan_first=nan_first)


def rcp_rn(a):
    a = np.asarray(a)
    return (np.ones((), a.dtype) / a).astype(a.dtype)


def testp(a, what):
    """testp: on the GPU ``.normal`` is true for +-0 too (it means 'not subnormal, inf or NaN')."""
    a = np.asarray(a)
    tiny = np.finfo(a.dtype).tiny
    return {
        "finite": np.isfinite(a), "infinite": np.isinf(a), "number": ~np.isnan(a), "notanumber": np.isnan(a),
        "normal": np.isfinite(a) & ((np.abs(a) >= tiny) | (a == 0)),
        "subnormal": (a != 0) & (np.abs(a) < tiny),
    }[what]


# ------------------------------------------------------------------ comparisons (setp, set, slct)

def compare(a, b, cmp):
    a, b = np.asarray(a), np.asarray(b)
    unordered = cmp.endswith("u") and cmp not in ("lu",) and len(cmp) == 3
    base = cmp[:2] if unordered else cmp
    if base in ("lo",):
        base = "lt"
    elif base == "ls":
        base = "le"
    elif base == "hi":
        base = "gt"
    elif base == "hs":
        base = "ge"
    with np.errstate(invalid="ignore"):
        if base == "num":
            return ~(np.isnan(a) | np.isnan(b))
        if base == "nan":
            return np.isnan(a) | np.isnan(b)
        r = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
             "gt": np.greater, "ge": np.greater_equal}[base](a, b)
    if a.dtype.kind == "f":
        nan = np.isnan(a) | np.isnan(b)
        if unordered:
            r = r | nan
        elif base == "ne":
            r = r & ~nan   # ordered ne is false on NaN
    return r


BOOL_OPS = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


# ------------------------------------------------------------------ conversions (cvt, PTX ISA 9.7.9.21)

_ROUND_INT = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil, None: np.trunc,
              "rn": np.rint, "rz": np.trunc, "rm": np.floor, "rp": np.ceil}


def saturate(r):
    """.sat clamps to [0, 1]; NaN and -0 become +0."""
    r = np.asarray(r)
    with np.errstate(invalid="ignore"):
        return np.where(r > 0, np.minimum(r, np.ones((), r.dtype)), np.zeros((), r.dtype)).astype(r.dtype)


def cvt(a, dst: str, src: str, rnd: str | None, sat: bool, ftz: bool):
    from .dtypes import dtype, is_float
    a = np.asarray(a)
    if src == "bf16":
        a = bf16_to_f32(a)
        src = "f32"
        if dst == "f32" and rnd not in ("rni", "rzi", "rmi", "rpi"):
            # widening bf16 is exact on the GPU, NaNs included (cvt.f32.bf16 of 0x7fff gives 0x7fff0000,
            # of 0xffff 0xffff0000; the fuzz run of 2026-11-26), unlike cvt.f32.f16's canonical NaN
            return flush_subnormal(a) if ftz else a
    if is_float(src) and ftz:
        a = flush_subnormal(a)
    if is_float(src) and not is_float(dst):
        return _float_to_int(a, dtype(dst), rnd)
    if not is_float(src) and is_float(dst):
        if dst == "bf16":       # to float32 rounded to odd, then once to bf16
            return f32_to_bf16(_int_to_float(a, np.dtype(np.float32), None, odd=True), rnd or "rn")
        return _int_to_float(a, dtype(dst), rnd)
    if not is_float(src):
        return _int_convert(a, dtype(dst), sat)
    return _float_to_float(a, dst, rnd, sat, ftz)


def _float_to_int(a, ddt, rnd):
    """Round as asked, saturate to the integer range. NaN gives what an H100 gives: 0 into 32 bits
    or less from f32/f16, 0x80000000 into 32 bits from f64, 0x8000000000000000 into 64 bits."""
    info = np.iinfo(ddt)
    with np.errstate(invalid="ignore"):
        f = _ROUND_INT[rnd](a.astype(np.float64))
        nan = np.isnan(f)
        inside = (f < float(info.max)) & (f > float(info.min))
        mid = np.where(inside, f, 0)
        val = mid.astype(ddt) if ddt.itemsize == 8 else mid.astype(np.int64).astype(ddt)
        # numpy scalars of the target type: a Python int like 2**64-1 overflows numpy 2.5's default int64
        hi, lo = np.array(info.max, ddt), np.array(info.min, ddt)
        out = np.where(inside, val, np.where(f >= float(info.max), hi, lo)).astype(ddt)
    if nan.any():
        if ddt.itemsize == 8 or (ddt.itemsize == 4 and a.dtype == np.float64):
            bits = 1 << (8 * ddt.itemsize - 1)
            out = np.where(nan, np.array(bits, UINT[ddt.itemsize]).view(ddt), out)
        else:
            out = np.where(nan, np.zeros((), ddt), out)
    return out


def _float_to_float(a, dst, rnd, sat, ftz):
    from .dtypes import dtype
    sdt = a.dtype
    if rnd in ("rni", "rzi", "rmi", "rpi"):          # round to an integral value, same type
        with np.errstate(invalid="ignore"):
            r = _ROUND_INT[rnd](a).astype(sdt)
        if dst == "bf16":                            # cvt.rmi.bf16.bf16 (hfloor, h2floor on sm_90): back to bf16 bits
            return f32_to_bf16(r, "rn")
    elif dst == "bf16":
        if sdt == np.float64:                        # to float32 by rounding to odd, then once to bf16
            r = f32_to_bf16(to_odd_f32(a) if rnd in (None, "rn") else
                            directed("cvt", a.astype(np.float32), (a,), rnd), rnd or "rn")
            return narrowed_nan(a, r, "bf16")
        return f32_to_bf16(a.astype(np.float32), rnd or "rn")
    else:
        ddt = dtype(dst)
        with np.errstate(over="ignore"):
            r = a.astype(ddt)
        if ddt.itemsize < sdt.itemsize:
            r = directed("cvt", r, (a,), rnd)
    if sat:
        r = saturate(r)
    if ftz and r.dtype != np.float64:
        r = flush_subnormal(r)
    if sdt == np.float64 and r.dtype != np.float64 and not sat:     # .sat made a NaN +0 (PTX ISA cvt)
        return narrowed_nan(a, r, "f32" if r.dtype == np.float32 else "f16")
    if ftz and sdt == np.float32 and r.dtype == np.float64:
        return _ftz_widened_nan(a, r)
    return gpu_nan(r)


FTZ_WIDENED_NAN = np.uint64(0x7FFFFFFFE0000000)


def _ftz_widened_nan(a, r):
    """cvt.ftz.f64.f32 of any NaN: float32's canonical NaN 0x7fffffff widened, whatever the payload
    and sign (an H200 under -ftz=true, tests/kernels/guide.py); without .ftz the payload is kept."""
    nan = np.isnan(a)
    if not np.any(nan):
        return r
    return np.where(nan, FTZ_WIDENED_NAN.view(np.float64), r)


def to_odd_f32(a):
    """float64 -> float32 rounded to odd (truncate, then set the last bit when inexact): rounding
    that once more to a narrower format (bf16) gives the correctly rounded result."""
    a = np.asarray(a, np.float64)
    with np.errstate(over="ignore"):
        r = directed("cvt", a.astype(np.float32), (a,), "rz")
    inexact = (r.astype(np.float64) != a) & np.isfinite(a)
    return np.where(inexact, (r.view(np.uint32) | np.uint32(1)).view(np.float32), r)


def _int_convert(a, ddt, sat):
    """int -> int: truncate or extend by the source's signedness, optional saturation."""
    if sat:
        info = np.iinfo(ddt)
        lo, hi = info.min, info.max
        if a.dtype.kind == "u":
            return np.minimum(a, np.array(hi).astype(a.dtype) if hi < np.iinfo(a.dtype).max else a.dtype.type(np.iinfo(a.dtype).max)).astype(ddt)
        w = a.astype(np.int64) if a.dtype.itemsize < 8 else a
        if ddt.kind == "u" and ddt.itemsize == 8:
            return np.where(w < 0, 0, w).astype(ddt)
        return np.clip(w, lo, min(hi, np.iinfo(np.int64).max)).astype(ddt)
    src_dt = a.dtype
    if ddt.itemsize > src_dt.itemsize:
        return a.astype((SINT if src_dt.kind == "i" else UINT)[ddt.itemsize]).view(ddt) \
            if np.ndim(a) else np.asarray(a.astype((SINT if src_dt.kind == "i" else UINT)[ddt.itemsize])).view(ddt)
    return _u(a).astype(UINT[ddt.itemsize]).view(ddt)


def _int_to_float(a, ddt, rnd, odd=False):
    """int -> float rounded as asked (or to odd); the exact error comes from splitting the integer
    into its high and low 32 bits, each exact in float64."""
    r = a.astype(ddt)
    if rnd in (None, "rn", "") and not odd:
        return r
    if a.dtype.itemsize <= 4:
        err = a.astype(np.float64) - r.astype(np.float64)
    else:
        hi = (a >> 32).astype(np.float64) * 2.0 ** 32       # arithmetic shift keeps the sign
        lo = (a & 0xFFFFFFFF).astype(np.float64)
        err = (hi - r.astype(np.float64)) + lo
    if odd:
        r = step_directed(r, err, "rz")
        inexact = err != 0
        return np.where(inexact, (r.view(UINT[ddt.itemsize]) | 1).view(ddt), r)
    return step_directed(r, err, rnd)


# ------------------------------------------------------------------ f16x2 / bf16x2 packed halves

def unpack2(u32, bf=False):
    u = np.asarray(u32).astype(np.uint32)
    lo, hi = (u & np.uint32(0xFFFF)).astype(np.uint16), (u >> np.uint32(16)).astype(np.uint16)
    if bf:
        return bf16_to_f32(lo), bf16_to_f32(hi)
    return lo.view(np.float16), hi.view(np.float16)


def pack2(lo, hi, bf=False):
    if bf:
        lo, hi = f32_to_bf16(lo), f32_to_bf16(hi)
    else:
        lo, hi = np.asarray(lo, np.float16).view(np.uint16), np.asarray(hi, np.float16).view(np.uint16)
    return lo.astype(np.uint32) | (hi.astype(np.uint32) << np.uint32(16))
