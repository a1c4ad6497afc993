"""Asynchronous copies and memory barriers: cp.async, cp.async.bulk (plain and reduce) and mbarrier
(PTX ISA 9.7.9.25 "Data Movement and Conversion Instructions: cp.async", 9.7.9.25.4 "cp.async.bulk",
9.7.13.15 "mbarrier").

**When an async copy's bytes land.** A copy reads its source when it is issued, but it writes a
destination in shared memory only when the program is entitled to see it: when the issuing thread
waits for the copy's group (``cp.async.wait_group``/``wait_all``), or when the mbarrier phase that
tracks the copy completes (``cp.async.mbarrier.arrive``, ``mbarrier::complete_tx``). Until then the
destination keeps its old bytes, so a kernel that reads a tile before waiting gets stale data here
(as it may on a GPU) and racecheck names the read. Copies into global memory (bulk stores and bulk
reductions) land when they are issued: no thread may read them before its bulk ``wait_group``.

**mbarrier objects** live in their 8 bytes of shared memory, as on a GPU, in cudalab's own layout
(the hardware's is opaque): pending arrivals in bits 0-19, expected arrivals in 20-39, the signed
tx-count in 40-60, the phase parity in bit 61, and bit 63 set by ``mbarrier.init``. A phase
completes when its pending arrivals and its tx-count are both zero. The emulator completes it
lazily, at the next operation on that barrier, after landing the copies still in flight on it:
copies are assumed to finish as late as the program allows.

**Waiting.** ``mbarrier.test_wait``/``try_wait`` are *waiting* instructions (their run function has
``waits = True``): they return the lanes whose phase is not complete yet, and the engine lets other
paths (a producer warp) run before those lanes try again (engine.run_function, K_WAIT).
"""
from __future__ import annotations

import sys

import numpy as np

from ..errors import KernelError
from .decode import Unsupported, op
from .events import AsyncEvent, MemoryEvent
from .findings import Finding
from .memops import _atomic_fn, resolve
from .memory import GLOBAL_BASE, SHARED_WINDOW, WINDOW_SIZE
from .operands import address_reader, reader, writer

CHUNK = 16                       # bytes per in-flight row: cp.async moves 4, 8 or 16; bulk copies 16*k
ROW = np.dtype([("lane", np.int64), ("dst", np.int64), ("size", np.int64), ("seq", np.int64),
                ("group", np.int64), ("slot", np.int64), ("inst", np.int64), ("red", np.int64),
                ("data", np.uint8, (CHUNK,))])
HANG_POLLS = 2000                # failed polls, with nothing else able to run, before a wait is a hang

M20 = np.uint64((1 << 20) - 1)
M21 = np.uint64((1 << 21) - 1)
VALID = np.uint64(1 << 63)


# ------------------------------------------------------------------ per-batch state

class AsyncState:
    """The async copies of one batch still in flight, and each lane's cp.async bookkeeping."""

    def __init__(self, ex):
        self.n = ex.n
        # a row's "seq": the batch's cp.async executions before its own. Only one lane's rows and
        # cp.async.mbarrier.arrive are ever compared, and this count orders them as the lane's own would
        self.issues = 0
        # cp.async.commit_group executed by each lane: None while every lane of the batch has run the
        # same `_all` of them (a pipeline's commits, run by the whole batch: no array to copy or read)
        self._committed = None
        self._all = 0
        self._rows = np.zeros(0, ROW)             # writes to shared memory not landed yet, in issue order
        self._issued: list = []                   # rows issued since, joined on the next read (see rows)
        self.trig_lane = np.zeros(0, np.int64)    # cp.async.mbarrier.arrive: the arrive-on each lane owes,
        self.trig_slot = np.zeros(0, np.int64)    # on which barrier, after its cp.async with seq < trig_seq
        self.trig_seq = np.zeros(0, np.int64)
        self.insts: list = []                     # instructions of in-flight rows (row["inst"] indexes this)
        self._inst_ids: dict = {}                 # id(instruction) -> its index in insts (insts keeps it alive)
        self.reducers: list = [None]              # row["red"]: 0 = a copy, k = (function, dtype) of a reduction
        self.phase_no: dict = {}                  # completed phases per barrier slot (racecheck's events)
        self.stuck = (0, -1)                      # (failed polls, sync version) for hang detection

    @property
    def rows(self):
        """The rows in flight, in issue order. Each cp.async of a batch adds a row per lane; they are
        joined here, when a wait or a barrier reads them, not once per issue (a 4-stage pipeline
        would copy every row in flight at each of its issues)."""
        if self._issued:
            self._rows = np.concatenate([self._rows, *(x.rows() if isinstance(x, Copies) else x
                                                       for x in self._issued)])
            self._issued = []
        return self._rows

    @rows.setter
    def rows(self, value):
        self._rows, self._issued = value, []

    def issue(self, rows):
        self._issued.append(rows)

    @property
    def uniform(self):
        """True while every lane of the batch has committed as often (one count, ``_all``, for all)."""
        return self._committed is None

    @property
    def committed(self):
        """Per-lane commit counts (replaced, never changed in place, so that rows keep theirs)."""
        if self._committed is None:
            self._committed = np.full(self.n, self._all, np.int64)
        return self._committed

    @committed.setter
    def committed(self, value):
        self._committed = value

    def commit(self, ex):
        """cp.async.commit_group by the running lanes."""
        if self._committed is None and ex.idx.size == ex.n:
            self._all += 1
        else:
            self.committed = bumped(self.committed, ex)

    def groups(self, sel):
        """The group number of a copy lanes ``sel`` issue now: one number while every lane has
        committed as often."""
        return np.int64(self._all) if self._committed is None else self._committed.take(sel)

    def inst_id(self, inst):
        """inst's index in ``insts``, added if new. A dict by identity: dmmaTensorCoreGemm's unrolled k-loop
        has a thousand cp.async instructions, and a scan of the list cost each copy tens of microseconds."""
        k = self._inst_ids.get(id(inst))
        if k is None:
            k = self._inst_ids[id(inst)] = len(self.insts)
            self.insts.append(inst)
        return k


class Copies:
    """One cp.async of a batch without observers, kept as it was issued (the lanes, their shared
    offsets, group numbers, sequence numbers and 16-byte rows of data) rather than as ROW records: a
    GEMM's k-loop issues and waits for thousands of them, and filling ROW's nine fields a lane, then
    joining and filtering the records, cost bf16TensorCoreGemm's tile copies more than moving the
    bytes. A wait lands them straight from here (``land_copies``); anything else that reads
    ``AsyncState.rows`` (an mbarrier, a partial wait's leftovers after a read) gets them as records."""
    __slots__ = ("lanes", "dst", "seq", "group", "data", "inst")

    def __init__(self, lanes, dst, seq, group, data, inst):
        self.lanes, self.dst, self.seq, self.group, self.data, self.inst = lanes, dst, seq, group, data, inst

    def rows(self):
        rows = np.zeros(self.lanes.size, ROW)
        rows["lane"], rows["dst"], rows["seq"], rows["group"] = self.lanes, self.dst, self.seq, self.group
        rows["slot"], rows["size"], rows["inst"], rows["red"] = -1, CHUNK, self.inst, 0
        rows["data"] = self.data
        return rows

    def part(self, keep):
        group = self.group if np.ndim(self.group) == 0 else self.group[keep]
        return Copies(self.lanes[keep], self.dst[keep], self.seq, group, self.data[keep], self.inst)


def land_copies(ex, st, committed, keep, mine=None):
    """cp.async.wait_group ``keep`` where everything in flight is Copies: each lands, in issue order,
    the rows of its lanes whose group is complete (``mine``: of the waiting lanes only), and keeps the
    rest. True where it did; False (nothing changed) where the rows are records, for _land."""
    if st._rows.size or not all(isinstance(x, Copies) for x in st._issued):
        return False
    whole = np.dtype((np.void, CHUNK))
    shared = ex.shared.view(whole)
    compiled = sys.modules.get("cudalab.emulator.async_loops")     # (loaded by _in_bounds' quick path)
    # whole copies land in one compiled pass each (async_loops.land) where the quick path loaded it
    land, words = (compiled.land, ex.shared.view(np.uint64)) if compiled and ex.shared.size % 8 == 0 else (None, None)
    left = []
    uniform = st.uniform
    for c in st._issued:
        if uniform and np.ndim(c.group) == 0:       # whole groups of the batch: all of them, or none
            if c.group >= st._all - keep:
                left.append(c)
                continue
            take = True if mine is None else mine.take(c.lanes)
        else:
            take = c.group < committed.take(c.lanes) - keep
            if mine is not None:
                take &= mine.take(c.lanes)
        if take is True or take.all():
            if words is not None and c.data.flags.c_contiguous:
                land(words, c.dst, c.data.view(np.uint64))
            else:
                shared[c.dst // CHUNK] = c.data.view(whole)[:, 0]
        elif take.any():
            shared[c.dst[take] // CHUNK] = c.data[take].view(whole)[:, 0]
            left.append(c.part(~take))
        else:
            left.append(c)
    st._issued = left
    return True


def bumped(counts, ex):
    """A copy of per-lane ``counts`` with the running lanes' one higher (AsyncState.issued/committed)."""
    if ex.idx.size == ex.n:
        return counts + 1
    counts = counts.copy()
    counts[ex.idx] += 1
    return counts


def state(ex) -> AsyncState:
    st = getattr(ex, "_async", None)
    if st is None:
        st = ex._async = AsyncState(ex)
    return st


def _changed(ex):
    """Barrier state changed: threads parked at a wait may now get through (engine eligibility)."""
    ex.sync_version += 1


# ------------------------------------------------------------------ addresses

def _space(inst, default="generic"):
    for m in inst.mods:
        if m in ("shared", "shared::cta", "shared::cluster"):
            return "shared"
        if m == "global":
            return "global"
    return default


def shared_offsets(ex, inst, addrs, sel, size, kind, align=None, space="shared"):
    """Absolute byte offsets into the batch's shared buffer of shared addresses ``addrs`` of lanes
    ``sel``, checked for bounds and alignment like ld/st.shared. A ``shared::cluster`` address is
    the block's own shared memory: every block is its own cluster of one here."""
    addrs = np.broadcast_to(np.asarray(addrs, np.uint64), sel.shape)
    if space == "generic":
        inside = (addrs >= np.uint64(SHARED_WINDOW)) & (addrs < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        if not inside.all():
            ex.fault(inst, "shared", kind, sel[~inside], addrs[~inside], size,
                     "is not a shared-memory address (this operation works on __shared__ memory only)")
        addrs = addrs - np.uint64(SHARED_WINDOW)
    limit = ex.shared_size
    bad = addrs > np.uint64(limit - size) if limit >= size else np.ones(addrs.shape, bool)
    if bad.any():
        ex.fault(inst, "shared", kind, sel[bad], addrs[bad], size,
                 f"is out of bounds of the block's {limit}-byte shared memory")
    a = align or size
    mis = (addrs & np.uint64(a - 1)) != 0
    if mis.any():
        ex.fault(inst, "shared", kind, sel[mis], addrs[mis], size, f"is not aligned to {a} bytes",
                 code="cudaErrorMisalignedAddress")
    return (ex.shared_base[sel] + addrs).astype(np.int64)


def _global_bytes(ex, inst, addrs, sel, nbytes, width, kind, align):
    """Check global [addr, addr+nbytes) per lane (lanes with nbytes == 0 touch nothing) and emit the
    access for the analyses; returns byte offsets into the device arena."""
    addrs = np.broadcast_to(np.asarray(addrs, np.uint64), sel.shape)
    live = nbytes > 0
    if live.all() and (nbytes == width).all() and width <= 16:
        resolve(ex, inst, "global", addrs, sel, width, kind)        # bounds, alignment, MemoryEvent
        return (addrs - np.uint64(GLOBAL_BASE)).astype(np.int64)
    for n in np.unique(nbytes[live]).tolist():
        m = live & (nbytes == n)
        ok = ex.mem.valid(addrs[m], int(n))
        if not ok.all():
            ex.fault(inst, "global", kind, sel[m][~ok], addrs[m][~ok], int(n), None)
    mis = live & ((addrs & np.uint64(align - 1)) != 0)
    if mis.any():
        ex.fault(inst, "global", kind, sel[mis], addrs[mis], width, f"is not aligned to {align} bytes",
                 code="cudaErrorMisalignedAddress")
    if ex.observers and live.any():
        ex.emit(MemoryEvent(inst, sel[live], ex.batch, "global", kind, int(width), addrs[live]))
    return (addrs - np.uint64(GLOBAL_BASE)).astype(np.int64)


def _in_bounds(ex, dst, src, sel, width):
    """(shared offsets, data) of a cp.async of ``width`` bytes from global ``src`` to shared ``dst``
    (lanes ``sel``, no observers) whose every lane is aligned, inside the block's shared memory and
    inside a live allocation: one look at the lowest and highest address and at the OR of all of
    them, instead of a test per lane and per rule. None for anything else: the checked path then
    words the fault, or warns of memory a GPU reads. Lanes may read from several allocations (then
    each lane's is looked up): dmmaTensorCoreGemm's tile loop copies A in warps 0-3 and B in warps
    4-7 with one cp.async, and took the checked path on every copy (a sixth of its CPU)."""
    if ex.observers or np.ndim(dst) == 0 or np.ndim(src) == 0 or not sel.size:
        return None
    limit = ex.shared_size
    if width == CHUNK and limit >= width and "numba" in sys.modules:
        from . import async_loops        # (numba already loaded, by a tensor-core kernel's loops)
        return async_loops.quick(ex, dst, src, sel)
    if limit < width or int(dst.max()) > limit - width \
            or int(np.bitwise_or.reduce(dst) | np.bitwise_or.reduce(src)) & (width - 1):
        return None
    lo, hi = int(src.min()), int(src.max())
    starts, ends = ex.mem.bounds()
    k = int(np.searchsorted(starts, np.uint64(lo), side="right")) - 1
    buf = ex.mem.data
    if k < 0 or hi - GLOBAL_BASE + width > buf.size - buf.size % width:
        return None
    if hi + width > int(ends[k]):               # past the lowest lane's allocation: each lane's own
        top = int(np.searchsorted(starts, np.uint64(hi), side="right")) - 1
        if hi + width > int(ends[top]):
            return None
        if top == k + 1:                        # two allocations side by side (A's and B's): none between
            if ((src > np.uint64(int(ends[k]) - width)) & (src < starts[top])).any():
                return None
        else:
            each = np.searchsorted(starts, src, side="right") - 1   # (>= k: no lane is below lo)
            if (src + np.uint64(width) > ends[each]).any():
                return None
    word = np.dtype((np.void, width))
    off = (src - np.uint64(GLOBAL_BASE)) // np.uint64(width)
    data = buf[:buf.size - buf.size % width].view(word).take(off.view(np.int64)).view(np.uint8).reshape(-1, width)
    return (ex.shared_base.take(sel) + dst).view(np.int64), data


def _gather(buf, off, nbytes, width):
    """(lanes, width) bytes of ``buf`` from ``off``; bytes past each lane's ``nbytes`` are zero. A new
    contiguous array (the bytes as they are now)."""
    nbytes = np.asarray(nbytes)
    if off.size and (off.min() < 0 or off.max() > buf.size - width):
        # a lane outside the arena (a read a GPU runs before or far past the allocations: slack.py)
        # gets zeros
        outside = (off < 0) | (off > buf.size - width)
        data = np.zeros((off.size, width), np.uint8)
        inside = ~outside
        data[inside] = _gather(buf, off[inside], np.broadcast_to(nbytes, off.shape)[inside], width)
        return data
    if (nbytes == width).all() and width in (4, 8, 16) and not (off % width).any():
        # whole aligned copies (cp.async's usual): one read of width-byte words, not byte by byte
        word = np.dtype((np.void, width))
        return buf[:buf.size - buf.size % width].view(word)[off // width].view(np.uint8).reshape(-1, width)
    cols = np.arange(width, dtype=np.int64)
    take = cols < nbytes[:, None]
    data = np.zeros((off.size, width), np.uint8)
    data[take] = buf[(off[:, None] + cols)[take]]
    return data


# ------------------------------------------------------------------ in-flight rows

def _add_rows(ex, st, inst, lanes, dst, data, seq, group, slot, red=0):
    """Queue writes of ``data`` (lanes, k) to shared offsets ``dst``, split into 16-byte rows."""
    k = data.shape[1]
    per = max(1, -(-k // CHUNK))
    rows = np.zeros(lanes.size * per, ROW)
    if per == 1:                                 # cp.async: one row a lane
        rows["lane"] = lanes
        rows["dst"] = dst
        rows["seq"] = seq
        rows["group"] = group
        rows["slot"] = slot
        rows["data"][:, :k] = data
    else:
        rows["lane"] = np.repeat(lanes, per)
        rows["dst"] = (dst[:, None] + np.arange(per, dtype=np.int64) * CHUNK).ravel()
        rows["seq"] = np.repeat(np.broadcast_to(seq, lanes.shape), per)
        rows["group"] = np.repeat(np.broadcast_to(group, lanes.shape), per)
        rows["slot"] = np.repeat(np.broadcast_to(slot, lanes.shape), per)
        padded = np.zeros((lanes.size, per * CHUNK), np.uint8)
        padded[:, :k] = data
        rows["data"] = padded.reshape(-1, CHUNK)
    rows["size"] = min(k, CHUNK)
    rows["inst"] = st.inst_id(inst)
    rows["red"] = red
    st.issue(rows)
    if ex.observers:
        _event(ex, st, "issue", rows)


def _event(ex, st, kind, rows, barrier=None, phase=None):
    """One AsyncEvent per instruction among ``rows`` (racecheck follows the bytes in flight)."""
    base = ex.shared_base.astype(np.int64)
    for k in np.unique(rows["inst"]).tolist():
        r = rows[rows["inst"] == k]
        lanes = r["lane"]
        n = lanes.size
        ex.emit(AsyncEvent(st.insts[k], lanes, ex.batch, kind=kind, size=int(r["size"].max()),
                           addresses=(r["dst"] - base[lanes]).astype(np.uint64),
                           barrier=np.full(n, -1, np.int64) if barrier is None else barrier[rows["inst"] == k],
                           phase=np.full(n, -1, np.int64) if phase is None else phase[rows["inst"] == k]))


def _land(ex, st, take, barrier=None, phase=None):
    """Write the rows ``take`` (bool over st.rows) into shared memory, in issue order, and drop them.
    ``barrier``/``phase`` (per row): the mbarrier phase whose completion made them visible, or
    None when the issuing thread's own wait did."""
    if take.all():                     # every row in flight lands (a wait for all): no copies
        rows, st.rows = st.rows, np.zeros(0, ROW)
    else:
        rows = st.rows[take]
        st.rows = st.rows[~take]
    if rows.size == 0:
        return
    cols = np.arange(CHUNK, dtype=np.int64)
    plain = rows["red"] == 0
    if plain.all() and (rows["size"] == CHUNK).all() and not (rows["dst"] % CHUNK).any() \
            and ex.shared.size % CHUNK == 0:
        # whole aligned 16-byte rows (cp.async.cg): row by row, later rows over earlier ones
        whole = np.dtype((np.void, CHUNK))
        ex.shared.view(whole)[rows["dst"] // CHUNK] = np.ascontiguousarray(rows["data"]).view(whole)[:, 0]
    elif plain.any():
        r = rows[plain]
        m = cols < r["size"][:, None]
        ex.shared[(r["dst"][:, None] + cols)[m]] = r["data"][m]
    for k in np.unique(rows["red"][~plain]).tolist():       # bulk reductions into shared memory
        fn, dt = st.reducers[k]
        r = rows[rows["red"] == k]
        vals = np.ascontiguousarray(r["data"]).view(dt).reshape(-1)
        index = (r["dst"][:, None] // dt.itemsize + np.arange(CHUNK // dt.itemsize)).reshape(-1)
        view = ex.shared.view(dt)
        view[index] = fn(view[index], vals)
    if ex.observers:
        _event(ex, st, "land", rows, barrier, phase)


# ------------------------------------------------------------------ cp.async (sm_80)

@op("cp")
def _cp(inst, d):
    mods = inst.mods
    if "prefetch" in mods:                       # cp.async.bulk.prefetch{.tensor}.L2: caches are not modelled
        return lambda ex: None
    if "tensor" in mods:
        raise Unsupported("cp.async.bulk.tensor and cp.reduce.async.bulk.tensor (the tensor memory accelerator, "
                          "which needs a tensor map from cuTensorMapEncodeTiled)")
    if "reduce" in mods:
        return _bulk_reduce(inst, d)
    if "bulk" in mods:
        if "commit_group" in mods or "wait_group" in mods:
            # bulk groups complete stores into global memory, which land when issued (module doc)
            return lambda ex: None
        return _bulk_copy(inst, d)
    if "mbarrier" in mods:
        return _cp_async_mbarrier_arrive(inst, d)
    if "commit_group" in mods:
        def run(ex):
            state(ex).commit(ex)
        return run
    if "wait_group" in mods or "wait_all" in mods:
        return _cp_async_wait(inst, d)
    if "async" in mods:
        return _cp_async(inst, d)
    raise Unsupported("cp." + ".".join(mods))


def _cp_async(inst, d):
    """cp.async.{ca,cg}.shared.global [dst], [src], cp-size{, src-size | ignore-src}: copy cp-size
    (4, 8 or 16) bytes, of which only src-size come from global memory and the rest are zeros; a true
    ignore-src predicate reads nothing and writes cp-size zeros."""
    ops = inst.operands
    width = ops[2][1] if ops[2][0] == "imm" else None
    if width not in (4, 8, 16) or ("cg" in inst.mods and width != 16):
        raise Unsupported(f"cp.async with a copy size of {width} bytes (.ca takes 4, 8 or 16, .cg takes 16)")
    extra = list(ops[3:])
    if any(m.startswith("L2::cache_hint") for m in inst.mods):
        extra = extra[:-1]                       # the cache policy: a hint only
    rd = address_reader(ops[0], d.func, d)
    rs = address_reader(ops[1], d.func, d)
    src_size = ignore = None
    if extra:
        o = extra[0]
        if o[0] == "reg" and d.func.regs.get(o[1]) == "pred":
            ignore = reader(o, "pred", d.func, d)
        elif o[0] == "imm" and isinstance(o[1], int) and o[1] >= width:
            pass                # every byte from global memory: cuda::memcpy_async writes "16, 16"
        else:
            src_size = reader(o, "u32", d.func, d)

    def run(ex):
        st = state(ex)
        sel = ex.idx
        d = rd(ex, sel)
        whole = src_size is None and ignore is None      # every byte from global memory (the usual copy)
        quick = _in_bounds(ex, d, rs(ex, sel), sel, width) if whole else None
        if quick is not None:
            dst, data = quick
        elif whole:
            dst = shared_offsets(ex, inst, d, sel, width, "st")
            src = np.broadcast_to(np.asarray(rs(ex, sel), np.uint64), sel.shape)
            resolve(ex, inst, "global", src, sel, width, "ld")          # bounds, alignment, MemoryEvent
            data = _gather(ex.mem.data, (src - np.uint64(GLOBAL_BASE)).astype(np.int64), width, width)
        else:
            dst = shared_offsets(ex, inst, d, sel, width, "st")
            if src_size is not None:
                nbytes = np.minimum(np.broadcast_to(np.asarray(src_size(ex, sel), np.int64), sel.shape), width)
            else:
                nbytes = np.where(np.broadcast_to(ignore(ex, sel), sel.shape), 0, width)
            off = _global_bytes(ex, inst, rs(ex, sel), sel, nbytes, width, "ld", width)
            data = _gather(ex.mem.data, off, nbytes, width)
        seq, group = np.int64(st.issues), st.groups(sel)
        st.issues += 1
        # a shared row is 16-byte aligned (shared_offsets checked the offset, and a block's row of the
        # buffer starts at a multiple of 16): whole rows that a wait can write at once
        if width == CHUNK and not ex.observers:
            st.issue(Copies(sel, dst, seq, group, data, st.inst_id(inst)))
        else:
            _add_rows(ex, st, inst, sel, dst, data, seq, group, -1)
    return run


def _cp_async_wait(inst, d):
    """cp.async.wait_group N: the calling thread's groups except the newest N are complete (their
    bytes land now); cp.async.wait_all: commit_group, then wait_group 0."""
    every = "wait_all" in inst.mods
    keep = 0 if every else inst.operands[0][1]

    def run(ex):
        st = getattr(ex, "_async", None)
        if st is None:
            return
        sel = ex.idx
        if every:
            st.commit(ex)
        mine = None
        if sel.size < ex.n:              # only the waiting threads' own copies
            mine = np.zeros(ex.n, bool)
            mine[sel] = True
        if land_copies(ex, st, None if st.uniform else st.committed, keep, mine):
            return
        r = st.rows
        if not r.size:
            return
        lane = r["lane"]
        take = (r["seq"] >= 0) & (r["group"] < st.committed[lane] - keep)
        if mine is not None:
            take &= mine[lane]
        if take.any():
            _land(ex, st, take)
    return run


def _cp_async_mbarrier_arrive(inst, d):
    """cp.async.mbarrier.arrive{.noinc}.b64 [mbar]: an arrive-on the barrier that fires once all the
    thread's earlier cp.async have landed. Without .noinc it first adds one pending arrival, so the
    async arrive does not count against init's count."""
    ra = address_reader(inst.operands[0], d.func, d)
    noinc = "noinc" in inst.mods
    space = _space(inst)

    def run(ex):
        st = state(ex)
        sel = ex.idx
        slots = _slots(ex, inst, ra(ex, sel), sel, space)
        uniq, inv, w = _touch(ex, st, inst, slots, sel)
        if not noinc:
            add = np.bincount(inv, minlength=uniq.size).astype(np.uint64)
            _store(ex, uniq, w + add)               # pending count: bits 0-19
        st.trig_lane = np.concatenate([st.trig_lane, sel])
        st.trig_slot = np.concatenate([st.trig_slot, slots])
        st.trig_seq = np.concatenate([st.trig_seq, np.full(sel.size, st.issues, np.int64)])
        _changed(ex)
    return run


# ------------------------------------------------------------------ mbarrier (sm_80, tx-count sm_90)

def _slots(ex, inst, addrs, sel, space):
    """8-byte slot numbers (absolute shared offset / 8) of the mbarriers lanes ``sel`` address."""
    return shared_offsets(ex, inst, addrs, sel, 8, "atom", 8, space) >> 3


def unpack(w):
    """(pending, expected, tx-count, phase parity, initialized) of mbarrier words."""
    w = np.asarray(w, np.uint64)
    tx = ((w >> np.uint64(40)) & M21).astype(np.int64)
    tx = np.where(tx >= 1 << 20, tx - (1 << 21), tx)
    return ((w & M20).astype(np.int64), ((w >> np.uint64(20)) & M20).astype(np.int64), tx,
            ((w >> np.uint64(61)) & np.uint64(1)).astype(np.int64), (w & VALID) != 0)


def pack(pending, expected, tx, phase):
    u = lambda v: np.asarray(v, np.int64).astype(np.uint64)  # noqa: E731
    return (VALID | (u(pending) & M20) | ((u(expected) & M20) << np.uint64(20))
            | ((u(tx) & M21) << np.uint64(40)) | ((u(phase) & np.uint64(1)) << np.uint64(61)))


def _words(ex, inst, uniq, sel, inv):
    """The words of barriers ``uniq``; stops the kernel if one was never initialized."""
    w = ex.shared.view(np.uint64)[uniq]
    bad = (w & VALID) == 0
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        lane = sel[np.flatnonzero(inv == k)[0]]
        off = int(uniq[k] * 8 - ex.shared_base[lane])
        line = inst.place
        ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
            f"The mbarrier at shared offset {off} is used at {line} in kernel {ex.kernel_name} by thread {t} "
            f"of block {b} before it was initialized (or after mbarrier.inval). Initialize it first "
            "(init(&bar, count) for a cuda::barrier, mbarrier.init in PTX), then __syncthreads() so that "
            "every thread sees it initialized."))
    return w


def _touch(ex, st, inst, slots, sel):
    """Before an operation on the barriers ``slots`` (one per lane): settle them, and return the
    unique slots, each lane's index into them, and their words."""
    uniq, inv = np.unique(slots, return_inverse=True)
    _settle(ex, st, inst, uniq)
    return uniq, inv, _words(ex, inst, uniq, sel, inv)


def _store(ex, uniq, words):
    ex.shared.view(np.uint64)[uniq] = words


def _settle(ex, st, inst, uniq):
    """Complete the current phase of each barrier in ``uniq`` (unique slots) whose own arrivals are
    all in and whose tx-count the copies in flight on it will bring to zero: those copies land,
    the arrive-ons they owe fire, and the phase flips."""
    view = ex.shared.view(np.uint64)
    w = view[uniq]
    pending, expected, tx, phase, valid = unpack(w)
    if not valid.any():
        return
    owed = np.zeros(uniq.size, np.int64)
    if st.trig_slot.size:
        k = np.searchsorted(uniq, st.trig_slot)
        hit = (k < uniq.size) & (uniq[np.minimum(k, uniq.size - 1)] == st.trig_slot)
        owed = np.bincount(k[hit], minlength=uniq.size)
    inflight = np.zeros(uniq.size, np.int64)
    bulk = st.rows["slot"] >= 0
    if bulk.any():
        rs = st.rows["slot"][bulk]
        k = np.searchsorted(uniq, rs)
        hit = (k < uniq.size) & (uniq[np.minimum(k, uniq.size - 1)] == rs)
        inflight = np.bincount(k[hit], weights=st.rows["size"][bulk][hit], minlength=uniq.size).astype(np.int64)
    ready = valid & (pending - owed == 0) & (tx - inflight == 0)
    if not ready.any():
        return
    done = uniq[ready]
    phases = np.array([st.phase_no.get(int(s), 0) for s in done.tolist()], np.int64)
    # the cp.async each firing arrive-on waits for: the lane's rows issued before it
    fire = np.isin(st.trig_slot, done)
    need = np.full(ex.n, -1, np.int64)
    via = np.full(ex.n, -1, np.int64)
    np.maximum.at(need, st.trig_lane[fire], st.trig_seq[fire])
    via[st.trig_lane[fire]] = st.trig_slot[fire]
    r = st.rows
    take = (r["seq"] >= 0) & (r["seq"] < need[r["lane"]])
    row_slot = np.where(take, via[r["lane"]], r["slot"])
    take |= np.isin(r["slot"], done)
    st.trig_lane, st.trig_slot, st.trig_seq = st.trig_lane[~fire], st.trig_slot[~fire], st.trig_seq[~fire]
    if take.any():
        slot = row_slot[take]
        ph = phases[np.searchsorted(done, slot)]
        _land(ex, st, take, slot, ph)
    view[done] = pack(expected[ready], expected[ready], 0, phase[ready] ^ 1)
    for s, p in zip(done.tolist(), phases.tolist()):
        st.phase_no[s] = p + 1
    _changed(ex)


def _arrive(ex, st, inst, slots, sel, counts, tx_add, drop, no_complete):
    """Arrive ``counts`` times per lane (after adding ``tx_add`` to the tx-count); returns each
    lane's state token: the barrier's word before this instruction."""
    uniq, inv, w = _touch(ex, st, inst, slots, sel)
    pending, expected, tx, phase, _ = unpack(w)
    total = np.bincount(inv, weights=counts, minlength=uniq.size).astype(np.int64)
    if tx_add is not None:
        tx = tx + np.bincount(inv, weights=tx_add, minlength=uniq.size).astype(np.int64)
    if drop:
        expected = expected - total
    left = pending - total
    if (left < 0).any() or (no_complete and (left == 0).any()):
        k = int(np.flatnonzero(left < 0)[0]) if (left < 0).any() else int(np.flatnonzero(left == 0)[0])
        lane = sel[np.flatnonzero(inv == k)[0]]
        off = int(uniq[k] * 8 - ex.shared_base[lane])
        line = inst.place
        why = (f"got {int(total[k])} arrivals while only {int(pending[k])} were pending in its current phase: "
               "more threads arrive than the count it was initialized with") if left[k] < 0 else \
            "was completed by an arrive.noComplete, which must never complete a phase"
        ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
            f"The mbarrier at shared offset {off} (line {line[5:] if inst.line else '?'}, kernel {ex.kernel_name}, "
            f"thread {t} of block {b}) {why}. Give init() the number of threads that arrive in each phase."))
    _store(ex, uniq, pack(left, expected, tx, phase))
    _changed(ex)
    if ex.observers:     # racecheck: what the lanes did so far happens before the phase completes
        phase_no = np.array([st.phase_no.get(u, 0) for u in uniq.tolist()], np.int64)
        ex.emit(AsyncEvent(inst, sel, ex.batch, kind="arrive", barrier=slots, phase=phase_no[inv]))
    return w[inv]


@op("mbarrier")
def _mbarrier(inst, d):
    what = inst.mods[0]
    ops = inst.operands
    space = _space(inst)
    if what == "init":
        ra, rc = address_reader(ops[0], d.func, d), reader(ops[1], "u32", d.func, d)

        def run(ex):
            st = state(ex)
            sel = ex.idx
            slots = _slots(ex, inst, ra(ex, sel), sel, space)
            count = np.broadcast_to(np.asarray(rc(ex, sel), np.int64), sel.shape)
            if ((count < 1) | (count >= 1 << 20)).any():
                lane = sel[(count < 1) | (count >= 1 << 20)][0]
                ex.stop(lane, "synccheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
                    f"mbarrier.init at line {inst.line} (kernel {ex.kernel_name}, thread {t} of block {b}) got the "
                    f"count {int(count[sel == lane][0])}: it must be between 1 and {(1 << 20) - 1}."))
            ex.shared.view(np.uint64)[slots] = pack(count, count, 0, 0)
            for s in np.unique(slots).tolist():
                st.phase_no[s] = 0
            _changed(ex)
        return run
    if what == "inval":
        ra = address_reader(ops[0], d.func, d)

        def run(ex):
            sel = ex.idx
            ex.shared.view(np.uint64)[_slots(ex, inst, ra(ex, sel), sel, space)] = 0
            _changed(ex)
        return run
    if what in ("arrive", "arrive_drop"):
        return _mbarrier_arrive(inst, d, space)
    if what in ("expect_tx", "complete_tx"):
        ra, rn = address_reader(ops[0], d.func, d), reader(ops[1], "u32", d.func, d)
        sign = 1 if what == "expect_tx" else -1

        def run(ex):
            st = state(ex)
            sel = ex.idx
            uniq, inv, w = _touch(ex, st, inst, _slots(ex, inst, ra(ex, sel), sel, space), sel)
            pending, expected, tx, phase, _ = unpack(w)
            n = np.broadcast_to(np.asarray(rn(ex, sel), np.int64), sel.shape)
            tx = tx + sign * np.bincount(inv, weights=n, minlength=uniq.size).astype(np.int64)
            _store(ex, uniq, pack(pending, expected, tx, phase))
            _changed(ex)
        return run
    if what in ("test_wait", "try_wait"):
        return _mbarrier_wait(inst, d, space)
    if what == "pending_count":
        return _pending_count(inst, d)
    raise Unsupported("mbarrier." + what)


def _mbarrier_arrive(inst, d, space):
    """mbarrier.arrive{.expect_tx}{.noComplete} / arrive_drop: state, [addr]{, count | txCount}."""
    ops = inst.operands
    w = writer(ops[0], "b64", d.func)
    ra = address_reader(ops[1], d.func, d)
    rn = reader(ops[2], "u32", d.func, d) if len(ops) > 2 else None
    expect = "expect_tx" in inst.mods
    drop = inst.mods[0] == "arrive_drop"
    no_complete = "noComplete" in inst.mods

    def run(ex):
        st = state(ex)
        sel = ex.idx
        slots = _slots(ex, inst, ra(ex, sel), sel, space)
        n = np.broadcast_to(np.asarray(rn(ex, sel), np.int64), sel.shape) if rn is not None else None
        counts = np.ones(sel.size, np.int64) if expect or n is None else n
        tokens = _arrive(ex, st, inst, slots, sel, counts, n if expect else None, drop, no_complete)
        w(ex, sel, tokens)
    return run


def _mbarrier_wait(inst, d, space):
    """test_wait/try_wait{.parity} waitComplete, [addr], state | phaseParity: is the phase the token
    came from (or the phase of that parity) complete? Lanes that would read False wait instead
    while other paths can still run; then they read False (try_wait's time limit passed)."""
    ops = inst.operands
    w = writer(ops[0], "pred", d.func)
    ra = address_reader(ops[1], d.func, d)
    parity = "parity" in inst.mods
    rt = reader(ops[2], "u32" if parity else "b64", d.func, d)

    def run(ex):
        st = state(ex)
        sel = ex.idx
        slots = _slots(ex, inst, ra(ex, sel), sel, space)
        uniq, inv, words = _touch(ex, st, inst, slots, sel)
        words = words[inv]
        phase = unpack(words)[3]
        arg = np.broadcast_to(np.asarray(rt(ex, sel)), sel.shape)
        want = (arg.astype(np.int64) & 1) if parity else unpack(arg)[3]
        done = phase != want
        if ex.observers and done.any():
            counts = np.array([st.phase_no.get(s, 0) for s in slots[done].tolist()], np.int64)
            seen = counts - ((counts - 1 - want[done]) & 1)         # completed phases up to the waited one
            ex.emit(AsyncEvent(inst, sel[done], ex.batch, kind="observe", barrier=slots[done], phase=seen))
        if done.all() or ex.must_proceed:
            if ex.must_proceed and not done.any():
                _count_failed_poll(ex, st, inst, sel, uniq)
            w(ex, sel, done)
            return None
        if done.any():
            w(ex, sel[done], np.ones(int(done.sum()), bool))
        return sel[~done]
    run.waits = True
    return run


def _count_failed_poll(ex, st, inst, sel, uniq):
    """Nothing else can run and the phase is still incomplete: after HANG_POLLS such polls with no
    barrier changing, the kernel would hang on a GPU; say why instead of waiting for the watchdog."""
    polls, version = st.stuck
    polls = polls + 1 if version == ex.sync_version else 1
    st.stuck = (polls, ex.sync_version)
    if polls < HANG_POLLS:
        return
    pending, _, tx, _, _ = unpack(ex.shared.view(np.uint64)[uniq[:1]])
    lane = int(sel[0])
    off = int(uniq[0] * 8 - ex.shared_base[lane])
    line = inst.place
    msg_tail = (f"its current phase still waits for {int(pending[0])} arrival(s) and {int(tx[0])} byte(s) of "
                "async copies, and no other thread of the block can still arrive or copy")
    block, thread = ex.where(lane)
    msg = (f"The kernel {ex.kernel_name} would hang: thread ({thread[0]},{thread[1]},{thread[2]}) of block "
           f"({block[0]},{block[1]},{block[2]}) waits at {line} on the mbarrier at shared offset {off}, but "
           f"{msg_tail}. Check init()'s count, the bytes given to expect_tx, and that every thread arrives.")
    raise KernelError(msg, "cudaErrorLaunchTimeout",
                      [Finding("synccheck", msg, ex.kernel_name, inst.line, block, thread, off)])


def _pending_count(inst, d):
    w = writer(inst.operands[0], "u32", d.func)
    rt = reader(inst.operands[1], "b64", d.func, d)

    def run(ex):
        sel = ex.ridx
        w(ex, sel, unpack(rt(ex, sel))[0].astype(np.uint32))
    return run


# ------------------------------------------------------------------ cp.async.bulk (sm_90)

def _bulk_spaces(inst):
    """(destination, source) state spaces of a bulk copy, in the order the modifiers give them."""
    found = [("global" if m == "global" else "shared") for m in inst.mods
             if m in ("global", "shared::cta", "shared::cluster")]
    if len(found) != 2:
        raise Unsupported("cp.async.bulk between these state spaces")
    return found


def _bulk_operands(inst, d):
    ops = inst.operands
    if "multicast::cluster" in inst.mods:
        raise Unsupported("cp.async.bulk with .multicast::cluster (clusters of more than one block)")
    if "cp_mask" in inst.mods:
        raise Unsupported("cp.async.bulk with .cp_mask (sm_100)")
    rd, rs = address_reader(ops[0], d.func, d), address_reader(ops[1], d.func, d)
    rn = reader(ops[2], "u32", d.func, d)
    rm = address_reader(ops[3], d.func, d) if len(ops) > 3 and ops[3][0] == "mem" else None
    return rd, rs, rn, rm


def _bulk_sizes(ex, inst, sel, n):
    n = np.broadcast_to(np.asarray(n, np.int64), sel.shape)
    bad = (n % 16 != 0) | (n <= 0)
    if bad.any():
        lane = sel[bad][0]
        ex.stop(lane, "memcheck", "cudaErrorInvalidValue", inst, lambda b, t: (
            f"A bulk async copy at line {inst.line} in kernel {ex.kernel_name} (thread {t} of block {b}) was asked "
            f"to move {int(n[bad][0])} bytes: the size must be a positive multiple of 16."))
    return n


def _needs_cluster(ex, inst, sel):
    """A bulk copy or reduction from shared memory into shared::cluster memory uses distributed shared
    memory: on an H100 it stops with an illegal instruction unless the kernel was launched with
    thread block clusters (measured: cudaErrorIllegalInstruction in a plain launch), even though a
    shared::cta address names the block's own memory. ``ex.cluster`` is set by cluster launches."""
    if getattr(ex, "cluster", None):
        return
    ex.stop(sel[0], "memcheck", "cudaErrorIllegalInstruction", inst, lambda b, t: (
        f"Illegal instruction at line {inst.line} in kernel {ex.kernel_name} (thread {t} of block {b}): a bulk "
        "copy from shared memory to shared::cluster memory needs a kernel launched with thread block clusters "
        "(__cluster_dims__ or a cluster launch attribute); without one the GPU stops the kernel here. Copy "
        "within a block with ordinary loads and stores, or launch with clusters."))


def _bulk(inst, d, land):
    """The run function of a bulk copy or reduction of ``size`` bytes (a multiple of 16, 16-byte
    aligned ends): the source is read when issued, then ``land(ex, st, lanes, size, src, dst_space,
    rd, rm)`` puts the bytes at the destination or queues them on the mbarrier (complete_tx)."""
    dst_space, src_space = _bulk_spaces(inst)
    rd, rs, rn, rm = _bulk_operands(inst, d)

    def run(ex):
        st = state(ex)
        sel = ex.idx
        if dst_space == src_space == "shared":
            _needs_cluster(ex, inst, sel)
        sizes = _bulk_sizes(ex, inst, sel, rn(ex, sel))
        for size in np.unique(sizes).tolist():
            lanes = sel[sizes == size]
            src = _read_source(ex, st, inst, lanes, size, src_space, rs)
            land(ex, st, lanes, size, src, dst_space, rd, rm)
    return run


def _bulk_copy(inst, d):
    """cp.async.bulk global->shared or shared->shared::cluster completing on an mbarrier, or
    shared->global in a bulk group."""
    def land(ex, st, lanes, size, src, dst_space, rd, rm):
        if dst_space == "global":
            off = _global_bytes(ex, inst, rd(ex, lanes), lanes, np.full(lanes.size, size), size, "st", 16)
            ex.mem.data[(off[:, None] + np.arange(size))] = src
            return
        dst = shared_offsets(ex, inst, rd(ex, lanes), lanes, size, "st", 16)
        _add_rows(ex, st, inst, lanes, dst, src, -1, -1, _slots(ex, inst, rm(ex, lanes), lanes, "shared"))
    return _bulk(inst, d, land)


def _read_source(ex, st, inst, sel, size, space, rs):
    if space == "global":
        off = _global_bytes(ex, inst, rs(ex, sel), sel, np.full(sel.size, size), size, "ld", 16)
        return _gather(ex.mem.data, off, np.full(sel.size, size), size)
    off = shared_offsets(ex, inst, rs(ex, sel), sel, size, "ld", 16)
    if ex.observers:
        ex.emit(AsyncEvent(inst, sel, ex.batch, kind="read", size=size,
                           addresses=(off - ex.shared_base[sel].astype(np.int64)).astype(np.uint64)))
    return _gather(ex.shared, off, np.full(sel.size, size), size)


_RED_TYPES = {"b32": "u32", "b64": "u64"}


def _reduce_fn(opname, dt, t):
    """One element of a bulk reduction: red's semantics, except that f32 additions keep subnormals
    in global memory too (measured on an H100: 1e-45 + 1e-45 gives 2e-45, where red.global.add.f32
    flushes), and f16/bf16 min/max compare values (IEEE minNum/maxNum), not bit patterns."""
    if t in ("f16", "bf16") and opname in ("min", "max"):
        from . import alu
        pick = np.fmin if opname == "min" else np.fmax
        if t == "f16":
            return lambda old, v: pick(old, v).astype(dt)
        return lambda old, v: alu.f32_to_bf16(pick(alu.bf16_to_f32(old), alu.bf16_to_f32(v)))
    return _atomic_fn(opname, dt, t, "shared")


def _bulk_reduce(inst, d):
    """cp.reduce.async.bulk.dst.src.completion.redOp.type [dst], [src], size{, [mbar]}: element-wise
    dst = dst op src, with red's per-element semantics (PTX ISA 9.7.9.25.4.2)."""
    from .dtypes import dtype
    opname = next(m for m in inst.mods if m in ("add", "min", "max", "inc", "dec", "and", "or", "xor"))
    t = inst.type
    dt = np.dtype(np.uint16) if t == "bf16" else dtype(_RED_TYPES.get(t, t))
    if opname in ("min", "max") and t in ("b32", "b64"):
        raise Unsupported(f"cp.reduce.async.bulk .{opname}.{t}")
    fn = _reduce_fn(opname, dt, t)

    def land(ex, st, lanes, size, src, dst_space, rd, rm):
        if dst_space == "global":
            off = _global_bytes(ex, inst, rd(ex, lanes), lanes, np.full(lanes.size, size), size, "red", 16)
            view = ex.mem.view(dt)
            for o, vals in zip(off.tolist(), src.view(dt)):     # lane after lane: regions may overlap
                index = o // dt.itemsize + np.arange(vals.size)
                view[index] = fn(view[index], vals)
            return
        if (fn, dt) not in st.reducers:
            st.reducers.append((fn, dt))
        dst = shared_offsets(ex, inst, rd(ex, lanes), lanes, size, "st", 16)
        _add_rows(ex, st, inst, lanes, dst, src, -1, -1, _slots(ex, inst, rm(ex, lanes), lanes, "shared"),
                  red=st.reducers.index((fn, dt)))
    return _bulk(inst, d, land)
