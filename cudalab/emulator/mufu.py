"""ex2, rcp and rsqrt.approx.f32 with the H100's own bits: its special function unit (SASS MUFU.EX2,
MUFU.RCP, MUFU.RSQ) is not correctly rounded, and libdevice's expf, tanhf, rsqrtf, __fdividef... pass
its error on, an ulp or two, to results a student compares with the GPU's.

Measured, not guessed (tools/mufu_probe.cu): the unit reads one binade from a table and scales. Its
result for every float of [1, 2) ([1, 4) for rsqrt) is in mufu_h100.npz; with the rules below, ex2
and rcp.approx.ftz.f32 give the H100's bits for all 2^32 inputs (NaNs apart, checked on the GPU):

- ex2: the input is truncated to a 7.23 fixed-point magnitude (the RRO.EX2 format of older GPUs); for
  a negative input the fraction's bits are inverted, so -(n + f) reads as -(n + 1) + (1 - f - 2^-23).
  Half of the results for inputs in [-20, 20] differ from 2^x rounded to nearest, by up to 2 ulp.
- rcp: 1/mantissa from the table, the exponent negated; 13 in 100 differ from 1/x rounded.
- rsqrt: 1/sqrt of the mantissa (times 2 for an odd exponent), the exponent halved; 22 in 100 differ.
Results below the normal floats are flushed to zero (.ftz).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

_FRACTION = 0x7FFFFF


@lru_cache(maxsize=None)
def table(name: str) -> np.ndarray:
    """The H100's result bits for the floats 1 + j*2^-23 in order, from j = 0: 2^23 of them for 'ex2'
    and 'rcp', 2^24 (up to 4) for 'rsqrt'. Stored as the first and the differences (small)."""
    with np.load(Path(__file__).with_name("mufu_h100.npz")) as z:
        first, delta = z[f"{name}_first"], z[f"{name}_delta"]
    steps = np.empty(len(delta) + 1, np.uint32)
    steps[0] = first
    steps[1:] = delta                  # a negative step wraps modulo 2^32, and so does the sum
    return np.add.accumulate(steps, dtype=np.uint32)


def _scaled(t, n):
    """Bits of the positive normal float ``t`` (bits) times 2^n: zero below the normals, infinity above."""
    e = ((t >> 23) & 255).astype(np.int64) + n
    out = (t & _FRACTION) | (np.clip(e, 0, 255).astype(np.uint32) << 23)
    return np.where(e <= 0, 0, np.where(e >= 255, 0x7F800000, out)).astype(np.uint32)


def ex2_ftz(a):
    """ex2.approx.ftz.f32 of float32 ``a``, bit for bit as an H100 gives it (NaN in, NaN out)."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.int64)
    negative, e = bits >> 31 == 1, (bits >> 23) & 255
    shift = e - 127
    mant = (bits & _FRACTION) | (1 << 23)
    q = np.where(shift >= 0, mant << np.clip(shift, 0, 6), mant >> np.clip(-shift, 0, 63))  # truncated 7.23
    n, j = q >> 23, q & _FRACTION
    t = table("ex2")
    up = _scaled(t[j], n - 1)                                      # t[j] = 2^(1 + j 2^-23)
    down = np.where(j == 0, _scaled(np.full(j.shape, 0x3F800000, np.uint32), -n),
                    _scaled(t[_FRACTION - j], -n - 2))
    out = np.where(negative, down, up)
    out = np.where(e == 0, 0x3F800000, out)                        # +-0 and subnormals: 1
    out = np.where(shift >= 7, np.where(negative, 0, 0x7F800000), out)   # |a| >= 128, infinities
    out = np.where(np.isnan(a), 0x7FFFFFFF, out)
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


def rcp_ftz(a):
    """rcp.approx.ftz.f32 of float32 ``a``, bit for bit as an H100 gives it (NaN in, NaN out)."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.int64)
    sign, e = (bits & 0x80000000).astype(np.uint32), (bits >> 23) & 255
    out = _scaled(table("rcp")[bits & _FRACTION], 127 - e)       # table: 1 / (1 + j 2^-23)
    out = np.where(e == 0, 0x7F800000, np.where(e == 255, 0, out))
    out = np.where(np.isnan(a), 0x7FFFFFFF, out | sign)
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


def rsqrt_ftz(a):
    """rsqrt.approx.ftz.f32 of float32 ``a`` as an H100 gives it: the table holds [1, 4), an even
    power of two scales it (measured on that binade pair; the scaling matches the corpus's rsqrtf)."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.int64)
    e = (bits >> 23) & 255
    u = e - 127
    out = _scaled(table("rsqrt")[(bits & _FRACTION) | ((u & 1) << 23)], -(u >> 1))  # table: 1/sqrt(m), m in [1, 4)
    out = np.where(e == 0, 0x7F800000 | (bits & 0x80000000), np.where(e == 255, 0, out))  # +-0: +-inf; inf: 0
    out = np.where(np.isnan(a) | ((bits >> 31 == 1) & (e != 0)), 0x7FFFFFFF, out)        # negative: NaN
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


def rsqrt(a):
    """rsqrt.approx.f32 without .ftz: a subnormal input is scaled by 2^24 into the normals and the
    result by 2^12 (the H100's rsqrtf of 2^-149 .. 2^-126 in the corpus); the rest as rsqrt_ftz."""
    a = np.asarray(a, np.float32)
    subnormal = (a != 0) & (np.abs(a) < np.finfo(np.float32).tiny)
    into, out = (np.where(subnormal, np.float32(2.0 ** k), np.float32(1)) for k in (24, 12))
    return rsqrt_ftz(a * into) * out
