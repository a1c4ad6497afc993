"""How much work a batch of blocks is, before it has finished: its control flow replayed alone.

pace.py estimates a grid from the blocks it has finished. A grid that is one batch (a persistent
kernel: ``compute_gemm<<<multiProcessorCount, ...>>>``, each block looping over tiles) finishes no
block before the watchdog, so there is nothing to extrapolate from. Its loops' trip counts, though,
usually come from registers alone (indices, the grid's size, parameters, a count loaded from
memory): the batch's *skeleton* - its branches, exits and the instructions their predicates depend
on, every other instruction a no-op - takes the same paths through the code at a small share of
the cost, and the engine counts the same thread-instructions for it. That count, at the rate the
launch ran, is how long the batch would take.

The skeleton runs in a scratch batch (its own registers, shared and local memory): it writes no
device memory, so an instruction its predicates need that would (a store to global memory, an
atomic there, a call) ends the attempt, and so does anything that goes wrong or takes longer than
its time. Loads from global memory read it as the stopped launch left it, which may differ from
what the kernel read: the count is an estimate.
"""
from __future__ import annotations

import dataclasses
import time

from .decode import _regs
from .memops import _space

# instructions with no register result, whatever their first operand is
_NO_DEST = {"st", "red", "bar", "barrier", "bra", "brx", "call", "nanosleep", "sust", "sured", "prefetch",
            "prefetchu", "discard", "applypriority", "cp", "stmatrix", "membar", "fence", "tensormap"}
# what may change memory outside the scratch batch (or do other work the kernel does not repeat)
_OUTSIDE = {"st", "atom", "red", "sust", "sured", "cp", "multimem", "tensormap", "call"}
_MEMORY = {"ld", "ldu", "st", "atom", "red"}


def _writes(inst):
    ops = inst.operands
    if inst.opcode == "call":            # its return registers (and, over-approximated, its arguments)
        return tuple(r for o in ops for r in _regs(o))
    if inst.opcode in ("bar", "barrier") and "red" in inst.mods and ops and ops[0][0] == "reg":
        return tuple(_regs(ops[0]))      # __syncthreads_count/_and/_or: its result steers the loop around it
    if inst.opcode in _NO_DEST or not ops or ops[0][0] not in ("reg", "vec", "pair"):
        return ()
    return tuple(_regs(ops[0]))


def _reads(inst):
    ops = inst.operands
    regs = [r for o in (ops[1:] if _writes(inst) else ops) for r in _regs(o)]
    if inst.guard:
        regs.append(inst.guard[0])
    return regs


def _scratch_store(inst):
    """A store into the scratch batch's own memory (shared or local): harmless to replay."""
    return inst.opcode in ("st", "atom", "red") and _space(inst) in ("shared", "local")


def control_slice(code, control_kinds, free=frozenset()):
    """The pcs of the instructions the predicates of the branches, exits and traps (``control_kinds``)
    depend on, over-approximated (every writer of a register counts); None when one of them would
    act outside the batch. The branches at the pcs of ``free`` are left out (lock_loops)."""
    defs = {}
    for pc, entry in enumerate(code):
        for r in _writes(entry[2]):
            defs.setdefault(r, []).append(pc)
    todo = [e[2].guard[0] for pc, e in enumerate(code) if e[0] in control_kinds and e[2].guard and pc not in free]
    todo += [r for e in code if e[2].opcode == "brx" for r in _reads(e[2])]
    seen, keep, stores_in = set(), set(), False
    while todo:
        r = todo.pop()
        if r in seen:
            continue
        seen.add(r)
        for pc in defs.get(r, ()):
            inst = code[pc][2]
            if inst.opcode in _OUTSIDE and not _scratch_store(inst):
                return None
            keep.add(pc)
            todo.extend(_reads(inst))
            if inst.opcode in _MEMORY and _space(inst) in ("shared", "local", "generic") and not stores_in:
                # a value read back from the batch's own memory: every store there may have put it
                stores_in = True
                for p, e in enumerate(code):
                    if _scratch_store(e[2]):
                        keep.add(p)
                        todo.extend(_reads(e[2]))
    return keep


def _noop(ex):
    pass


def lock_loops(df) -> frozenset:
    """The backward branches of the loops that take a lock (``while (atomicCAS(lock, 0, 1) != 0) ;``:
    the branch's predicate comes from an atomicCAS or atomicExch in the loop)."""
    from .engine import K_BRA
    found = set()
    for pc, (kind, _, inst, head) in enumerate(df.code):
        if kind == K_BRA and head is not None and head <= pc and inst.guard:
            body = [e[2] for e in df.code[head:pc]]
            taken = {r for i in body if i.opcode == "atom" and ("cas" in i.mods or "exch" in i.mods)
                     for r in _writes(i)}
            if any(inst.guard[0] in _writes(i) and taken & set(_reads(i)) for i in body):
                found.add(pc)
    return frozenset(found)


def skeleton(df, free_locks=False):
    """The kernel with every instruction its control flow does not need made a no-op (kept on the
    decoded function); None when its control flow needs work outside the batch. ``free_locks``: each
    loop that takes a lock goes round once, as if the lock were always free (a lower bound on the
    work: the waits are left out)."""
    key = "_skeleton_free" if free_locks else "_skeleton"
    if key in df.__dict__:
        return df.__dict__[key]
    from .engine import K_BRA, K_EXIT, K_FUSED, K_NORMAL, K_RET, K_TRAP, DecodedFunction
    control = (K_BRA, K_RET, K_EXIT, K_TRAP)
    free = lock_loops(df) if free_locks else frozenset()
    keep = control_slice(df.code, control, free)
    sk = None
    if keep is not None:
        idle = [(e[0] not in control or pc in free) and pc not in keep for pc, e in enumerate(df.code)]
        # a stretch of no-ops is one step (counted as its instructions, as a compiled group is), up to
        # the next place another path joins: a branch target or a reconvergence point
        joins = {e[3] for e in df.code if e[0] == K_BRA} | set(df.reconv.values())
        code = list(df.code)
        pc = 0
        while pc < len(code):
            if not idle[pc]:
                pc += 1
                continue
            end = pc + 1
            while end < len(code) and idle[end] and end not in joins:
                end += 1
            for p in range(pc, end):
                code[p] = (K_NORMAL, _noop, dataclasses.replace(df.code[p][2], guard=None), None)
            if end - pc > 1:
                code[pc] = (K_FUSED, _noop, code[pc][2], end)
            pc = end
        sk = DecodedFunction(df.func, code, df.reconv, df.param_offsets, df.param_sizes, df.depots, df.local_size)
    df.__dict__[key] = sk
    return sk


def _block_votes(sk) -> bool:
    """Does the skeleton keep a barrier that reduces over the block (``bar.red``: __syncthreads_count, _and,
    _or)? Its result steers a loop, and it waits for every thread of the block, not the first warp alone."""
    return any(fn is not _noop and inst.opcode in ("bar", "barrier") and "red" in inst.mods
               for _, fn, inst, _ in sk.code)


def thread_instructions(program, df, batch, kparams, shared_size, layout, local_stride, kernel_name,
                        seconds, cluster=None, free_locks=False):
    """(thread-instructions, whole) of the batch ``batch`` of kernel ``df``, counted by running its
    skeleton for at most ``seconds`` of CPU time on the first warp of every block (the other warps
    are taken to do as much; every warp, where a block-wide vote steers its loops); ``whole`` is False when the time ran out first: the count so far is
    then a lower bound, as it is with ``free_locks`` (skeleton). None when the skeleton cannot tell."""
    from .engine import Exec, Frame, LaunchStats, Watchdog, run_function
    import numpy as np
    sk = skeleton(df, free_locks)
    if sk is None:
        return None
    stats = LaunchStats()
    ex = Exec(program, sk, batch, kparams, shared_size, layout, local_stride, (), stats,
              time.thread_time() + seconds, kernel_name)
    ex.fr = Frame(sk, ex.n, 0)
    ex.cluster, ex.grid_state = cluster, None
    ex.wall_deadline = time.monotonic() + 4 * seconds   # and a bound on a busy machine's wall clock
    first_warp = ex.valid & (np.arange(ex.n) % batch.lanes_per_block < 32)
    scale = batch.threads_per_block / min(32, batch.threads_per_block)
    if _block_votes(sk):     # a __syncthreads_count the loops test waits for the whole block: run all of it
        first_warp, scale = ex.valid, 1.0
    try:
        run_function(ex, sk, first_warp, is_kernel=True)
    except Watchdog:
        return round(stats.thread_instructions * scale), False
    except Exception:          # noqa: BLE001  (a fault, a stop: no estimate, as before)
        return None
    return round(stats.thread_instructions * scale), not free_locks
