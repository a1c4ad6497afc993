"""Named barriers with real scheduling: ``bar.sync``/``bar.red``/``bar.arrive`` (and ``barrier.*``)
with a barrier id and a thread count (PTX ISA 9.7.13.1 "bar, barrier").

Each block has 16 barriers. Threads *arrive* at barrier ``a`` one by one, as a GPU since Volta counts
them (a warp's exited threads count with its first arrival, so a whole warp is 32 threads);
``bar.arrive`` goes on at once, ``bar.sync`` and ``bar.red`` wait until ``b`` threads (all the block's
live threads when there is no ``b``) have arrived. A warp that arrives in parts does what an H100 did
(``_split_warp``; tests/kernels/split_barrier.py). Waiting is real: the instruction
returns the lanes that must wait and the engine runs other paths first (engine.run_function,
K_WAIT), so a consumer warp that reaches ``bar.sync 1, 128`` before the producers have written
waits for them, whatever order the divergent paths happen to run in.

``bar.sync 0`` without a count (``__syncthreads()``) keeps warp.py's lock-step treatment: it is
reached by the whole block at once in every kernel the Programming Guide allows. It counts arrivals
like a named barrier (``when_split``) only when the block is apart: a waiting instruction has split
it (some warps got through an mbarrier wait, others still wait), whole warps reach it at
different __syncthreads() (which a GPU allows: the barrier counts threads, not places), or the rest
of a warp split there runs first (``_others_run_first``).
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
        self.wait_pc = np.full(n, -1, np.int64)                 # per lane: the barrier instruction it waits at
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
        if _whole_warps_apart(ex, apart) or _others_run_first(ex, inst, apart):
            return named(ex)
        ex.apart = apart            # lock_step's synccheck takes it as found (engine.Exec.check_barrier)
        return lock_step(ex)
    run.waits = True
    return run


def _others_run_first(ex, inst, apart, here=None) -> bool:
    """Do the other threads of the warps split at this ``__syncthreads()`` run before the threads here
    go on? On an H100 they do when they are on a path of their own (the other side of an if/else) or
    have left the loop the barrier is in: ptxas puts a warp-wide ``WARPSYNC`` before the barrier, so the
    threads here wait for them to exit or to reach a barrier themselves (their stores on the way are
    seen after it: tests/kernels/split_barrier.py). Threads that wait to rejoin these after the
    barrier (``if (t < 16) __syncthreads();``) do not run first: the branch is predicated and the
    warp arrives as a whole, which the lock-step barrier is (``lock_step``, with synccheck's warning)."""
    stack = ex.kernel_stack
    if ex.depth or not stack or not apart.any():
        return False
    here = ex.mask if here is None else here
    warps = np.zeros(ex.n >> 5, bool)
    warps[np.flatnonzero(here) >> 5] = True
    others = np.flatnonzero(apart & np.repeat(warps, 32))
    if not others.size:
        return False
    top, somewhere = topmost(stack, others)
    for k in np.unique(top[somewhere]).tolist():
        pc, rpc, mask = stack[k]
        if (mask & here).any():
            if not _loops_back(ex.kernel, inst.index, pc):
                return False        # they wait to rejoin the threads here, which are not in a loop they left
        elif not _walk(ex.kernel, pc, rpc, "meets"):
            return False            # their path rejoins these threads before it meets a barrier or ends
    return True


def topmost(stack, lanes):
    """For each of ``lanes``, the index of its topmost entry in the SIMT stack ``stack`` (where the thread
    is now: the entries below it are where it rejoins others), and whether any entry holds it at all:
    found for all lanes at once, as a stack may hold a hundred entries."""
    held = np.array([m for _, _, m in stack])[:, lanes]
    return len(stack) - 1 - np.argmax(held[::-1], axis=0), held.any(axis=0)


def rejoins(df, entry) -> bool:
    """Do threads of this stack entry (``[pc, reconvergence pc, mask]``) get back to its reconvergence
    point on some path without meeting a barrier or ending? Then they wait there for the others."""
    return not _walk(df, entry[0], entry[1], "meets")


def _loops_back(df, pc, exit_pc) -> bool:
    """Can the code at ``pc`` run again without passing ``exit_pc`` (is it in a loop whose exit is there)?"""
    return _walk(df, pc + 1, exit_pc, "loops", pc)


def _walk(df, start, stop, how, target=None) -> bool:
    """Paths from ``start`` that do not pass ``stop``. ``how="loops"``: does one reach ``target``?
    ``"meets"``: does every one meet a barrier or the end of the kernel (none gets to ``stop``)?
    ``"joins"``: does the code go straight to ``stop``, through unconditional branches only?
    Cached on the decoded function."""
    cache = df.__dict__.setdefault("_split_walks", {})
    key = (start, stop, how, target)
    known = cache.get(key)
    if known is not None:
        return known
    from .engine import K_BRA, K_CALL, K_EXIT, K_RET, K_TRAP, every_path
    code, seen = df.code, set()
    if how == "joins":      # straight on (through unconditional branches only) to ``stop``?
        at = start
        while at < len(code) and at != stop and at not in seen:
            seen.add(at)
            kind, _, i, aux = code[at]
            if kind != K_BRA or i.guard is not None:
                break
            at = aux
        cache[key] = known = at == stop or (at >= len(code) and stop >= len(code))
        return known
    ends = (K_RET, K_EXIT, K_TRAP)
    if how == "meets":
        def verdict(pc, kind, i):
            if pc == stop:
                return False        # it gets to ``stop`` without meeting one
            if kind == K_CALL or i.opcode in ("bar", "barrier") and "warp" not in i.mods:
                return True         # a barrier (or a call, which may hold one)
            return True if kind in ends and i.guard is None else None
        known = every_path(code, start, verdict, past_end=stop != len(code))
    else:                   # "loops": not every path keeps away from ``target``
        def verdict(pc, kind, i):
            if pc == stop:
                return True
            if pc == target:
                return False
            return True if kind in ends and i.guard is None else None
        known = not every_path(code, start, verdict, past_end=True)
    cache[key] = known
    return known


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
    top, somewhere = topmost(stack, np.flatnonzero(apart))
    return all(reaches_syncthreads(ex.kernel, stack[k][0]) for k in np.unique(top[somewhere]).tolist())


def _arrive(ex, st, inst, text, lanes, blk, bid, count, pred, aligned, wait):
    """Lanes arrive at their barrier, counted one by one, as a GPU since Volta counts a barrier's
    threads (Programming Guide, independent thread scheduling); a warp's exited threads count with its
    first arrival of a generation, so a whole warp is 32 threads as before. A warp that arrives in
    parts is checked by ``_split_warp``."""
    warps = lanes >> 5
    live = ~ex.exited
    here = np.bincount(warps, minlength=ex.n // 32)
    need = np.bincount(np.flatnonzero(live) >> 5, minlength=ex.n // 32)
    short = np.unique(warps[here[warps] < need[warps]])
    rejoining = None
    if short.size:
        rejoining = _split_warp(ex, st, inst, text, lanes, short, aligned, count is not None, pred is not None)
    g = st.gen[blk, bid]
    first = st.warp_gen[warps, bid] != g
    cells = st.arrived.size                     # (block, barrier) pairs, counted with bincount (no sort)
    if first.any():
        wkey = np.flatnonzero(np.bincount(warps[first] * NBARRIERS + bid[first], minlength=(ex.n >> 5) * NBARRIERS))
        w, b_ = wkey // NBARRIERS, wkey % NBARRIERS
        blocks = (w << 5) // ex.lanes_per_block
        st.warp_gen[w, b_] = st.gen[blocks, b_]
        gone = np.bincount(np.flatnonzero(ex.exited) >> 5, minlength=ex.n // 32)
        st.arrived += np.bincount(blocks * NBARRIERS + b_, gone[w], minlength=cells).astype(np.int64).reshape(st.arrived.shape)
    key = blk * NBARRIERS + bid
    st.arrived += np.bincount(key, minlength=cells).reshape(st.arrived.shape)
    if rejoining is not None:   # lanes waiting to rejoin these: the warp arrives whole (a predicated barrier)
        r = np.flatnonzero(rejoining)
        st.arrived += np.bincount(ex.lane_block[r] * NBARRIERS + int(bid[0]), minlength=cells).reshape(st.arrived.shape)
    if count is not None:
        st.expected[blk, bid] = count
    if pred is not None:
        st.popc += np.bincount(key, pred.astype(np.int64), minlength=cells).astype(np.int64).reshape(st.popc.shape)
        st.every &= np.bincount(key, ~pred, minlength=cells).reshape(st.every.shape) == 0
        st.some |= np.bincount(key, pred, minlength=cells).reshape(st.some.shape) > 0
    if wait:
        st.wait_gen[lanes] = g
        st.wait_id[lanes] = bid
        st.wait_pc[lanes] = inst.index
    ex.sync_version += 1


def _split_warp(ex, st, inst, text, lanes, short, aligned, counted, red):
    """Warps ``short`` reach this barrier with only some of their live threads, as an H100 ran it
    (tests/kernels/split_barrier.py): the rest of such a warp is on a path of its own and comes later
    (it runs first where it can: ``_others_run_first``), or waits to rejoin these threads, the warp
    arriving as a whole. compute-sanitizer's synccheck reports the second arrival of a warp split over
    two barriers, and a barrier the rest of the warp skips (``slack.strict_sync`` stops there; otherwise a
    warning), but not threads that exit first. A ``__syncthreads_count/and/or`` split over two places
    hung the H100, and a non-aligned ``barrier.sync id, count`` reached by part of a warp stopped it
    with an illegal instruction."""
    from . import slack
    in_short = np.zeros(ex.n >> 5, bool)
    in_short[short] = True
    rest = ~ex.exited & np.repeat(in_short, 32)
    rest[lanes] = False
    at_barrier = rest & (st.wait_gen >= 0)
    elsewhere = at_barrier & (st.wait_pc != inst.index)
    line = inst.place
    what = "__syncthreads()" if not is_named(inst) else f"`{text}`"
    if not aligned and counted:
        lane = int(lanes[np.isin(lanes >> 5, short)][0])
        ex.stop(lane, "barrier", "cudaErrorIllegalInstruction", inst, lambda b, t: (
            f"`{text}` at {line} in kernel {ex.kernel_name} was reached by only some threads of a warp (thread {t} of "
            f"block {b}): an H100 stops such a kernel with an illegal instruction (ptxas's code for a non-aligned "
            "barrier with a thread count in a split warp). Let the whole warp reach the barrier together."))
    if elsewhere.any():
        other = int(np.flatnonzero(elsewhere)[0])
        there = ex.kernel.code[int(st.wait_pc[other])][2].place if not ex.depth else "another barrier"
        if red or not _predicated_pair(ex, inst.index, int(st.wait_pc[other])):
            block, thread = ex.where(other)
            if not red:
                msg = (f"The kernel {ex.kernel_name} would hang: {what} ({line}) was reached by only some threads "
                       f"of a warp; thread {_xyz(thread)} of block {_xyz(block)} waits at another barrier ({there}). "
                       "An H100 does not count the two halves of a warp at two barriers as one arrival: it waits "
                       "there forever. Let every thread of the block reach the same __syncthreads().")
                raise KernelError(msg, "cudaErrorLaunchTimeout",
                                  [Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread)])
            msg = (f"The kernel {ex.kernel_name} would hang: __syncthreads_count/and/or() ({line}) was reached by only "
                   "some threads of a "
                   f"warp; thread {_xyz(thread)} of block {_xyz(block)} waits at another barrier ({there}). "
                   "__syncthreads_count/and/or reduce over whole warps: an H100 waits there forever. Let every "
                   "thread of the block reach the same __syncthreads_count().")
            raise KernelError(msg, "cudaErrorLaunchTimeout",
                              [Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread)])
        _split_finding(ex, inst, text, other, f", to another barrier ({there})")
        return
    waiting = rest & ~at_barrier
    if waiting.any():
        here = np.zeros(ex.n, bool)
        here[lanes] = True
        if not _others_run_first(ex, inst, waiting, here):
            _split_finding(ex, inst, text, int(np.flatnonzero(waiting)[0]), "")
            return waiting
    return None


def _predicated_pair(ex, pc, other_pc) -> bool:
    """Are the two barriers a split warp waits at each the last thing its side of an if/else does
    before the sides join (``if (c) { s[t] = a; __syncthreads(); } else { s[t] = b; __syncthreads(); }``)?
    ptxas then predicates both sides and the warp runs them one after the other, arriving whole at
    each: the H100 went on (if_else_two_barriers_half_warps). Where either side goes on after its
    barrier (if_else_barriers_with_their_own_tails), ptxas branches, and the H100 hung."""
    if ex.depth or not ex.kernel_stack or other_pc < 0:
        return True
    join = ex.kernel_stack[-1][1]
    return _walk(ex.kernel, pc + 1, join, "joins") and _walk(ex.kernel, other_pc + 1, join, "joins")


def _xyz(v):
    return f"({v[0]},{v[1]},{v[2]})"


def _split_finding(ex, inst, text, other, where):
    """synccheck's report of a barrier a warp reached split: an error with ``slack.strict_sync`` (as
    compute-sanitizer's "Divergent thread(s) in warp"), else a warning once per instruction and launch."""
    from . import slack
    block, thread = ex.where(other)
    line = inst.place
    what = "__syncthreads()" if not is_named(inst) else f"`{text}`"
    if slack.strict_sync:
        msg = (f"Barrier error: {what} at {line} in kernel {ex.kernel_name} was reached by only some threads of a "
               f"warp in block {_xyz(block)}; thread {_xyz(thread)} took another path{where}. Let the whole warp reach the "
               "same barrier: move it out of the branch that splits the warp.")
        raise KernelError(msg, "cudaErrorLaunchFailure",
                          [Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread)])
    site = (id(inst), "sync", "barrier")
    if site in ex.stats.warned:
        return
    msg = (f"{what} at {line} in kernel {ex.kernel_name} was reached by only some threads of a warp in block "
           f"{_xyz(block)}; thread {_xyz(thread)} took another path{where}. A GPU since Volta counts the threads at a barrier "
           "one by one, so the kernel went on; compute-sanitizer's synccheck reports it as an error, and older GPUs "
           "could hang. Let every thread of the block reach the same barrier; run with --check synccheck "
           "(cudalab.check(\"synccheck\")) to stop here.")
    f = Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread, None,
                {"warning": True, "space": "barrier", "access": "sync"})
    ex.stats.warned[site] = f
    ex.stats.findings.append(f)


def _complete(ex, st, inst, blk, bid, counted):
    """End the generation of every touched barrier that has all its threads: its waiting lanes are
    released (with bar.red's result latched for them) and the barrier starts over."""
    touched = np.flatnonzero(np.bincount(blk * NBARRIERS + bid, minlength=st.arrived.size))
    b, i = touched // NBARRIERS, touched % NBARRIERS
    if counted:
        want = st.expected[b, i]
    else:   # all the block's threads: every thread that has not exited waits at it (at whichever
        # instruction: the halves of a split warp may wait at two), however many exited since
        full = np.zeros(b.size, bool)
        live = ~ex.exited
        for ii in np.unique(i).tolist():
            there = (st.wait_id == ii) & (st.wait_gen >= 0)
            there &= st.wait_gen == st.gen[ex.lane_block, ii]
            missing = np.bincount(ex.lane_block[live & ~there], minlength=ex.batch.nblocks)
            full[i == ii] = missing[b[i == ii]] == 0
        full &= st.arrived[b, i] > 0
    if counted:
        full = (st.arrived[b, i] >= want) & (st.arrived[b, i] > 0)
    if not full.any():
        return
    b, i = b[full], i[full]
    done = np.zeros(st.arrived.shape, bool)
    done[b, i] = True
    lb = ex.lane_block
    waiting = (st.wait_gen >= 0) & done[lb, st.wait_id] & (st.wait_gen == st.gen[lb, st.wait_id])
    w = np.flatnonzero(waiting)
    if w.size:
        # popc in the low 32 bits, and/or in bits 32/33: one latch serves the three reductions
        wb, wi = lb[w], st.wait_id[w]
        st.result[w] = st.popc[wb, wi] | (st.every[wb, wi].astype(np.int64) << 32) | (st.some[wb, wi].astype(np.int64) << 33)
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
