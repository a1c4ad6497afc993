"""8-, 6- and 4-bit floats: the conversions of ``cvt`` to and from fp8 (e4m3, e5m2; sm_89/sm_90),
fp6 (e2m3, e3m2), fp4 (e2m1) and the exponent-only ue8m0 (sm_100a family).

Each format is small enough to list: its codes are decoded once into float64 values, and a
conversion to the format finds the nearest listed value (round to nearest even: a tie goes to the
even code, whose last mantissa bit is 0; toward zero / up for ue8m0's ``.rz``/``.rp``). Every value
of these formats is exact in float16 (fp6, fp4, fp8) or bfloat16 (ue8m0), so widening conversions
are exact.

PTX ISA ``cvt`` (9.7.9.21): the narrowing conversions take ``.satfinite``: a finite value beyond the
largest one becomes the largest (with its sign), and so does an infinity; ``.relu`` makes negative
results +0. What a NaN becomes is measured on an H100 (tests/kernels, group sm90): see NAN_OUT.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .decode import DECODERS, Unsupported
from .operands import reader, writer


@dataclass(frozen=True)
class Format:
    name: str
    ebits: int
    mbits: int
    bias: int
    inf: bool                     # has infinities (e5m2)
    nan_codes: tuple              # codes (without the sign) that are NaN
    signed: bool = True

    @property
    def bits(self) -> int:
        return self.ebits + self.mbits + (1 if self.signed else 0)


FORMATS = {
    "e4m3": Format("e4m3", 4, 3, 7, False, (0x7F,)),
    "e5m2": Format("e5m2", 5, 2, 15, True, (0x7D, 0x7E, 0x7F)),
    "e2m3": Format("e2m3", 2, 3, 1, False, ()),
    "e3m2": Format("e3m2", 3, 2, 3, False, ()),
    "e2m1": Format("e2m1", 2, 1, 1, False, ()),
    "ue8m0": Format("ue8m0", 8, 0, 127, False, (0xFF,), signed=False),
}
# the NaN code a conversion writes (the canonical one, sign bit clear)
NAN_OUT = {"e4m3": 0x7F, "e5m2": 0x7F, "ue8m0": 0xFF}


@lru_cache(maxsize=None)
def table(name):
    """(values of every code as float64, NaN where the code is NaN)."""
    f = FORMATS[name]
    n = 1 << f.bits
    codes = np.arange(n)
    mag = codes & ((1 << (f.ebits + f.mbits)) - 1)
    e = mag >> f.mbits
    m = mag & ((1 << f.mbits) - 1)
    normal = 2.0 ** (e - f.bias) * (1 + m / (1 << f.mbits))
    sub = 2.0 ** (1 - f.bias) * (m / (1 << f.mbits))
    v = np.where(e > 0, normal, sub) if f.mbits else 2.0 ** (e - f.bias)
    if f.inf:
        v = np.where(mag == (((1 << f.ebits) - 1) << f.mbits), np.inf, v)
    v = np.where(np.isin(mag, f.nan_codes), np.nan, v)
    if f.signed:
        v = np.where(codes >> (f.ebits + f.mbits), -v, v)
    return v.astype(np.float64)


@lru_cache(maxsize=None)
def _positive(name):
    """Sorted finite non-negative values and their codes."""
    f = FORMATS[name]
    v = table(name)
    mag_codes = np.arange(1 << (f.ebits + f.mbits))
    vals = v[mag_codes]
    ok = np.isfinite(vals)
    return vals[ok], mag_codes[ok]


def encode(x, name, rnd="rn", satfinite=True, relu=False):
    """float64 values -> codes of format ``name`` (uint8)."""
    f = FORMATS[name]
    x = np.asarray(x, np.float64)
    vals, codes = _positive(name)
    a = np.abs(x)
    neg = np.signbit(x) if f.signed else np.zeros(x.shape, bool)
    with np.errstate(invalid="ignore"):
        k = np.searchsorted(vals, a, side="left")          # vals[k-1] < a <= vals[k]
    k = np.clip(k, 1, len(vals) - 1)
    lo, hi = vals[k - 1], vals[k]
    clo, chi = codes[k - 1], codes[k]
    exact_hi = a == hi
    if rnd == "rn":
        d_lo, d_hi = a - lo, hi - a
        pick_hi = exact_hi | (d_hi < d_lo) | ((d_hi == d_lo) & (chi % 2 == 0))
    elif rnd == "rz":
        pick_hi = exact_hi
    elif rnd == "rp":                                        # toward +inf (ue8m0 is unsigned)
        pick_hi = a > lo
    else:
        raise Unsupported(f"cvt.{rnd} to .{name}")
    out = np.where(pick_hi, chi, clo)
    top = vals[-1]
    over = a > top
    if rnd == "rn":
        # beyond the largest value by more than half its ulp: overflow (saturated below)
        out = np.where(over, codes[-1], out)
    else:
        out = np.where(over, codes[-1], out)
    if not satfinite and f.inf:
        half = (top - vals[-2]) / 2
        out = np.where(a >= top + half, (((1 << f.ebits) - 1) << f.mbits), out)
    if f.signed:
        out = np.where(neg, out | (1 << (f.ebits + f.mbits)), out)
    nan = np.isnan(x)
    if relu:
        out = np.where(neg & ~nan, 0, out)
    if nan.any():
        out = np.where(nan, NAN_OUT.get(name, codes[-1]), out)
    return out.astype(np.uint8)


def decode(codes, name):
    """codes -> float64 values (exact)."""
    return table(name)[np.asarray(codes).astype(np.int64) & ((1 << FORMATS[name].bits) - 1)]


# ------------------------------------------------------------------ cvt forms

X2 = {f"{n}x2": n for n in FORMATS}


def _f16_bits(v, relu):
    """float64 values exactly representable in f16 -> f16 bits; NaN -> 0x7FFF (the GPU's canonical)."""
    v = np.asarray(v, np.float64)
    if relu:
        v = np.where(np.signbit(v) & ~np.isnan(v), 0.0, v)
    b = v.astype(np.float16).view(np.uint16)
    return np.where(np.isnan(v), np.uint16(0x7FFF), b).astype(np.uint32)


def _bf16_bits(v):
    v = np.asarray(v, np.float64)
    b = (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint32)
    return np.where(np.isnan(v), np.uint32(0x7FFF), b)


def cvt_decoder(inst, d):
    """The minifloat forms of cvt, or None for any other cvt."""
    mods = inst.mods
    dst_t = next((m for m in mods if m in X2 or m in FORMATS), None)
    types = [m for m in mods if m in X2 or m in ("f32", "f16x2", "bf16x2", "f16", "bf16") or m in FORMATS]
    if dst_t is None or len(types) < 2:
        return None
    rnd = next((m for m in mods if m in ("rn", "rz", "rp", "rm", "rna", "rs")), "rn")
    sat, relu = "satfinite" in mods, "relu" in mods
    dst, src = types[0], types[1]
    ops = inst.operands
    if dst in X2:                                  # narrowing: f32 pair or a packed f16x2/bf16x2
        fmt = X2[dst]
        if not sat and fmt != "ue8m0":
            raise Unsupported(f"cvt to .{dst} without .satfinite (the PTX ISA requires it)")
        width = 4 if fmt == "e2m1" else 8
        w = writer(ops[0], "b16" if width == 8 else "b8", d.func)
        if src == "f32":
            ra, rb = (reader(o, "f32", d.func, d) for o in ops[1:3])

            def pair(ex, sel):
                return (np.asarray(ra(ex, sel), np.float64), np.asarray(rb(ex, sel), np.float64))
        elif src in ("f16x2", "bf16x2"):
            rp = reader(ops[1], "b32", d.func, d)
            bf = src == "bf16x2"

            def pair(ex, sel):
                u = np.asarray(rp(ex, sel)).astype(np.uint32)
                lo, hi = u & np.uint32(0xFFFF), u >> np.uint32(16)
                conv = (lambda h: (h.astype(np.uint32) << np.uint32(16)).view(np.float32).astype(np.float64)) if bf \
                    else (lambda h: h.astype(np.uint16).view(np.float16).astype(np.float64))
                return conv(hi), conv(lo)
        else:
            raise Unsupported(f"cvt.{dst}.{src}")

        def run(ex):
            sel = ex.idx
            hi, lo = pair(ex, sel)
            a = encode(hi, fmt, rnd, sat, relu).astype(np.uint32)
            b = encode(lo, fmt, rnd, sat, relu).astype(np.uint32)
            w(ex, sel, ((a << np.uint32(width)) | b).astype(np.uint16 if width == 8 else np.uint8))
        return run
    if src in X2:                                  # widening: two codes -> f16x2 (bf16x2 for ue8m0)
        fmt = X2[src]
        width = 4 if fmt == "e2m1" else 8
        w = writer(ops[0], "b32", d.func)
        r = reader(ops[1], "b16" if width == 8 else "b8", d.func, d)
        mask = (1 << width) - 1
        if dst not in ("f16x2", "bf16x2"):
            raise Unsupported(f"cvt.{dst}.{src}")

        def run(ex):
            sel = ex.idx
            u = np.broadcast_to(np.asarray(r(ex, sel)).astype(np.uint32), sel.shape)
            lo, hi = decode(u & np.uint32(mask), fmt), decode((u >> np.uint32(width)) & np.uint32(mask), fmt)
            if dst == "bf16x2":
                out = _bf16_bits(lo) | (_bf16_bits(hi) << np.uint32(16))
            else:
                out = _f16_bits(lo, relu) | (_f16_bits(hi, relu) << np.uint32(16))
            w(ex, sel, out)
        return run
    return None


def _wrap_cvt():
    base = DECODERS["cvt"]

    def dec(inst, d):
        got = cvt_decoder(inst, d)
        return got if got is not None else base(inst, d)
    DECODERS["cvt"] = dec


_wrap_cvt()
