"""Regions: whole loops and if/else diamonds of a kernel as one native function, each thread on its own.

The compiled tier's groups (``compiled.py``) keep the interpreter's lock step and only speed up
straight-line code; every branch still goes through the SIMT stack. A **region** is a stretch of
code ``[start, end)`` that control can only enter at ``start`` and only leave at ``end`` (every
branch inside targets the stretch or ``end``; nothing outside branches into it), holding no
barrier, warp instruction (shfl, vote, ...), call, return or instruction the generator does not
know. Its native function (``regiongen.py``) runs the active lanes one after another, each from
``start`` through its own path, loops included, to ``end``, where all of them meet again anyway
(the entry's reconvergence point lies outside the region, so lock step would join them there too).

**Why running each thread on its own is allowed.** Inside a region threads only talk through
memory. For code without data races any interleaving of the threads gives the same result, and
CUDA promises no lock step either (Volta's independent thread scheduling). Where legacy code relies
on lock step anyway, or where order shows in the result bits, regions stay conservative:

- *Shared memory*: a region that writes shared memory may hold no other instruction that touches
  it (the straight-line tier's rule), so the warp-synchronous ``volatile`` reduction idiom
  (``s[t] += s[t + 16]; s[t] += s[t + 8]; ...``) keeps its lock-step bytes. A generic access that
  lands in shared memory in such a region (or in one with generic stores) hands its thread back to
  the interpreter.
- *Atomics*: integer ``red`` (and ``atom`` whose result is never read) with add/and/or/xor/min/max
  commute, so any order gives the same bits and they are free. Every other atomic (a result that is
  read: tickets, CAS, exchange; float adds, whose rounding depends on the order) is allowed only
  once per region, outside any loop, with no other atomic: then each thread runs it at most once and
  the threads reach it in lane order, as in lock step (regions with cuts: a phase of its own).
- *Global and local memory*: free (local memory is per thread; global races are the program's, but a
  plain store to an address every thread shares, which the kernel also loads, ends a region:
  ``shared_updates``, so a race lesson's lost updates show as on a GPU),
  except ``volatile`` global accesses, which follow the shared-memory rule: Professional CUDA C
  Programming's ``reduceUnrollWarps8`` runs the warp-synchronous idiom on ``volatile int*`` global memory.
- *Spinning*: a loop that reads memory another thread may be writing (volatile, relaxed or acquire
  loads) gives its thread back to the interpreter after ``engine.SPIN_LIMIT`` turns, at the loop
  head; the region is then off for the rest of the batch and the interpreter's run-ahead
  (``engine._let_waiting_threads_run``) lets the thread that holds the lock go on. Pure loops run on.

**Stopping.** A thread the native code will not finish (a memcheck error, a float64 NaN, any bail-out
of ``llvmgen``; a spin) *stops*: its registers live at that instruction are written back and it
becomes a SIMT stack entry ``[pc, end, that thread]``, so the interpreter reruns the instruction and
reports the very error at the right line, or goes on. Threads already through wait at ``end``. The
native function also returns after ``BUDGET`` thread-instructions (suspending the thread it was
running at a loop head), so the engine checks the watchdog (CPU time) as often as it does for
interpreted code, and a ``while (true) {}`` still ends with the watchdog's message.

**Cuts: barriers and shuffles.** A region may also hold ``__syncthreads()`` (``bar.sync 0``)
and unguarded ``shfl.sync`` where every thread of a block passes them together: at the top level
of the region or in loops the block takes as one (below), never on one side of a branch
(``find(..., cuts=...)``). Its *cuts* split it into segments, each cut the first instruction of
the segment after it. Its native function (``regiongen.CutRegionBuilder``) runs one block at a time, segment by
segment, each segment for every thread of the block (each on its own, as above) before the next
begins. So every thread of the block has done everything before a cut when any thread runs it, as
in lock step: a barrier needs nothing more, and a shuffle reads the other lanes' sources where
they wait (a segment may not write the source of the shuffle it starts with): in a buffer of the
block's threads on the stack (regiongen ``_buffered``), or in their register arrays. The
memory rules above therefore apply per segment; ordered atomics stay once per region. It runs only
when every thread of the batch is at its start (else the replaced entry runs), and shuffles only
when blocks are whole warps (no padding lanes, whose registers the interpreter's shuffles would
read). A thread that stops in a segment stops its block at the segment's end: the block's other
threads finish the segment and wait there as one stack entry ``[cut, end, block]``, above which the
stopped thread runs to the cut interpreted (its later phases then follow the others' ones: the
same bytes for race-free code).

**Loops around cuts.** A loop whose body holds a cut (the shared-memory tree reduction's
``for (s = blockDim.x / 2; s > 0; s >>= 1) { ...; __syncthreads(); }``, a shuffle loop, a tiled
matmul's tile loop, a scan) may be inside such a region too. Its branches (``skeleton``: every
backward branch, and every branch that passes a cut) are *jumps*: the block takes them as one. Each
thread's guard is read after the segment before the jump; where the block's threads agree, the
native code goes on at the target (or after the branch), as lock step does when every thread goes
the same way; where they differ (a barrier in a loop whose trip count differs between the block's
threads), the block stops at the branch and the interpreter runs it from there (its synccheck
words the error, or it runs what it accepts). Blocks may disagree with each other: they only meet
through global memory, where races are the program's, as above. Each jump, its target and the pc
after it also start segments, so segments still hold only forward branches. A backward jump
returns for the watchdog once the call's ``BUDGET`` is spent, and the next call goes on at the
loop head.

**Phases.** A segment may hold more shared-memory accesses than the rule above allows
(``s[tid] += s[tid + s]``: two loads and a store; a tiled matmul's two stores): it is split into
*phases* (``phases``) before each access that conflicts with an earlier one of its phase, and
every thread of the block runs a phase before any thread runs the next, as lock step runs an
instruction for every thread before the next. Phases follow lock step's order of the segment's
pcs (``lockstep_order``: at a branch the taken side first, then the other, up to their
reconvergence point), and a thread whose path goes on in a later phase waits there (the
position of its pc in ``state``, its live registers in their arrays). An atomic whose order shows
(a ticket, a float add) gets a phase of its own, so the threads reach it in lane order, as in
lock step; in a region with cuts it may therefore sit in a loop or next to others. A segment that
starts with a warp instruction also splits before the first write of the register that
instruction reads from other lanes (``v += __shfl_xor_sync(..., v, ...)`` in a loop).

**Block-uniform values.** A register whose every definition is integer arithmetic on values the
same for the whole block, at pcs the whole block passes (``block_uniform``: a tree reduction's
``stride``, defined before its loop and halved in it), holds one value per block. Two things use
that. A segment of such arithmetic only runs once per block, as its first thread, and stores the
results for every thread (regiongen ``_once``); a forward branch on such a register after only such
arithmetic is a jump (``uniform_jumps``: a pipeline's ``switch`` over its waits is decided once per
block, not thread by thread). A segment that starts ``if (threadIdx.x < U)``
(``tid_guard``: any of <, <=, >, >= against an immediate or a block-uniform U, either way round)
runs natively only for the run of threads that stay, in a 1-D block; the threads that go straight
to the segment's end do nothing else there, so they are only counted (regiongen ``_narrowed``).
A tree reduction's loop then costs the threads that work, not every thread at every turn. A warp's
first lane (``if ((threadIdx.x & 31) == 0)``, ``threadIdx.x % warpSize == 0``: every 2^k-th thread)
is such a run too, stepped through 32 lanes at a time; where the guard follows other work in its
segment (the last shuffle of a reduction), the segment is split at the guard
(``compiled._guard_splits``). Both hold only for chunks that started at the region's start (the
interpreter's threads entering at a loop head run thread by thread, as before). The version for 1-D
blocks, which runs only such chunks (``Runner``), also reads a phase's block-uniform inputs once from
the block's first thread (regiongen ``_block_values``), so ``s[tid + stride]`` is a neighbour of
``s[tid + 1 + stride]`` to LLVM.

**Addresses checked first.** Every global and shared access of native code is checked (inside
an allocation, aligned) so that a lane that would fault stops at its own instruction; per lane
that costs more than the access, and its bail-out branch keeps LLVM from vectorizing the lane
loop. A phase's accesses whose addresses come from plain integer arithmetic on what the phase
starts with (thread and block indices, kernel parameters, registers from earlier segments:
``prechecks``) are therefore checked for the whole block first, in a loop of their own that
keeps each access's lowest and highest address and alignment bits: one allocation search or one
comparison then covers every lane, and the phase runs them unchecked. Where one would fault, the
phase's lanes go on interpreted from its first pc (regiongen ``_precheck_failed``; in a segment's
first phase the whole block, from the segment's start), so errors and bytes stay the
interpreter's, and the phase has one native version only. Where some lanes skip an access
(``skipped``: a guard, a branch over it), their address there may lie anywhere (CUB's onesweep
scatter writes through ``d_bins_out``, a null pointer, in the last tile only), so such a phase
has a second native version, with each lane checking its own addresses, that a block whose check
fails runs instead: a lane that would fault stops at its own instruction, the others go on
natively. A later phase's access at an address the first phase checked for every lane (a tree
reduction's store to ``s[tid]`` after its loads, both under ``if (tid < stride)``; registers the
segment does not write) needs no check of its own: every lane that reaches it passed that access. Addresses that come
from loaded values (a histogram's bin) stay checked per lane.

**Gangs.** Lane after lane, a grid-stride loop costs each element its own address checks, and a
sum's chain of float adds waits on itself at every element. A loop that is one basic block whose
memory accesses are plain global loads and stores at addresses computed from what a lane has at
the loop's head (``gang_loops``: ``y[i] = a * x[i] + y[i]``, ``s += x[k]``) therefore runs eight
neighbouring lanes of a chunk together (regiongen ``_gang``): instruction by instruction across
them, as lock step does, so independent chains overlap and LLVM's SLP vectorizer makes vector
instructions of them. Before each iteration every lane's addresses are computed and checked for
the gang at once: each access's elements must follow one another lane by lane (then lane j's is
lane 0's pointer plus j elements: one vector load or store), lie inside one allocation and be
aligned. Where that fails nothing of the iteration has run: the lanes go on alone from the loop
head, as before, and a lane that faults stops at its own instruction. A gang takes turns as a
lane does (``TURN`` iterations), and its lanes leave it at the head or, where one leaves the loop,
each at the head or after the loop. Loads and stores of the other lanes in between change nothing
the lanes could see, for race-free code as for lock step.
A loop that only reads shared memory (a Sturm count's ``delta = d[k] - x - s[k] * s[k] /
delta`` over a chunk its block loaded: every lane reads the same element) is a turn loop for its
gangs' sake, its addresses any (the highest must fit the block's shared memory), and its gangs run
until a lane leaves or the budget is spent, not ``TURN`` iterations (there is no walk through
memory to keep in step). Such a loop often lies under ``if (tid < active)``, where a region with
cuts stops its block: the plain region inside it builds gangs (only one inside another plain
region does not).

**Counts.** ``stats.thread_instructions`` stays exact (each thread counts the instructions on its
path, as lock step sums them). ``stats.instructions`` (the batch-level count: modelled clocks, PDL
fractions) becomes an estimate for a region: the longest path of one thread in the call, which is
what lock step counts when the threads do not diverge.
"""
from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np

from . import compiled     # (a launch runs two or more regions: an import in a function costs 1 to 3 us each time)

# thread-instructions per native call before it returns for the watchdog: 2^24 is 4 to 20 ms of the fastest regions
# (a 2^20-thread shuffle reduction's batch returned five times at 2^22, 687 -> 621 us a launch, best of 10);
# 2^25 (8 to 40 ms): its batches of 2^19 threads, 21 million thread-instructions, still returned once each
# at 2^24, 643-726 -> 636-657 us a launch (launch18 round, load 8)
BUDGET = 1 << 25
CLOCK_EVERY = 1 << 20           # thread-instructions in regions between two looks at the clock

# instructions that meet other threads: never inside a region
_COLLECTIVE = {"shfl", "vote", "match", "redux", "activemask", "bar", "barrier", "elect", "bar.warp"}
_COMMUTE = {"add", "and", "or", "xor", "min", "max"}
_SPIN_LOADS = {"volatile", "relaxed", "acquire", "cv", "mmio"}
_NO_DEST = {"st", "red", "membar", "fence", "bra", "bar", "barrier", "cp"}


@dataclasses.dataclass
class Region:
    start: int
    end: int                    # the exit: where every thread of the region meets again
    name: str
    regs: list                  # register names, pointer-table order (the arrays the function reads or writes)
    outputs: list               # registers stored at the exit (written inside, live after)
    symbols: list
    nspill: int                 # registers saved per stopped thread
    turns: bool                 # lanes take turns in some loop (regiongen): per-lane state
    spill_at: list              # [[pc, [[register, column], ...]], ...]: what a thread stopped at pc saves
    fresh: list = dataclasses.field(default_factory=list)   # registers stored before any read: no zeroing
    cuts: list = dataclasses.field(default_factory=list)    # [[pc, "bar" | "warp" | "start"], ...]: "Cuts" above, compiled._blockwise
    bounds: list = dataclasses.field(default_factory=list)  # where segments start (skeleton): see "Loops around cuts"
    heads: list = dataclasses.field(default_factory=list)   # loop heads among them: second ways in (Runner.entry)
    remat_at: list = dataclasses.field(default_factory=list)  # [[pc, [pc, ...]], ...]: Runner._rematerialize
    gangs: list = dataclasses.field(default_factory=list)   # heads of the loops whose lanes go in gangs (gang_loops)
    one_d: str = ""             # the function's version for 1-D blocks (compiled._one_d_version), or none
    two_d: str = ""             # its version for blocks of rows (compiled._rows_version), or none
    copies: bool = False        # holds cp.async, commits and waits (async_native: a queue per block)


# ------------------------------------------------------------------ finding regions

def _space(inst):
    from .memops import _space as space_of
    return space_of(inst)


def _commutes(inst, live_out):
    """An atomic whose order cannot show: integer add/and/or/xor/min/max whose old value is not read."""
    if inst.opcode not in ("atom", "red"):
        return False
    t = inst.type or ""
    op = next((m for m in inst.mods if m in _COMMUTE), None)
    if op is None or t[:1] not in ("u", "s", "b"):
        return False
    if inst.opcode == "red":
        return True
    dst = inst.operands[0]
    return dst[0] == "sym" and dst[1] == "_" or dst[0] == "reg" and live_out is not None and dst[1] not in live_out


def cuts(df, info):
    """pc -> "bar" | "warp" for the instructions a region may hold as cuts (module docstring):
    unguarded ``bar.sync 0`` / ``barrier.sync 0`` / ``bar.warp.sync`` and unguarded shuffles the generator compiles
    whose result is not their own source (the exchange reads every lane's source first)."""
    from .barriers import is_named
    from .engine import K_NORMAL, K_WAIT
    out = {}
    for pc, (kind, _, inst, _) in enumerate(df.code):
        if inst.guard is not None:
            continue
        if (kind == K_WAIT and inst.opcode in ("bar", "barrier") and "sync" in inst.mods
                and not {"red", "arrive", "warp"} & set(inst.mods) and not is_named(inst)):
            out[pc] = "bar"
        elif kind == K_NORMAL and inst.opcode == "bar" and "warp" in inst.mods:
            # __syncwarp() orders nothing lock step does not (warp.py runs it as a no-op); as a cut
            # it orders the block's memory as __syncthreads() does, which covers its warp's
            out[pc] = "bar"
        elif kind == K_NORMAL and (inst.opcode == "shfl" and pc in info or _warp_wide(inst, df.func)):
            from .decode import _regs
            ops = inst.operands
            if len(ops) < 2 or not set(_regs(ops[0])) & set(_regs(ops[1])):
                out[pc] = "warp"
    return out


def _warp_wide(inst, func):
    """A vote, activemask or redux that llvmgen generates (in a region with cuts only)."""
    from .dtypes import storage
    ops = inst.operands
    src = ops[1] if len(ops) > 1 else None
    if inst.opcode == "activemask":
        return True
    if src is None or src[0] != "reg" or src[1] not in func.regs or any(o[0] not in ("reg", "imm") for o in ops[2:]):
        return False
    pred = storage(func.regs[src[1]]) == np.bool_
    if inst.opcode == "vote":
        return pred and not {"all", "any", "uni", "ballot"}.isdisjoint(inst.mods)
    return (inst.opcode == "redux" and not pred and not src[2] and inst.type in ("u32", "s32", "b32")
            and ops[0][0] == "reg")


def find(df, info, live_out, cuts=None):
    """The regions of a kernel, as (start, end) pairs: greedy, largest first, from each eligible stretch.
    ``info``: the pcs the generator compiles (compiled._compilable); ``live_out``: compiled.liveness.
    With ``cuts`` (from ``cuts()``): only regions that hold at least one cut (module docstring)."""
    from .engine import K_BRA, K_NORMAL
    code = df.code
    n = len(code)
    if live_out is None or any(c[2].opcode == "brx" for c in code):
        return []
    eligible = np.zeros(n + 1, bool)
    for pc, (kind, _, inst, aux) in enumerate(code):
        # a branch to itself is an endless loop that changes nothing: native code would count its
        # turns by the billion in no time (LLVM sums them), so the interpreter keeps the count honest
        eligible[pc] = (kind == K_BRA and inst.opcode == "bra" and aux != pc) or \
            (kind == K_NORMAL and pc in info and inst.opcode not in _COLLECTIVE) or bool(cuts and pc in cuts)
    for pc in shared_updates(df):
        eligible[pc] = False
    branches = [(pc, c[3]) for pc, c in enumerate(code) if c[0] == K_BRA]
    if not branches and not cuts:
        return []
    cut_pcs = np.array(sorted(cuts or ()), np.int64)
    apart = _thread_index_tests(code) if cuts else set()
    srcs = np.array([b[0] for b in branches])
    tgts = np.array([b[1] for b in branches])
    leaders = {0, n} | set(df.func.labels.values()) | {pc + 1 for pc, _ in branches}
    out = []
    pc = 0
    while pc < n:
        if not eligible[pc]:
            pc += 1
            continue
        b = pc
        while eligible[b]:
            b += 1
        cands = sorted({x for x in leaders if pc < x < b} | {b})
        s = pc
        while s < b:
            found = _grow(code, s, b, cands, srcs, tgts, cut_pcs, cuts, live_out, df.reconv, apart)
            if found:
                out.append((s, found))
                s = found
            else:
                s = next((x for x in cands if x > s), b)
        pc = b
    if not cuts:
        out += _loop_entries(code, out, leaders, srcs, tgts, cut_pcs, live_out)
    return out


def shared_updates(df):
    """The pcs of plain global stores to an address every thread of a block shares (a register defined
    once in the kernel, by integer arithmetic on kernel parameters, block indices, immediates and other
    such registers) that the kernel also loads: ``*counter = *counter + 1`` without an atomic, a race
    lesson's unsafe kernel. A region runs each thread from the load to the store before the next thread
    starts, so no update was lost (Professional CUDA C Programming's atomic-ordering: 6,400,064 where an
    H200 printed 100,001); in lock step, as on a GPU, every thread of a warp loads before any stores.
    Such a store is left to the interpreter, so a region ends before it. The register may be defined
    after a branch: numba's ``if i < len(a): out[0] += a[i]`` converts ``out``'s address to a global
    one inside the ``if`` (NVVM sinks it there), so a definition anywhere counts; defined once from
    block-uniform values, it holds the same value wherever a thread computes it."""
    from .llvmgen import mem_access
    known = df.__dict__.get("_shared_updates")
    if known is not None:
        return known
    f, code = df.func, df.code
    defs = _definitions(f)
    same = {}
    grew = True
    while grew:                 # to a fixed point: a definition may use a register defined later in the code
        grew = False
        for inst in f.insts:
            if (inst.operands and inst.operands[0][0] == "reg" and inst.operands[0][1] not in same
                    and _arithmetic(inst, lambda o: _same_for(o, same, _BLOCK_SREGS, df.param_offsets),
                                    df.param_offsets)
                    and len(defs[inst.operands[0][1]]) == 1):
                same[inst.operands[0][1]] = inst
                grew = True

    def shared_address(inst):
        if "volatile" in inst.mods or _space(inst) not in ("global", "generic"):
            return None
        op = mem_access(inst)[1]
        base = op[1] if op[0] == "mem" else None
        return op if base and base[0] == "reg" and base[1] in same else None

    loads = {a for _, _, inst, _ in code if inst.opcode == "ld" and (a := shared_address(inst)) is not None}
    known = df.__dict__["_shared_updates"] = frozenset(
        pc for pc, (_, _, inst, _) in enumerate(code)
        if inst.opcode == "st" and loads and shared_address(inst) in loads)
    return known


def _grow(code, s, b, cands, srcs, tgts, cut_pcs, cuts, live_out, reconv=None, apart=()):
    """The farthest end (a leader up to ``b``) of a region that starts at ``s``, or None.
    ``apart``: predicates that test the thread index (``_thread_index_tests``)."""
    # no end past a branch from inside to before s, or past where a branch from before s lands
    hi = min([b] + srcs[(srcs >= s) & (tgts < s)].tolist() + tgts[(srcs < s) & (tgts > s)].tolist())
    ends = [x for x in cands if s < x <= hi]
    if cuts and s < hi and hi not in ends:
        # (the branch back to a loop's head that holds what regions cannot, cp.async's waits in
        # globalToShmemAsyncCopy: the stretch from the loop's barrier to it, a tiled product's
        # tile, is a region of its own, run block by block)
        ends.append(hi)
    for e in reversed(ends):
        inside = (srcs >= s) & (srcs < e)
        held = cut_pcs[(cut_pcs >= s) & (cut_pcs < e)]
        if not (held.size if cuts else inside.any()):
            break                   # (smaller ends hold no branch, or no cut, either)
        if ((inside & ((tgts < s) | (tgts > e))).any() or (~inside & (tgts > s) & (tgts < e)).any()):
            continue
        if cuts and _splits_blocks(code, srcs[inside], tgts[inside], held, apart):
            continue
        bounds = skeleton(code, s, e, held)[0] if held.size else []
        if _allowed(code, s, e, srcs[inside], tgts[inside], live_out, bounds, reconv):
            return e
    return None


def _thread_index_tests(code):
    """Predicates set by comparing ``%tid.x`` itself (or a register moved from it) with something."""
    from .decode import _regs
    tids, out = set(), set()
    for _, _, inst, _ in code:
        ops = inst.operands
        if inst.opcode == "mov" and not inst.guard and len(ops) == 2 and ops[1] == ("sreg", "tid", "x"):
            tids.update(_regs(ops[0]))
    for _, _, inst, _ in code:
        ops = inst.operands
        if inst.opcode == "setp" and any(o == ("sreg", "tid", "x") or o[0] == "reg" and o[1] in tids
                                         for o in ops[1:3]):
            out.update(_regs(ops[0]))
    return out


def _splits_blocks(code, srcs, tgts, held, apart):
    """Does a region with cuts hold a jump (a branch past a cut, which a block must take as one)
    where a block's threads part by design, not by their data? Such a block stops there and the
    interpreter runs it to the region's end, the rest of the kernel where the region is big:
    ``if (threadIdx.x < 32) { a warp's scan with shuffles }`` (CUB's radix sort, before ranking
    every key with ballots), and a loop around a warp vote that spins on memory other blocks
    write (CUB's decoupled look-back: each thread walks back its own way). Ending the region
    before it keeps the code after it native."""
    for src, tgt in zip(srcs.tolist(), tgts.tolist()):
        lo, hi = min(src, tgt), max(src, tgt)
        if not ((held > lo) & (held < hi)).any():
            continue
        guard = code[src][2].guard
        if guard and guard[0] in apart or tgt <= src and waits_on_memory(code, tgt, src):
            return True
    return False


def waits_on_memory(code, head, back) -> bool:
    """Does the loop head..back leave (or go round) on a value it read from memory another thread may be
    changing (``spins``' loads), as a spin on a flag does? Its branches' guards are followed back through
    the loop's instructions to such a load. A loop that only reads ``volatile`` memory along the way and
    counts its own turns does not wait on anyone: the samples' scan (``volatile uint *s_Data``, a loop of
    two ``__syncthreads()`` a turn over ``offset <<= 1``) ran its whole loop interpreted between native
    pieces, 17% of its thread-instructions, since ``spins`` alone ended every region with cuts before it."""
    from .decode import _regs
    from .engine import K_BRA
    if not spins(code, head, back):
        return False
    fed, stored = set(), False
    for _ in range(3):          # (again: a value read late in one turn decides the next turn's test)
        for p in range(head, back + 1):
            inst = code[p][2]
            if not inst.operands:
                continue
            if inst.opcode in ("st", "atom", "red") and {r for o in inst.operands for r in _regs(o)} & fed:
                stored = True   # (passed on through memory: a leader's ``seen = *flag`` for all to test)
            if inst.opcode in _NO_DEST:
                continue
            reads = {r for o in inst.operands[1:] for r in _regs(o)} | ({inst.guard[0]} if inst.guard else set())
            loads = inst.opcode in ("ld", "ldu", "atom")
            if loads and (stored or _SPIN_LOADS & set(inst.mods)) or reads & fed:
                fed.update(_regs(inst.operands[0]))
    # the branch back, and any branch out of the loop, on such a value
    return any(code[p][0] == K_BRA and code[p][2].guard and code[p][2].guard[0] in fed
               and (p == back or not head <= code[p][3] <= back) for p in range(head, back + 1))


def _loop_entries(code, spans, leaders, srcs, tgts, cut_pcs, live_out):
    """Second ways into a region: at the head of each loop inside it, a region of its own.

    Native code enters a region only at its start, so the interpreter, once inside a region's loop,
    stays interpreted to the loop's end: after a bail-out, or when a long single batch moves to native
    code mid-way (compiled.upgrade_later: one thread looping a million times). A region from the loop's
    head takes it from the next turn on. The outer region's own code never looks at these."""
    out, starts = [], {s for s, _ in spans}
    for s0, e0 in spans:
        heads = sorted({h for h, back in loops(srcs, tgts) if s0 < h < e0 and s0 <= back < e0})
        for h in heads:
            if h in starts:
                continue
            cands = sorted({x for x in leaders if h < x < e0} | {e0})
            e = _grow(code, h, e0, cands, srcs, tgts, cut_pcs, None, live_out)
            if e:
                out.append((h, e))
                starts.add(h)
    return out


def loops(srcs, tgts):
    """(head, back-edge pc) of the loops whose back edges are ``srcs -> tgts``."""
    return [(int(t), int(s)) for s, t in zip(srcs, tgts) if t <= s]


def skeleton(code, s, e, held):
    """(bounds, jumps) of a region with cuts (module docstring, "Loops around cuts"): ``jumps`` are
    the branches the block takes as one (backward ones, and those that pass a bound), ``bounds``
    the sorted pcs between ``s`` and ``e`` where segments start: the cuts, each jump and the pc
    after it, and each jump's target. Every other branch is forward and lands in its own segment
    (at most at the bound that ends it)."""
    import bisect
    from .engine import K_BRA
    bras = [(p, code[p][3]) for p in range(s, e) if code[p][0] == K_BRA]
    hard, jumps = {int(c) for c in held}, set()
    while True:
        pts = sorted(hard | {s, e})
        new = [(p, t) for p, t in bras if p not in jumps and not p < t <= pts[bisect.bisect_right(pts, p)]]
        if not new:
            return sorted(hard - {s, e}), sorted(jumps)
        for p, t in new:
            jumps.add(p)
            hard |= {p, p + 1, t}


def uniform_jumps(df, s, e, held, live_out=None):
    """``skeleton``'s (bounds, jumps), plus the forward branches that decide something for the whole
    block: a guard that is block-uniform (``block_uniform``), after nothing but block-uniform
    arithmetic since its segment began. ``cuda::pipeline``'s ``consumer_wait`` is such a dispatch: a
    ``switch`` over ``cp.async.wait_group 0..8`` on the pipeline's head and tail counters, which every
    thread of the block holds alike; inside a segment each thread ran its compares and branches on
    its own, where as jumps the block takes them once (regiongen ``_once`` computes the guard, ``_jump``
    follows it) and each thread runs only its case's wait. A guard that differs between the block's
    threads after all stops the block at the jump (the interpreter goes on), as for any jump. Only
    where no other branch becomes a jump with them and every segment still has lock step's phases."""
    from .engine import K_BRA
    code = df.code
    bounds, jumps = skeleton(code, s, e, held)
    cands = {p for p in range(s, e) if code[p][0] == K_BRA and p not in jumps and code[p][2].guard is not None
             and code[p][3] is not None and code[p][3] > p + 1}
    base = set(jumps)
    while cands:
        b2, j2 = skeleton(code, s, e, set(int(c) for c in held) | {x for p in cands for x in (p, p + 1, code[p][3])})
        # guarded branches that would pass the new bounds, their threads free to differ: keep them apart
        others = {q for q in set(j2) - base - cands if code[q][2].guard is not None}
        uni = block_uniform(df, s, e, b2)
        starts = [s] + list(b2)
        keep = set()
        for p in cands:
            if any(min(q, code[q][3]) <= p <= max(q, code[q][3]) for q in others):
                continue
            a = max(x for x in starts if x <= p)
            if code[p][2].guard[0] in uni and all(compiled._computes_uniform(code[q], uni, q == a) for q in range(a, p)):
                keep.add(p)
        if keep == cands:
            if others or any(phases(code, a, z, cross_source(code, a) if a in b2 else None, df.reconv, live_out) is None
                             for a, z in segments(s, e, b2)):
                return bounds, jumps
            return b2, j2
        cands = keep
    return bounds, jumps


def lockstep_order(code, a, z, reconv):
    """The pcs of an acyclic segment [a, z) in the order lock step runs them (engine.run_function:
    at a branch where threads diverge, the taken path to the reconvergence point first, then the
    other), or None where a path leaves the segment before its reconvergence point. Every thread's
    path visits them in this order."""
    from .engine import K_BRA
    out = []

    def walk(p, stop):
        while p != stop:
            if not a <= p < z:
                return False
            out.append(p)
            kind, _, inst, t = code[p]
            if kind != K_BRA:
                p += 1
            elif inst.guard is None:
                p = t
            else:
                r = reconv.get(p)
                if r is None or not (walk(t, r) and walk(p + 1, r)):
                    return False
                p = r
        return True
    return out if walk(a, z) and len(set(out)) == len(out) else None


def phases(code, a, z, src=None, reconv=None, live_out=None):
    """A segment [a, z) as phases (lists of pcs in lock step's order): a new phase starts at each
    shared-memory access that would share a phase with one it conflicts with (a store with any
    other access; the straight-line tier's rule), at an atomic whose order shows (``live_out``
    given: it gets a phase of its own, so the threads reach it in lane order, as in lock step), and
    at the first write of ``src``, the register the warp instruction at ``a`` reads from other
    lanes. Every thread of the block runs a phase before any runs the next, as lock step runs one
    instruction for all threads before the next. None where phases are needed and lock step's
    order is not known (``lockstep_order``)."""
    from . import async_native
    order = lockstep_order(code, a, z, reconv) if reconv is not None else None
    walk = order or list(range(a, z))
    out, cur, reads, writes, mems, landed = [], [], 0, 0, 0, 0
    for p in walk:
        inst = code[p][2]
        op = inst.opcode
        mem = op in ("ld", "ldu", "st", "atom", "red")
        volatile = op in ("ld", "st") and "volatile" in inst.mods and _space(inst) in ("global", "generic")
        shared = mem and _space(inst) == "shared" or volatile
        # a cp.async wait writes its thread's copies to shared memory: apart from the phase's loads
        # and stores, not from other waits (on the arms of a pipeline's switch over wait_group N)
        lands = op == "cp" and async_native.lands(inst)
        write = op not in ("ld", "ldu")
        alone = live_out is not None and op in ("atom", "red") and not _commutes(inst, live_out[p])
        split = (src is not None and p != a and src in defined(code, p, p + 1)
                 or shared and (writes or landed or write and reads) or alone and mems or lands and (reads or writes))
        if split and cur:
            out.append(cur)
            cur, reads, writes, mems, landed = [], 0, 0, 0, 0
        if src is not None and p != a and src in defined(code, p, p + 1):
            src = None
        cur.append(p)
        if alone:
            out.append(cur)
            cur, reads, writes, mems, landed = [], 0, 0, 0, 0
            continue
        landed += lands
        mems += mem
        if shared:
            reads += not write
            writes += write
    if cur or not out:
        out.append(cur)
    if len(out) > 1 and order is None:
        return None
    return out


def prechecks(code, pcs, param_offsets):
    """The global and shared accesses of a phase (regiongen ``_precheck``) whose addresses every
    lane can compute before the phase runs, and the instructions that compute them: integer
    arithmetic (``_arithmetic``) on registers the phase gets, on thread and block indices and on
    kernel parameters, each unguarded and on every path to the access (no branch of the phase
    jumps over it to a point before the access). -> (access pcs, slice pcs), ascending; nothing
    for a phase not in pc order (a diamond's taken side first)."""
    from .decode import _regs
    from .engine import K_BRA, K_NORMAL
    from .llvmgen import mem_access
    if list(pcs) != sorted(pcs):
        return [], []
    skips = [(q, code[q][3]) for q in pcs if code[q][0] == K_BRA and code[q][3] is not None]

    def computable(o):
        return _same_for(o, _ANY, _UNIFORM_SREGS, param_offsets)

    def slice_of(a, regs):
        out, todo, seen = set(), list(regs), set()
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            for q in pcs:
                if q >= a or x not in defined(code, q, q + 1):
                    continue
                inst = code[q][2]
                if (code[q][0] != K_NORMAL or not _arithmetic(inst, computable, param_offsets)
                        or any(j < q < t <= a for j, t in skips)):
                    return None
                out.add(q)
                todo += [r for o in inst.operands[1:] for r in _regs(o)]
        return out
    accesses, need = [], set()
    for a in pcs:
        inst = code[a][2]
        if inst.opcode not in ("ld", "ldu", "st", "atom", "red") or _space(inst) not in ("global", "const", "shared"):
            continue
        op = mem_access(inst)[1]
        base = op[1] if op[0] == "mem" else ("other",)
        if base is not None and not (base[0] == "reg" or base[0] == "sym" and base[1] not in param_offsets):
            continue
        part = slice_of(a, list(_regs(op)))
        if part is not None:
            accesses.append(a)
            need |= part
    return accesses, sorted(need)


_SLOPE_MOST = 1 << 31      # |bytes per thread| an address may step by for closed-form checks (affine)


def _width(t):
    return int(t[1:]) if t and t[:1] in ("u", "s", "b") and t[1:].isdigit() else None


def affine(insts, accesses, code, uniform, axes="x"):
    """The closed form of a phase's address check in a 1-D block (regiongen ``_precheck``): where
    each address the check would take lane by lane is an affine function of threadIdx.x (``x[i]``
    with ``i = blockIdx.x * blockDim.x + threadIdx.x``), its lowest and highest are the first and the
    last thread's, so two evaluations replace the loop over the block's threads.

    Integer arithmetic is exact modulo 2^width, so through add, sub, mul.lo and shl by constants
    (and mad, cvta, narrowing cvt) a register's bits follow ``A + k * tid`` modulo 2^width, ``k`` a
    constant (the slope). Where a value is widened (mul.wide, a widening cvt or cvta, and the address
    itself: 64 bits, or a 32-bit one zero-extended) the widened value is linear only if the line does
    not cross a wrap-around between the first and the last thread: ``widened(last) ==
    widened(first) + k * (last - first)``, which the generated code checks at run time (any
    representative of ``k`` modulo 2^width makes the test sound: a line from one in-range value to
    another stays in range). ``insts``: the instructions that compute the addresses, in order (the
    uniform values computed again, then the slice); ``uniform``: input registers every thread of the
    block holds alike. -> ({access pc: slope}, {id(instruction): [(operand index, signed, slope)]}:
    the widenings to check), or None where some address is not affine in threadIdx.x.
    ``axes="xy"``: the version for blocks of rows (``_closed_form`` of regiongen's ``_rows``), where
    threadIdx.y varies too: each slope is a pair (per threadIdx.x, per threadIdx.y), the lowest and
    highest address at corners of the block's rectangle of threads."""
    from .llvmgen import mem_access
    slope = {}
    widen = {}
    none = (0,) * len(axes)

    def of(o):
        k = o[0]
        if k == "imm" or k == "sym":
            return none
        if k == "sreg":
            if o[1] == "tid":
                return tuple(int(o[2] == a) for a in axes)
            return none if o[1] in ("ntid", "ctaid", "nctaid") else None
        if k == "reg" and not o[2]:
            return slope[o[1]] if o[1] in slope else (none if o[1] in uniform else None)
        return None

    def add(a, c, sign=1):
        return tuple(x + sign * y for x, y in zip(a, c))

    def scale(a, f):
        return tuple(x * f for x in a)

    def imm(o):
        if o[0] != "imm" or not isinstance(o[1], int):
            return None
        return o[1]

    for inst in insts:
        ops, op, mods = inst.operands, inst.opcode, inst.mods
        if inst.guard or not ops or ops[0][0] != "reg" or len(_regs_of(ops[0])) != 1:
            return None
        srcs = [of(o) for o in ops[1:]]
        if op == "ld":
            k = none if "param" in mods else None
        elif None in srcs:
            k = None
        elif not any(any(x) for x in srcs):
            k = none                    # uniform arithmetic stays uniform
        elif op == "mov" or op == "cvta":
            k = srcs[0]
            if op == "cvta" and "to" not in mods and _width(inst.type) == 32:
                widen.setdefault(id(inst), []).append((1, "u32", k))
        elif op in ("add", "sub") and not {"cc", "sat"} & set(mods) and _width(inst.type):
            k = add(srcs[0], srcs[1], 1 if op == "add" else -1)
        elif op in ("mul", "mad") and ("lo" in mods or "wide" in mods) and _width(inst.type):
            a, c = any(srcs[0]), any(srcs[1])
            if a and c:
                return None
            k = none
            if a or c:
                factor = imm(ops[2]) if a else imm(ops[1])
                if factor is None:
                    return None             # (threadIdx.x times a runtime value: a slope not known here)
                k = scale(srcs[0] if a else srcs[1], factor)
                if "wide" in mods:      # (the widened operand's slope, not the product's)
                    widen.setdefault(id(inst), []).append((1 if a else 2, inst.type, srcs[0] if a else srcs[1]))
            if op == "mad":
                k = add(k, srcs[2])
        elif (op == "shl" and imm(ops[2]) is not None and 0 <= imm(ops[2]) < (_width(inst.type) or 0)
              and not any(srcs[1])):
            k = scale(srcs[0], 1 << imm(ops[2]))
        elif op == "cvt":
            widths = [m for m in mods if _width(m)]
            if len(widths) != 2 or len(mods) != 2:
                return None
            k = srcs[0]
            if _width(widths[0]) > _width(widths[1]):
                widen.setdefault(id(inst), []).append((1, widths[1], k))
        else:
            k = None
        if k is None or max(abs(x) for x in k) >= _SLOPE_MOST:
            return None
        slope[ops[0][1]] = k
    out = {}
    for a in accesses:
        op = mem_access(code[a][2])[1]
        base = op[1] if op[0] == "mem" else ("other",)
        k = none if base is None or base[0] == "sym" else (of(base) if base[0] == "reg" else None)
        if k is None:
            return None
        out[a] = k
    if len(axes) == 1:
        return {a: k[0] for a, k in out.items()}, {i: [(j, t, k[0]) for j, t, k in w] for i, w in widen.items()}
    return out, widen


def _regs_of(o):
    from .decode import _regs
    return list(_regs(o))


def skipped(code, pcs, accesses):
    """access pc -> the pc from which lanes that skipped it may be about, for the accesses of a
    phase that some of its lanes do not reach: a guarded one (from the access itself on), and one
    a branch of the phase jumps over (from the nearest target of such a branch on: segments only
    branch forward, so a lane that reaches a later pc short of it has passed the access)."""
    from .engine import K_BRA
    jumps = [(q, code[q][3]) for q in pcs if code[q][0] == K_BRA and code[q][3] is not None]
    out = {}
    for a in accesses:
        over = [t for j, t in jumps if j < a < t]
        if code[a][2].guard or over:
            out[a] = a if code[a][2].guard else min(over)
    return out


class _Any:
    """Every register (``_same_for``'s ``regs`` where any register will do)."""

    def __contains__(self, name):
        return True


_ANY = _Any()


def segments(s, e, bounds):
    """[(first pc, end pc)] of a region's segments: the stretches between its bounds (cuts, jumps
    and their targets: ``skeleton``), each cut the first instruction of the segment after it."""
    bounds = [int(b) for b in bounds]
    return list(zip([s] + bounds, bounds + [e]))


def cross_source(code, pc):
    """The register a warp instruction at ``pc`` reads from other lanes (None for a barrier)."""
    inst = code[pc][2]
    return inst.operands[1][1] if inst.opcode in ("shfl", "vote", "redux") else None


def _allowed(code, s, e, srcs, tgts, live_out, bounds=(), reconv=None):
    """The memory and atomic rules of the module docstring (with cuts: per phase of a segment)."""
    if bounds:
        for a, z in segments(s, e, bounds):
            src = cross_source(code, a) if a in bounds else None
            if phases(code, a, z, src, reconv, live_out) is None:
                return False
        return _blocks_keep_order(code, s, e, loops(srcs, tgts), live_out)
    ranges = loops(srcs, tgts)
    ordered, commuting = [], 0
    if phases(code, s, e) is None:
        return False
    for p in range(s, e):
        inst = code[p][2]
        if inst.opcode in ("atom", "red"):
            if _commutes(inst, live_out[p]):
                commuting += 1
            else:
                ordered.append(p)
    if ordered and (len(ordered) > 1 or commuting or any(h <= ordered[0] <= t for h, t in ranges)):
        return False
    return True


def _blocks_keep_order(code, s, e, ranges, live_out) -> bool:
    """May a region with cuts, which runs block after block, hold its atomics on memory other blocks
    see? Phases keep lock step's lane order inside a block, which is all shared memory needs; in global
    memory lock step runs each atomic for every block of the batch before the next instruction, so an
    atomic whose order shows (a float add's rounding, a returned ticket) keeps that order only where
    each thread runs it once (outside loops) and it is the region's only such atomic. A float atomicAdd
    into global memory in a loop of 5 turns had 11 of 16 sums rounded otherwise than lock step."""
    ordered = [p for p in range(s, e) if code[p][2].opcode in ("atom", "red") and _space(code[p][2]) != "shared"
               and not _commutes(code[p][2], None if live_out is None else live_out[p])]
    return not ordered or len(ordered) == 1 and not any(h <= ordered[0] <= t for h, t in ranges)


_UNIFORM_OPS = {"mov", "add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "cvta", "cvt", "ld"}
_UNIFORM_SREGS = {"tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "nwarpid"}


def _entry_end(f):
    """The kernel's first branch, call or label: every thread runs the instructions before it."""
    return min([i for i in f.labels.values()] + [i.index for i in f.insts if i.opcode in ("bra", "brx", "call")]
               + [len(f.insts)])


def _same_for(o, regs, sregs, param_offsets):
    """Is operand ``o`` as uniform as ``regs`` and ``sregs`` make it: an immediate, a register of
    ``regs``, a special register of ``sregs``, a variable's address?"""
    k = o[0]
    return (k == "imm" or k == "reg" and o[1] in regs and not o[2] or k == "sreg" and o[1] in sregs
            or k == "sym" and o[1] not in param_offsets and o[1] != "_")


def _arithmetic(inst, same, param_offsets, opcodes=_UNIFORM_OPS):
    """Is ``inst`` unguarded integer arithmetic into a register (``opcodes``, cvt between integers,
    a kernel parameter's ld) whose operands all pass ``same``?"""
    ops, t = inst.operands, inst.type or ""
    if inst.guard or inst.opcode not in opcodes or not ops or ops[0][0] != "reg" or t[:1] not in ("u", "s", "b"):
        return False
    if inst.opcode == "cvt" and not all(m[:1] in ("u", "s") for m in inst.mods if m[1:].isdigit()):
        return False
    if inst.opcode == "ld":
        src = ops[1]
        return bool("param" in inst.mods and src[0] == "mem" and src[1] and src[1][0] == "sym"
                    and src[1][1] in param_offsets and len(inst.mods) <= 2)
    return all(same(o) for o in ops[1:])


def _definitions(f):
    """register -> the instructions that write it."""
    from .decode import _regs
    out = {}
    for inst in f.insts:
        if inst.operands and inst.opcode not in _NO_DEST:
            for r in _regs(inst.operands[0]):
                out.setdefault(r, []).append(inst)
    return out


def uniform_defs(df, param_offsets, s, e):
    """register -> its defining instruction, for registers a region [s, e) with cuts may compute
    again in each segment instead of passing them through memory: defined once in the kernel,
    unguarded, where every thread passes (before the kernel's first branch or label, or inside the
    region where no branch jumps over it), by integer arithmetic on immediates, symbols, kernel
    parameters, thread and block indices and other such registers. Recomputing one gives the value
    the thread computed, bit for bit."""
    from .engine import K_BRA
    f = df.func
    code = df.code
    first_jump = _entry_end(f)
    skipped = set()
    for p in range(s, e):
        if code[p][0] == K_BRA and code[p][3] is not None:
            skipped.update(range(p + 1, code[p][3]))
    guarded = _read_where_passed(code, s, e) if skipped else set()
    passed = {p for p, _ in guarded}
    before = sorted(_dominators(code, s) - set(range(first_jump))) if s > first_jump else []
    top = [p for p in range(first_jump)] + before + [p for p in range(max(s, first_jump), e)
                                                     if p not in skipped or p in passed]
    defs = _definitions(f)
    out = {}
    for inst in (f.insts[p] for p in top):
        if (_arithmetic(inst, lambda o: _same_for(o, out, _UNIFORM_SREGS, param_offsets), param_offsets)
                and len(defs[inst.operands[0][1]]) == 1
                and (inst.index not in skipped or (inst.index, inst.operands[0][1]) in guarded)):
            out[inst.operands[0][1]] = inst
    return out


def _dominators(code, s):
    """The pcs every path from the kernel's start to ``s`` passes (``s`` excluded): a register defined
    once there, before a region that reads it, holds what its definition computed wherever the
    region runs (globalToShmemAsyncCopy's ``threadIdx.y``, read after ``if (wA > 0)``, in the
    region of its tile loop's product, which starts at the loop's barrier)."""
    from .engine import K_BRA
    n = len(code)
    leaders = {0, s}
    for p, c in enumerate(code):
        if c[0] == K_BRA and c[3] is not None:
            leaders |= {c[3], p + 1}
        elif c[2].opcode in ("ret", "exit", "trap"):
            leaders.add(p + 1)
    starts = sorted(x for x in leaders if x < n)
    ends = starts[1:] + [n]
    block_of = {a: k for k, a in enumerate(starts)}
    succ = []
    for a, z in zip(starts, ends):
        last = code[z - 1]
        nxt = []
        if last[0] == K_BRA and last[3] is not None:
            nxt.append(block_of[last[3]])
            if last[2].guard is not None:
                nxt.append(block_of.get(z))
        elif last[2].opcode not in ("ret", "exit", "trap"):
            nxt.append(block_of.get(z))
        succ.append([x for x in nxt if x is not None])
    preds = [[] for _ in starts]
    for k, nx in enumerate(succ):
        for x in nx:
            preds[x].append(k)
    every = set(range(len(starts)))
    dom = [every] * len(starts)
    dom[0] = {0}
    changed = True
    while changed:
        changed = False
        for k in range(1, len(starts)):
            new = set.intersection(*(dom[q] for q in preds[k])) | {k} if preds[k] else {k}
            if new != dom[k]:
                dom[k], changed = new, True
    target = block_of[s]
    return {p for k in dom[target] if k != target for p in range(starts[k], ends[k])} | set(range(starts[target], s))


def _read_where_passed(code, s, e):
    """(pc, register) for definitions inside [s, e) that a forward branch jumps over but that every
    thread reading the register has passed: a tiled product's shared-memory row addresses
    (``As + 64 * threadIdx.y``), computed after ``if (n < TILE) goto end`` and read only in the
    tile loop before ``end``. For each branch p -> t with p < d < t, every read of the register
    lies in (d, t), and no branch from t or later lands in (d, t) (a loop back past the skipped
    code): a thread that reads it came through d. Recomputing the value then gives what the
    thread computed; without this such values went through their arrays, loaded per lane, and an
    address made of them was one LLVM could not see as a neighbour's (a gather per load)."""
    from .decode import _regs
    from .engine import K_BRA
    branches = [(p, code[p][3]) for p in range(s, e) if code[p][0] == K_BRA and code[p][3] is not None]
    reads = {}
    for p in range(len(code)):
        inst = code[p][2]
        ops = inst.operands or ()
        writes = bool(ops) and inst.opcode not in _NO_DEST
        for o in (ops[1:] if writes else ops):
            for r in _regs(o):
                reads.setdefault(r, []).append(p)
        if inst.guard:
            reads.setdefault(inst.guard[0], []).append(p)
    out = set()
    for d in range(s, e):
        inst = code[d][2]
        if inst.opcode in _NO_DEST or not inst.operands or inst.operands[0][0] != "reg":
            continue
        r = inst.operands[0][1]
        over = [t for p, t in branches if p < d < t]
        if not over:
            continue
        t = min(over)
        if all(d < q < t for q in reads.get(r, ())) and not any(b >= t and d < g < t for b, g in branches):
            out.add((d, r))
    return out


_BLOCK_SREGS = {"ntid", "ctaid", "nctaid"}


def block_uniform(df, s, e, bounds):
    """Registers of a region with cuts that hold one value for every thread of a block wherever the
    region reads them: each of their definitions in the kernel is unguarded integer arithmetic or
    comparison (``_arithmetic``, ``setp``) of immediates, kernel parameters, variables' addresses,
    ``%ntid``, ``%ctaid``, ``%nctaid`` and such registers, at a pc every thread of the block
    passes: in the kernel's entry block, or inside the region where no forward branch of its
    segment jumps over it (segments are entered by the whole block: jumps are taken as one). A loop
    counter such as the tree reduction's ``stride`` is one (defined twice, unlike ``uniform_defs``)."""
    from .engine import K_BRA
    f, code = df.func, df.code
    first_jump = _entry_end(f)
    skipped = set()
    for a, z in segments(s, e, bounds):
        for p in range(a, z):
            if code[p][0] == K_BRA and code[p][3] is not None and p < code[p][3] <= z:
                skipped.update(range(p + 1, code[p][3]))
    defs = _definitions(f)
    out = set(defs)
    branches = [(p, code[p][3], code[p][2].guard) for p in range(len(code))
                if code[p][0] == K_BRA and code[p][3] is not None]
    apart = set()

    def ok(inst):
        p = inst.index
        return (p < first_jump or s <= p < e and p not in skipped or not s <= p < e and p not in apart) and _arithmetic(
            inst, lambda o: _same_for(o, out, _BLOCK_SREGS, df.param_offsets), df.param_offsets,
            _UNIFORM_OPS | {"setp", "not", "neg", "min", "max"})
    while True:
        # outside the region, where no branch on a predicate that may differ between the block's
        # threads jumps over the pc or loops around it, the block's threads pass it alike:
        # globalToShmemAsyncCopy's pipeline stage ``i``, counted in the loop around the region
        apart = set()
        for p, t, guard in branches:
            if guard is not None and guard[0] not in out:
                apart.update(range(p + 1, t) if t > p else range(t, p + 1))
        bad = {r for r in out if not all(ok(i) for i in defs[r])}
        if not bad:
            return out
        out -= bad


def tid_guard(df, a, z, uniform, live_in):
    """A segment [a, z) (after its cut) that starts ``setp.<cmp> %p, %tid, U; @%p bra z``, with
    ``%tid`` only ever ``%tid.x`` and ``U`` an immediate or a block-uniform register: the threads
    that do not leave for ``z`` are a run of thread indices, a prefix or a suffix (the tree
    reduction's ``if (tid < stride)``), so in a 1-D block only they need running (regiongen's
    ``_narrowed``), or the one thread ``U`` (``if (tid == 0)`` after a reduction). -> dict(setp=pc,
    span=instructions a leaving thread runs, U=operand, signed, prefix, plus=1 if the run ends
    after U else 0, single: only thread U stays, step: 1), or None.

    Also ``and %m, %tid, 2^k - 1`` (or ``rem %m, %tid, 2^k``, ``rem %m, %tid, WARP_SZ``); ``setp.eq/ne
    %p, %m, 0; @%p bra z``: the threads that stay are every 2^k-th one (``step``; ``if ((threadIdx.x &
    31) == 0) out[w] = v``, ``if (threadIdx.x % warpSize == 0)``, a warp's first lane after a shuffle
    reduction), the lanes the native loop steps through."""
    from .dtypes import storage
    from .engine import K_BRA, K_NORMAL
    f, code = df.func, df.code
    p = a + 1 if code[a][2].opcode in ("bar", "barrier") else a
    if p + 1 >= z or code[p][0] != K_NORMAL:
        return None
    if code[p][2].opcode in ("and", "rem"):
        return _lane_mask_guard(df, a, p, z, live_in)
    if code[p + 1][0] != K_BRA:
        return None
    inst, bra = code[p][2], code[p + 1][2]
    ops = inst.operands
    cmp = next((m for m in inst.mods if m in ("lt", "le", "gt", "ge", "eq", "ne")), None)
    if (inst.opcode != "setp" or inst.guard or cmp is None or inst.type not in ("s32", "u32") or len(ops) != 3
            or ops[0][0] != "reg" or bra.opcode != "bra" or code[p + 1][3] != z or not bra.guard
            or bra.guard[0] != ops[0][1] or ops[0][1] in live_in[z]):
        return None

    defs = _definitions(f)

    def is_tid(o):
        ds = defs.get(o[1], []) if o[0] == "reg" and not o[2] else []
        return (len(ds) == 1 and ds[0].opcode == "mov" and not ds[0].guard
                and ds[0].operands[1] == ("sreg", "tid", "x"))

    def is_u(o):
        return o[0] == "imm" and o[2] == "int" or o[0] == "reg" and not o[2] and o[1] in uniform \
            and storage(f.regs[o[1]]).itemsize == 4
    if is_tid(ops[1]) and is_u(ops[2]):
        u = ops[2]
    elif is_tid(ops[2]) and is_u(ops[1]):
        u, cmp = ops[1], {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}[cmp]   # U < t: t > U
    else:
        return None
    if cmp in ("eq", "ne"):         # only thread U stays where t != U sends a thread away, else none is a run
        if (cmp == "ne") == bool(bra.guard[1]):
            return None
        return dict(setp=p, span=p + 2 - a, U=list(u), signed=inst.type == "s32", prefix=False, plus=0, single=True,
                    step=1)
    # (t cmp U) is what sends a thread away, or with @!%p its negation; stay = not leave
    below = cmp in ("lt", "le")                 # the predicate holds for the low thread indices
    stays_low = below == bool(bra.guard[1])
    return dict(setp=p, span=p + 2 - a, U=list(u), signed=inst.type == "s32", prefix=stays_low,
                plus=int(cmp in ("le", "gt")), single=False, step=1)


def _is_tid_x(defs, o):
    """Is operand ``o`` a register whose one definition is ``mov %r, %tid.x``?"""
    ds = defs.get(o[1], []) if o[0] == "reg" and not o[2] else []
    return len(ds) == 1 and ds[0].opcode == "mov" and not ds[0].guard and ds[0].operands[1] == ("sreg", "tid", "x")


def _lane_mask_guard(df, a, p, z, live_in):
    """tid_guard's ``and %m, %tid, 2^k - 1`` or ``rem %m, %tid, 2^k`` (a thread index is never
    negative: its remainder is its low bits); ``setp.eq/ne %p, %m, 0; @%p bra z`` at ``p``, where
    the threads that stay for the rest of the segment are those with ``%m == 0``."""
    from .engine import K_BRA, K_NORMAL
    code = df.code
    if p + 2 >= z or code[p + 1][0] != K_NORMAL or code[p + 2][0] != K_BRA:
        return None
    land, inst, bra = code[p][2], code[p + 1][2], code[p + 2][2]
    lo, ops = land.operands, inst.operands
    if (land.guard or land.type not in ("b32", "u32", "s32") or len(lo) != 3 or lo[0][0] != "reg"
            or lo[0][1] in live_in[z]):
        return None
    defs = _definitions(df.func)
    if land.opcode == "and":
        mask = next((o[1] for o in lo[1:] if o[0] == "imm" and o[2] == "int"), None)
        tid = next((o for o in lo[1:] if o[0] == "reg"), None)
    else:                       # rem %m, %tid, d: d an immediate or a register holding WARP_SZ
        tid, d = lo[1], lo[2]
        ds = defs.get(d[1], []) if d[0] == "reg" and not d[2] else []
        if len(ds) == 1 and ds[0].opcode == "mov" and not ds[0].guard and ds[0].operands[1][:2] == ("sym", "WARP_SZ"):
            mask = 31
        else:
            mask = d[1] - 1 if d[0] == "imm" and d[2] == "int" and isinstance(d[1], int) else None
    if mask is None or tid is None or not _is_tid_x(defs, tid) or not 0 < mask < 1 << 16 or mask & (mask + 1):
        return None
    cmp = next((m for m in inst.mods if m in ("eq", "ne")), None)
    if (inst.opcode != "setp" or inst.guard or cmp is None or inst.type not in ("s32", "u32", "b32") or len(ops) != 3
            or ops[0][0] != "reg" or ops[1] != lo[0] or ops[2][0] != "imm" or ops[2][1] != 0
            or bra.opcode != "bra" or code[p + 2][3] != z or not bra.guard or bra.guard[0] != ops[0][1]
            or ops[0][1] in live_in[z]):
        return None
    if (cmp == "ne") == bool(bra.guard[1]):     # the threads with %m == 0 must be the ones that stay
        return None
    return dict(setp=p + 1, span=p + 3 - a, U=["imm", 0, "int"], signed=False, prefix=False, plus=0, single=False,
                step=mask + 1)


def spins(code, head, back):
    """Does the loop head..back read memory that another thread may be changing while it loops?"""
    return any(code[p][2].opcode in ("ld", "ldu") and _SPIN_LOADS & set(code[p][2].mods)
               for p in range(head, back + 1))


def turn_loops(code, s, e, live_out):
    """Back-edge pcs of the loops whose lanes take turns (regiongen.RegionBuilder._edge): those
    that touch global memory, unless the region holds an atomic whose order shows (lanes that
    leave their loops at different turns would reach it out of lane order)."""
    from .engine import K_BRA
    if any(code[p][2].opcode in ("atom", "red") and not _commutes(code[p][2], live_out[p]) for p in range(s, e)):
        return []
    out = []
    for p in range(s, e):
        if code[p][0] == K_BRA and code[p][3] <= p:
            head = code[p][3]
            if any(code[q][2].opcode in ("ld", "ldu", "st", "atom", "red")
                   and _space(code[q][2]) in ("global", "generic") for q in range(head, p + 1)):
                out.append(p)
            elif _reads_shared_only(code, head, p) and _one_block(code, head, p):
                out.append(p)       # a gang may run it (gang_loops): one turn a lane costs a park
    return out


def _reads_shared_only(code, head, back):
    """Does the loop head..back touch memory only by plain shared loads (a Sturm count's
    ``delta = d[k] - x - s[k] * s[k] / delta`` over a chunk the block loaded before its barrier)?"""
    mem = [code[q][2] for q in range(head, back + 1)
           if code[q][2].opcode in ("ld", "ldu", "st", "atom", "red", "cp", "tex", "suld", "sust")]
    return bool(mem) and all(i.opcode == "ld" and _space(i) == "shared" and not _SPIN_LOADS & set(i.mods)
                             for i in mem)


def _one_block(code, head, back):
    """Is the loop head..back one basic block ending in its guarded branch back (gang_loops' shape)?"""
    from .engine import K_BRA, K_NORMAL
    return (code[back][0] == K_BRA and code[back][2].guard is not None
            and all(code[q][0] == K_NORMAL for q in range(head, back))
            and not any(code[p][0] == K_BRA and head < code[p][3] <= back for p in range(len(code))))


def gang_loops(code, s, e, turns, param_offsets):
    """{head: back-edge pc} of the turn loops (``turn_loops``) that a *gang* of lanes may run
    together (regiongen ``_gang``): the loop is one basic block ``head..back`` ending in a guarded
    branch back (a grid-stride loop's body), nothing branches into it, and its memory accesses are
    plain global or constant loads and stores, or shared loads, whose addresses every lane computes
    from what it has at the head (``prechecks``), so one check of the gang's addresses before an
    iteration lets the iteration run unchecked."""
    out = {}
    for p in turns:
        h = code[p][3]
        body = range(h, p)
        if not _one_block(code, h, p) or spins(code, h, p):
            continue
        mem = [q for q in body if code[q][2].opcode in ("ld", "ldu", "st", "atom", "red")]
        if any(code[q][2].opcode not in ("ld", "ldu", "st") or _space(code[q][2]) not in ("global", "const")
               for q in mem if not (code[q][2].opcode == "ld" and _space(code[q][2]) == "shared")):
            continue
        if mem and prechecks(code, list(body), param_offsets)[0] != mem:
            continue
        out[h] = p
    return out


def restricts_generic(code, s, e):
    """Must a generic access that lands in shared memory stop its thread? (It could meet a shared
    write of the region.)"""
    for p in range(s, e):
        inst = code[p][2]
        if inst.opcode in ("st", "atom", "red") and _space(inst) in ("shared", "generic"):
            return True
    return False


def defined(code, s, e):
    """Registers the region may write (over-approximated: the first operand of every instruction
    that has a destination)."""
    from .decode import _regs
    out = set()
    for p in range(s, e):
        inst = code[p][2]
        if inst.opcode not in _NO_DEST and inst.operands:
            out.update(_regs(inst.operands[0]))
    return out


def named(code, s, e):
    from .decode import _regs
    out = set()
    for p in range(s, e):
        inst = code[p][2]
        for o in inst.operands:
            out.update(_regs(o))
        if inst.guard:
            out.add(inst.guard[0])
    return out


# ------------------------------------------------------------------ running a region

def _in_flight(ex):
    from .async_native import in_flight
    return in_flight(ex)


class Runner:
    """Calls a region's native function over the active lanes and turns stopped lanes into SIMT
    stack entries (see the module docstring). ``orig`` is the code entry it replaced at ``start``:
    the engine runs that instead where the region may not run (``__call__`` returns -1)."""

    def __init__(self, region, fn, orig, code, plain, entry=None, fn_1d=None, fn_2d=None):
        self.r, self.fn, self.orig, self.code, self.plain = region, fn, orig, code, plain
        self.fn_1d = fn_1d          # the version for blocks of one dimension (blockDim.y and .z 1), if any
        self.fn_2d = fn_2d          # the version for blocks of rows (blockDim.z 1), if any
        # a region with cuts may also be entered at a loop head: the interpreter gets there after a
        # block stopped, or when a long batch moves to native code mid-way (compiled.upgrade_later)
        self.entry = region.start if entry is None else entry
        self.entries = {region.start, *region.heads}
        # each thread's (table of the registers' addresses, its address, the arrays they are of): batches
        # of one launch may run on several threads at once (parallel.py), each with its own registers
        self._threads = threading.local()
        self.spill_at = {int(p): [(name, int(c)) for name, c in cols] for p, cols in region.spill_at}
        self.cut_pcs = np.array(region.bounds, np.int64)      # where a stopped thread's block waits
        self.warp_ops = any(kind == "warp" for _, kind in region.cuts)
        self.remat_at = {int(p): [int(q) for q in qs] for p, qs in region.remat_at}
        self.spare = []             # a call's scratch array for the next (_scratch)

    def __call__(self, ex, stack, ent, rpc):
        """Run the active lanes through the region. Returns the exit pc (every lane is there), None
        (some lanes stopped inside: the stack changed) or -1 (run the replaced entry instead)."""
        r = self.r
        off = ex.__dict__.get("regions_off")
        if self.entry < rpc < r.end or off and r.start in off:
            return -1           # lanes must meet inside the region (an enclosing divergence), or it spun
        if any(x is ent for x in ex.__dict__.get("interpret_entries", ())):
            return -1           # lanes that stopped at the region's first instruction: the interpreter runs it
        if r.cuts and (ex.idx.size != ex.valid_idx.size or self.warp_ops and ex.idx.size != ex.n):
            return -1           # cuts need every thread of the batch here; shuffles, whole warps
        if r.copies and _in_flight(ex):
            return -1           # copies in asyncops' hands: its waits land them (async_native)
        if compiled.mode() == "check":
            return self._check(ex, stack, ent)
        return self._run(ex, stack, ent)

    def _run(self, ex, stack, ent):
        r = self.r
        regs = ex.fr.regs
        mine = getattr(self._threads, "table", None)
        if mine is None:
            table = np.zeros(max(len(r.regs), 1), np.uint64)
            mine = self._threads.table = (table, table.ctypes.data, [None] * len(r.regs))
        table, table_address, seen = mine
        every = ex.idx.size == ex.n
        for k, name in enumerate(r.regs):
            arr = regs.get(name.lstrip("@"))          # (@name: a shuffle's source, read across lanes)
            if arr is None:
                # every lane stores it before reading it (or, stopping, the interpreter writes it
                # first): a previous batch's array needs no zeroing
                arr = regs.take(name, zeroed=False) if every and name in r.fresh else regs[name.lstrip("@")]
            if arr is not seen[k]:
                seen[k] = arr
                table[k] = compiled._address(arr)
        idx = ex.idx if ex.idx.dtype == np.int64 else ex.idx.astype(np.int64)
        count = idx.size
        ctx = compiled._context(ex, r.symbols)
        # st, rec, spill and state in one array: one allocation and one address to read (each read
        # builds a ctypes object: microseconds, at every region run of a small launch)
        ns = max(r.nspill, 1)
        at_spill, at_state = 8 + 2 * count, 8 + 2 * count + count * ns
        scratch = self._scratch(at_state + (3 * count if r.turns or r.cuts else 3))
        st, rec, spill, state = scratch[:8], scratch[8:at_spill], scratch[at_spill:at_state], scratch[at_state:]
        if r.turns or r.cuts:
            state = state.reshape(count, 3)
        st[:] = 0
        st[1] = 0 if r.turns else -1        # turns: lanes with state so far; else: the pc lane st[0] resumes at
        st[6] = -1 if self.entry == r.start else self.entry     # (cuts: where every chunk starts)
        st[2] = BUDGET
        queue = None
        if r.copies:
            from . import async_native
            queue = async_native.queue(self._threads)
            st[7] = compiled._address(queue)
        base = compiled._address(scratch)
        args = (count, 0 if every else compiled._address(idx), table_address, compiled._address(ctx), base,
                base + 8 * 8, base + 8 * at_spill, base + 8 * at_state)
        stats = ex.stats
        longest = 0
        block = ex.batch.block
        # (the 1-D version reads block-uniform values from a block's first thread: only for chunks
        # that start where the region does, CutRegionBuilder._block_values)
        fn = self.fn
        if self.entry == r.start and block[2] == 1:
            if self.fn_1d is not None and block[1] == 1:
                fn = self.fn_1d
            elif self.fn_2d is not None:
                fn = self.fn_2d
        while True:
            status = fn(*args)
            stats.thread_instructions += int(st[3])
            longest = max(longest, int(st[4]))
            work = ex.__dict__.get("region_work", 0) + int(st[3])
            if work > CLOCK_EVERY or status:       # (reading the CPU clock costs microseconds)
                work = 0
                if time.thread_time() > ex.deadline or time.monotonic() > ex.wall_deadline:
                    self._timed_out(ex, idx, st, state)
            ex.region_work = work
            st[3] = 0
            if queue is not None and queue[1] and st[1] < 0:     # a block left with copies queued
                async_native.hand_over(ex, queue, self._a_copy())
            if not status:
                break
        stats.instructions += longest
        nrec = int(st[5])
        if not nrec:
            if not r.turns:
                # (nothing stopped: no spill row or lane state was written, so the array is still a
                # few touched pages; one whose rows were written goes, not to hold their memory)
                self.spare.append(scratch.base)
            return r.end
        rows = rec[:2 * nrec].reshape(nrec, 2)
        ent[0] = r.end
        whole = rows[:, 0] < 0          # blocks stopped as one (regiongen._jump, _precheck_failed)
        if whole.any():
            t = ex.batch.threads_per_block
            for p in np.unique(rows[whole, 1] >> 1).tolist():
                mask = np.zeros(ex.n, bool)
                for c in (-1 - rows[whole & (rows[:, 1] >> 1 == p), 0]).tolist():
                    mask[idx[c:c + t]] = True
                self._rematerialize(ex, p, np.flatnonzero(mask))
                # the block goes on interpreted past the region's end too (not waiting there, where
                # synccheck would count it as heading for the kernel's end): blocks do not meet
                ent[2] = ent[2] & ~mask
                stack.append([p, ent[1], mask])
                if p in self.entries:
                    ex.__dict__.setdefault("interpret_entries", []).append(stack[-1])
            rows = rows[~whole]
        ks, pcs, spun = rows[:, 0], rows[:, 1] >> 1, rows[:, 1] & 1
        values = spill.reshape(count, ns)
        joins = {}          # where stopped lanes go to: the region's end, or the cut that ends their segment
        spills = []
        for p in np.unique(pcs).tolist():
            sel = ks[pcs == p]
            at = idx[sel]
            spills.append((p, sel, at))
            mask = np.zeros(ex.n, bool)
            mask[at] = True
            k = np.searchsorted(self.cut_pcs, p)
            join = int(self.cut_pcs[k]) if k < self.cut_pcs.size else r.end
            stops, chunks = joins.setdefault(join, ([], set()))
            stops.append((int(at.min()), [p, join, mask]))
            chunks.update((sel // ex.batch.threads_per_block).tolist())
            if p in self.entries:
                ex.__dict__.setdefault("interpret_entries", []).append(stops[-1][1])
        if spun.any():
            ex.__dict__.setdefault("regions_off", set()).add(r.start)
        waits = []
        for join, (stops, chunks) in sorted(joins.items(), key=lambda j: -min(j[1][0])[0]):
            if join != r.end:   # the stopped lanes' blocks wait at the cut, for the stopped lanes
                t = ex.batch.threads_per_block
                mask = np.zeros(ex.n, bool)
                mask[idx[np.concatenate([np.arange(c * t, min((c + 1) * t, count)) for c in sorted(chunks)])]] = True
                self._rematerialize(ex, join, np.flatnonzero(mask))
                waits.append([join, r.end, mask])
            waits += [e for _, e in sorted(stops, key=lambda x: -x[0])]     # the lowest lane's stop runs first
        for p, sel, at in spills:       # (after the block's values at the cut: a stopped lane's own win)
            for name, col in self.spill_at.get(p, ()):
                arr = regs[name]
                v = values[sel, col]
                arr[at] = v != 0 if arr.dtype == np.bool_ else v.astype(np.uint64).astype(arr.dtype)
        stack += waits
        return None

    def _a_copy(self):
        """A cp.async of the region: the instruction handed-over rows are credited to."""
        from . import async_native
        return next(self.code[p][2] for p in range(self.r.start, self.r.end)
                    if async_native.form(self.code[p][2]) == "copy")

    def _scratch(self, size):
        """An uninitialized int64 array of ``size`` for a native call's counters, records, spill
        rows and lane states (nothing of it is read before native code writes it): the last call's
        where it is big enough. For a batch of 2^19 lanes the spill rows alone are tens of megabytes
        of address space that only stopped lanes touch, and mapping and unmapping them again at every
        batch cost 10 to 100 us (a 2^20-thread launch runs two such batches)."""
        spare = self.spare.pop() if self.spare else None        # (a list: another thread takes its own)
        if spare is None or spare.size < size:
            spare = np.empty(size, np.int64)
        return spare[:size]

    def _rematerialize(self, ex, pc, lanes):
        """The uniform values live at ``pc`` that native code computes again in each segment
        instead of storing (compiled._segments), computed by the interpreter for ``lanes``, the
        blocks that stop there, so that the interpreter finds them in their arrays."""
        for q in self.remat_at.get(pc, ()):
            ex.run_on(lanes, self.code[q][1], ex)

    def _timed_out(self, ex, idx, st, state):
        """The watchdog: where the lanes still in the region are (one of them for the message)."""
        from .engine import Watchdog
        if self.r.turns:
            waiting = np.ones(idx.size, bool)
            known = state[:int(st[1]), 0]
            waiting[:known.size] = known != -2
            pcs = known[known >= 0]
            pc = int(pcs[0]) if pcs.size else self.r.start
        else:
            waiting = np.arange(idx.size) >= st[0]
            pc = int(st[1]) if st[1] >= 0 else self.r.start
        mask = np.zeros(ex.n, bool)
        mask[idx[waiting]] = True
        # (the lanes through the region: threads that have ended, if only a return follows it, engine._threads_finished)
        ex.pc_of = {"pc": pc, "inst": self.code[pc][2], "mask": mask, "through": idx[~waiting], "end": self.r.end}
        raise Watchdog()

    def _check(self, ex, stack, ent):
        """CUDALAB_TIER=check: run the region natively, then again in the interpreter from the same
        state, and raise where registers live at the exit or memory differ. The interpreter's
        results stay. A native run where lanes stopped is not compared (the interpreter reruns)."""
        from .engine import run_function
        regs = ex.fr.regs
        before = {k: v.copy() for k, v in regs.items()}
        spaces = (ex.mem.data, ex.shared, ex.local)
        mem_before = [a.copy() for a in spaces]
        mask, idx, ridx = ex.mask, ex.idx, ex.ridx
        depth = len(stack)
        snap = None
        if self.r.copies:
            from . import async_native
            snap = async_native.snapshot(ex)
        got = self._run(ex, stack, ent)
        if self.r.copies:
            async_native.restore(ex, snap)
        native = None
        if got is not None:
            native = ({k: regs[k].copy() for k in self.r.outputs}, [a.copy() for a in spaces])
        del stack[depth:]
        for k in list(regs):
            if k in before:
                regs[k][:] = before[k]
            else:
                del regs[k]
        for a, b in zip(spaces, mem_before):
            a[:] = b
        run_function(ex, self.plain, mask.copy(), is_kernel=False, span=(self.entry, self.r.end))
        ex.mask, ex.idx, ex.ridx = mask, idx, ridx
        ent[0] = self.r.end
        if native is None:
            return self.r.end
        where = f"compiled region {self.r.start}-{self.r.end} ({self.code[self.r.start][2].text})"
        for k, v in native[0].items():
            if not np.array_equal(v[idx], regs[k][idx]):
                bad = idx[v[idx] != regs[k][idx]][0]
                raise AssertionError(f"{where} left {k}={v[bad]} in lane {bad}, the interpreter {regs[k][bad]}")
        for name, a, b in zip(("global", "shared", "local"), native[1], spaces):
            if not np.array_equal(a, b):
                raise AssertionError(f"{where} changed {name} memory differently")
        return self.r.end
