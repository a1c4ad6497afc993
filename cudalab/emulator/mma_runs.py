"""Runs of wmma.load and mma instructions executed as one program, warp by warp, in a compiled loop.

A GEMM kernel's inner loop, unrolled by nvcc, is a straight line of wmma.load (from shared memory)
and wmma.mma: cudaTensorCoreGemm's holds 112 of them between two barriers. Run one at a time, each
costs a call with a few hundred microseconds of Python around the compiled loop, and every warp's
fragments go through memory between one and the next. Here such a stretch (inside one basic block,
unguarded, its mmas all of one form) becomes one K_FUSED entry of the decoded code: mma_loops runs
the whole program for one warp, then the next. That equals lock step because the instructions read
no memory they write (loads read shared memory, mmas only registers), and registers are per lane.
A 32-bit mov or a cvt to tf32 that reads or writes the program's registers (tf32TensorCoreGemm rounds
each loaded element with __float_to_tf32 before its mma) is a row too (LANE), run lane by lane in
its place, where it used to end the program (its k-loop ran as programs of 1 to 5 rows).

Where a warp cannot go on (a load's address is bad, an mma's sums are not proven exact), it stops
at that row; the instruction's own path then runs it for those warps (reporting the address, or
summing term by term) and the program goes on from the next row. With observers, or before the
compiled loops are worth loading (mma_native.COLD_WARPS), the instructions run one by one as before.
"""
from __future__ import annotations

import bisect
import collections
import functools
import itertools
import sys
import threading

import numpy as np

from . import mma_native
from .mma_native import (A, B, BASE, BASE_WORD, C, CARRY, COLUMNS, D, DISTINCT, DST, ELEMENT_BITS, ESIZE, FA, FB,
                         FRAGMENT, KEEP, KIND, LANE, LD, LD_IMM, LFRAGMENT, LOAD, LOPERAND, MMA, MOVE, NREGS, OFFSET,
                         OPERAND, QUIET, REGS, ROUND, SLOT, SRC, TABLE, TF32_RN, TF32_RNA, TF32_RZ, WORD)
from .events import InstructionEvent

_LANE = np.arange(32)


# integer arithmetic nvcc and NVRTC place between a GEMM's wmma instructions (the next tile's address)
ARITHMETIC = frozenset({"add", "sub", "mul", "mad", "shl", "shr", "and", "or", "xor", "not", "mov", "cvt", "cvta",
                        "selp", "setp", "neg", "min", "max"})


def fuse(code, func):
    """``code`` with a K_FUSED entry at the start of every stretch of instructions that holds a
    program of at least two fusable wmma instructions with an mma (the entries after it are kept: the
    run falls back on them). Unguarded integer arithmetic in between joins the stretch when it can run
    before the program: it reads no register the program wrote before it and writes none it touched.
    A stretch starts at a wmma instruction: the compiled tier (compiled.py) replaces the entries where
    its groups and regions start, which are never tensor-core instructions."""
    from .decode import _regs
    from .engine import K_FUSED, K_NORMAL
    labels = set(func.labels.values())
    mentions = collections.Counter(x for inst in func.insts for x in {x for o in inst.operands for x in _regs(o)})
    out = list(code)
    pc = 0
    while pc < len(code):
        if getattr(code[pc][1], "fusion", None) is None:
            pc += 1
            continue
        end, last, form, wrote, read, lanes = pc, pc, None, set(), set(), {}
        while end < len(code) and (end == pc or end not in labels):
            kind, fn, inst, _ = code[end]
            if kind != K_NORMAL or inst.guard is not None:
                break
            fusion = getattr(fn, "fusion", None)
            if fusion is None:
                dests = set(_regs(inst.operands[0])) if inst.operands else set()
                touched = {x for o in inst.operands for x in _regs(o)}
                lane = (touched & wrote or dests & read) and lane_op(inst, func)
                if lane:                # a row of the program, in its place: it reads or writes the program's registers
                    lanes[end] = lane
                    wrote.add(lane["dst"])
                    read.add(lane["src"])
                    last = end + 1
                elif inst.opcode not in ARITHMETIC or touched & wrote or dests & read:
                    break
            elif fusion[0] == "mma" and form is not None and fusion[1] is not form:
                break
            else:
                form = fusion[1] if fusion[0] == "mma" else form
                wrote.update(fusion[2]["regs" if fusion[0] == "load" else "d"])
                read.update(fusion[2]["words"])
                last = end + 1
            end += 1
        entries = [(k, LaneOp(fn, lanes[i]) if i in lanes else fn, inst, aux)
                   for i, (k, fn, inst, aux) in enumerate(code[pc:last], pc)]
        program = [e for e in entries if getattr(e[1], "fusion", None)]
        if form is not None and len(program) >= 2:
            out[pc] = (K_FUSED, Run(entries, form, mentions, constant_offsets(func, pc, labels)), code[pc][2], last)
            pc = last
        else:
            pc += 1
    return out


def constant_offsets(func, pc: int, labels) -> "ConstantOffsets":
    """Register -> (register, constant) where, at instruction ``pc``, the first holds the second plus
    the constant (bytes, 64-bit), through chains of unguarded add.s64/u64 of a register and an
    immediate: the first's last write before pc in pc's basic block is such an add and its source is
    not written after it; or, written nowhere in that block, each is written once in the kernel,
    the add after its source's one write in the same block (nvcc's tile addresses, worked out before
    the loop). A program's loads read their tiles from the base register this leads back to, with the
    constant added to their offsets: dmmaTensorCoreGemm's k-loop reads 96 tiles through 81 registers,
    each one of two bases plus a constant, and checking 81 registers' 32 lanes, warp by warp, each
    from its own array over the batch, was a seventh of its compiled loop."""
    return ConstantOffsets(_writes(func, labels), func.insts, pc)


class ConstantOffsets:
    """constant_offsets' answer, register by register as a program's loads ask: each looks up the
    registers' writes by bisection. (It used to scan pc's block from its start for every program, and
    resolve every register's chain: quadratic in the length of an unrolled kernel's block.)"""

    def __init__(self, facts, insts, pc):
        self.where, self.single, starts = facts
        self.insts, self.pc = insts, pc
        at = bisect.bisect_right(starts, pc)
        self.start = starts[at - 1] if at else 0        # pc's basic block

    def _last_write(self, x):
        """The index of ``x``'s last write before pc, or -1."""
        writes = self.where.get(x, ())
        at = bisect.bisect_left(writes, self.pc)
        return writes[at - 1] if at else -1

    def _link(self, x):
        """(source, immediate) of one add that ``x`` holds at pc, else None."""
        i = self._last_write(x)
        if i >= self.start:                         # written in pc's block: by such an add, its source not since
            add = _add_of_constant(self.insts[i])
            return add if add and self._last_write(add[0]) < i else None
        one = self.single.get(x)
        if one is None or one[2] < self.pc <= one[3]:
            return None
        return one[0], one[1]

    def get(self, x, default=None):
        link = self._link(x)
        if link is None:
            return default
        y, imm = link
        seen = {x}
        while y not in seen:                        # (each link's source written before it: no cycle)
            seen.add(y)
            more = self._link(y)
            if more is None:
                break
            y, imm = more[0], imm + more[1]
        return y, (imm + 2 ** 63) % 2 ** 64 - 2 ** 63

    def __contains__(self, x):
        return self.get(x) is not None

    def __getitem__(self, x):
        got = self.get(x)
        if got is None:
            raise KeyError(x)
        return got


def _written(inst, no_dest, regs):
    """The registers an instruction writes (a call: every register it names)."""
    ops = inst.operands
    if inst.opcode == "call":
        return [r for o in ops for r in regs(o)]
    if ops and ops[0][0] in ("reg", "vec", "pair") and (inst.opcode not in no_dest or inst.opcode == "wmma"):
        return list(regs(ops[0]))
    return []


def _add_of_constant(inst):
    """(source register, immediate) of an unguarded add.s64/u64 of a register and an immediate, else None."""
    ops = inst.operands
    if inst.opcode == "add" and inst.guard is None and tuple(inst.mods) == tuple(inst.types) and \
            tuple(inst.types) in (("s64",), ("u64",)) and len(ops) == 3 and ops[0][0] == "reg" and \
            ops[1][0] == "reg" and not ops[1][2] and ops[2][0] == "imm" and isinstance(ops[2][1], int):
        return ops[1][1], ops[2][1]
    return None


def _writes(func, labels):
    """(register -> the indices of the instructions that write it, in order; the registers written once
    in the kernel, by an _add_of_constant of a source written once, earlier in the same basic block:
    register -> (source, immediate, the source's write, its own write); the labels' indices, in order).
    Worked out once a function."""
    cached = func.__dict__.get("_constant_writes")
    if cached is not None:
        return cached
    from .decode import _NO_DEST, _regs
    insts = func.insts
    where = collections.defaultdict(list)
    for i, inst in enumerate(insts):
        for r in _written(inst, _NO_DEST, _regs):
            where[r].append(i)
    entries = np.cumsum(np.isin(np.arange(len(insts)), list(labels)))      # labels at or before each index
    leaves = np.cumsum([inst.opcode in ("bra", "brx", "ret", "exit", "call", "trap") for inst in insts])
    single = {}
    for x, at in where.items():
        add = _add_of_constant(insts[at[0]]) if len(at) == 1 else None
        if add is None or len(where.get(add[0], ())) != 1:
            continue
        first, then = where[add[0]][0], at[0]
        if first < then and entries[then] == entries[first] and leaves[then - 1] == (leaves[first - 1] if first else 0):
            single[x] = (add[0], add[1], first, then)
    func.__dict__["_constant_writes"] = (dict(where), single, sorted(labels))
    return func.__dict__["_constant_writes"]


_TF32 = {"rna": TF32_RNA, "rn": TF32_RN, "rz": TF32_RZ}


def lane_op(inst, func):
    """The LANE row's {"dst", "src", "kind", "words"} of a 32-bit register-to-register mov, or of a cvt of
    a float32 register to tf32 (tf32TensorCoreGemm rounds each loaded element with __float_to_tf32:
    inline asm of a mov, the cvt and a mov, then a mov into the mma's fragment), else None."""
    from .dtypes import storage
    ops = inst.operands
    if len(ops) != 2 or any(o[0] != "reg" or o[2] for o in ops) or \
            any(storage(func.regs[o[1]]).itemsize != 4 for o in ops if o[1] in func.regs) or \
            not all(o[1] in func.regs for o in ops):
        return None
    mods = [x for x in inst.mods if x not in inst.types]
    if inst.opcode == "mov" and tuple(inst.types) in (("b32",), ("u32",), ("s32",), ("f32",)) and not mods:
        kind = MOVE
    elif inst.opcode == "cvt" and tuple(inst.types) == ("tf32", "f32") and len(mods) == 1 and mods[0] in _TF32:
        kind = _TF32[mods[0]]
    else:
        return None
    return {"dst": ops[0][1], "src": ops[1][1], "kind": kind, "words": {ops[0][1]: 4, ops[1][1]: 4}}


class LaneOp:
    """A decoded mov or cvt that is a row of a program: runs as before one by one, and says so."""

    def __init__(self, fn, info):
        self.fn, self.fusion = fn, ("lane", None, info)

    def __call__(self, ex):
        return self.fn(ex)


class Run:
    """One run's program (mma_loops' rows), its registers and the loads' element tables."""

    def __init__(self, entries, form, mentions, bases=None):
        self.entries, self.form = entries, form
        bases, folded = bases or {}, {}
        self.program, self.joined = _joined_lanes([e for e in entries if getattr(e[1], "fusion", None)], mentions)
        self.before = [e[1] for e in entries if not getattr(e[1], "fusion", None)]      # run first
        self.names, slots = [], {}

        def slot(name):
            if name not in slots:
                slots[name] = len(self.names)
                self.names.append(name)
            return slots[name]
        version, fragment_ids, writes = {}, ({}, {}), itertools.count(1)
        self.fresh, written = set(), set()        # fresh: written before any read

        def read(names):
            return [slot(x) for x in names]

        def write(names):
            self.fresh.update(x for x in names if x not in slots)
            written.update(names)
            for x in names:
                version[x] = next(writes)
            return [slot(x) for x in names]
        ops, tables, loaded = [], [], []
        for _, fn, _, _ in self.program:
            what, _, info = fn.fusion
            row = np.zeros(COLUMNS, np.int64)
            if what == "lane":
                row[0], row[KIND], row[LFRAGMENT] = LANE, info["kind"], -1
                row[SRC] = read([info["src"]])[0]
                row[DST] = write([info["dst"]])[0]
            elif what == "mma":
                row[0] = MMA
                for use, col, count in (("a", A, form.counts[0]), ("b", B, form.counts[1]),
                                        ("c", C, form.counts[2])):
                    names = info[use][:count]
                    row[col:col + count] = read(names)
                    if use != "c":      # one id per register tuple and the writes it has seen
                        ids = fragment_ids[use == "b"]
                        row[FA if use == "a" else FB] = ids.setdefault(
                            (tuple(names), tuple(version.get(x, 0) for x in names)), len(ids))
                row[D:D + len(info["d"])] = write(info["d"])
            else:
                row[0], row[FRAGMENT] = LOAD, -1
                base, extra = info["base"], 0
                if base in bases and info["base_word"] == 8:      # (constant_offsets)
                    base, extra = bases[base]
                    folded[base] = 8
                row[BASE] = read([base])[0] if base else -1
                row[LD] = read([info["ld"]])[0] if isinstance(info["ld"], str) else -1
                row[LD_IMM] = 0 if isinstance(info["ld"], str) else info["ld"]
                row[NREGS] = len(info["regs"])
                row[REGS:REGS + len(info["regs"])] = write(info["regs"])
                loaded.append((len(ops), tuple(info["regs"]), {x: version[x] for x in info["regs"]}))
                row[BASE_WORD], row[OFFSET] = info["base_word"], (info["offset"] + extra + 2 ** 63) % 2 ** 64 - 2 ** 63
                row[TABLE], row[DISTINCT] = len(tables), info["major"].shape[1]
                row[ESIZE], row[ELEMENT_BITS], row[WORD] = info["esize"], info["bits"], info["word"]
                tables.append((info["major"], info["minor"]))
            ops.append(row)
        self.ops = np.array(ops)
        self.slot_of = slots
        chain_count = chains(self.program, self.ops, mentions)
        if form.kind == "floats":
            _decoded_at_load(self.program, self.ops, loaded, form.counts, fragment_ids, mentions)
            _rounded_at_load(self.program, self.ops, form.counts, mentions)
        elif form.kind == "doubles" and not (self.ops[:, 0] == LANE).any():
            # (dmmaTensorCoreGemm's k-loop: each fragment read from its tile into the loop, not its registers)
            _decoded_at_load(self.program, self.ops, loaded, form.counts, fragment_ids, mentions)
        self.written = written
        self.words, self.folded = dict(folded), set(folded)
        self.hidden_reads = frozenset(folded)     # read, yet named by no instruction of it (compiled.liveness)
        self._arguments = (entries, form, mentions)
        for (_, fn, _, _) in self.program:
            for name, word in fn.fusion[2]["words"].items():
                self.words[name] = word
        self.unheld = _unheld(self.program, self.names, self.fresh, mentions)
        self.held = [x for x in self.names if x not in self.unheld]
        self.held_slots = np.array([self.slot_of[x] for x in self.held], np.int64)
        self.unheld_slots = np.array([self.slot_of[x] for x in self.unheld], np.int64)
        widest = max([t[0].shape[1] for t in tables], default=1)
        self.major = np.zeros((max(len(tables), 1), 32, widest), np.uint64)
        self.minor = np.zeros_like(self.major)
        for i, (major, minor) in enumerate(tables):
            self.major[i, :, :major.shape[1]], self.minor[i, :, :minor.shape[1]] = major, minor
        self.fragments = np.array([max(len(fragment_ids[0]), 1), max(len(fragment_ids[1]), 1), max(chain_count, 1)],
                                  np.int64)

    @functools.cached_property
    def unfolded(self):
        """The same program with no base folded, for a batch that does not hold a folded base. Native code
        stores the bases for the program (compiled.hidden_reads), so only code that does not know of them
        gets here; in tf32TensorCoreGemm, before it did, the program found its base missing at every call."""
        return Run(*self._arguments)

    def __call__(self, ex):
        from .mma import active_warps
        if ex.observers or not mma_native.worth_loading(ex.idx.size // 32 * len(self.program)):
            self.one_by_one(ex)
            self._drop_unheld(ex)
            return
        if any(ex.fr.regs.get(name) is None for name in self.folded):
            return self.unfolded(ex)
        for fn in self.before:
            fn(ex)
        warps = active_warps(ex, self.program[0][2])
        arrays = self._registers(ex)
        if arrays is None:
            for _, fn, _, _ in self.program:
                fn(ex)
            self._drop_unheld(ex)
            return
        ptrs = np.empty(len(self.names), np.int64)
        ptrs[self.held_slots] = _addresses(arrays)
        scratch = _scratch(len(self.unheld), ex.n)
        if scratch is not None:
            ptrs[self.unheld_slots] = scratch.__array_interface__["data"][0] + np.arange(len(self.unheld)) * (8 * ex.n)
        pos = np.zeros(warps.size, np.int64)
        todo = np.ascontiguousarray(warps, np.int64)
        at = np.arange(warps.size)
        straight = self._straight(ptrs, todo)
        while True:
            sub = pos[at]
            self.form.run(todo, sub, ptrs, self.ops, self.major, self.minor, ex.shared.ctypes.data, ex.shared_base,
                          ex.shared_size, self.fragments, straight)
            pos[at] = sub
            left = np.flatnonzero(pos < len(self.ops))
            if not left.size:
                if scratch is None:         # (a stop handed the unheld registers arrays of their own)
                    self._drop_unheld(ex)
                return
            if scratch is not None:      # what the stopped warps handed over into registers held by nothing
                self._hand_over(ex, scratch)
                scratch = None
            # the first row some warps stopped at: its instruction's own path for them, then on from the next
            row = pos[left].min()
            at = left[pos[left] == row]
            ex.run_on((warps[at, None] * 32 + _LANE).ravel(), self.program[row][1], ex)
            pos[at] += 1
            todo = np.ascontiguousarray(warps[at], np.int64)
            ptrs = _addresses(self._again(ex))     # (a writer may have replaced arrays)

    def _straight(self, ptrs, warps):
        """A doubles program's own straight-line code (mma_straight), planned at its first run, or None."""
        if "straight" not in self.__dict__ and warps.size:
            from . import mma_straight
            self.straight = mma_straight.plan(self.ops, self.form, self.major, self.minor, ptrs, warps) \
                if self.form.kind == "doubles" else None
        return self.__dict__.get("straight")

    def _registers(self, ex):
        """The program's register arrays, or None where a register it reads is not an array of the batch
        of its word (then one by one). A register it writes keeps its array where nothing else holds that
        array (a mov may have given two registers one); else it gets a fresh one, as a writer of every
        lane does (a copy where lanes outside the running warps, or reads before the write, need the old
        values)."""
        regs = ex.fr.regs
        n, words, written = ex.n, self.words, self.written
        for name in self.folded:        # a base the loads lead back to (constant_offsets): an array of its own
            a = regs.get(name)
            if isinstance(a, np.ndarray) and a.dtype.itemsize == 8 and a.size in (1, n) and \
                    not (a.shape == (n,) and a.flags.c_contiguous):
                regs[name] = np.ascontiguousarray(np.broadcast_to(a.reshape(-1), (n,)))
        for name in self.held:
            a = regs.get(name)
            if not (a is None and name in written or isinstance(a, np.ndarray) and a.shape == (n,)
                    and a.dtype.itemsize == words[name] and a.flags.c_contiguous):
                return None
        every = ex.idx.size == ex.n
        alone = _references_of_one_entry()
        out = []
        for name in self.held:
            a = regs.get(name)
            if name in self.written and (a is None or sys.getrefcount(a) > alone or a.dtype.kind != "u"):
                dt = np.uint64 if self.words[name] == 8 else np.uint32
                a = regs[name] = np.empty(ex.n, dt) if a is None or every and name in self.fresh else np.array(a, dt)
            out.append(a)
        return out

    def _hand_over(self, ex, scratch):
        """After a stop: the registers held by nothing (``unheld``) get arrays of their own, copies of
        the scratch rows the compiled loop wrote the stopped warps' values to, so that the stopped
        instruction's own path and the rows after it read them (the other warps' values there are
        stale, and nothing reads them)."""
        for i, name in enumerate(self.unheld):
            row = scratch[i].view(np.uint64 if self.words[name] == 8 else np.uint32)[:ex.n]
            ex.fr.regs[name] = row.copy()

    def _drop_unheld(self, ex):
        """Forget the arrays that the instructions' own paths (one by one, or after a stop) gave the
        registers held by nothing: nothing outside the program names them and it writes them before
        reading them, so they are dead once it ends. Kept, every program's would pile up in the batch,
        which engine.register_bytes sizes without them."""
        regs = ex.fr.regs
        for name in (*self.unheld, *self.joined):
            regs.pop(name, None)

    def _again(self, ex):
        """The register arrays after an instruction's own path wrote some: each kept if it is still an
        array of the batch of its word, else replaced by one."""
        regs = ex.fr.regs
        for name in self.names:
            a = regs[name]
            if not (a.shape == (ex.n,) and a.dtype.itemsize == self.words[name] and a.flags.c_contiguous):
                regs[name] = np.ascontiguousarray(np.broadcast_to(a, (ex.n,)))
        return [regs[name] for name in self.names]

    def one_by_one(self, ex):
        """The instructions as run_function runs K_NORMAL entries (the engine emitted the first's event)."""
        for i, (_, fn, inst, _) in enumerate(self.entries):
            if i and ex.observers:
                ex.emit(InstructionEvent(inst, ex.idx, ex.batch))
            fn(ex)


def _joined_lanes(program, mentions):
    """``program`` with each chain of LANE rows joined into one row, and the registers the chain passed
    its value through: tf32TensorCoreGemm's __float_to_tf32 is four rows an element (mov.b32 %f, %r of
    the load; the inline asm's cvt.rna.tf32.f32 and mov; mov.b32 %r, %f for the mma), run lane by lane
    for every warp, a dozen rows an mma, which cost the compiled loop more than the mma's sums. A row
    absorbs the one before it in the chain where that row alone writes the register it reads, nothing
    else reads it, no instruction outside the two names it, the chain's source is not written in
    between, and at most one of the two rounds (a mov copies). The joined registers are never written:
    nothing could read them."""
    writers, readers = collections.defaultdict(list), collections.defaultdict(list)
    for p, (_, fn, _, _) in enumerate(program):
        what, _, info = fn.fusion
        if what == "lane":
            written, read = [info["dst"]], [info["src"]]
        elif what == "load":
            written, read = info["regs"], [x for x in (info["base"], info["ld"]) if isinstance(x, str)]
        else:
            written, read = info["d"], [*info["a"], *info["b"], *info["c"]]
        for x in written:
            writers[x].append(p)
        for x in read:
            readers[x].append(p)
    lanes = {p: dict(fn.fusion[2]) for p, (_, fn, _, _) in enumerate(program) if fn.fusion[0] == "lane"}
    dropped, joined = set(), []
    for p in sorted(lanes):
        info = lanes[p]
        x = info["src"]
        q = writers[x][0] if len(writers[x]) == 1 else None
        if q is None or q not in lanes or readers[x] != [p] or mentions[x] != 2 or q in dropped:
            continue
        first = lanes[q]
        start = first.get("start", q)           # the chain's first row, which read its source
        if first["kind"] != MOVE and info["kind"] != MOVE or \
                any(start < r < p for r in writers[first["src"]]) or first["src"] == info["dst"]:
            continue
        kind = info["kind"] if first["kind"] == MOVE else first["kind"]
        lanes[p] = {"dst": info["dst"], "src": first["src"], "kind": kind, "start": start,
                    "words": {info["dst"]: 4, first["src"]: 4}}
        dropped.add(q)
        joined.append(x)
    out = []
    for p, (k, fn, inst, aux) in enumerate(program):
        if p in dropped:
            continue
        out.append((k, LaneOp(fn.fn, lanes[p]), inst, aux) if p in lanes else (k, fn, inst, aux))
    return out, joined


def chains(program, ops, mentions):
    """Mark the program's accumulator chains in ``ops`` (columns SLOT, CARRY, KEEP): an mma whose C is the
    D of the previous instruction touching those registers, an mma too, carries on that one's chain, and
    the earlier D stays in the loop (the next reads it from there) instead of going through the registers,
    where nothing else can read it: the later mma writes its D to the same registers (c = mma(a, b, c)),
    or nothing but the two names them in the whole function (nvcc's PTX gives every D fresh registers,
    read once, as the next mma's C). Returns the number of chains."""
    last, count = {}, 0          # register -> the row that last read or wrote it
    for p, (_, fn, _, _) in enumerate(program):
        what, _, info = fn.fusion
        if what != "mma":
            touched = _named(what, info)
        else:
            touched = [*info["a"], *info["b"], *info["c"], *info["d"]]
            before = {last.get(x) for x in info["c"]}
            q = before.pop() if len(before) == 1 else None
            c = list(info["c"])
            alone = all(mentions[x] == 2 for x in c) and not set(c) & {*info["a"], *info["b"], *info["d"]}
            if q is not None and ops[q, 0] == MMA and list(program[q][1].fusion[2]["d"]) == c and (
                    c == list(info["d"]) or alone):
                ops[p, SLOT], ops[p, CARRY], ops[q, KEEP] = ops[q, SLOT], 1, 1
            else:
                ops[p, SLOT] = count
                count += 1
        for x in touched:
            last[x] = p
    return count


def _decoded_at_load(program, ops, loaded, counts, fragment_ids, mentions):
    """Mark the loads of ``ops`` whose registers an mma reads as its A or B fragment (columns FRAGMENT,
    OPERAND): the loop decodes the fragment from the words the load reads, not from the registers again.
    Where nothing outside the program names those registers, and in it this load alone writes them before
    anything reads them, they are not written at all (QUIET): nvcc's unrolled k-loop gives each fragment
    fresh registers. ``loaded``: (row, registers, their versions after the load) of each load."""
    named = collections.Counter()
    first = {}
    for p, (_, fn, _, _) in enumerate(program):
        regs = set(_named(*fn.fusion[::2]))
        named.update(regs)
        for x in regs:
            first.setdefault(x, p)
    for row, regs, versions in loaded:
        for use in (0, 1):
            names = regs[:counts[use]]
            fid = fragment_ids[use].get((names, tuple(versions[x] for x in names)))
            if fid is not None:
                ops[row, FRAGMENT], ops[row, OPERAND] = fid, use
                break
        ops[row, QUIET] = ops[row, FRAGMENT] >= 0 and all(mentions[x] == named[x] and first[x] == row for x in regs)


def _rounded_at_load(program, ops, counts, mentions):
    """Fold LANE rows between a load and its mma into the load (columns ROUND, LFRAGMENT, LOPERAND):
    tf32TensorCoreGemm rounds each loaded element with __float_to_tf32 (a LANE row an element, after
    _joined_lanes), then the mma reads the rounded registers, which the loop gathered and decoded
    again for every mma. Where an mma's A or B fragment is, register j, the one LANE row that writes it,
    all of one kind, from register j of one load (its last writer there), and nothing but mmas reading
    that fragment reads those registers (nothing outside the program names them), the load decodes the
    fragment from its words rounded so, and the LANE rows are skipped where the warp ran that load (a
    stop writes them: mma_loops). The load's own registers are not written either (QUIET) where only
    those LANE rows read them."""
    writer, writers, readers, lw = {}, collections.defaultdict(list), collections.defaultdict(list), {}
    named = collections.Counter()
    seen = {}           # (row of the mma, use) -> (load, lane rows), the fragments that fold
    for p, (_, fn, _, _) in enumerate(program):
        what, _, info = fn.fusion
        named.update(set(_named(what, info)))
        if what == "mma":
            for use in (0, 1):
                names = info["a" if use == 0 else "b"][:counts[use]]
                rows = [writer.get(x) for x in names]
                if all(q is not None and ops[q, 0] == LANE for q in rows) and len({ops[q, KIND] for q in rows}) == 1:
                    srcs = [program[q][1].fusion[2]["src"] for q in rows]
                    loads = {lw.get(q, {}).get(x) for q, x in zip(rows, srcs)}
                    load = loads.pop() if len(loads) == 1 else None
                    if load is not None and ops[load, 0] == LOAD and \
                            list(program[load][1].fusion[2]["regs"][:counts[use]]) == srcs:
                        seen[p, use] = (load, rows)
        if what == "lane":
            written, read = [info["dst"]], [info["src"]]
            lw.setdefault(p, {})[info["src"]] = writer.get(info["src"])
        elif what == "load":
            written, read = info["regs"], [x for x in (info["base"], info["ld"]) if isinstance(x, str)]
        else:
            written, read = info["d"], [*info["a"], *info["b"], *info["c"]]
        for x in read:
            readers[x].append(p)
        for x in written:
            writer[x] = p
            writers[x].append(p)
    for (p, use), (load, rows) in seen.items():
        f = ops[p, FA if use == 0 else FB]
        col = FA if use == 0 else FB
        dsts = [program[q][1].fusion[2]["dst"] for q in rows]
        if ops[load, FRAGMENT] >= 0 and (ops[load, FRAGMENT], ops[load, OPERAND]) != (f, use):
            continue
        if not all(writers[x] == [q] and mentions[x] == named[x] and
                   all(ops[r, 0] == MMA and ops[r, col] == f and x in program[r][1].fusion[2]["ab"[use]][:counts[use]]
                       and x not in program[r][1].fusion[2]["c"] for r in readers[x]) for x, q in zip(dsts, rows)):
            continue
        ops[load, FRAGMENT], ops[load, OPERAND], ops[load, ROUND] = f, use, ops[rows[0], KIND] + 1
        ops[rows, LFRAGMENT], ops[rows, LOPERAND] = f, use
        regs = program[load][1].fusion[2]["regs"]
        ops[load, QUIET] = all(mentions[x] == named[x] and writers[x] == [load] and set(readers[x]) <= set(rows)
                               for x in regs)


def _named(what, info):
    """The registers a row of a program names."""
    if what == "load":
        return [*info["regs"], *(x for x in (info["base"], info["ld"]) if isinstance(x, str))]
    if what == "lane":
        return [info["dst"], info["src"]]
    return [*info["a"], *info["b"], *info["c"], *info["d"]]


def _unheld(program, names, fresh, mentions):
    """The program's registers that nothing outside it names and that it writes before it reads them:
    their values live only while a warp runs the program, so they need no array over the batch. nvcc's
    unrolled k-loop has hundreds (cudaTensorCoreGemm's 56-row program: the loads' fragments, decoded
    as loaded and never written, and the accumulator chains' D, kept in the loop); an array for each,
    every call, was the larger part of the call (3.7 ms of Python and 47 MB of fresh pages against 3 ms
    of compiled loop). They get rows of one scratch buffer instead (_scratch), which the loop writes
    where it writes them at all (a LANE row's result, a stopped warp's kept values), copied into arrays
    of their own only after a stop (Run._hand_over)."""
    inside = collections.Counter(x for (_, fn, _, _) in program for x in set(_named(*fn.fusion[::2])))
    return [x for x in names if x in fresh and inside[x] == mentions[x]]


def unheld_bytes(code, regs) -> int:
    """Bytes a lane saves where the programs in ``code`` (K_FUSED Runs) hold no arrays for their unheld
    registers (engine.register_bytes sizes a batch by what is left): all of them, less the largest
    program's, which the scratch buffer holds instead at most (a uint64 row a register, of which the loop
    writes a 32-bit register's first half: LANE rows and a stop's hand-over; the rest is never touched)
    and which a stop's hand-over (or a run one by one) gives arrays until the program ends."""
    from .dtypes import storage
    runs = [fn for _, fn, _, _ in code if isinstance(fn, Run)]
    sizes = [sum(storage(regs[x]).itemsize for x in (*r.unheld, *r.joined) if x in regs) for r in runs]
    return sum(sizes) - max(sizes, default=0)


_SCRATCH = threading.local()


def _scratch(rows, n):
    """A buffer of ``rows`` rows of ``n`` uint64 words for the registers held by nothing, one per thread
    (programs run one after another there) reused by every program: only the LANE rows' registers and a
    stopped warp's kept values are written there, so most of its pages are never touched. None where
    there are no such registers."""
    if not rows:
        return None
    have = getattr(_SCRATCH, "buffer", None)
    if have is None or have.shape[0] < rows or have.shape[1] != n:
        have = _SCRATCH.buffer = np.empty((max(rows, have.shape[0] if have is not None and have.shape[1] == n
                                               else 0), n), np.uint64)
    return have


def _addresses(arrays):
    """The arrays' data addresses (``ndarray.ctypes`` costs ten times as much: a program has hundreds)."""
    return np.array([a.__array_interface__["data"][0] for a in arrays], np.int64)


def _references_of_one_entry():
    """What sys.getrefcount says of an array held by one dictionary entry and one local variable (the
    count depends on the Python version): more means something else holds it too."""
    held = {"x": np.empty(0)}
    a = held["x"]
    return sys.getrefcount(a)
