"""PTX instructions as LLVM IR: one function per *group* of straight-line instructions, looping over lanes.

The compiled tier (``compiled.py``) keeps the interpreter's schedule: a group runs, for every active
lane in lane order, all of its instructions, which equals the interpreter's lock step because a
group never holds two memory instructions that could see each other's effects (see
``compiled.plan``). Values follow the interpreter's semantics exactly (``alu.py``, ``decode.py``,
``memops.py``); where an exact copy is awkward (a float64 NaN, an address that needs a message) the
generated code *bails out*: it returns 1 and the group runs again in the interpreter, which then
produces the very same result or error.

Each group function has the C signature
``int32 group(int64 count, int64 *lanes_or_null, void **register_arrays, int64 *ctx)``.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir

from ..ptx import ir as pir
from . import decode as dec
from .alu import PRMT_MODES as _PRMT_MODES      # the interpreter's table: one source of prmt's modes
from .dtypes import dtype, storage
from .memory import GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from .operands import imm_value

I1, I8, I16, I32, I64, I128 = (ir.IntType(b) for b in (1, 8, 16, 32, 64, 128))
F32, F64 = ir.FloatType(), ir.DoubleType()
INT = {8: I8, 16: I16, 32: I32, 64: I64}

# ctx: one int64 array the runner fills per batch (compiled.Runner): field -> slot
CTX = ("mem", "kparams", "shared", "shared_stride", "shared_size", "local", "local_stride", "starts", "ends",
       "nbounds", "lpb", "first_block", "bx", "by", "bz", "gx", "gy", "gz", "syms",
       "lane_block", "thread", "tid_x", "tid_y", "tid_z", "cta_x", "cta_y", "cta_z", "valid", "pad", "nkparams",
       "textures", "ntextures")
# lane_block (int64 per lane), thread (int64 per lane), tid_* (uint32 per lane): the batch geometry
# the interpreter has already (engine._geometry); cta_* (uint32 per block of the batch): blockIdx.
# pad: the loop runs over every lane of the batch, padding lanes of partial warps included, as the
# interpreter's register instructions do when no lane is masked off (``ex.ridx is None``); then
# instructions on ``ex.idx`` (memory, shuffles) skip lanes that are not ``valid``.
# textures, ntextures: the texture objects' table (texture_native.table) and its rows (0: none)
SLOT = {name: k for k, name in enumerate(CTX)}


class Skip(Exception):
    """The instruction is left to the interpreter (not compiled)."""


def kind_of(t):
    """('i', bits, signed) | ('f', bits) | ('p',) for a PTX type the tier handles."""
    if t == "pred":
        return ("p",)
    if t in ("f32", "f64"):
        return ("f", 32 if t == "f32" else 64)
    if t is None or t not in pir.TYPES or t in ("f16", "f16x2", "bf16", "bf16x2", "b128", "tf32", "e4m3", "e5m2"):
        raise Skip(f"type {t}")
    return ("i", dtype(t).itemsize * 8, t.startswith("s"))


def lty(t):
    k = kind_of(t)
    if k[0] == "p":
        return I1
    if k[0] == "f":
        return F32 if k[1] == 32 else F64
    return INT[k[1]]


class _LazyCtx(dict):
    """ctx fields loaded in the entry block on first use (most groups need a few of them)."""

    def __init__(self, gb):
        super().__init__()
        self.gb = gb

    def __missing__(self, name):
        gb = self.gb
        b = gb.b
        with b.goto_block(gb.entry):
            if gb.entry.is_terminated:
                b.position_before(gb.entry.terminator)
            v = self[name] = b.load(b.gep(gb.ctxp, [ir.Constant(I32, SLOT[name])]), name=name)
        return v


class GroupBuilder:
    """Emits one group function: the lane loop, register traffic, memory checks and bail-outs."""

    # pcs whose accesses need no check (regiongen: every lane's address was checked before the phase)
    prechecked: frozenset = frozenset()
    # may read the special function unit's tables lane by lane (ex2.approx: _ex2); regions with cuts do
    tables = False
    _pc = None                                  # the instruction being emitted (regions set it)

    def __init__(self, module, name, func, d, symbols, find_fn, regs=None, check_only=False, remat=None):
        self.func, self.d, self.symbols, self.find_fn = func, d, symbols, find_fn
        self.remat = remat or {}               # register -> its ld.param instruction (compiled.plan)
        self.regs: list = regs if regs is not None else []     # register names in pointer-table order
        self.reg_slot: dict = {r: k for k, r in enumerate(self.regs)}
        self.check_only = check_only           # atomics only check their address (compiled.py)
        self.bails = 0                         # bail-out branches emitted
        self.loaded: set = set()               # registers read from their arrays (live into the group)
        fnty = ir.FunctionType(I32, [I64, I64.as_pointer(), I8.as_pointer().as_pointer(), I64.as_pointer()])
        self.fn = ir.Function(module, fnty, name)
        self.count, self.lanes, self.regtab, self.ctxp = self.fn.args
        entry = self.fn.append_basic_block("entry")
        self.b = b = ir.IRBuilder(entry)
        self.ctx = _LazyCtx(self)
        self.bail_block = self.fn.append_basic_block("bail")
        ir.IRBuilder(self.bail_block).ret(ir.Constant(I32, 1))
        self.entry = entry
        self.loop = self.fn.append_basic_block("loop")
        b.branch(self.loop)
        b.position_at_end(self.loop)
        self.k = b.phi(I64, name="k")
        self.k.add_incoming(ir.Constant(I64, 0), entry)
        has_list = b.icmp_unsigned("!=", self.lanes, ir.Constant(I64.as_pointer(), None))
        listed_bb, body = self.fn.append_basic_block("listed"), self.fn.append_basic_block("body")
        b.cbranch(has_list, listed_bb, body)          # loop-invariant: LLVM unswitches it
        b.position_at_end(listed_bb)
        listed = b.load(b.gep(self.lanes, [self.k]))
        b.branch(body)
        b.position_at_end(body)
        self.lane = b.phi(I64, name="lane")
        self.lane.add_incoming(listed, listed_bb)
        self.lane.add_incoming(self.k, self.loop)
        self.body = body
        self.cur: dict = {}                    # register -> current storage value (SSA) in this lane
        self.written: set = set()
        self.ptrs: dict = {}
        self._lane_parts = None

    # ---------------------------------------------------------------- finishing
    def finish(self, live=None):
        """Close the lane loop, storing the registers written (those in ``live``, when given)."""
        b = self.b
        self.stored = [n for n in sorted(self.written) if (live is None or n in live) and n not in self.remat]
        for name in self.stored:
            self._store_reg(name, self.cur[name])
        nxt = b.add(self.k, ir.Constant(I64, 1))
        self.k.add_incoming(nxt, b.block)
        done = self.fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("<", nxt, self.count), self.loop, done)
        ir.IRBuilder(done).ret(ir.Constant(I32, 0))

    def bail_if(self, cond):
        self.bails += 1
        ok = self.fn.append_basic_block("ok")
        self.b.cbranch(cond, self.bail_block, ok)
        self.b.position_at_end(ok)

    # ---------------------------------------------------------------- registers
    def _slot(self, name):
        s = self.reg_slot.get(name)
        if s is None:
            s = self.reg_slot[name] = len(self.regs)
            self.regs.append(name)
        return s

    def _reg_ptr(self, name, key=None):
        """Pointer to register ``name``'s array, loaded once in the entry block from slot ``key``."""
        key = key or name
        p = self.ptrs.get(key)
        if p is None:
            b = self.b
            with b.goto_block(self.entry):
                b.position_before(self.entry.terminator)
                raw = b.load(b.gep(self.regtab, [ir.Constant(I32, self._slot(key))]))
                p = self.ptrs[key] = b.bitcast(raw, self._st_ty(name).as_pointer())
        return p

    def cross_ptr(self, name):
        """Pointer to register ``name``'s array for reads from other lanes (slot "@name": the runner
        passes a copy taken before the group when the group writes the register)."""
        return self._reg_ptr(name, "@" + name)

    def padded(self, name):
        """May ``cross_ptr(name)`` be read up to 31 elements beyond any lane's own, either way (a
        buffer with room on both sides: regiongen), so that a shuffle loads unconditionally?"""
        return False

    def _st_ty(self, name):
        st = storage(self.func.regs[name])
        return I8 if st == np.bool_ else INT[st.itemsize * 8]

    def _is_pred(self, name):
        return storage(self.func.regs[name]) == np.bool_

    def _load_reg(self, name):
        self.loaded.add(name)
        return self.b.load(self.b.gep(self._reg_ptr(name), [self.lane]))

    def _store_reg(self, name, v):
        self.b.store(v, self.b.gep(self._reg_ptr(name), [self.lane]))

    def reg_storage(self, name):
        """The register's storage value in this lane (i8 0/1 for predicates)."""
        if name not in self.func.regs:
            raise Skip(f"undeclared {name}")
        v = self.cur.get(name)
        if v is None and name in self.remat:      # a kernel parameter: read again, never stored
            _ld(self, self.remat[name])
            v = self.cur[name]
            self.written.discard(name)
        elif v is None:
            v = self.cur[name] = self._load_reg(name)
        return v

    def set_reg(self, name, v):
        self.cur[name] = v
        self.written.add(name)

    # ---------------------------------------------------------------- conversions (dtypes.convert_storage)
    def to_type(self, v, src_kind, t):
        """A storage value (unsigned bits, or i8 bool) viewed as PTX type ``t``, as operands.reader does."""
        b = self.b
        k = kind_of(t)
        if src_kind == "p":                              # bool storage
            bit = b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))
            if k[0] == "p":
                return bit
            iv = b.zext(bit, INT[k[1]])
            return b.bitcast(iv, lty(t)) if k[0] == "f" else iv
        if k[0] == "p":
            return b.icmp_unsigned("!=", v, ir.Constant(v.type, 0))
        width = k[1]
        have = v.type.width
        if have > width:
            v = b.trunc(v, INT[width])
        elif have < width:
            v = b.zext(v, INT[width])                    # unsigned storage zero-extends
        return b.bitcast(v, lty(t)) if k[0] == "f" else v

    def to_storage(self, v, t, name):
        """Value of PTX type ``t`` into register ``name``'s storage, as operands.writer does."""
        b = self.b
        k = kind_of(t)
        if self._is_pred(name):
            if k[0] == "p":
                return b.zext(v, I8)
            if k[0] == "f" and not isinstance(v.type, ir.IntType):
                v = b.bitcast(v, INT[k[1]])
            return b.zext(b.icmp_unsigned("!=", v, ir.Constant(v.type, 0)), I8)
        st = self._st_ty(name)
        if k[0] == "p":
            return b.zext(v, st)
        if k[0] == "f" and not isinstance(v.type, ir.IntType):     # float results may come as bits
            v = b.bitcast(v, INT[k[1]])
        if v.type.width < st.width:
            return b.sext(v, st) if k[0] == "i" and k[2] else b.zext(v, st)
        if v.type.width > st.width:
            return b.trunc(v, st)
        return v

    # ---------------------------------------------------------------- operands
    def read(self, op, t):
        kind = op[0]
        b = self.b
        if kind == "reg":
            name, neg = op[1], op[2]
            sv = self.reg_storage(name)
            pred = self._is_pred(name)
            if neg:
                st, dt = storage(self.func.regs[name]), dtype(t)
                if st != dt:
                    raise Skip("negated operand of another type")
                if pred:
                    return b.not_(self.to_type(sv, "p", "pred"))
                return b.not_(sv)
            return self.to_type(sv, "p" if pred else "u", t)
        if kind == "imm":
            v = imm_value(op, t)
            k = kind_of(t)
            if k[0] == "p":
                return ir.Constant(I1, int(bool(v)))
            raw = int(np.asarray(v).view(np.dtype(f"u{k[1] // 8}"))[()])
            c = ir.Constant(INT[k[1]], raw)
            return b.bitcast(c, lty(t)) if k[0] == "f" else c
        if kind == "sreg":
            return self.to_type(self.special(op[1], op[2]), "u", t)
        if kind == "sym" and op[1] == "WARP_SZ":
            return self.to_type(ir.Constant(I32, 32), "u", t)
        if kind == "sym":
            return self.to_type(self.symbol(op[1]), "u", t)
        raise Skip(f"operand {kind}")

    def write(self, op, t, v):
        if op[0] == "sym" and op[1] == "_":
            return
        if op[0] != "reg":
            raise Skip("write to a non-register")
        name = op[1]
        if name not in self.func.regs:
            raise Skip(f"undeclared {name}")
        self.set_reg(name, self.to_storage(v, t, name))

    def symbol(self, name):
        """A symbol's address, loaded once in the entry block (as kernel parameters are,
        ``_param_value``): read where an instruction names it, under a branch, the load stayed in the
        lane loop (a tree reduction's ``s[tid] = sum`` read the shared array's address per lane).
        The table holds every symbol of the list (compiled._context), so the load cannot fault."""
        if name not in self.symbols:
            self.symbols.append(name)
        k = self.symbols.index(name)
        cache = self.__dict__.setdefault("_symbol_values", {})
        v = cache.get(k)
        if v is None:
            table = self.ctx["syms"]            # (an entry-block load itself: asked before moving there)
            b = self.b
            with b.goto_block(self.entry):
                v = cache[k] = self._invariant(b.load(b.gep(b.inttoptr(table, I64.as_pointer()), [ir.Constant(I32, k)])))
        return v

    def _at(self, field, ty, k):
        """Element ``k`` of the ctx array ``field`` (see CTX)."""
        b = self.b
        return self._invariant(b.load(b.gep(b.inttoptr(self.ctx[field], ty.as_pointer()), [k])))

    def _invariant(self, load):
        """The ctx arrays (batch geometry, blockIdx, symbol addresses) never change while native code
        runs: LLVM may hoist their loads past stores to the kernel's memory."""
        load.set_metadata("invariant.load", self.fn.module.add_metadata([]))
        return load

    def _parts(self):
        """(block of the lane within the batch, thread index within the block) for this lane,
        loaded at the top of the lane loop's body on first use (so they dominate every use)."""
        if self._lane_parts is None:
            b = self.b
            self.ctx["lane_block"], self.ctx["thread"]          # their loads go to the entry block first
            with b.goto_block(self.body):
                b.position_after(self.lane)
                self._lane_parts = (self._at("lane_block", I64, self.lane), self._at("thread", I64, self.lane))
        return self._lane_parts

    def special(self, name, comp):
        """Special registers as uint32, as Exec.special computes them."""
        b = self.b
        blk, t = self._parts()
        axis = {"x": 0, "y": 1, "z": 2}.get(comp)
        c = self.ctx

        def u32(v):
            return b.trunc(v, I32)
        if name == "tid":
            return self._at(("tid_x", "tid_y", "tid_z")[axis], I32, self.lane)
        if name == "ntid":
            return u32((c["bx"], c["by"], c["bz"])[axis])
        if name == "nctaid":
            return u32((c["gx"], c["gy"], c["gz"])[axis])
        if name == "ctaid":
            return self._at(("cta_x", "cta_y", "cta_z")[axis], I32, blk)
        if name == "laneid":
            return u32(b.and_(t, ir.Constant(I64, 31)))
        if name == "warpid":
            return u32(b.lshr(t, ir.Constant(I64, 5)))
        if name == "nwarpid":
            return u32(b.lshr(c["lpb"], ir.Constant(I64, 5)))
        if name.startswith("lanemask_"):
            # CUB's warp-wide match (8 ballots, then the lanes below this one) reads %lanemask_le
            # once per key: interpreted, it split the ranking code into one region per key
            eq = b.shl(ir.Constant(I32, 1), u32(b.and_(t, ir.Constant(I64, 31))))
            one = ir.Constant(I32, 1)
            le = b.sub(b.shl(eq, one), one)         # lane 31: 1 << 32 wraps to 0, 0 - 1 is every bit
            masks = {"eq": eq, "lt": b.sub(eq, one), "le": le, "gt": b.not_(le), "ge": b.not_(b.sub(eq, one))}
            if name[9:] in masks:
                return masks[name[9:]]
        raise Skip(f"special register %{name}")

    # ---------------------------------------------------------------- memory
    def address(self, op):
        """The uint64 address of a ``[base+offset]`` operand."""
        base, off = op[1], op[2] & 0xFFFF_FFFF_FFFF_FFFF
        b = self.b
        offc = ir.Constant(I64, off)
        if base is None:
            return offc
        if base[0] == "reg":
            name = base[1]
            if name not in self.func.regs or self._is_pred(name):
                raise Skip("address register")
            v = self.reg_storage(name)
            if v.type.width < 64:       # 32-bit address arithmetic wraps (operands.address_reader)
                return b.zext(b.add(v, ir.Constant(v.type, off & ((1 << v.type.width) - 1))), I64)
            return b.add(v, offc)
        if base[0] == "sym":
            return b.add(self.symbol(base[1]), offc)
        raise Skip("address form")

    def pointer(self, space, addr, size):
        """An i8* to ``size`` bytes at ``addr`` of ``space``; bails out where memops would fault
        (or where an address needs the interpreter: another window, a cluster's shared memory)."""
        b = self.b
        if size & (size - 1) or size > 64:
            raise Skip("access size")
        if space in ("global", "const"):
            return self._global(addr, size)
        if space == "shared":
            return self._shared(addr, size)
        if space == "local":
            return self._local(addr, size)
        if space != "generic":
            raise Skip(f"space {space}")
        # generic: pick the space by window, as memops.resolve does
        def window(base):
            return b.icmp_unsigned("<", b.sub(addr, ir.Constant(I64, base)), ir.Constant(I64, WINDOW_SIZE))
        in_sh, in_lo, in_pa = window(SHARED_WINDOW), window(LOCAL_WINDOW), window(PARAM_WINDOW)
        self.bail_if(in_pa)
        start = b.block
        sh_bb, lo_bb, gl_bb, join = (self.fn.append_basic_block(n) for n in ("g_sh", "g_lo", "g_gl", "g_join"))
        pick = self.fn.append_basic_block("g_pick")
        b.cbranch(in_sh, sh_bb, pick)
        b.position_at_end(pick)
        b.cbranch(in_lo, lo_bb, gl_bb)
        results = []
        for bb, fn, base in ((sh_bb, self._shared, SHARED_WINDOW), (lo_bb, self._local, LOCAL_WINDOW),
                             (gl_bb, self._global, 0)):
            b.position_at_end(bb)
            p = fn(b.sub(addr, ir.Constant(I64, base)) if base else addr, size)
            results.append((p, b.block))
            b.branch(join)
        del start
        b.position_at_end(join)
        phi = b.phi(I8.as_pointer())
        for p, bb in results:
            phi.add_incoming(p, bb)
        return phi

    def _misaligned(self, addr, size):
        if size > 1:
            self.bail_if(self.b.icmp_unsigned("!=", self.b.and_(addr, ir.Constant(I64, size - 1)), ir.Constant(I64, 0)))

    def _global(self, addr, size):
        b = self.b
        if self._pc not in self.prechecked:
            self._global_check(addr, size)
        off = b.sub(addr, ir.Constant(I64, GLOBAL_BASE))
        return b.gep(b.inttoptr(self.ctx["mem"], I8.as_pointer()), [off])

    def _global_check(self, addr, size):
        b = self.b
        # each access keeps the allocation it last hit: one search per lane run, not per lane
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            lo, hi = b.alloca(I64), b.alloca(I64)
            b.store(ir.Constant(I64, 0), lo)
            b.store(ir.Constant(I64, 0), hi)
        end = b.add(addr, ir.Constant(I64, size))
        inside = b.and_(b.icmp_unsigned(">=", addr, b.load(lo)), b.icmp_unsigned("<=", end, b.load(hi)))
        slow = self.fn.append_basic_block("find")
        fine = self.fn.append_basic_block("found")
        b.cbranch(inside, fine, slow)
        b.position_at_end(slow)
        ok = b.call(self.find_fn, [addr, end, self.ctxp, lo, hi])
        self.bails += 1
        b.cbranch(ok, fine, self.bail_block)
        b.position_at_end(fine)
        self._misaligned(addr, size)

    def _shared(self, addr, size):
        b = self.b
        if self._pc not in self.prechecked:
            self.bail_if(b.not_(self.shared_fits(addr, size)))
            self._misaligned(addr, size)
        blk, _ = self._parts()
        row = b.add(b.mul(blk, self.ctx["shared_stride"]), addr)
        return b.gep(b.inttoptr(self.ctx["shared"], I8.as_pointer()), [row])

    def shared_fits(self, addr, size):
        """i1: ``size`` bytes at shared address ``addr`` lie inside the block's shared memory."""
        b = self.b
        limit = self.ctx["shared_size"]
        small = b.icmp_unsigned("<", limit, ir.Constant(I64, size))
        return b.not_(b.or_(small, b.icmp_unsigned(">", addr, b.sub(limit, ir.Constant(I64, size)))))

    def _local(self, addr, size):
        b = self.b
        limit = self.ctx["local_stride"]
        self.bail_if(b.icmp_unsigned(">", b.add(addr, ir.Constant(I64, size)), limit))
        self._misaligned(addr, size)
        row = b.add(b.mul(self.lane, limit), addr)
        return b.gep(b.inttoptr(self.ctx["local"], I8.as_pointer()), [row])

    def load(self, ptr, t, k=0, invariant=False):
        """``invariant``: memory no instruction writes (kernel parameters), so LLVM may hoist the
        load out of the lane loop."""
        b = self.b
        p = b.gep(ptr, [ir.Constant(I64, k)]) if k else ptr
        v = b.load(b.bitcast(p, lty(t).as_pointer()), align=1)
        return self._invariant(v) if invariant else v

    def store(self, ptr, t, v, k=0):
        b = self.b
        p = b.gep(ptr, [ir.Constant(I64, k)]) if k else ptr
        b.store(v, b.bitcast(p, v.type.as_pointer()), align=1)      # v: a value of type t, or its bits

    # ---------------------------------------------------------------- one instruction
    def emit(self, inst):
        gen = GENERATORS.get(inst.opcode)
        if gen is None:
            raise Skip(inst.opcode)
        on_idx = _on_active_lanes(inst)
        if inst.guard is None and not on_idx:
            gen(self, inst)
            return
        b = self.b
        pv = ir.Constant(I1, 1)
        g = inst.guard
        if g is not None:
            if g[0] not in self.func.regs:
                raise Skip("guard")
            pv = self.to_type(self.reg_storage(g[0]), "p", "pred")
            if g[1]:
                pv = b.not_(pv)
        if on_idx:
            pad = b.icmp_unsigned("!=", self.ctx["pad"], ir.Constant(I64, 0))
            valid = b.icmp_unsigned("!=", self._at("valid", I8, self.lane), ir.Constant(I8, 0))
            pv = b.and_(pv, b.or_(b.not_(pad), valid))
        before = dict(self.cur)
        pre = b.block
        with b.if_then(pv):
            gen(self, inst)
            then_end = b.block
        changed = [n for n, v in self.cur.items() if before.get(n) is not v]
        for n in [n for n in changed if n in self.remat]:
            del self.cur[n]                # read again after the guard (it was loaded only under it)
        changed = [n for n in changed if n not in self.remat]
        for n in changed:
            old = before.get(n)
            if old is None:            # first touched under the guard: its old value comes from the array
                ptr = self._reg_ptr(n)     # (placed in the entry block first: goto_block restores to a block's end)
                with b.goto_block(pre):
                    b.position_before(pre.terminator)
                    self.loaded.add(n)
                    old = b.load(b.gep(ptr, [self.lane]))
            phi = b.phi(self.cur[n].type)
            phi.add_incoming(self.cur[n], then_end)
            phi.add_incoming(old, pre)
            self.cur[n] = phi


def _on_active_lanes(inst):
    """Instructions the interpreter runs on ``ex.idx`` (never on padding lanes): memory and shuffles.
    Register instructions and kernel-parameter loads run on ``ex.ridx`` (every lane when none is off)."""
    if inst.opcode in ("ld", "ldu"):
        base = inst.operands[1][1] if inst.operands[1][0] == "mem" else None
        return _space(inst) != "param" or bool(base and base[0] == "reg")    # through its address: sm90
    return inst.opcode in ("st", "atom", "red", "shfl", "suld", "sust", "txq", "suq", "tld4")


# ------------------------------------------------------------------ float helpers

def intrinsic(g, name, ty, nargs):
    """The LLVM intrinsic ``name`` over ``nargs`` operands of float type ``ty`` (declared once)."""
    full = f"{name}.{'f32' if ty == F32 else 'f64'}"
    m = g.fn.module
    try:
        return m.get_global(full)
    except KeyError:
        return ir.Function(m, ir.FunctionType(ty, [ty] * nargs), full)


def canon_nan(g, r, srcs=()):
    """alu.gpu_nan for float32: any NaN becomes 0x7FFFFFFF; float64 NaNs bail out (their payload
    rules are the interpreter's), except where ``srcs`` (the two operands of an add, sub, mul or
    div) decide it: the first NaN of them passes through quieted (decode._one_nan; interval
    arithmetic's empty intervals); a NaN made from numbers (inf - inf) still bails out.
    Returns the result's *bits*: LLVM treats NaN payloads as unspecified and folds away a float
    select between two NaNs, so the choice is made on integers."""
    b = g.b
    ity = I32 if r.type == F32 else I64
    bits = b.bitcast(r, ity)
    top = (1 << (ity.width - 1)) - 1
    exp = 0x7F800000 if ity == I32 else 0x7FF0000000000000
    is_nan = lambda v: b.icmp_unsigned(">", b.and_(v, ir.Constant(ity, top)), ir.Constant(ity, exp))  # noqa: E731
    if r.type == F32:       # (the test on the float: no trip through an integer register on a chain)
        return b.select(b.fcmp_unordered("uno", r, r), ir.Constant(I32, 0x7FFFFFFF), bits)
    nan = is_nan(bits)
    if not srcs:
        g.bail_if(nan)
        return bits
    xb, yb = (b.bitcast(v, I64) for v in srcs)
    xn, yn = is_nan(xb), is_nan(yb)
    g.bail_if(b.and_(nan, b.not_(b.or_(xn, yn))))
    quiet = b.or_(b.select(xn, xb, yb), ir.Constant(I64, 0x0008000000000000))
    return b.select(nan, quiet, bits)


def canon_bits(g, bits):
    """canon_nan for a result already held as integer bits."""
    b = g.b
    ity = bits.type
    top = (1 << (ity.width - 1)) - 1
    exp = 0x7F800000 if ity == I32 else 0x7FF0000000000000
    nan = b.icmp_unsigned(">", b.and_(bits, ir.Constant(ity, top)), ir.Constant(ity, exp))
    if ity == I32:
        return b.select(nan, ir.Constant(I32, 0x7FFFFFFF), bits)
    g.bail_if(nan)
    return bits


def flush(g, x):
    """dtypes.flush_subnormal: |x| < smallest normal becomes a zero of x's sign."""
    b = g.b
    tiny = np.finfo(np.float32 if x.type == F32 else np.float64).tiny
    ax = b.call(intrinsic(g, "llvm.fabs", x.type, 1), [x])
    small = b.fcmp_ordered("<", ax, ir.Constant(x.type, float(tiny)))
    zero = b.call(intrinsic(g, "llvm.copysign", x.type, 2), [ir.Constant(x.type, 0.0), x])
    return b.select(small, zero, x)


def _plain_float(inst, extra=()):
    """Only round-to-nearest without .sat, .ftz only on f32 (``ftz_of``; directed rounding of
    add, sub, mul and div: ``_directed_mode``)."""
    allowed = {inst.type, "rn", *extra, *(("ftz",) if inst.type == "f32" else ())}
    if set(inst.mods) - allowed:
        raise Skip("float modifiers")


def ftz_of(inst):
    """Whether an f32 op flushes (.ftz): nvcc --use_fast_math writes it on every float32 add, mul and
    fma, so a kernel built that way would otherwise leave native code at each of them."""
    return "ftz" in inst.mods and inst.type == "f32"


def flushed(g, inst, values):
    """decode._ftz's inputs: with .ftz, subnormal sources become zeros of their sign."""
    return [_flush_rarely(g, v) for v in values] if ftz_of(inst) else list(values)


def flush_result(g, inst, r):
    """decode._ftz's result: a subnormal becomes a zero of its sign. A result of exactly the smallest
    normal may have rounded up from a value .ftz flushes too (alu.below_tiny): such lanes, rare,
    bail out to the interpreter, which decides them exactly."""
    return _flush_rarely(g, r, tiny_bails=True) if ftz_of(inst) else r


def _flush_rarely(g, x, tiny_bails=False):
    """flush() as a branch, not a select: a chain of fma.ftz (a dot product's accumulator) then waits
    for each fma alone, the rare flush predicted not taken (a select kept .ftz kernels 2.5 times
    slower than plain ones; the branch, 1.5)."""
    b = g.b
    tiny = ir.Constant(F32, float(np.finfo(np.float32).tiny))
    ax = b.call(intrinsic(g, "llvm.fabs", F32, 1), [x])
    here, small, done = b.block, g.fn.append_basic_block("ftz_small"), g.fn.append_basic_block("ftz_done")
    b.cbranch(b.fcmp_ordered("<=" if tiny_bails else "<", ax, tiny), small, done)
    b.position_at_end(small)
    if tiny_bails:
        g.bail_if(b.fcmp_ordered("==", ax, tiny))
    zero = b.call(intrinsic(g, "llvm.copysign", F32, 2), [ir.Constant(F32, 0.0), x])
    came = b.block
    b.branch(done)
    b.position_at_end(done)
    out = b.phi(F32)
    out.add_incoming(x, here)
    out.add_incoming(zero, came)
    return out


def _directed_mode(inst):
    """rz/rm/rp of an f32/f64 add, sub, mul or div (``directed`` rounds it), None for the others;
    a directed mode with .ftz or .sat stays interpreted."""
    mode = next((m for m in inst.mods if m in ("rz", "rm", "rp")), None)
    if mode is not None and set(inst.mods) - {inst.type, mode}:
        raise Skip("directed rounding with .ftz/.sat")
    return mode


_TINY_F64 = 2.0 ** -960     # float64 products and quotients above this leave an exact fma remainder


def directed(g, op, mode, r, x, y, operands=None, addend=None):
    """alu.directed in native code, to the interpreter's bits: the round-to-nearest result ``r`` of
    ``x op y`` (sub: ``y`` already negated, as op "add"; ``operands``: the instruction's own, whose
    NaN a NaN result is) stepped one ulp toward ``mode``'s side when
    the exact error (exact - r) lies that way. The error comes from the interpreter's own float64
    formulas (alu._err_add, _err_mul, _err_div), except float64 products and quotients, whose exact
    error is an fma remainder here (the interpreter scales by frexp; both are exact, so the signs
    agree) and which bail out where that remainder could underflow. As alu.error_sign: an overflow
    to infinity counts as too far out; an infinity or a zero quotient from an infinite operand (or
    a division by zero) is exact; a NaN is canon_nan's. Op "fma" (float32 only): ``x * y + addend``,
    its error as alu._err_fma's. Returns the result's bits."""
    b = g.b
    wide = r.type == F64
    ity = I64 if wide else I32
    fabs = intrinsic(g, "llvm.fabs", F64, 1)
    inf = ir.Constant(F64, float("inf"))
    zero = ir.Constant(F64, 0.0)
    x64, y64, r64 = (v if wide else b.fpext(v, F64) for v in (x, y, r))
    finite = lambda v: b.fcmp_ordered("<", b.call(fabs, [v]), inf)      # noqa: E731
    args_finite = b.and_(finite(x64), finite(y64))
    if op == "div":
        args_finite = b.and_(args_finite, b.fcmp_ordered("!=", y64, zero))
    if op == "fma":
        if wide:
            raise Skip("directed fma.f64 (alu.fma_f64 rounds it by itself)")
        z64 = b.fpext(addend, F64)
        args_finite = b.and_(args_finite, finite(z64))
    r_finite, r_nan = finite(r64), b.fcmp_unordered("uno", r64, r64)
    bad = ir.Constant(I1, 0)                        # where this error formula is not exact
    if op == "add":                                 # two_sum(x, y): s + e == x + y exactly
        s = b.fadd(x64, y64)
        bb = b.fsub(s, x64)
        e = b.fadd(b.fsub(x64, b.fsub(s, bb)), b.fsub(y64, bb))
        err = b.fadd(b.fsub(s, r64), e)
    elif op == "fma":                               # the product exact in float64, then two_sum with the addend
        p = b.fmul(x64, y64)
        s = b.fadd(p, z64)
        bb = b.fsub(s, p)
        e = b.fadd(b.fsub(p, b.fsub(s, bb)), b.fsub(z64, bb))
        err = b.fadd(b.fsub(s, r64), e)
    elif op == "mul" and not wide:                  # a float32 product is exact in float64
        err = b.fsub(b.fmul(x64, y64), r64)
    elif op == "mul":
        fma = intrinsic(g, "llvm.fma", F64, 3)
        err = b.call(fma, [x64, y64, b.fneg(r64)])
        either_zero = b.or_(b.fcmp_ordered("==", x64, zero), b.fcmp_ordered("==", y64, zero))
        tiny = b.fcmp_ordered("<", b.call(fabs, [r64]), ir.Constant(F64, _TINY_F64))
        bad = b.and_(tiny, b.not_(either_zero))
    elif op == "div":
        sign_y = b.select(b.fcmp_ordered("<", y64, zero), ir.Constant(F64, -1.0), ir.Constant(F64, 1.0))
        if wide:
            fma = intrinsic(g, "llvm.fma", F64, 3)
            rem = b.call(fma, [b.fneg(r64), y64, x64])
            ax = b.call(fabs, [x64])
            x_zero = b.fcmp_ordered("==", x64, zero)
            scaled = b.fcmp_ordered(">=", ax, ir.Constant(F64, _TINY_F64))
            bad = b.not_(b.or_(x_zero, b.and_(scaled, b.fcmp_ordered(
                ">=", b.call(fabs, [r64]), ir.Constant(F64, _TINY_F64)))))
        else:                                       # r * y is exact in float64
            rem = b.fsub(x64, b.fmul(r64, y64))
        err = b.fmul(rem, sign_y)
    else:
        raise Skip(f"directed {op}")
    ordinary = b.and_(r_finite, args_finite)
    g.bail_if(b.and_(ordinary, bad))
    overflow = b.and_(b.not_(b.or_(r_finite, r_nan)), args_finite)
    err = b.select(ordinary, err, b.select(overflow, b.fneg(r64), ir.Constant(F64, float("nan"))))
    bits = b.bitcast(r, ity)
    one = ir.Constant(ity, 1)
    sign_bit = ir.Constant(ity, 1 << (ity.width - 1))
    negative = b.icmp_unsigned("!=", b.and_(bits, sign_bit), ir.Constant(ity, 0))
    is_zero = b.fcmp_ordered("==", r64, zero)
    below, above = b.fcmp_ordered("<", err, zero), b.fcmp_ordered(">", err, zero)
    up, down = b.add(bits, one), b.sub(bits, one)
    if mode == "rp":          # np.nextafter(r, inf): from a zero the smallest subnormal
        move = above
        step = b.select(is_zero, one, b.select(negative, down, up))
    elif mode == "rm":
        move = below
        step = b.select(is_zero, b.or_(sign_bit, one), b.select(negative, up, down))
    else:                     # rz: np.nextafter(r, 0) shrinks the magnitude; from a zero it is +0
        move = b.select(negative, above, below)
        step = b.select(is_zero, ir.Constant(ity, 0), down)
    out = b.select(move, step, bits)
    if mode == "rm" and op in ("add", "fma"):
        # IEEE 754 6.3 (alu.directed): an exact zero sum is -0 when rounding down, unless both addends are +0
        if op == "fma":                             # (the interpreter's addends: the float32 product, the addend)
            x, y = b.fmul(x, y), addend
        both_plus = b.and_(b.icmp_unsigned("==", b.bitcast(x, ity), ir.Constant(ity, 0)),
                           b.icmp_unsigned("==", b.bitcast(y, ity), ir.Constant(ity, 0)))
        exact_zero = b.and_(b.and_(b.fcmp_ordered("==", b.bitcast(out, r.type), ir.Constant(r.type, 0.0)),
                                   b.fcmp_ordered("==", err, zero)), b.not_(both_plus))
        out = b.select(exact_zero, sign_bit, out)
    return b.select(r_nan, canon_nan(g, r, () if op == "fma" else operands or (x, y)), out)


GENERATORS: dict = {}


def gen(*names):
    def deco(fn):
        for n in names:
            GENERATORS[n] = fn
        return fn
    return deco


def _srcs(g, inst, types):
    return [g.read(o, t) for o, t in zip(inst.operands[1:], types)]


@gen("mov")
def _mov(g, inst):
    dst, src = inst.operands
    t = inst.type
    if src[0] == "vec" or dst[0] == "vec":
        if t not in ("b64", "b32", "u64", "u32", "s64", "s32"):
            raise Skip("mov vector type")
        pt = dec._part_type(t, len(src[1] if src[0] == "vec" else dst[1]))
        width = dtype(pt).itemsize * 8
        b = g.b
        whole = INT[dtype(t).itemsize * 8]
        if src[0] == "vec":
            acc = ir.Constant(whole, 0)
            for k, o in enumerate(src[1]):
                acc = b.or_(acc, b.shl(b.zext(g.read(o, pt), whole), ir.Constant(whole, k * width)))
            g.write(dst, t, acc)
        else:
            v = g.read(src, t)
            for k, o in enumerate(dst[1]):
                g.write(o, pt, b.trunc(b.lshr(v, ir.Constant(whole, k * width)), INT[width]))
        return
    kind_of(t)
    g.write(dst, t, g.read(src, t))


@gen("cvta")
def _cvta(g, inst):
    space = next(m for m in inst.mods if m in ("global", "shared", "local", "const", "param"))
    base = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW}.get(space, 0)
    t = inst.type
    if space == "param":
        raise Skip("cvta.param")
    v = g.read(inst.operands[1], t)
    if base:
        b = g.b
        w = b.zext(v, I64) if v.type.width < 64 else v
        if "to" in inst.mods:
            g.write(inst.operands[0], t, b.trunc(b.sub(w, ir.Constant(I64, base)), v.type) if v.type.width < 64
                    else b.sub(w, ir.Constant(I64, base)))
        else:
            g.write(inst.operands[0], "u64", b.add(w, ir.Constant(I64, base)))
        return
    g.write(inst.operands[0], t, v)


def _int_binop(g, inst, fn):
    t = inst.type
    a, c = _srcs(g, inst, (t, t))
    g.write(inst.operands[0], t, fn(a, c))


@gen("add", "sub")
def _addsub(g, inst):
    t = inst.type
    k = kind_of(t)
    b = g.b
    if k[0] == "i":
        if set(inst.mods) - {t}:
            raise Skip("add modifiers")
        _int_binop(g, inst, b.add if inst.opcode == "add" else b.sub)
        return
    if k[0] != "f":
        raise Skip("add type")
    mode = _directed_mode(inst)
    if mode is not None:
        x, y = _srcs(g, inst, (t, t))
        r = b.fadd(x, y) if inst.opcode == "add" else b.fsub(x, y)
        g.write(inst.operands[0], t, directed(g, "add", mode, r, x, y if inst.opcode == "add" else b.fneg(y), (x, y)))
        return
    _plain_float(inst)
    hit = dec._contraction(inst, g.d)
    if hit is not None:                   # ptxas's mul+add contraction (decode._contracted)
        mul, j = hit
        x, y, c = flushed(g, inst, [*(g.read(o, t) for o in mul.operands[1:3]), g.read(inst.operands[3 - j], t)])
        if inst.opcode == "sub" and j == 1:
            c = b.fneg(c)
        if inst.opcode == "sub" and j == 2:
            x = b.fneg(x)
        r = b.call(intrinsic(g, "llvm.fma", x.type, 3), [x, y, c])
    else:
        x, y = flushed(g, inst, _srcs(g, inst, (t, t)))
        r = flush_result(g, inst, b.fadd(x, y) if inst.opcode == "add" else b.fsub(x, y))
        g.write(inst.operands[0], t, canon_nan(g, r, (y, x) if dec.nan_second(inst, g.d) else (x, y)))
        return
    g.write(inst.operands[0], t, canon_nan(g, flush_result(g, inst, r)))


@gen("mul")
def _mul(g, inst):
    t = inst.type
    k = kind_of(t)
    b = g.b
    if k[0] == "f":
        mode = _directed_mode(inst)
        if mode is None:
            _plain_float(inst)
        x, y = flushed(g, inst, _srcs(g, inst, (t, t)))
        r = flush_result(g, inst, b.fmul(x, y))
        srcs = (y, x) if dec.nan_second(inst, g.d) else (x, y)
        g.write(inst.operands[0], t, canon_nan(g, r, srcs) if mode is None else directed(g, "mul", mode, r, x, y))
        return
    if k[0] != "i":
        raise Skip("mul type")
    x, y = _srcs(g, inst, (t, t))
    g.write(*_int_mul(g, inst, x, y))


def _int_mul(g, inst, x, y):
    """(dst, type, value) of mul.lo / mul.wide / mul.hi."""
    t = inst.type
    b = g.b
    bits, signed = kind_of(t)[1], kind_of(t)[2]
    ext = b.sext if signed else b.zext
    if "wide" in inst.mods:
        if bits not in (16, 32):
            raise Skip("mul.wide type")
        wide = ("s" if signed else "u") + str(2 * bits)
        return inst.operands[0], wide, b.mul(ext(x, INT[2 * bits]), ext(y, INT[2 * bits]))
    if "hi" in inst.mods:
        big = I128 if bits == 64 else I64
        p = b.mul(ext(x, big), ext(y, big))
        return inst.operands[0], t, b.trunc(b.lshr(p, ir.Constant(big, bits)), INT[bits])
    return inst.operands[0], t, b.mul(x, y)


@gen("mad", "fma")
def _mad(g, inst):
    t = inst.type
    k = kind_of(t)
    b = g.b
    if k[0] == "f":
        mode = _directed_mode(inst)
        if mode is not None:            # fma.rm.f32: libdevice's expf takes floor(x) this way
            x, y, c = _srcs(g, inst, (t, t, t))
            r = b.call(intrinsic(g, "llvm.fma", x.type, 3), [x, y, c])
            g.write(inst.operands[0], t, directed(g, "fma", mode, r, x, y, addend=c))
            return
        _plain_float(inst)
        x, y, c = flushed(g, inst, _srcs(g, inst, (t, t, t)))
        r = b.call(intrinsic(g, "llvm.fma", x.type, 3), [x, y, c])
        g.write(inst.operands[0], t, canon_nan(g, flush_result(g, inst, r)))
        return
    if k[0] != "i" or set(inst.mods) - {t, "lo", "hi", "wide"}:
        raise Skip("mad form")
    x, y = _srcs(g, inst, (t, t))
    dst, wt, p = _int_mul(g, inst, x, y)
    c = g.read(inst.operands[3], wt)
    g.write(dst, wt, b.add(p, c))


def _div_int(g, inst, rem):
    t = inst.type
    b = g.b
    bits, signed = kind_of(t)[1], kind_of(t)[2]
    x, y = _srcs(g, inst, (t, t))
    ty = INT[bits]
    zero = b.icmp_unsigned("==", y, ir.Constant(ty, 0))
    ys = b.select(zero, ir.Constant(ty, 1), y)
    if not signed:
        r = b.urem(x, ys) if rem else b.udiv(x, ys)
        return b.select(zero, ir.Constant(ty, -1), r)
    # alu.idiv/irem: magnitudes divided unsigned, sign applied after (no INT_MIN / -1 trap)
    def mag(v):
        neg = b.icmp_signed("<", v, ir.Constant(ty, 0))
        return b.select(neg, b.neg(v), v), neg
    ax, nx = mag(x)
    ay, ny = mag(ys)
    if rem:
        r = b.urem(ax, ay)
        r = b.select(nx, b.neg(r), r)
    else:
        q = b.udiv(ax, ay)
        r = b.select(b.xor(nx, ny), b.neg(q), q)
    return b.select(zero, ir.Constant(ty, -1), r)


@gen("div")
def _div(g, inst):
    t = inst.type
    k = kind_of(t)
    b = g.b
    if k[0] == "i":
        g.write(inst.operands[0], t, _div_int(g, inst, rem=False))
        return
    if k[0] != "f":
        raise Skip("div type")
    x, y = _srcs(g, inst, (t, t))
    if "approx" in inst.mods:
        raise Skip("div.approx (the special function unit's reciprocal, from mufu.py's tables: see _approx)")
    if "full" in inst.mods:
        raise Skip("div.full (a times the special function unit's 1/b, mufu.py's table: decode._div_full_f32)")
    mode = _directed_mode(inst)
    if mode is None:
        _plain_float(inst)
    r = b.fdiv(x, y)
    g.write(inst.operands[0], t, canon_nan(g, r, (x, y)) if mode is None else directed(g, "div", mode, r, x, y))


@gen("rem")
def _rem(g, inst):
    if kind_of(inst.type)[0] != "i":
        raise Skip("rem type")
    g.write(inst.operands[0], inst.type, _div_int(g, inst, rem=True))


@gen("sqrt", "rsqrt", "rcp")
def _sqrt(g, inst):
    """sqrt.rn and rcp.rn.f32, correctly rounded. The .approx forms (sqrt too) stay interpreted: the
    special function unit's bits come from mufu.py's tables (see _approx)."""
    t = inst.type
    b = g.b
    if t != "f32":
        raise Skip("sqrt type")
    if "approx" in inst.mods:
        if inst.opcode == "rsqrt" and g.tables:
            _rsqrt_table(g, inst)
            return
        if inst.opcode == "rcp" and g.tables and "ftz" in inst.mods:
            _rcp_table(g, inst)
            return
        raise Skip(f"{inst.opcode}.approx (the special function unit's bits, mufu.py's tables: see _approx)"
                   if inst.opcode != "rsqrt" else
                   "rsqrt.approx outside a region with cuts (the special function unit's table: see _approx)")
    x = g.read(inst.operands[1], t)
    _plain_float(inst)
    if inst.opcode == "rsqrt":
        raise Skip("rsqrt.rn")
    r = b.call(intrinsic(g, "llvm.sqrt", F32, 1), [x]) if inst.opcode == "sqrt" \
        else b.fdiv(ir.Constant(F32, 1.0), x)
    g.write(inst.operands[0], t, canon_nan(g, r))


@gen("sin", "cos", "lg2")
def _approx(g, inst):
    """sin, cos and lg2.approx.f32 stay interpreted (decode._approx), as ex2, rcp, rsqrt, sqrt and
    div.approx.f32 do: their H100 bits come from 32 and 64 MiB tables (emulator/mufu.py; sin and cos
    from a quarter turn's), and a lane-by-lane lookup misses the cache each time where numpy's gather
    over the batch overlaps the misses. Measured here with the others compiled (the tables read through
    symbols): BlackScholesGPU over 4,000,000 options took 5.6 to 6.3 s of CPU a launch, against 2.8 to
    3.1 s with them interpreted. (sin and cos were compiled as the exact function rounded, up to 2^-22
    from the GPU's; curand_normal's Box-Muller now leaves native code there, for the GPU's bits. A
    Box-Muller loop of 8 __sincosf over 16,384 threads went from 0.02 to 0.03 s of CPU a launch.)"""
    raise Skip(f"{inst.opcode}.approx (the special function unit's bits, mufu.py's tables)")


@gen("ex2")
def _ex2(g, inst):
    """ex2.approx.ftz.f32, mufu.ex2_ftz in integers on the H100's measured table (its address is the symbol
    ``mufu ex2``: compiled._symbol_address). Only where ``g.tables`` is set: a region with cuts, whose
    barrier loop would otherwise leave native code at every turn for this one instruction (libdevice's
    expf ends with it). Elsewhere it stays interpreted (_approx: a lane-by-lane lookup in the 32 MiB
    table misses the cache where numpy's gather over the batch overlaps the misses)."""
    if not g.tables:
        raise Skip("ex2.approx outside a region with cuts (the special function unit's table: see _approx)")
    if inst.type != "f32" or set(inst.mods) != {"f32", "approx", "ftz"}:
        raise Skip("ex2 form (only .approx.ftz.f32 reads the table natively)")
    b = g.b
    c = lambda v: ir.Constant(I64, v)                                   # noqa: E731
    lt = lambda u, v: b.icmp_signed("<", u, v)                          # noqa: E731
    clip = lambda v, lo, hi: _clip(b, v, lo, hi)                        # noqa: E731
    scaled = lambda t, n: _scaled(b, t, n)                              # noqa: E731
    table = b.inttoptr(g.symbol("mufu ex2"), I32.as_pointer())
    entry = lambda k: b.zext(b.load(b.gep(table, [k])), I64)            # noqa: E731  (2^(1 + k 2^-23))
    bits = b.zext(b.bitcast(g.read(inst.operands[1], "f32"), I32), I64)
    negative = b.icmp_unsigned("!=", b.lshr(bits, c(31)), c(0))
    e = b.and_(b.lshr(bits, c(23)), c(255))
    shift = b.sub(e, c(127))
    mant = b.or_(b.and_(bits, c(_FRACTION)), c(1 << 23))
    q = b.select(lt(shift, c(0)), b.lshr(mant, clip(b.neg(shift), 0, 63)), b.shl(mant, clip(shift, 0, 6)))
    n, j = b.lshr(q, c(23)), b.and_(q, c(_FRACTION))    # the input as a truncated 7.23 fixed-point magnitude
    up = scaled(entry(j), b.sub(n, c(1)))
    down = b.select(b.icmp_unsigned("==", j, c(0)), scaled(c(0x3F800000), b.neg(n)),
                    scaled(entry(b.sub(c(_FRACTION), j)), b.sub(b.neg(n), c(2))))
    out = b.select(negative, down, up)
    out = b.select(b.icmp_unsigned("==", e, c(0)), c(0x3F800000), out)            # +-0 and subnormals: 1
    out = b.select(lt(shift, c(7)), out, b.select(negative, c(0), c(0x7F800000)))  # |x| >= 128, infinities
    nan = b.icmp_unsigned(">", b.and_(bits, c(0x7FFFFFFF)), c(0x7F800000))
    g.write(inst.operands[0], "f32", b.trunc(b.select(nan, c(0x7FFFFFFF), out), I32))


_FRACTION = 0x7FFFFF             # a float32's fraction bits


def _clip(b, v, lo, hi):
    """The i64 ``v`` clipped to [lo, hi]."""
    c = lambda x: ir.Constant(I64, x)                                   # noqa: E731
    return b.select(b.icmp_signed("<", v, c(lo)), c(lo), b.select(b.icmp_signed("<", c(hi), v), c(hi), v))


def _scaled(b, t, n):
    """mufu._scaled on i64 bits: the positive normal float ``t`` times 2^n, zero below the normals, infinity above."""
    c = lambda x: ir.Constant(I64, x)                                   # noqa: E731
    lt = lambda u, v: b.icmp_signed("<", u, v)                          # noqa: E731
    e = b.add(b.and_(b.lshr(t, c(23)), c(255)), n)
    out = b.or_(b.and_(t, c(_FRACTION)), b.shl(_clip(b, e, 0, 255), c(23)))
    return b.select(lt(e, c(1)), c(0), b.select(lt(e, c(255)), out, c(0x7F800000)))


def _rcp_table(g, inst):
    """rcp.approx.ftz.f32 (``1.0f / x`` under --use_fast_math), mufu.rcp_ftz in integers on the H100's measured
    table (the symbol ``mufu rcp``: 1 / (1 + j 2^-23)), where ``g.tables`` is set (_ex2). Without .ftz the unit's
    subnormals were not measured (decode._mufu rounds 1/x there): that form stays interpreted."""
    b = g.b
    c = lambda v: ir.Constant(I64, v)                                   # noqa: E731
    bits = b.zext(b.bitcast(g.read(inst.operands[1], "f32"), I32), I64)
    e = b.and_(b.lshr(bits, c(23)), c(255))
    table = b.inttoptr(g.symbol("mufu rcp"), I32.as_pointer())
    out = _scaled(b, b.zext(b.load(b.gep(table, [b.and_(bits, c(_FRACTION))])), I64), b.sub(c(127), e))
    out = b.select(b.icmp_unsigned("==", e, c(0)), c(0x7F800000), b.select(b.icmp_unsigned("==", e, c(255)), c(0), out))
    out = b.or_(out, b.and_(bits, c(0x80000000)))                       # +-0: +-inf; +-inf: +-0
    nan = b.icmp_unsigned(">", b.and_(bits, c(0x7FFFFFFF)), c(0x7F800000))
    g.write(inst.operands[0], "f32", b.trunc(b.select(nan, c(0x7FFFFFFF), out), I32))


def _rsqrt_table(g, inst):
    """rsqrt.approx.f32 (rsqrtf; .ftz with --use_fast_math), mufu.rsqrt_ftz and mufu.rsqrt in integers on the
    H100's measured table (the symbol ``mufu rsqrt``, 2^24 entries: 1/sqrt(m) for m in [1, 4)). Only where
    ``g.tables`` is set, as ex2 (_ex2): the tiled n-body's ``rsqrtf`` inside its loop of tiles between
    ``__syncthreads()`` kept the inner loop interpreted, 1.0 s a launch of 4,096 bodies against 0.02 s with
    ``1.0f / sqrtf``. Without .ftz a subnormal is scaled by 2^24 into the normals and its answer by 2^12."""
    b = g.b
    c = lambda v: ir.Constant(I64, v)                                   # noqa: E731
    x = g.read(inst.operands[1], "f32")

    def ftz(xf):
        bits = b.zext(b.bitcast(xf, I32), I64)
        e = b.and_(b.lshr(bits, c(23)), c(255))
        u = b.sub(e, c(127))
        table = b.inttoptr(g.symbol("mufu rsqrt"), I32.as_pointer())
        k = b.or_(b.and_(bits, c(_FRACTION)), b.shl(b.and_(u, c(1)), c(23)))
        out = _scaled(b, b.zext(b.load(b.gep(table, [k])), I64), b.neg(b.ashr(u, c(1))))
        out = b.select(b.icmp_unsigned("==", e, c(0)), b.or_(c(0x7F800000), b.and_(bits, c(0x80000000))),
                       b.select(b.icmp_unsigned("==", e, c(255)), c(0), out))           # +-0: +-inf; inf: 0
        nan = b.or_(b.icmp_unsigned(">", b.and_(bits, c(0x7FFFFFFF)), c(0x7F800000)),
                    b.and_(b.icmp_unsigned("!=", b.lshr(bits, c(31)), c(0)), b.icmp_unsigned("!=", e, c(0))))
        return b.select(nan, c(0x7FFFFFFF), out), bits
    out, bits = ftz(x)
    if "ftz" not in inst.mods:
        scaled_out, _ = ftz(b.fmul(x, ir.Constant(F32, 2.0 ** 24)))   # (exact: a subnormal times 2^24 is normal)
        up = b.select(b.icmp_unsigned("==", scaled_out, c(0x7FFFFFFF)), scaled_out, b.add(scaled_out, c(12 << 23)))
        subnormal = b.and_(b.icmp_unsigned("==", b.and_(bits, c(0x7F800000)), c(0)),
                           b.icmp_unsigned("!=", b.and_(bits, c(_FRACTION)), c(0)))
        out = b.select(subnormal, up, out)
    g.write(inst.operands[0], "f32", b.trunc(out, I32))


@gen("and", "or", "xor")
def _logic(g, inst):
    b = g.b
    kind_of(inst.type)
    if kind_of(inst.type)[0] == "f":
        raise Skip("logic on floats")
    _int_binop(g, inst, {"and": b.and_, "or": b.or_, "xor": b.xor}[inst.opcode])


@gen("not")
def _not(g, inst):
    t = inst.type
    if kind_of(t)[0] == "f":
        raise Skip("not type")
    g.write(inst.operands[0], t, g.b.not_(g.read(inst.operands[1], t)))


@gen("shl", "shr")
def _shift(g, inst):
    """alu.shl/shr: shift amounts past the width give 0 (or the sign for .s right shifts)."""
    t = inst.type
    k = kind_of(t)
    if k[0] != "i":
        raise Skip("shift type")
    b = g.b
    ty = INT[k[1]]
    a = g.read(inst.operands[1], t)
    n = g.read(inst.operands[2], "u32")
    big = b.icmp_unsigned(">=", n, ir.Constant(I32, k[1]))
    nn = b.zext(n, ty) if k[1] > 32 else b.trunc(n, ty) if k[1] < 32 else n
    nn = b.select(big, ir.Constant(ty, 0), nn)
    if inst.opcode == "shl":
        r = b.select(big, ir.Constant(ty, 0), b.shl(a, nn))
    elif k[2]:
        r = b.ashr(a, b.select(big, ir.Constant(ty, k[1] - 1), nn))
    else:
        r = b.select(big, ir.Constant(ty, 0), b.lshr(a, nn))
    g.write(inst.operands[0], t, r)


@gen("bfi")
def _bfi(g, inst):
    """alu.bfi: the low len bits of a into b at pos (pos and len: the low byte of c and d; the field
    is cut at b's width; pos past the width leaves b). numba moves a 64-bit value through a 32-bit
    shuffle as two halves joined by bfi.b64. Computed in 64 bits, shift amounts kept below 64."""
    t = inst.type
    k = kind_of(t)
    if k[0] != "i":
        raise Skip("bfi type")
    b = g.b
    n = k[1]
    a, bb = (g.read(o, t) for o in inst.operands[1:3])
    c, d = (g.read(o, "u32") for o in inst.operands[3:5])
    ua, ub = (b.zext(v, I64) if n < 64 else v for v in (a, bb))
    low = ir.Constant(I64, 0xFF)
    pos, ln = (b.and_(b.zext(v, I64), low) for v in (c, d))
    width = ir.Constant(I64, n)
    outside = b.icmp_unsigned(">=", pos, width)
    room = b.select(outside, ir.Constant(I64, 0), b.sub(width, pos))
    ln_eff = b.select(b.icmp_unsigned("<", ln, room), ln, room)
    whole = b.icmp_unsigned(">=", ln_eff, ir.Constant(I64, 64))
    ones = ir.Constant(I64, 0xFFFF_FFFF_FFFF_FFFF)
    mask = b.select(whole, ones, b.sub(b.shl(ir.Constant(I64, 1), b.select(whole, ir.Constant(I64, 0), ln_eff)),
                                       ir.Constant(I64, 1)))
    sh = b.select(b.icmp_unsigned("<", pos, ir.Constant(I64, 63)), pos, ir.Constant(I64, 63))
    r = b.or_(b.and_(ub, b.xor(b.shl(mask, sh), ones)), b.shl(b.and_(ua, mask), sh))
    r = b.select(outside, ub, r)
    g.write(inst.operands[0], t, b.trunc(r, INT[n]) if n < 64 else r)


@gen("neg", "abs")
def _negabs(g, inst):
    t = inst.type
    k = kind_of(t)
    b = g.b
    a = g.read(inst.operands[1], t)
    if k[0] == "f":
        if set(inst.mods) - {t, *(("ftz",) if t == "f32" else ())}:
            raise Skip("neg modifiers")
        a, = flushed(g, inst, [a])
        r = b.fneg(a) if inst.opcode == "neg" else b.call(intrinsic(g, "llvm.fabs", a.type, 1), [a])
        g.write(inst.operands[0], t, canon_nan(g, r))
        return
    if k[0] != "i":
        raise Skip("neg type")
    if inst.opcode == "neg":
        r = b.neg(a)
    else:
        r = b.select(b.icmp_signed("<", a, ir.Constant(a.type, 0)), b.neg(a), a) if k[2] else a
    g.write(inst.operands[0], t, r)


@gen("min", "max")
def _minmax(g, inst):
    t = inst.type
    k = kind_of(t)
    b = g.b
    if len(inst.operands) != 3:
        raise Skip("three-input min/max")
    x, y = _srcs(g, inst, (t, t))
    is_max = inst.opcode == "max"
    if k[0] == "i":
        if set(inst.mods) - {t}:
            raise Skip("min/max modifiers")
        op = (">" if is_max else "<")
        cmp = b.icmp_signed(op, x, y) if k[2] else b.icmp_unsigned(op, x, y)
        g.write(inst.operands[0], t, b.select(cmp, x, y))
        return
    if k[0] != "f" or set(inst.mods) - {t, *(("ftz",) if t == "f32" else ())}:
        raise Skip("min/max float modifiers")
    x, y = flushed(g, inst, [x, y])
    # alu.fminmax: a NaN operand is ignored; -0 < +0; both NaN give the canonical NaN
    # the choice is made on integer bits: LLVM would fold float selects into minnum/maxnum, which
    # may quiet a signaling NaN operand instead of returning the other operand
    xn, yn = b.fcmp_unordered("uno", x, x), b.fcmp_unordered("uno", y, y)
    pick_x = b.fcmp_ordered(">" if is_max else "<", x, y)
    ity = INT[k[1]]
    xi, yi = b.bitcast(x, ity), b.bitcast(y, ity)
    r = b.select(pick_x, xi, yi)
    both0 = b.and_(b.fcmp_ordered("==", x, ir.Constant(x.type, 0.0)), b.fcmp_ordered("==", y, ir.Constant(y.type, 0.0)))
    zero_bits = b.and_(xi, yi) if is_max else b.or_(xi, yi)      # sign: both negative (max) / either (min)
    r = b.select(both0, zero_bits, r)
    r = b.select(xn, yi, b.select(yn, xi, r))
    g.write(inst.operands[0], t, canon_bits(g, r))


_ICMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
         "lo": "<", "ls": "<=", "hi": ">", "hs": ">="}
_FCMP = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _compare(g, inst, t, x, y):
    cmp = inst.mods[0]
    b = g.b
    k = kind_of(t)
    if k[0] == "i":
        if cmp not in _ICMP:
            raise Skip(f"setp.{cmp}")
        signed = k[2] and cmp not in ("lo", "ls", "hi", "hs")
        return (b.icmp_signed if signed else b.icmp_unsigned)(_ICMP[cmp], x, y)
    if k[0] == "p":
        if cmp not in ("eq", "ne"):
            raise Skip("pred compare")
        return b.icmp_unsigned(_ICMP[cmp], x, y)
    if cmp == "num":
        return b.fcmp_ordered("ord", x, y)
    if cmp == "nan":
        return b.fcmp_unordered("uno", x, y)
    if cmp in _FCMP:
        return b.fcmp_ordered(_FCMP[cmp], x, y)
    if len(cmp) == 3 and cmp.endswith("u") and cmp[:2] in _FCMP:
        return b.fcmp_unordered(_FCMP[cmp[:2]], x, y)
    raise Skip(f"setp.{cmp}")


_BOOL = {"and": "and_", "or": "or_", "xor": "xor"}


@gen("setp")
def _setp(g, inst):
    t = inst.type
    if "ftz" in inst.mods and t != "f32":
        raise Skip("setp.ftz")
    boolop = next((m for m in inst.mods if m in _BOOL), None)
    x, y = flushed(g, inst, _srcs(g, inst, (t, t)))
    p = _compare(g, inst, t, x, y)
    _write_setp(g, inst, p, boolop)


def _write_setp(g, inst, p, boolop):
    """setp's destinations: p (and its complement for a ``p|q`` pair), combined with the optional
    fourth operand by .and/.or/.xor."""
    b = g.b
    q = b.not_(p)
    if boolop:
        c = g.read(inst.operands[3], "pred")
        f = getattr(b, _BOOL[boolop])
        p, q = f(p, c), f(q, c)
    dst = inst.operands[0]
    if dst[0] == "pair":
        g.write(dst[1], "pred", p)
        g.write(dst[2], "pred", q)
    else:
        g.write(dst, "pred", p)


@gen("selp")
def _selp(g, inst):
    t = inst.type
    x, y = _srcs(g, inst, (t, t))
    c = g.read(inst.operands[3], "pred")
    g.write(inst.operands[0], t, g.b.select(c, x, y))


@gen("cvt")
def _cvt(g, inst):
    dst_t, src_t = inst.types[0], inst.types[1]
    dk, sk = kind_of(dst_t), kind_of(src_t)
    rnd = dec._rnd(inst)
    extra = set(inst.mods) - {dst_t, src_t, "rn", "rz", "rm", "rp", "rni", "rzi", "rmi", "rpi"}
    if extra or dk[0] == "p" or sk[0] == "p":
        raise Skip("cvt form")
    b = g.b
    a = g.read(inst.operands[1], src_t)
    if sk[0] == "i" and dk[0] == "i":
        if rnd:
            raise Skip("cvt rounding on integers")
        if dk[1] > sk[1]:
            r = (b.sext if sk[2] else b.zext)(a, INT[dk[1]])
        elif dk[1] < sk[1]:
            r = b.trunc(a, INT[dk[1]])
        else:
            r = a
    elif sk[0] == "i" and dk[0] == "f":
        if rnd not in (None, "rn"):
            raise Skip("cvt directed int->float")
        r = (b.sitofp if sk[2] else b.uitofp)(a, lty(dst_t))
    elif sk[0] == "f" and dk[0] == "i":
        r = _float_to_int(g, a, dk, rnd)
    else:
        r = _float_to_float(g, a, sk, dk, rnd)
    g.write(inst.operands[0], dst_t, r)


_ROUND = {"rni": "llvm.rint", "rn": "llvm.rint", "rzi": "llvm.trunc", "rz": "llvm.trunc", None: "llvm.trunc",
          "rmi": "llvm.floor", "rm": "llvm.floor", "rpi": "llvm.ceil", "rp": "llvm.ceil"}


def _float_to_int(g, a, dk, rnd):
    """alu._float_to_int: round in float64, saturate; NaN gives 0 (or the sign bit where an H100 does)."""
    b = g.b
    bits, signed = dk[1], dk[2]
    w = b.fpext(a, F64) if a.type == F32 else a
    f = b.call(intrinsic(g, _ROUND[rnd], F64, 1), [w])
    info = np.iinfo(np.dtype(f"{'i' if signed else 'u'}{bits // 8}"))
    fmax, fmin = float(info.max), float(info.min)
    ty = INT[bits]
    inside = b.and_(b.fcmp_ordered("<", f, ir.Constant(F64, fmax)), b.fcmp_ordered(">", f, ir.Constant(F64, fmin)))
    mid = b.select(inside, f, ir.Constant(F64, 0.0))
    if bits == 64:
        val = (b.fptosi if signed else b.fptoui)(mid, I64)
    else:
        val = b.trunc(b.fptosi(mid, I64), ty)
    hi_v = ir.Constant(ty, info.max & ((1 << bits) - 1))
    lo_v = ir.Constant(ty, info.min & ((1 << bits) - 1))
    sat = b.select(b.fcmp_ordered(">=", f, ir.Constant(F64, fmax)), hi_v, lo_v)
    out = b.select(inside, val, sat)
    nan = b.fcmp_unordered("uno", f, f)
    nan_v = ir.Constant(ty, 1 << (bits - 1)) if bits == 64 or (bits == 32 and a.type == F64) else ir.Constant(ty, 0)
    return b.select(nan, nan_v, out)


def _float_to_float(g, a, sk, dk, rnd):
    b = g.b
    if rnd in ("rni", "rzi", "rmi", "rpi"):
        if sk != dk:
            raise Skip("cvt.rni between float types")
        r = b.call(intrinsic(g, _ROUND[rnd], a.type, 1), [a])
        return canon_nan(g, r)
    if sk[1] == dk[1]:
        if rnd:
            raise Skip("cvt same type with rounding")
        return canon_nan(g, a)
    if dk[1] > sk[1]:                   # f32 -> f64: exact; NaN payload kept and quieted
        if rnd:
            raise Skip("cvt widening with rounding")
        r = b.bitcast(b.fpext(a, F64), I64)
        u = b.bitcast(a, I32)
        nan = b.icmp_unsigned(">", b.and_(u, ir.Constant(I32, 0x7FFFFFFF)), ir.Constant(I32, 0x7F800000))
        return b.or_(r, b.select(nan, ir.Constant(I64, 0x0008000000000000), ir.Constant(I64, 0)))
    if rnd not in (None, "rn"):
        raise Skip("cvt directed narrowing")
    r = b.bitcast(b.fptrunc(a, F32), I32)
    # alu.narrowed_nan: sign, quiet bit and the top of the payload (chosen on integers, see canon_nan)
    u = b.bitcast(a, I64)
    sign = b.trunc(b.lshr(u, ir.Constant(I64, 63)), I32)
    mant = b.and_(u, ir.Constant(I64, (1 << 52) - 1))
    bits = b.or_(b.or_(b.shl(sign, ir.Constant(I32, 31)), ir.Constant(I32, 0x7FC00000)),
                 b.trunc(b.lshr(mant, ir.Constant(I64, 29)), I32))
    nan = b.icmp_unsigned(">", b.and_(u, ir.Constant(I64, (1 << 63) - 1)), ir.Constant(I64, 0x7FF0000000000000))
    return b.select(nan, bits, r)


# ------------------------------------------------------------------ bit instructions, slct, testp, copysign, cvt.sat

def int_intrinsic(g, name, ty, *extra):
    """The LLVM integer intrinsic ``name`` over one operand of ``ty`` (and constant ``extra`` i1 flags)."""
    full = f"{name}.i{ty.width}"
    m = g.fn.module
    try:
        return m.get_global(full)
    except KeyError:
        return ir.Function(m, ir.FunctionType(ty, [ty] + [I1] * len(extra)), full)


def _bit_source(g, inst):
    t = inst.type
    k = kind_of(t)
    if k[0] != "i":
        raise Skip(f"{inst.opcode} type")
    return t, g.read(inst.operands[1], t)


@gen("popc", "clz")
def _popc_clz(g, inst):
    """alu.popc/clz: a u32 count (clz of 0 is the width: LLVM's ctlz with zero defined)."""
    _, a = _bit_source(g, inst)
    b = g.b
    if inst.opcode == "popc":
        r = b.call(int_intrinsic(g, "llvm.ctpop", a.type), [a])
    else:
        r = b.call(int_intrinsic(g, "llvm.ctlz", a.type, False), [a, ir.Constant(I1, 0)])
    r = b.trunc(r, I32) if a.type.width > 32 else b.zext(r, I32) if a.type.width < 32 else r
    g.write(inst.operands[0], "u32", r)


@gen("brev")
def _brev(g, inst):
    t, a = _bit_source(g, inst)
    g.write(inst.operands[0], t, g.b.call(int_intrinsic(g, "llvm.bitreverse", a.type), [a]))


@gen("bfe")
def _bfe(g, inst):
    """alu.bfe: len bits of a from pos (low bytes of b and c), cut at a's width; signed types fill
    the rest with the field's last bit (a[min(pos+len-1, msb)]; 0 when len is 0). In 64 bits."""
    t, a = _bit_source(g, inst)
    b = g.b
    n, signed = kind_of(t)[1], kind_of(t)[2]
    c64 = lambda v: ir.Constant(I64, v)   # noqa: E731
    u = b.zext(a, I64) if n < 64 else a
    pos, ln = (b.and_(b.zext(g.read(o, "u32"), I64), c64(0xFF)) for o in inst.operands[2:4])
    room = b.sub(c64(n), pos)                                        # signed: negative past the width
    avail = b.select(b.icmp_signed("<", ln, room), ln, room)
    avail = b.select(b.icmp_signed("<", avail, c64(0)), c64(0), avail)
    inside = b.icmp_unsigned("<", pos, c64(n))
    shifted = b.select(inside, b.lshr(u, b.select(inside, pos, c64(0))), c64(0))
    whole = b.icmp_unsigned(">=", avail, c64(64))
    mask = b.select(whole, c64(-1), b.sub(b.shl(c64(1), b.select(whole, c64(0), avail)), c64(1)))
    field = b.and_(shifted, mask)
    if signed:
        last = b.sub(b.add(pos, ln), c64(1))
        last = b.select(b.icmp_signed("<", last, c64(n - 1)), last, c64(n - 1))
        last = b.select(b.icmp_signed("<", last, c64(0)), c64(0), last)
        sbit = b.and_(b.lshr(u, last), c64(1))
        fill = b.and_(b.icmp_unsigned("!=", ln, c64(0)), b.icmp_unsigned("!=", sbit, c64(0)))
        field = b.select(fill, b.or_(field, b.not_(mask)), field)
    g.write(inst.operands[0], t, b.trunc(field, INT[n]) if n < 64 else field)




@gen("prmt")
def _prmt(g, inst):
    """alu.prmt: bytes of {b, a} picked by c's selector nibbles (bit 3 of a nibble: replicate the
    byte's sign). A special mode picks a selector word by c & 3 from its table, then the same."""
    if inst.type != "b32":
        raise Skip("prmt type")
    b = g.b
    x, y, c = (g.read(o, "b32") for o in inst.operands[1:4])
    src = b.or_(b.shl(b.zext(y, I64), ir.Constant(I64, 32)), b.zext(x, I64))
    mode = next((m for m in inst.mods if m in _PRMT_MODES), None)
    if mode:
        words = [sum(s << (4 * k) for k, s in enumerate(row)) for row in _PRMT_MODES[mode]]
        s2 = b.and_(c, ir.Constant(I32, 3))
        sel_word = ir.Constant(I32, words[3])
        for v in (2, 1, 0):
            sel_word = b.select(b.icmp_unsigned("==", s2, ir.Constant(I32, v)), ir.Constant(I32, words[v]), sel_word)
        c = sel_word
    out = ir.Constant(I32, 0)
    for k in range(4):
        sel = b.and_(b.lshr(c, ir.Constant(I32, 4 * k)), ir.Constant(I32, 0xF))
        at = b.zext(b.mul(b.and_(sel, ir.Constant(I32, 7)), ir.Constant(I32, 8)), I64)
        byte = b.trunc(b.and_(b.lshr(src, at), ir.Constant(I64, 0xFF)), I32)
        sign = b.select(b.icmp_unsigned("!=", b.and_(byte, ir.Constant(I32, 0x80)), ir.Constant(I32, 0)),
                        ir.Constant(I32, 0xFF), ir.Constant(I32, 0))
        byte = b.select(b.icmp_unsigned("!=", b.and_(sel, ir.Constant(I32, 8)), ir.Constant(I32, 0)), sign, byte)
        out = b.or_(out, b.shl(byte, ir.Constant(I32, 8 * k)))
    g.write(inst.operands[0], "b32", out)


@gen("slct")
def _slct(g, inst):
    """slct: a where c >= 0 (a float c: NaN picks b, -0 picks a), else b. .ftz stays interpreted:
    decode._slct does not flush c (PTX ISA says a subnormal c reads as a zero of its sign)."""
    dt, ct = inst.types[0], inst.types[1]
    if "ftz" in inst.mods:
        raise Skip("slct.ftz")
    x, y = (g.read(o, dt) for o in inst.operands[1:3])
    c = g.read(inst.operands[3], ct)
    b = g.b
    if kind_of(ct)[0] == "f":
        ge = b.fcmp_ordered(">=", c, ir.Constant(c.type, 0.0))
    else:
        ge = b.icmp_signed(">=", c, ir.Constant(c.type, 0))
    g.write(inst.operands[0], dt, b.select(ge, x, y))


_TESTP = ("finite", "infinite", "number", "notanumber", "normal", "subnormal")


@gen("testp")
def _testp(g, inst):
    """alu.testp on the bits (|x| against infinity's and the smallest normal's): ``.normal`` is true
    for +-0 too, as on the GPU."""
    t = inst.type
    if kind_of(t)[0] != "f":
        raise Skip("testp type")
    what = next(m for m in inst.mods if m in _TESTP)
    b = g.b
    n = kind_of(t)[1]
    ity = INT[n]
    mag = b.and_(b.bitcast(g.read(inst.operands[1], t), ity), ir.Constant(ity, (1 << (n - 1)) - 1))
    inf = ir.Constant(ity, 0x7F800000 if n == 32 else 0x7FF0000000000000)
    tiny = ir.Constant(ity, 0x00800000 if n == 32 else 0x0010000000000000)
    zero = ir.Constant(ity, 0)
    finite = b.icmp_unsigned("<", mag, inf)
    r = {"finite": lambda: finite, "infinite": lambda: b.icmp_unsigned("==", mag, inf),
         "number": lambda: b.icmp_unsigned("<=", mag, inf), "notanumber": lambda: b.icmp_unsigned(">", mag, inf),
         "normal": lambda: b.and_(finite, b.or_(b.icmp_unsigned(">=", mag, tiny), b.icmp_unsigned("==", mag, zero))),
         "subnormal": lambda: b.and_(b.icmp_unsigned("!=", mag, zero), b.icmp_unsigned("<", mag, tiny))}[what]()
    g.write(inst.operands[0], "pred", r)


@gen("copysign")
def _copysign(g, inst):
    """copysign d, a, b: b's bits with a's sign bit (NaN payloads kept, as numpy's copysign)."""
    t = inst.type
    if kind_of(t)[0] != "f":
        raise Skip("copysign type")
    n = kind_of(t)[1]
    ity = INT[n]
    b = g.b
    x, y = (b.bitcast(g.read(o, t), ity) for o in inst.operands[1:3])
    sign = ir.Constant(ity, 1 << (n - 1))
    g.write(inst.operands[0], t, b.or_(b.and_(y, b.not_(sign)), b.and_(x, sign)))


_CVT_PLAIN = _cvt


@gen("cvt")
def _cvt_more(g, inst):
    """cvt forms ``_cvt`` leaves out: to and from f16 (``_cvt_half``), .sat and .ftz (``_cvt_sat``)."""
    dst_t, src_t = inst.types[0], inst.types[1]
    if "f16" in (dst_t, src_t):
        return _cvt_half(g, inst, dst_t, src_t)
    if dst_t == "tf32":
        return _cvt_tf32(g, inst)
    if set(inst.mods) & {"sat", "ftz"}:
        return _cvt_sat(g, inst)
    return _CVT_PLAIN(g, inst)


def _cvt_half(g, inst, dst_t, src_t):
    """cvt.f32.f16 (exact) and cvt.rn.f16.f32 (LLVM's fptrunc rounds to nearest, as numpy's astype
    in alu.cvt); a NaN result is the canonical one of its type (alu.gpu_nan: 0x7FFFFFFF, 0x7FFF).
    f16 registers hold the bits (b16); immediates stay interpreted (their f16 spelling)."""
    mods = set(inst.mods) - {dst_t, src_t}
    half_op = inst.operands[1] if src_t == "f16" else inst.operands[0]
    if not _half_register(g, half_op):
        raise Skip("cvt f16 operand")
    src = inst.operands[1]
    b = g.b
    half = ir.HalfType()
    if (dst_t, src_t) == ("f32", "f16") and not mods:
        r = b.fpext(b.bitcast(g.read(src, "b16"), half), F32)
        g.write(inst.operands[0], "f32", canon_nan(g, r))
    elif (dst_t, src_t) == ("f16", "f32") and mods == {"rn"}:
        r = b.bitcast(b.fptrunc(g.read(src, "f32"), half), I16)
        nan = b.icmp_unsigned(">", b.and_(r, ir.Constant(I16, 0x7FFF)), ir.Constant(I16, 0x7C00))
        g.write(inst.operands[0], "b16", b.select(nan, ir.Constant(I16, 0x7FFF), r))
    else:
        raise Skip("cvt f16 form")


def _cvt_tf32(g, inst):
    """mma.to_tf32: float32 bits with the low 13 cut, rounded up by .rna (ties away), .rn (ties to
    even) or not at all (.rz); infinities and NaNs are only cut (an H100's bits)."""
    mode = next((m for m in inst.mods if m in ("rna", "rn", "rz")), "rna")
    if set(inst.mods) - {"tf32", "f32", mode}:
        raise Skip("cvt.tf32 form")
    b = g.b
    c = lambda v: ir.Constant(I32, v)   # noqa: E731
    u = g.read(inst.operands[1], "b32")
    low, keep = b.and_(u, c(0x1FFF)), b.and_(u, c(0xFFFFE000))
    if mode == "rna":
        up = b.icmp_unsigned(">=", low, c(0x1000))
    elif mode == "rn":
        odd = b.icmp_unsigned("!=", b.and_(u, c(0x2000)), c(0))
        up = b.or_(b.icmp_unsigned(">", low, c(0x1000)), b.and_(b.icmp_unsigned("==", low, c(0x1000)), odd))
    else:
        up = ir.Constant(I1, 0)
    special = b.icmp_unsigned("==", b.and_(u, c(0x7F800000)), c(0x7F800000))
    g.write(inst.operands[0], "b32", b.select(b.and_(up, b.not_(special)), b.add(keep, c(0x2000)), keep))


def _cvt_sat(g, inst):
    """cvt with .sat (and .ftz on f32): integers clamped to the destination's range (alu._int_convert),
    floats to [0, 1] with NaN and -0 giving +0 (alu.saturate)."""
    dst_t, src_t = inst.types[0], inst.types[1]
    extra = set(inst.mods) - {dst_t, src_t}
    dk, sk = kind_of(dst_t), kind_of(src_t)
    b = g.b
    a = g.read(inst.operands[1], src_t)
    if dk[0] == "i" and sk[0] == "i":
        if extra != {"sat"}:
            raise Skip("cvt.sat form")
        w = (b.sext if sk[2] else b.zext)(a, I128)
        info = np.iinfo(dtype(dst_t))
        lo, hi = ir.Constant(I128, int(info.min)), ir.Constant(I128, int(info.max))
        w = b.select(b.icmp_signed("<", w, lo), lo, w)
        w = b.select(b.icmp_signed(">", w, hi), hi, w)
        g.write(inst.operands[0], dst_t, b.trunc(w, INT[dk[1]]))
        return
    if not (dk == sk == ("f", 32)) or extra - {"sat", "ftz", "rn"}:
        raise Skip("cvt.sat/.ftz form")
    if "ftz" in extra:
        a = flush(g, a)
    r = b.bitcast(a, I32)
    if "sat" in extra:
        pos = b.fcmp_ordered(">", a, ir.Constant(F32, 0.0))
        one = b.fcmp_ordered(">", a, ir.Constant(F32, 1.0))
        r = b.select(pos, b.select(one, ir.Constant(I32, 0x3F800000), r), ir.Constant(I32, 0))
    g.write(inst.operands[0], dst_t, canon_bits(g, r))



@gen("bfind")
def _bfind(g, inst):
    """alu.bfind: the position of the highest bit that differs from the sign (signed types; the
    highest set bit for unsigned), 0xFFFFFFFF when there is none; .shiftamt counts from the top."""
    t, a = _bit_source(g, inst)
    b = g.b
    n, signed = kind_of(t)[1], kind_of(t)[2]
    if signed:
        a = b.select(b.icmp_signed("<", a, ir.Constant(a.type, 0)), b.not_(a), a)
    lead = b.call(int_intrinsic(g, "llvm.ctlz", a.type, False), [a, ir.Constant(I1, 0)])
    lead = b.trunc(lead, I32) if n > 32 else b.zext(lead, I32) if n < 32 else lead
    pos = lead if "shiftamt" in inst.mods else b.sub(ir.Constant(I32, n - 1), lead)
    none = b.icmp_unsigned("==", a, ir.Constant(a.type, 0))
    g.write(inst.operands[0], "u32", b.select(none, ir.Constant(I32, 0xFFFFFFFF), pos))


@gen("lop3")
def _lop3(g, inst):
    """alu.lop3: the OR of the minterms the immediate lookup table selects (bit k: a, b, c = the
    bits of k, a highest)."""
    t = inst.type
    if kind_of(t)[0] != "i" or inst.operands[4][0] != "imm":
        raise Skip("lop3 form")
    b = g.b
    x, y, z = (g.read(o, t) for o in inst.operands[1:4])
    lut = int(inst.operands[4][1])
    r = ir.Constant(x.type, 0)
    for k in range(8):
        if lut >> k & 1:
            terms = [v if k & bit else b.not_(v) for v, bit in ((x, 4), (y, 2), (z, 1))]
            r = b.or_(r, b.and_(b.and_(terms[0], terms[1]), terms[2]))
    g.write(inst.operands[0], t, r)


_MINMAX_PLAIN = _minmax


@gen("min", "max")
def _minmax_more(g, inst):
    """Integer min/max forms ``_minmax`` leaves out (decode._minmax): .relu (then max with 0) and the
    three-input form of sm_90."""
    t = inst.type
    k = kind_of(t)
    relu = "relu" in inst.mods
    if k[0] != "i" or not (relu or len(inst.operands) == 4):
        return _MINMAX_PLAIN(g, inst)
    if set(inst.mods) - {t, "relu"} or relu and len(inst.operands) != 3:
        raise Skip("min/max form")
    b = g.b
    op = ">" if inst.opcode == "max" else "<"
    cmp = b.icmp_signed if k[2] else b.icmp_unsigned
    vals = [g.read(o, t) for o in inst.operands[1:]]
    r = vals[0]
    for v in vals[1:]:
        r = b.select(cmp(op, r, v), r, v)
    if relu:
        zero = ir.Constant(r.type, 0)
        r = b.select(b.icmp_signed(">", r, zero), r, zero) if k[2] else r
    g.write(inst.operands[0], t, r)



_SQRT_PLAIN = _sqrt


@gen("sqrt", "rsqrt", "rcp")
def _approx_f64(g, inst):
    """rcp.approx.f64 and rsqrt.approx.f64 (libdevice's float64 division and pow use them): the
    interpreter's decode._unary_float computes 1/x and 1/sqrt(x) in float64, IEEE-rounded at each
    step, and ignores .ftz on float64; a NaN result bails out (its payload rules). Other forms as ``_sqrt``."""
    if inst.type != "f64" or inst.opcode == "sqrt" or "approx" not in inst.mods:
        return _SQRT_PLAIN(g, inst)
    raise Skip("rcp/rsqrt.approx.f64 (the unit's high-word answer from mufu.py's tables: decode._rcp, _rsqrt)")



_SETP_PLAIN = _setp


def _half_register(g, op):
    """Is ``op`` a register of 16-bit storage (where an f16 value is its bits)?"""
    return op[0] == "reg" and not op[2] and op[1] in g.func.regs and storage(g.func.regs[op[1]]).itemsize == 2


def _half_operand(g, op):
    """An f16 register operand as an f32 value (exact); f16 immediates stay interpreted."""
    if not _half_register(g, op):
        raise Skip("f16 operand")
    return g.b.fpext(g.b.bitcast(g.read(op, "b16"), ir.HalfType()), F32)


@gen("setp")
def _setp_half(g, inst):
    """setp on f16 operands: compared as float32 (widening is exact), as decode._comparison compares
    the float16 values; .ftz stays interpreted. Other types as ``_setp``."""
    if inst.type != "f16":
        return _SETP_PLAIN(g, inst)
    if "ftz" in inst.mods:
        raise Skip("setp.ftz")
    boolop = next((m for m in inst.mods if m in _BOOL), None)
    x, y = (_half_operand(g, o) for o in inst.operands[1:3])
    p = _compare(g, inst, "f32", x, y)
    _write_setp(g, inst, p, boolop)



_NEGABS_PLAIN = _negabs


@gen("neg", "abs")
def _negabs_half(g, inst):
    """neg.f16 and abs.f16 on the bits (sign flipped or cleared); a NaN becomes the canonical
    0x7FFF (decode's _gpu_nan). .ftz stays interpreted. Other types as ``_negabs``."""
    if inst.type != "f16":
        return _NEGABS_PLAIN(g, inst)
    if set(inst.mods) - {"f16"} or not _half_register(g, inst.operands[1]) \
            or not _half_register(g, inst.operands[0]):
        raise Skip("neg/abs.f16 form")
    b = g.b
    c = lambda v: ir.Constant(I16, v)   # noqa: E731
    a = g.read(inst.operands[1], "b16")
    r = b.xor(a, c(0x8000)) if inst.opcode == "neg" else b.and_(a, c(0x7FFF))
    nan = b.icmp_unsigned(">", b.and_(a, c(0x7FFF)), c(0x7C00))
    g.write(inst.operands[0], "b16", b.select(nan, c(0x7FFF), r))


# ------------------------------------------------------------------ memory instructions

def _space(inst):
    from .memops import _space as space_of
    return space_of(inst)


def _vec(inst):
    from .memops import _vec as vec_of
    return vec_of(inst)


def _mem_type(inst):
    t = inst.type
    kind_of(t)
    return t


def mem_access(inst):
    """(space, address operand, bytes) of a load, store or atomic: what its generator checks."""
    space = _space(inst)
    if inst.opcode in ("atom", "red"):
        return space, inst.operands[1 if inst.opcode == "atom" else 0], dtype(inst.type).itemsize
    op = inst.operands[1 if inst.opcode in ("ld", "ldu") else 0]
    return space, op, dtype(_mem_type(inst)).itemsize * _vec(inst)


@gen("ld", "ldu")
def _ld(g, inst):
    space = _space(inst)
    t = _mem_type(inst)
    dst, src = inst.operands
    dsts = dst[1] if dst[0] == "vec" else (dst,)
    esize = dtype(t).itemsize
    if space == "param" and src[1] and src[1][0] == "reg" and g.func.is_entry:
        _ld_param_by_address(g, src, dsts, t, esize)
        return
    if space == "param":
        base = src[1]
        if not (base and base[0] == "sym" and g.func.is_entry and base[1] in g.d.param_offsets):
            raise Skip("ld.param form")
        koff = g.d.param_offsets[base[1]] + src[2]
        for k, o in enumerate(dsts):
            g.write(o, t, _param_value(g, t, koff + k * esize))
        return
    if space not in ("global", "const", "shared", "local", "generic"):
        raise Skip(f"ld.{space}")
    p = g.pointer(space, g.address(src), mem_access(inst)[2])
    vals = [g.load(p, t, k * esize) for k in range(len(dsts))]
    for o, v in zip(dsts, vals):
        g.write(o, t, v)


def _param_value(g, t, offset):
    """A kernel parameter's value, loaded once in the function's entry block (and shared by every
    read of the same bytes). Read where the PTX reads it, often under a branch (``if (i < n)
    c[i] = ...`` loads ``c`` there), the load was conditional, so LLVM could not hoist it out of
    the lane loop: it became a masked gather of one address per lane, and every address made from
    it a vector of unrelated pointers (gathers and scatters where consecutive lanes touch
    consecutive elements). The launch's parameter bytes always hold every parameter of the
    kernel (runtime/launch.marshal lays them out from the same PTX), so the load cannot fault."""
    cache = g.__dict__.setdefault("_param_values", {})
    key = (offset, t)
    v = cache.get(key)
    if v is None:
        base = g.ctx["kparams"]             # (an entry-block load itself: asked before moving there)
        b = g.b
        with b.goto_block(g.entry):
            v = cache[key] = g.load(b.inttoptr(base, I8.as_pointer()), t, offset, invariant=True)
    return v


def _ld_param_by_address(g, src, dsts, t, esize):
    """``ld.param [%rd]`` of a ``__grid_constant__`` parameter read through its address (sm90.py's
    ld_param_indirect): the launch's parameter bytes at the address's offset in the param window.
    Any address that sm90 would reject (outside the window or the parameters, misaligned) bails out
    to it, for its exact message."""
    b = g.b
    size = esize * len(dsts)
    if size & (size - 1):
        raise Skip("ld.param vector size")
    rel = b.sub(g.address(src), ir.Constant(I64, PARAM_WINDOW))
    n = g.ctx["nkparams"]
    g.bail_if(b.or_(b.icmp_unsigned("<", n, ir.Constant(I64, size)),
                    b.icmp_unsigned(">", rel, b.sub(n, ir.Constant(I64, size)))))
    g._misaligned(rel, size)
    kp = b.gep(b.inttoptr(g.ctx["kparams"], I8.as_pointer()), [rel])
    for k, o in enumerate(dsts):
        g.write(o, t, g.load(kp, t, k * esize))


@gen("st")
def _st(g, inst):
    space = _space(inst)
    t = _mem_type(inst)
    dst, src = inst.operands
    srcs = src[1] if src[0] == "vec" else (src,)
    esize = dtype(t).itemsize
    if space not in ("global", "shared", "local", "generic"):
        raise Skip(f"st.{space}")
    vals = [g.read(o, t) for o in srcs]
    p = g.pointer(space, g.address(dst), mem_access(inst)[2])
    for k, v in enumerate(vals):
        g.store(p, t, v, k * esize)


_ATOM_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch", "cas")


@gen("atom", "red")
def _atom(g, inst):
    """Atomics one lane after another in lane order, as memops.atomic_apply's result is defined."""
    space = _space(inst)
    t = inst.type
    opname = next(m for m in inst.mods if m in _ATOM_OPS)
    if space not in ("global", "shared"):
        raise Skip(f"atom.{space}")
    if any(o[0] == "vec" for o in inst.operands):
        raise Skip("vector atomic")
    k = kind_of(t)
    if k[0] == "f" and not (opname == "add" and t in ("f32", "f64")):
        raise Skip("float atomic")
    if k[0] == "p" or t in ("u16", "s16", "b16", "u8", "s8", "b8"):
        raise Skip("atomic type")
    if t in ("b32", "b64") and opname in ("min", "max", "add"):
        t = "u" + t[1:]
    b = g.b
    ops = inst.operands
    if inst.opcode == "atom":
        addr_op, rest = ops[1], ops[2:]
    else:
        addr_op, rest = ops[0], ops[1:]
    vals = [g.read(o, t) for o in rest]
    p = g.pointer(space, g.address(addr_op), mem_access(inst)[2])
    if g.check_only:
        return
    old = g.load(p, t)
    v = vals[0]
    signed = k[0] == "i" and k[2]
    if opname == "add" and t == "f64":
        new = _f64_atomic_sum(g, old, v)
    elif opname == "add" and k[0] == "f":
        if space == "shared":
            new = canon_nan(g, b.fadd(old, v))
        else:
            new = canon_nan(g, flush(g, b.fadd(flush(g, old), flush(g, v))))
    elif opname == "add":
        new = b.add(old, v)
    elif opname in ("min", "max"):
        op = "<" if opname == "min" else ">"
        cmp = b.icmp_signed(op, v, old) if signed else b.icmp_unsigned(op, v, old)
        new = b.select(cmp, v, old)
    elif opname in ("and", "or", "xor"):
        new = getattr(b, _BOOL[opname])(old, v)
    elif opname == "exch":
        new = v
    elif opname == "inc":
        new = b.select(b.icmp_unsigned(">=", old, v), ir.Constant(old.type, 0), b.add(old, ir.Constant(old.type, 1)))
    elif opname == "dec":
        wrap = b.or_(b.icmp_unsigned("==", old, ir.Constant(old.type, 0)), b.icmp_unsigned(">", old, v))
        new = b.select(wrap, v, b.sub(old, ir.Constant(old.type, 1)))
    else:                                         # cas: compare, new value
        new = b.select(b.icmp_unsigned("==", old, v), vals[1], old)
    g.store(p, t, new)
    if inst.opcode == "atom":
        g.write(ops[0], t, old)


def _f64_atomic_sum(g, old, v):
    """The bits of a float64 atomicAdd's new value as memops' atomics compute it (numpy on x86, lane after
    lane): ``v + old``, where of two NaNs the added value's passes (quieted), as on the GPU; one NaN
    operand passes quieted; a NaN made from numbers (inf + -inf) is x86's default NaN, 0xFFF8000000000000.
    Chosen on the integer bits (canon_nan's reason), and with no bail-out: lanes before this one have
    already added theirs, so an atomic must finish every lane it starts."""
    b = g.b
    top, exp, quiet = (ir.Constant(I64, c) for c in (0x7FFFFFFFFFFFFFFF, 0x7FF0000000000000, 0x0008000000000000))
    is_nan = lambda x: b.icmp_unsigned(">", b.and_(x, top), exp)  # noqa: E731
    ob, vb, sb = b.bitcast(old, I64), b.bitcast(v, I64), b.bitcast(b.fadd(old, v), I64)
    made = b.select(is_nan(ob), b.or_(ob, quiet), ir.Constant(I64, 0xFFF8000000000000))
    nan = b.select(is_nan(vb), b.or_(vb, quiet), made)
    return b.select(is_nan(sb), nan, sb)


@gen("shfl")
def _shfl(g, inst):
    """shfl.sync as warp.py computes it: the source lane's value of ``a`` as it was before the
    instruction (compiled.py hands a copy of ``a``'s array when the group itself writes ``a``)."""
    ops = inst.operands
    mode = next(m for m in inst.mods if m in ("up", "down", "bfly", "idx"))
    if ops[1][0] != "reg" or ops[1][2] or ops[1][1] not in g.func.regs or g._is_pred(ops[1][1]):
        raise Skip("shfl source")
    b = g.b
    name = ops[1][1]
    _, thread = g._parts()
    lane = b.and_(thread, ir.Constant(I64, 31))
    bb = b.and_(b.zext(g.read(ops[2], "u32"), I64), ir.Constant(I64, 31))
    c = b.zext(g.read(ops[3], "u32"), I64)
    cval = b.and_(c, ir.Constant(I64, 31))
    seg = b.and_(b.lshr(c, ir.Constant(I64, 8)), ir.Constant(I64, 31))
    notseg = b.xor(seg, ir.Constant(I64, -1))
    max_lane = b.or_(b.and_(lane, seg), b.and_(cval, notseg))
    if mode == "up":
        j = b.sub(lane, bb)
        ok = b.icmp_signed(">=", j, max_lane)
    else:
        j = {"down": lambda: b.add(lane, bb), "bfly": lambda: b.xor(lane, bb),
             "idx": lambda: b.or_(b.and_(lane, seg), b.and_(bb, notseg))}[mode]()
        ok = b.icmp_signed("<=", j, max_lane)
    ptr = g.cross_ptr(name)
    if mode in ("up", "down") and g.padded(name):
        # both candidates loaded from consecutive addresses, then chosen: vector loads, not a gather
        other = b.add(g.lane, bb if mode == "down" else b.neg(bb))
        raw = b.select(ok, b.load(b.gep(ptr, [other])), b.load(b.gep(ptr, [g.lane])))
    else:
        raw = b.load(b.gep(ptr, [b.add(b.sub(g.lane, lane), b.select(ok, j, lane))]))
    a = g.to_type(raw, "u", "b32")
    dst = ops[0]
    if dst[0] == "pair":
        g.write(dst[1], "b32", a)
        g.write(dst[2], "pred", ok)
    else:
        g.write(dst, "b32", a)


def _whole_warp(g):
    """(first lane of this lane's warp, its lane id): for vote, activemask and redux, which read
    every lane of the warp. Only regiongen.CutRegionBuilder takes them (``whole_warps``): it runs
    them where every lane of every warp is active, as the interpreter then sees them."""
    if not getattr(g, "whole_warps", False):
        raise Skip("a warp-wide instruction outside a region with cuts")
    b = g.b
    _, thread = g._parts()
    lane = b.and_(thread, ir.Constant(I64, 31))
    return b.sub(g.lane, lane), lane


def _fold_warp(g, base, init, step):
    """``step(acc, j, lane base+j)`` folded over the warp's 32 lanes, as a loop."""
    b = g.b
    pre = b.block
    loop, after = g.fn.append_basic_block("warp_fold"), g.fn.append_basic_block("warp_folded")
    b.branch(loop)
    b.position_at_end(loop)
    j = b.phi(I64)
    acc = b.phi(init.type)
    new = step(acc, j, b.add(base, j))
    nj = b.add(j, ir.Constant(I64, 1))
    j.add_incoming(ir.Constant(I64, 0), pre)
    j.add_incoming(nj, b.block)
    acc.add_incoming(init, pre)
    acc.add_incoming(new, b.block)
    b.cbranch(b.icmp_unsigned("<", nj, ir.Constant(I64, 32)), loop, after)
    b.position_at_end(after)
    return new


def _member(g, ops, k):
    return g.read(ops[k], "b32") if len(ops) > k else ir.Constant(I32, 0xFFFFFFFF)


@gen("vote")
def _vote(g, inst):
    """vote.sync as warp.py computes it with every lane active: the ballot of the warp's
    predicates (read from the array: the lanes' values before the instruction), masked by this
    lane's member mask."""
    mode = next(m for m in inst.mods if m in ("all", "any", "uni", "ballot"))
    ops = inst.operands
    if ops[1][0] != "reg" or ops[1][1] not in g.func.regs or not g._is_pred(ops[1][1]):
        raise Skip("vote source")
    base, _ = _whole_warp(g)
    b = g.b
    ptr, neg = g.cross_ptr(ops[1][1]), ops[1][2]

    def step(acc, j, lane):
        bit = b.icmp_unsigned("!=", b.load(b.gep(ptr, [lane])), ir.Constant(I8, 0))
        if neg:
            bit = b.not_(bit)
        return b.or_(acc, b.shl(b.zext(bit, I32), b.trunc(j, I32)))
    member = _member(g, ops, 2)
    p = b.and_(_fold_warp(g, base, ir.Constant(I32, 0), step), member)
    zero = ir.Constant(I32, 0)
    if mode == "ballot":
        g.write(ops[0], "b32", p)
        return
    res = {"any": lambda: b.icmp_unsigned("!=", p, zero), "all": lambda: b.icmp_unsigned("==", p, member),
           "uni": lambda: b.or_(b.icmp_unsigned("==", p, zero), b.icmp_unsigned("==", p, member))}[mode]()
    g.write(ops[0], "pred", res)


@gen("activemask")
def _activemask(g, inst):
    _whole_warp(g)
    g.write(inst.operands[0], "b32", ir.Constant(I32, 0xFFFFFFFF))


_REDUX = {"add": "add", "and": "and_", "or": "or_", "xor": "xor"}


@gen("redux")
def _redux(g, inst):
    """redux.sync over the lanes of this lane's member mask (warp.py's loop over j)."""
    opname = next(m for m in inst.mods if m in ("add", "min", "max", "and", "or", "xor"))
    t = inst.type
    ops = inst.operands
    if t not in ("u32", "s32", "b32") or ops[1][0] != "reg" or ops[1][2] or ops[1][1] not in g.func.regs \
            or g._is_pred(ops[1][1]):
        raise Skip("redux form")
    base, _ = _whole_warp(g)
    b = g.b
    ptr = g.cross_ptr(ops[1][1])
    member = _member(g, ops, 2)
    signed = t == "s32"
    ident = {"add": 0, "and": -1, "or": 0, "xor": 0, "min": 0x7FFFFFFF if signed else -1,
             "max": -0x80000000 if signed else 0}[opname]

    def step(acc, j, lane):
        v = g.to_type(b.load(b.gep(ptr, [lane])), "u", "b32")
        if opname in ("min", "max"):
            cmp = (b.icmp_signed if signed else b.icmp_unsigned)("<" if opname == "min" else ">", v, acc)
            new = b.select(cmp, v, acc)
        else:
            new = getattr(b, _REDUX[opname])(acc, v)
        on = b.icmp_unsigned("!=", b.and_(b.lshr(member, b.trunc(j, I32)), ir.Constant(I32, 1)), ir.Constant(I32, 0))
        return b.select(on, new, acc)
    g.write(ops[0], t, _fold_warp(g, base, ir.Constant(I32, ident & 0xFFFFFFFF), step))


@gen("membar", "fence")
def _fence(g, inst):
    """Memory is sequentially consistent in the emulator: fences order nothing further."""


def find_function(module):
    """``find(addr, end, ctx, lo*, hi*) -> i1``: is [addr, end) inside one live allocation? Binary
    search over the sorted allocation bounds (memory.valid); caches the hit in lo/hi."""
    fn = ir.Function(module, ir.FunctionType(I1, [I64, I64, I64.as_pointer(), I64.as_pointer(), I64.as_pointer()]),
                     "find_allocation")
    fn.linkage = "internal"
    addr, end, ctxp, lo_p, hi_p = fn.args
    entry = fn.append_basic_block("entry")
    b = ir.IRBuilder(entry)

    def field(name):
        return b.load(b.gep(ctxp, [ir.Constant(I32, SLOT[name])]))
    starts = b.inttoptr(field("starts"), I64.as_pointer())
    ends = b.inttoptr(field("ends"), I64.as_pointer())
    n = field("nbounds")
    loop, body, after = (fn.append_basic_block(x) for x in ("loop", "body", "after"))
    b.branch(loop)
    b.position_at_end(loop)
    lo = b.phi(I64)
    hi = b.phi(I64)
    lo.add_incoming(ir.Constant(I64, 0), entry)
    hi.add_incoming(n, entry)
    b.cbranch(b.icmp_signed("<", lo, hi), body, after)
    b.position_at_end(body)
    mid = b.lshr(b.add(lo, hi), ir.Constant(I64, 1))
    right = b.icmp_unsigned("<=", b.load(b.gep(starts, [mid])), addr)     # searchsorted side="right"
    lo.add_incoming(b.select(right, b.add(mid, ir.Constant(I64, 1)), lo), body)
    hi.add_incoming(b.select(right, hi, mid), body)
    b.branch(loop)
    b.position_at_end(after)
    k = b.sub(lo, ir.Constant(I64, 1))
    none = b.icmp_signed("<", k, ir.Constant(I64, 0))
    yes, no = fn.append_basic_block("check"), fn.append_basic_block("no")
    b.cbranch(none, no, yes)
    ir.IRBuilder(no).ret(ir.Constant(I1, 0))
    b.position_at_end(yes)
    s = b.load(b.gep(starts, [k]))
    e = b.load(b.gep(ends, [k]))
    ok = b.and_(b.icmp_unsigned(">=", addr, s), b.icmp_unsigned("<=", end, e))
    hit, miss = fn.append_basic_block("hit"), fn.append_basic_block("miss")
    b.cbranch(ok, hit, miss)
    ir.IRBuilder(miss).ret(ir.Constant(I1, 0))
    bh = ir.IRBuilder(hit)
    bh.store(s, lo_p)
    bh.store(e, hi_p)
    bh.ret(ir.Constant(I1, 1))
    return fn


from . import texture_native  # noqa: E402,F401  (registers tex: it builds on the helpers above)
