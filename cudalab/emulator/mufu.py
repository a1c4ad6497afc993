"""ex2, rcp, rsqrt, sqrt, lg2, sin and cos.approx.f32 with the H100's own bits: its special function unit (SASS MUFU.EX2,
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
- sqrt and lg2 (tools/mufu_sqrt_lg2_probe.cu, on an H200: the same sm_90 unit): sqrt as rsqrt, from
  [1, 4); lg2 from [1, 2) and [0.5, 1), the other binades by a rule (lg2_ftz). Both, with and without
  .ftz, match the GPU for all 2^32 inputs, NaNs apart.
- sin and cos (tools/mufu_sin_cos_probe.cu, on an H100): ptxas multiplies by 1/(2 pi) rounding toward
  zero (FMUL.RZ) and the unit takes that many turns as a 25-bit fixed-point fraction, truncated: one
  quarter turn's table (2^23 results), mirrored and negated for the other quarters, and the sign of
  the input applied to sin. .ftz changes nothing (the same SASS). All 2^32 inputs match, NaNs too.
Results below the normal floats are flushed to zero (.ftz).
"""
from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

import numpy as np

_FRACTION = 0x7FFFFF


NPZ = Path(__file__).with_name("mufu_h100.npz")


def _stored(name: str) -> np.ndarray:
    """The H100's result bits for the floats 1 + j*2^-23 in order, from j = 0: 2^23 of them for 'ex2',
    'rcp' and 'lg2', 2^24 (up to 4) for 'rsqrt' and 'sqrt'; 'lg2half' is lg2 of (1 + j*2^-23) / 2;
    'sin' is the unit's sine of j*2^-25 turns, a quarter turn (2^23 of them).
    Stored as the first and the differences (int8; int32 for lg2 and sin, whose bits jump near 1 and 0)."""
    with np.load(NPZ) as z:
        first, delta = z[f"{name}_first"], z[f"{name}_delta"]
    steps = np.empty(len(delta) + 1, np.uint32)
    steps[0] = first
    steps[1:] = delta                  # a negative step wraps modulo 2^32, and so does the sum
    return np.add.accumulate(steps, dtype=np.uint32)


def _decoded(name: str, make) -> np.ndarray:
    """``make()``'s table, decoded once per machine: kept as a .npy file in cudalab's cache folder
    (``mufu/``, named by the npz's contents) and read from there by later processes (a private copy:
    _private). Decoding took 0.1 to 0.26 s of CPU a table, 32 or 64 MiB each, in every process that ran
    an __expf or rsqrtf. Where the folder cannot be written the table is made here."""
    from .compiled import cache_dir
    path = cache_dir().parent / "mufu" / f"{_npz_key()}-{name}.npy"
    try:
        return _private(np.load(path, mmap_mode="r"))
    except (OSError, ValueError):
        pass
    t = make()
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            np.save(f, t)
        os.replace(tmp, path)           # whole or not at all, whoever writes it first
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass
    t.flags.writeable = False           # as the mapped file is
    return t


@lru_cache(maxsize=None)
def _npz_key() -> str:
    return hashlib.sha256(NPZ.read_bytes()).hexdigest()[:16]


@lru_cache(maxsize=None)
def table(name: str) -> np.ndarray:
    """The H100's result bits for the floats 1 + j*2^-23 in order (see _stored), read-only. 'lg2' and
    'lg2half' are the two halves of one array (_lg2_pair), so that lg2_ftz reads either with one index."""
    if name in ("lg2", "lg2half"):
        pair = _lg2_pair()
        return pair[:_FRACTION + 1] if name == "lg2" else pair[_FRACTION + 1:]
    return _decoded(name, lambda: _stored(name))


@lru_cache(maxsize=None)
def _lg2_pair() -> np.ndarray:
    """lg2's table of [1, 2) followed by its table of [0.5, 1): entry j | 2^23 is lg2 of (1 + j*2^-23) / 2."""
    return _decoded("lg2pair", lambda: np.concatenate([_stored("lg2"), _stored("lg2half")]))


def _scaled(t, n):
    """Bits of the positive normal float ``t`` (bits) times 2^n: zero below the normals, infinity above."""
    e = ((t >> 23) & 255).astype(np.int64) + n
    out = (t & _FRACTION) | (np.clip(e, 0, 255).astype(np.uint32) << 23)
    return np.where(e <= 0, 0, np.where(e >= 255, 0x7F800000, out)).astype(np.uint32)


# ------------------------------------------------------------------ the quick paths
# The interpreter runs these over a whole batch (2^17 lanes) at each instruction, and BlackScholesGPU has 18
# of them a thread: the rules below, in int64 with a clip and a np.where per case, took 6.2 ms (ex2) and
# 6.6 ms (lg2) a batch where the table read itself takes 0.4. So each function first takes the ordinary
# lanes (a normal input whose result is a normal float) in a few uint32 passes, one table read each, and
# hands the rest (zeros, subnormals, infinities, NaN, results out of range) to the whole rule,
# ``_*_every_case``: the same bits either way (tests/test_mufu_quick.py).

def _bits(a):
    """float32 ``a`` as a flat uint32 array (a view where it can be) and ``a`` itself as float32."""
    a = np.asarray(a, np.float32)
    return a.reshape(-1).view(np.uint32), a


LOOP_LANES = 1 << 12      # from this many lanes a quick path runs as one compiled pass (mufu_loops) ...
LOOP_AFTER = 1 << 22      # ... once numpy's passes have run this many lanes in the process
_lanes_run = [0]


def _loops(n: int) -> bool:
    """Whether a batch of ``n`` lanes takes mufu_loops' compiled pass: a big one, once the process has run
    LOOP_AFTER lanes of these functions (a few launches of millions of threads). Loading numba and the
    loops costs a process about 0.5 to 1 s of CPU, which a notebook's one launch of __expf would pay for
    a saving of about 2 ms a batch; a program that launches such a kernel again and again pays it once."""
    if n < LOOP_LANES:
        return False
    if _lanes_run[0] >= LOOP_AFTER:
        return True
    _lanes_run[0] += n          # (batches on two threads may both add: a count, not an account)
    return False


def _looped(name, bits, a, tab, every_case):
    """The quick path ``name`` of mufu_loops over the batch, the lanes it leaves by ``every_case``."""
    from . import mufu_loops
    bits = np.ascontiguousarray(bits)
    out, special = np.empty(bits.size, np.uint32), np.empty(bits.size, np.bool_)
    if getattr(mufu_loops, name)(bits, tab, out, special):
        out[special] = every_case(a.reshape(-1)[special]).view(np.uint32)
    return out.view(np.float32).reshape(a.shape)


def _finish(a, out, special, every_case):
    """``out`` (uint32 bits) with the lanes in ``special`` taken from ``every_case``, shaped as ``a``."""
    if special.any():
        out[special] = every_case(a.reshape(-1)[special]).view(np.uint32)
    return out.view(np.float32).reshape(a.shape)


def ex2_ftz(a):
    """ex2.approx.ftz.f32 of float32 ``a``, bit for bit as an H100 gives it (NaN in, NaN out).
    Quick path: |a| < 128, normal, and the result a normal float (_ex2_ftz_every_case says why)."""
    bits, a = _bits(a)
    if _loops(bits.size):
        return _looped("ex2_ftz", bits, a, table("ex2"), _ex2_ftz_every_case)
    e = (bits >> 23) & 255
    negative = bits >= 0x80000000
    q = (((bits & _FRACTION) | (1 << 23)) << 7) >> (134 - e)     # the truncated 7.23 magnitude, e < 134
    n, j = q >> 23, q & _FRACTION
    t = table("ex2").take(np.where(negative, _FRACTION - j, j))       # 2^(1 + k 2^-23), exponent 128
    out = t + np.where(negative, np.uint32(0) - ((n + 2) << 23), (n - 1) << 23)   # times 2^(-n-2) or 2^(n-1)
    special = (e - 1 >= 133) | (negative & ((j == 0) | (n >= 126)))   # 0, subnormal, |a| >= 128, NaN; tiny
    return _finish(a, out, special, _ex2_ftz_every_case)


def rcp_ftz(a):
    """rcp.approx.ftz.f32 of float32 ``a``, bit for bit as an H100 gives it (NaN in, NaN out).
    Quick path: exponents 1 to 250, whose reciprocals are normal floats."""
    bits, a = _bits(a)
    if _loops(bits.size):
        return _looped("rcp_ftz", bits, a, table("rcp"), _rcp_ftz_every_case)
    e = (bits >> 23) & 255
    out = (table("rcp").take(bits & _FRACTION) + np.uint32(127 << 23) - (e << 23)) | (bits & 0x80000000)
    return _finish(a, out, e - 1 >= 251, _rcp_ftz_every_case)


def rsqrt_ftz(a):
    """rsqrt.approx.ftz.f32 of float32 ``a`` as an H100 gives it. Quick path: positive normal floats
    (their results always are normal: exponents 63 to 190)."""
    bits, a = _bits(a)
    if _loops(bits.size):
        return _looped("rsqrt_ftz", bits, a, table("rsqrt"), _rsqrt_ftz_every_case)
    e = (bits >> 23) & 255
    index = (bits & _FRACTION) | (((e & 1) ^ 1) << 23)                # m in [1, 4): an odd e - 127 doubles it
    half = (e.view(np.int32) - 127) >> 1                              # floor((e - 127) / 2)
    out = (table("rsqrt").take(index).view(np.int32) - (half << 23)).view(np.uint32)
    return _finish(a, out, (e - 1 >= 254) | (bits >= 0x80000000), _rsqrt_ftz_every_case)


def lg2_ftz(a):
    """lg2.approx.ftz.f32 (MUFU.LG2) as an H100 gives it. Quick path: positive normal floats. With
    u = e - 127 and L the [1, 2) table's log2 of the fraction, v = |u| + L (u > 0) or |u| - L (u < -1)
    rounded to nearest is one step from the truncated result, and v - |u| is exact in float32 (v and
    |u| lie within a factor of 2), so whether it rounded up is one compare (see _lg2_ftz_every_case)."""
    bits, a = _bits(a)
    if _loops(bits.size):
        return _looped("lg2_ftz", bits, a, _lg2_pair(), _lg2_ftz_every_case)
    e, j = (bits >> 23) & 255, bits & _FRACTION
    u = e.view(np.int32) - 127
    lbits = _lg2_pair().take(j | ((e == 126).astype(np.uint32) << 23))   # [1, 2)'s table, or [0.5, 1)'s
    l = lbits.view(np.float32)
    absu = np.abs(u).astype(np.float32)
    positive = u > 0
    sl = np.where(positive, l, -l)
    v = absu + sl
    d = v - absu
    down = np.where(positive, d > sl, d >= sl)                       # rounded up, or (u < 0) exact
    out = (v.view(np.uint32) - down) | (u.view(np.uint32) & 0x80000000)
    out = np.where(e - 126 <= 1, lbits, out)                         # u = 0 or -1: the table's own bits
    return _finish(a, out, (e - 1 >= 254) | (bits >= 0x80000000), _lg2_ftz_every_case)


def _ex2_ftz_every_case(a):
    """ex2.approx.ftz.f32 of float32 ``a``, bit for bit as an H100 gives it (NaN in, NaN out): the whole rule,
    every input (ex2_ftz runs it on the lanes its quick path leaves)."""
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


def _rcp_ftz_every_case(a):
    """rcp.approx.ftz.f32 of float32 ``a``, bit for bit as an H100 gives it (NaN in, NaN out): the whole rule."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.int64)
    sign, e = (bits & 0x80000000).astype(np.uint32), (bits >> 23) & 255
    out = _scaled(table("rcp")[bits & _FRACTION], 127 - e)       # table: 1 / (1 + j 2^-23)
    out = np.where(e == 0, 0x7F800000, np.where(e == 255, 0, out))
    out = np.where(np.isnan(a), 0x7FFFFFFF, out | sign)
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


def _rsqrt_ftz_every_case(a):
    """rsqrt.approx.ftz.f32 of float32 ``a`` as an H100 gives it, the whole rule: the table holds [1, 4), an even
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
    return _subnormals_scaled(a, rsqrt_ftz, lambda r: r * np.float32(2.0 ** 12))


def sqrt_ftz(a):
    """sqrt.approx.ftz.f32 (MUFU.SQRT) as an H100 gives it (see _sqrt_ftz_every_case). Quick path:
    positive normal floats, whose results are normal (exponents 64 to 190)."""
    bits, a = _bits(a)
    e = (bits >> 23) & 255
    index = (bits & _FRACTION) | (((e & 1) ^ 1) << 23)                # m in [1, 4), as rsqrt_ftz
    half = (e.view(np.int32) - 127) >> 1
    out = (table("sqrt").take(index).view(np.int32) + (half << 23)).view(np.uint32)
    return _finish(a, out, (e - 1 >= 254) | (bits >= 0x80000000), _sqrt_ftz_every_case)


def _sqrt_ftz_every_case(a):
    """sqrt.approx.ftz.f32 (MUFU.SQRT) as an H100 gives it, the whole rule: like rsqrt, the [1, 4) table scaled by an
    even power of two; +-0 and subnormals give +-0, +infinity itself, anything negative NaN. 22 in 100
    of the positive normals differ from sqrtf rounded to nearest, by one ulp."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.int64)
    e = (bits >> 23) & 255
    u = e - 127
    out = _scaled(table("sqrt")[(bits & _FRACTION) | ((u & 1) << 23)], u >> 1)   # table: sqrt(m), m in [1, 4)
    out = np.where(e == 0, bits & 0x80000000, np.where(e == 255, 0x7F800000, out))
    out = np.where(np.isnan(a) | ((bits >> 31 == 1) & (e != 0)), 0x7FFFFFFF, out)
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


def sqrt(a):
    """sqrt.approx.f32 without .ftz: ptxas scales a subnormal by 2^24 into the unit's range and the
    result by 2^-12 (its SASS: FMUL, MUFU.SQRT, FMUL); the rest as sqrt_ftz."""
    return _subnormals_scaled(a, sqrt_ftz, lambda r: r * np.float32(2.0 ** -12))


def _subnormals_scaled(a, ftz, undo):
    a = np.asarray(a, np.float32)
    subnormal = (a != 0) & (np.abs(a) < np.finfo(np.float32).tiny)
    if not subnormal.any():                                              # the usual batch: no rescaling
        return ftz(a)
    with np.errstate(all="ignore"):
        r = ftz(np.where(subnormal, a * np.float32(2.0 ** 24), a))
        return np.where(subnormal, undo(r), r).astype(np.float32)


def _lg2_ftz_every_case(a):
    """lg2.approx.ftz.f32 (MUFU.LG2) as an H100 gives it, the whole rule. For a = 2^u m (m in [1, 2)) the unit adds u
    to its log2 of m (the table of [1, 2)) in fixed point and truncates: u + L rounded toward zero for
    u > 0, and for u < -1 the magnitude |u| - L rounded toward zero and one ulp lower still where it
    is exact (the one's complement of a two's complement, as for ex2: lg2 of 2^-126 is -125.99999).
    [0.5, 1) is a table of its own: there the result is below 1 and shows the fixed point's lost bits.
    Checked on an H200 against all 2^32 inputs (NaNs apart). +-0 and subnormals: -infinity; +infinity
    itself; anything negative NaN."""
    a = np.asarray(a, np.float32)
    bits = a.view(np.uint32).astype(np.int64)
    e, j = (bits >> 23) & 255, bits & _FRACTION
    u = e - 127
    l = table("lg2")[j].view(np.float32)
    l64 = l.astype(np.float64)
    with np.errstate(all="ignore"):
        up = (u.astype(np.float32) + l).astype(np.float32)               # rounded to nearest, then
        up_rz = up.view(np.uint32) - (up.astype(np.float64) - u > l64)   # one ulp down where it rounded up
        mag = ((-u).astype(np.float32) - l).astype(np.float32)
        mag_rz = mag.view(np.uint32) - (-u - mag.astype(np.float64) <= l64)   # down also where exact
    out = np.where(u > 0, up_rz, np.where(u == 0, table("lg2")[j], mag_rz | np.uint32(0x80000000)))
    out = np.where(u == -1, table("lg2half")[j], out)                    # table: lg2 of (1 + j 2^-23) / 2
    out = np.where(e == 0, 0xFF800000, np.where(e == 255, 0x7F800000, out))
    out = np.where(np.isnan(a) | ((bits >> 31 == 1) & (e != 0)), 0x7FFFFFFF, out)
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


def lg2(a):
    """lg2.approx.f32 without .ftz: ptxas scales a subnormal by 2^24 and adds -24 to the unit's answer
    (FMUL, MUFU.LG2, FADD), rounded to nearest; the rest as lg2_ftz."""
    return _subnormals_scaled(a, lg2_ftz, lambda r: r + np.float32(-24))


# ------------------------------------------------------------------ sin, cos: FMUL.RZ, MUFU.SIN/COS
INV_2PI = np.float32(0.15915493667125701904)      # ptxas's constant for the FMUL.RZ (0x3e22f983)
_QUARTER = 1 << 23                                 # a quarter turn in the unit's fixed point (2^-25 a step)


def _turns(a):
    """What MUFU.SIN/COS see of float32 ``a``: |a| * 1/(2 pi) rounded toward zero to a float32 (the
    FMUL.RZ ptxas puts before them), then as a fixed-point fraction of a turn with 25 bits, truncated
    (the whole turns dropped). Returns it as an integer in [0, 2^25) and whether ``a`` was negative."""
    a = np.asarray(a, np.float32)
    with np.errstate(invalid="ignore"):                               # NaN and infinity: see _unit_nan
        p = np.abs(a.astype(np.float64)) * np.float64(INV_2PI)      # exact: 24 + 24 bits
        t = p.astype(np.float32)
        t = np.where(t.astype(np.float64) > p, np.nextafter(t, np.float32(0)), t)   # toward zero
    bits = t.view(np.uint32).astype(np.int64)
    e = (bits >> 23) & 255
    mant = (bits & _FRACTION) | (1 << 23)
    shift = e - 150 + 25                                              # |t| 2^25 = mant 2^shift
    r = np.where(shift >= 0, mant << np.clip(shift, 0, 40), mant >> np.clip(-shift, 0, 63))
    r = np.where(e == 0, 0, r) & (4 * _QUARTER - 1)                   # subnormal t: below 2^-25
    return r, a.view(np.uint32) >> 31 == 1


def _sine_of_turns(r):
    """The unit's sine of r * 2^-25 turns: quarters 1 and 3 read the table backwards from its last
    entry (the one's complement of the index, so sin(1/2 - 2^-25 - s) = sin(s) exactly), quarters 2
    and 3 negate (giving -0.0 at half a turn)."""
    quarter, j = r >> 23, r & (_QUARTER - 1)
    out = table("sin")[np.where(quarter & 1, _QUARTER - 1 - j, j)]
    return out ^ np.where(quarter >= 2, np.uint32(0x80000000), np.uint32(0))


def _quick_turns(a):
    """_turns for a batch: uint32 bits of float32 ``a`` -> (r, bits, special). The FMUL.RZ as float32
    rounding of the exact float64 product, one step down where that rounded up; the fixed point as one
    uint64 shift of the mantissa (products of 2^-25 turns and more are 0 turns and more: every whole turn
    drops). ``special``: NaN and the infinities, for the whole rule."""
    bits, a = _bits(a)
    with np.errstate(invalid="ignore", over="ignore"):
        p = np.abs(a.reshape(-1)).astype(np.float64) * np.float64(INV_2PI)    # exact: 24 + 24 bits
        t = p.astype(np.float32)
        tb = t.view(np.uint32) - (t.astype(np.float64) > p)            # toward zero (t >= 0)
    e = np.minimum((tb >> 23) & 255, 160).astype(np.uint64)
    r = ((((tb & _FRACTION) | (1 << 23)).astype(np.uint64) << 40) >> (165 - e)) & (4 * _QUARTER - 1)
    return r.astype(np.uint32), bits, a, (bits & 0x7F800000) == 0x7F800000


def _quick_sine(r):
    """_sine_of_turns on uint32 turns: the table backwards in quarters 1 and 3 (the index's one's
    complement), negated in quarters 2 and 3."""
    quarter = r >> 23
    j = (r & (_QUARTER - 1)) ^ ((np.uint32(0) - (quarter & 1)) & (_QUARTER - 1))
    return table("sin").take(j) ^ ((quarter >> 1) << 31)


def _looped_sine(a, quarter, sign, every_case):
    """sin (``quarter`` 0, ``sign`` 1) or cos (a quarter turn on, ``sign`` 0) as mufu_loops' compiled pass."""
    from . import mufu_loops
    bits, a = _bits(a)
    bits = np.ascontiguousarray(bits)
    out, special = np.empty(bits.size, np.uint32), np.empty(bits.size, np.bool_)
    if mufu_loops._sine(bits, np.float64(INV_2PI), quarter, sign, table("sin"), out, special):
        out[special] = every_case(a.reshape(-1)[special]).view(np.uint32)
    return out.view(np.float32).reshape(a.shape)


def sin(a):
    """sin.approx.f32 (see _sin_every_case): the quick path for finite inputs, the whole rule for the rest."""
    if _loops(np.size(a)):
        return _looped_sine(a, 0, 1, _sin_every_case)
    r, bits, a, special = _quick_turns(a)
    return _finish(a, _quick_sine(r) ^ (bits & 0x80000000), special, _sin_every_case)


def cos(a):
    """cos.approx.f32 (see _cos_every_case): the quick path for finite inputs, the whole rule for the rest."""
    if _loops(np.size(a)):
        return _looped_sine(a, _QUARTER, 0, _cos_every_case)
    r, bits, a, special = _quick_turns(a)
    return _finish(a, _quick_sine((r + _QUARTER) & (4 * _QUARTER - 1)), special, _cos_every_case)


def _sin_every_case(a):
    """sin.approx.f32 and sin.approx.ftz.f32 (SASS FMUL.RZ, MUFU.SIN) as an H100 gives them, bit for bit
    for all 2^32 inputs, NaNs included (NaN and the infinities give 0x7fffffff). The input is cut to
    2^-25 turns (1.9e-7 radians), so near zero the result is up to that far from sin(a): below one
    step it is 0, and the smallest nonzero one is sin(2 pi 2^-25). Odd: sin(-a) is -sin(a), bit for bit."""
    r, negative = _turns(a)
    out = _sine_of_turns(r) ^ np.where(negative, np.uint32(0x80000000), np.uint32(0))
    return _unit_nan(a, out)


def _cos_every_case(a):
    """cos.approx.f32 and cos.approx.ftz.f32 (FMUL.RZ, MUFU.COS): the sine a quarter turn on, from the
    same table; even in a. cos(0) is 1, and cos of the float32 pi/2 is 0 (cosf gives -4.37e-8): the
    unit's coarse steps hide the float's distance from a quarter turn, as sin of the float32 pi is 0."""
    r, _ = _turns(a)
    return _unit_nan(a, _sine_of_turns((r + _QUARTER) & (4 * _QUARTER - 1)))


def _unit_nan(a, out):
    a = np.asarray(a, np.float32)
    out = np.where(np.isfinite(a), out, np.uint32(0x7FFFFFFF))
    return out.astype(np.uint32).view(np.float32).reshape(a.shape)


# ------------------------------------------------------------------ float64: MUFU.RCP64H and MUFU.RSQ64H
F64_UNIT_NAN = np.uint64(0x7FFFFFFF00000000)      # the unit's NaN: 0x7fffffff in the high word


def _high_word_result(x, name):
    """Bits of the unit's float64 approximation of 1/x ('rcp') or 1/sqrt(x) ('rsqrt') for normal x.

    The unit reads only the high word of x (sign, exponent, 20 fraction bits) and writes only the high
    word of the result: the float32 table's answer for that fraction (its 3 lowest bits zero), cut to
    20 fraction bits. 4,096 inputs of tests/kernels/guide.py's ptx_rcp_rsqrt_approx_f64 (an H200) agree."""
    xb = np.asarray(x, np.float64).view(np.uint64)
    e = ((xb >> np.uint64(52)) & np.uint64(0x7FF)).astype(np.int64)
    j = ((xb >> np.uint64(32)) & np.uint64(0xFFFFF)).astype(np.int64) << 3
    u = e - 1023
    if name == "rsqrt":
        j, scale = j | ((u & 1) << 23), -(u >> 1)
    else:
        scale = -u
    t = table(name)[j].astype(np.int64)
    dexp = ((t >> 23) & 255) - 127 + 1023 + scale
    hi = (np.clip(dexp, 0, 2047) << 20) | ((t & _FRACTION) >> 3)
    hi = np.where(dexp <= 0, 0, np.where(dexp >= 2047, 0x7FF00000, hi))
    return hi.astype(np.uint64) << np.uint64(32), e


def rcp_f64_ftz(x):
    """rcp.approx.ftz.f64 as an H200 gives it: the high word of the result only (see _high_word_result);
    zero and subnormal inputs give infinity, infinities zero (signed), any NaN 0x7fffffff00000000."""
    x = np.asarray(x, np.float64)
    xb = x.view(np.uint64)
    sign = xb & np.uint64(1 << 63)
    bits, e = _high_word_result(x, "rcp")
    bits = np.where(e == 0, np.uint64(0x7FF0000000000000), np.where(e == 2047, np.uint64(0), bits)) | sign
    return np.where(_high_word_nan(xb), F64_UNIT_NAN, bits).view(np.float64)


def rsqrt_f64_ftz(x):
    """rsqrt.approx.ftz.f64: the high word only; +-0 and subnormals give +-infinity, +infinity +0, and a
    negative number or NaN 0x7fffffff00000000."""
    x = np.asarray(x, np.float64)
    xb = x.view(np.uint64)
    bits, e = _high_word_result(x, "rsqrt")
    bits = np.where(e == 0, np.uint64(0x7FF0000000000000) | (xb & np.uint64(1 << 63)),
                    np.where(e == 2047, np.uint64(0), bits))
    invalid = _high_word_nan(xb) | ((xb >> np.uint64(63) == 1) & (e != 0))
    return np.where(invalid, F64_UNIT_NAN, bits).view(np.float64)


def _high_word_nan(xb):
    """A NaN as the unit sees it, in the high word: 0x7ff0000000000001 reads as infinity."""
    return (xb & np.uint64(0x7FFFFFFF00000000)) > np.uint64(0x7FF0000000000000)


def rsqrt_f64(x, fma):
    """rsqrt.approx.f64 (no .ftz; libdevice's rsqrt() and the double math that takes square roots):
    ptxas refines the unit's high-word answer y with one step, 1 - x*y*y taken with an fma and a
    cubic correction, y + y*e*(1/2 + 3/8 e). Positive subnormals are first scaled by 2^K_SUB. The
    results and special values (+-0: +-infinity, +infinity: 0, negative: the default NaN, NaN: itself
    quieted) are an H200's for 4,096 inputs (tests/kernels/guide.py, ptx_rcp_rsqrt_approx_f64)."""
    x = np.asarray(x, np.float64)
    xb = x.view(np.uint64)
    tiny = np.finfo(np.float64).tiny
    sub = (x > 0) & (x < tiny)
    with np.errstate(all="ignore"):
        xs = np.where(sub, x * 2.0 ** K_SUB, x)
        y = rsqrt_f64_ftz(xs)
        e = fma(-xs, y * y, np.float64(1.0))
        r = fma(fma(np.float64(0.375), e, np.float64(0.5)) * e, y, y)
        r = np.where(sub, r * 2.0 ** (K_SUB // 2), r)
    bits = r.view(np.uint64)
    bits = np.where(x == 0, np.uint64(0x7FF0000000000000) | (xb & np.uint64(1 << 63)), bits)
    bits = np.where(x == np.inf, np.uint64(0), bits)
    bits = np.where((x < 0) & (x != 0), np.uint64(0xFFF8000000000000), bits)
    bits = np.where(np.isnan(x), xb | np.uint64(1 << 51), bits)
    return bits.view(np.float64)


K_SUB = 54


def _private(mapped) -> np.ndarray:
    """A private copy of the mapped table, read-only: numpy asks the kernel for 2 MiB pages for an array
    this size (madvise), where the file's mapping has 4 KiB ones, and a gather of 2^17 random entries from
    a 32 MiB table missed the TLB at nearly every read: 1.15 to 1.38 ms a batch mapped, 0.66 to 0.69 copied
    (CPU, mean of 60, load 12). The copy costs 32 or 64 MiB of this process's memory and a read of the file."""
    t = np.array(mapped)
    t.flags.writeable = False
    return t
