"""Decode each PTX instruction once into a closure over lane arrays: the instruction table.

``DECODERS[opcode](inst, d)`` returns ``run(ex)``; ``d`` is the decode context (function, module,
environment). Value semantics live in ``alu``; memory, warp and control instructions in their own
modules. Control flow (bra, ret, exit, call) is not decoded here: the SIMT engine owns it.
"""
from __future__ import annotations

import numpy as np

from ..ptx import ir
from . import alu, mufu
from .dtypes import dtype, flush_subnormal, is_float
from .operands import reader, writer

DECODERS: dict = {}


class Unsupported(Exception):
    pass


def op(*names):
    def deco(fn):
        for n in names:
            DECODERS[n] = fn
        return fn
    return deco


def _rnd(inst):
    for m in inst.mods:
        if m in ("rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"):
            return m
    return None


def simple(inst, d, fn, dst_t=None, src_t=None, nsrc=None, src_types=None):
    """An instruction `opc.type dst, src...` computing ``fn(*srcs)`` lane by lane. Sources are read
    as ``src_t`` (default: the instruction's type), or one type each from ``src_types``."""
    t = inst.type
    ops = inst.operands
    srcs = ops[1:] if nsrc is None else ops[1:1 + nsrc]
    w = writer(ops[0], dst_t or t, d.func)
    types = src_types or [src_t or t] * len(srcs)
    rs = [reader(o, ty, d.func, d) for o, ty in zip(srcs, types)]
    if len(rs) == 1:
        r0, = rs

        def run(ex):
            sel = ex.ridx
            w(ex, sel, fn(r0(ex, sel)))
    elif len(rs) == 2:
        r0, r1 = rs

        def run(ex):
            sel = ex.ridx
            w(ex, sel, fn(r0(ex, sel), r1(ex, sel)))
    else:
        def run(ex):
            sel = ex.ridx
            w(ex, sel, fn(*[r(ex, sel) for r in rs]))
    return run


def _ftz(inst, fn, op=None):
    """.ftz: subnormal inputs and results become signed zeros. A result that rounded up to the
    smallest normal is flushed too when the exact value is tiny even after rounding to the format's
    precision (IEEE 754 tininess after rounding, with an unbounded exponent): see alu.below_tiny."""
    if "ftz" not in inst.mods or inst.type not in ("f32", "f16"):
        return fn

    def g(*a):
        a = [flush_subnormal(x) for x in a]
        r = flush_subnormal(fn(*a))
        if op is not None:
            r = np.where(alu.below_tiny(op, r, a), np.copysign(np.zeros((), r.dtype), r), r)
        return r
    return g


def _sat_f(inst, fn):
    if "sat" not in inst.mods or not is_float(inst.type):
        return fn
    return lambda *a: alu.saturate(fn(*a))


def _float(inst, fn, op=None, nan_second=False):
    """Wrap an f32/f64 op with rounding mode, .ftz, .sat and the GPU's NaN results. ``op`` names
    the operation for directed rounding (alu.directed) and .ftz's tininess test; ``nan_second``:
    of two float64 NaNs the second operand's comes out (see later_operand)."""
    rnd = _rnd(inst)
    if rnd in ("rz", "rm", "rp") and op is not None:
        base = fn
        fn = lambda *a: alu.directed(op, base(*a), a, rnd)  # noqa: E731
    if inst.type == "f64" and op in ("add", "sub", "mul", "div"):
        fn = _one_nan(fn, nan_second)
    return _gpu_nan(_sat_f(inst, _ftz(inst, fn, op)))


def _one_nan(fn, second):
    """A float64 add, sub, mul, div, min or max of two NaNs gives one of them (quieted by _gpu_nan): the
    first, or the second with ``second``; numpy's choice depends on where the lane falls in its
    vector loop (its remainder loop takes the second)."""
    def g(a, b):
        r = fn(a, b)
        a, b = np.asarray(a), np.asarray(b)
        both = np.isnan(a) & np.isnan(b)
        return np.where(both, b if second else a, r) if both.any() else r
    return g


def later_operand(inst, func):
    """1 if the second source register of ``inst`` was written after the first (nearer before it in
    the function's text), 0 if the first was, None if neither was written before it or they are one
    register: whose NaN a float64 add, sub, mul or fma of two NaNs gives.

    The H100/H200's DADD and DMUL return the NaN of their *second* SASS operand (DFMA: the second
    multiplicand's, then the addend's, then the first's), and ptxas orders the two sources itself,
    most often the value it computed earlier first, whatever their order in the PTX (`mul.f64 %fd5,
    %fd2, %fd1` with %fd1 loaded first became `DMUL R6(fd1), R8(fd2)` in tests/kernels'
    f64_edge_pairs_arith; `mul(x, y)` and `mul(y, x)` become one DMUL). So the NaN that comes out is
    mostly the one computed later: it gave eight fuzz programs the GPU's bits (docs/fuzz_report.md,
    cause 29). Not always: ptxas may compute a cheap conversion again next to a later use, and its
    order is then its own (seeds 1051 and 3254 of version 3 gave the GPU's bits only with PTX's first)."""
    names = [o[1] if o[0] == "reg" else None for o in inst.operands[1:3]]
    if len(names) < 2 or None in names or names[0] == names[1]:
        return None
    for prev in reversed(func.insts[:inst.index]):
        o = prev.operands[0] if prev.operands else ("",)
        dsts = [o] if o[0] == "reg" else (o[1] if o[0] == "vec" else ())
        for r in dsts:
            if r[0] == "reg" and r[1] in names:
                return names.index(r[1])
    return None


def nan_second(inst, d):
    """Whether a float64 add, sub or mul of two NaNs gives its second operand's (later_operand)."""
    return inst.type == "f64" and later_operand(inst, d.func) == 1


def _gpu_nan(fn):
    """NVIDIA GPUs return the canonical NaN (0x7fffffff) from every float32 operation with a NaN
    result, and a quieted NaN (payload kept) from float64 ones."""
    return lambda *a: alu.gpu_nan(fn(*a))


def _packed(inst, fn):
    """f16x2/bf16x2: apply a scalar op to both halves."""
    bf = inst.type == "bf16x2"

    def g(*a):
        lo = [alu.unpack2(x, bf)[0] for x in a]
        hi = [alu.unpack2(x, bf)[1] for x in a]
        return alu.pack2(fn(*lo), fn(*hi), bf)
    return g


def _bf16(fn, op=None):
    """bf16 arithmetic in float64, rounded to bf16 through float32 rounded to odd (one rounding)."""
    def g(*a):
        x = [np.asarray(alu.bf16_to_f32(v), np.float64) for v in a]
        return alu.f32_to_bf16(alu.to_odd_f32(_sticky(op, x, fn(*x))))
    return g


def _sticky(op, x, r):
    """A float64 sum of bf16 values can lose a tiny addend (exponents 2**-133 .. 2**127 span more
    than 53 bits): round the float64 result to odd instead (of the two float64 values around the
    exact one, the one with an odd last bit), so that rounding it to odd again and then to bf16
    still sees the remainder (fma.rn.bf16 of 0xc401, 0x4040, 0x0001 is 0xc4c1 on an H100, not the
    tie's 0xc4c2; found by tests/fuzz/found_v2.py). Stepping toward the exact value regardless of the
    last bit undid a rounding that had gone past it: fma(30, 0x4d48, 0xb542) landed back on the tie
    and gave 0x4fbc, the H200 0x4fbb (version 3's seed 17)."""
    if op not in ("add", "sub", "fma"):
        return r
    with np.errstate(all="ignore"):
        p, q = (x[0] * x[1], x[2]) if op == "fma" else (x[0], -x[1] if op == "sub" else x[1])
        s = p + q
        bb = s - p
        err = (p - (s - bb)) + (q - bb)      # exact: the product of two bf16 is exact in float64
        r = np.asarray(r, np.float64)
        odd = (r.view(np.uint64) & np.uint64(1)).astype(bool)
        step = (err != 0) & np.isfinite(r) & ~odd
        return np.where(step, np.nextafter(r, np.copysign(np.inf, err)), r)


def _half_exact(fn):
    """f16 arithmetic: compute exactly in float64, round once to half; NaN is 0x7fff."""
    def g(*a):
        return alu.gpu_nan(np.asarray(fn(*[np.asarray(x, np.float64) for x in a])).astype(np.float16))
    return g


def _arith(inst, fval, fint=None, op=None, nan_second=False):
    t = inst.type
    if t == "f16x2":
        return _packed(inst, _sat_f(inst, _ftz(inst, _half_exact(fval))))
    if t == "bf16x2":
        def odd(*a):
            x = [np.asarray(v, np.float64) for v in a]
            return alu.to_odd_f32(_sticky(op, x, fval(*x)))
        return _packed(inst, odd)
    if t == "bf16":
        return _bf16(fval, op)
    if t == "f16":
        return _sat_f(inst, _ftz(inst, _half_exact(fval)))
    if is_float(t):
        return _float(inst, fval, op, nan_second)
    return fint or fval


# ------------------------------------------------------------------ data movement

@op("mov")
def _mov(inst, d):
    dst, src = inst.operands
    t = inst.type
    if src[0] == "vec":                      # pack: mov.b64 %rd, {%r1, %r2}
        parts = [reader(o, None or _part_type(t, len(src[1])), d.func, d) for o in src[1]]
        w = writer(dst, t, d.func)
        width = dtype(t).itemsize * 8 // len(parts)

        def run(ex):
            sel = ex.ridx
            acc = None
            for k, p in enumerate(parts):
                v = np.asarray(p(ex, sel)).astype(np.uint64) << np.uint64(k * width)
                acc = v if acc is None else acc | v
            w(ex, sel, acc.astype(dtype(t)) if dtype(t).itemsize < 8 else acc.view(np.uint64))
        return run
    if dst[0] == "vec":                      # unpack: mov.b64 {%r1, %r2}, %rd
        r = reader(src, t, d.func, d)
        pt = _part_type(t, len(dst[1]))
        ws = [writer(o, pt, d.func) for o in dst[1]]
        width = dtype(t).itemsize * 8 // len(ws)

        def run(ex):
            sel = ex.ridx
            v = np.asarray(r(ex, sel)).astype(np.uint64)
            for k, w in enumerate(ws):
                w(ex, sel, ((v >> np.uint64(k * width)) & np.uint64((1 << width) - 1)).astype(dtype(pt)))
        return run
    return simple(inst, d, lambda a: np.array(a, copy=True))


def _part_type(t, n):
    return {64: {2: "b32", 4: "b16"}, 32: {2: "b16", 4: "b8"}, 16: {2: "b8"}, 128: {2: "b64", 4: "b32"}}[dtype(t).itemsize * 8 if t != "b128" else 128][n]


@op("cvta")
def _cvta(inst, d):
    # generic <-> space: shared/local offsets live in windows of the generic space (memory.py)
    space = next(m for m in inst.mods if m in ("global", "shared", "local", "const", "param"))
    to = "to" in inst.mods
    from .memory import LOCAL_WINDOW, SHARED_WINDOW
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    t = inst.type
    if base == 0:
        return simple(inst, d, lambda a: np.array(a, copy=True))
    b = np.uint64(base)
    if to:
        return simple(inst, d, lambda a: (np.asarray(a).astype(np.uint64) - b).astype(dtype(t)))
    return simple(inst, d, lambda a: np.asarray(a).astype(np.uint64) + b)


@op("selp")
def _selp(inst, d):
    t = inst.type
    return simple(inst, d, lambda a, b, c: np.where(c, a, b), src_types=(t, t, "pred"))


@op("slct")
def _slct(inst, d):
    dt_t, ct = inst.types[0], inst.types[1]
    return simple(inst, d, lambda a, b, c: np.where(c >= 0, a, b), dst_t=dt_t, src_types=(dt_t, dt_t, ct))


@op("add")
def _add(inst, d):
    t = inst.type
    if "sat" in inst.mods and t == "s32":
        return simple(inst, d, lambda a, b: alu.sat_add(a, b))
    if "cc" in inst.mods or inst.opcode == "addc":
        return _carry(inst, d, sub=False)
    return _contracted(inst, d) or simple(inst, d, _arith(inst, lambda a, b: a + b, op="add",
                                                                     nan_second=nan_second(inst, d)))


@op("sub")
def _sub(inst, d):
    t = inst.type
    if "sat" in inst.mods and t == "s32":
        return simple(inst, d, lambda a, b: alu.sat_add(a, b, sub=True))
    if "cc" in inst.mods:
        return _carry(inst, d, sub=True)
    return _contracted(inst, d) or simple(inst, d, _arith(inst, lambda a, b: a - b, op="sub",
                                                                     nan_second=nan_second(inst, d)))


@op("addc", "subc")
def _addc(inst, d):
    return _carry(inst, d, sub=inst.opcode == "subc")


def _carry(inst, d, sub):
    """add.cc/addc/sub.cc/subc: extended precision through a per-lane carry flag (CC.CF)."""
    t = inst.type
    ra, rb = (reader(o, t, d.func, d) for o in inst.operands[1:3])
    return _carry_chain(inst, d, ra, rb, sub, use_in=inst.opcode in ("addc", "subc"))


def _carry_chain(inst, d, first, second, sub, use_in):
    """``first`` +/- ``second`` (+/- CC.CF when ``use_in``), setting CC.CF when the opcode has .cc."""
    t = inst.type
    w = writer(inst.operands[0], t, d.func)
    set_out = "cc" in inst.mods
    bits = dtype(t).itemsize * 8
    mask = (1 << bits) - 1

    def run(ex):
        sel = ex.ridx
        ua = np.asarray(first(ex, sel)).astype(np.uint64) & np.uint64(mask)
        ub = np.asarray(second(ex, sel)).astype(np.uint64) & np.uint64(mask)
        cin = ex.carry_in(sel) if use_in else np.uint64(0)
        if sub:     # CC.CF of a subtraction is the carry of a + ~b + CF: no borrow (ptx/carry.py)
            cin = (np.uint64(1) - np.asarray(cin).astype(np.uint64)) if use_in else np.uint64(0)
        if bits == 64:
            if sub:
                r = ua - ub - cin
                cout = ~((ua < ub) | ((ua == ub) & (cin != 0)))
            else:
                s1 = ua + ub
                r = s1 + cin
                cout = (s1 < ua) | (r < s1)
        else:
            if sub:
                full = ua.astype(np.int64) - ub.astype(np.int64) - np.asarray(cin).astype(np.int64)
                cout = full >= 0
                r = (full & mask).astype(np.uint64)
            else:
                full = ua + ub + cin
                cout = full > mask
                r = full & np.uint64(mask)
        w(ex, sel, np.asarray(r).astype(dtype(t)) if bits < 64 else np.asarray(r).view(dtype(t)))
        if set_out:
            ex.carry_out(sel, cout)
    return run


@op("mul")
def _mul(inst, d):
    t = inst.type
    if is_float(t):
        return simple(inst, d, _arith(inst, lambda a, b: a * b, op="mul", nan_second=nan_second(inst, d)))
    if "hi" in inst.mods:
        return simple(inst, d, alu.mul_hi)
    if "wide" in inst.mods:
        wide = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]
        return simple(inst, d, alu.mul_wide, dst_t=wide)
    return simple(inst, d, lambda a, b: a * b)


@op("mul24")
def _mul24(inst, d):
    return simple(inst, d, _mul24_fn(inst))


def _mul24_fn(inst):
    def f(a, b):
        a, b = np.asarray(a).astype(np.int64), np.asarray(b).astype(np.int64)
        if inst.type == "s32":
            a, b = (a << 40) >> 40, (b << 40) >> 40
        else:
            a, b = a & 0xFFFFFF, b & 0xFFFFFF
        p = a * b
        return ((p >> 16) if "hi" in inst.mods else p).astype(np.int64).astype(np.uint64).astype(np.uint32).view(dtype(inst.type))
    return f


@op("mad", "fma")
def _mad(inst, d):
    t = inst.type
    if t in ("f32", "f64"):
        dt, first = dtype(t), "a" if t == "f64" and later_operand(inst, d.func) == 0 else "b"
        return simple(inst, d, _arith(inst, lambda a, b, c: alu.fma(a, b, c, dt, first), op="fma"))
    if is_float(t):        # halves: a*b+c is exact in float64 (bf16: see _sticky), so rounding it once is the fma
        return simple(inst, d, _arith(inst, lambda a, b, c: a * b + c, op="fma"))
    if "cc" in inst.mods:
        return _mad_carry(inst, d)
    if "hi" in inst.mods:
        if "sat" in inst.mods:
            return simple(inst, d, lambda a, b, c: np.clip(alu.mul_hi(a, b).astype(np.int64) + np.asarray(c).astype(np.int64), -2**31, 2**31 - 1).astype(np.int32))
        return simple(inst, d, lambda a, b, c: alu.mul_hi(a, b) + c)
    if "wide" in inst.mods:
        wide = {"s16": "s32", "u16": "u32", "s32": "s64", "u32": "u64"}[t]
        w = writer(inst.operands[0], wide, d.func)
        ra, rb = (reader(o, t, d.func, d) for o in inst.operands[1:3])
        rc = reader(inst.operands[3], wide, d.func, d)

        def run(ex):
            sel = ex.ridx
            w(ex, sel, alu.mul_wide(ra(ex, sel), rb(ex, sel)) + rc(ex, sel))
        return run
    return simple(inst, d, lambda a, b, c: a * b + c)


@op("mad24")
def _mad24(inst, d):
    mul = _mul24_fn(inst)
    return simple(inst, d, lambda a, b, c: (mul(a, b) + c).astype(dtype(inst.type)))


@op("div")
def _div(inst, d):
    t = inst.type
    if is_float(t):
        if "approx" in inst.mods and t == "f32":
            ftz = "ftz" in inst.mods

            def approx(a, b):
                # PTX ISA div: div.approx.f32 is a * (1/b), with the special function unit's 1/b. Without
                # .ftz a subnormal b counts: it is scaled by 2^24 into the normals and the quotient back by 2^24
                # (bf16 __hdiv of 0x2ff0 by 0x007f is 0x6ef2 on an H100; found by tests/fuzz/found_v2.py)
                b = np.asarray(b, np.float32)
                with np.errstate(all="ignore"):
                    if ftz:
                        return np.asarray(a, np.float32) * mufu.rcp_ftz(b)
                    sub = (b != 0) & (np.abs(b) < np.finfo(np.float32).tiny)
                    if not sub.any():
                        return np.asarray(a, np.float32) * mufu.rcp_ftz(b)
                    q = np.asarray(a, np.float32) * mufu.rcp_ftz(np.where(sub, b * np.float32(2.0 ** 24), b))
                    return np.where(sub, q * np.float32(2.0 ** 24), q).astype(np.float32)
            return simple(inst, d, _float(inst, approx))
        if "full" in inst.mods:
            return simple(inst, d, _float(inst, _div_full_f32))
        return simple(inst, d, _arith(inst, lambda a, b: a / b, op="div"))
    return simple(inst, d, alu.idiv)


def _div_full_f32(a, b):
    """div.full.f32 (-prec-div=false, within 2 ulp by the PTX ISA) as the GPU computes it: a times the
    special function unit's 1/b, with both scaled by 1/4 where |b| >= 2^126 (whose reciprocal would
    be subnormal) and by 2^24 where b is subnormal. All 256 quotients of tests/kernels/guide.py's
    prec_div_and_sqrt_flags_off, 57 of them 1 ulp from a / b rounded, are an H200's bits."""
    a, b = np.asarray(a, np.float32), np.asarray(b, np.float32)
    with np.errstate(all="ignore"):
        big = np.abs(b) >= np.float32(2.0 ** 126)
        sub = (b != 0) & (np.abs(b) < np.finfo(np.float32).tiny)
        if not (big.any() or sub.any()):            # the usual batch: every scale 1
            return a * mufu.rcp_ftz(b)
        s = np.where(big, np.float32(0.25), np.where(sub, np.float32(2.0 ** 24), np.float32(1)))
        return (a * s) * mufu.rcp_ftz(b * s)


@op("rem")
def _rem(inst, d):
    return simple(inst, d, alu.irem)


_HALF_NAN = {"f16x2": (0x7C00, 0x03FF), "bf16x2": (0x7F80, 0x007F), "bf16": (0x7F80, 0x007F)}


def _sign_op(t, bits):
    """neg/abs on packed halves and bf16 by their sign bits; a NaN half becomes 0x7FFF, as the GPU
    writes it."""
    exp, man = _HALF_NAN[t]
    halves = 1 if t == "bf16" else 2

    def f(a, neg):
        a = np.asarray(a)
        r = (a ^ np.array(bits).astype(a.dtype)) if neg else (a & np.array(~bits & 0xFFFFFFFF).astype(a.dtype))
        for k in range(halves):
            h = (a >> np.array(16 * k).astype(a.dtype)) & np.array(0xFFFF).astype(a.dtype)
            nan = ((h & np.array(exp).astype(a.dtype)) == exp) & ((h & np.array(man).astype(a.dtype)) != 0)
            if nan.any():
                keep = np.array(~(0xFFFF << (16 * k)) & 0xFFFFFFFF).astype(a.dtype)
                r = np.where(nan, (r & keep) | np.array(0x7FFF << (16 * k)).astype(a.dtype), r)
        return r
    return f


@op("abs")
def _abs(inst, d):
    t = inst.type
    if t == "f64":                       # a NaN keeps its sign (quieted), as for neg.f64 (see _neg)
        return simple(inst, d, _gpu_nan(lambda a: np.where(np.isnan(a), a, np.abs(a))))
    if t in ("f16", "f32"):              # a NaN comes out canonical
        return simple(inst, d, _gpu_nan(_ftz(inst, np.abs)))
    if t in ("f16x2", "bf16x2", "bf16"):
        f = _sign_op(t, 0x8000 if t == "bf16" else 0x80008000)
        return simple(inst, d, lambda a: f(a, False))
    return simple(inst, d, lambda a: np.where(a < 0, -a, a).astype(a.dtype))


@op("neg")
def _neg(inst, d):
    t = inst.type
    if t in ("f16x2", "bf16x2", "bf16"):
        f = _sign_op(t, 0x8000 if t == "bf16" else 0x80008000)
        return simple(inst, d, lambda a: f(a, True))
    if t == "f64":
        # a NaN keeps its sign (quieted): ptxas folds neg.f64 into the instruction that uses it as an
        # operand modifier, which a NaN passes unchanged (fma(x, y, -x) of a NaN x gives x's bits on an
        # H100, tests/kernels/floating.py; with fma's b-first NaN choice, fuzz v2 seeds 889 2688 ...)
        return simple(inst, d, _gpu_nan(lambda a: np.where(np.isnan(a), a, -a)))
    if is_float(t):
        return simple(inst, d, _gpu_nan(_ftz(inst, np.negative)))
    return simple(inst, d, np.negative)


@op("min", "max")
def _minmax(inst, d):
    is_max = inst.opcode == "max"
    t = inst.type
    if is_float(t):
        nan = "NaN" in inst.mods
        if "xorsign" in inst.mods:
            return simple(inst, d, _arith(inst, lambda a, b: alu.fminmax_xorsign(a, b, is_max, nan)))
        fn = lambda a, b: alu.fminmax(a, b, is_max, nan)  # noqa: E731
        if t == "f64" and not nan:
            # ptxas writes DSETP.MAX/MIN + SELs whose NaN result is the second source's quieted, the
            # source order its own, as for DADD/DMUL: of two NaNs the later computed (fuzz seed 2108)
            fn = _one_nan(fn, nan_second(inst, d))
        return simple(inst, d, _arith(inst, fn))
    if "relu" in inst.mods:
        return simple(inst, d, lambda a, b: np.maximum(alu.int_minmax(a, b, is_max), 0).astype(a.dtype))
    if len(inst.operands) == 4:      # three-input min/max (sm_90)
        return simple(inst, d, lambda a, b, c: alu.int_minmax(alu.int_minmax(a, b, is_max), c, is_max))
    return simple(inst, d, lambda a, b: alu.int_minmax(a, b, is_max))


@op("and", "or", "xor")
def _logic(inst, d):
    f = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[inst.opcode]
    return simple(inst, d, f)


@op("not")
def _not(inst, d):
    return simple(inst, d, lambda a: ~a if a.dtype != np.bool_ else np.logical_not(a))


@op("cnot")
def _cnot(inst, d):
    return simple(inst, d, lambda a: (a == 0).astype(a.dtype))


@op("shl")
def _shl(inst, d):
    return _shift(inst, d, alu.shl)


@op("shr")
def _shr(inst, d):
    return _shift(inst, d, alu.shr)


def _shift(inst, d, fn):
    return simple(inst, d, fn, src_types=(inst.type, "u32"))


@op("shf")
def _shf(inst, d):
    left, clamp = "l" in inst.mods, "clamp" in inst.mods
    return simple(inst, d, lambda a, b, c: alu.shf(a, b, c, left, clamp))


@op("popc", "clz")
def _popc(inst, d):
    f = alu.popc if inst.opcode == "popc" else alu.clz
    return simple(inst, d, f, dst_t="u32")


@op("bfind")
def _bfind(inst, d):
    sh = "shiftamt" in inst.mods
    return simple(inst, d, lambda a: alu.bfind(a, sh), dst_t="u32")


@op("brev")
def _brev(inst, d):
    return simple(inst, d, alu.brev)


@op("bfe")
def _bfe(inst, d):
    t = inst.type
    return simple(inst, d, alu.bfe, src_types=(t, "u32", "u32"))


@op("bfi")
def _bfi(inst, d):
    t = inst.type
    return simple(inst, d, alu.bfi, src_types=(t, t, "u32", "u32"))


@op("prmt")
def _prmt(inst, d):
    mode = next((m for m in inst.mods if m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")), "")
    return simple(inst, d, lambda a, b, c: alu.prmt(a, b, c, mode))


@op("sad")
def _sad(inst, d):
    return simple(inst, d, alu.sad)


@op("lop3")
def _lop3(inst, d):
    dst, a, b, c, lut = inst.operands
    return simple(inst, d, lambda x, y, z: alu.lop3(x, y, z, lut[1]), nsrc=3)


@op("dp4a", "dp2a")
def _dp(inst, d):
    ut, st = inst.types[0], inst.types[1]

    def f(a, b, c):
        a, b = np.asarray(a).astype(np.uint32), np.asarray(b).astype(np.uint32)
        acc = np.asarray(c).astype(np.int64)
        n = 4 if inst.opcode == "dp4a" else 2
        for k in range(n):
            if inst.opcode == "dp4a":
                x = (a >> np.uint32(8 * k)) & np.uint32(0xFF)
                y = (b >> np.uint32(8 * k)) & np.uint32(0xFF)
                x = x.astype(np.int64) - (256 * (x >= 128) if ut == "s32" else 0)
                y = y.astype(np.int64) - (256 * (y >= 128) if st == "s32" else 0)
            else:
                x = (a >> np.uint32(16 * k)) & np.uint32(0xFFFF)
                x = x.astype(np.int64) - (65536 * (x >= 32768) if ut == "s32" else 0)
                hi = "hi" in inst.mods
                y = (b >> np.uint32(8 * (k + (2 if hi else 0)))) & np.uint32(0xFF)
                y = y.astype(np.int64) - (256 * (y >= 128) if st == "s32" else 0)
            acc = acc + x * y
        return acc.astype(np.int64).astype(np.uint64).astype(np.uint32)
    dst = inst.operands[0]
    w = writer(dst, "u32", d.func)
    rs = [reader(o, "u32", d.func, d) for o in inst.operands[1:]]

    def run(ex):
        sel = ex.ridx
        w(ex, sel, f(*[r(ex, sel) for r in rs]))
    return run


@op("copysign")
def _copysign(inst, d):
    return simple(inst, d, lambda a, b: np.copysign(b, a))


@op("testp")
def _testp(inst, d):
    what = next(m for m in inst.mods if m in ("finite", "infinite", "number", "notanumber", "normal", "subnormal"))
    return simple(inst, d, lambda a: alu.testp(a, what), dst_t="pred")


# ------------------------------------------------------------------ float special functions

def _unary_float(inst, d, f64fn, approx=True):
    t = inst.type
    dt = dtype(t) if t not in ("bf16", "bf16x2") else np.dtype(np.float32)

    def f(a):
        with np.errstate(all="ignore"):
            return np.asarray(f64fn(np.asarray(a, np.float64))).astype(dt)
    return simple(inst, d, _arith(inst, f))


@op("sqrt")
def _sqrt(inst, d):
    if inst.type == "f64" or _rnd(inst):
        return simple(inst, d, _float(inst, np.sqrt, op="sqrt"))
    if inst.type == "f32":                              # sqrt.approx: MUFU.SQRT, measured (emulator/mufu.py)
        return simple(inst, d, mufu.sqrt_ftz if "ftz" in inst.mods else mufu.sqrt)
    return _unary_float(inst, d, np.sqrt)


@op("rsqrt")
def _rsqrt(inst, d):
    if inst.type == "f32":
        return simple(inst, d, mufu.rsqrt_ftz if "ftz" in inst.mods else mufu.rsqrt)
    if inst.type == "f64" and "approx" in inst.mods:     # MUFU.RSQ64H (and ptxas's refinement without .ftz)
        if "ftz" in inst.mods:
            return simple(inst, d, mufu.rsqrt_f64_ftz)
        return simple(inst, d, lambda x: mufu.rsqrt_f64(x, lambda a, b, c: alu.fma(a, b, c, np.dtype(np.float64))))
    return _unary_float(inst, d, lambda x: 1.0 / np.sqrt(x))


def _mufu(inst, d, measured, f64fn):
    """ex2/rcp.approx.f32: the H100's special function unit, measured (emulator/mufu.py). Without
    .ftz, subnormal inputs and results were not measured: there they are ``f64fn`` rounded to nearest."""
    if "ftz" in inst.mods:
        return simple(inst, d, measured)

    tiny = np.finfo(np.float32).tiny

    def f(a):
        a = np.asarray(a, np.float32)
        out = measured(a)
        # Where the rounded f64fn could be subnormal: a subnormal input, or a measured result below 2 * tiny
        # (elsewhere the unit's answer, within 2 ulp of the exact one, says that result is normal)
        maybe = ((a != 0) & (np.abs(a) < tiny)) | (np.abs(out) < 2 * tiny)
        if maybe.any():
            x = a[maybe]
            with np.errstate(all="ignore"):
                near = np.asarray(f64fn(x.astype(np.float64))).astype(np.float32)
            subnormal = ((x != 0) & (np.abs(x) < tiny)) | ((near != 0) & (np.abs(near) < tiny))
            out = out.copy()
            out[maybe] = np.where(subnormal, near, out[maybe])
        return out
    return simple(inst, d, _gpu_nan(f))


@op("rcp")
def _rcp(inst, d):
    if "approx" in inst.mods:
        if inst.type == "f32":
            return _mufu(inst, d, mufu.rcp_ftz, lambda x: 1.0 / x)
        if inst.type == "f64":                          # rcp.approx.ftz.f64: MUFU.RCP64H, the high word only
            return simple(inst, d, mufu.rcp_f64_ftz)
        return _unary_float(inst, d, lambda x: 1.0 / x)
    return simple(inst, d, _float(inst, alu.rcp_rn, op="rcp"))


@op("sin", "cos", "lg2", "ex2", "tanh")
def _approx(inst, d):
    if inst.opcode == "ex2" and inst.type == "f32":
        return _mufu(inst, d, mufu.ex2_ftz, np.exp2)
    if inst.opcode == "lg2" and inst.type == "f32":     # MUFU.LG2, subnormals too (emulator/mufu.py)
        return simple(inst, d, mufu.lg2_ftz if "ftz" in inst.mods else mufu.lg2)
    if inst.opcode in ("sin", "cos") and inst.type == "f32":   # FMUL.RZ by 1/(2 pi), MUFU.SIN/COS; .ftz
        return simple(inst, d, mufu.sin if inst.opcode == "sin" else mufu.cos)   # or not, the same SASS
    f = {"sin": np.sin, "cos": np.cos, "lg2": np.log2, "ex2": np.exp2, "tanh": np.tanh}[inst.opcode]
    return _unary_float(inst, d, f)


# ------------------------------------------------------------------ comparisons

def _comparison(inst, t):
    """compare(x, y) for setp/set of source type ``t``: one boolean array, or (low, high) for the
    halves of f16x2/bf16x2 sources (PTX ISA setp, set: each half is compared on its own)."""
    cmp = inst.mods[0]
    ftz = "ftz" in inst.mods and t in ("f32", "f16", "f16x2")
    if t in ("f16x2", "bf16x2"):
        bf = t == "bf16x2"

        def halves(x, y):
            (xl, xh), (yl, yh) = alu.unpack2(x, bf), alu.unpack2(y, bf)
            if ftz:
                xl, xh, yl, yh = (flush_subnormal(v) for v in (xl, xh, yl, yh))
            return alu.compare(xl, yl, cmp), alu.compare(xh, yh, cmp)
        return halves

    def scalar(x, y):
        if t == "bf16":
            x, y = alu.bf16_to_f32(x), alu.bf16_to_f32(y)
        if ftz:
            x, y = flush_subnormal(x), flush_subnormal(y)
        return alu.compare(x, y, cmp)
    return scalar


@op("setp")
def _setp(inst, d):
    t = inst.type
    boolop = next((m for m in inst.mods if m in ("and", "or", "xor")), None)
    ops = inst.operands
    dst = ops[0]
    ra, rb = reader(ops[1], t, d.func, d), reader(ops[2], t, d.func, d)
    rc = reader(ops[3], "pred", d.func, d) if boolop else None
    if dst[0] == "pair":
        wp, wq = writer(dst[1], "pred", d.func), writer(dst[2], "pred", d.func)
    else:
        wp, wq = writer(dst, "pred", d.func), None
    compare = _comparison(inst, t)
    packed = t in ("f16x2", "bf16x2")

    def run(ex):
        sel = ex.ridx
        p = compare(ra(ex, sel), rb(ex, sel))
        p, q = p if packed else (p, ~p)     # p|q: the two halves, or the result and its complement
        if boolop:
            c = rc(ex, sel)
            p, q = alu.BOOL_OPS[boolop](p, c), alu.BOOL_OPS[boolop](q, c)
        wp(ex, sel, p)
        if wq is not None:
            wq(ex, sel, q)
    return run


_SET_TRUE = {"f16x2": 0x3C00, "bf16x2": 0x3F80, "f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000}


@op("set")
def _set(inst, d):
    """set: 1.0 (float destinations) or all ones (integer ones) where the comparison holds; for
    f16x2/bf16x2 sources each 16-bit half of the result on its own."""
    dt_t, st = inst.types[0], inst.types[-1]
    boolop = next((m for m in inst.mods if m in ("and", "or", "xor")), None)
    dst, a, b = inst.operands[:3]
    w = writer(dst, dt_t, d.func)
    ra, rb = reader(a, st, d.func, d), reader(b, st, d.func, d)
    rc = reader(inst.operands[3], "pred", d.func, d) if boolop else None
    compare = _comparison(inst, st)
    store = dtype(dt_t)
    packed = st in ("f16x2", "bf16x2")
    one = _SET_TRUE.get(dt_t, 0xFFFF if packed else (1 << (8 * store.itemsize)) - 1)

    def run(ex):
        sel = ex.ridx
        p = compare(ra(ex, sel), rb(ex, sel))
        ps = p if packed else (p,)
        if boolop:
            c = rc(ex, sel)
            ps = [alu.BOOL_OPS[boolop](x, c) for x in ps]
        bits = sum(np.where(x, np.uint64(one), np.uint64(0)) << np.uint64(16 * k) for k, x in enumerate(ps))
        w(ex, sel, np.asarray(bits).astype(np.uint64).astype(alu.UINT[store.itemsize]).view(store))
    return run


# ------------------------------------------------------------------ conversions

@op("cvt")
def _cvt(inst, d):
    types = inst.types
    dst_t, src_t = types[0], types[1]
    rnd = _rnd(inst)
    sat, ftz = "sat" in inst.mods, "ftz" in inst.mods
    if "relu" in inst.mods:
        raise Unsupported("cvt.relu")
    if dst_t in ("f16x2", "bf16x2"):      # cvt.rn.f16x2.f32 d, a, b : pack two floats (a high)
        half = dst_t[:-2]
        w = writer(inst.operands[0], dst_t, d.func)
        ra, rb = (reader(o, src_t, d.func, d) for o in inst.operands[1:3])

        def bits(x):
            return np.asarray(alu.cvt(x, half, src_t, rnd, sat, ftz)).view(np.uint16).astype(np.uint32)

        def run(ex):
            sel = ex.ridx
            w(ex, sel, bits(rb(ex, sel)) | (bits(ra(ex, sel)) << np.uint32(16)))
        return run
    return simple(inst, d, lambda a: np.array(alu.cvt(a, dst_t, src_t, rnd, sat, ftz), copy=True),
                  dst_t=dst_t, src_t=src_t)


# ------------------------------------------------------------------ no-ops for the emulator

@op("membar", "fence", "prefetch", "prefetchu", "nanosleep", "pmevent", "discard", "applypriority",
    "createpolicy", "griddepcontrol", "setmaxnreg")
def _nop(inst, d):
    # Memory is sequentially consistent in the emulator, so fences order nothing further;
    # nanosleep only yields; prefetches only warm caches we do not model.
    return lambda ex: None


def decode(inst, d):
    dec = DECODERS.get(inst.opcode)
    if dec is None:
        raise Unsupported(inst.opcode)
    return dec(inst, d)


# ------------------------------------------------------------------ extended-precision multiply-add

@op("madc")
def _madc(inst, d):
    return _mad_carry(inst, d)


def _mad_carry(inst, d):
    """mad.lo.cc / mad.hi.cc / madc: multiply, then add with carry in/out (CC.CF)."""
    t = inst.type
    ra, rb, rc = (reader(o, t, d.func, d) for o in inst.operands[1:4])
    mul = alu.mul_hi if "hi" in inst.mods else (lambda x, y: np.asarray(x) * np.asarray(y))
    return _carry_chain(inst, d, lambda ex, sel: mul(ra(ex, sel), rb(ex, sel)), rc, sub=False,
                        use_in=inst.opcode == "madc")


# ------------------------------------------------------------------ SIMD video instructions (PTX ISA 9.7.16)

_VOPS = {
    "vadd": lambda a, b: a + b, "vsub": lambda a, b: a - b, "vabsdiff": lambda a, b: np.abs(a - b),
    "vmin": np.minimum, "vmax": np.maximum,
    "vavrg": lambda a, b: np.sign(a + b) * ((np.abs(a + b) + 1) >> 1),     # half away from zero (signed: H200)
}


@op("vadd4", "vsub4", "vabsdiff4", "vmin4", "vmax4", "vavrg4", "vset4",
    "vadd2", "vsub2", "vabsdiff2", "vmin2", "vmax2", "vavrg2", "vset2")
def _video(inst, d):
    lanes = int(inst.opcode[-1])
    name = inst.opcode[:-1]
    width = 32 // lanes
    types = inst.types
    # vset2/vset4 name only the source types (the result is unsigned)
    dt_, at, bt = ("u32", types[0], types[1]) if name == "vset" else (types[0], types[1], types[2])
    cmp = None
    if name == "vset":
        cmp = next(m for m in inst.mods if m in ("eq", "ne", "lt", "le", "gt", "ge"))
    add, sat = "add" in inst.mods, "sat" in inst.mods
    dst, a, b, c = inst.operands
    w = writer(dst, "u32", d.func)
    ra, rb, rc = (reader(o, "u32", d.func, d) for o in (a, b, c))
    m = (1 << width) - 1

    def part(v, k, signed):
        x = (np.asarray(v).astype(np.int64) >> (width * k)) & m
        return x - ((x >> (width - 1)) << width) if signed else x

    def run(ex):
        sel = ex.ridx
        x, y, z = ra(ex, sel), rb(ex, sel), rc(ex, sel)
        out = np.zeros(np.broadcast(x, y).shape, np.int64)
        total = np.zeros_like(out)
        for k in range(lanes):
            p, q = part(x, k, at[0] == "s"), part(y, k, bt[0] == "s")
            if name == "vset":
                r = alu.compare(p, q, cmp).astype(np.int64)
            else:
                r = _VOPS[name](p, q)
            if add:
                total = total + r
                continue
            if sat:
                lo, hi = (-(1 << (width - 1)), (1 << (width - 1)) - 1) if dt_[0] == "s" else (0, m)
                r = np.clip(r, lo, hi)
            out = out | ((r & m) << (width * k))
        if add:
            res = (total + np.asarray(z).astype(np.int64)) & 0xFFFFFFFF
        else:
            res = out & 0xFFFFFFFF
        w(ex, sel, res.astype(np.uint32))
    return run


# ------------------------------------------------------------------ mul + add contraction

_NO_DEST = {"st", "red", "bar", "barrier", "bra", "brx", "call", "nanosleep", "sust", "prefetch",
            "prefetchu", "discard", "applypriority", "cp", "stmatrix", "wmma", "tensormap"}
_FUSIBLE = ("f32", "f64", "f16", "f16x2", "bf16", "bf16x2")    # bf16: sm_90 mul/add.bf16(x2), H200-measured


def _regs(o):
    return (x[1] for x in ir.leaves((o,)) if x[0] == "reg")


def _def_use(func):
    """(defs, uses): per register, the indices of the instructions writing it, and how often it
    is read. Over-counting is harmless (it only prevents a contraction)."""
    defs, uses = {}, {}
    for inst in func.insts:
        ops = inst.operands
        writes = bool(ops) and ops[0][0] in ("reg", "vec", "pair") and inst.opcode not in _NO_DEST
        for r in (_regs(ops[0]) if writes else ()):
            defs.setdefault(r, []).append(inst.index)
        read = [r for o in (ops[1:] if writes else ops) for r in _regs(o)]
        if inst.opcode in _NO_DEST:      # a call may write its return registers
            for r in read:
                defs.setdefault(r, []).append(inst.index)
        if inst.guard:
            read.append(inst.guard[0])
        for r in read:
            uses[r] = uses.get(r, 0) + 1
    return defs, uses


def _contraction(inst, d):
    """(mul, k) when source ``k`` of this add/sub is the only use of a ``mul`` ptxas fuses into it.

    PTX ISA (mul, add): "mul/add ... without rounding modifiers ... may be optimized aggressively
    by the code generator, e.g. into fma". ptxas does it: a mul.f32 (no .rn/.rz/.rm/.rp) whose
    result is read only by an add/sub without a rounding modifier in the same basic block becomes
    one FFMA there (so x*y - x*z on an H100 is fma(-x, z, x*y) when x*y is used again elsewhere).
    When both sources qualify, the first one is fused."""
    if inst.type not in _FUSIBLE or _rnd(inst) or inst.guard or set(inst.mods) - {inst.type, "ftz", "sat"}:
        return None
    func = d.func
    if not hasattr(d, "_def_use"):
        d._def_use = _def_use(func)
    defs, uses = d._def_use
    j = inst.index
    for k in (1, 2):
        o = inst.operands[k]
        if o[0] != "reg" or o[2] or uses.get(o[1]) != 1 or len(defs.get(o[1], ())) != 1:
            continue
        i = defs[o[1]][0]
        mul = func.insts[i]
        if (mul.opcode != "mul" or i >= j or mul.guard or mul.type != inst.type
                or set(mul.mods) - {mul.type, "ftz"} or ("ftz" in mul.mods) != ("ftz" in inst.mods)):
            continue
        if any(i < at <= j for at in func.labels.values()):
            continue                     # another basic block
        srcs = {r for x in mul.operands[1:] for r in _regs(x)}
        between = func.insts[i + 1:j]
        if any(b.opcode in ("bra", "brx", "call", "ret", "exit") for b in between):
            continue
        if any(i < at < j for r in srcs for at in defs.get(r, ())):
            continue                     # a source changed before the add
        return mul, k
    return None


def _contracted(inst, d):
    """The add/sub as the fma ptxas makes of it (see _contraction), or None."""
    hit = _contraction(inst, d)
    if hit is None:
        return None
    mul, k = hit
    t = inst.type
    ra, rb = (reader(o, t, d.func, d) for o in mul.operands[1:3])
    rc = reader(inst.operands[3 - k], t, d.func, d)
    w = writer(inst.operands[0], t, d.func)
    if t in ("f32", "f64"):
        dt = dtype(t)
        fused = _arith(inst, lambda a, b, c: alu.fma(a, b, c, dt), op="fma")
    else:
        fused = _arith(inst, lambda a, b, c: a * b + c, op="fma")
    # the negation is an operand modifier of the FMA, which passes a NaN unchanged: a float64 NaN keeps
    # its sign (x*y - NaN on an H100 is the NaN, as for neg.f64; float32 NaNs come out canonical anyway)
    neg = {"f16x2": lambda x: x ^ np.uint32(0x80008000), "bf16x2": lambda x: x ^ np.uint32(0x80008000),
           "bf16": lambda x: np.asarray(x, np.uint16) ^ np.uint16(0x8000),
           "f64": lambda x: np.where(np.isnan(x), x, np.negative(x))}.get(t, np.negative)
    negate_c = inst.opcode == "sub" and k == 1          # x*y - c
    negate_a = inst.opcode == "sub" and k == 2          # c - x*y

    def run(ex):
        sel = ex.ridx
        a, b, c = ra(ex, sel), rb(ex, sel), rc(ex, sel)
        w(ex, sel, fused(neg(a) if negate_a else a, b, neg(c) if negate_c else c))
    return run
