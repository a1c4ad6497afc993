"""A program of doubles (dmma's unrolled k-loop) as straight-line native code, built per program.

mma_loops' ``doubles`` runs any program row by row: at every row it reads the row's fields, tests the
fragment flags and reloads the registers' addresses, through memory that every store may alias, and
that bookkeeping, not the fused multiply-adds, was most of its time (dmma round 15: 0.074 us a mma
for 32 vector fmas of work). A GEMM's k-loop program is the same rows for every warp and every
launch, so here it is compiled into a function with its rows known: the tiles' element offsets (for
the row stride the first call saw), the fragments' layouts, which mma reads which load's fragment and
which chain's D, all constants. For each warp the function

- first makes the checks tile_at makes, for every load (each base and stride register the same in
  the warp's 32 lanes, the stride the one compiled in, every element inside the block's shared memory
  and aligned); a warp that fails one is left where it was (row ``start``);
- then runs the mmas chain by chain (an accumulator chain: each mma's C the D before), two chains
  that read the same B fragments side by side, each mma as mma_loops.fma_rows sums (each row of D
  eight doubles in one vector, one llvm.fma per row and step of k, in k order: DMMA's sum wherever
  A, B, C and D are finite; an element's chain is in k order whatever order the chains run in), and
  writes each D that the loop would write to its registers as it gets there;
- and counts the warp done (pos = rows) only if every D it wrote is finite.

Infinities and NaNs need no test on the inputs: an fma with an infinite or NaN factor or addend never
gives a finite result, and every element of A, B and C reaches some D element through such fmas, so a
non-finite input shows in a D. A warp left at ``start`` then runs mma_loops' loop from there, which
stops where the instructions' own paths must answer (the address, mma.py's fma chain), exactly as
before: the function takes only programs that write no register they read, nor one register twice
(plan), so what it wrote for that warp is rewritten by the loop with the same values.

Programs it does not take (LANE rows, fragments from registers a program's mma wrote, chains whose
C is another's D) keep the row-by-row loop; rows before the last load it does not take (a load of C
from global memory, which stops every warp) are left to the loop and the instructions' own paths. The
code is keyed by the program's structure, not its register names or its loads' constant offsets
(arguments), so the sixteen k-chunks of dmmaTensorCoreGemm share one function, kept in the native-code
disk cache (compiled.cache_dir)."""
from __future__ import annotations

import ctypes
import hashlib
import math
import os
import time
from pathlib import Path

import numpy as np

from . import pace
from .mma_native import (A, B, BASE, BASE_WORD, C, D, DISTINCT, ELEMENT_BITS, ESIZE, FA, FB, FRAGMENT, KEEP, LD,
                         LD_IMM, LOAD, MMA, OFFSET, OPERAND, QUIET, TABLE, WORD)

_BUILT = {}             # structure key -> (engine, function)
# LLVM's passes for this code: instruction combining turns the element moves into shuffles and folds
# A's splats into the fmas' broadcast loads. The -O1 pipeline gave the same code in 7 to 11 s of CPU
# for dmmaTensorCoreGemm's program (128 mmas), these 0.2 s (code generation about 2 s either way)
PASSES = ("instruction_combine", "simplify_cfg", "dead_code_elimination")
_FUNC = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)
_VERSION = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


class Straight:
    """One program's straight-line code: called as ``straight(warps, pos, ptrs, shared, block_base, limit)``
    it runs every warp whose pos is ``start`` to the end (pos = rows) or leaves it there. ``start``: the row
    after the last row it does not take (a load of C from global memory, which stops every warp: the
    instruction's own path answers it, and the warps come back at the next row)."""

    def __init__(self, spec, order, offsets, rows):
        self.spec, self.order, self.offsets, self.rows = spec, order, offsets, rows
        self.start = spec[-2]
        self.fn = None

    def __call__(self, warps, pos, ptrs, shared, block_base, limit):
        if self.fn is None:
            self.fn = _function(self.spec)
        regs = np.ascontiguousarray(ptrs[self.order], np.int64)
        return self.fn(warps.ctypes.data, warps.size, pos.ctypes.data, regs.ctypes.data, shared,
                       block_base.ctypes.data, limit, self.offsets.ctypes.data)


def plan(ops, form, major, minor, ptrs, warps):
    """The Straight of a doubles program (mma_runs.Run's rows), or None where it has rows this code does
    not take. The loads' row strides held in registers are read from the first warp's lane 0 (the code is
    for that stride; a warp with another is left to the loop)."""
    m, n, k = form.shape
    registers = form.dsrc.size // 32
    counts = [int(x) for x in form.counts]
    atarget, btarget, ctarget = form.targets
    if form.kind != "doubles" or len(ops) < 2 or registers * 32 != m * n:
        return None
    order, canon = [], {}

    def reg(slot):
        if slot not in canon:
            canon[slot] = len(order)
            order.append(int(slot))
        return canon[slot]
    w0 = int(warps[0])
    loads, mmas, offsets, fragment_of = [], [], [], ({}, {})
    written, stored, from_memory, dvalue, successor = set(), set(), set(), {}, {}
    same_layout = np.array_equal(ctarget.ravel(), form.dsrc)
    start = 1 + max([p for p, op in enumerate(ops) if not (op[0] == MMA or op[0] == LOAD and _tiled(op))], default=-1)
    for op in ops[start:]:
        if op[0] == LOAD:
            use = int(op[OPERAND])
            if op[LD] >= 0:
                ld = int(ctypes.c_uint32.from_address(int(ptrs[op[LD]]) + 4 * 32 * w0).value)
                ld_reg = reg(op[LD])
                from_memory.add(ld_reg)
            else:
                ld, ld_reg = int(op[LD_IMM]), -1
            target = atarget if use == 0 else btarget
            offs = [None] * (m * k if use == 0 else k * n)
            tab, distinct = int(op[TABLE]), int(op[DISTINCT])
            for j in range(counts[use]):
                e = j % distinct
                for lane in range(32):
                    t = int(target[lane, j])
                    if t >= 0:
                        offs[t] = (int(major[tab, lane, e]) * ld + int(minor[tab, lane, e])) * 8
            if any(x is None for x in offs):
                return None
            base = reg(op[BASE]) if op[BASE] >= 0 else -1
            from_memory.add(base)
            loads.append((use, base, int(op[BASE_WORD]), ld_reg, ld, tuple(offs)))
            fragment_of[use][int(op[FRAGMENT])] = len(loads) - 1
            offsets.append(int(op[OFFSET]))
            continue
        x = len(mmas)
        a, b = fragment_of[0].get(int(op[FA])), fragment_of[1].get(int(op[FB]))
        aregs = tuple(reg(r) for r in op[A:A + counts[0]])
        bregs = tuple(reg(r) for r in op[B:B + counts[1]])
        for given, regs_ in ((a, aregs), (b, bregs)):
            if given is None:
                if written & set(regs_):
                    return None
                from_memory.update(regs_)
        cregs = tuple(reg(r) for r in op[C:C + counts[2]])
        dregs = tuple(reg(r) for r in op[D:D + registers])
        src = [dvalue.get(r) for r in cregs]
        if src[0] is not None and src == [(src[0][0], r) for r in range(len(cregs))] and \
                len(cregs) == registers and same_layout and src[0][0] not in successor:
            pred = src[0][0]              # (an accumulator chain: its C the D before)
            successor[pred] = x
        elif written & set(cregs):
            return None
        else:
            pred = -1
            from_memory.update(cregs)
        keep = int(op[KEEP])
        for r, i in enumerate(dregs):
            dvalue[i] = (x, r)
        if keep == 0:
            if stored & set(dregs):
                return None
            stored.update(dregs)
        written.update(dregs)
        mmas.append((a, b, aregs, bregs, cregs, dregs, keep, pred))
    # D goes to its registers as each chain gets there, and a warp that stops later runs the program
    # again from ``start``: so no register it writes may be one it reads, nor written twice
    if not mmas or stored & from_memory or written & {x for ld in loads for x in (ld[1], ld[3])}:
        return None
    chains = []
    for x, mma in enumerate(mmas):
        if mma[7] < 0:
            chain = [x]
            while chain[-1] in successor:
                chain.append(successor[chain[-1]])
            chains.append(tuple(chain))
    groups, paired = [], set()
    for i, chain in enumerate(chains):        # two chains that read the same B fragments, step by step
        if i in paired:
            continue
        paired.add(i)
        key = [mmas[x][1] if mmas[x][1] is not None else mmas[x][3] for x in chain]
        mate = next((j for j in range(i + 1, len(chains)) if j not in paired and len(chains[j]) == len(chain)
                     and key == [mmas[x][1] if mmas[x][1] is not None else mmas[x][3] for x in chains[j]]), None)
        if mate is not None:
            paired.add(mate)
            groups.append((chain, chains[mate]))
        else:
            groups.append((chain,))
    spec = (form.shape, tuple(counts), tuple(int(x) for x in form.dsrc),
            *(tuple(int(x) for x in t.ravel()) for t in form.targets), tuple(loads), tuple(mmas), tuple(groups),
            start, len(ops))
    return Straight(spec, np.array(order, np.int64), np.array(offsets, np.int64), len(ops))


def _tiled(op):
    """Whether a load row is one this code reads: an mma's A or B fragment (not written to its registers)
    of doubles from a tile."""
    return op[FRAGMENT] >= 0 and op[QUIET] == 1 and op[ESIZE] == 8 and op[ELEMENT_BITS] == 64 and op[WORD] == 8 \
        and op[OPERAND] in (0, 1)


def _function(spec):
    """The compiled function of ``spec``: from this process's table, the disk cache, or LLVM."""
    if spec in _BUILT:
        return _BUILT[spec][1]
    from . import compiled
    j = compiled._jit()
    llvm = j["llvm"]
    key = hashlib.sha256((_VERSION + repr(spec)).encode()).hexdigest()[:32]
    path = compiled.cache_dir() / f"dmma-{key}.o"
    try:
        obj = path.read_bytes()
    except OSError:
        obj = None
    if obj is None:
        t0 = time.thread_time()
        mod = compiled.parse_module(j, build_ir(spec), j["tm"])
        pb = llvm.create_pass_builder(j["tm"], llvm.create_pipeline_tuning_options(speed_level=1))
        compiled.function_passes(j, mod, pb, PASSES)
        obj = j["tm"].emit_object(mod)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            tmp.write_bytes(obj)
            tmp.replace(path)
        except OSError:
            pass
        pace.not_counted_by_running(time.thread_time() - t0)      # (a build is not the kernel's time)
    engine = compiled.load_object(j, obj)
    fn = _FUNC(engine.get_function_address("dmma_program"))
    _BUILT[spec] = (engine, fn)
    return fn


def build_ir(spec) -> str:
    """The LLVM IR of ``dmma_program(warps, nwarps, pos, regs, shared, block_base, limit, offsets)``:
    regs[i] the address of the program's i-th register's array over the batch (plan's order), offsets[j]
    the j-th load's constant offset. Returns how many warps it ran. The mmas go chain by chain, two
    chains that share their B fragments together (16 rows of D and a B in the CPU's 32 vector
    registers, where the program's order keeps eight chains' 64 rows live), each chain's D to its
    registers as it is done: an element's fma chain is in k order either way."""
    from llvmlite import ir
    (m, n, k), counts, dsrc, atarget, btarget, ctarget, loads, mmas, groups, start, total = spec
    registers = len(dsrc) // 32
    atarget, btarget, ctarget = (np.array(t).reshape(32, -1) for t in (atarget, btarget, ctarget))
    i1, i32, i64, dbl = ir.IntType(1), ir.IntType(32), ir.IntType(64), ir.DoubleType()
    vec, lanes32 = ir.VectorType(dbl, n), ir.VectorType(dbl, 32)
    mod = ir.Module(name="dmma_straight")
    p64 = i64.as_pointer()
    fn = ir.Function(mod, ir.FunctionType(i64, [p64, i64, p64, p64, i64, p64, i64, p64]), name="dmma_program")
    warps, nwarps, pos, regs, shared, block_base, limit, offsets = fn.args
    for x in (warps, pos, regs, block_base, offsets):
        x.add_attribute("noalias")
    fma = ir.Function(mod, ir.FunctionType(vec, [vec] * 3), name=f"llvm.fma.v{n}f64")
    fabs = ir.Function(mod, ir.FunctionType(vec, [vec]), name=f"llvm.fabs.v{n}f64")
    entry, head, body, compute, done, nxt, out = (fn.append_basic_block(x) for x in (
        "entry", "head", "body", "compute", "done", "next", "out"))
    bld = ir.IRBuilder(entry)

    def c64(x):
        return ir.Constant(i64, x)

    def c32(x):
        return ir.Constant(i32, x)
    used = {x for ld in loads for x in (ld[1], ld[3]) if x >= 0} | {x for mma in mmas for x in (*mma[2], *mma[3],
                                                                                              *mma[4], *mma[5])}
    reg_at = {i: bld.load(bld.gep(regs, [c64(i)])) for i in sorted(used)}
    off_at = [bld.load(bld.gep(offsets, [c64(i)])) for i in range(len(loads))]
    bld.branch(head)

    bld.position_at_end(head)
    wi, ran = bld.phi(i64, "wi"), bld.phi(i64, "ran")
    wi.add_incoming(c64(0), entry)
    ran.add_incoming(c64(0), entry)
    bld.cbranch(bld.icmp_signed("<", wi, nwarps), body, out)

    # ---- the checks (tile_at's), warp w
    bld.position_at_end(body)
    w = bld.load(bld.gep(warps, [wi]))
    ok = bld.icmp_signed("==", bld.load(bld.gep(pos, [wi])), c64(start))

    def lanes(i, width):
        """Register i's 32 lanes of warp w: a vector of ``width``-bit integers."""
        t = ir.VectorType(ir.IntType(width), 32)
        return bld.load(bld.inttoptr(bld.add(reg_at[i], bld.mul(w, c64(4 * width))), t.as_pointer()),
                        align=width // 8)

    def same(v, value=None):
        """Whether the 32 lanes of v all equal lane 0's (or ``value``)."""
        t = v.type
        first = bld.extract_element(v, c32(0)) if value is None else value
        splat = bld.shuffle_vector(bld.insert_element(ir.Constant(t, ir.Undefined), first, c32(0)),
                                   ir.Constant(t, ir.Undefined), ir.Constant(ir.VectorType(i32, 32), [0] * 32))
        differ = bld.bitcast(bld.icmp_unsigned("!=", v, splat), i32)
        return bld.icmp_unsigned("==", differ, c32(0))
    base_value, checked_ld = {}, set()
    shared_row = bld.add(shared, bld.load(bld.gep(block_base, [bld.mul(w, c64(32))])))
    tile = []
    for j, (use, base, word, ld_reg, ld, offs) in enumerate(loads):
        if ld_reg >= 0 and (ld_reg, ld) not in checked_ld:
            checked_ld.add((ld_reg, ld))
            ok = bld.and_(ok, same(lanes(ld_reg, 32), c32(ld)))
        if base >= 0 and (base, word) not in base_value:
            v = lanes(base, 8 * word)
            ok = bld.and_(ok, same(v))
            x = bld.extract_element(v, c32(0))
            base_value[base, word] = x if word == 8 else bld.zext(x, i64)
        b0 = off_at[j]
        if base >= 0:
            b0 = bld.add(b0, base_value[base, word])
            if word == 4:
                b0 = bld.and_(b0, c64(0xFFFFFFFF))
        hi, bits_or = max([0, *offs]), 0
        for x in offs:
            bits_or |= x
        ok = bld.and_(ok, bld.icmp_signed(">=", b0, c64(0)))
        ok = bld.and_(ok, bld.icmp_signed("<=", bld.add(b0, c64(hi)), bld.sub(limit, c64(8))))
        ok = bld.and_(ok, bld.icmp_unsigned("==", bld.and_(bld.or_(b0, c64(bits_or)), c64(7)), c64(0)))
        tile.append(bld.add(b0, shared_row))
    bld.cbranch(ok, compute, nxt)

    # ---- the program, chain by chain
    bld.position_at_end(compute)
    undef = ir.Constant(vec, ir.Undefined)

    def splat_of(x):
        return bld.shuffle_vector(bld.insert_element(undef, x, c32(0)), undef,
                                  ir.Constant(ir.VectorType(i32, n), [0] * n))

    def double_at(address):
        return bld.load(bld.inttoptr(address, dbl.as_pointer()), align=8)

    def tile_elements(at, offs):
        """The elements at byte at + offs[t], runs of side-by-side doubles read as vectors."""
        order = sorted(range(len(offs)), key=lambda t: offs[t])
        vals, i = [None] * len(offs), 0
        while i < len(order):
            run = 1
            while i + run < len(order) and run < 8 and offs[order[i + run]] == offs[order[i]] + 8 * run:
                run += 1
            v = bld.load(bld.inttoptr(bld.add(at, c64(offs[order[i]])), ir.VectorType(dbl, run).as_pointer()),
                         align=8)
            for r in range(run):
                vals[order[i + r]] = bld.extract_element(v, c32(r))
            i += run
        return vals

    def vectors(elements, count):
        out = []
        for i in range(count):
            v = undef
            for jj in range(n):
                v = bld.insert_element(v, elements[i * n + jj], c32(jj))
            out.append(v)
        return out

    def register_lanes(i):
        return bld.load(bld.inttoptr(bld.add(reg_at[i], bld.mul(w, c64(256))), lanes32.as_pointer()), align=8)

    def from_registers(regs_, target, size):
        vals, got = [None] * size, [register_lanes(i) for i in regs_]
        for r in range(len(regs_)):
            for lane in range(32):
                t = int(target[lane, r])
                if t >= 0:
                    vals[t] = bld.extract_element(got[r], c32(lane))
        return vals

    def a_element(mma, t):
        if mma[0] is not None:
            return double_at(bld.add(tile[mma[0]], c64(loads[mma[0]][5][t])))
        return from_registers(mma[2], atarget, m * k)[t]
    finite = None
    inf = ir.Constant(vec, [math.inf] * n)
    for group in groups:
        sums = [vectors(from_registers(mmas[chain[0]][4], ctarget, m * n), m) for chain in group]
        for step in range(len(group[0])):
            b_rows = None
            for c, chain in enumerate(group):
                mma = mmas[chain[step]]
                if b_rows is None:          # (the group's chains read one B at each step)
                    b_rows = vectors(tile_elements(tile[mma[1]], loads[mma[1]][5]) if mma[1] is not None
                                     else from_registers(mma[3], btarget, k * n), k)
                for kk in range(k):
                    for i in range(m):
                        sums[c][i] = bld.call(fma, [splat_of(a_element(mma, i * k + kk)), b_rows[kk], sums[c][i]])
                if mma[6] == 0:             # (a D the loop keeps for the chain's next mma is not written)
                    for s_ in sums[c]:
                        fin = bld.fcmp_ordered("<", bld.call(fabs, [s_]), inf)
                        finite = fin if finite is None else bld.and_(finite, fin)
                    for r, i in enumerate(mma[5]):
                        v = ir.Constant(lanes32, ir.Undefined)
                        for lane in range(32):
                            e = dsrc[lane * registers + r]
                            v = bld.insert_element(v, bld.extract_element(sums[c][e // n], c32(e % n)), c32(lane))
                        bld.store(v, bld.inttoptr(bld.add(reg_at[i], bld.mul(w, c64(256))), lanes32.as_pointer()),
                                  align=8)
    every = ir.Constant(i1, 1) if finite is None else bld.icmp_unsigned(
        "==", bld.bitcast(finite, ir.IntType(n)), ir.Constant(ir.IntType(n), (1 << n) - 1))
    bld.cbranch(every, done, nxt)

    bld.position_at_end(done)
    bld.store(c64(total), bld.gep(pos, [wi]))
    ran1 = bld.add(ran, c64(1))
    bld.branch(nxt)

    bld.position_at_end(nxt)
    counted = bld.phi(i64)
    counted.add_incoming(ran, body)
    counted.add_incoming(ran, compute)
    counted.add_incoming(ran1, done)
    wi.add_incoming(bld.add(wi, c64(1)), nxt)
    ran.add_incoming(counted, nxt)
    bld.branch(head)

    bld.position_at_end(out)
    bld.ret(ran)
    return str(mod)
