"""The compiled loops of mma_native (numba): imported when a tensor-core instruction first runs, so
that the emulator starts without numba.

A loop runs a *program* (mma_runs.py): rows of ``ops``, each a wmma.load from shared memory or an mma
of one form, for every warp of the batch, warp by warp: a warp's fragments stay in the cache from
its loads to its mmas, and an A or B fragment that several mmas read is decoded once (its *fragment
id*, one per register tuple and the load that wrote it). One instruction alone is a program of one row.
Registers are reached through their arrays' addresses (``ptrs``, one a register; numpy arrays over
the batch's lanes), so a program of a hundred instructions needs no copies of its registers. A load
whose fragment only an mma reads, from one tile every lane of the warp points at (a GEMM's), is read
straight into the matrix the mma multiplies, element by element from where the tables put it
(plan_loads, load_planned), not word by word into lanes and registers and then decoded from those."""
import math

import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .mma_native import (A, B, BASE, BASE_WORD, C, CARRY, D, DISTINCT, DST, ELEMENT_BITS, ESIZE, FA, FB, FRAGMENT, KEEP,
                          KIND, LANE, LD, LD_IMM, LFRAGMENT, LOAD, LOPERAND, MOVE, NREGS, OFFSET, OPERAND, QUIET, REGS,
                          ROUND, SLOT, SRC, TABLE, TF32_RN, TF32_RNA, WORD)

FAR = 1 << 20            # a zero's exponent lies this far below, its lowest set bit this far above, any other's
NOT_FINITE = 1 << 10     # an infinity's or NaN's exponent in mma_native.input_table
_OFFSET = 1100
_POW2 = np.ldexp(1.0, np.arange(-_OFFSET, 1000))              # 2**s (pow2)


def _memory(llvm_type, numba_type):
    """peek(address) and poke(address, value) of one machine type at a byte address (an int64)."""
    @intrinsic
    def peek(typingctx, address):
        def codegen(context, builder, sig, args):
            return builder.load(builder.inttoptr(args[0], llvm_type.as_pointer()))
        return numba_type(address), codegen

    @intrinsic
    def poke(typingctx, address, value):
        def codegen(context, builder, sig, args):
            v = context.cast(builder, args[1], sig.args[1], numba_type)
            builder.store(v, builder.inttoptr(args[0], llvm_type.as_pointer()))
            return context.get_dummy_value()
        return types.void(address, value), codegen
    return peek, poke


peek8, _ = _memory(ir.IntType(8), types.uint8)
peek16, _ = _memory(ir.IntType(16), types.uint16)
peek32, poke32 = _memory(ir.IntType(32), types.uint32)
peek64, poke64 = _memory(ir.IntType(64), types.uint64)
peek_f32, _ = _memory(ir.FloatType(), types.float32)


@intrinsic
def cut_to_f32(typingctx, value):
    """A float64 cut toward zero to float32 (its low 29 significand bits dropped, then converted:
    exact), for values whose float32 is normal or zero; an exact zero gives +0, as the tensor core's."""
    def codegen(context, builder, sig, args):
        u = builder.bitcast(args[0], ir.IntType(64))
        u = builder.and_(u, ir.Constant(ir.IntType(64), ~0x1FFFFFFF & (2 ** 64 - 1)))
        zero = builder.icmp_unsigned("==", builder.shl(u, ir.Constant(ir.IntType(64), 1)),
                                     ir.Constant(ir.IntType(64), 0))
        u = builder.select(zero, ir.Constant(ir.IntType(64), 0), u)
        return builder.fptrunc(builder.bitcast(u, ir.DoubleType()), ir.FloatType())
    return types.float32(types.float64), codegen



@intrinsic
def unmanaged(typingctx, a):
    """``a`` with no reference count (its meminfo and parent null), for a loop's hot arrays: numba counts
    references to an array at every view of it (``ops[p]``, a fragment's row) and every array passed to an
    inlined helper, each an atomic add to the array's count, and those were a fifth of the CPU of the bf16
    sample's copy (NRT_incref/decref, 0.26 us a warp-level mma). A null meminfo makes them no-ops. The array
    itself must stay alive while the view is used: the caller's arguments are; a loop's own arrays are held
    by a tuple that ``keep_alive`` names after the loop."""
    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, args[0])
        ary.meminfo = ir.Constant(ary.meminfo.type, None)
        ary.parent = ir.Constant(ary.parent.type, None)
        return ary._getvalue()
    return a(a), codegen


@intrinsic
def keep_alive(typingctx, held):
    """Nothing: a use of ``held`` (a tuple of arrays) where it is written, so that numba keeps them until
    there (it frees an array after its last use)."""
    def codegen(context, builder, sig, args):
        return context.get_dummy_value()
    return types.void(held), codegen


@numba.njit(inline="always", cache=True)
def word_at(ptrs, slot, lane, word):
    """Lane ``lane``'s value of register ``slot`` (a word of ``word`` bytes) as uint64."""
    if word == 8:
        return peek64(ptrs[slot] + 8 * lane)
    return np.uint64(peek32(ptrs[slot] + 4 * lane))


@numba.njit(cache=True, nogil=True)
def load_warp(w, op, ptrs, major, minor, shared, block_base, limit, lanes, words, write):
    """wmma.load of warp w from shared memory into words[register, lane] and, if ``write``, into the
    registers: lane l's element e lies at byte base + (major * ld +
    minor) * esize (the tables by l) of its block's row of shared memory (at byte block_base[lane]
    of the buffer at address ``shared``); register j holds elements j * per to j * per + per - 1,
    modulo the distinct elements (sm_70's repeated halves), which lie side by side in memory (mma_runs
    takes only such loads): one word a register. False where some word is out of bounds or misaligned
    (registers half written): mma.py's path then reports it. ``lanes``: scratch for the lanes' rows.
    Called, not inlined: compiled once for every form and kind of program (numba's compile of a form
    is what a cold cache pays, as CI does)."""
    distinct, esize, bits, word, tab = op[DISTINCT], op[ESIZE], op[ELEMENT_BITS], op[WORD], op[TABLE]
    offset, base_slot, ld_slot = op[OFFSET], op[BASE], op[LD]
    per = max(1, 32 // bits)
    for l in range(32):                 # each lane's base address in the buffer, and its row stride
        lane = w * 32 + l
        base = offset
        if base_slot >= 0:
            base += np.int64(word_at(ptrs, base_slot, lane, op[BASE_WORD]))
            if op[BASE_WORD] == 4:
                base &= 0xFFFFFFFF
        if base < 0 or base > limit:
            return False
        lanes[0, l] = base + np.int64(shared) + np.int64(block_base[lane])
        lanes[1, l] = base
        lanes[2, l] = np.int64(word_at(ptrs, ld_slot, lane, 4) & np.uint64(0xFFFFFFFF)) if ld_slot >= 0 else op[LD_IMM]
    for j in range(op[NREGS]):
        e = (j * per) % distinct
        out = ptrs[op[REGS + j]] + word * 32 * w
        for l in range(32):
            at = (np.int64(major[tab, l, e]) * lanes[2, l] + np.int64(minor[tab, l, e])) * esize
            if at < 0 or lanes[1, l] + at > limit - word or (lanes[1, l] + at) & (word - 1):
                return False
            words[j, l] = peek64(lanes[0, l] + at) if word == 8 else np.uint64(peek32(lanes[0, l] + at))
            if write:
                if word == 8:
                    poke64(out + 8 * l, words[j, l])
                else:
                    poke32(out + 4 * l, np.uint32(words[j, l]))
    return True


@numba.njit(inline="always", cache=True)
def plan_loads(ops, major, minor, atarget, btarget, counts, m, n, k):
    """Where each matrix element of a load's fragment lies, for the loads of ``ops`` that an mma decodes
    (FRAGMENT) and that write no registers (QUIET): plan[i, 0, t] and plan[i, 1, t] (its element's major
    and minor index: (major * ld + minor) * esize bytes from the lane's base) and plan[i, 2, t] (its place
    in its word, in elements) of matrix element t, for the i-th such load (index[row]; -1: none). From the
    loads' tables and the fragments' targets, as load_warp and decode_inputs place them one by one."""
    rows = ops.shape[0]
    index = np.full(rows, -1, np.int64)
    count = 0
    for p in range(rows):
        op = ops[p]
        if op[0] == LOAD and op[FRAGMENT] >= 0 and op[QUIET] == 1 and op[ESIZE] * 8 == op[ELEMENT_BITS] and \
                (op[ELEMENT_BITS] == 16 or op[ELEMENT_BITS] == 32 or op[ELEMENT_BITS] == 64):
            index[p] = count
            count += 1
    plan = np.zeros((max(count, 1), 3, max(m * k, k * n)), np.int64)
    for p in range(rows):
        i = index[p]
        if i < 0:
            continue
        op = ops[p]
        use, bits, tab, distinct = op[OPERAND], op[ELEMENT_BITS], op[TABLE], op[DISTINCT]
        per = max(1, 32 // bits)
        for j in range(counts[use]):
            e = (j * per) % distinct
            for l in range(32):
                for sub in range(per):
                    t = atarget[l, j * per + sub] if use == 0 else btarget[l, j * per + sub]
                    if t >= 0:
                        plan[i, 0, t], plan[i, 1, t], plan[i, 2, t] = np.int64(major[tab, l, e]), \
                            np.int64(minor[tab, l, e]) + sub, sub
    return index, plan


@intrinsic
def same_words(typingctx, address, word):
    """Whether the 32 words (``word`` bytes, a constant: 4 or 8) from byte ``address`` on are all equal:
    a warp's lanes of one register. One vector load, compare and reduction, where a loop over the
    lanes (tile_at's) was a fifth of dmma's compiled loop."""
    if not isinstance(word, types.IntegerLiteral):
        return None
    width = word.literal_value

    def codegen(context, builder, sig, args):
        lanes = ir.VectorType(ir.IntType(8 * width), 32)
        v = builder.load(builder.inttoptr(args[0], lanes.as_pointer()), align=width)
        first = builder.extract_element(v, ir.Constant(ir.IntType(32), 0))
        splat = builder.shuffle_vector(builder.insert_element(ir.Constant(lanes, ir.Undefined), first,
                                                              ir.Constant(ir.IntType(32), 0)),
                                       ir.Constant(lanes, ir.Undefined),
                                       ir.Constant(ir.VectorType(ir.IntType(32), 32), [0] * 32))
        differ = builder.bitcast(builder.icmp_unsigned("!=", v, splat), ir.IntType(32))
        return builder.icmp_unsigned("==", differ, ir.Constant(ir.IntType(32), 0))
    return types.boolean(address, word), codegen


@numba.njit(inline="always", cache=True)
def lane_word(ptrs, slot, w, word):
    """(Lane 0's value of register ``slot`` in warp w as int64 (a 4-byte word unsigned), whether the
    warp's 32 lanes all hold it)."""
    at = ptrs[slot] + 32 * word * w
    if word == 8:
        return np.int64(peek64(at)), same_words(at, 8)
    return np.int64(peek32(at)), same_words(at, 4)


@numba.njit(inline="always", cache=True)
def tile_at(w, op, ptrs, shared, block_base, limit, plan, offs, known, size):
    """The address of the tile a load (plan_loads' row ``plan``) reads for warp w, where every lane reads
    from one base with one row stride (a GEMM's tile): matrix element t then lies at byte offs[t] of it,
    recomputed where the stride is not known[0]'s. -1 where the lanes differ or a word would be out of
    bounds or misaligned: load_warp then reads lane by lane (and reports the address). A warp's lanes
    are of one block (each block is padded to whole warps), so of one row of shared memory."""
    esize, word = op[ESIZE], op[WORD]
    base_slot, ld_slot = op[BASE], op[LD]
    b0, ld0 = op[OFFSET], op[LD_IMM]
    if base_slot >= 0:
        if op[BASE_WORD] == 8:
            x, same = lane_word(ptrs, base_slot, w, 8)
            b0 += x
        else:
            x, same = lane_word(ptrs, base_slot, w, 4)
            b0 = (b0 + x) & 0xFFFFFFFF
        if not same:
            return np.int64(-1)
    if ld_slot >= 0:
        ld0, same = lane_word(ptrs, ld_slot, w, 4)
        if not same:
            return np.int64(-1)
    a0 = b0 + np.int64(shared) + np.int64(block_base[w * 32])
    if known[0] != ld0 or known[3] == 0:
        hi, bits_or = np.int64(0), np.int64(0)
        for t in range(size):
            at = (plan[0, t] * ld0 + plan[1, t]) * esize
            offs[t] = at
            start = at - plan[2, t] * esize         # its word's
            hi, bits_or = max(hi, start), bits_or | start
        known[0], known[1], known[2], known[3] = ld0, hi, bits_or, 1
    if b0 < 0 or b0 + known[1] > limit - word or (b0 | known[2]) & (word - 1):
        return np.int64(-1)
    return a0


@numba.njit(inline="always", cache=True)
def load_planned(w, op, ptrs, shared, block_base, limit, plan, offs, known, size, shift, values, exponents, lowest,
                 k, div, block, steps, vals, vals32, top, low):
    """A QUIET load that an mma decodes (plan_loads' row ``plan``), read straight into the fragment's
    matrix (vals, vals32, top, low: as decode_inputs) from its tile (tile_at). False (nothing decoded)
    where tile_at finds no tile: load_warp then reads lane by lane."""
    bits, rnd = op[ELEMENT_BITS], op[ROUND]
    a0 = tile_at(w, op, ptrs, shared, block_base, limit, plan, offs, known, size)
    if a0 < 0:
        return False
    magnitude = (np.uint64(1) << np.uint64(bits - 1 - shift)) - np.uint64(1)
    biggest, least = np.uint64(0), FAR
    top[:], low[:] = -FAR, FAR
    for t in range(size):
        if bits == 16:
            u = np.uint64(peek16(a0 + offs[t])) >> np.uint64(shift)
        elif rnd > 0:           # (tf32's __float_to_tf32, folded into the load: mma_runs._rounded_at_load)
            u = np.uint64(to_tf32(peek32(a0 + offs[t]), rnd - 1)) >> np.uint64(shift)
        else:
            u = np.uint64(peek32(a0 + offs[t])) >> np.uint64(shift)
        vals[t] = values[u]
        vals32[t] = values[u]
        if steps == 1:
            biggest, least = max(biggest, u & magnitude), min(least, lowest[u])
        else:
            q = ((t // div) % k) // block
            top[q], low[q] = max(top[q], exponents[u]), min(low[q], lowest[u])
    if steps == 1:
        top[0], low[0] = exponents[biggest], least
    return True


@numba.njit(inline="always", cache=True)
def lane_op(w, op, ptrs):
    """A LANE row for warp w: register DST from register SRC (32-bit words), copied (MOVE) or rounded to
    tf32 (to_tf32)."""
    dst, src, kind = ptrs[op[DST]] + 128 * w, ptrs[op[SRC]] + 128 * w, op[KIND]
    for l in range(32):
        poke32(dst + 4 * l, to_tf32(peek32(src + 4 * l), kind))


@numba.njit(inline="always", cache=True)
def to_tf32(u, kind):
    """A float32's bits (uint32) rounded to tf32 as mma.to_tf32 does (.rna to nearest, ties away; .rn ties
    to even; .rz cut; an infinity or NaN just loses its low 13 bits), or kept (MOVE)."""
    if kind == MOVE:
        return u
    low, keep = u & np.uint32(0x1FFF), u & np.uint32(0xFFFFE000)
    if kind == TF32_RNA:
        up = low >= np.uint32(0x1000)
    elif kind == TF32_RN:
        up = low > np.uint32(0x1000) or low == np.uint32(0x1000) and (u & np.uint32(0x2000)) != 0
    else:
        up = False
    if up and (u & np.uint32(0x7F800000)) != np.uint32(0x7F800000):
        return np.uint32(keep + np.uint32(0x2000))
    return keep


@numba.njit(inline="always", cache=True)
def unpack(ptrs, op, col, nregs, target, bits, w, raw):
    """Warp w's fragment elements into raw[matrix element] (their bits): element e of lane l, the
    (e % per)-th of register e // per (per = 32 // bits elements a register), goes to raw[target[l,
    e]] (-1: a repeated element, read from its first place). The registers: slots op[col:col + nregs]
    (the leading ones: those holding no first place are left out)."""
    per = max(1, 32 // bits)
    mask = ~np.uint64(0) if bits == 64 else (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    for j in range(nregs):
        slot = op[col + j]
        for l in range(32):
            word = word_at(ptrs, slot, w * 32 + l, 8 if bits == 64 else 4)
            for sub in range(per):
                t = target[l, j * per + sub]
                if t >= 0:
                    raw[t] = (word >> np.uint64(sub * bits)) & mask


@numba.njit(inline="always", cache=True)
def gather_inputs(ptrs, op, col, nregs, target, w, bits, shift, values, exponents, lowest, k, div, block, steps,
                  vals, vals32, top, low, words):
    """Warp w's A or B fragment from its registers (slots op[col:col + nregs]) into vals and vals32:
    decode_inputs, the words staged in ``words``."""
    for j in range(nregs):
        slot = op[col + j]
        for l in range(32):
            words[j, l] = word_at(ptrs, slot, w * 32 + l, 4)
    decode_inputs(words, nregs, target, bits, shift, values, exponents, lowest, k, div, block, steps, vals, vals32,
                  top, low)


@numba.njit(inline="always", cache=True)
def decode_inputs(words, nregs, target, bits, shift, values, exponents, lowest, k, div, block, steps,
                  vals, vals32, top, low):
    """An A or B fragment's words (words[register, lane]; f16/bf16/tf32 elements) into vals and vals32 (flat float64 and
    float32 copies of the matrix: A (m x k, div = 1) or B (k x n, div = n)), with the largest exponent
    and the lowest set bit of each hardware step of ``block`` k's in top and low. Fragment element
    (lane l, element e) goes to vals[target[l, e]] (-1: a repeated element); values/exponents/lowest:
    mma_native.input_table's, by the element's bits shifted right by ``shift``. One loop for A and B,
    which differ only in their targets. With one step (k = block) the largest exponent is the largest
    magnitude's (its bits without the sign), both bounds kept in registers rather than in top and low."""
    per = max(1, 32 // bits)
    mask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    magnitude = (np.uint64(1) << np.uint64(bits - 1 - shift)) - np.uint64(1)
    biggest, least = np.uint64(0), FAR
    top[:], low[:] = -FAR, FAR
    for j in range(nregs):
        for l in range(32):
            word = words[j, l]
            for sub in range(per):
                t = target[l, j * per + sub]
                if t >= 0:
                    u = ((word >> np.uint64(sub * bits)) & mask) >> shift
                    vals[t] = values[u]
                    vals32[t] = values[u]
                    if steps == 1:
                        biggest, least = max(biggest, u & magnitude), min(least, lowest[u])
                    else:
                        q = ((t // div) % k) // block
                        top[q], low[q] = max(top[q], exponents[u]), min(low[q], lowest[u])
    if steps == 1:
        top[0], low[0] = exponents[biggest], least


@numba.njit(inline="always", cache=True)
def product(av, bv, out, m, n, k, k0, k1, zero):
    """out (m x n) = A B over k0 <= kk < k1 for A (m x k) and B (k x n), flat arrays of ``zero``'s type
    whose every partial sum is exact in it; m, n, k the caller's constants (m even). Two rows of D are
    summed eight columns at a time in sixteen scalars, which LLVM packs into two vector registers: two
    independent chains of adds, where one row's chain waited on each add (a loop adding into out as it
    goes is not vectorized: out might alias the inputs; on this AVX-without-AVX2 CPU int64 products are
    not vectorized either). Inlined, not a closure of make(): numba's cache cannot key a loop that calls
    another closure (it compiled again in every process). Where m and n are multiples of 8 (every
    tensor-core shape but a few), product8's eight rows at a time."""
    if m % 8 == 0 and n % 8 == 0:
        product8(av, bv, out, m, n, k, k0, k1, zero)
        return
    for i in range(0, m, 2):
        for j in range(0, n, 8):
            t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = zero
            u0 = u1 = u2 = u3 = u4 = u5 = u6 = u7 = zero
            for kk in range(k0, k1):
                x, y, r = av[i * k + kk], av[i * k + k + kk], kk * n + j
                b0, b1, b2, b3, b4, b5, b6, b7 = bv[r], bv[r + 1], bv[r + 2], bv[r + 3], bv[r + 4], bv[r + 5], \
                    bv[r + 6], bv[r + 7]
                t0, t1, t2, t3 = t0 + x * b0, t1 + x * b1, t2 + x * b2, t3 + x * b3
                t4, t5, t6, t7 = t4 + x * b4, t5 + x * b5, t6 + x * b6, t7 + x * b7
                u0, u1, u2, u3 = u0 + y * b0, u1 + y * b1, u2 + y * b2, u3 + y * b3
                u4, u5, u6, u7 = u4 + y * b4, u5 + y * b5, u6 + y * b6, u7 + y * b7
            o = i * n + j
            out[o], out[o + 1], out[o + 2], out[o + 3] = t0, t1, t2, t3
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t4, t5, t6, t7
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = u0, u1, u2, u3
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = u4, u5, u6, u7


@numba.njit(inline="always", cache=True)
def product8(av, bv, out, m, n, k, k0, k1, zero):
    """product for m and n multiples of 8: eight rows of D eight columns at a time, in 64 scalars
    (eight vector registers, eight independent chains of adds where product's two rows had two: an
    add's latency no longer sets the pace). A 16x16x16 product in float32: 0.58 -> 0.31 us of CPU
    (0.62 -> 0.35 in float64), measured alone in a loop. (float64 sums only now: float32's are
    vproduct's.)"""
    for i in range(0, m, 8):
        for j in range(0, n, 8):
            t00 = t01 = t02 = t03 = t04 = t05 = t06 = t07 = zero
            t10 = t11 = t12 = t13 = t14 = t15 = t16 = t17 = zero
            t20 = t21 = t22 = t23 = t24 = t25 = t26 = t27 = zero
            t30 = t31 = t32 = t33 = t34 = t35 = t36 = t37 = zero
            t40 = t41 = t42 = t43 = t44 = t45 = t46 = t47 = zero
            t50 = t51 = t52 = t53 = t54 = t55 = t56 = t57 = zero
            t60 = t61 = t62 = t63 = t64 = t65 = t66 = t67 = zero
            t70 = t71 = t72 = t73 = t74 = t75 = t76 = t77 = zero
            for kk in range(k0, k1):
                r = kk * n + j
                b0, b1, b2, b3, b4, b5, b6, b7 = bv[r], bv[r + 1], bv[r + 2], bv[r + 3], bv[r + 4], bv[r + 5], \
                    bv[r + 6], bv[r + 7]
                x = av[(i + 0) * k + kk]
                t00, t01, t02, t03 = t00 + x * b0, t01 + x * b1, t02 + x * b2, t03 + x * b3
                t04, t05, t06, t07 = t04 + x * b4, t05 + x * b5, t06 + x * b6, t07 + x * b7
                x = av[(i + 1) * k + kk]
                t10, t11, t12, t13 = t10 + x * b0, t11 + x * b1, t12 + x * b2, t13 + x * b3
                t14, t15, t16, t17 = t14 + x * b4, t15 + x * b5, t16 + x * b6, t17 + x * b7
                x = av[(i + 2) * k + kk]
                t20, t21, t22, t23 = t20 + x * b0, t21 + x * b1, t22 + x * b2, t23 + x * b3
                t24, t25, t26, t27 = t24 + x * b4, t25 + x * b5, t26 + x * b6, t27 + x * b7
                x = av[(i + 3) * k + kk]
                t30, t31, t32, t33 = t30 + x * b0, t31 + x * b1, t32 + x * b2, t33 + x * b3
                t34, t35, t36, t37 = t34 + x * b4, t35 + x * b5, t36 + x * b6, t37 + x * b7
                x = av[(i + 4) * k + kk]
                t40, t41, t42, t43 = t40 + x * b0, t41 + x * b1, t42 + x * b2, t43 + x * b3
                t44, t45, t46, t47 = t44 + x * b4, t45 + x * b5, t46 + x * b6, t47 + x * b7
                x = av[(i + 5) * k + kk]
                t50, t51, t52, t53 = t50 + x * b0, t51 + x * b1, t52 + x * b2, t53 + x * b3
                t54, t55, t56, t57 = t54 + x * b4, t55 + x * b5, t56 + x * b6, t57 + x * b7
                x = av[(i + 6) * k + kk]
                t60, t61, t62, t63 = t60 + x * b0, t61 + x * b1, t62 + x * b2, t63 + x * b3
                t64, t65, t66, t67 = t64 + x * b4, t65 + x * b5, t66 + x * b6, t67 + x * b7
                x = av[(i + 7) * k + kk]
                t70, t71, t72, t73 = t70 + x * b0, t71 + x * b1, t72 + x * b2, t73 + x * b3
                t74, t75, t76, t77 = t74 + x * b4, t75 + x * b5, t76 + x * b6, t77 + x * b7
            o = i * n + j
            out[o], out[o + 1], out[o + 2], out[o + 3] = t00, t01, t02, t03
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t04, t05, t06, t07
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t10, t11, t12, t13
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t14, t15, t16, t17
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t20, t21, t22, t23
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t24, t25, t26, t27
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t30, t31, t32, t33
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t34, t35, t36, t37
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t40, t41, t42, t43
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t44, t45, t46, t47
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t50, t51, t52, t53
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t54, t55, t56, t57
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t60, t61, t62, t63
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t64, t65, t66, t67
            o += n
            out[o], out[o + 1], out[o + 2], out[o + 3] = t70, t71, t72, t73
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t74, t75, t76, t77

@intrinsic
def vproduct(typingctx, av, bv, out, m, n, k, k0, k1, into):
    """out (m x n) = A B over k0 <= kk < k1 (out += A B where ``into``) for float32 A (m x k) and B (k x n),
    flat arrays, every partial sum exact in float32; m, n, k and into constants. Float64 arrays (dmma's
    loop) get the same code in doubles: each element of D then is an fma chain in k order, every step
    rounded once, which is DMMA's sum (mma.dot_f64), not an exact one. Written as LLVM vectors:
    each row of D one vector of n floats, all m of them kept in registers across the k loop, and each
    step of k one fused multiply-add per row (a splat of A's element times B's row: the product is exact,
    so fusing rounds nothing). product8's scalars, inlined into the floats loop, were vectorized by LLVM
    along k (gathers of B's columns and a horizontal sum per element): half of the bf16 sample's loop,
    and 0.30 us a 16x16x16 product measured alone, against 0.036 us for this."""
    if not (all(isinstance(x, types.IntegerLiteral) for x in (m, n, k)) and isinstance(into, types.BooleanLiteral)):
        return None
    rows, width, depth, adding = m.literal_value, n.literal_value, k.literal_value, into.literal_value

    def codegen(context, builder, sig, args):
        double = sig.args[0].dtype == types.float64
        i64, vec = ir.IntType(64), ir.VectorType(ir.DoubleType() if double else ir.FloatType(), width)
        size = 8 if double else 4
        a_at, b_at, o_at = (context.make_array(sig.args[x])(context, builder, args[x]).data for x in range(3))
        name = f"llvm.fma.v{width}{'f64' if double else 'f32'}"
        fma = builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(vec, [vec] * 3), name)

        def row(at, index):
            return builder.bitcast(builder.gep(at, [index]), vec.as_pointer())
        start = [builder.load(row(o_at, ir.Constant(i64, i * width)), align=size) if adding else
                 ir.Constant(vec, [0.0] * width) for i in range(rows)]
        before = builder.block
        head, body, done = (builder.append_basic_block(f"vproduct.{x}") for x in ("head", "body", "done"))
        builder.branch(head)
        builder.position_at_end(head)
        kk = builder.phi(i64)
        kk.add_incoming(args[6], before)
        sums = [builder.phi(vec) for _ in range(rows)]
        for x, y in zip(sums, start):
            x.add_incoming(y, before)
        builder.cbranch(builder.icmp_signed("<", kk, args[7]), body, done)
        builder.position_at_end(body)
        b = builder.load(row(b_at, builder.mul(kk, ir.Constant(i64, width))), align=size)
        undef, zeros = ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), width), [0] * width)
        for i in range(rows):
            x = builder.load(builder.gep(a_at, [builder.add(kk, ir.Constant(i64, i * depth))]))
            splat = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(ir.IntType(32), 0)), undef, zeros)
            sums[i].add_incoming(builder.call(fma, [splat, b, sums[i]]), body)
        kk.add_incoming(builder.add(kk, ir.Constant(i64, 1)), body)
        builder.branch(head)
        builder.position_at_end(done)
        for i in range(rows):
            builder.store(sums[i], row(o_at, ir.Constant(i64, i * width)), align=size)
        return context.get_dummy_value()
    return types.void(av, bv, out, m, n, k, k0, k1, into), codegen


@intrinsic
def fma_rows(typingctx, av, bv, cin, out, m, n, k):
    """out (m x n) = C + A B for float64 A (m x k), B (k x n) and C (``cin``, m x n), flat arrays, each
    element an fma chain in k order (DMMA's sum, mma.dot_f64); m, n and k constants. True where every
    element of out is finite. vproduct's code in doubles, but with C and D apart (dmma's loop keeps an
    accumulator chain's D in one of two buffers and writes the other, where it copied D in and out
    element by element: a quarter of the loop) and the finiteness test on the rows as they are stored
    (|x| < inf, a NaN fails it), not a second pass over D's bits. ``cin`` may be ``out``: every row of
    C is read before any is written."""
    if not all(isinstance(x, types.IntegerLiteral) for x in (m, n, k)):
        return None
    rows, width, depth = m.literal_value, n.literal_value, k.literal_value

    def codegen(context, builder, sig, args):
        i64, i32 = ir.IntType(64), ir.IntType(32)
        vec = ir.VectorType(ir.DoubleType(), width)
        a_at, b_at, c_at, o_at = (context.make_array(sig.args[x])(context, builder, args[x]).data for x in range(4))

        def intrinsic_fn(name, count):
            return builder.module.globals.get(name) or ir.Function(builder.module, ir.FunctionType(vec, [vec] * count),
                                                                    name)
        fma, fabs = intrinsic_fn(f"llvm.fma.v{width}f64", 3), intrinsic_fn(f"llvm.fabs.v{width}f64", 1)

        def row(at, index):
            return builder.bitcast(builder.gep(at, [ir.Constant(i64, index)]), vec.as_pointer())
        sums = [builder.load(row(c_at, i * width), align=8) for i in range(rows)]
        undef, zeros = ir.Constant(vec, ir.Undefined), ir.Constant(ir.VectorType(i32, width), [0] * width)
        for kk in range(depth):
            b = builder.load(row(b_at, kk * width), align=8)
            for i in range(rows):
                x = builder.load(builder.gep(a_at, [ir.Constant(i64, i * depth + kk)]))
                splat = builder.shuffle_vector(builder.insert_element(undef, x, ir.Constant(i32, 0)), undef, zeros)
                sums[i] = builder.call(fma, [splat, b, sums[i]])
        inf = ir.Constant(vec, [math.inf] * width)
        finite = None
        for i in range(rows):
            builder.store(sums[i], row(o_at, i * width), align=8)
            ok = builder.fcmp_ordered("<", builder.call(fabs, [sums[i]]), inf)
            finite = ok if finite is None else builder.and_(finite, ok)
        every = builder.bitcast(finite, ir.IntType(width))
        return builder.icmp_unsigned("==", every, ir.Constant(ir.IntType(width), (1 << width) - 1))
    return types.boolean(av, bv, cin, out, m, n, k), codegen


@numba.njit(cache=True, nogil=True)
def load_shared(lanes, base, ld, block_base, major, minor, limit, shift, shared, bits, regs):
    """wmma.load of the given lanes from shared memory into registers ``regs`` (arrays over the
    batch; each holds 32 / bits elements, element e of a lane the (e % len(major[0]))-th it reads:
    sm_70's repeated halves). Lane lanes[i]'s element e lies at byte base[i] + (major * ld[i] + minor)
    << shift (the tables by lane % 32) of its block's row of ``shared`` (viewed as the element type,
    of 1 << shift bytes), which starts at byte block_base[lane]. False where some element is out of
    bounds or misaligned (registers half written): mma.py's path then reports it. Addresses uint64."""
    distinct = major.shape[1]
    per = max(1, 32 // bits)
    size = np.uint64(1) << shift
    for i in range(lanes.size):
        lane = lanes[i]
        for j in range(len(regs)):
            word = np.uint64(0)
            for sub in range(per):
                e = (j * per + sub) % distinct
                addr = base[i] + ((major[lane & 31, e] * ld[i] + minor[lane & 31, e]) << shift)
                if addr > limit - size or addr & (size - np.uint64(1)):
                    return False
                word |= np.uint64(shared[(block_base[lane] + addr) >> shift]) << np.uint64(sub * bits)
            regs[j][lane] = word
    return True


@numba.njit(inline="always", cache=True)
def read_c(w, op, ptrs, counts, ctarget, acc, carried, s, size):
    """Warp w's C into s (matrix elements, float64): from ``acc`` where ``carried`` (its chain's
    previous mma left D there), else from its registers."""
    if carried:
        for i in range(size):
            s[i] = acc[i]
    else:
        for r in range(counts[2]):
            slot = op[C + r]
            for l in range(32):
                t = ctarget[l, r]
                if t >= 0:
                    s[t] = peek_f32(ptrs[slot] + 4 * (w * 32 + l))


@numba.njit(inline="always", cache=True)
def mma_floats(w, op, ptrs, m, n, k, block, steps, counts, ctarget, dsrc, fa, fb, s, d, p32, p64, acc, carried, write):
    """One warp's D = A B + C for f16/bf16/tf32 inputs and float32 C and D, A and B already decoded
    (fa, fb: (values, float32 values, top, low) of gather_inputs); True where proven exact, then D is
    in ``acc`` (its chain's values, matrix elements) and, if ``write``, in its registers. C is read from
    ``acc`` where ``carried`` (the chain's previous mma left it there), else from its registers.
    The proof takes the largest exponent and the lowest set bit over the whole warp's A, B and C (per
    hardware step of k): bounds of every element's."""
    av, av32, ta, tla = fa
    bv, bv32, tb, tlb = fb
    du = d.view(np.uint32)
    read_c(w, op, ptrs, counts, ctarget, acc, carried, s, m * n)
    for q in range(steps):
        k0, k1 = q * block, min(k, q * block + block)
        # C's exponent counts as at least 2**-126, a zero C's as 2**-133 (mma.EMIN_C, ZERO_C)
        biggest, finite = 0.0, True
        for i in range(m * n):
            biggest = max(biggest, abs(s[i]))
            finite &= s[i] - s[i] == 0.0
        ec = max(math.frexp(biggest)[1] - 1, -126) if biggest > 0.0 else -133
        top = max(ec, ta[q] + tb[q])
        if not (finite and ta[q] < NOT_FINITE and tb[q] < NOT_FINITE):
            return False
        # the tensor core aligns each element of D on its own top, the larger of its C's exponent and the
        # products' (one C much bigger than another, 2.18 and 35.1 in cudaTensorCoreGemm's first step,
        # would fail a bound of the whole warp): every product is on the grid 25 bits below the largest
        # top, and each C on the grid 25 bits below the products' top. A C at or above that top is a
        # float32 within 24 bits of its own exponent: on its grid already
        if tla[q] + tlb[q] < top - 25:
            return False
        if ta[q] + tb[q] > -1000:           # (else the step's products are all zero: every C on its grid)
            grid = 2.0 ** (25 - ta[q] - tb[q])
            whole = True
            for i in range(m * n):
                x = s[i] * grid
                whole &= x == math.floor(x)
            if not whole:
                return False
        # every term on one grid: their sum is exact in float64, in any order; where the products
        # are on the grid of their lowest set bit and their sizes add up to below 2**24 of its steps
        # (the samples' small integers), every partial sum of A B is a float32 too: float32 sums
        # them, twice as many at a time
        narrow = tla[q] + tlb[q]
        if narrow >= -126 and narrow + 24 <= 127 and (k1 - k0) * 2.0 ** (ta[q] + tb[q] + 2) < 2.0 ** (narrow + 24):
            vproduct(av32, bv32, p32, m, n, k, k0, k1, False)
            for i in range(m * n):
                s[i] += p32[i]
        else:
            product(av, bv, p64, m, n, k, k0, k1, 0.0)
            for i in range(m * n):
                s[i] += p64[i]
        bad = False
        for i in range(m * n):              # cut toward zero to float32; an exact zero is +0
            v = s[i]
            size = abs(v)
            bad |= not ((size >= 2.0 ** -126 or v == 0.0) and size < 2.0 ** 128)
            d[i] = np.float32(v)
            du[i] = du[i] - np.uint32(abs(np.float64(d[i])) > size) if v != 0.0 else np.uint32(0)
        if bad:
            return False
        for i in range(m * n):
            s[i] = d[i]                     # the next hardware step adds to this float32
    for i in range(m * n):
        acc[i] = s[i]
    if write:
        write_d(ptrs, op, w, dsrc, du, 4)
    return True


@intrinsic
def trailing_zeros(typingctx, value):
    """The number of trailing zero bits of a uint64 (64 for 0) as LLVM's cttz, which a vectorized loop
    keeps in vector registers (a table lookup is a scalar load per element)."""
    def codegen(context, builder, sig, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))
    return types.uint64(types.uint64), codegen


@intrinsic
def float_of(typingctx, bits):
    """The float64 whose bits are the uint64 ``bits``."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.DoubleType())
    return types.float64(types.uint64), codegen


@numba.njit(inline="always", cache=True)
def c_bounds(s, size):
    """(largest magnitude, exponent of the lowest set bit, all finite) of C's elements s[:size]
    (float64 values of float32s, so normal in float64); a zero bounds nothing (its lowest bit FAR).
    From the elements' bits, with no branch and no table, so that LLVM vectorizes the loop: the largest
    magnitude is the largest of the bits without the sign (their order is the values'), the lowest set
    bit the exponent less 1075 plus the significand's trailing zeros (the implicit bit 52 set: a
    significand of zeros counts 52). 0.25 -> 0.05 us for 256 elements, measured alone; an accumulator
    chain's first mma of every program asks it."""
    u = s.view(np.uint64)
    top, least, bad = np.uint64(0), FAR, np.uint64(0)
    for i in range(size):
        b = u[i] & np.uint64(0x7FFFFFFFFFFFFFFF)
        e = b >> np.uint64(52)
        bad |= np.uint64(e == np.uint64(0x7FF))
        top = max(top, b)
        low = np.int64(e) - 1075 + np.int64(trailing_zeros(b | np.uint64(1 << 52)))
        least = min(least, low if b != np.uint64(0) else FAR)
    return float_of(top), least, bad == np.uint64(0)


@intrinsic
def exponent_of(typingctx, value):
    """The exponent of a positive normal float64 (math.frexp's less one), from its bits: frexp is a call
    into libm, and mma_bounded asks it at every hardware step."""
    def codegen(context, builder, sig, args):
        u = builder.bitcast(args[0], ir.IntType(64))
        e = builder.and_(builder.lshr(u, ir.Constant(ir.IntType(64), 52)), ir.Constant(ir.IntType(64), 0x7FF))
        return builder.sub(e, ir.Constant(ir.IntType(64), 1023))
    return types.int64(types.float64), codegen


@numba.njit(inline="always", cache=True)
def pow2(e):
    """2**e for an integral e (an int or a float), from the table: 0 below 2**-1074, and 2**999 above it
    (the bounds it is compared with are below 2**128, so no comparison changes)."""
    return _POW2[min(max(np.int64(e), -_OFFSET), 999) + _OFFSET]


@numba.njit(cache=True, nogil=True)
def cut_steps64(av, bv, acc, p64, m, n, k, block, steps):
    """mma_bounded's steps where some step's products are not summed exactly in float32: each step's
    A B in float64 (exact: every term on one grid), added to acc and cut toward zero to float32.
    Called, not inlined: a float64 product beside the float32 one in mma_bounded made LLVM's code for
    the float32 steps slower (tf32's two steps 0.60 -> 0.36 us without it, measured alone); the
    samples' small integers never come here."""
    for q in range(steps):
        k0, k1 = q * block, min(k, q * block + block)
        product(av, bv, p64, m, n, k, k0, k1, 0.0)
        for i in range(m * n):
            acc[i] = cut_to_f32(np.float64(acc[i]) + p64[i])


@numba.njit(inline="always", cache=True)
def mma_bounded(m, n, k, block, steps, fa, fb, acc, bounds, p32, p64):
    """One warp's D = A B + C where C (``acc``, float32 values) is known only by bounds: bounds[0] is at
    least every element's magnitude, bounds[1] at most its lowest set bit's exponent (an accumulator
    chain's, kept from the mma that wrote it, or C's own: c_bounds). True where they prove the tensor
    core's rule (mma_floats) holds for every element, then D (each step's exact sum cut toward zero)
    is in acc and the bounds updated: |D| <= |C| + k 2**(ta + tb + 2), and D's lowest set bit is at
    least C's or the products' (cutting drops low bits only). So a GEMM's chain of mmas costs its
    products and one pass over D, not the four passes over C (largest exponent, finiteness, its grid,
    the range of the result) that the general proof takes at each mma.
    Sufficient, not necessary: a warp that fails goes to mma_floats, which looks at the elements."""
    av, av32, ta, tla = fa
    bv, bv32, tb, tlb = fb
    biggest, least = bounds[0], bounds[1]
    narrow = True                           # every step's A B summed exactly in float32
    for q in range(steps):                  # every step proven before acc changes
        k0, k1 = q * block, min(k, q * block + block)
        if not (ta[q] < NOT_FINITE and tb[q] < NOT_FINITE):
            return False
        # C's exponent for the alignment: at least 2**-126, a zero C's 2**-133 (mma.EMIN_C, ZERO_C)
        ec = max(exponent_of(biggest), -126) if biggest > 0.0 else -133
        top, lp = max(ec, ta[q] + tb[q]), tla[q] + tlb[q]
        if lp < top - 25:                                   # a product below the window
            return False
        if ta[q] + tb[q] > -1000 and least < ta[q] + tb[q] - 25:     # a C off the products' grid
            return False
        least = min(least, lp)
        grows = (k1 - k0) * pow2(ta[q] + tb[q] + 2)
        biggest += grows
        # every term, partial sum and D on the grid 2**least: C + A B exact in float64, every nonzero D
        # a normal float32
        if least < -126 or biggest >= 2.0 ** 127 or biggest >= pow2(least + 52):
            return False
        # the step's products on the grid of their lowest set bit, their sizes below 2**24 of its steps
        narrow &= lp >= -126 and lp + 24 <= 127 and grows < pow2(lp + 24)
    if m % 8 == 0 and n % 8 == 0 and biggest < pow2(least + 24):
        # C, every product and every partial sum, in any order and over all the steps, are multiples of
        # 2**least below 2**(least + 24): float32s (normal, least >= -126). Each step's cut then keeps its
        # exact sum, so D is C + A B summed in float32 straight into acc, with no float64 pass and no cut
        # per step (the samples' small integers: a tf32 mma's two steps were two products and two cuts).
        # An exact zero is +0, as the tensor core's (-0 + -0 gives -0 in float32)
        vproduct(av32, bv32, acc, m, n, k, 0, k, True)
        for i in range(m * n):
            if acc[i] == 0.0:
                acc[i] = 0.0
        bounds[0], bounds[1] = biggest, least
        return True
    if narrow:      # (the samples' C, scaled by beta / alpha: a float32 sum per step, then its cut)
        for q in range(steps):
            k0, k1 = q * block, min(k, q * block + block)
            vproduct(av32, bv32, p32, m, n, k, k0, k1, False)
            for i in range(m * n):
                acc[i] = cut_to_f32(np.float64(acc[i]) + np.float64(p32[i]))
    else:
        cut_steps64(av, bv, acc, p64, m, n, k, block, steps)
    bounds[0], bounds[1] = biggest, least
    return True


@numba.njit(inline="always", cache=True)
def write_d(ptrs, op, w, dsrc, bits, word):
    """Warp w's D registers (slots op[D:]) from ``bits`` (uint32 or uint64 by matrix element): register r
    of lane l holds element dsrc[l * registers + r]."""
    registers = dsrc.size // 32
    for r in range(registers):
        slot = op[D + r]
        for l in range(32):
            if word == 8:
                poke64(ptrs[slot] + 8 * (w * 32 + l), bits[dsrc[l * registers + r]])
            else:
                poke32(ptrs[slot] + 4 * (w * 32 + l), bits[dsrc[l * registers + r]])


@numba.njit(inline="always", cache=True)
def chain_state(slots, size):
    """The accumulator chains' values (matrix elements) and, per chain, whether they hold the warp's
    current D (live), whether its registers still lack it (dirty) and the row that wrote it."""
    return (np.zeros((slots, size), np.float32), np.zeros(slots, np.bool_), np.zeros(slots, np.bool_),
            np.zeros(slots, np.int64))


@numba.njit(inline="always", cache=True)
def not_finite(u):
    """1 where the f64 bits ``u`` are an infinity or a NaN (every exponent bit set), else 0: or-ed over a
    fragment's elements, without a branch."""
    return np.uint64((u >> np.uint64(52)) & np.uint64(0x7FF) == np.uint64(0x7FF))


@numba.njit(inline="always", cache=True)
def doubles_of(raw, size, vals):
    """An f64 fragment's elements (raw bits by matrix element) into vals; whether every one is finite.
    Branch-free, so that LLVM vectorizes it."""
    bad = np.uint64(0)
    for i in range(size):
        u = raw[i]
        vals[i] = float_of(u)
        bad |= not_finite(u)
    return bad == np.uint64(0)


@numba.njit(inline="always", cache=True)
def read_doubles(at, offs, size, vals):
    """A tile's f64 fragment into vals: element t from byte at + offs[t]; whether every one is finite."""
    bad = np.uint64(0)
    for t in range(size):
        u = peek64(at + offs[t])
        vals[t] = float_of(u)
        bad |= not_finite(u)
    return bad == np.uint64(0)


@numba.njit(inline="always", cache=True)
def line_stride(offs, lines, run, across):
    """Whether a tile's fragment (tile_at's offs: element t at byte offs[t]) is ``lines`` runs of ``run``
    side-by-side doubles, equally far apart: element (x, r) of run x is t = x * run + r, or r * lines + x
    where ``across`` (a col_major B: each run one column of B). The runs' stride in bytes, or -1."""
    stride = offs[run if not across else 1] - offs[0] if lines > 1 else 0
    if stride < 0:
        return np.int64(-1)
    for x in range(lines):
        for r in range(run):
            if offs[r * lines + x if across else x * run + r] != offs[0] + x * stride + 8 * r:
                return np.int64(-1)
    return stride


@numba.njit(inline="always", cache=True)
def read_lines(at, stride, vals, lines, run, across):
    """read_doubles for a fragment of runs (line_stride): each run's doubles read side by side, with no
    table of offsets (sizes constant: LLVM unrolls it). The sample's A and B tiles are runs of k = 4
    doubles, and each element through its offset was a seventh of dmma's loop."""
    bad = np.uint64(0)
    for x in range(lines):
        for r in range(run):
            u = peek64(at + x * stride + 8 * r)
            vals[r * lines + x if across else x * run + r] = float_of(u)
            bad |= not_finite(u)
    return bad == np.uint64(0)


def make(m, n, k, block):
    """floats, doubles and integers for one mMnNkK shape and hardware step of k: programs (the module
    docstring) of wmma.loads and mmas of that shape. The sizes are constants of the code (closure
    variables), so LLVM unrolls and vectorizes the loops over them. Their arguments: the warps to run,
    pos (per warp, the row it starts at; on return the row it stopped at, len(ops) when it ran them
    all), ptrs (the registers' addresses), ops (the rows), major/minor (the loads' tables), shared,
    block_base, limit (the batch's shared memory: address, each lane's block's row, a block's bytes),
    *target where each fragment element goes (unpack), dsrc (register r of D in lane l holds matrix
    element dsrc[l * registers + r]), counts (the A, B and C registers an mma reads), fragments (the
    program's A and B fragment ids), then the kind's own. A row stops its warp where a load's address is
    bad or an mma's sums are not proven exact: mma.py's path then answers that instruction."""
    jit = numba.njit(cache=True, nogil=True)
    # the sums are exact wherever they are used, so their order is free: reassociation lets LLVM vectorize
    exact_sums = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    steps = (k + block - 1) // block
    assert m % 2 == 0 and n % 8 == 0 and k <= 256, "product takes D's rows 2 and columns 8 at a time and sums " \
        "exactly in float32"

    @exact_sums
    def floats(warps, pos, ptrs, ops, major, minor, shared, block_base, limit, atarget, btarget, ctarget, dsrc,
               counts, fragments, bits, shift, values, exponents, lowest):
        """f16/bf16/tf32 inputs, float32 C and D; values/exponents/lowest the input type's tables
        (mma_native.input_table) by an element's bits shifted right by ``shift``."""
        av, av32 = np.zeros((fragments[0], m * k)), np.zeros((fragments[0], m * k), np.float32)
        bv, bv32 = np.zeros((fragments[1], k * n)), np.zeros((fragments[1], k * n), np.float32)
        ta, tla = np.empty((fragments[0], steps), np.int64), np.empty((fragments[0], steps), np.int64)
        tb, tlb = np.empty((fragments[1], steps), np.int64), np.empty((fragments[1], steps), np.int64)
        have_a, have_b = np.zeros(fragments[0], np.bool_), np.zeros(fragments[1], np.bool_)
        s, d = np.zeros(m * n), np.empty(m * n, np.float32)
        p32, p64 = np.empty(m * n, np.float32), np.empty(m * n)
        lanes, words = np.empty((3, 32), np.int64), np.empty((8, 32), np.uint64)
        acc, live, dirty, wrote = chain_state(fragments[2], m * n)
        known, bounds = np.zeros(fragments[2], np.bool_), np.zeros((fragments[2], 2))
        index, plan = plan_loads(ops, major, minor, atarget, btarget, counts, m, n, k)
        offs, known_ld = np.empty((plan.shape[0], plan.shape[2]), np.int64), np.zeros((plan.shape[0], 4), np.int64)
        held = (av, av32, bv, bv32, ta, tla, tb, tlb, have_a, have_b, s, d, p32, p64, lanes, words, acc, live, dirty,
                wrote, known, bounds, index, plan, offs, known_ld)
        av, av32, bv, bv32 = unmanaged(av), unmanaged(av32), unmanaged(bv), unmanaged(bv32)
        ta, tla, tb, tlb = unmanaged(ta), unmanaged(tla), unmanaged(tb), unmanaged(tlb)
        have_a, have_b, s, d, p32, p64 = unmanaged(have_a), unmanaged(have_b), unmanaged(s), unmanaged(d), \
            unmanaged(p32), unmanaged(p64)
        lanes, words, acc, live, dirty, wrote = unmanaged(lanes), unmanaged(words), unmanaged(acc), unmanaged(live), \
            unmanaged(dirty), unmanaged(wrote)
        known, bounds, index, plan, offs, known_ld = unmanaged(known), unmanaged(bounds), unmanaged(index), \
            unmanaged(plan), unmanaged(offs), unmanaged(known_ld)
        warps, pos, ptrs, ops, major, minor, block_base = unmanaged(warps), unmanaged(pos), unmanaged(ptrs), \
            unmanaged(ops), unmanaged(major), unmanaged(minor), unmanaged(block_base)
        atarget, btarget, ctarget, dsrc, counts = unmanaged(atarget), unmanaged(btarget), unmanaged(ctarget), \
            unmanaged(dsrc), unmanaged(counts)
        values, exponents, lowest = unmanaged(values), unmanaged(exponents), unmanaged(lowest)
        for wi in range(warps.size):
            w, p = warps[wi], pos[wi]
            have_a[:], have_b[:], live[:], dirty[:], known[:] = False, False, False, False, False
            while p < ops.shape[0]:
                op = ops[p]
                if op[0] == LANE:
                    f = op[LFRAGMENT]           # (its rounding done at the load, where this warp ran it)
                    if f < 0 or not (have_b[f] if op[LOPERAND] else have_a[f]):
                        lane_op(w, op, ptrs)
                elif op[0] == LOAD and index[p] >= 0 and load_planned(
                        w, op, ptrs, shared, block_base, limit, plan[index[p]], offs[index[p]], known_ld[index[p]],
                        m * k if op[OPERAND] == 0 else k * n, shift, values, exponents, lowest, k,
                        1 if op[OPERAND] == 0 else n, block, steps,
                        av[op[FRAGMENT]] if op[OPERAND] == 0 else bv[op[FRAGMENT]],
                        av32[op[FRAGMENT]] if op[OPERAND] == 0 else bv32[op[FRAGMENT]],
                        ta[op[FRAGMENT]] if op[OPERAND] == 0 else tb[op[FRAGMENT]],
                        tla[op[FRAGMENT]] if op[OPERAND] == 0 else tlb[op[FRAGMENT]]):
                    if op[OPERAND] == 0:        # (read straight into the fragment: plan_loads)
                        have_a[op[FRAGMENT]] = True
                    else:
                        have_b[op[FRAGMENT]] = True
                elif op[0] == LOAD:
                    if not load_warp(w, op, ptrs, major, minor, shared, block_base, limit, lanes, words,
                                     op[QUIET] == 0):
                        break
                    if op[ROUND] > 0:           # __float_to_tf32 between this load and its mma
                        for j in range(op[NREGS]):
                            for l in range(32):
                                words[j, l] = np.uint64(to_tf32(np.uint32(words[j, l]), op[ROUND] - 1))
                    f = op[FRAGMENT]            # an mma's A or B: decoded from the words it loaded
                    if f >= 0 and op[OPERAND] == 0:
                        decode_inputs(words, counts[0], atarget, bits, shift, values, exponents, lowest, k, 1, block,
                                      steps, av[f], av32[f], ta[f], tla[f])
                        have_a[f] = True
                    elif f >= 0:
                        decode_inputs(words, counts[1], btarget, bits, shift, values, exponents, lowest, k, n, block,
                                      steps, bv[f], bv32[f], tb[f], tlb[f])
                        have_b[f] = True
                else:
                    a, b = op[FA], op[FB]
                    if not have_a[a]:
                        gather_inputs(ptrs, op, A, counts[0], atarget, w, bits, shift, values, exponents, lowest,
                                      k, 1, block, steps, av[a], av32[a], ta[a], tla[a], words)
                        have_a[a] = True
                    if not have_b[b]:
                        gather_inputs(ptrs, op, B, counts[1], btarget, w, bits, shift, values, exponents, lowest,
                                      k, n, block, steps, bv[b], bv32[b], tb[b], tlb[b], words)
                        have_b[b] = True
                    c = op[SLOT]
                    carried = op[CARRY] == 1 and live[c]
                    if not carried and dirty[c]:        # (a chain's D not written yet: acc keeps it)
                        known[c] = False
                    elif not (carried and known[c]):    # C's bounds from its elements (mma_bounded)
                        read_c(w, op, ptrs, counts, ctarget, acc[c], carried, s, m * n)
                        biggest, least, known[c] = c_bounds(s, m * n)
                        bounds[c, 0], bounds[c, 1] = biggest, least
                        for i in range(m * n):
                            acc[c, i] = s[i]
                    if known[c] and mma_bounded(m, n, k, block, steps, (av[a], av32[a], ta[a], tla[a]),
                                                (bv[b], bv32[b], tb[b], tlb[b]), acc[c], bounds[c], p32, p64):
                        if op[KEEP] == 0:
                            write_d(ptrs, op, w, dsrc, acc[c].view(np.uint32), 4)
                    else:
                        known[c] = False
                        if not mma_floats(w, op, ptrs, m, n, k, block, steps, counts, ctarget, dsrc,
                                          (av[a], av32[a], ta[a], tla[a]), (bv[b], bv32[b], tb[b], tlb[b]), s, d,
                                          p32, p64, acc[c], carried, op[KEEP] == 0):
                            break
                    live[c], dirty[c], wrote[c] = True, op[KEEP] == 1, p
                p += 1
            if p < ops.shape[0]:                # a stop: what mma.py's path and the rows after it read
                for c in range(acc.shape[0]):   # into the registers: the chains' D
                    if dirty[c]:
                        for i in range(m * n):
                            d[i] = acc[c, i]
                        write_d(ptrs, ops[wrote[c]], w, dsrc, d.view(np.uint32), 4)
                for r in range(p):              # and the fragments loaded without writing them, and the
                    if ops[r, 0] == LOAD and ops[r, QUIET] == 1:        # roundings done at their loads
                        load_warp(w, ops[r], ptrs, major, minor, shared, block_base, limit, lanes, words, True)
                    elif ops[r, 0] == LANE and ops[r, LFRAGMENT] >= 0:
                        lane_op(w, ops[r], ptrs)
            pos[wi] = p
        keep_alive(held)

    @jit
    def doubles(warps, pos, ptrs, ops, major, minor, shared, block_base, limit, atarget, btarget, ctarget, dsrc,
                counts, fragments):
        """DMMA: each element of D an fma chain in k order starting from C (mma.dot_f64), here the CPU's
        own fused multiply-add (LLVM's llvm.fma, IEEE's rounding once, subnormals kept), eight columns of
        D a vector (vproduct in doubles). For finite A, B and C whose D comes out finite that is the
        H100's sum bit for bit: no infinity or NaN arose on the way (once infinite, an fma chain of finite
        products stays so), and NaN payloads, where the CPU's choice is not the H100's, never appear.
        A warp with an infinite or NaN element, or an infinite D, stops: mma.py's fma chain answers it.
        (Until tensor round 14 only exact products were taken, added in float64 element by element.)
        As in floats, an A or B fragment is decoded once (its fragment id: the sample's k-loop reads
        each A in four mmas, each B in two) and an accumulator chain keeps its D in the loop (the next
        mma's C), written to its registers where the chain ends or the warp stops."""
        raw_a, raw_b, raw_c = np.zeros(m * k, np.uint64), np.zeros(k * n, np.uint64), np.zeros(m * n, np.uint64)
        av, bv = np.empty((fragments[0], m * k)), np.empty((fragments[1], k * n))
        fin_a, fin_b = np.zeros(fragments[0], np.bool_), np.zeros(fragments[1], np.bool_)
        have_a, have_b = np.zeros(fragments[0], np.bool_), np.zeros(fragments[1], np.bool_)
        acc, cur = np.zeros((fragments[2], 2, m * n)), np.zeros(fragments[2], np.int64)
        live, dirty, wrote = np.zeros(fragments[2], np.bool_), np.zeros(fragments[2], np.bool_), \
            np.zeros(fragments[2], np.int64)
        lanes, words = np.empty((3, 32), np.int64), np.empty((8, 32), np.uint64)
        index, plan = plan_loads(ops, major, minor, atarget, btarget, counts, m, n, k)
        offs, known_ld = np.empty((plan.shape[0], plan.shape[2]), np.int64), np.zeros((plan.shape[0], 6), np.int64)
        known_ld[:, 5] = -2                   # (4, 5: the stride line_stride was asked for and its answer)
        held = (raw_a, raw_b, raw_c, av, bv, fin_a, fin_b, have_a, have_b, acc, cur, live, dirty, wrote, lanes, words,
                index, plan, offs, known_ld)          # (their views and their arguments' uncounted: floats' unmanaged)
        raw_a, raw_b, raw_c, av, bv = unmanaged(raw_a), unmanaged(raw_b), unmanaged(raw_c), unmanaged(av), unmanaged(bv)
        fin_a, fin_b, have_a, have_b = unmanaged(fin_a), unmanaged(fin_b), unmanaged(have_a), unmanaged(have_b)
        acc, cur = unmanaged(acc), unmanaged(cur)
        live, dirty, wrote, lanes = unmanaged(live), unmanaged(dirty), unmanaged(wrote), unmanaged(lanes)
        words, index, plan, offs, known_ld = unmanaged(words), unmanaged(index), unmanaged(plan), unmanaged(offs), \
            unmanaged(known_ld)
        warps, pos, ptrs, ops, major, minor, block_base = unmanaged(warps), unmanaged(pos), unmanaged(ptrs), \
            unmanaged(ops), unmanaged(major), unmanaged(minor), unmanaged(block_base)
        atarget, btarget, ctarget, dsrc, counts = unmanaged(atarget), unmanaged(btarget), unmanaged(ctarget), \
            unmanaged(dsrc), unmanaged(counts)
        for wi in range(warps.size):
            w, p = warps[wi], pos[wi]
            have_a[:], have_b[:], live[:], dirty[:] = False, False, False, False
            while p < ops.shape[0]:
                op = ops[p]
                if op[0] == LANE:
                    lane_op(w, op, ptrs)
                    p += 1
                    continue
                if op[0] == LOAD:
                    f, i = op[FRAGMENT], index[p]   # an mma's A or B, from one tile: decoded as read (tile_at)
                    at = tile_at(w, op, ptrs, shared, block_base, limit, plan[i], offs[i], known_ld[i],
                                 m * k if op[OPERAND] == 0 else k * n) if i >= 0 else -1
                    if at >= 0 and (known_ld[i, 4] != known_ld[i, 0] or known_ld[i, 5] == -2):
                        known_ld[i, 4] = known_ld[i, 0]
                        known_ld[i, 5] = line_stride(offs[i], m, k, False) if op[OPERAND] == 0 else \
                            line_stride(offs[i], n, k, True)
                    if at >= 0 and op[OPERAND] == 0:
                        if known_ld[i, 5] >= 0:
                            fin_a[f] = read_lines(at + offs[i, 0], known_ld[i, 5], av[f], m, k, False)
                        else:
                            fin_a[f] = read_doubles(at, offs[i], m * k, av[f])
                        have_a[f] = True
                    elif at >= 0:
                        if known_ld[i, 5] >= 0:
                            fin_b[f] = read_lines(at + offs[i, 0], known_ld[i, 5], bv[f], n, k, True)
                        else:
                            fin_b[f] = read_doubles(at, offs[i], k * n, bv[f])
                        have_b[f] = True
                    elif not load_warp(w, op, ptrs, major, minor, shared, block_base, limit, lanes, words, True):
                        break
                    p += 1
                    continue
                a, b, c = op[FA], op[FB], op[SLOT]
                if not have_a[a]:
                    unpack(ptrs, op, A, counts[0], atarget, 64, w, raw_a)
                    fin_a[a] = doubles_of(raw_a, m * k, av[a])
                    have_a[a] = True
                if not have_b[b]:
                    unpack(ptrs, op, B, counts[1], btarget, 64, w, raw_b)
                    fin_b[b] = doubles_of(raw_b, k * n, bv[b])
                    have_b[b] = True
                if not (fin_a[a] and fin_b[b]):
                    break
                nxt = 1 - cur[c]                # D goes to the chain's other buffer: a stop keeps cur[c]'s
                src = cur[c]
                if not (op[CARRY] == 1 and live[c]):
                    unpack(ptrs, op, C, counts[2], ctarget, 64, w, raw_c)
                    if not doubles_of(raw_c, m * n, acc[c, nxt]):
                        break
                    src = nxt
                if not fma_rows(av[a], bv[b], acc[c, src], acc[c, nxt], m, n, k):
                    break
                cur[c] = nxt
                if op[KEEP] == 0:
                    write_d(ptrs, op, w, dsrc, acc[c, nxt].view(np.uint64), 8)
                live[c], dirty[c], wrote[c] = True, op[KEEP] == 1, p
                p += 1
            if p < ops.shape[0]:                # a stop: the chains' D not written yet, into their registers,
                for c in range(acc.shape[0]):   # and the fragments loaded without writing them
                    if dirty[c]:
                        write_d(ptrs, ops[wrote[c]], w, dsrc, acc[c, cur[c]].view(np.uint64), 8)
                for r in range(p):
                    if ops[r, 0] == LOAD and ops[r, QUIET] == 1:
                        load_warp(w, ops[r], ptrs, major, minor, shared, block_base, limit, lanes, words, True)
            pos[wi] = p
        keep_alive(held)

    @jit
    def integers(warps, pos, ptrs, ops, major, minor, shared, block_base, limit, atarget, btarget, ctarget, dsrc,
                 counts, fragments, abits, asigned, bbits, bsigned, sat):
        """Integer mma: exact, wrapping to 32 bits or clamped (.satfinite); always proven. A B is summed
        in float32 (product): at most k * 255 * 255 < 2**24 (k <= 256), every partial sum exact."""
        raw_a, raw_b, raw_c = np.zeros(m * k, np.uint64), np.zeros(k * n, np.uint64), np.zeros(m * n, np.uint64)
        av, bv = np.zeros((fragments[0], m * k), np.float32), np.zeros((fragments[1], k * n), np.float32)
        have_a, have_b = np.zeros(fragments[0], np.bool_), np.zeros(fragments[1], np.bool_)
        ab = np.empty(m * n, np.float32)
        registers = dsrc.size // 32
        lanes, words = np.empty((3, 32), np.int64), np.empty((8, 32), np.uint64)
        for wi in range(warps.size):
            w, p = warps[wi], pos[wi]
            have_a[:], have_b[:] = False, False
            while p < ops.shape[0]:
                op = ops[p]
                if op[0] == LANE:
                    lane_op(w, op, ptrs)
                    p += 1
                    continue
                if op[0] == LOAD:
                    if not load_warp(w, op, ptrs, major, minor, shared, block_base, limit, lanes, words, True):
                        break
                    p += 1
                    continue
                a, b = op[FA], op[FB]
                if not have_a[a]:
                    unpack(ptrs, op, A, counts[0], atarget, abits, w, raw_a)
                    for i in range(m * k):
                        x = np.int64(raw_a[i])
                        av[a, i] = x - (1 << abits) if asigned and x >= 1 << (abits - 1) else x
                    have_a[a] = True
                if not have_b[b]:
                    unpack(ptrs, op, B, counts[1], btarget, bbits, w, raw_b)
                    for i in range(k * n):
                        x = np.int64(raw_b[i])
                        bv[b, i] = x - (1 << bbits) if bsigned and x >= 1 << (bbits - 1) else x
                    have_b[b] = True
                unpack(ptrs, op, C, counts[2], ctarget, 32, w, raw_c)
                vproduct(av[a], bv[b], ab, m, n, k, 0, k, False)
                for r in range(registers):
                    for l in range(32):
                        x = dsrc[l * registers + r]
                        c = np.int64(raw_c[x])
                        v = (c - (1 << 32) if c >= 1 << 31 else c) + np.int64(ab[x])
                        poke32(ptrs[op[D + r]] + 4 * (w * 32 + l),
                               np.uint32((min(max(v, -2 ** 31), 2 ** 31 - 1) if sat else v) & 0xFFFFFFFF))
                p += 1
            pos[wi] = p

    return {"floats": floats, "doubles": doubles, "integers": integers}
