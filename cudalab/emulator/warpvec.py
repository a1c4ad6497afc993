"""A warp as one vector: a run of shuffle segments of a region with cuts as 32-wide LLVM vectors.

A reduction's ladder ``v += __shfl_down_sync(m, v, o)`` is, in a region with cuts (regions.py,
"Cuts"), one segment per shuffle: the shuffle, an add, a ``mov`` of the next offset. Run as any
segment (regiongen.CutRegionBuilder._segment), each is a loop over the block's threads that loads
every lane's value and its partner's from the block's buffer and stores the sum back: five trips
through the buffer for a 32-lane reduction. Here the segments of such a run go warp by warp instead,
each warp's registers one ``<32 x iN>`` value held in SSA from the run's first shuffle to its last,
and each shuffle a ``shufflevector`` of it: a warp's 32 lanes load their input once and store
what lives after the run once. Shuffles read only their own warp's lanes, and the run holds
nothing else that another warp could see (no memory, no barrier), so warp by warp is lock step's
bytes.

What a run may hold (``plan``), everything else going the usual way: segments that start with an
unguarded ``shfl.sync`` (its lane offset and clamp constants: immediates, or registers set once by
a ``mov`` of one), have one phase, no branch, guard or memory access, and integer arithmetic
(add, sub, and, or, xor, not, mov, shifts by constants) or float32 add and sub as nvcc writes them
by default (round to nearest, no ``.ftz``, not fused with a multiply), on registers of the
instruction's width. Such code cannot stop a thread (no bail-outs), so a warp never goes ahead of
a thread that stopped. Whole warps only: a region with shuffles runs natively only where blocks
are whole warps and every lane is active (regions.Runner), so a partial last warp or an inactive
lane never reaches this code; the interpreter's shuffles take those. ``CUDALAB_WARP_VECTORS=0``
builds every segment as before (to compare the two).
"""
from __future__ import annotations

import os

import numpy as np
from llvmlite import ir

from . import decode as dec
from .engine import K_NORMAL
from .llvmgen import F32, I1, I8, I32, I64, INT, Skip, kind_of
from .operands import imm_value
from .warp import shfl_source

WARP = 32
_INT_OPS = {"add", "sub", "and", "or", "xor", "not", "mov", "shl", "shr"}


def enabled() -> bool:
    """``CUDALAB_WARP_VECTORS=0`` turns warp vectors off (part of the native code's fingerprint)."""
    return os.environ.get("CUDALAB_WARP_VECTORS", "1").strip() != "0"


def lane_map(mode, b, c):
    """(source lane, in range) for each of a warp's 32 lanes of ``shfl.sync.mode`` with lane operand
    ``b`` and clamp ``c`` (constants), by the interpreter's rule (warp.shfl_source)."""
    j, ok = shfl_source(mode, np.arange(WARP, dtype=np.int64), int(b), int(c))
    return [(int(x), bool(y)) for x, y in zip(j, ok)]


class _Plan:
    """Static facts of one segment's instructions: constants known before they run."""

    def __init__(self, rb, unstored):
        self.rb, self.unstored = rb, unstored

    def constant(self, op, t, consts):
        """The value of operand ``op`` as an unsigned ``t``-wide integer where it is known at build time
        (an immediate, or a register that a ``mov`` of one sets: in the run, or once in the kernel)."""
        if op[0] == "imm":
            k = kind_of(t)
            if k[0] != "i":
                return None
            return int(np.asarray(imm_value(op, t)).view(np.dtype(f"u{k[1] // 8}"))[()])
        if op[0] != "reg" or op[2]:
            return None
        if op[1] in consts:
            return consts[op[1]]
        d = self.rb.remat_defs.get(op[1])
        if d is not None and d.opcode == "mov" and not d.guard and d.operands[1][0] == "imm":
            return self.constant(d.operands[1], d.type, consts)
        return None


def _width_ok(rb, name, t):
    regs = rb.func.regs
    if name not in regs or rb._is_pred(name):
        return False
    return rb._st_ty(name).width == kind_of(t)[1]


def _segment_ok(rb, seg, consts, defined, unstored):
    """Can the segment ``seg`` go into a warp run? ``consts``/``defined``: registers the run made
    constants / vectors so far (updated)."""
    if "jump" in seg or seg.get("narrow") or seg.get("uniform") or len(seg["phases"]) != 1:
        return False
    a, z = seg["first"], seg["end"]
    if list(seg["phases"][0]["pcs"]) != list(range(a, z)):
        return False
    code = rb.code
    plan = _Plan(rb, unstored)

    def source(op, t):
        """A source the vector code can read: a constant, a register of the run, or a register kept
        in its buffer or array (never one only computed again in each segment)."""
        if plan.constant(op, t, consts) is not None:
            return True
        if op[0] != "reg" or op[2] or not _width_ok(rb, op[1], t):
            return False
        return op[1] in defined or op[1] not in unstored

    for p in range(a, z):
        kind, _, inst, _ = code[p]
        if kind != K_NORMAL or inst.guard is not None:
            return False
        ops, t = inst.operands, inst.type
        if p == a:
            if inst.opcode != "shfl":
                return False
            mode = next((m for m in inst.mods if m in ("up", "down", "bfly", "idx")), None)
            dst = ops[0]
            if mode is None or len(ops) < 4 or not source(ops[1], "b32") or ops[1][0] != "reg":
                return False
            if plan.constant(ops[2], "u32", consts) is None or plan.constant(ops[3], "u32", consts) is None:
                return False
            outs = [dst[1], dst[2]] if dst[0] == "pair" else [dst]
            if any(o[0] != "reg" for o in outs):
                return False
            if not _width_ok(rb, outs[0][1], "b32") or (len(outs) > 1 and not rb._is_pred(outs[1][1])):
                return False
            defined.add(outs[0][1])
            consts.pop(outs[0][1], None)
            if len(outs) > 1:
                defined.add(outs[1][1])
            continue
        if inst.opcode in ("bar", "barrier"):
            return False
        try:
            k = kind_of(t)
        except Skip:
            return False
        if not ops or ops[0][0] != "reg" or not _width_ok(rb, ops[0][1], t):
            return False
        if inst.opcode == "mov" and k[0] == "i" and len(ops) == 2 and ops[1][0] == "imm":
            consts[ops[0][1]] = plan.constant(ops[1], t, consts)
            defined.discard(ops[0][1])
            continue
        if k[0] == "i" and inst.opcode in _INT_OPS:
            if set(inst.mods) - {t} or inst.opcode in ("shl", "shr") and plan.constant(ops[2], "u32", consts) is None:
                return False
            srcs = ops[1:2] if inst.opcode in ("not", "mov", "shl", "shr") else ops[1:3]
            if len(ops) != 1 + len(srcs) + (inst.opcode in ("shl", "shr")) or not all(source(o, t) for o in srcs):
                return False
        elif k == ("f", 32) and inst.opcode in ("add", "sub"):
            if set(inst.mods) - {"f32", "rn"} or dec._contraction(inst, rb.d) is not None:
                return False
            if len(ops) != 3 or not all(source(o, t) for o in ops[1:3]):
                return False
        else:
            return False
        defined.add(ops[0][1])
        consts.pop(ops[0][1], None)
    return True


def plan(rb, segs):
    """first pc -> the segments of a warp run that starts there (two or more consecutive shuffle
    segments, ``_segment_ok``, none of them but the first a jump's target)."""
    if not enabled():
        return {}
    unstored = next((set(seg["unstored"]) for seg in segs if "unstored" in seg), set())
    targets = {seg["jump"] for seg in segs if "jump" in seg}
    runs, cur, consts, defined = {}, [], {}, set()

    def close():
        if len(cur) >= 2:
            runs[cur[0]["first"]] = list(cur)
        cur.clear()
        consts.clear()
        defined.clear()
    for seg in segs:
        if cur and (seg["first"] != cur[-1]["end"] or seg["first"] in targets):
            close()
        if not _segment_ok(rb, seg, consts, defined, unstored):
            close()
            continue
        cur.append(seg)
    close()
    return runs


def emit(rb, run):
    """The run's segments for every warp of the chunk (the builder at the block-level code where the
    run starts; left after it). Each lane counts every instruction of the run, as the segments'
    lane loops count them (straight code: every lane runs every pc)."""
    b = rb.b
    first, end = run[0]["first"], run[-1]["end"]
    unstored = next((set(seg["unstored"]) for seg in run if "unstored" in seg), set())
    c, c1 = b.load(rb.c), b.load(rb.c1)
    span = ir.Constant(I64, sum(seg["end"] - seg["first"] for seg in run))
    b.store(b.add(b.load(rb.total), b.mul(b.sub(c1, c), span)), rb.total)
    b.store(b.add(b.load(rb.path), span), rb.path)
    pre = b.block
    head = rb.fn.append_basic_block(f"w{first}_warp")
    body = rb.fn.append_basic_block(f"w{first}_lanes")
    after = rb.fn.append_basic_block(f"w{first}_done")
    b.branch(head)
    b.position_at_end(head)
    k = b.phi(I64, name=f"w{first}_k")
    k.add_incoming(c, pre)
    b.cbranch(b.icmp_signed("<", k, c1), body, after)
    b.position_at_end(body)
    base = b.add(b.mul(rb.chunk_block, rb.ctx["lpb"]), b.sub(k, c), name=f"w{first}_lane")
    _Warp(rb, base, unstored).run(range(first, end), rb.live_in[end])
    nk = b.add(k, ir.Constant(I64, WARP))
    k.add_incoming(nk, b.block)
    b.branch(head)
    b.position_at_end(after)


class _Warp:
    """One warp's pass through a run: registers as vectors (``vals``) or build-time constants."""

    def __init__(self, rb, base, unstored):
        self.rb, self.b, self.base, self.unstored = rb, rb.b, base, unstored
        self.vals, self.consts = {}, {}
        self.plan = _Plan(rb, unstored)

    def _ptr(self, name):
        ty = ir.VectorType(self.rb._st_ty(name), WARP)
        return self.b.bitcast(self.b.gep(self.rb._reg_ptr(name), [self.base]), ty.as_pointer())

    def read(self, op, t):
        """Operand ``op`` as a vector of unsigned ``t``-wide integers."""
        k = kind_of(t)
        ty = ir.VectorType(INT[k[1]], WARP)
        v = self.plan.constant(op, t, self.consts)
        if v is not None:
            return ir.Constant(ty, [v] * WARP)
        name = op[1]
        if name not in self.vals:
            self.rb.loaded.add(name)
            load = self.b.load(self._ptr(name))
            load.align = self.rb._st_ty(name).width // 8
            self.vals[name] = load
        return self.vals[name]

    def write(self, name, v):
        self.vals[name] = v
        self.consts.pop(name, None)

    def run(self, pcs, live):
        b, code = self.b, self.rb.code
        for p in pcs:
            inst = code[p][2]
            ops, t = inst.operands, inst.type
            op = inst.opcode
            if op == "shfl":
                mode = next(m for m in inst.mods if m in ("up", "down", "bfly", "idx"))
                lanes = lane_map(mode, self.plan.constant(ops[2], "u32", self.consts),
                                 self.plan.constant(ops[3], "u32", self.consts))
                src = self.read(ops[1], "b32")
                mask = ir.Constant(ir.VectorType(I32, WARP), [j for j, _ in lanes])
                dst = ops[0]
                self.write(dst[1][1] if dst[0] == "pair" else dst[1],
                           b.shuffle_vector(src, ir.Constant(src.type, None), mask))
                if dst[0] == "pair":
                    self.write(dst[2][1], ir.Constant(ir.VectorType(I8, WARP), [int(ok) for _, ok in lanes]))
            elif op == "mov" and ops[1][0] == "imm":
                self.consts[ops[0][1]] = self.plan.constant(ops[1], t, self.consts)
                self.vals.pop(ops[0][1], None)
            elif kind_of(t)[0] == "f":
                x, y = (b.bitcast(self.read(o, t), ir.VectorType(F32, WARP)) for o in ops[1:3])
                r = b.bitcast(b.fadd(x, y) if op == "add" else b.fsub(x, y), ir.VectorType(I32, WARP))
                # (alu.gpu_nan: every float32 NaN is 0x7FFFFFFF; chosen on the bits, as llvmgen.canon_nan)
                vec = ir.VectorType(I32, WARP)
                nan = b.icmp_unsigned(">", b.and_(r, ir.Constant(vec, [0x7FFFFFFF] * WARP)),
                                      ir.Constant(vec, [0x7F800000] * WARP))
                self.write(ops[0][1], b.select(nan, ir.Constant(vec, [0x7FFFFFFF] * WARP), r))
            else:
                self.write(ops[0][1], self._int(inst))
        for name in sorted(live):
            if name in self.vals and name not in self.unstored:
                v = self.vals[name]
                store = b.store(v, self._ptr(name))
                store.align = self.rb._st_ty(name).width // 8

    def _int(self, inst):
        b, ops, t = self.b, inst.operands, inst.type
        op = inst.opcode
        width, signed = kind_of(t)[1], kind_of(t)[2]
        x = self.read(ops[1], t)
        if op == "mov":
            return x
        if op == "not":
            return b.not_(x)
        vec = ir.VectorType(INT[width], WARP)
        if op in ("shl", "shr"):
            n = self.plan.constant(ops[2], "u32", self.consts) & 0xFFFFFFFF
            if n >= width:          # (alu.shl/shr: past the width, 0, or the sign of an .s right shift)
                if op == "shr" and signed:
                    return b.ashr(x, ir.Constant(vec, [width - 1] * WARP))
                return ir.Constant(vec, [0] * WARP)
            amount = ir.Constant(vec, [n] * WARP)
            return b.shl(x, amount) if op == "shl" else b.ashr(x, amount) if signed else b.lshr(x, amount)
        y = self.read(ops[2], t)
        return {"add": b.add, "sub": b.sub, "and": b.and_, "or": b.or_, "xor": b.xor}[op](x, y)


__all__ = ["enabled", "lane_map", "plan", "emit", "I1"]
