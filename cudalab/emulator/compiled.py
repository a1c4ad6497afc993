"""The compiled tier: straight-line runs of a kernel's instructions as native code, same schedule.

The interpreter runs one instruction over every active lane, then the next. This tier keeps that
schedule and only changes *how* a run of instructions executes: a **group** of consecutive
instructions inside one basic block becomes one native function (``llvmgen``, through llvmlite)
that runs, lane by lane, all of the group's instructions. Control flow, barriers, calls, warp
instructions and everything the generator does not know stay with the interpreter, entry by entry,
so a kernel is never "unsupported" here: it just has fewer groups.

Why running a group lane by lane equals lock step: instructions on registers only touch their own
lane; a group holds no two memory instructions where one writes a state space the other reads or
writes (local memory is per thread and never conflicts), so no lane can see another lane's effect
earlier or later than in lock step; and an atomic runs in lane order either way. Where the native
code meets something it will not decide itself (an address memcheck would report, a float64 NaN),
it *bails out*: registers the group both read and wrote are restored and the group runs again in
the interpreter, which gives the exact result or the exact error message. A group that starts with
an atomic checks every lane's address first (an atomic must not run twice).

Used only when nothing observes the launch (observers need per-instruction events). The tier is
chosen by ``CUDALAB_TIER`` (``interp``, ``compiled``, default ``auto``: compile a kernel once a
launch is big or the kernel has spent ``AUTO_SECONDS`` in the interpreter, so short launches of a
new kernel never wait for LLVM). Native code is cached on disk by the hash of its LLVM IR.
"""
from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import os
from pathlib import Path

import numpy as np

AUTO_LANES = 1 << 15            # a launch this big compiles at once (the interpreter would take ~0.1 s+)
AUTO_SECONDS = 0.2              # interpreter CPU time after which a kernel is compiled
_CFUNC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


def mode() -> str:
    m = os.environ.get("CUDALAB_TIER", "auto").strip().lower()
    return m if m in ("interp", "compiled", "auto") else "auto"


def cache_dir() -> Path:
    return Path(os.environ.get("CUDALAB_CACHE", Path.home() / ".cache" / "cudalab")) / "native"


@dataclasses.dataclass
class _Tier:
    """What the tier knows about one decoded kernel: time spent interpreted, its fused code."""
    interp_seconds: float = 0.0
    fused: object = None            # DecodedFunction with K_FUSED entries, False: nothing to compile


def pick(program, df, observers, lanes, cluster_size=1):
    """The DecodedFunction to run: ``df`` itself (interpreted) or its fused copy."""
    if observers or cluster_size > 1 or not df.func.is_entry:
        return df
    m = mode()
    if m == "interp":
        return df
    st = _tier(df)
    if st.fused is None:
        if m == "auto" and lanes < AUTO_LANES and st.interp_seconds < AUTO_SECONDS and not _on_disk(program, df):
            return df
        st.fused = _build(program, df) or False
    return st.fused or df


def note_time(df, seconds):
    """Interpreter time of a launch, for the auto mode's AUTO_SECONDS."""
    st = _tier(df)
    st.interp_seconds += seconds


def _tier(df):
    st = df.__dict__.get("_tier")
    if st is None:
        st = df._tier = _Tier()
    return st


def _on_disk(program, df):
    """Compiled before (by this or an earlier process): loading it costs milliseconds."""
    key = getattr(df, "_native_key", None)
    return key is not None and (cache_dir() / f"{key}.o").exists()


# ------------------------------------------------------------------ planning groups

@dataclasses.dataclass
class Group:
    start: int
    end: int                    # exclusive
    regs: list                  # register names, pointer-table order
    restore: list               # registers read and written: restored before a bail-out rerun
    writes: set                 # registers the group writes
    can_bail: bool
    symbols: list
    name: str
    check_name: str | None      # address pre-check of a leading atomic


_READ_ONLY = ("param", "const")


def _access(inst):
    """(classes, writes) of a memory instruction: classes of memory it may touch across lanes."""
    from .memops import _space
    op = inst.opcode
    if op in ("ld", "ldu", "st", "atom", "red"):
        sp = _space(inst)
        if sp in _READ_ONLY or sp == "local":
            return (), False
        classes = ("global", "shared") if sp == "generic" else ("shared",) if sp == "shared" else ("global",)
        return classes, op != "ld" and op != "ldu"
    return (), False


_WRITES_FIRST = {"mov", "cvta", "add", "sub", "mul", "mad", "fma", "div", "rem", "sqrt", "rsqrt", "rcp", "and",
                 "or", "xor", "not", "shl", "shr", "neg", "abs", "min", "max", "setp", "selp", "cvt", "ld", "ldu",
                 "atom"}


def _regs(o):
    from .decode import _regs as regs_of
    return set(regs_of(o))


def live_after(df):
    """Per instruction index, the registers that may be read after it (backward dataflow over the
    CFG). A group stores only those: the others are dead temporaries. Over-approximates: an unknown
    instruction defines nothing and reads every register it names; None where control flow is
    not plain (brx.idx), so everything is stored."""
    f = df.func
    n = len(f.insts)
    uses, defs, succ = [], [], []
    for i, inst in enumerate(f.insts):
        ops = inst.operands
        if inst.opcode == "brx":
            return None
        writes = inst.opcode in _WRITES_FIRST and ops and ops[0][0] in ("reg", "vec", "pair")
        d = _regs(ops[0]) if writes else set()
        u = set()
        for o in (ops[1:] if writes else ops):
            u |= _regs(o)
        if inst.guard:
            u.add(inst.guard[0])
            d = set()                       # a guarded write may not happen: the old value lives on
        uses.append(u)
        defs.append(d)
        nxt = []
        if inst.opcode == "bra":
            nxt.append(f.labels[ops[0][1]])
            if inst.guard:
                nxt.append(i + 1)
        elif inst.opcode in ("ret", "exit", "trap") and not inst.guard:
            pass
        else:
            nxt.append(i + 1)
        succ.append([s for s in nxt if s < n])
    live_in = [set() for _ in range(n)]
    out = [set() for _ in range(n)]
    changed = True
    while changed:
        changed = False
        for i in range(n - 1, -1, -1):
            o = set().union(*(live_in[s] for s in succ[i])) if succ[i] else set()
            li = uses[i] | (o - defs[i])
            if li != live_in[i] or o != out[i]:
                live_in[i], out[i] = li, o
                changed = True
    return out


def plan(df, module, sink):
    """Split the kernel into groups and emit each into ``sink`` (an llvmlite module). Instructions
    the generator refuses stay interpreted."""
    from llvmlite import ir
    from . import llvmgen as lg
    from .decode import DECODERS, _nop
    from .engine import K_NORMAL, _DecodeContext
    f = df.func
    d = _DecodeContext(f, module, df.param_offsets)
    boundaries = set(f.labels.values()) | set(df.reconv.values())
    n = len(df.code)
    scratch = ir.Module(name="scratch")
    scratch_find = lg.find_function(scratch)
    info = {}                                   # pc -> can bail out (present: compilable)
    for pc in range(n):
        kind, _, inst, _ = df.code[pc]
        if kind != K_NORMAL or inst.opcode not in lg.GENERATORS:
            continue
        if inst.opcode in ("membar", "fence") and DECODERS.get(inst.opcode) is not _nop:
            continue
        trial = lg.GroupBuilder(scratch, f"t{pc}", f, d, [], scratch_find)
        try:
            trial.emit(inst)
        except lg.Skip:
            continue
        info[pc] = trial.bails > 0
    find = lg.find_function(sink)
    live = live_after(df)
    groups, symbols = [], []
    pc = 0
    while pc < n:
        if pc not in info:
            pc += 1
            continue
        reads, writes = set(), set()
        end, bails = pc, False
        atomic = df.code[pc][2].opcode in ("atom", "red")
        while end in info and (end == pc or end not in boundaries):
            inst = df.code[end][2]
            classes, wr = _access(inst)
            if any(c in writes or (wr and c in reads) for c in classes):
                break
            if end != pc and (inst.opcode in ("atom", "red", "shfl") or atomic and info[end]):
                break             # atomics and shuffles start their group; nothing may bail out after an atomic
            bails = bails or info[end]
            (writes if wr else reads).update(classes)
            end += 1
        name = f"g{pc}"
        gb = lg.GroupBuilder(sink, name, f, d, symbols, find)
        for k in range(pc, end):
            gb.emit(df.code[k][2])
        gb.finish(None if live is None else live[end - 1])
        check = None
        if atomic:
            check = f"c{pc}"
            cb = lg.GroupBuilder(sink, check, f, d, symbols, find, regs=gb.regs, check_only=True)
            cb.emit(df.code[pc][2])
            cb.finish()
        restore = sorted(gb.loaded & gb.written) if bails and not atomic else []
        groups.append(Group(pc, end, gb.regs, restore, gb.written, bails and not atomic, symbols, name, check))
        pc = end
    return groups


# ------------------------------------------------------------------ native code

_JIT: dict = {}


def _jit():
    if not _JIT:
        import llvmlite.binding as llvm
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        tm = target.create_target_machine(cpu=llvm.get_host_cpu_name(),
                                           features=llvm.get_host_cpu_features().flatten(), opt=2)
        _JIT.update(llvm=llvm, tm=tm)
    return _JIT


def _build(program, df):
    """Plan, generate, optimize and load the kernel's groups; None when nothing is worth it."""
    from llvmlite import ir
    from .engine import K_FUSED
    sink = ir.Module(name="cudalab_kernel")
    groups = plan(df, program.module, sink)
    if not groups:
        return None
    text = str(sink)
    key = hashlib.sha256(text.encode()).hexdigest()[:32]
    df._native_key = key
    j = _jit()
    llvm = j["llvm"]
    path = cache_dir() / f"{key}.o"
    mod = llvm.parse_assembly(text)
    mod.verify()
    mod.name = key
    mod.triple = llvm.get_process_triple()
    mod.data_layout = str(j["tm"].target_data)

    def notify(m, obj):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_bytes(obj)
            tmp.replace(path)
        except OSError:
            pass                         # a read-only home: the tier still works, without the cache

    def getbuffer(m):
        try:
            return path.read_bytes()
        except OSError:
            return None

    if not path.exists():
        pto = llvm.create_pipeline_tuning_options(speed_level=2)
        pb = llvm.create_pass_builder(j["tm"], pto)
        pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, j["tm"])
    engine.set_object_cache(notify, getbuffer)
    engine.finalize_object()
    code = list(df.code)
    for g in groups:
        fn = _CFUNC(engine.get_function_address(g.name))
        check = _CFUNC(engine.get_function_address(g.check_name)) if g.check_name else None
        first = dataclasses.replace(df.code[g.start][2], guard=None)    # the group evaluates its guards
        code[g.start] = (K_FUSED, _Runner(g, fn, check, df.code), first, g.end)
    fused = dataclasses.replace(df, code=code)
    fused._engine = engine
    return fused


_PAD = None           # index of "pad" in llvmgen.CTX (set on first use)


class _Runner:
    """Calls one group's native function over the active lanes; reruns it interpreted on a bail-out."""

    def __init__(self, group, fn, check, code):
        global _PAD
        from .llvmgen import SLOT
        _PAD = SLOT["pad"]
        self.g, self.fn, self.check, self.code = group, fn, check, code
        self.count = group.end - group.start
        self.table = np.zeros(max(len(group.regs), 1), np.uint64)

    def __call__(self, ex):
        g = self.g
        regs = ex.fr.regs
        table = self.table
        copies = []
        for k, name in enumerate(g.regs):
            if name[0] == "@":           # read across lanes: as it was before the group (a shuffle's source)
                arr = regs[name[1:]]
                if name[1:] in g.writes:
                    arr = arr.copy()
                    copies.append(arr)
                table[k] = arr.ctypes.data
            else:
                table[k] = regs[name].ctypes.data
        idx = ex.idx
        ctx = _context(ex, g.symbols)
        if ex.ridx is None:              # every lane, padding included (see llvmgen.CTX)
            count, lanes = ex.n, 0
            ctx[_PAD] = ex.n != idx.size
        else:
            count, lanes = idx.size, idx.ctypes.data
            ctx[_PAD] = 0
        args = (count, lanes, table.ctypes.data, ctx.ctypes.data)
        if self.check is not None and self.check(*args):
            return self._interpret(ex)
        saved = [(name, regs[name].copy()) for name in g.restore]
        if self.fn(*args):
            if self.check is not None:
                raise RuntimeError("compiled atomic group bailed out after its address check")
            for name, arr in saved:
                regs[name][:] = arr
            self._interpret(ex)

    def _interpret(self, ex):
        """The group's instructions in the interpreter, as run_function runs K_NORMAL entries."""
        for pc in range(self.g.start, self.g.end):
            _, fn, inst, _ = self.code[pc]
            gd = inst.guard
            if gd is None:
                fn(ex)
                continue
            pv = ex.fr.regs[gd[0]][ex.idx]
            if gd[1]:
                pv = ~pv
            if pv.all():
                fn(ex)
            elif pv.any():
                ex.run_on(ex.idx[pv], fn, ex)


def _context(ex, symbols):
    """The int64 ctx array of llvmgen.CTX for this batch (rebuilt when memory moved or changed)."""
    from . import llvmgen as lg
    mem = ex.mem
    c = getattr(ex, "_native_ctx", None)
    bounds = mem.bounds()
    if c is not None and c[1] is mem.data and c[2] is bounds:
        return c[0]
    ctx = np.zeros(len(lg.CTX), np.int64)
    keep = [mem.data, bounds]
    kp = np.frombuffer(ex.kparams, np.uint8) if ex.kparams else np.zeros(8, np.uint8)
    syms = np.array([ex.symbol_address(s) for s in symbols] or [0], np.uint64)
    keep += [kp, syms]
    b = ex.batch
    blk = b.first_block + np.arange(b.nblocks, dtype=np.int64)
    gx, gy, _ = b.grid
    cta = [np.ascontiguousarray(v, np.uint32) for v in (blk % gx, (blk // gx) % gy, blk // (gx * gy))]
    geo = [np.ascontiguousarray(a) for a in (ex.lane_block, ex.thread_linear, *ex._tid, ex.valid.view(np.uint8))]
    keep += cta + geo
    vals = dict(mem=mem.data.ctypes.data, kparams=kp.ctypes.data, shared=ex.shared.ctypes.data,
                shared_stride=ex.shared_stride, shared_size=ex.shared_size, local=ex.local.ctypes.data,
                local_stride=ex.local_stride, starts=bounds[0].ctypes.data, ends=bounds[1].ctypes.data,
                nbounds=bounds[0].size, lpb=ex.lanes_per_block, first_block=b.first_block,
                bx=b.block[0], by=b.block[1], bz=b.block[2], gx=b.grid[0], gy=b.grid[1], gz=b.grid[2],
                syms=syms.ctypes.data, lane_block=geo[0].ctypes.data, thread=geo[1].ctypes.data,
                tid_x=geo[2].ctypes.data, tid_y=geo[3].ctypes.data, tid_z=geo[4].ctypes.data,
                cta_x=cta[0].ctypes.data, cta_y=cta[1].ctypes.data, cta_z=cta[2].ctypes.data,
                valid=geo[5].ctypes.data, pad=0)
    for k, name in enumerate(lg.CTX):
        ctx[k] = np.int64(np.uint64(vals[name]).view(np.int64)) if vals[name] >= 1 << 63 else vals[name]
    ex._native_ctx = (ctx, mem.data, bounds, keep)
    return ctx
