"""Texture and surface accesses in native code: tex, tld4, suld.b, sust.b, txq and suq for the compiled tier
(compiled.py's groups, regions).

Kernels that read their data through textures (tex1Dfetch, tex2D, tex3D; CUDA 11's texture references
read through the same objects) ran every lookup in the interpreter, and a lookup inside a loop kept the
whole loop there: a tex2D matrix product took three times as long as its shared-memory version. This is
texture.py's arithmetic (measured on an H100/H200) for one lane at a time, for the lookups course programs
make: integer coordinates (tex1Dfetch), point and linear filtering in 1D, 2D and 3D and of layered
textures, under every address mode, with normalized coordinates and normalized reads of 8- and 16-bit
texels; and raw surface loads and stores.

What a handle names is a row of a table the runner fills per batch (``table``, through the ctx slots
``textures``/``ntextures``). A texture native code does not take (mipmaps, cubemaps, sRGB, half texels,
memory that is no longer a live allocation), handle 0, a texel past the allocation of the memory bound
to a texture, a misaligned or (.trap) out-of-bounds surface access all *bail out* (llvmgen): the
interpreter runs the instruction, with its warning or memcheck's report where there is one.
"""
from __future__ import annotations

import itertools

import numpy as np
from llvmlite import ir

from . import texture as tx
from .llvmgen import F32, F64, I1, I8, I32, I64, Skip, gen
from .memory import GLOBAL_BASE

FIELDS = ("kind", "base", "width", "height", "depth", "pitch", "slice_pitch", "cb", "channels", "texel",
          "signed", "flags", "modes", "limit", "top", "b0", "b1", "b2", "b3", "r0", "r1", "r2", "r3",
          "live", "qw", "qh", "qd")
AT = {name: k for k, name in enumerate(FIELDS)}
STRIDE = len(FIELDS)
NATIVE = 1                                    # kind: a texture native code reads
SURFACE = 2                                   # kind: a surface object
NORMALIZED_COORDS, LINEAR, NORMALIZED_READ, LAYERED = 1, 2, 4, 8
MODES = {"clamp": 0, "border": 1, "wrap": 2, "mirror": 3}
TEXTURE_LIVE, SURFACE_LIVE = 1, 2             # live: what the handle names (txq and suq answer from q*)
QUERIES = ("width", "height", "depth")
MOST_HANDLES = 1 << 16                        # rows of the table; a larger handle bails out
NO_LIMIT = 1 << 62


# ------------------------------------------------------------------ the table (host side)
def _row(mem, tex) -> list | None:
    """The table row of a texture object, or None where the interpreter must read it."""
    if len(tex.levels) != 1:
        return None
    img, smp = tex.levels[0], tex.sampler
    fmt = img.fmt
    if (img.cubemap or smp.srgb or fmt.channel_bytes not in (1, 2, 4)
            or fmt.kind == "float" and fmt.channel_bytes != 4 or any(b not in (0, fmt.bits[0]) for b in fmt.bits)
            or any(m not in MODES for m in smp.address)):
        return None
    linear = smp.filter == "linear"
    normalized_read = smp.read == "normalized" and fmt.kind != "float" and fmt.channel_bytes in (1, 2)
    if linear and fmt.kind != "float" and not normalized_read:     # (the interpreter's Unsupported)
        return None
    if img.kind != "array":              # texture._reading's test: memcheck's report is the interpreter's
        a = mem.find(img.address)
        if (a is None or a.freed or not a.address <= img.address
                or a.address + a.size < img.address + (img.readable or img.nbytes)):
            return None
    flags = (NORMALIZED_COORDS * smp.normalized | LINEAR * linear | NORMALIZED_READ * normalized_read
             | LAYERED * img.layered)
    base = img.address - GLOBAL_BASE
    limit = base + img.readable - fmt.texel_bytes if img.readable else NO_LIMIT
    modes = sum(MODES[m] << (4 * d) for d, m in enumerate(smp.address))
    colour = tx.border_colour(smp, fmt)
    top = int(np.iinfo(fmt.channel_dtype).max) if normalized_read else 1
    # the border texel as the fixed-point filter takes it back (texture._fixed_point_sum, _snorm8_sum)
    raw = np.rint(colour.view(np.float32).astype(np.float64) * top).astype(np.int64) if normalized_read else [0] * 4
    return [NATIVE, base, img.width, img.height, img.depth, img.pitch, img.slice_pitch, fmt.channel_bytes,
            fmt.channels, fmt.texel_bytes, int(fmt.kind == "signed"), flags, modes, limit, top,
            *[int(w) for w in colour], *[int(r) for r in raw]]


def _surface_row(surf) -> list:
    img = surf.image
    row = [0] * STRIDE
    for name, v in (("kind", SURFACE), ("base", img.address - GLOBAL_BASE), ("width", img.width),
                    ("height", img.rows), ("depth", img.slices), ("pitch", img.pitch),
                    ("slice_pitch", img.slice_pitch), ("texel", img.fmt.texel_bytes)):
        row[AT[name]] = v
    return row


def table(mem):
    """The int64 table (a row of FIELDS per handle) of ``mem``'s texture objects, or None when it has
    none; made again when objects or allocations change (the bounds arrays are new after any)."""
    objs = tx._OBJECTS.get(mem)
    if objs is None or not (objs.textures or objs.surfaces):
        return None
    bounds = mem.bounds()
    key = (objs.next_handle, len(objs.textures), len(objs.surfaces))
    kept = objs.__dict__.get("_native_table")
    if kept is not None and kept[0] == key and kept[1] is bounds:
        return kept[2]
    rows = min(objs.next_handle, MOST_HANDLES)
    t = np.zeros((rows, STRIDE), np.int64)
    for h, tex in objs.textures.items():
        if h < rows:
            if (r := _row(mem, tex)) is not None:
                t[h, :len(r)] = r
            t[h, AT["live"]] = TEXTURE_LIVE
            t[h, AT["qw"]:AT["qd"] + 1] = [tx.texture_query(tex, q) for q in QUERIES]
    for h, surf in objs.surfaces.items():
        if h < rows:
            t[h] = _surface_row(surf)
            t[h, AT["live"]] = SURFACE_LIVE
            t[h, AT["qw"]:AT["qd"] + 1] = [tx.surface_query(surf, q) for q in QUERIES]
    objs._native_table = (key, bounds, t)
    return t


# ------------------------------------------------------------------ helpers in the module
def _get(module, name, fnty):
    try:
        return module.get_global(name), False
    except KeyError:
        fn = ir.Function(module, fnty, name)
        fn.linkage = "internal"
        return fn, True


def _float_intrinsic(module, name, ty):
    """One operand's float intrinsic, declared once (as llvmgen.intrinsic names them)."""
    full = f"{name}.{'f32' if ty == F32 else 'f64'}"
    try:
        return module.get_global(full)
    except KeyError:
        return ir.Function(module, ir.FunctionType(ty, [ty]), full)


def _field(b, row, name):
    """A field of a texture's row: the table never changes while native code runs, so the load is
    marked invariant and LLVM may hoist it out of the lane loop, past the kernel's stores."""
    load = b.load(b.gep(row, [ir.Constant(I32, AT[name])]))
    load.set_metadata("invariant.load", b.module.add_metadata([]))
    return load


def texel_function(module):
    """``texel(mem, row, off) -> <4 x i32>``: the result words of the texel at arena offset ``off``
    (texture._words of _as_float of _read_channels: floats and integers as stored, sign- or
    zero-extended; 8/16-bit ones read as normalized floats divided in float64, at least -1)."""
    fn, new = _get(module, "cudalab_texel", ir.FunctionType(ir.VectorType(I32, 4), [I8.as_pointer(), I64.as_pointer(),
                                                                                     I64, I1]))
    if not new:
        return fn
    fn.attributes.add("alwaysinline")
    mem, row, off, scaled = fn.args
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    cb, ch, signed = _field(b, row, "cb"), _field(b, row, "channels"), _field(b, row, "signed")
    norm = b.and_(scaled, b.icmp_unsigned("!=", b.and_(_field(b, row, "flags"), ir.Constant(I64, NORMALIZED_READ)),
                                          ir.Constant(I64, 0)))
    top = b.sitofp(_field(b, row, "top"), F64)
    is_signed = b.icmp_unsigned("!=", signed, ir.Constant(I64, 0))
    vec = ir.Constant(ir.VectorType(I32, 4), None)
    vec = b.insert_element(vec, ir.Constant(I32, 0), ir.Constant(I32, 0))
    for c in range(4):
        have = b.icmp_signed(">", ch, ir.Constant(I64, c))
        read, after = fn.append_basic_block(f"c{c}"), fn.append_basic_block(f"c{c}_done")
        start = b.block
        b.cbranch(have, read, after)
        b.position_at_end(read)
        p = b.gep(mem, [b.add(off, b.mul(cb, ir.Constant(I64, c)))])
        loads = []
        one, two, four, joined = (fn.append_basic_block(f"c{c}_{k}") for k in ("1", "2", "4", "j"))
        sw = b.switch(cb, four)
        sw.add_case(ir.Constant(I64, 1), one)
        sw.add_case(ir.Constant(I64, 2), two)
        for bb, ty in ((one, ir.IntType(8)), (two, ir.IntType(16)), (four, I32)):
            b.position_at_end(bb)
            v = b.load(b.bitcast(p, ty.as_pointer()), align=1)
            loads.append((b.select(is_signed, b.sext(v, I64), b.zext(v, I64)), bb))
            b.branch(joined)
        b.position_at_end(joined)
        ext = b.phi(I64)
        for v, bb in loads:
            ext.add_incoming(v, bb)
        plain = b.trunc(ext, I32)
        as_is = b.block
        scale, got = fn.append_basic_block(f"c{c}_norm"), fn.append_basic_block(f"c{c}_got")
        b.cbranch(norm, scale, got)
        b.position_at_end(scale)                     # (a division: only for normalized reads)
        f = b.fdiv(b.sitofp(ext, F64), top)
        f = b.select(b.fcmp_ordered("<", f, ir.Constant(F64, -1.0)), ir.Constant(F64, -1.0), f)
        scaled = b.bitcast(b.fptrunc(f, F32), I32)
        b.branch(got)
        b.position_at_end(got)
        word = b.phi(I32)
        word.add_incoming(plain, as_is)
        word.add_incoming(scaled, scale)
        b.branch(after)
        b.position_at_end(after)
        w = b.phi(I32)
        w.add_incoming(word, got)
        w.add_incoming(ir.Constant(I32, 0), start)
        vec = b.insert_element(vec, w, ir.Constant(I32, c))
    b.ret(vec)
    return fn


SLICES = ((0, 2, 4, 6), (1, 3, 5, 7))          # a 3D footprint's z slices, in np.ndindex order


def filter_function(module, taps=4):
    """``filter(v0.., w0..) -> i32``: texture.weighted_sum of four (or eight: 3D, in two z slices)
    float32 texels (bits) with their 1.8 weights, for one channel: each texel with a weight cut
    toward zero to 28 bits below the largest one's leading bit (of its slice: _slices_sum adds the
    slices), subnormals as signed zeros, the exact sum rounded once to float32 with ties away from
    zero (a subnormal result flushed), -0.0 only where every texel with a weight is -0.0,
    infinities and the canonical NaN as IEEE arithmetic gives them."""
    fn, new = _get(module, f"cudalab_tex_filter{taps}", ir.FunctionType(I32, [I32] * taps + [I64] * taps))
    if not new:
        return fn
    vs, ws = fn.args[:taps], fn.args[taps:]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    if taps == 4:
        _quick_filter(fn, b, vs, ws)
    c32 = lambda v: ir.Constant(I32, v)      # noqa: E731
    c64 = lambda v: ir.Constant(I64, v)      # noqa: E731
    false, true = ir.Constant(I1, 0), ir.Constant(I1, 1)
    groups = SLICES if taps == 8 else (tuple(range(taps)),)
    taps = []
    for v, w in zip(vs, ws):
        expo = b.and_(b.lshr(v, c32(23)), c32(255))
        mant = b.and_(v, c32(0x7FFFFF))
        sign = b.icmp_unsigned("!=", b.lshr(v, c32(31)), c32(0))
        live = b.icmp_signed(">", w, c64(0))
        finite = b.icmp_unsigned("!=", expo, c32(255))
        nz = b.and_(b.and_(live, finite), b.icmp_unsigned("!=", expo, c32(0)))
        e = b.sub(b.zext(expo, I64), c64(126))                   # frexp's exponent
        taps.append((v, w, expo, mant, sign, live, finite, nz, e))
    parts = []                     # per group: (sum of the cut texels times weights, its top, any texel)
    for grp in groups:
        top, any_nz = c64(-10000), false
        for k in grp:
            nz, e = taps[k][7], taps[k][8]
            top = b.select(b.and_(nz, b.icmp_signed(">", e, top)), e, top)
            any_nz = b.or_(any_nz, nz)
        part = c64(0)
        for k in grp:
            v, w, expo, mant, sign, live, finite, nz, e = taps[k]
            m = b.zext(b.or_(mant, c32(0x800000)), I64)
            s = b.sub(b.sub(top, e), c64(4))                           # >= -4: e <= top
            up = b.shl(m, b.select(b.icmp_signed("<", s, c64(0)), b.sub(c64(0), s), c64(0)))
            down = b.select(b.icmp_signed(">=", s, c64(64)), c64(0),
                            b.lshr(m, b.select(b.icmp_signed(">", s, c64(0)), s, c64(0))))
            mag = b.select(b.icmp_signed("<", s, c64(0)), up, down)
            q = b.select(nz, b.select(sign, b.sub(c64(0), mag), mag), c64(0))
            part = b.add(part, b.mul(q, w))
        parts.append((part, top, any_nz))
    if len(parts) == 1:
        total, top, any_nz = parts[0]
        base = b.sub(b.select(any_nz, top, c64(0)), c64(36))        # the sum is total * 2**base
    else:                          # texture._slices_sum: each slice floored to one bit below the larger one
        exps = [b.sub(top, c64(28)) for _, top, _ in parts]
        big = b.sub(b.select(b.icmp_signed(">", exps[0], exps[1]), exps[0], exps[1]), c64(1))
        total = c64(0)
        for (part, _, _), e in zip(parts, exps):
            sh = b.sub(big, e)
            sh = b.select(b.icmp_signed(">", sh, c64(63)), c64(63), sh)
            down = b.ashr(part, b.select(b.icmp_signed(">", sh, c64(0)), sh, c64(0)))
            up = b.shl(part, b.select(b.icmp_signed("<", sh, c64(0)), b.sub(c64(0), sh), c64(0)))
            total = b.add(total, b.select(b.icmp_signed(">=", sh, c64(0)), down, up))
        any_nz = b.or_(parts[0][2], parts[1][2])
        base = b.select(any_nz, b.sub(big, c64(8)), c64(0))
    negzero, pos, neg, nan, any_live = true, false, false, false, false
    for v, w, expo, mant, sign, live, finite, nz, e in taps:
        negzero = b.and_(negzero, b.or_(b.not_(live), b.and_(b.not_(nz), sign)))
        any_live = b.or_(any_live, live)
        odd = b.and_(live, b.not_(finite))
        inf = b.and_(odd, b.icmp_unsigned("==", mant, c32(0)))
        pos = b.or_(pos, b.and_(inf, b.not_(sign)))
        neg = b.or_(neg, b.and_(inf, sign))
        nan = b.or_(nan, b.and_(odd, b.icmp_unsigned("!=", mant, c32(0))))
    # texture._round_away(total, top - 28 - 8, 24)
    negative = b.icmp_signed("<", total, c64(0))
    mag = b.select(negative, b.sub(c64(0), total), total)
    try:
        ctlz = fn.module.get_global("llvm.ctlz.i64")
    except KeyError:
        ctlz = ir.Function(fn.module, ir.FunctionType(I64, [I64, I1]), "llvm.ctlz.i64")
    bits = b.sub(c64(64), b.call(ctlz, [mag, false]))
    shift = b.select(b.icmp_signed(">", bits, c64(24)), b.sub(bits, c64(24)), c64(0))
    kept = b.lshr(mag, shift)
    rem = b.and_(mag, b.sub(b.shl(c64(1), shift), c64(1)))
    half = b.shl(c64(1), b.select(b.icmp_signed(">", shift, c64(0)), b.sub(shift, c64(1)), c64(0)))
    kept = b.add(kept, b.zext(b.and_(b.icmp_signed(">", shift, c64(0)), b.icmp_unsigned(">=", rem, half)), I64))
    exp2 = b.add(shift, base)
    scale = b.bitcast(b.shl(b.add(exp2, c64(1023)), c64(52)), F64)
    r = b.fptrunc(b.fmul(b.uitofp(kept, F64), scale), F32)
    tiny = b.fcmp_ordered("<", b.call(_float_intrinsic(fn.module, "llvm.fabs", F32), [r]), ir.Constant(F32, 2.0 ** -126))
    r = b.select(b.or_(tiny, b.icmp_unsigned("==", mag, c64(0))), ir.Constant(F32, 0.0), r)
    out = b.bitcast(b.select(negative, b.fneg(r), r), I32)
    zero = b.icmp_unsigned("==", total, c64(0))
    out = b.select(b.and_(zero, b.and_(negzero, any_live)), c32(0x80000000), out)
    out = b.select(pos, c32(0x7F800000), b.select(neg, c32(0xFF800000), out))
    out = b.select(b.or_(nan, b.and_(pos, neg)), c32(0x7FFFFFFF), out)
    b.ret(out)
    return fn


def _quick_filter(fn, b, vs, ws):
    """filter_function's usual case in float64, where every texel is finite and the sum is not zero
    (an image's bilinear resize): each texel cut toward zero to 28 bits below the largest one's leading
    bit is trunc(v * 2^(28 - top)), exact in float64, and so is the weighted sum of four (below 2^38);
    rounding it to 24 bits with ties away from zero is adding half of the 29 dropped bits of its
    magnitude's float64 (a carry moves into the exponent, as it should) and clearing them. The result
    is then scaled, made float32 and flushed below the normals as in the general code, which the other
    cases (an infinity or NaN among the texels, a zero sum and its sign) still take. The general code
    took some 150 instructions a lookup in integers (shifts per texel, a count of leading zeros);
    NV12toBGRandResize's float resize is four such lookups a pixel. Leaves ``b`` in the general
    code's first block."""
    c32 = lambda v: ir.Constant(I32, v)      # noqa: E731
    c64 = lambda v: ir.Constant(I64, v)      # noqa: E731
    finite, top, vals = ir.Constant(I1, 1), c64(-10000), []
    for v, w in zip(vs, ws):
        expo = b.and_(b.lshr(v, c32(23)), c32(255))
        finite = b.and_(finite, b.icmp_unsigned("!=", expo, c32(255)))
        nz = b.and_(b.icmp_signed(">", w, c64(0)), b.icmp_unsigned("!=", expo, c32(0)))   # subnormals: zeros
        top = b.select(b.and_(nz, b.icmp_signed(">", b.zext(expo, I64), b.add(top, c64(126)))),
                       b.sub(b.zext(expo, I64), c64(126)), top)
        vals.append((b.select(nz, b.fpext(b.bitcast(v, F32), F64), ir.Constant(F64, 0.0)), w))
    up = b.bitcast(b.shl(b.add(b.sub(c64(28), top), c64(1023)), c64(52)), F64)   # 2^(28 - top)
    trunc = _float_intrinsic(fn.module, "llvm.trunc", F64)
    total = ir.Constant(F64, 0.0)
    for v, w in vals:
        total = b.fadd(total, b.fmul(b.call(trunc, [b.fmul(v, up)]), b.sitofp(w, F64)))
    quick = b.and_(b.and_(finite, b.icmp_signed(">", top, c64(-1000))),      # (a texel with a weight)
                   b.fcmp_ordered("one", total, ir.Constant(F64, 0.0)))
    fast, general = fn.append_basic_block("quick"), fn.append_basic_block("general")
    b.cbranch(quick, fast, general)
    b.position_at_end(fast)
    bits = b.bitcast(total, I64)
    mag = b.and_(bits, c64((1 << 63) - 1))
    rounded = b.and_(b.add(mag, c64(1 << 28)), c64(~((1 << 29) - 1)))
    down = b.bitcast(b.shl(b.add(b.sub(top, c64(36)), c64(1023)), c64(52)), F64)  # 2^(top - 36)
    r = b.fptrunc(b.fmul(b.bitcast(rounded, F64), down), F32)
    tiny = b.fcmp_ordered("<", r, ir.Constant(F32, 2.0 ** -126))
    r = b.select(tiny, ir.Constant(F32, 0.0), r)
    negative = b.icmp_signed("<", bits, c64(0))
    b.ret(b.bitcast(b.select(negative, b.fneg(r), r), I32))
    b.position_at_end(general)


def fixed_function(module, taps=4):
    """``fixed(t0..t3, w0..w3, channel bytes, signed) -> i32``: the filter of 8/16-bit texels read as
    normalized floats (t: the stored integers): texture._fixed_point_sum (unsigned 8 and 16 bits,
    signed 16: each as a 16-bit normalized integer, an 8-bit one times 257, the 1.8-weighted sum
    rounded to an integer, ties up, divided by 65535 or 32767 in float64, at least -1) and
    texture._snorm8_sum (signed 8 bits: S = sum(w t), Q = S + (S + 16 (S >> 12) + 64) >> 7, Q / 32767)."""
    fn, new = _get(module, f"cudalab_tex_fixed{taps}", ir.FunctionType(I32, [I32] * taps + [I64] * (taps + 2)))
    if not new:
        return fn
    ts, ws, (cb, signed) = fn.args[:taps], fn.args[taps:2 * taps], fn.args[2 * taps:]
    b = ir.IRBuilder(fn.append_basic_block("entry"))
    c64 = lambda v: ir.Constant(I64, v)      # noqa: E731
    is_signed = b.icmp_unsigned("!=", signed, c64(0))
    byte = b.icmp_unsigned("==", cb, c64(1))
    s = c64(0)
    for t, w in zip(ts, ws):
        v = b.select(is_signed, b.sext(t, I64), b.zext(t, I64))
        s = b.add(s, b.mul(v, w))
    unsigned_q = b.ashr(b.add(b.mul(s, b.select(byte, c64(257), c64(1))), c64(1 << (tx.FRACTION_BITS - 1))),
                        c64(tx.FRACTION_BITS))
    snorm8_q = b.add(s, b.ashr(b.add(b.add(s, b.shl(b.ashr(s, c64(12)), c64(4))), c64(64)), c64(7)))
    q = b.select(b.and_(is_signed, byte), snorm8_q, unsigned_q)
    top = b.select(is_signed, ir.Constant(F64, 32767.0), ir.Constant(F64, 65535.0))
    f = b.fdiv(b.sitofp(q, F64), top)
    f = b.select(b.fcmp_ordered("<", f, ir.Constant(F64, -1.0)), ir.Constant(F64, -1.0), f)
    b.ret(b.bitcast(b.fptrunc(f, F32), I32))
    return fn


# ------------------------------------------------------------------ tex
def _operands(inst):
    """(handle operand, coordinate operands) of ``[handle, {c0, ...}]``, as texture._address_operand."""
    mem = inst.operands[1]
    if mem[0] != "mem" or mem[1] is None or mem[1][0] != "vec" or len(mem[1][1]) != 2:
        raise Skip("tex operand")
    handle, coords = mem[1][1]
    if handle[0] != "reg":
        raise Skip("tex of a texture reference")
    return handle, (coords[1] if coords[0] == "vec" else (coords,))


def _fixed(g, x, n, normalized):
    """texture._texel_fixed: float32 -> int64 fixed point with 21 fractional bits."""
    b = g.b
    x = b.fpext(x, F64)
    fabs = _float_intrinsic(g.fn.module, "llvm.fabs", F64)
    x = b.select(b.fcmp_ordered(">=", b.call(fabs, [x]), ir.Constant(F64, 2.0 ** -126)), x, ir.Constant(F64, 0.0))
    lim = ir.Constant(F64, 2.0 ** 36)
    x = b.select(b.fcmp_ordered(">", x, lim), lim, b.select(b.fcmp_ordered("<", x, b.fneg(lim)), b.fneg(lim), x))
    floor = _float_intrinsic(g.fn.module, "llvm.floor", F64)
    t = b.fptosi(b.call(floor, [b.fmul(x, ir.Constant(F64, float(1 << tx.COORD_BITS)))]), I64)
    return b.select(normalized, b.mul(t, n), t)


def _clamp(b, v, lo, hi):
    v = b.select(b.icmp_signed("<", v, lo), lo, v)
    return b.select(b.icmp_signed(">", v, hi), hi, v)


def _address(g, i, n, mode, normalized):
    """texture._address: (texel index, outside for border) under the dimension's mode code. Wrap
    and mirror (with normalized coordinates) divide, so they get a branch of their own."""
    b = g.b
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    clamped = _clamp(b, i, zero, b.sub(n, one))
    is_wrap = b.and_(normalized, b.icmp_unsigned("==", mode, ir.Constant(I64, MODES["wrap"])))
    is_mirror = b.and_(normalized, b.icmp_unsigned("==", mode, ir.Constant(I64, MODES["mirror"])))
    start = b.block
    periodic, join = g.fn.append_basic_block("tex_periodic"), g.fn.append_basic_block("tex_addressed")
    b.cbranch(b.or_(is_wrap, is_mirror), periodic, join)
    b.position_at_end(periodic)
    r = b.srem(i, n)
    wrapped = b.select(b.icmp_signed("<", r, zero), b.add(r, n), r)
    n2 = b.add(n, n)
    m = b.srem(i, n2)
    m = b.select(b.icmp_signed("<", m, zero), b.add(m, n2), m)
    mirrored = b.select(b.icmp_signed("<", m, n), m, b.sub(b.sub(n2, one), m))
    chosen = b.select(is_wrap, wrapped, mirrored)
    b.branch(join)
    b.position_at_end(join)
    idx = b.phi(I64)
    idx.add_incoming(clamped, start)
    idx.add_incoming(chosen, periodic)
    border = b.icmp_unsigned("==", mode, ir.Constant(I64, MODES["border"]))
    outside = b.and_(border, b.or_(b.icmp_signed("<", i, zero), b.icmp_signed(">=", i, n)))
    return idx, outside


class _Texture:
    """One lane's view of its texture's row: fields, the texel reader and the bail-outs."""

    def __init__(self, g, row, mem):
        self.g, self.b, self.row, self.mem = g, g.b, row, mem
        self.slice = None                   # a layered lookup's layer (texture._layer), where there is one
        flags = self.field("flags")
        self.normalized = self.flag(flags, NORMALIZED_COORDS)
        self.linear = self.flag(flags, LINEAR)

    @classmethod
    def of_handle(cls, g, handle):
        """The texture a handle names; a handle outside the table or a row native code does not take bails out."""
        b = g.b
        table = b.inttoptr(g.ctx["textures"], I64.as_pointer())
        g.bail_if(b.icmp_unsigned(">=", handle, g.ctx["ntextures"]))
        row = b.gep(table, [b.mul(handle, ir.Constant(I64, STRIDE))])
        g.bail_if(b.icmp_unsigned("!=", _field(b, row, "kind"), ir.Constant(I64, NATIVE)))
        return cls(g, row, b.inttoptr(g.ctx["mem"], I8.as_pointer()))

    def field(self, name):
        return _field(self.b, self.row, name)

    def flag(self, flags, bit):
        return self.b.icmp_unsigned("!=", self.b.and_(flags, ir.Constant(I64, bit)), ir.Constant(I64, 0))

    def mode(self, d):
        return self.b.and_(self.b.lshr(self.field("modes"), ir.Constant(I64, 4 * d)), ir.Constant(I64, 15))

    def words(self, idx, outside=None, raw=False):
        """The 4 result words of the texel at indices ``idx`` (x, y, z as given), the border colour's
        where ``outside``; bails out past the bound memory's allocation (texture._within)."""
        b = self.b
        off = self.field("base")
        for i, name in zip(idx, ("texel", "pitch", "slice_pitch")):
            off = b.add(off, b.mul(i, self.field(name)))
        if self.slice is not None:
            off = b.add(off, b.mul(self.slice, self.field("slice_pitch")))
        past = b.icmp_signed(">", off, self.field("limit"))
        self.g.bail_if(past)
        if isinstance(self.g, _Outlined):       # no branch there: read the first texel instead
            off = b.select(past, self.field("base"), off)
        vec = b.call(texel_function(self.g.fn.module), [self.mem, self.row, off, ir.Constant(I1, not raw)])
        words = [b.extract_element(vec, ir.Constant(I32, c)) for c in range(4)]
        if outside is not None:
            border = "r" if raw else "b"
            words = [b.select(outside, b.trunc(self.field(f"{border}{c}"), I32), w) for c, w in enumerate(words)]
        return words


def _sizes(t, dims):
    """Each dimension's size as the filter takes it (texture._taps: a height of 0 counts as 1)."""
    b = t.b
    h = t.field("height")
    return [t.field("width"), b.select(b.icmp_signed("<", h, ir.Constant(I64, 1)), ir.Constant(I64, 1), h),
            t.field("depth")][:dims]


def _integer_fetch(g, t, coords):
    """texture._fetch_integer: texel indices, clamped; zeros outside the image."""
    b = g.b
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    inside = ir.Constant(I1, 1)
    idx = []
    for d, c in enumerate(coords):
        v = b.sext(c, I64)
        n = t.field(("width", "height", "depth")[d])
        fits = b.select(b.icmp_signed(">", n, zero), b.icmp_signed("<", v, n), b.icmp_signed("==", v, zero))
        inside = b.and_(inside, b.and_(b.icmp_signed(">=", v, zero), fits))
        top = b.sub(n, one)
        idx.append(_clamp(b, v, zero, b.select(b.icmp_signed("<", top, zero), zero, top)))
    return [b.select(inside, w, ir.Constant(I32, 0)) for w in t.words(idx)]


def _point(g, t, coords, sizes):
    """A point-filtered lookup: the texel each coordinate's fixed point falls in."""
    b = g.b
    idx, outside = [], ir.Constant(I1, 0)
    for d, (x, n) in enumerate(zip(coords, sizes)):
        i = b.ashr(_fixed(g, x, n, t.normalized), ir.Constant(I64, tx.COORD_BITS))
        i, out = _address(g, i, n, t.mode(d), t.normalized)
        idx.append(i)
        outside = b.or_(outside, out)
    return t.words(idx, outside)


def _any(b, flags):
    out = flags[0]
    for f in flags[1:]:
        out = b.or_(out, f)
    return out


def _weights(b, fractions):
    """texture.tap_weights of a 2D or 3D footprint (np.ndindex order) from each dimension's 8-bit
    fraction: 2D, the corner weight rounded (ties up) and the rest by row and column; 3D, each z
    slice's weight split between x (the x1 share rounded), then each of those between the y rows."""
    one = ir.Constant(I64, 1 << tx.FRACTION_BITS)

    def share(v, f):                  # (v * f + 128) >> 8
        return b.ashr(b.add(b.mul(v, f), ir.Constant(I64, 1 << (tx.FRACTION_BITS - 1))),
                      ir.Constant(I64, tx.FRACTION_BITS))
    if len(fractions) == 2:
        a, c = fractions
        w11 = share(a, c)
        return [b.add(b.sub(b.sub(one, a), c), w11), b.sub(c, w11), b.sub(a, w11), w11]
    a, c, z = fractions
    w = {}
    for k, wz in ((0, b.sub(one, z)), (1, z)):
        x1 = share(a, wz)
        for x, wxz in ((0, b.sub(wz, x1)), (1, x1)):
            if x:
                y1 = share(wxz, c)
                w[(x, 0, k)], w[(x, 1, k)] = b.sub(wxz, y1), y1
            else:
                y0 = share(wxz, b.sub(one, c))
                w[(x, 0, k)], w[(x, 1, k)] = y0, b.sub(wxz, y0)
    return [w[key] for key in sorted(w)]


def _linear_taps(g, t, coords, sizes, gather=False):
    """texture._footprint of a linear lookup (``gather``: tld4's, whose coordinate is not clamped to
    the edge texels' centres): per dimension ((index, outside) of its two taps, fraction)."""
    b = g.b
    one = 1 << tx.COORD_BITS
    taps = []
    for d, (x, n) in enumerate(zip(coords, sizes)):
        tt = _fixed(g, x, n, t.normalized)
        mode = t.mode(d)
        edge = b.or_(b.icmp_unsigned("==", mode, ir.Constant(I64, MODES["clamp"])),
                     b.and_(b.not_(t.normalized), b.icmp_unsigned(">=", mode, ir.Constant(I64, MODES["wrap"]))))
        if gather:
            edge = ir.Constant(I1, 0)
        tt = b.select(edge, _clamp(b, tt, ir.Constant(I64, one // 2), b.sub(b.mul(n, ir.Constant(I64, one)),
                                                                               ir.Constant(I64, one // 2))), tt)
        q = b.ashr(b.add(tt, ir.Constant(I64, -(one // 2) + (1 << (tx.COORD_BITS - tx.FRACTION_BITS - 1)))),
                   ir.Constant(I64, tx.COORD_BITS - tx.FRACTION_BITS))
        i0 = b.ashr(q, ir.Constant(I64, tx.FRACTION_BITS))
        a = b.and_(q, ir.Constant(I64, (1 << tx.FRACTION_BITS) - 1))
        taps.append(([_address(g, i, n, mode, t.normalized) for i in (i0, b.add(i0, ir.Constant(I64, 1)))], a))
    return taps


def _at_centre(g, t, taps):
    """i1: every fraction is 0 (a texel's centre: convolutionTexture's x + 0.5), the texture float and
    bound without a limit, so that the first tap alone is the lookup (texture._one_texel); a
    neighbour past an allocation's end is the interpreter's to report."""
    b = g.b
    zero = ir.Constant(I64, 0)
    off = _any(b, [b.icmp_unsigned("!=", a, zero) for _, a in taps])
    plain = b.and_(b.not_(t.flag(t.field("flags"), NORMALIZED_READ)),
                   b.icmp_signed("==", t.field("limit"), ir.Constant(I64, NO_LIMIT)))
    return b.and_(b.not_(off), plain)


def _one_texel(g, t, taps):
    """The first tap's words as a lookup of weight 1 gives them: a subnormal as a zero of its sign, a
    NaN as the canonical one."""
    b = g.b
    first = [side[0] for side, _ in taps]
    c32 = lambda v: ir.Constant(I32, v)      # noqa: E731
    got = []
    for w in t.words([i for i, _ in first], _any(b, [o for _, o in first])):
        expo = b.and_(b.lshr(w, c32(23)), c32(255))
        nan = b.and_(b.icmp_unsigned("==", expo, c32(255)), b.icmp_unsigned("!=", b.and_(w, c32(0x7FFFFF)), c32(0)))
        w = b.select(b.icmp_unsigned("==", expo, c32(0)), b.and_(w, c32(0x80000000)), w)
        got.append(b.select(nan, c32(0x7FFFFFFF), w))
    return got


def _linear(g, t, coords, sizes):
    """A linear lookup in 1D (as 2D), 2D or 3D (texture._footprint, tap_weights, _filter)."""
    b = g.b
    taps = _linear_taps(g, t, coords, sizes)
    weights = _weights(b, [a for _, a in taps])
    sides = [side for side, _ in taps]
    ch = t.field("channels")
    norm = t.flag(t.field("flags"), NORMALIZED_READ)
    centre = _at_centre(g, t, taps)
    centre_bb, pick_bb, fixed_bb, float_bb, join = (g.fn.append_basic_block(n) for n in (
        "tex_centre", "tex_pick", "tex_fixed", "tex_float", "tex_filtered"))
    b.cbranch(centre, centre_bb, pick_bb)
    b.position_at_end(pick_bb)
    b.cbranch(norm, fixed_bb, float_bb)
    out = []
    bad = getattr(g, "bad", None)           # (_Outlined: each branch's bail-out flag joins below)
    b.position_at_end(centre_bb)
    got = _one_texel(g, t, taps)
    out.append((got + [getattr(g, "bad", None)], b.block))
    b.branch(join)
    n = len(weights)
    for bb, raw, filt in ((fixed_bb, True, fixed_function(g.fn.module, n)),
                          (float_bb, False, filter_function(g.fn.module, n))):
        b.position_at_end(bb)
        if bad is not None:
            g.bad = bad
        words = [t.words([i for i, _ in tap], _any(b, [o for _, o in tap]), raw)
                 for tap in itertools.product(*sides)]                       # np.ndindex order
        extra = [t.field("cb"), t.field("signed")] if raw else []
        got = [b.call(filt, [w[0] for w in words] + weights + extra)]
        for c in range(1, 4):           # (a channel the texture has: a call of a filter of zeros was a
            here = b.block              # third of a 1-channel float resize's lookup, in the filter's general code)
            call_bb, done = g.fn.append_basic_block(f"tex_c{c}"), g.fn.append_basic_block(f"tex_c{c}_done")
            b.cbranch(b.icmp_signed(">", ch, ir.Constant(I64, c)), call_bb, done)
            b.position_at_end(call_bb)
            v = b.call(filt, [w[c] for w in words] + weights + extra)
            b.branch(done)
            b.position_at_end(done)
            phi = b.phi(I32)
            phi.add_incoming(v, call_bb)
            phi.add_incoming(ir.Constant(I32, 0), here)
            got.append(phi)
        out.append((got + [getattr(g, "bad", None)], b.block))
        b.branch(join)
    b.position_at_end(join)
    result = []
    for c in range(4 if bad is None else 5):
        phi = b.phi(I32 if c < 4 else I1)
        for got, bb in out:
            phi.add_incoming(got[c], bb)
        result.append(phi)
    if bad is not None:
        g.bad = result.pop()
    return result


class _Outlined:
    """What _linear needs of a group builder, inside a function of its own (``linear_function``):
    there a bail-out is a flag the caller tests."""

    def __init__(self, fn, b):
        self.fn, self.b = fn, b
        self.bad = ir.Constant(I1, 0)

    def bail_if(self, cond):
        self.bad = self.b.or_(self.bad, cond)


RESULT = ir.LiteralStructType([ir.VectorType(I32, 4), I1])


def _return_words(g, words):
    """Return an outlined lookup's four result words and its bail-out flag as one ``RESULT``."""
    b = g.b
    vec = ir.Constant(ir.VectorType(I32, 4), None)
    for c, w in enumerate(words):
        vec = b.insert_element(vec, w, ir.Constant(I32, c))
    out = b.insert_value(ir.Constant(RESULT, None), vec, 0)
    b.ret(b.insert_value(out, g.bad, 1))


def linear_function(module):
    """``linear(mem, row, x, y) -> {words, bail}``: a linear lookup in 1D or 2D (``_linear``), one
    function per module rather than a copy at every tex (a kernel of two tex2D had 0.96 MB of IR)."""
    fn, new = _get(module, "cudalab_tex_linear", ir.FunctionType(RESULT, [I8.as_pointer(), I64.as_pointer(), F32, F32,
                                                                         I64]))
    if not new:
        return fn
    mem, row, x, y, layer = fn.args
    g = _Outlined(fn, ir.IRBuilder(fn.append_basic_block("entry")))
    t = _Texture(g, row, mem)
    t.slice = layer
    words = _linear(g, t, [x, y], _sizes(t, 2))
    _return_words(g, words)
    return fn


def linear3_function(module):
    """``linear3(mem, row, x, y, z) -> {words, bail}``: a trilinear lookup (``_linear`` in 3D)."""
    fn, new = _get(module, "cudalab_tex_linear3", ir.FunctionType(RESULT, [I8.as_pointer(), I64.as_pointer(), F32, F32,
                                                                          F32]))
    if not new:
        return fn
    mem, row, x, y, z = fn.args
    g = _Outlined(fn, ir.IRBuilder(fn.append_basic_block("entry")))
    t = _Texture(g, row, mem)
    words = _linear(g, t, [x, y, z], _sizes(t, 3))
    _return_words(g, words)
    return fn


@gen("tex")
def _tex(g, inst):
    """tex.{1d,2d,3d,a1d,a2d}.v4.{f32,s32,u32}.{f32,s32} d, [handle, {layer, coords}] (no level,
    gradients or residency predicate: those stay interpreted)."""
    geom = next((m for m in inst.mods if m in tx.GEOMETRIES or m in ("2dms", "a2dms")), None)
    if geom not in ("1d", "2d", "3d", "a1d", "a2d") or "level" in inst.mods or "grad" in inst.mods or len(inst.operands) != 2:
        raise Skip(f"tex form {inst.text}")
    if "v4" not in inst.mods or inst.types[0] not in ("f32", "s32", "u32") or inst.types[-1] not in ("f32", "s32"):
        raise Skip(f"tex types {inst.types}")
    dst = inst.operands[0]
    if dst[0] != "vec" or len(dst[1]) != 4:
        raise Skip("tex destination")
    handle, coords = _operands(inst)
    has_layer, dims = tx.GEOMETRIES[geom]
    if len(coords) < has_layer + dims:
        raise Skip("tex coordinates")
    integer = inst.types[-1] == "s32"
    b = g.b
    h = g.read(handle, "u64")
    layer = g.read(coords[0], "s32") if has_layer else None
    values = [g.read(c, "s32" if integer else "f32") for c in coords[has_layer:has_layer + dims]]
    t = _Texture.of_handle(g, h)
    g.bail_if(b.icmp_unsigned("!=", t.flag(t.field("flags"), LAYERED), ir.Constant(I1, has_layer)))
    if has_layer:          # texture._layer: unsigned, clamped to the last layer
        last = b.sub(t.field("depth"), ir.Constant(I64, 1))
        z = b.zext(layer, I64)
        t.slice = b.select(b.icmp_unsigned("<", z, last), z, last)
    if integer:
        words = _integer_fetch(g, t, values)
    else:
        sizes = _sizes(t, dims)
        for n in sizes:
            g.bail_if(b.icmp_signed("<=", n, ir.Constant(I64, 0)))
        point_bb, linear_bb = g.fn.append_basic_block("tex_point"), g.fn.append_basic_block("tex_linear")
        join = g.fn.append_basic_block("tex_join")
        b.cbranch(t.linear, linear_bb, point_bb)
        b.position_at_end(point_bb)
        pw = _point(g, t, values, sizes)
        point_end = b.block
        b.branch(join)
        b.position_at_end(linear_bb)
        # a texel's centre inline (the one texel, as a point lookup costs); any other lookup calls the filter
        coords2 = values + ([ir.Constant(F32, 0.0)] if dims == 1 else [])
        taps = _linear_taps(g, t, coords2, _sizes(t, len(coords2)))
        centre_bb, filter_bb = g.fn.append_basic_block("tex_centre"), g.fn.append_basic_block("tex_filter")
        b.cbranch(_at_centre(g, t, taps), centre_bb, filter_bb)
        b.position_at_end(centre_bb)
        cw = _one_texel(g, t, taps)
        centre_end = b.block
        b.branch(join)
        b.position_at_end(filter_bb)
        if dims == 3:
            got = b.call(linear3_function(g.fn.module), [t.mem, t.row, *values])
        else:
            got = b.call(linear_function(g.fn.module), [t.mem, t.row, values[0],
                                                       values[1] if dims == 2 else ir.Constant(F32, 0.0),
                                                       t.slice if has_layer else ir.Constant(I64, 0)])
        g.bail_if(b.extract_value(got, 1))
        lw = [b.extract_element(b.extract_value(got, 0), ir.Constant(I32, c)) for c in range(4)]
        linear_end = b.block
        b.branch(join)
        b.position_at_end(join)
        words = []
        for p, c, q in zip(pw, cw, lw):
            phi = b.phi(I32)
            phi.add_incoming(p, point_end)
            phi.add_incoming(c, centre_end)
            phi.add_incoming(q, linear_end)
            words.append(phi)
    for o, w in zip(dst[1], words):
        g.write(o, "b32", w)


# ------------------------------------------------------------------ suld.b, sust.b
SURFACE_TYPES = {"b8": 1, "b16": 2, "b32": 4, "b64": 8}


def _surface_access(g, inst, mem_op):
    """(lane reads or writes memory, i8* to the bytes, access bytes) of a raw surface access
    (texture.surface_offsets): a misaligned x, an out-of-bounds .trap access, a handle that names no
    surface and any other form bail out, for the interpreter's report; .clamp moves to the nearest
    texel; .zero touches nothing (a load reads zeros)."""
    if "p" in inst.mods:
        raise Skip(f"{inst.opcode}.p")
    geom = next((m for m in inst.mods if m in tx.SURFACE_GEOMETRIES), None)
    if geom is None or inst.type not in SURFACE_TYPES:
        raise Skip(f"{inst.opcode} form")
    mode = next((m for m in inst.mods if m in ("trap", "clamp", "zero")), "trap")
    vec = next((int(m[1]) for m in inst.mods if m in ("v2", "v4")), 1)
    size = SURFACE_TYPES[inst.type] * vec
    if mem_op[0] != "mem" or mem_op[1] is None or mem_op[1][0] != "vec" or len(mem_op[1][1]) != 2:
        raise Skip("surface operand")
    handle, coords = mem_op[1][1]
    if handle[0] != "reg":
        raise Skip("surface reference")
    coords = coords[1] if coords[0] == "vec" else (coords,)
    has_layer, dims = tx.SURFACE_GEOMETRIES[geom]
    if len(coords) < has_layer + dims:
        raise Skip("surface coordinates")
    b = g.b
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    h = g.read(handle, "u64")
    c = [b.sext(g.read(o, "s32"), I64) for o in coords[:has_layer + dims]]
    table = b.inttoptr(g.ctx["textures"], I64.as_pointer())
    g.bail_if(b.icmp_unsigned(">=", h, g.ctx["ntextures"]))
    row = b.gep(table, [b.mul(h, ir.Constant(I64, STRIDE))])
    g.bail_if(b.icmp_unsigned("!=", _field(b, row, "kind"), ir.Constant(I64, SURFACE)))
    x = c[has_layer]
    y = c[has_layer + 1] if dims > 1 else zero
    z = c[has_layer + 2] if dims > 2 else (c[0] if has_layer else zero)
    g.bail_if(b.icmp_unsigned("!=", b.and_(x, ir.Constant(I64, size - 1)), zero))     # misaligned: any mode
    size_c = ir.Constant(I64, size)
    limits = (b.add(b.sub(b.mul(_field(b, row, "width"), _field(b, row, "texel")), size_c), one),
              _field(b, row, "height"), _field(b, row, "depth"))
    inside = ir.Constant(I1, 1)
    for v, top in zip((x, y, z), limits):
        inside = b.and_(inside, b.and_(b.icmp_signed(">=", v, zero), b.icmp_signed("<", v, top)))
    if mode == "trap":
        g.bail_if(b.not_(inside))
    elif mode == "clamp":
        x, y, z = (_clamp(b, v, zero, b.sub(top, one)) for v, top in zip((x, y, z), limits))
        inside = ir.Constant(I1, 1)
    off = b.add(_field(b, row, "base"), b.add(b.add(b.mul(z, _field(b, row, "slice_pitch")),
                                                     b.mul(y, _field(b, row, "pitch"))), x))
    off = b.select(inside, off, _field(b, row, "base"))       # (.zero outside: nothing is touched there)
    return inside, b.gep(b.inttoptr(g.ctx["mem"], I8.as_pointer()), [off]), vec


@gen("suld")
def _suld(g, inst):
    """suld.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.b{8,16,32,64}.{trap,clamp,zero} d, [surf, {x bytes, ...}]."""
    inside, p, vec = _surface_access(g, inst, inst.operands[1])
    dst = inst.operands[0]
    regs = dst[1] if dst[0] == "vec" else (dst,)
    if len(regs) != vec:
        raise Skip("suld destination")
    b, t = g.b, inst.type
    esize = SURFACE_TYPES[t]
    for k, o in enumerate(regs):
        v = g.load(p, t, k * esize)
        g.write(o, t, b.select(inside, v, ir.Constant(v.type, 0)))


@gen("sust")
def _sust(g, inst):
    """sust.b.{1d,2d,3d,a1d,a2d}{.v2,.v4}.b{8,16,32,64}.{trap,clamp,zero} [surf, {x bytes, ...}], values."""
    src = inst.operands[1]
    regs = src[1] if src[0] == "vec" else (src,)
    t = inst.type
    vals = [g.read(o, t) for o in regs]
    inside, p, vec = _surface_access(g, inst, inst.operands[0])
    if len(vals) != vec:
        raise Skip("sust values")
    esize = SURFACE_TYPES[t]
    with g.b.if_then(inside):
        for k, v in enumerate(vals):
            g.store(p, t, v, k * esize)


# ------------------------------------------------------------------ txq, suq
@gen("txq", "suq")
def _query(g, inst):
    """txq.{width,height,depth}.b32 / suq.{width,height,depth}.b32 d, [handle]: the answer texture.texture_query
    and surface_query give, from the table (a handle that names no live object bails out)."""
    what = next((m for m in inst.mods if m not in ("b32",)), None)
    mem = inst.operands[1]
    if what not in QUERIES or len(inst.operands) != 2 or mem[0] != "mem" or mem[1] is None or mem[1][0] != "reg":
        raise Skip(f"{inst.opcode} form")
    b = g.b
    h = g.read(mem[1], "u64")
    table = b.inttoptr(g.ctx["textures"], I64.as_pointer())
    g.bail_if(b.icmp_unsigned(">=", h, g.ctx["ntextures"]))
    row = b.gep(table, [b.mul(h, ir.Constant(I64, STRIDE))])
    live = TEXTURE_LIVE if inst.opcode == "txq" else SURFACE_LIVE
    g.bail_if(b.icmp_unsigned("!=", _field(b, row, "live"), ir.Constant(I64, live)))
    g.write(inst.operands[0], "b32", b.trunc(_field(b, row, "q" + what[0]), I32))


# ------------------------------------------------------------------ tld4
@gen("tld4")
def _tld4(g, inst):
    """tld4.{r,g,b,a}.{2d,a2d}.v4.{f32,s32,u32}.f32 d, [handle, {layer, x, y}]: component ``comp`` of the
    four texels of the linear footprint, in texture.GATHER_ORDER (texture.gather)."""
    geom = next((m for m in inst.mods if m in tx.GEOMETRIES), None)
    comp = next((m for m in inst.mods if m in ("r", "g", "b", "a")), None)
    dst = inst.operands[0]
    if geom not in ("2d", "a2d") or comp is None or len(inst.operands) != 2 or dst[0] != "vec" or len(dst[1]) != 4:
        raise Skip(f"tld4 form {inst.text}")
    handle, coords = _operands(inst)
    has_layer = geom == "a2d"
    if len(coords) < has_layer + 2:
        raise Skip("tld4 coordinates")
    b = g.b
    h = g.read(handle, "u64")
    layer = g.read(coords[0], "s32") if has_layer else None
    values = [g.read(c, "f32") for c in coords[has_layer:has_layer + 2]]
    t = _Texture.of_handle(g, h)
    g.bail_if(b.icmp_unsigned("!=", t.flag(t.field("flags"), LAYERED), ir.Constant(I1, has_layer)))
    if has_layer:
        last = b.sub(t.field("depth"), ir.Constant(I64, 1))
        z = b.zext(layer, I64)
        t.slice = b.select(b.icmp_unsigned("<", z, last), z, last)
    sizes = [t.field("width"), t.field("height")]          # (gather takes the height as it is)
    for n in sizes:
        g.bail_if(b.icmp_signed("<=", n, ir.Constant(I64, 0)))
    (xs, _), (ys, _) = _linear_taps(g, t, values, sizes, gather=True)
    k = "rgba".index(comp)
    for o, (tx_, ty_) in zip(dst[1], tx.GATHER_ORDER):
        (xi, xo), (yi, yo) = xs[tx_], ys[ty_]
        g.write(o, "b32", t.words([xi, yi], b.or_(xo, yo))[k])
