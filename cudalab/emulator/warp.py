"""Warp- and block-level instructions: shuffles, votes, match, redux, activemask, barriers.

Lanes of a batch are laid out warp by warp, so ``reshape(-1, 32)`` turns any full-length lane
array into (warp, lane) form; each instruction works on every warp of the batch at once.
"""
from __future__ import annotations

import numpy as np

from .barriers import decode_named, is_named, when_split
from .decode import op
from .events import BarrierEvent
from .operands import reader, writer


def _full(ex, r, dt):
    """A reader's value for every lane of the batch (shuffles read from other lanes)."""
    v = r(ex, None)
    return np.broadcast_to(np.asarray(v, dt), (ex.n,))


def _warp_bits(flags):
    """(warps, 32) bool -> uint32 per warp, bit k = lane k."""
    w = flags.reshape(-1, 32).astype(np.uint32)
    return (w << np.arange(32, dtype=np.uint32)).sum(axis=1, dtype=np.uint64).astype(np.uint32)


# ------------------------------------------------------------------ shfl.sync (PTX ISA 9.7.8.6)

def shfl_source(mode, lane, b, c):
    """(source lane, in range) of ``shfl.sync.mode`` for lanes ``lane`` (int64 arrays) with lane operand
    ``b`` and clamp operand ``c``: the PTX ISA's rule, an out-of-range lane reading its own value. One
    rule for the interpreter and the native warp vectors (warpvec.lane_map), so they cannot drift."""
    b = b & 31
    cval, segmask = c & 31, (c >> 8) & 31
    max_lane = (lane & segmask) | (cval & ~segmask)
    if mode == "up":
        j = lane - b
        ok = j >= max_lane
    elif mode == "down":
        j = lane + b
        ok = j <= max_lane
    elif mode == "bfly":
        j = lane ^ b
        ok = j <= max_lane
    else:
        j = (lane & segmask) | (b & ~segmask)
        ok = j <= max_lane
    return np.where(ok, j, lane), ok


@op("shfl")
def _shfl(inst, d):
    mode = next(m for m in inst.mods if m in ("up", "down", "bfly", "idx"))
    ops = inst.operands
    dst = ops[0]
    wd, wp = (writer(dst[1], "b32", d.func), writer(dst[2], "pred", d.func)) if dst[0] == "pair" \
        else (writer(dst, "b32", d.func), None)
    ra = reader(ops[1], "b32", d.func, d)
    rb, rc = reader(ops[2], "u32", d.func, d), reader(ops[3], "u32", d.func, d)

    def run(ex):
        sel = ex.idx
        lane = (sel & 31).astype(np.int64)
        j, ok = shfl_source(mode, lane, np.asarray(rb(ex, sel)).astype(np.int64),
                            np.asarray(rc(ex, sel)).astype(np.int64))
        a = _full(ex, ra, np.uint32)
        src = sel - lane + j
        wd(ex, sel, a[src])
        if wp is not None:
            wp(ex, sel, ok)
    return run


# ------------------------------------------------------------------ vote / activemask / match / redux

@op("vote")
def _vote(inst, d):
    """vote.sync: each lane sees only the lanes of its own member mask that are active, so tiles of
    a cooperative-groups partition vote separately even when the whole warp runs the instruction."""
    mode = next(m for m in inst.mods if m in ("all", "any", "uni", "ballot"))
    ops = inst.operands
    w = writer(ops[0], "b32" if mode == "ballot" else "pred", d.func)
    rp = reader(ops[1], "pred", d.func, d)
    rm = reader(ops[2], "b32", d.func, d) if len(ops) > 2 else None

    def run(ex):
        sel = ex.idx
        pred = np.zeros(ex.n, bool)
        pred[sel] = rp(ex, sel)
        active = ex.active_full()
        wid = sel >> 5
        bits_act = _warp_bits(active)[wid]
        bits_pred = _warp_bits(pred & active)[wid]
        member = np.asarray(rm(ex, sel), np.uint32) if rm is not None else np.uint32(0xFFFFFFFF)
        m = bits_act & member
        p = bits_pred & m
        if mode == "ballot":
            res = p
        elif mode == "any":
            res = p != 0
        elif mode == "all":
            res = p == m
        else:
            res = (p == 0) | (p == m)
        w(ex, sel, res)
    return run


@op("activemask")
def _activemask(inst, d):
    w = writer(inst.operands[0], "b32", d.func)

    def run(ex):
        sel = ex.idx
        w(ex, sel, _warp_bits(ex.active_full())[sel >> 5])
    return run


@op("match")
def _match(inst, d):
    mode = next(m for m in inst.mods if m in ("any", "all"))
    t = inst.type
    ops = inst.operands
    dst = ops[0]
    wd, wp = (writer(dst[1], "b32", d.func), writer(dst[2], "pred", d.func)) if dst[0] == "pair" \
        else (writer(dst, "b32", d.func), None)
    ra = reader(ops[1], t, d.func, d)
    rm = reader(ops[2], "b32", d.func, d) if len(ops) > 2 else None

    def run(ex):
        sel = ex.idx
        vals = np.zeros(ex.n, np.uint64)
        vals[sel] = np.asarray(ra(ex, sel)).astype(np.uint64)
        act = ex.active_full().reshape(-1, 32)
        v = vals.reshape(-1, 32)
        same = (v[:, :, None] == v[:, None, :]) & act[:, None, :]          # (warp, lane, other)
        bits = (same.astype(np.uint32) << np.arange(32, dtype=np.uint32)).sum(axis=2, dtype=np.uint64).astype(np.uint32)
        member = np.asarray(rm(ex, sel), np.uint32) if rm is not None else np.uint32(0xFFFFFFFF)
        if mode == "any":
            wd(ex, sel, bits.ravel()[sel] & member)
        else:
            amask = _warp_bits(act.ravel())[sel >> 5] & member
            alleq = (bits.ravel()[sel] & member) == amask
            wd(ex, sel, np.where(alleq, amask, np.uint32(0)))
            if wp is not None:
                wp(ex, sel, alleq)
    return run


@op("redux")
def _redux(inst, d):
    """redux.sync: a reduction over the active lanes of each lane's member mask (sm_80)."""
    opname = next(m for m in inst.mods if m in ("add", "min", "max", "and", "or", "xor"))
    t = inst.type
    ops = inst.operands
    w = writer(ops[0], t, d.func)
    ra = reader(ops[1], t, d.func, d)
    rm = reader(ops[2], "b32", d.func, d) if len(ops) > 2 else None
    dt = {"u32": np.uint32, "s32": np.int32, "b32": np.uint32}[t]
    uf = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
          "or": np.bitwise_or, "xor": np.bitwise_xor}[opname]
    ident = {"add": 0, "and": -1, "or": 0, "xor": 0, "min": np.iinfo(dt).max, "max": np.iinfo(dt).min}[opname]

    def run(ex):
        sel = ex.idx
        vals = np.zeros(ex.n, dt)
        vals[sel] = np.asarray(ra(ex, sel)).astype(dt)
        member = np.asarray(rm(ex, sel), np.uint32) if rm is not None else np.uint32(0xFFFFFFFF)
        m = _warp_bits(ex.active_full())[sel >> 5] & member
        base = (sel >> 5) << 5
        acc = np.full(sel.size, np.array(ident).astype(dt), dt)
        for j in range(32):
            bit = ((m >> np.uint32(j)) & np.uint32(1)).astype(bool)
            acc = np.where(bit, uf(acc, vals[base + j]), acc).astype(dt)
        w(ex, sel, acc)
    return run


# ------------------------------------------------------------------ barriers

def _barrier_event(ex, inst):
    if ex.observers:
        ex.emit(BarrierEvent(inst, ex.idx, ex.batch))


@op("bar", "barrier")
def _bar(inst, d):
    """bar.sync / barrier.sync / bar.arrive and bar.red (__syncthreads_count/and/or).

    The emulator runs a block's warps in lock step, so every store before the barrier is done
    before any load after it: the barrier itself orders nothing more. Its job here is checking
    (synccheck) and, for bar.red, the block-wide reduction."""
    if "warp" not in inst.mods and is_named(inst):   # an id or a thread count: really scheduled
        return decode_named(inst, d)
    if "warp" in inst.mods:               # bar.warp.sync membermask (__syncwarp)
        def run(ex):
            _barrier_event(ex, inst)
            ex.check_barrier(inst, warp=True)
        return run
    if "red" in inst.mods:
        opname = next(m for m in inst.mods if m in ("popc", "and", "or"))
        ops = inst.operands
        w = writer(ops[0], "u32" if opname == "popc" else "pred", d.func)
        rp = reader(ops[-1], "pred", d.func, d)

        def run(ex):
            sel = ex.idx
            _barrier_event(ex, inst)
            ex.check_barrier(inst)
            p = np.zeros(ex.n, bool)
            p[sel] = rp(ex, sel)
            per_block = p.reshape(-1, ex.lanes_per_block)
            act = ex.active_full().reshape(-1, ex.lanes_per_block)
            if opname == "popc":
                res = per_block.sum(axis=1).astype(np.uint32)
            elif opname == "and":
                res = ~((act & ~per_block).any(axis=1))
            else:
                res = per_block.any(axis=1)
            w(ex, sel, res[ex.lane_block[sel]])
        return when_split(inst, d, run)

    def run(ex):
        _barrier_event(ex, inst)
        ex.check_barrier(inst)
    return when_split(inst, d, run)
