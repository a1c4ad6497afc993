"""cp.async pipelines inside a region with cuts: the copies in native code, landing where asyncops lands them.

A tiled kernel's ``cuda::pipeline`` loop (globalToShmemAsyncCopy, the cp.async tensor-core GEMMs) is a
producer half that issues ``cp.async`` and commits groups, a ``cp.async.wait_group`` and a
``__syncthreads()``, then a consumer half. Interpreted, every issue, commit and wait is a numpy
step over the whole batch's lanes, and the code between them goes group by group: 90% of the
sample's time was there, around a consumer half that already ran natively as a region. Here the
whole loop is one region (regions.py, "Cuts"), with the same semantics as ``asyncops``:

- ``cp.async`` reads its source **when issued** (4, 8 or 16 bytes; ``src-size`` 0 or an ignore-src
  predicate that holds gives zeros, a full ``src-size`` reads every byte) and queues the bytes in the
  issuing thread's own queue, with the thread's commit count as its group;
- ``cp.async.commit_group`` adds one to the thread's count;
- ``cp.async.wait_group N`` (``wait_all``: a commit, then ``wait_group 0``) marks the thread's queued
  copies whose group is older than its newest N as ready (the oldest ones: groups never decrease
  along the queue), and the ready copies of every thread of the block land **into shared memory**
  when the phase ends (``land_ready``), in the order lock step lands them: by issue (the segment, then
  the pc), then by thread, so two threads' copies of the same bytes end as ``asyncops`` leaves them.
  A read of the tile before the wait still sees the old bytes, as on an H100.

For the phases of a segment (regions.phases) a wait is a shared-memory store: a shared access after
it starts a new phase, so it sees every thread's landed bytes, as lock step would. Where threads of
one block take different paths with copies or waits (``if``/``else`` arms) and their copies overlap, the
order within a phase is the pc's, not lock step's taken-side-first one: a race between threads' copies,
whose GPU order is undefined.

**The queue** is one block's (the region runs a block at a time): per thread a count, a commit
count, its ring's first slot and how many copies are ready, and a ring of ``DEPTH`` slots of five words
(the destination's pointer with the size in its top byte, the group, the issue order, 16 bytes of data). It lives in an array of the Runner's (``queue``), whose address native
code reads from ``st[7]``, so that it outlives a call that returns for the watchdog mid-block. A
thread with ``DEPTH`` copies in flight that issues another stops at that ``cp.async`` (the
interpreter reruns it), as does a partial ``src-size`` (1 to size - 1 bytes: rare, and the
interpreter's checks word its fault).

**Handing over.** Where a block leaves native code with copies still queued (a thread stopped, the
block stopped at a jump, the region ended before a wait), the call returns after that block and
``hand_over`` moves the copies into ``asyncops.AsyncState`` as the interpreter's own rows, each with
its group counted back from the lane's commit count, so the interpreter's waits land them as they
would have. A region is entered only where nothing is in flight in ``AsyncState`` (``in_flight``),
so native code never has to wait for the interpreter's copies. Launches with observers (racecheck's
``AsyncEvent``s) never run regions: everything stays in ``asyncops``.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from .llvmgen import GENERATORS, I8, I32, I64, Skip

DEPTH = 32                  # copies in flight per thread (a 4-stage pipeline of 2 copies a stage needs 10)
MAX_THREADS = 1024
TOP = 4                     # words: [block of the chunk, copies queued in the chunk, segments run, unused]
PER_THREAD = 4              # words: [count, commits, first slot of the ring, how many of the oldest are complete]
HEADER = TOP + PER_THREAD * MAX_THREADS
SLOT = 5                    # words a copy: dst pointer | size << 56, group, issue order, data (2 words)
PC_BITS = 24                # issue order: segments run << PC_BITS | pc
DATA = 3
SIZE_SHIFT = 56


# ------------------------------------------------------------------ which instructions

def form(inst):
    """What native code does with a ``cp`` instruction: "copy", "commit", "wait" or None (it stays
    with asyncops: bulk copies, mbarrier-tracked copies, prefetches, cache hints)."""
    if inst.opcode != "cp":
        return None
    mods = set(inst.mods)
    if mods & {"bulk", "mbarrier", "reduce", "tensor", "prefetch"} or any(m.startswith("L2::cache_hint") for m in mods):
        return None
    if "async" not in mods:
        return None
    if "commit_group" in mods:
        return "commit"
    if "wait_group" in mods or "wait_all" in mods:
        if "wait_group" in mods and not (inst.operands and inst.operands[0][0] == "imm"):
            return None
        return "wait"
    if not {"shared", "shared::cta"} & mods or "global" not in mods:
        return None
    ops = inst.operands
    if len(ops) < 3 or ops[2][0] != "imm" or ops[2][1] not in (4, 8, 16) or ("cg" in mods and ops[2][1] != 16):
        return None
    if ops[0][0] != "mem" or ops[1][0] != "mem" or len(ops) > 4:
        return None
    if len(ops) == 4 and ops[3][0] == "imm" and not (isinstance(ops[3][1], int) and ops[3][1] >= ops[2][1]):
        return None                 # a partial immediate src-size: the interpreter's
    return "copy"


def eligible(df):
    """pc -> True (it may stop its thread) for the cp.async, commit and wait instructions a region
    with cuts may hold (compiled.plan adds them to what the generator compiles, for such regions
    only: groups and regions without cuts keep them interpreted)."""
    from .engine import K_NORMAL
    return {pc: True for pc, (kind, _, inst, _) in enumerate(df.code)
            if kind == K_NORMAL and form(inst) is not None}


def holds_copies(code, s, e):
    return any(form(code[p][2]) is not None for p in range(s, e))


def lands(inst):
    """Does ``inst`` write shared memory when it runs (a wait landing its thread's copies)?"""
    return form(inst) == "wait"


# ------------------------------------------------------------------ native code (regiongen)

def emit(g, inst):
    """The generator of ``cp`` (llvmgen.GENERATORS): only in a region with cuts that holds a queue."""
    q = g.__dict__.get("async_q")
    kind = form(inst)
    if q is None or kind is None:
        raise Skip("cp.async outside a region with a copy queue")
    b = g.b
    _, t = g._parts()
    head = _head(g, q, t)
    commits = b.gep(head, [ir.Constant(I64, 1)])
    if kind == "commit":
        b.store(b.add(b.load(commits), ir.Constant(I64, 1)), commits)
    elif kind == "copy":
        _copy(g, inst, q, t, head, commits)
    else:
        every = "wait_all" in inst.mods
        if every:
            b.store(b.add(b.load(commits), ir.Constant(I64, 1)), commits)
        _wait(g, q, t, head, commits, 0 if every else int(inst.operands[0][1]))


GENERATORS["cp"] = emit


def _head(g, q, t):
    b = g.b
    return b.gep(q, [b.add(ir.Constant(I64, TOP), b.mul(t, ir.Constant(I64, PER_THREAD)))])


def _slot(g, q, t, head, j):
    """The thread's ``j``-th queued copy: its slots are a ring (copies land in issue order, so a wait
    takes the oldest ones: groups never decrease along the queue), from the one ``head[2]`` names."""
    b = g.b
    first = b.load(b.gep(head, [ir.Constant(I64, 2)]))
    ring = b.and_(b.add(first, j), ir.Constant(I64, DEPTH - 1))
    at = b.add(ir.Constant(I64, HEADER), b.mul(b.add(b.mul(t, ir.Constant(I64, DEPTH)), ring), ir.Constant(I64, SLOT)))
    return b.gep(q, [at])


def _copy(g, inst, q, t, head, commits):
    b = g.b
    ops = inst.operands
    width = ops[2][1]
    count = b.load(head)
    g.bail_if(b.icmp_signed(">=", count, ir.Constant(I64, DEPTH)))       # queue full: the interpreter issues it
    dst = g._shared(g.address(ops[0]), width)
    src = g.address(ops[1])
    extra = ops[3] if len(ops) > 3 else None
    full = None                                  # i1: every byte from global memory; None: always
    if extra is not None:
        if extra[0] == "reg" and g.func.regs.get(extra[1]) == "pred":
            pv = g.to_type(g.reg_storage(extra[1]), "p", "pred")
            full = b.not_(pv)                    # ignore-src: zeros where it holds
        elif extra[0] != "imm":
            n = g.read(extra, "u32")
            full = b.icmp_unsigned(">=", n, ir.Constant(I32, width))
            g.bail_if(b.and_(b.not_(full), b.icmp_unsigned("!=", n, ir.Constant(I32, 0))))
    zero = ir.Constant(I64, 0)
    if full is None:
        lo, hi = _read(g, src, width)
    else:
        reading, after = g.fn.append_basic_block("cp_read"), g.fn.append_basic_block("cp_read_done")
        before = b.block
        b.cbranch(full, reading, after)
        b.position_at_end(reading)
        lo1, hi1 = _read(g, src, width)
        end = b.block
        b.branch(after)
        b.position_at_end(after)
        lo, hi = b.phi(I64), b.phi(I64)
        lo.add_incoming(lo1, end)
        lo.add_incoming(zero, before)
        hi.add_incoming(hi1, end)
        hi.add_incoming(zero, before)
    e = _slot(g, q, t, head, count)
    tag = b.or_(b.ptrtoint(dst, I64), ir.Constant(I64, width << SIZE_SHIFT))
    order = b.or_(b.shl(b.load(b.gep(q, [ir.Constant(I64, 2)])), ir.Constant(I64, PC_BITS)), ir.Constant(I64, g._pc))
    for k, v in enumerate((tag, b.load(commits), order, lo, hi)):
        b.store(v, b.gep(e, [ir.Constant(I64, k)]))
    b.store(b.add(count, ir.Constant(I64, 1)), head)
    total = b.gep(q, [ir.Constant(I64, 1)])
    b.store(b.add(b.load(total), ir.Constant(I64, 1)), total)
    blk, _ = g._parts()
    b.store(blk, q)


def _read(g, src, width):
    """(low, high) words of ``width`` bytes at global ``src`` (checked: the thread stops where the
    interpreter would fault)."""
    b = g.b
    p = g._global(src, width)
    if width == 16:
        w = b.bitcast(p, I64.as_pointer())
        return b.load(w, align=1), b.load(b.gep(w, [ir.Constant(I64, 1)]), align=1)
    ty = ir.IntType(8 * width)
    v = b.load(b.bitcast(p, ty.as_pointer()), align=1)
    return (v if width == 8 else b.zext(v, I64)), ir.Constant(I64, 0)


def _wait(g, q, t, head, commits, keep):
    """Mark the thread's oldest copies whose group is complete (older than its newest ``keep``) as
    ready: they land at the end of the phase (``land_ready``), every thread's in lock step's order."""
    b = g.b
    count = b.load(head)
    limit = b.sub(b.load(commits), ir.Constant(I64, keep))
    ready = b.gep(head, [ir.Constant(I64, 3)])
    j = g._local_var("cpw_j")
    b.store(b.load(ready), j)
    loop, body, more, done = (g.fn.append_basic_block(n) for n in ("cpw_loop", "cpw_body", "cpw_more", "cpw_done"))
    b.branch(loop)
    b.position_at_end(loop)
    jv = b.load(j)
    b.cbranch(b.icmp_signed("<", jv, count), body, done)
    b.position_at_end(body)
    e = _slot(g, q, t, head, jv)
    b.cbranch(b.icmp_signed("<", b.load(b.gep(e, [ir.Constant(I64, 1)])), limit), more, done)
    b.position_at_end(more)
    b.store(b.add(jv, ir.Constant(I64, 1)), j)
    b.branch(loop)
    b.position_at_end(done)
    b.store(b.load(j), ready)


def new_segment(g):
    """A segment starts (regiongen._segment): copies issued from here on come later in lock step's order."""
    b = g.b
    at = b.gep(g.async_q, [ir.Constant(I64, 2)])
    b.store(b.add(b.load(at), ir.Constant(I64, 1)), at)


def land_ready(g):
    """After a phase that holds a wait (regiongen._phase), at the block's level: the copies its threads'
    waits made ready land, in the order lock step lands them: by issue (segment, then pc), then by
    thread, so where two threads' copies write the same bytes the one lock step writes last wins
    (asyncops.land_copies: rows in issue order, lanes in order). A first pass lists the threads with
    ready copies and finds the oldest issue; each later pass over the list lands that issue's copies
    and finds the next one."""
    b = g.b
    q = g.async_q
    if g.__dict__.get("ready_list") is None:
        with b.goto_block(g.entry):
            b.position_before(g.entry.terminator)
            g.ready_list = b.alloca(I64, size=ir.Constant(I64, MAX_THREADS), name="cpl_list")
    listed = g.ready_list
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    n = b.sub(b.load(g.c1), b.load(g.c))
    big = ir.Constant(I64, (1 << 63) - 1)
    key, nxt, t, m = (g._local_var(f"cpl_{x}") for x in ("key", "next", "t", "m"))
    blocks = {x: g.fn.append_basic_block(f"cpl_{x}") for x in (
        "scan", "scan_lane", "scan_add", "scan_next", "scanned", "pass", "lanes", "lane", "pick", "land", "notmine",
        "after", "over", "out")}
    b.store(big, nxt)
    b.store(zero, m)
    b.store(zero, t)
    b.branch(blocks["scan"])
    b.position_at_end(blocks["scan"])
    tv = b.load(t)
    b.cbranch(b.icmp_signed("<", tv, n), blocks["scan_lane"], blocks["scanned"])
    b.position_at_end(blocks["scan_lane"])
    head = _head(g, q, tv)
    b.cbranch(b.icmp_signed(">", b.load(b.gep(head, [ir.Constant(I64, 3)])), zero), blocks["scan_add"],
              blocks["scan_next"])
    b.position_at_end(blocks["scan_add"])
    mv = b.load(m)
    b.store(tv, b.gep(listed, [mv]))
    b.store(b.add(mv, one), m)
    k = b.load(b.gep(_slot(g, q, tv, head, zero), [ir.Constant(I64, 2)]))
    b.store(b.select(b.icmp_signed("<", k, b.load(nxt)), k, b.load(nxt)), nxt)
    b.branch(blocks["scan_next"])
    b.position_at_end(blocks["scan_next"])
    b.store(b.add(tv, one), t)
    b.branch(blocks["scan"])
    b.position_at_end(blocks["scanned"])
    b.branch(blocks["over"])
    # a pass: land the copies of issue ``key`` of each listed thread, and find the next issue
    b.position_at_end(blocks["pass"])
    b.store(zero, t)
    b.branch(blocks["lanes"])
    b.position_at_end(blocks["lanes"])
    iv = b.load(t)
    b.cbranch(b.icmp_signed("<", iv, b.load(m)), blocks["lane"], blocks["over"])
    b.position_at_end(blocks["lane"])
    tv = b.load(b.gep(listed, [iv]))
    head = _head(g, q, tv)
    ready = b.gep(head, [ir.Constant(I64, 3)])
    b.cbranch(b.icmp_signed(">", b.load(ready), zero), blocks["pick"], blocks["after"])
    b.position_at_end(blocks["pick"])
    e = _slot(g, q, tv, head, zero)
    k = b.load(b.gep(e, [ir.Constant(I64, 2)]))
    b.cbranch(b.icmp_signed("==", k, b.load(key)), blocks["land"], blocks["notmine"])
    b.position_at_end(blocks["notmine"])
    b.store(b.select(b.icmp_signed("<", k, b.load(nxt)), k, b.load(nxt)), nxt)
    b.branch(blocks["after"])
    b.position_at_end(blocks["land"])
    _write(g, [b.load(b.gep(e, [ir.Constant(I64, w)])) for w in range(SLOT)])
    first = b.gep(head, [ir.Constant(I64, 2)])
    b.store(b.and_(b.add(b.load(first), one), ir.Constant(I64, DEPTH - 1)), first)
    b.store(b.sub(b.load(head), one), head)
    b.store(b.sub(b.load(ready), one), ready)
    total = b.gep(q, [one])
    b.store(b.sub(b.load(total), one), total)
    b.branch(blocks["lane"])        # (the thread's next ready copy: of a later issue, found there)
    b.position_at_end(blocks["after"])
    b.store(b.add(iv, one), t)
    b.branch(blocks["lanes"])
    b.position_at_end(blocks["over"])
    found = b.load(nxt)
    b.store(found, key)
    b.store(big, nxt)
    b.cbranch(b.icmp_signed("==", found, big), blocks["out"], blocks["pass"])
    b.position_at_end(blocks["out"])


def _write(g, words):
    """One queued copy's bytes into shared memory (the pointer and size in its first word)."""
    b = g.b
    tag = words[0]
    size = b.lshr(tag, ir.Constant(I64, SIZE_SHIFT))
    ptr = b.inttoptr(b.and_(tag, ir.Constant(I64, (1 << SIZE_SHIFT) - 1)), I8.as_pointer())
    w16, w8, w4, nxt = (g.fn.append_basic_block(n) for n in ("cpw_16", "cpw_8", "cpw_4", "cpw_written"))
    sw = b.switch(size, w4)
    sw.add_case(ir.Constant(I64, 16), w16)
    sw.add_case(ir.Constant(I64, 8), w8)
    b.position_at_end(w16)
    p64 = b.bitcast(ptr, I64.as_pointer())
    b.store(words[DATA], p64, align=1)
    b.store(words[DATA + 1], b.gep(p64, [ir.Constant(I64, 1)]), align=1)
    b.branch(nxt)
    b.position_at_end(w8)
    b.store(words[DATA], b.bitcast(ptr, I64.as_pointer()), align=1)
    b.branch(nxt)
    b.position_at_end(w4)
    b.store(b.trunc(words[DATA], I32), b.bitcast(ptr, I32.as_pointer()), align=1)
    b.branch(nxt)
    b.position_at_end(nxt)


# ------------------------------------------------------------------ the Runner's side (regions.py)

def queue(local):
    """The calling thread's queue (one per Runner and Python thread: batches run side by side)."""
    q = getattr(local, "copies", None)
    if q is None:
        q = local.copies = np.zeros(HEADER + MAX_THREADS * DEPTH * SLOT, np.int64)
    return q


def in_flight(ex):
    """Does the batch have async copies in asyncops' hands (then a region with copies does not run)?"""
    st = ex.__dict__.get("_async")
    return st is not None and bool(st._rows.size or st._issued)


def hand_over(ex, q, inst):
    """Move the copies still queued for the block native code just left into asyncops.AsyncState
    (module docstring), and empty the queue. ``inst``: the cp.async the rows are credited to."""
    from . import asyncops, compiled
    lpb = ex.batch.lanes_per_block
    threads = q[TOP:TOP + PER_THREAD * lpb].reshape(lpb, PER_THREAD)
    counts = threads[:, 0]
    ts = np.flatnonzero(counts)
    if ts.size:
        st = asyncops.state(ex)
        committed = st.committed                 # (per lane from now on: the handed rows' groups differ)
        lanes = int(q[0]) * lpb + ts
        mine = threads[ts, 1]
        first = threads[ts, 2]
        n = counts[ts]
        slots = q[HEADER:].reshape(MAX_THREADS, DEPTH, SLOT)
        shared = compiled._address(ex.shared)
        for j in range(int(n.max())):
            sel = n > j
            e = slots[ts[sel], (first[sel] + j) & (DEPTH - 1)]
            size = e[:, 0] >> SIZE_SHIFT
            dst = (e[:, 0] & ((1 << SIZE_SHIFT) - 1)) - shared
            lane = lanes[sel]
            group = committed[lane] - (mine[sel] - e[:, 1])
            data = np.ascontiguousarray(e[:, DATA:DATA + 2]).view(np.uint8).reshape(-1, 16)
            seq = np.int64(st.issues)
            st.issues += 1
            for w in np.unique(size).tolist():
                m = size == w
                if w == asyncops.CHUNK and not ex.observers:
                    st.issue(asyncops.Copies(lane[m], dst[m], seq, group[m], data[m], st.inst_id(inst)))
                else:
                    asyncops._add_rows(ex, st, inst, lane[m], dst[m], data[m, :w], seq, group[m], -1)
        counts[ts] = 0
        threads[ts, 3] = 0
    q[1] = 0


def snapshot(ex):
    """The batch's asyncops state as it is (CUDALAB_TIER=check runs a region twice from one state:
    rows the native run handed over must not be there for the interpreter's run). Its arrays are
    replaced, never changed in place, so references keep it."""
    st = ex.__dict__.get("_async")
    return None if st is None else (st, st._rows, list(st._issued), st._committed, st._all, st.issues)


def restore(ex, snap):
    if snap is None:
        ex.__dict__.pop("_async", None)
        return
    st, st._rows, issued, st._committed, st._all, st.issues = snap
    st._issued = issued
    ex._async = st
