"""The rest of what the sm_90 profile's PTX has and the other modules lack.

* **Kernel parameters through a pointer** (``ld.param.u32 %r, [%rd]``): a ``__grid_constant__``
  parameter (up to 32,764 bytes since CUDA 12.1) is read through its address. A kernel parameter's
  address is ``PARAM_WINDOW + offset`` (``mov.b64 %rd, param``; ``cvta.param`` keeps it), in its own
  window of the generic space, so ``ld.param`` and generic loads both find the launch's bytes.
* ``elect.sync`` (one leader lane), ``bmsk``, ``fns``, ``szext``, the 16x2 integer forms of
  ``add``/``min``/``max`` (what DPX intrinsics such as ``__vimax3_s16x2_relu`` compile to), the
  scalar video instructions (``vadd``, ``vmax``, ``vshl``, ``vset``, ``vmad`` ...), ``cvt.pack``,
  ``cvt`` with ``.relu`` to halves, ``alloca``/``stacksave``/``stackrestore``.
* ``griddepcontrol.launch_dependents`` / ``.wait`` (programmatic dependent launch): the emulator runs
  launches one after another, so both only record when they ran (``LaunchStats.pdl``) for the
  timeline; ``setmaxnreg`` checks its operand; ``multimem`` stops with cudaErrorNotSupported.
* fp8/fp6/fp4 conversions live in ``minifloat.py``.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from . import minifloat  # noqa: F401  (registers the minifloat cvt forms)
from .decode import DECODERS, Unsupported, op, simple
from .memory import PARAM_WINDOW, WINDOW_SIZE
from .operands import reader, writer

MAX_PARAM_BYTES = 32764           # CUDA 12.1+ on Volta and later


# ------------------------------------------------------------------ kernel parameters by address

def _kparam_bytes(ex):
    buf = getattr(ex, "_kparam_buf", None)
    if buf is None:
        raw = bytes(ex.kparams)
        buf = ex._kparam_buf = np.frombuffer(raw + b"\0" * (-len(raw) % 16 + 16), np.uint8)
    return buf


def resolve_param(ex, inst, addrs, sel, size, kind):
    """memops.resolve's hook for the param window: the launch's parameter bytes, read-only."""
    n = len(ex.kparams)
    a = np.asarray(addrs, np.uint64)
    if a.ndim == 0:
        a = np.full(sel.size, a, np.uint64)
    if kind != "ld":
        ex.fault(inst, "param", kind, sel, a + np.uint64(PARAM_WINDOW), size,
                 "is a kernel parameter, which is read-only (copy it to a local variable to change it)")
    bad = a + np.uint64(size) > np.uint64(n)
    if bad.any():
        ex.fault(inst, "param", kind, sel[bad], a[bad] + np.uint64(PARAM_WINDOW), size,
                 f"is past the end of the kernel's {n}-byte parameters")
    if size > 1 and ((a & np.uint64(size - 1)) != 0).any():
        mis = (a & np.uint64(size - 1)) != 0
        ex.fault(inst, "param", kind, sel[mis], a[mis] + np.uint64(PARAM_WINDOW), size,
                 f"is not aligned to {size} bytes", code="cudaErrorMisalignedAddress")
    return [("param", _kparam_bytes(ex), a, slice(None))]


def ld_param_indirect(inst, d, ws, dt, src):
    """ld.param [%rd+off]: a kernel parameter read through its address (memops._ld_param's hook)."""
    from .memops import gather
    from .operands import address_reader
    if not d.func.is_entry:
        raise Unsupported("ld.param through a register in a device function")
    ar = address_reader(src, d.func, d)

    def run(ex):
        sel = ex.idx
        addrs = np.asarray(ar(ex, sel), np.uint64)
        if addrs.ndim == 0:
            addrs = np.full(sel.size, addrs, np.uint64)
        inside = (addrs >= np.uint64(PARAM_WINDOW)) & (addrs < np.uint64(PARAM_WINDOW + WINDOW_SIZE))
        if not inside.all():
            ex.fault(inst, "param", "ld", sel[~inside], addrs[~inside], dt.itemsize * len(ws),
                     "is not the address of a kernel parameter")
        rel = addrs - np.uint64(PARAM_WINDOW)
        for _, buf, off, _ in resolve_param(ex, inst, rel, sel, dt.itemsize * len(ws), "ld"):
            for k, w in enumerate(ws):
                if w is not None:
                    w(ex, sel, gather(buf, off + np.uint64(k * dt.itemsize), dt))
    return run


# ------------------------------------------------------------------ elect.sync

@op("elect")
def _elect(inst, d):
    """elect.sync d|p, membermask: the lowest active lane of the mask is the leader; every lane
    gets its lane id in d, and p is true on the leader only (cooperative_groups::invoke_one)."""
    from .warp import _warp_bits
    ops = inst.operands
    dst = ops[0]
    wd, wp = (writer(dst[1], "b32", d.func), writer(dst[2], "pred", d.func)) if dst[0] == "pair" \
        else (writer(dst, "b32", d.func), None)
    rm = reader(ops[1], "b32", d.func, d)

    def run(ex):
        sel = ex.idx
        member = np.broadcast_to(np.asarray(rm(ex, sel)).astype(np.uint32), sel.shape)
        act = _warp_bits(ex.active_full())[sel >> 5] & member
        low = act & (~act + np.uint32(1))                        # lowest set bit
        leader = np.where(act != 0, np.log2(np.maximum(low, 1)).astype(np.uint32), np.uint32(0))
        wd(ex, sel, leader)
        if wp is not None:
            wp(ex, sel, (act != 0) & ((sel & 31).astype(np.uint32) == leader))
    return run


# ------------------------------------------------------------------ integer odds and ends

@op("bmsk")
def _bmsk(inst, d):
    """bmsk.clamp/.wrap.b32 d, a, b: b ones starting at bit a (PTX ISA pseudo-code, to the letter)."""
    clamp = "clamp" in inst.mods
    full = np.int64(0xFFFFFFFF)

    def f(a, b):
        a = np.asarray(a).astype(np.int64) & full
        b = np.asarray(b).astype(np.int64) & full
        a1, b1 = a & 31, b & 31
        mask0 = (full << a1) & full
        s = a1 + b1
        mask1 = np.where(s >= 32, 0, (full << np.minimum(s, 31)) & full)
        over = s >= 32
        if clamp:
            mask0 = np.where(a >= 32, 0, mask0)
            over = over | (a >= 32) | (b >= 32)
        mask1 = np.where(over, 0, np.where(b1 == 0, full, mask1))
        return (mask0 & ~mask1 & full).astype(np.uint32)
    return simple(inst, d, f, src_types=("u32", "u32"))


@op("fns")
def _fns(inst, d):
    """fns.b32 d, mask, base, offset: the position of the |offset|-th set bit of mask from bit base
    on (upward for offset > 0, downward for offset < 0; offset 0 tests bit base); 0xffffffff when
    there is none."""
    def f(mask, base, offset):
        m, b, o = np.broadcast_arrays(np.asarray(mask).astype(np.uint32).astype(np.int64),
                                      np.asarray(base).astype(np.uint32).astype(np.int64),
                                      np.asarray(offset).astype(np.int32).astype(np.int64))
        out = np.full(m.shape, 0xFFFFFFFF, np.int64)
        zero = o == 0
        out = np.where(zero & (b < 32) & (((m >> np.minimum(b, 31)) & 1) == 1), b, out)
        found = zero.copy()
        inc = np.where(o > 0, 1, -1)
        need = np.abs(o)
        pos = b.copy()
        for _ in range(33):
            inside = (pos >= 0) & (pos < 32) & ~found
            bit = inside & (((m >> np.clip(pos, 0, 31)) & 1) == 1)
            need = need - bit
            hit = bit & (need == 0)
            out = np.where(hit, pos, out)
            found = found | hit
            pos = pos + inc
        return out.astype(np.uint32)
    return simple(inst, d, f, src_types=("b32", "u32", "s32"), dst_t="b32")


@op("szext")
def _szext(inst, d):
    """szext.mode.type d, a, b: sign- (s32) or zero- (u32) extend a from its low b bits (PTX ISA
    pseudo-code, to the letter)."""
    signed = inst.type == "s32"
    clamp = "clamp" in inst.mods
    full = np.int64(0xFFFFFFFF)

    def f(a, b):
        a = np.asarray(a).astype(np.uint32).astype(np.int64)
        b = np.asarray(b).astype(np.uint32).astype(np.int64)
        b1 = b & 31
        too_large = (b >= 32) & clamp
        mask = np.where(too_large, 0, (full << b1) & full)
        sign_pos = (b1 - 1) & 31
        sign = ((a >> sign_pos) & 1) == 1
        if not signed:
            sign = np.zeros(np.shape(sign), bool)
        sign = sign & (b1 != 0) & ~too_large
        out = (a & ~mask & full) | np.where(sign, mask, 0)
        return (out & full).astype(np.uint32).view(np.int32 if signed else np.uint32)
    return simple(inst, d, f, src_types=(inst.type, "u32"))


# ------------------------------------------------------------------ 16x2 integer SIMD (sm_90)

_X2 = ("u16x2", "s16x2")


def _halves(v, signed):
    u = np.asarray(v).astype(np.uint32)
    lo, hi = (u & np.uint32(0xFFFF)).astype(np.int64), (u >> np.uint32(16)).astype(np.int64)
    if signed:
        lo, hi = lo - ((lo >> 15) << 16), hi - ((hi >> 15) << 16)
    return lo, hi


def _pack(lo, hi):
    return ((np.asarray(lo) & 0xFFFF) | ((np.asarray(hi) & 0xFFFF) << 16)).astype(np.uint32)


def _x2_decoder(inst, d, fn):
    t = next(m for m in inst.mods if m in _X2)
    signed = t == "s16x2"
    relu = "relu" in inst.mods
    w = writer(inst.operands[0], "b32", d.func)
    rs = [reader(o, "b32", d.func, d) for o in inst.operands[1:]]

    def run(ex):
        sel = ex.idx
        parts = [_halves(r(ex, sel), signed) for r in rs]
        lo = fn(*[p[0] for p in parts])
        hi = fn(*[p[1] for p in parts])
        if relu:
            lo, hi = np.maximum(lo, 0), np.maximum(hi, 0)
        w(ex, sel, np.broadcast_to(_pack(lo, hi), sel.shape))
    return run


def _wrap_x2(name, fn2, fn3=None):
    base = DECODERS[name]

    def dec(inst, d):
        if any(m in _X2 for m in inst.mods):
            return _x2_decoder(inst, d, fn3 if fn3 is not None and len(inst.operands) == 4 else fn2)
        return base(inst, d)
    DECODERS[name] = dec


_wrap_x2("add", lambda a, b: a + b)
_wrap_x2("min", np.minimum, lambda a, b, c: np.minimum(np.minimum(a, b), c))
_wrap_x2("max", np.maximum, lambda a, b, c: np.maximum(np.maximum(a, b), c))


def _wrap_relu_minmax():
    """min/max.relu.s32 and three-input min/max (sm_90) on the 32-bit types."""
    for name, uf in (("min", np.minimum), ("max", np.maximum)):
        base = DECODERS[name]

        def dec(inst, d, base=base, uf=uf):
            t = inst.type
            if t in ("s32", "u32") and "relu" in inst.mods and len(inst.operands) == 4:
                return simple(inst, d, lambda a, b, c: np.maximum(uf(uf(a, b), c), 0).astype(a.dtype))
            return base(inst, d)
        DECODERS[name] = dec


_wrap_relu_minmax()


# ------------------------------------------------------------------ cvt.pack and cvt .relu to halves

def _wrap_cvt_more():
    base = DECODERS["cvt"]

    def dec(inst, d):
        if "pack" in inst.mods:
            return _cvt_pack(inst, d)
        if "relu" in inst.mods and any(m in ("f16", "bf16", "f16x2", "bf16x2") for m in inst.types[:1]):
            return _cvt_relu(inst, d, base)
        return base(inst, d)
    DECODERS["cvt"] = dec


def _cvt_pack(inst, d):
    """cvt.pack.sat.convertType.abType.cType d, a, b, c: a and b saturated to the narrow type,
    placed in d's low half (b lowest), above c shifted left by two fields; 16-bit types fill d, with
    no c (PTX ISA cvt.pack)."""
    types = inst.types
    ct, abt = types[0], types[1]
    bits = {"u2": 2, "s2": 2, "u4": 4, "s4": 4, "u8": 8, "s8": 8, "u16": 16, "s16": 16}.get(ct)
    if bits is None:
        raise Unsupported(f"cvt.pack.{ct}")
    lo, hi = ((-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ct.startswith("s") else (0, (1 << bits) - 1))
    w = writer(inst.operands[0], "b32", d.func)
    ra, rb = (reader(o, abt, d.func, d) for o in inst.operands[1:3])
    rc = reader(inst.operands[3], "b32", d.func, d) if len(inst.operands) > 3 else None

    def run(ex):
        sel = ex.idx
        a = np.clip(np.asarray(ra(ex, sel)).astype(np.int64), lo, hi) & ((1 << bits) - 1)
        b = np.clip(np.asarray(rb(ex, sel)).astype(np.int64), lo, hi) & ((1 << bits) - 1)
        c = np.asarray(rc(ex, sel)).astype(np.int64) if rc is not None else np.int64(0)
        out = ((c << (2 * bits)) | (a << bits) | b) & 0xFFFFFFFF
        w(ex, sel, np.broadcast_to(out.astype(np.uint32), sel.shape))
    return run


def _cvt_relu(inst, d, base):
    """cvt.rn.relu.{f16,bf16,f16x2,bf16x2}.f32: convert, then negative results become +0 and NaN
    the canonical NaN (0x7fff)."""
    return _relu_halves(inst, d, base, inst.types[0])


def _relu_halves(inst, d, base, t):
    """Run ``inst`` without ``.relu``, then clamp each 16-bit half of the result: negative -> +0,
    NaN -> 0x7fff (cvt.relu to halves, fma.relu on f16/bf16 and their x2 forms)."""
    plain = base(replace(inst, mods=tuple(m for m in inst.mods if m != "relu")), d)
    dst = inst.operands[0]
    halves = 2 if t.endswith("x2") else 1
    is_bf = t.startswith("bf")
    name = dst[1]

    def run(ex):
        plain(ex)
        sel = ex.idx
        regs = ex.fr.regs[name]
        v = regs[sel].astype(np.uint32)
        out = np.zeros_like(v)
        for k in range(halves):
            h = (v >> np.uint32(16 * k)) & np.uint32(0xFFFF)
            exp, man = (0x7F80, 0x007F) if is_bf else (0x7C00, 0x03FF)
            nan = ((h & np.uint32(exp)) == exp) & ((h & np.uint32(man)) != 0)
            neg = (h & np.uint32(0x8000)) != 0
            h = np.where(nan, np.uint32(0x7FFF), np.where(neg, np.uint32(0), h))
            out |= h << np.uint32(16 * k)
        regs[sel] = out.astype(regs.dtype)
    return run


_wrap_cvt_more()


def _wrap_fma_relu():
    """fma.rn.relu.{f16,f16x2,bf16,bf16x2} (sm_80): the fma, then .relu as cvt.relu does it. Found by
    the fuzz run of 2026-11-26: ``__hfma2_relu`` returned negative halves."""
    base = DECODERS["fma"]

    def dec(inst, d):
        if "relu" in inst.mods and inst.type in ("f16", "bf16", "f16x2", "bf16x2"):
            return _relu_halves(inst, d, base, inst.type)
        return base(inst, d)
    DECODERS["fma"] = dec


_wrap_fma_relu()


# ------------------------------------------------------------------ scalar video instructions

_SEL = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def _video_operand(o, d, signed):
    """A video operand with an optional byte/half selector (``%r2.b1``): reader of its sign- or
    zero-extended value."""
    sel = None
    if o[0] == "reg" and "." in o[1]:
        name, part = o[1].rsplit(".", 1)
        if part in _SEL:
            o, sel = ("reg", name, o[2]), _SEL[part]
    r = reader(o, "u32", d.func, d)

    def read(ex, s):
        v = np.asarray(r(ex, s)).astype(np.int64) & 0xFFFFFFFF
        if sel is not None:
            v = (v >> sel[0]) & ((1 << sel[1]) - 1)
            if signed:
                v = v - ((v >> (sel[1] - 1)) << sel[1])
        elif signed:
            v = v - ((v >> 31) << 32)
        return v
    return read


@op("vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vset")
def _video_scalar(inst, d):
    """PTX ISA 9.7.16.1 scalar video instructions: 32-bit operation on selected (and extended)
    bytes/halves, optional saturation, then an optional secondary op (.add/.min/.max) with c or a
    merge of the result into c's selected part (d.b0 ...)."""
    name = inst.opcode
    types = [m for m in inst.mods if m in ("u32", "s32")]
    if name == "vset":               # vset.atype.btype: no destination type (the result is 0 or 1)
        dt_, at, bt = "u32", types[0], types[1]
    else:
        dt_, at = types[0], types[1]
        bt = types[2] if len(types) > 2 else "u32"
    sat = "sat" in inst.mods
    op2 = next((m for m in inst.mods if m in ("add", "min", "max")), None)
    cmp = next((m for m in inst.mods if m in ("eq", "ne", "lt", "le", "gt", "ge")), None)
    clamp = "clamp" in inst.mods
    ops = inst.operands
    dst = ops[0]
    dsel = None
    if dst[0] == "reg" and "." in dst[1] and dst[1].rsplit(".", 1)[1] in _SEL:
        n, part = dst[1].rsplit(".", 1)
        dst, dsel = ("reg", n, False), _SEL[part]
    w = writer(dst, "u32", d.func)
    ra = _video_operand(ops[1], d, at == "s32")
    rb = _video_operand(ops[2], d, bt == "s32" and name not in ("vshl", "vshr"))
    rc = reader(ops[3], "u32", d.func, d) if len(ops) > 3 else None
    from . import alu

    def run(ex):
        sel = ex.idx
        a, b = ra(ex, sel), rb(ex, sel)
        if name == "vadd":
            t = a + b
        elif name == "vsub":
            t = a - b
        elif name == "vabsdiff":
            t = np.abs(a - b)
        elif name == "vmin":
            t = np.minimum(a, b)
        elif name == "vmax":
            t = np.maximum(a, b)
        elif name in ("vshl", "vshr"):
            sh = np.minimum(b, 32) if clamp else b & 31
            if name == "vshl":
                t = np.where(sh >= 32, 0, (a << np.minimum(sh, 31)) & 0xFFFFFFFF)
                if at == "s32":
                    t = t - ((t >> 31) << 32)
            else:
                t = np.where(sh >= 32, np.where(a < 0, -1, 0), a >> np.minimum(sh, 31))
        else:
            t = alu.compare(a, b, cmp).astype(np.int64)
        if dsel is not None:
            width = dsel[1]
            lo_, hi_ = ((-(1 << (width - 1)), (1 << (width - 1)) - 1) if dt_ == "s32" else (0, (1 << width) - 1))
        else:
            lo_, hi_ = ((-(1 << 31), (1 << 31) - 1) if dt_ == "s32" else (0, (1 << 32) - 1))
        if sat and name != "vset":
            t = np.clip(t, lo_, hi_)
        c = np.asarray(rc(ex, sel)).astype(np.int64) & 0xFFFFFFFF if rc is not None else None
        if dsel is not None:
            sh, width = dsel
            m = ((1 << width) - 1) << sh
            out = (c & ~m) | ((t << sh) & m)
        elif op2 == "add":
            out = t + (c - ((c >> 31) << 32) if dt_ == "s32" else c)
        elif op2 in ("min", "max"):
            cc = c - ((c >> 31) << 32) if dt_ == "s32" else c
            out = np.minimum(t, cc) if op2 == "min" else np.maximum(t, cc)
        else:
            out = t
        w(ex, sel, np.broadcast_to((np.asarray(out) & 0xFFFFFFFF).astype(np.uint32), sel.shape))
    return run


def _as_int32(v):
    """A video operand's 32 bits read as a signed integer (see _vmad)."""
    v = np.asarray(v, np.int64)
    return np.where(v >= 1 << 31, v - (1 << 32), v)


@op("vmad")
def _vmad(inst, d):
    """vmad.dtype.atype.btype{.sat}{.shr7,.shr15} d, {-}a{.sel}, {-}b{.sel}, {-}c: (a*b + c) with
    optional negations (.po: plus one), shifts and saturation.

    As an H200 computes it, not as the PTX ISA words it: sm_90 has no video unit, and ptxas (CUDA 13.0)
    lowers vmad to a signed ``IMAD.WIDE`` of the selected operands plus c sign-extended, so a whole
    32-bit operand with its top bit set counts as negative even when its type is .u32 (the ISA: u32 *
    u32 + u32 is unsigned throughout). Byte and half selections are extended by their type first, so
    they are unchanged. Seeds 156 and 542 of the version-3 fuzz run give the GPU's bits only so."""
    types = [m for m in inst.mods if m in ("u32", "s32")]
    dt_, at, bt = types[0], types[1], types[2]
    sat = "sat" in inst.mods
    shift = 7 if "shr7" in inst.mods else 15 if "shr15" in inst.mods else 0
    po = "po" in inst.mods
    ops = inst.operands
    w = writer(ops[0], "u32", d.func)
    ra = _video_operand(ops[1], d, at == "s32")
    rb = _video_operand(ops[2], d, bt == "s32")
    rc = _video_operand(ops[3], d, at == "s32" or bt == "s32")
    na, nb, nc = (o[0] == "reg" and o[2] for o in ops[1:4])

    def run(ex):
        sel = ex.idx
        a, b, c = (_as_int32(r(ex, sel)) for r in (ra, rb, rc))
        p = a * b
        if po:
            t = p + c + 1
        else:
            if na != nb:
                p = -p
            t = p + (-c if nc else c)
        t = t >> shift
        if sat:
            t = np.clip(t, -(1 << 31), (1 << 31) - 1) if dt_ == "s32" else np.clip(t, 0, (1 << 32) - 1)
        w(ex, sel, np.broadcast_to((t & 0xFFFFFFFF).astype(np.uint32), sel.shape))
    return run


# ------------------------------------------------------------------ alloca / stacksave / stackrestore

def _stack_top(ex):
    top = getattr(ex, "_alloca_top", None)
    if top is None:
        top = ex._alloca_top = np.full(ex.n, ex.local_stride, np.uint64)
    return top


@op("alloca")
def _alloca(inst, d):
    """alloca.type ptr, size{, align}: dynamic stack memory from the top of the thread's local
    memory (the frames grow from the bottom; running into them is a stack overflow). Like the GPU's,
    the pointer is a .local address: ld.local/st.local use it, C++ converts it with cvta.local."""
    w = writer(inst.operands[0], inst.type, d.func)
    rs = reader(inst.operands[1], inst.type, d.func, d)
    align = int(inst.operands[2][1]) if len(inst.operands) > 2 else 8

    def run(ex):
        sel = ex.idx
        top = _stack_top(ex)
        size = np.broadcast_to(np.asarray(rs(ex, sel)).astype(np.uint64), sel.shape)
        new = (top[sel] - size) // np.uint64(align) * np.uint64(align)
        floor = np.uint64(ex.fr.local_base + ex.fr.df.local_size)
        bad = (size > top[sel]) | (new < floor)
        if bad.any():
            lane = int(sel[np.flatnonzero(bad)[0]])
            ex.stop(lane, "stack", "cudaErrorLaunchOutOfResources", inst, lambda b, t: (
                f"alloca at line {inst.line} in kernel {ex.kernel_name} (thread {t} of block {b}) asked for "
                f"{int(size[np.flatnonzero(bad)[0]])} bytes, more than the thread's {ex.local_stride}-byte stack has "
                "left. Allocate less, or use malloc."))
        top[sel] = new
        w(ex, sel, new)
    return run


@op("stacksave")
def _stacksave(inst, d):
    w = writer(inst.operands[0], inst.type, d.func)

    def run(ex):
        sel = ex.idx
        w(ex, sel, _stack_top(ex)[sel])
    return run


@op("stackrestore")
def _stackrestore(inst, d):
    r = reader(inst.operands[0], inst.type, d.func, d)

    def run(ex):
        sel = ex.idx
        _stack_top(ex)[sel] = np.asarray(r(ex, sel)).astype(np.uint64)
    return run


# ------------------------------------------------------------------ griddepcontrol, setmaxnreg, multimem

@op("griddepcontrol")
def _griddepcontrol(inst, d):
    """Programmatic dependent launch (sm_90): ``launch_dependents`` lets the next kernel of the
    stream start early, ``wait`` waits for the previous grid's memory. Launches here run one after
    another, so both are satisfied at once; the engine notes when each first ran (as a fraction of
    the grid's instructions so far) for the timeline's PDL overlap, and when the last block
    triggered (``last_launch_dependents``: dependents may start once every block has)."""
    what = "launch_dependents" if "launch_dependents" in inst.mods else "wait"

    def run(ex):
        pdl = ex.stats.pdl
        seen = dict(instructions=ex.stats.instructions, batch=ex.batch.first_block, line=inst.line)
        if what not in pdl:
            pdl[what] = seen
        if what == "launch_dependents":
            pdl["last_launch_dependents"] = seen
    return run


def pdl_trigger_fraction(stats):
    """For the timeline: how far through the grid (share of its instructions) the last block ran
    ``griddepcontrol.launch_dependents``, so a kernel launched after it with programmatic stream
    serialization may start there; None when the grid never triggered (its dependents then start
    when it ends, as on the GPU)."""
    hit = stats.pdl.get("last_launch_dependents")
    if hit is None or not stats.instructions:
        return None
    return min(1.0, hit["instructions"] / stats.instructions)


def pdl_wait_fraction(stats):
    """For the timeline: how far through the grid its first ``griddepcontrol.wait`` ran (the part of
    a dependent kernel that may overlap the kernel before it); None when it never waits."""
    hit = stats.pdl.get("wait")
    if hit is None or not stats.instructions:
        return None
    return min(1.0, hit["instructions"] / stats.instructions)


@op("setmaxnreg")
def _setmaxnreg(inst, d):
    """setmaxnreg.{inc,dec}.sync.aligned.u32 n: registers are not a resource in the emulator; the
    operand must still be a multiple of 8 in 24..256 (PTX ISA)."""
    n = inst.operands[0]
    if n[0] != "imm" or not (24 <= n[1] <= 256 and n[1] % 8 == 0):
        raise Unsupported(f"setmaxnreg with {n[1] if n[0] == 'imm' else 'a register'} (it takes a constant "
                          "multiple of 8 from 24 to 256)")
    return lambda ex: None


@op("multimem")
def _multimem(inst, d):
    raise Unsupported("multimem (loads, stores and reductions on NVLink multicast memory shared by several GPUs, "
                      "which the emulator's single device does not have)")


def _wrap_async_forms():
    """st.async / red.async (sm_90): a store or reduction into another block's shared memory that
    completes an mbarrier transaction. Until the mbarrier machinery has them, say so by name."""
    for name in ("st", "red"):
        base = DECODERS[name]

        def dec(inst, d, base=base, name=name):
            if "async" in inst.mods:
                raise Unsupported(f"{name}.async (an asynchronous {'store' if name == 'st' else 'reduction'} into "
                                  "another block's shared memory that completes an mbarrier)")
            return base(inst, d)
        DECODERS[name] = dec


_wrap_async_forms()


def _directive(inst, d):
    """Label tables (`.branchtargets`, `.calltargets`) are data: they run as nothing."""
    if any(m in ("branchtargets", "calltargets", "callprototype") for m in inst.mods):
        return lambda ex: None
    raise Unsupported(f"the directive .{'.'.join(inst.mods)}")


DECODERS.setdefault("", _directive)


@op("brx")
def _brx(inst, d):
    raise Unsupported("brx.idx (an indexed branch through a .branchtargets table; NVRTC does not emit it, "
                      "a switch statement compiles to ordinary branches)")
