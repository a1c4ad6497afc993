"""A region's native function (see regions.py): the active lanes one after another, each through
its own path of loops and branches, from the region's start to its exit.

C signature::

    int32 region(int64 count, int64 *lanes, void **register_arrays, int64 *ctx,
                 int64 *st, int64 *records, int64 *spill)

``st``: [0] the lane (index into ``lanes``) to go on with, [1] the pc it resumes at, [2] the
thread-instruction budget of this call, [3] thread-instructions run (added), [4] the longest lane
path (max), [5] records so far. A lane that stops (a bail-out, a spin) writes a record
``(lane, pc * 2 + spun)`` and its registers live at that pc into its row of ``spill`` (one int64 per
register, zero-extended). Returns 0 when every lane is through or stopped, 1 when the budget ran out:
then the lane ``st[0]`` waits at the loop head ``st[1]`` with its registers in spill row ``count``,
and the next call resumes it.

Registers live in allocas (one per register the region names) that LLVM turns into SSA values;
each lane loads those live at its start from the register arrays and stores those live at the
exit, so temporaries never touch memory. The instructions themselves come from ``llvmgen``.
"""
from __future__ import annotations

from llvmlite import ir

from . import llvmgen as lg
from .llvmgen import I8, I32, I64, GENERATORS, GroupBuilder, Skip
from .memory import SHARED_WINDOW, WINDOW_SIZE


class RegionBuilder(GroupBuilder):
    """Emits one region function. The per-instruction code is GroupBuilder's (generators read
    registers with ``reg_storage`` and write them with ``set_reg``; here those go to allocas)."""

    def __init__(self, module, name, func, d, symbols, find_fn, code, start, end, live_in, spin_limit,
                 generic_shared_stops):
        self.func, self.d, self.symbols, self.find_fn = func, d, symbols, find_fn
        self.code, self.start, self.end, self.live_in = code, start, end, live_in
        self.spin_limit, self.generic_shared_stops = spin_limit, generic_shared_stops
        self.remat, self.check_only, self.bails = {}, False, 0
        self.regs, self.reg_slot, self.ptrs = [], {}, {}
        self.loaded, self.written, self.cur = set(), set(), {}
        self._lane_parts = None
        args = [I64, I64.as_pointer(), I8.as_pointer().as_pointer(), I64.as_pointer(), I64.as_pointer(),
                I64.as_pointer(), I64.as_pointer()]
        self.fn = ir.Function(module, ir.FunctionType(I32, args), name)
        self.count, self.lanes, self.regtab, self.ctxp, self.st, self.rec, self.spill = self.fn.args
        self.entry = self.fn.append_basic_block("entry")
        self.b = ir.IRBuilder(self.entry)
        self.ctx = lg._LazyCtx(self)
        self.slots = {}
        self._pc = self._bail = None

    # ---------------------------------------------------------------- registers in allocas
    def slot(self, name):
        s = self.slots.get(name)
        if s is None:
            with self.b.goto_block(self.entry):
                self.b.position_before(self.entry.terminator)
                s = self.slots[name] = self.b.alloca(self._st_ty(name), name=name.replace("%", "r_"))
        return s

    def reg_storage(self, name):
        if name not in self.func.regs:
            raise Skip(f"undeclared {name}")
        v = self.cur.get(name)
        if v is None:
            v = self.cur[name] = self.b.load(self.slot(name))
        return v

    def set_reg(self, name, v):
        self.cur[name] = v
        self.written.add(name)
        self.b.store(v, self.slot(name))

    def _local_var(self, name, init=None):
        with self.b.goto_block(self.entry):
            self.b.position_before(self.entry.terminator)
            p = self.b.alloca(I64, name=name)
            if init is not None:
                self.b.store(init, p)
        return p

    def _st_at(self, k):
        return self.b.gep(self.st, [ir.Constant(I32, k)])

    # ---------------------------------------------------------------- bail-outs stop the lane at its pc
    @property
    def bail_block(self):
        if self._bail is None:
            self._bail = self._stop(self._pc, 0, self._block_end - self._pc)
        return self._bail

    def bail_if(self, cond):
        self.bails += 1
        ok = self.fn.append_basic_block("ok")
        self.b.cbranch(cond, self.bail_block, ok)
        self.b.position_at_end(ok)

    def pointer(self, space, addr, size):
        if space == "generic" and self.generic_shared_stops:
            b = self.b
            self.bail_if(b.icmp_unsigned("<", b.sub(addr, ir.Constant(I64, SHARED_WINDOW)),
                                         ir.Constant(I64, WINDOW_SIZE)))
        return super().pointer(space, addr, size)

    def emit(self, inst):
        gen = GENERATORS.get(inst.opcode)
        if gen is None:
            raise Skip(inst.opcode)
        g = inst.guard
        if g is None:
            gen(self, inst)
            return
        if g[0] not in self.func.regs:
            raise Skip("guard")
        pv = self.to_type(self.reg_storage(g[0]), "p", "pred")
        if g[1]:
            pv = self.b.not_(pv)
        before = dict(self.cur)
        with self.b.if_then(pv):
            gen(self, inst)
        self.cur = {n: v for n, v in before.items() if self.cur.get(n) is v}

    # ---------------------------------------------------------------- the function
    def build(self, named, inputs, outputs, spill_cols):
        """Emit everything: ``named`` are the registers the region names (an alloca each),
        ``inputs`` are loaded at the start, ``outputs`` stored at the exit, ``spill_cols``
        (register -> column) saved by a stopping lane (those live at its pc)."""
        b = self.b
        code, s, e = self.code, self.start, self.end
        self.spill_cols = spill_cols
        self.nspill = max(len(spill_cols), 1)
        head = self.fn.append_basic_block("lane")
        b.branch(head)
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            self.k0 = b.load(self._st_at(0))
            self.resume = b.load(self._st_at(1))
            self.budget = b.load(self._st_at(2))
        self.k = self._local_var("k", self.k0)
        self.total = self._local_var("total", ir.Constant(I64, 0))
        self.most = self._local_var("most", ir.Constant(I64, 0))
        self.nrec = self._local_var("nrec")
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            b.store(b.load(self._st_at(5)), self.nrec)
        self.cnt = self._local_var("cnt")
        self.spin = self._local_var("spin")
        for name in sorted(named):
            self.slot(name)
        # lane loop
        b.position_at_end(head)
        kk = b.load(self.k)
        body, done = self.fn.append_basic_block("body"), self.fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("<", kk, self.count), body, done)
        b.position_at_end(body)
        self.lane = b.load(b.gep(self.lanes, [kk]), name="lane")
        self.body = body
        b.store(ir.Constant(I64, 0), self.cnt)
        b.store(ir.Constant(I64, 0), self.spin)
        # blocks of the region
        branches = [p for p in range(s, e) if code[p][2].opcode == "bra" and code[p][3] is not None]
        leaders = {s} | {code[p][3] for p in branches if s <= code[p][3] < e} | {p + 1 for p in branches if p + 1 < e}
        leaders = sorted(leaders)
        self.blocks = {q: self.fn.append_basic_block(f"pc{q}") for q in leaders}
        heads = sorted({code[p][3] for p in branches if code[p][3] <= p})
        self.exit = self.fn.append_basic_block("exit")
        # where a lane starts: the region's start, or the loop head it was suspended at
        init_s = self.fn.append_basic_block("init")
        pcv = b.select(b.icmp_signed("==", kk, self.k0), self.resume, ir.Constant(I64, -1))
        sw = b.switch(pcv, init_s)
        b.position_at_end(init_s)
        for name in inputs:
            b.store(self._load_reg(name), self.slot(name))
        b.branch(self.blocks[s])
        for q in heads:
            bb = self.fn.append_basic_block(f"resume{q}")
            sw.add_case(ir.Constant(I64, q), bb)
            b.position_at_end(bb)
            row = b.mul(self.count, ir.Constant(I64, self.nspill))
            for name in sorted(self.live_in[q] & (set(spill_cols) | set(inputs))):
                if name in spill_cols:
                    raw = b.load(b.gep(self.spill, [b.add(row, ir.Constant(I64, spill_cols[name]))]))
                    v = b.trunc(raw, self._st_ty(name)) if self._st_ty(name).width < 64 else raw
                else:
                    v = self._load_reg(name)
                b.store(v, self.slot(name))
            b.branch(self.blocks[q])
        # the code
        for k, q in enumerate(leaders):
            qe = leaders[k + 1] if k + 1 < len(leaders) else e
            b.position_at_end(self.blocks[q])
            self.cur = {}
            b.store(b.add(b.load(self.cnt), ir.Constant(I64, qe - q)), self.cnt)
            for p in range(q, qe):
                kind, _, inst, aux = code[p]
                if inst.opcode == "bra":
                    self._branch(p, inst, aux)
                    break
                self._pc, self._block_end, self._bail = p, qe, None
                self.emit(inst)
            else:
                b.branch(self.exit if qe == e else self.blocks[qe])
        # lane through: store what lives on, count, next lane
        b.position_at_end(self.exit)
        for name in outputs:
            self._store_reg(name, b.load(self.slot(name)))
        self._lane_done(b)
        b.branch(head)
        b.position_at_end(done)
        b.store(self.count, self._st_at(0))
        self._report(b, b.load(self.total), b.load(self.most))
        b.ret(ir.Constant(I32, 0))

    def _lane_done(self, b):
        c = b.load(self.cnt)
        b.store(b.add(b.load(self.total), c), self.total)
        m = b.load(self.most)
        b.store(b.select(b.icmp_signed(">", c, m), c, m), self.most)
        b.store(b.add(b.load(self.k), ir.Constant(I64, 1)), self.k)

    def _report(self, b, total, most):
        b.store(b.add(b.load(self._st_at(3)), total), self._st_at(3))
        m = b.load(self._st_at(4))
        b.store(b.select(b.icmp_signed(">", most, m), most, m), self._st_at(4))
        b.store(b.load(self.nrec), self._st_at(5))

    def _save(self, b, pc, row):
        for name in sorted(self.live_in[pc]):
            col = self.spill_cols.get(name)
            if col is None:
                continue
            v = b.load(self.slots[name])
            v = b.zext(v, I64) if v.type.width < 64 else v
            b.store(v, b.gep(self.spill, [b.add(b.mul(row, ir.Constant(I64, self.nspill)), ir.Constant(I64, col))]))

    def _stop(self, pc, spun, not_run):
        """A block that stops the lane at ``pc``: a record, its live registers, the next lane."""
        bb = self.fn.append_basic_block(f"stop{pc}")
        b = ir.IRBuilder(bb)
        j = b.load(self.nrec)
        two = b.mul(j, ir.Constant(I64, 2))
        b.store(self.lane, b.gep(self.rec, [two]))
        b.store(ir.Constant(I64, pc * 2 + spun), b.gep(self.rec, [b.add(two, ir.Constant(I64, 1))]))
        self._save(b, pc, j)
        b.store(b.add(j, ir.Constant(I64, 1)), self.nrec)
        if not_run:
            b.store(b.sub(b.load(self.cnt), ir.Constant(I64, not_run)), self.cnt)
        self._lane_done(b)
        b.branch(self.fn.basic_blocks[1])          # the lane loop's head
        return bb

    def _edge(self, p, t):
        """The block a lane goes to from pc ``p`` to ``t``: the exit, a loop head (through the
        spin and budget checks), or the block at ``t``."""
        if t == self.end:
            return self.exit
        if t > p:
            return self.blocks[t]
        bb = self.fn.append_basic_block(f"back{p}")
        b = ir.IRBuilder(bb)
        from . import regions
        if regions.spins(self.code, t, p):
            n = b.add(b.load(self.spin), ir.Constant(I64, 1))
            b.store(n, self.spin)
            go = self.fn.append_basic_block(f"turn{p}")
            b.cbranch(b.icmp_signed(">=", n, ir.Constant(I64, self.spin_limit)), self._stop(t, 1, 0), go)
            b = ir.IRBuilder(go)
        suspend = self.fn.append_basic_block(f"suspend{p}")
        used = b.add(b.load(self.total), b.load(self.cnt))
        b.cbranch(b.icmp_signed(">=", used, self.budget), suspend, self.blocks[t])
        b = ir.IRBuilder(suspend)
        self._save(b, t, self.count)
        b.store(b.load(self.k), self._st_at(0))
        b.store(ir.Constant(I64, t), self._st_at(1))
        self._report(b, used, b.load(self.most))
        b.ret(ir.Constant(I32, 1))
        return bb

    def _branch(self, p, inst, target):
        b = self.b
        if target is None or not (self.start <= target <= self.end):
            raise Skip("branch out of the region")
        g = inst.guard
        if g is None:
            b.branch(self._edge(p, target))
            return
        pv = self.to_type(self.reg_storage(g[0]), "p", "pred")
        if g[1]:
            pv = b.not_(pv)
        b.cbranch(pv, self._edge(p, target), self._edge(p, p + 1))
