"""Named barriers with real scheduling: ``bar.sync``/``bar.red``/``bar.arrive`` (and ``barrier.*``)
with a barrier id and a thread count (PTX ISA 9.7.13.1 "bar, barrier").

Each block has 16 barriers. A warp *arrives* at barrier ``a`` as a unit (it counts as 32 threads,
as on the GPU); ``bar.arrive`` goes on at once, ``bar.sync`` and ``bar.red`` wait until ``b`` threads
(all the block's threads when there is no ``b``) have arrived. Waiting is real: the instruction
returns the lanes that must wait and the engine runs other paths first (engine.run_function,
K_WAIT), so a consumer warp that reaches ``bar.sync 1, 128`` before the producers have written
waits for them, whatever order the divergent paths happen to run in.

``bar.sync 0`` without a count (``__syncthreads()``) keeps warp.py's lock-step treatment: it is
reached by the whole block at once in every kernel the Programming Guide allows. It counts arrivals
like a named barrier (``when_split``) only when the block is apart: a waiting instruction has split
it (some warps got through an mbarrier wait, others still wait), or whole warps reach it at
different __syncthreads() (which a GPU allows: the barrier counts warps, not places).
"""
from __future__ import annotations

import numpy as np

from ..errors import KernelError
from .events import BarrierEvent
from .findings import Finding
from .operands import reader, writer

NBARRIERS = 16


def is_named(inst) -> bool:
    """A barrier that needs scheduling: any id but an immediate 0, or a thread count."""
    ops = inst.operands
    if "red" in inst.mods:
        ops = ops[1:-1]                      # d, a{, b}, c
    a, b = ops[0], (ops[1] if len(ops) > 1 else None)
    return b is not None or not (a[0] == "imm" and a[1] == 0) or "arrive" in inst.mods


class NamedBarriers:
    """The 16 barriers of every block of a batch, and which lanes wait at which."""

    def __init__(self, ex):
        nb, n = ex.batch.nblocks, ex.n
        self.arrived = np.zeros((nb, NBARRIERS), np.int64)     # threads (32 per warp) arrived this generation
        self.gen = np.zeros((nb, NBARRIERS), np.int64)         # completed generations
        self.expected = np.zeros((nb, NBARRIERS), np.int64)    # the count given by this generation's arrivals
        self.popc = np.zeros((nb, NBARRIERS), np.int64)        # bar.red accumulators
        self.every = np.ones((nb, NBARRIERS), bool)
        self.some = np.zeros((nb, NBARRIERS), bool)
        self.warp_gen = np.full((n // 32, NBARRIERS), -1, np.int64)   # generation a warp last arrived in
        self.wait_gen = np.full(n, -1, np.int64)                # per lane: the generation it waits for to end
        self.wait_id = np.zeros(n, np.int64)
        self.result = np.zeros(n, np.int64)                     # bar.red result latched at release


def _state(ex) -> NamedBarriers:
    st = getattr(ex, "_named", None)
    if st is None:
        st = ex._named = NamedBarriers(ex)
    return st


def decode_named(inst, d):
    mode = "red" if "red" in inst.mods else "arrive" if "arrive" in inst.mods else "sync"
    ops = inst.operands
    w = rp = None
    if mode == "red":
        opname = next(m for m in inst.mods if m in ("popc", "and", "or"))
        w = writer(ops[0], "u32" if opname == "popc" else "pred", d.func)
        rp = reader(ops[-1], "pred", d.func, d)
        ops = ops[1:-1]
    rid = reader(ops[0], "u32", d.func, d)
    rcount = reader(ops[1], "u32", d.func, d) if len(ops) > 1 else None
    aligned = inst.opcode == "bar" or "aligned" in inst.mods
    text = inst.text.split(";")[0].strip()

    def run(ex):
        st = _state(ex)
        sel = ex.idx
        blk = ex.lane_block[sel]
        bid = np.broadcast_to(np.asarray(rid(ex, sel), np.int64), sel.shape)
        if ((bid < 0) | (bid >= NBARRIERS)).any():
            lane = sel[(bid < 0) | (bid >= NBARRIERS)][0]
            ex.stop(lane, "synccheck", "cudaErrorIllegalInstruction", inst, lambda b, t: (
                f"`{text}` at line {inst.line} in kernel {ex.kernel_name} (thread {t} of block {b}) names barrier "
                f"{int(bid[sel == lane][0])}: a block has barriers 0 to 15."))
        fresh = st.wait_gen[sel] < 0
        if fresh.any():
            _arrive(ex, st, inst, text, sel[fresh], blk[fresh], bid[fresh],
                    None if rcount is None else np.broadcast_to(np.asarray(rcount(ex, sel), np.int64), sel.shape)[fresh],
                    None if rp is None else np.broadcast_to(rp(ex, sel), sel.shape)[fresh], aligned,
                    wait=mode != "arrive")
        _complete(ex, st, inst, blk, bid, rcount is not None)
        if mode == "arrive":
            return None
        gone = st.gen[ex.lane_block[sel], st.wait_id[sel]] > st.wait_gen[sel]
        passed = sel[gone]
        if passed.size and w is not None:
            res = st.result[passed]
            shift = {"popc": 0, "and": 32, "or": 33}[opname]
            w(ex, passed, (res & 0xFFFFFFFF).astype(np.uint32) if shift == 0 else ((res >> shift) & 1) != 0)
        st.wait_gen[passed] = -1
        if gone.all():
            return None
        stuck = sel[~gone]
        if ex.must_proceed:
            _hang(ex, st, inst, text, stuck)
        return stuck
    run.waits = True
    return run


def when_split(inst, d, lock_step):
    """``__syncthreads()`` (bar.sync/bar.red without a count): the lock-step barrier ``lock_step``,
    unless threads of the block are parked at a waiting instruction (an mbarrier wait let some warps
    through and not others) or other whole warps are on their way to another __syncthreads(): then
    the early warps arrive and wait, as on a GPU, instead of tripping synccheck, and the barrier
    completes when every warp of the block has arrived."""
    named = decode_named(inst, d)

    def run(ex):
        if ex.parked is not None:
            parked = np.flatnonzero((ex.parked >= 0) & ~ex.mask & ~ex.exited)
            if parked.size and np.isin(ex.lane_block[parked], ex.lane_block[ex.idx]).any():
                return named(ex)
        if waits_at_barrier_zero(ex, ex.idx):
            return named(ex)
        apart = ex.elsewhere()
        if _whole_warps_apart(ex, apart):
            return named(ex)
        ex.apart = apart            # lock_step's synccheck takes it as found (engine.Exec.check_barrier)
        return lock_step(ex)
    run.waits = True
    return run


def waits_at_barrier_zero(ex, lanes) -> bool:
    """Do some of ``lanes`` wait at barrier 0, counted (a __syncthreads() reached apart)?"""
    st = getattr(ex, "_named", None)
    return st is not None and bool(((st.wait_gen[lanes] >= 0) & (st.wait_id[lanes] == 0)).any())


def _whole_warps_apart(ex, apart) -> bool:
    """Are other warps of the block at another ``__syncthreads()`` or on their way, each warp
    whole? On a GPU ``bar.sync 0`` counts warps, wherever in the code they reach it (PTX ISA
    9.7.13.1): the double-buffered SGEMM lets half of the block load while the other half
    computes, each half with __syncthreads() of its own. A warp split by the branch stays
    synccheck's error (``lock_step``). ``apart``: the block's threads elsewhere (``ex.elsewhere()``)."""
    from .engine import reaches_syncthreads
    if ex.depth or not apart.any():
        return False
    here = np.zeros(ex.n, bool)
    here[ex.idx] = True
    if (apart.reshape(-1, 32).any(axis=1) & here.reshape(-1, 32).any(axis=1)).any():
        return False
    # the others must get to a __syncthreads(): warps that skip it and end are synccheck's error too.
    # A thread's place is the topmost stack entry that holds it (those below are where it rejoins);
    # found for all of them at once, as the stack may hold a hundred entries
    stack = ex.kernel_stack
    if not stack:
        return True
    held = np.array([m for _, _, m in stack])[:, np.flatnonzero(apart)]
    top = len(stack) - 1 - np.argmax(held[::-1], axis=0)
    return all(reaches_syncthreads(ex.kernel, stack[k][0]) for k in np.unique(top[held.any(axis=0)]).tolist())


def _arrive(ex, st, inst, text, lanes, blk, bid, count, pred, aligned, wait):
    """Lanes arrive at their barrier: each warp new to this generation adds 32 threads."""
    warps = lanes >> 5
    if aligned:
        # the .aligned forms are executed by whole warps: every thread of the warp that has not
        # exited arrives together (synccheck's "divergent threads" otherwise)
        live = ~ex.exited
        here = np.bincount(warps, minlength=ex.n // 32)
        need = np.bincount(np.flatnonzero(live) >> 5, minlength=ex.n // 32)
        short = np.unique(warps[here[warps] < need[warps]])
        if short.size:
            lane = int(short[0]) * 32 + int(np.flatnonzero(live[short[0] * 32:(short[0] + 1) * 32]
                                                            & ~np.isin(np.arange(short[0] * 32, (short[0] + 1) * 32), lanes))[0])
            ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
                f"Barrier error: `{text}` at line {inst.line} in kernel {ex.kernel_name} was reached by only some "
                f"threads of a warp in block {b}; thread {t} took another path. A warp reaches a named barrier as "
                "a whole: move the barrier out of the branch that splits the warp."))
    g = st.gen[blk, bid]
    first = st.warp_gen[warps, bid] != g
    if first.any():
        key = np.unique(np.stack([warps[first], bid[first], blk[first]]), axis=1)
        st.warp_gen[key[0], key[1]] = st.gen[key[2], key[1]]
        np.add.at(st.arrived, (key[2], key[1]), 32)
    if count is not None:
        st.expected[blk, bid] = count
    if pred is not None:
        np.add.at(st.popc, (blk, bid), pred.astype(np.int64))
        np.logical_and.at(st.every, (blk, bid), pred)
        np.logical_or.at(st.some, (blk, bid), pred)
    if wait:
        st.wait_gen[lanes] = g
        st.wait_id[lanes] = bid
    ex.sync_version += 1


def _complete(ex, st, inst, blk, bid, counted):
    """End the generation of every touched barrier that has all its threads: its waiting lanes are
    released (with bar.red's result latched for them) and the barrier starts over."""
    b, i = np.unique(np.stack([blk, bid]), axis=1)
    if counted:
        want = st.expected[b, i]
    else:   # all the block's threads: every warp with a thread that has not exited
        live_warps = np.unique(np.flatnonzero(~ex.exited) >> 5)
        want = np.bincount(live_warps * 32 // ex.lanes_per_block, minlength=ex.batch.nblocks)[b] * 32
    full = (st.arrived[b, i] >= want) & (st.arrived[b, i] > 0)
    if not full.any():
        return
    b, i = b[full], i[full]
    for bb, ii in zip(b.tolist(), i.tolist()):
        waiting = (ex.lane_block == bb) & (st.wait_id == ii) & (st.wait_gen == st.gen[bb, ii])
        # popc in the low 32 bits, and/or in bits 32/33: one latch serves the three reductions
        st.result[waiting] = int(st.popc[bb, ii]) | (int(st.every[bb, ii]) << 32) | (int(st.some[bb, ii]) << 33)
    st.gen[b, i] += 1
    st.arrived[b, i] = 0
    st.popc[b, i] = 0
    st.every[b, i] = True
    st.some[b, i] = False
    ex.sync_version += 1
    if ex.observers:     # racecheck: accesses before the barrier are ordered before those after it
        ex.emit(BarrierEvent(inst, ex.idx[np.isin(ex.lane_block[ex.idx], b)], ex.batch))


def _hang(ex, st, inst, text, stuck):
    lane = int(stuck[0])
    b, i = int(ex.lane_block[lane]), int(st.wait_id[lane])
    want = int(st.expected[b, i]) or ex.lanes_per_block
    block, thread = ex.where(lane)
    line = inst.place
    msg = (f"The kernel {ex.kernel_name} would hang: thread ({thread[0]},{thread[1]},{thread[2]}) of block "
           f"({block[0]},{block[1]},{block[2]}) waits at `{text}` ({line}) for {want} threads at barrier {i}, but "
           f"only {int(st.arrived[b, i])} arrived and no other thread of the block can still get there. Check the "
           "thread count, and that the other warps reach a bar.arrive or bar.sync with the same barrier id.")
    raise KernelError(msg, "cudaErrorLaunchTimeout",
                      [Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread)])
