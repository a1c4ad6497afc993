"""A region's native function (see regions.py): the active lanes one after another, each through
its own path of loops and branches, from the region's start to its exit.

C signature::

    int32 region(int64 count, int64 *lanes_or_null, void **register_arrays, int64 *ctx,
                 int64 *st, int64 *records, int64 *spill, int64 *state)

Lanes go in chunks of ``CHUNK``. In a loop that touches global memory the lanes of a chunk take
turns, ``TURN`` iterations each (a lane *parks* at the loop head: its registers live there into its row
of ``spill``, one int64 per register, zero-extended; its pc, instruction count and spin count into
``state[k] = (pc, count, spins)``, pc -1: not started, -2: through), so they walk through memory
side by side as the threads of a warp do (a grid-stride loop run one thread after another would
jump by the grid's size at every access; a few iterations a turn keep the cost of parking small).
Other loops run straight through. A gang loop's lanes, once waiting at its head, run in gangs
of ``GANG`` (``_gang``; regions.py, "Gangs"): a gang's lanes ``k .. k + GANG - 1`` wait in
``state`` like any lane, at the loop's head or after its end.

``st``: [0] the first lane (index into ``lanes``) of the chunk to go on with, [2] the
thread-instruction budget of this call, [3] thread-instructions run (added), [4] the longest lane
path (max), [5] records so far. A lane that stops (a bail-out, a spin) writes a record
``(k, pc * 2 + spun)`` and its registers live at that pc into its row. Returns 0 when every lane is
through or stopped, 1 when the budget ran out: the lanes wait in ``state`` and the next call goes on.

Registers live in allocas (one per register the region names) that LLVM turns into SSA values;
each lane loads those live at its start from the register arrays and stores those live at the
exit, so temporaries never touch memory. The instructions themselves come from ``llvmgen``.
"""
from __future__ import annotations

from llvmlite import ir

from . import llvmgen as lg
from . import regions as rg
from . import async_native  # noqa: F401  (the cp generator, for regions with cuts)
from . import warpvec
from .decode import _regs
from .engine import K_BRA
from .llvmgen import I1, I8, I32, I64, GENERATORS, GroupBuilder, Skip
from .memory import SHARED_WINDOW, WINDOW_SIZE


CHUNK = 128           # lanes that take turns in loops that touch global memory (see RegionBuilder._edge)
BUFFER_PAD = 32       # elements before and after a block's register buffer (CutRegionBuilder._buffered)
BUFFER_BYTES = 1 << 20  # stack the buffers of a block of 1024 threads may take (a thread's stack is 8 MiB)
TURN = 8              # iterations a lane runs per turn
GANG = 8              # lanes of a chunk that run a gang loop's iterations together (RegionBuilder._gang)


class RegionBuilder(GroupBuilder):
    """Emits one region function. The per-instruction code is GroupBuilder's (generators read
    registers with ``reg_storage`` and write them with ``set_reg``; here those go to allocas)."""

    gangs: dict = {}

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
                I64.as_pointer(), I64.as_pointer(), I64.as_pointer()]
        self.fn = ir.Function(module, ir.FunctionType(I32, args), name)
        self.count, self.lanes, self.regtab, self.ctxp, self.st, self.rec, self.spill, self.state = self.fn.args
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
        if self.__dict__.get("in_gang"):
            raise Skip("a gang loop's instruction may bail out")
        if self._bail is None:
            self._bail = self._stop(self._pc, 0, self._block_end - self._pc)
        return self._bail

    def bail_if(self, cond):
        self.bails += 1
        ok = self.fn.append_basic_block("ok")
        self.b.cbranch(cond, self.bail_block, ok)
        self.b.position_at_end(ok)

    def pointer(self, space, addr, size):
        if self.__dict__.get("in_gang") and self._pc in self.prechecked and space != "shared":
            # a gang's lanes access consecutive elements (_gang checked it): lane j's is lane 0's
            # pointer plus j elements, which lets LLVM see one vector access
            first = self.gang_pointers.get(self._pc)
            if first is None:
                first = self.gang_pointers[self._pc] = super().pointer(space, addr, size)
                return first
            return self.b.gep(first, [ir.Constant(I64, self.gang_lane * lg.mem_access(self.code[self._pc][2])[2])])
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
    def _chunks(self, chunk, named, c_first, nrec0, size, extra):
        """The call's counters as allocas that LLVM keeps in registers (``c``: the chunk's first
        lane, ``c1``: past its last, ``k``: the lane, the totals, ``extra``), a slot per register
        of ``named``, and at ``chunk`` the test that ends the call when every chunk is done.
        Leaves the builder where a chunk starts (``c1`` stored); returns (c, c1, done block)."""
        b = self.b
        self.c = self._local_var("c", c_first)
        self.c1, self.k = self._local_var("c1"), self._local_var("k")
        self.total = self._local_var("total", ir.Constant(I64, 0))
        self.most = self._local_var("most", ir.Constant(I64, 0))
        self.nrec = self._local_var("nrec", nrec0)
        for name in ("cnt",) + extra:
            setattr(self, name, self._local_var(name))
        for name in sorted(named):
            self.slot(name)
        b.position_at_end(chunk)
        c = b.load(self.c)
        first, done = self.fn.append_basic_block("first"), self.fn.append_basic_block("done")
        b.cbranch(b.icmp_signed("<", c, self.count), first, done)
        b.position_at_end(first)
        c1 = b.add(c, size)
        c1 = b.select(b.icmp_signed("<", c1, self.count), c1, self.count)
        b.store(c1, self.c1)
        return c, c1, done

    def _lane_of(self, kk, pick, name=""):
        """At ``pick``: the lane of counter ``kk``: ``lanes[kk]``, or ``kk`` itself when ``lanes`` is
        null (every lane of the batch runs: no list to read). Leaves the builder in the lane's body."""
        b = self.b
        b.position_at_end(pick)
        listed, body = self.fn.append_basic_block(f"{name}listed"), self.fn.append_basic_block(f"{name}body")
        b.cbranch(b.icmp_unsigned("!=", self.lanes, ir.Constant(I64.as_pointer(), None)), listed, body)
        b.position_at_end(listed)
        from_list = b.load(b.gep(self.lanes, [kk]))
        b.branch(body)
        b.position_at_end(body)
        self.lane = b.phi(I64, name="lane")
        self.lane.add_incoming(from_list, listed)
        self.lane.add_incoming(kk, pick)
        self.body = body

    def build(self, named, inputs, outputs, spill_cols, turn_loops, gangs=None):
        """Emit everything: ``named`` are the registers the region names (an alloca each),
        ``inputs`` are loaded at the start, ``outputs`` stored at the exit, ``spill_cols``
        (register -> column) saved in the lane's row where it waits or stops (those live at its
        pc); ``turn_loops``: the back-edge pcs after which the lane hands over to the next one;
        ``gangs``: {head: back edge} of the turn loops whose lanes go in gangs (``_gang``)."""
        b = self.b
        code, s, e = self.code, self.start, self.end
        self.spill_cols, self.turn_loops = spill_cols, set(turn_loops)
        self.gangs = gangs = dict(gangs or {}) if turn_loops else {}
        self.inputs = inputs
        self.turns = bool(turn_loops)      # else no lane waits between rounds: no state but the resumed lane's
        self.nspill = max(len(spill_cols), 1)
        chunk = self.fn.append_basic_block("chunk")
        b.branch(chunk)
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            c_first = b.load(self._st_at(0))
            self.resume_pc = b.load(self._st_at(1))
            self.budget = b.load(self._st_at(2))
            nrec0 = b.load(self._st_at(5))
        self.c_first = c_first
        # chunks of CHUNK lanes; each chunk in rounds until all its lanes are through
        c, c1, done = self._chunks(chunk, named, c_first, nrec0, ir.Constant(I64, CHUNK),
                                   ("left", "base", "spin", "turn", "turn_limit"))
        # the lead lane of the gang whose check failed last: its lanes run this round alone (_gang)
        self.solo = self._local_var("solo", ir.Constant(I64, -GANG))
        round_ = self.fn.append_basic_block("round")
        if self.turns:
            # st[1]: lanes below it have their state; a chunk's lanes get theirs when it starts
            fresh, init = self.fn.append_basic_block("fresh"), self.fn.append_basic_block("init_state")
            b.cbranch(b.icmp_signed(">=", c, b.load(self._st_at(1))), fresh, round_)
            b.position_at_end(fresh)
            b.store(c1, self._st_at(1))
            b.store(c, self.k)
            b.branch(init)
            b.position_at_end(init)
            kk = b.load(self.k)
            b.store(ir.Constant(I64, -1), self._state(kk, 0))
            b.store(ir.Constant(I64, 0), self._state(kk, 1))
            b.store(ir.Constant(I64, 0), self._state(kk, 2))
            nk = b.add(kk, ir.Constant(I64, 1))
            b.store(nk, self.k)
            b.cbranch(b.icmp_signed("<", nk, c1), init, round_)
        else:
            b.branch(round_)
        b.position_at_end(round_)
        b.store(c, self.k)
        b.store(ir.Constant(I64, 0), self.left)
        self.head = head = self.fn.append_basic_block("lane")
        b.branch(head)
        b.position_at_end(head)
        kk = self.kk = b.load(self.k)
        look, ends = self.fn.append_basic_block("look"), self.fn.append_basic_block("round_end")
        b.cbranch(b.icmp_signed("<", kk, b.load(self.c1)), look, ends)
        b.position_at_end(ends)
        again, next_chunk = self.fn.append_basic_block("again"), self.fn.append_basic_block("next_chunk")
        b.cbranch(b.icmp_signed("!=", b.load(self.left), ir.Constant(I64, 0)), again, next_chunk)
        b.position_at_end(again)
        b.store(b.load(self.c), self.k)
        b.store(ir.Constant(I64, 0), self.left)
        b.branch(head)
        b.position_at_end(next_chunk)
        b.store(b.load(self.c1), self.c)
        b.branch(chunk)
        self.next_lane = self.fn.append_basic_block("next_lane")
        b.position_at_end(self.next_lane)
        b.store(b.add(b.load(self.k), ir.Constant(I64, 1)), self.k)
        b.branch(head)
        b.position_at_end(look)
        pick = self.fn.append_basic_block("pick")
        gang_starts = {h: self.fn.append_basic_block(f"gang{h}") for h in gangs}
        if self.turns:
            pc_now = b.load(self._state(kk, 0))
            sel = self.fn.append_basic_block("gang_or_lane") if gangs else pick
            b.cbranch(b.icmp_signed("==", pc_now, ir.Constant(I64, -2)), self.next_lane, sel)
            if gangs:
                self._gang_test(sel, pc_now, kk, gang_starts, pick)
        else:                  # only the first lane of a call may resume (at st[1], from its row)
            pc_now = b.select(b.icmp_signed("==", kk, self.c_first), self.resume_pc, ir.Constant(I64, -1))
            b.branch(pick)
        self._lane_of(kk, pick)
        b.store(ir.Constant(I64, 0), self.turn)
        if gangs:       # a lane whose gang can form hands over after one turn of a gang loop
            off = b.sub(kk, b.load(self.c))
            whole = b.icmp_signed("<=", b.add(b.sub(off, b.and_(off, ir.Constant(I64, GANG - 1))),
                                              ir.Constant(I64, GANG)), b.sub(b.load(self.c1), b.load(self.c)))
            alone = self._in_solo_gang(kk)
            b.store(b.select(b.and_(whole, b.not_(alone)), ir.Constant(I64, 1), ir.Constant(I64, TURN)),
                    self.turn_limit)
        if self.turns:
            cnt = b.load(self._state(kk, 1))
            b.store(cnt, self.cnt)
            b.store(cnt, self.base)
            b.store(b.load(self._state(kk, 2)), self.spin)
        else:
            b.store(ir.Constant(I64, 0), self.cnt)
            b.store(ir.Constant(I64, 0), self.base)
            b.store(ir.Constant(I64, 0), self.spin)
        # blocks of the region
        branches = [p for p in range(s, e) if code[p][2].opcode == "bra" and code[p][3] is not None]
        leaders = {s} | {code[p][3] for p in branches if s <= code[p][3] < e} | {p + 1 for p in branches if p + 1 < e}
        leaders = sorted(leaders)
        self.blocks = {q: self.fn.append_basic_block(f"pc{q}") for q in leaders}
        heads = sorted({code[p][3] for p in branches if code[p][3] <= p} | {p + 1 for p in gangs.values()})
        self.exit = self.fn.append_basic_block("exit")
        # where a lane goes on: the start (-1), or the loop head it waits at
        init_s = self.fn.append_basic_block("init")
        sw = b.switch(pc_now, init_s)
        b.position_at_end(init_s)
        for name in inputs:
            b.store(self._load_reg(name), self.slot(name))
        b.branch(self.blocks[s])
        for q in heads:
            bb = self.fn.append_basic_block(f"resume{q}")
            sw.add_case(ir.Constant(I64, q), bb)
            b.position_at_end(bb)
            row = b.mul(kk, ir.Constant(I64, self.nspill))
            for name in sorted(self.live_in[q] & (set(spill_cols) | set(inputs))):
                if name in spill_cols:
                    raw = b.load(b.gep(self.spill, [b.add(row, ir.Constant(I64, spill_cols[name]))]))
                    v = b.trunc(raw, self._st_ty(name)) if self._st_ty(name).width < 64 else raw
                else:
                    v = self._load_reg(name)
                b.store(v, self.slot(name))
            b.branch(self.blocks[q] if q < e else self.exit)
        self._emit_code(leaders, e)
        for h, p in gangs.items():
            self._gang(h, p, gang_starts[h], pick, kk)
        # a lane through: store what lives on, count, next lane
        b.position_at_end(self.exit)
        for name in outputs:
            self._store_reg(name, b.load(self.slot(name)))
        self._lane_done(b)
        b.branch(self.next_lane)
        b.position_at_end(done)
        b.store(self.count, self._st_at(0))
        self._report(b)
        b.ret(ir.Constant(I32, 0))

    def _emit_code(self, leaders, end):
        """The instructions of the blocks at ``leaders`` (up to ``end``, where ``self.exit`` waits),
        each block adding its length to the lane's count. A barrier (a cut: CutRegionBuilder)
        emits nothing: every thread of the block is there."""
        b, code = self.b, self.code
        for k, q in enumerate(leaders):
            qe = leaders[k + 1] if k + 1 < len(leaders) else end
            b.position_at_end(self.blocks[q])
            self.cur = {}
            b.store(b.add(b.load(self.cnt), ir.Constant(I64, qe - q)), self.cnt)
            for p in range(q, qe):
                kind, _, inst, aux = code[p]
                if inst.opcode == "bra":
                    self._branch(p, inst, aux)
                    break
                if inst.opcode in ("bar", "barrier"):
                    continue
                self._pc, self._block_end, self._bail = p, qe, None
                self.emit(inst)
            else:
                b.branch(self.exit if qe == end else self.blocks[qe])

    def _state(self, kk, col):
        return self.b.gep(self.state, [self.b.add(self.b.mul(kk, ir.Constant(I64, 3)), ir.Constant(I64, col))])

    def _counted(self, b):
        """Add the lane's instructions since it was picked up to the call's total."""
        c = b.load(self.cnt)
        b.store(b.add(b.load(self.total), b.sub(c, b.load(self.base))), self.total)
        return c

    def _lane_done(self, b):
        c = self._counted(b)
        m = b.load(self.most)
        b.store(b.select(b.icmp_signed(">", c, m), c, m), self.most)
        if self.turns:
            b.store(ir.Constant(I64, -2), self._state_b(b, 0))

    def _state_b(self, b, col):
        return b.gep(self.state, [b.add(b.mul(self.kk, ir.Constant(I64, 3)), ir.Constant(I64, col))])

    def _st_at_b(self, b, k):
        return b.gep(self.st, [ir.Constant(I32, k)])

    def _report(self, b):
        b.store(b.add(b.load(self._st_at_b(b, 3)), b.load(self.total)), self._st_at_b(b, 3))
        m, most = b.load(self._st_at_b(b, 4)), b.load(self.most)
        b.store(b.select(b.icmp_signed(">", most, m), most, m), self._st_at_b(b, 4))
        b.store(b.load(self.nrec), self._st_at_b(b, 5))

    def _save(self, b, pc):
        row = b.mul(self.kk, ir.Constant(I64, self.nspill))
        for name in sorted(self.live_in[pc]):
            col = self.spill_cols.get(name)
            if col is None:
                continue
            v = b.load(self.slots[name])
            v = b.zext(v, I64) if v.type.width < 64 else v
            b.store(v, b.gep(self.spill, [b.add(row, ir.Constant(I64, col))]))

    def _stop(self, pc, spun, not_run):
        """A block that stops the lane at ``pc``: a record, its live registers, the next lane."""
        bb = self.fn.append_basic_block(f"stop{pc}")
        b = ir.IRBuilder(bb)
        j = b.load(self.nrec)
        two = b.mul(j, ir.Constant(I64, 2))
        b.store(self.kk, b.gep(self.rec, [two]))
        b.store(ir.Constant(I64, pc * 2 + spun), b.gep(self.rec, [b.add(two, ir.Constant(I64, 1))]))
        self._save(b, pc)
        b.store(b.add(j, ir.Constant(I64, 1)), self.nrec)
        if not_run:
            b.store(b.sub(b.load(self.cnt), ir.Constant(I64, not_run)), self.cnt)
        self._lane_done(b)
        b.branch(self.next_lane)
        return bb

    def _park(self, b, t):
        """The lane waits at loop head ``t``: registers into its row, pc and counters into its
        state (without turns: the call returns and the next one resumes this lane first)."""
        self._save(b, t)
        if self.turns:
            b.store(ir.Constant(I64, t), self._state_b(b, 0))
            b.store(self._counted(b), self._state_b(b, 1))
            b.store(b.load(self.spin), self._state_b(b, 2))
        else:
            self._counted(b)
            b.store(ir.Constant(I64, t), self._st_at_b(b, 1))

    def _edge(self, p, t):
        """The block a lane goes to from pc ``p`` to ``t``: the exit, the block at ``t``, or for a
        loop's back edge the spin and budget checks and then the loop head (or, for a loop that
        touches global memory, the next lane: lanes take turns, one iteration each, so that they
        walk through memory side by side as a warp would)."""
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
        if p in self.turn_loops:
            n = b.add(b.load(self.turn), ir.Constant(I64, 1))
            b.store(n, self.turn)
            hand = self.fn.append_basic_block(f"hand{p}")
            limit = b.load(self.turn_limit) if self.gangs.get(t) == p else ir.Constant(I64, TURN)
            b.cbranch(b.icmp_signed("<", n, limit), self.blocks[t], hand)
            b = ir.IRBuilder(hand)
            self._park(b, t)
            b.store(ir.Constant(I64, 1), self.left)
            b.cbranch(b.icmp_signed(">=", b.load(self.total), self.budget), suspend, self.next_lane)
            b = ir.IRBuilder(suspend)
        else:
            used = b.add(b.load(self.total), b.sub(b.load(self.cnt), b.load(self.base)))
            b.cbranch(b.icmp_signed(">=", used, self.budget), suspend, self.blocks[t])
            b = ir.IRBuilder(suspend)
            self._park(b, t)
        b.store(b.load(self.c) if self.turns else self.kk, self._st_at_b(b, 0))
        self._report(b)
        b.ret(ir.Constant(I32, 1))
        return bb

    # ---------------------------------------------------------------- gangs: lanes of a chunk side by side
    def _gang_test(self, sel, pc_now, kk, starts, pick):
        """At ``sel``: lane ``kk`` leads a gang where it waits at a gang loop's head, starts a group
        of ``GANG`` lanes of its chunk (counted from the chunk's first lane), is not in the gang
        whose check failed last (``solo``: its lanes go on alone this round), and its ``GANG - 1``
        followers wait at the same head; else it goes on alone at ``pick``."""
        b = self.b
        b.position_at_end(sel)
        sw = b.switch(pc_now, pick)
        for h, start in starts.items():
            test, more = self.fn.append_basic_block(f"gang{h}_test"), self.fn.append_basic_block(f"gang{h}_more")
            sw.add_case(ir.Constant(I64, h), test)
            b.position_at_end(test)
            off = b.sub(kk, b.load(self.c))
            ok = b.and_(b.icmp_unsigned("==", b.and_(off, ir.Constant(I64, GANG - 1)), ir.Constant(I64, 0)),
                        b.icmp_signed("<=", b.add(kk, ir.Constant(I64, GANG)), b.load(self.c1)))
            b.cbranch(b.and_(ok, b.not_(self._in_solo_gang(kk))), more, pick)
            b.position_at_end(more)
            at = [b.icmp_signed("==", b.load(self._state(b.add(kk, ir.Constant(I64, j)), 0)), ir.Constant(I64, h))
                  for j in range(1, GANG)]
            every = at[0]
            for x in at[1:]:
                every = b.and_(every, x)
            b.cbranch(every, start, pick)

    def _in_solo_gang(self, kk):
        b = self.b
        return b.icmp_unsigned("<", b.sub(kk, b.load(self.solo)), ir.Constant(I64, GANG))

    def _gang(self, h, p, start, pick, kk):
        """A *gang*: lanes ``kk .. kk + GANG - 1``, all waiting at the head ``h`` of the one-block
        loop ``h..p`` (regions.gang_loops), run its iterations together, instruction by
        instruction across the lanes as lock step runs them (independent chains side by side:
        a reduction's adds overlap, and LLVM may pack them into vector instructions). Before each
        iteration every lane computes the addresses of the body's accesses (regions.prechecks),
        and one check of each access's lowest and highest address and alignment covers the gang;
        the body then runs unchecked. Where a check fails the lanes, all at ``h`` with nothing of
        the iteration run, go on alone (the first of them at once, at ``pick``; ``solo``), so a
        lane that would fault stops at its own instruction. The gang stops after ``TURN``
        iterations (lanes take turns, walking memory as a warp does), when the call's budget is
        spent, or when a lane leaves the loop: each lane then waits at ``h`` or at ``p + 1`` with
        its registers in its row (``_gang_park``)."""
        b, code = self.b, self.code
        body = list(range(h, p))
        size = ir.Constant(I64, p + 1 - h)          # the loop's block, as _emit_code counts it
        accesses, part = rg.prechecks(code, body, self.d.param_offsets)
        saved = self.slots, self.cur, self.lane, self.body, self._lane_parts, self.prechecked
        self.in_gang = True
        b.position_at_end(start)
        has_list = b.icmp_unsigned("!=", self.lanes, ir.Constant(I64.as_pointer(), None))
        dummy = self._local_var(f"gang{h}_nolist", ir.Constant(I64, 0))
        ks = [b.add(kk, ir.Constant(I64, j)) for j in range(GANG)]
        lanes = [b.select(has_list, b.load(b.select(has_list, b.gep(self.lanes, [k]), dummy)), k) for k in ks]
        ctxs = []           # per lane: [slots, current values, lane, (block, thread)]
        keep = sorted(self.live_in[h] & (set(self.spill_cols) | set(self.inputs)))
        for k, lane_k in zip(ks, lanes):
            self.slots, self.cur, self.lane, self.body, self._lane_parts = {}, {}, lane_k, start, None
            row = b.mul(k, ir.Constant(I64, self.nspill))
            for name in keep:
                if name in self.spill_cols:
                    raw = b.load(b.gep(self.spill, [b.add(row, ir.Constant(I64, self.spill_cols[name]))]))
                    v = b.trunc(raw, self._st_ty(name)) if self._st_ty(name).width < 64 else raw
                else:
                    v = self._load_reg(name)
                b.store(v, self.slot(name))
            ctxs.append([self.slots, {}, lane_k, None])
        iters = self._local_var(f"gang{h}_iters")
        b.store(ir.Constant(I64, 0), iters)
        found = {a: [self._local_var(f"gang{h}_{a}_{n}", ir.Constant(I64, 0)) for n in ("lo", "hi")] for a in accesses}
        it = self.fn.append_basic_block(f"gang{h}_iteration")
        b.branch(it)
        b.position_at_end(it)

        def lane(j):
            self.slots, self.cur, self.lane, self._lane_parts = ctxs[j][0], ctxs[j][1], ctxs[j][2], ctxs[j][3]

        def leave(j):
            ctxs[j][1], ctxs[j][3] = self.cur, self._lane_parts
        # every lane's addresses, computed on scratch copies of its registers (the body computes
        # them again): lowest, highest, and the OR of all (alignment)
        ranges = {}
        for j in range(GANG):
            lane(j)
            self.cur = {name: b.load(slot) for name, slot in ctxs[j][0].items()}
            self.slots = {}
            for q in sorted(set(part) | set(accesses)):
                self._pc = q
                inst = code[q][2]
                if q not in accesses:
                    self.emit(inst)
                    continue
                addr = self.address(lg.mem_access(inst)[1])
                if q not in ranges:
                    ranges[q] = [addr, addr, addr, ir.Constant(I1, 1)]
                elif rg._space(inst) == "shared":   # any addresses (a chunk's s[k], the same for every lane)
                    lo, hi, bits, seq = ranges[q]
                    ranges[q] = [lo, b.select(b.icmp_unsigned(">", addr, hi), addr, hi), b.or_(bits, addr), seq]
                else:       # lane j's element follows lane 0's by j (else the lanes go on alone)
                    lo, hi, bits, seq = ranges[q]
                    step = ir.Constant(I64, j * lg.mem_access(inst)[2])
                    ranges[q] = [lo, addr, b.or_(bits, addr), b.and_(seq, b.icmp_unsigned("==", b.sub(addr, lo), step))]
            ctxs[j][3] = self._lane_parts
        run = self.fn.append_basic_block(f"gang{h}_run")
        failed = self.fn.append_basic_block(f"gang{h}_failed")
        for a, (lo, hi, bits, seq) in ranges.items():
            nbytes = lg.mem_access(code[a][2])[2]
            aligned = b.icmp_unsigned("==", b.and_(bits, ir.Constant(I64, nbytes - 1)), ir.Constant(I64, 0))
            if rg._space(code[a][2]) == "shared":     # each lane's block has its own: the highest fits
                fine = self.fn.append_basic_block(f"gang{h}_{a}_ok")
                b.cbranch(b.and_(self.shared_fits(hi, nbytes), aligned), fine, failed)
                b.position_at_end(fine)
                continue
            end = b.add(hi, ir.Constant(I64, nbytes))
            flo, fhi = found[a]
            aligned = b.and_(seq, b.icmp_unsigned("==", b.and_(bits, ir.Constant(I64, nbytes - 1)),
                                                  ir.Constant(I64, 0)))
            inside = b.and_(b.icmp_unsigned(">=", lo, b.load(flo)), b.icmp_unsigned("<=", end, b.load(fhi)))
            slow, fine = self.fn.append_basic_block(f"gang{h}_{a}_find"), self.fn.append_basic_block(f"gang{h}_{a}_ok")
            b.cbranch(b.and_(inside, aligned), fine, slow)
            b.position_at_end(slow)
            hit = b.call(self.find_fn, [lo, end, self.ctxp, flo, fhi])
            b.cbranch(b.and_(hit, aligned), fine, failed)
            b.position_at_end(fine)
        b.branch(run)
        # the iteration, instruction by instruction across the lanes
        b.position_at_end(run)
        self.prechecked = frozenset(accesses)
        self.gang_pointers = {}
        for q in body:
            self._pc, self._block_end = q, p + 1
            for j in range(GANG):
                lane(j)
                self.gang_lane = j
                self.emit(code[q][2])
                leave(j)
        guard = code[p][2].guard
        goes = []
        for j in range(GANG):
            lane(j)
            g = self.to_type(self.reg_storage(guard[0]), "p", "pred")
            goes.append(b.not_(g) if guard[1] else g)
            leave(j)
        every = goes[0]
        for x in goes[1:]:
            every = b.and_(every, x)
        n = b.add(b.load(iters), ir.Constant(I64, 1))
        b.store(n, iters)
        spent = b.add(b.load(self.total), b.mul(b.mul(n, size), ir.Constant(I64, GANG)))
        more = b.icmp_signed("<", spent, self.budget)
        if not rg._reads_shared_only(code, h, p):     # (a block's own shared memory: no walk to keep in step)
            more = b.and_(b.icmp_signed("<", n, ir.Constant(I64, TURN)), more)
        after = self.fn.append_basic_block(f"gang{h}_after")
        b.cbranch(b.and_(every, more), it, after)
        # a lane leaves the loop, the gang's turn ends or the budget is spent: every lane waits
        b.position_at_end(after)
        self._gang_park(h, p, ks, lane, goes, iters, size)
        suspend, on = self.fn.append_basic_block(f"gang{h}_suspend"), self.fn.append_basic_block(f"gang{h}_on")
        b.cbranch(b.icmp_signed(">=", b.load(self.total), self.budget), suspend, on)
        b.position_at_end(on)
        b.store(ks[-1], self.k)
        b.branch(self.next_lane)
        b.position_at_end(suspend)
        b.store(b.load(self.c), self._st_at_b(b, 0))
        self._report(b)
        b.ret(ir.Constant(I32, 1))
        # a check failed: the lanes wait at the head (none has run the iteration); the first goes on alone
        b.position_at_end(failed)
        self._gang_park(h, p, ks, lane, None, iters, size)
        b.store(kk, self.solo)
        b.branch(pick)
        self.slots, self.cur, self.lane, self.body, self._lane_parts, self.prechecked = saved
        self.in_gang = False

    def _gang_park(self, h, p, ks, lane, goes, iters, size):
        """Each lane of a gang waits where it is (``h``, or ``p + 1`` where ``goes`` says it left
        the loop; None: all at ``h``), its registers live there in its row, its instructions
        counted."""
        b = self.b
        names = sorted((self.live_in[h] | self.live_in[p + 1]) & set(self.spill_cols))
        ran = b.mul(b.load(iters), size)
        for j, k in enumerate(ks):
            lane(j)
            row = b.mul(k, ir.Constant(I64, self.nspill))
            for name in names:
                if name not in self.slots:
                    continue            # (neither live at the head nor written by the body)
                v = b.load(self.slots[name])        # (its slot: the values where this block is reached)
                v = b.zext(v, I64) if v.type.width < 64 else v
                b.store(v, b.gep(self.spill, [b.add(row, ir.Constant(I64, self.spill_cols[name]))]))
            at = (ir.Constant(I64, h) if goes is None
                  else b.select(goes[j], ir.Constant(I64, h), ir.Constant(I64, p + 1)))
            b.store(at, self._state(k, 0))
            count = self._state(k, 1)
            b.store(b.add(b.load(count), ran), count)
        b.store(b.add(b.load(self.total), b.mul(ran, ir.Constant(I64, len(ks)))), self.total)
        b.store(ir.Constant(I64, 1), self.left)

    def _check_target(self, p, target):
        if target is None or not (self.start <= target <= self.end):
            raise Skip("branch out of the region")

    def _branch(self, p, inst, target):
        b = self.b
        self._check_target(p, target)
        g = inst.guard
        if g is None:
            b.branch(self._edge(p, target))
            return
        pv = self.to_type(self.reg_storage(g[0]), "p", "pred")
        if g[1]:
            pv = b.not_(pv)
        b.cbranch(pv, self._edge(p, target), self._edge(p, p + 1))


class CutRegionBuilder(RegionBuilder):
    """Emits a region with cuts (regions.py, "Cuts"): one block of threads (a *chunk*) at a time;
    each segment runs lane by lane, its cut first (a shuffle reads its source where every lane
    of the chunk has stored it by then): values that cross a cut wait in buffers of the block's
    threads (``_buffered``), except *uniform* ones (``remat``: kernel parameters, thread and block indices, shared
    addresses, and integer arithmetic on them, a few instructions each), which each segment
    computes again. The chunk goes from segment to segment as the block's jumps (regions.skeleton)
    lead it, and a segment runs in phases, a loop over the chunk's lanes each (regions.phases).
    Segments hold no loops, so a lane never parks: the call returns for the watchdog between
    chunks (``st[0]``: the next chunk's first lane) and at backward jumps (``st[1]``: the loop
    head the chunk goes on at). ``st[6]``: where every chunk starts (a loop head: Runner.entry),
    or -1. A lane that stops sets the chunk's flag; the chunk's other lanes finish the segment and
    the chunk ends there (regions.Runner makes the stack entries, and computes the uniform values
    live there for the interpreter: cold code the native function need not hold)."""

    tables = True           # ex2.approx reads its table lane by lane (llvmgen._ex2)

    whole_warps = True          # vote, activemask and redux may be generated (llvmgen._whole_warp)
    one_d = False               # the version for one-dimensional blocks (special)
    warp_vectors = True         # runs of shuffle segments as 32-wide vectors (warpvec.py)
    two_d = False               # the version for blocks of rows (blockDim.z 1: _rows)
    tid_xy = None               # (threadIdx.x, threadIdx.y) of the lane, in the version for rows
    tid_xy64 = None             # the same, 64 bits wide (the lane loops' own counters)
    copies = False              # holds cp.async, commits and waits: a queue per block (async_native)

    def build_cuts(self, named, segs, spill_cols, remat):
        """``segs``: per segment a dict: ``first``, ``end`` (pcs), ``inputs``, ``outputs``,
        ``defined`` (registers it may write), ``remat`` (uniform registers it computes again, in
        order), ``phases`` (each its ``pcs`` in lock step's order, the position of its ``first`` and where
        lanes ``resume``), ``pos`` (pc -> position), ``unstored``; or, for a jump
        (regions.skeleton), ``jump`` (its target) and ``guard``. ``remat``: register -> its defining instruction."""
        b = self.b
        self.spill_cols_all, self.remat_defs = spill_cols, remat
        self.nspill = max(len(spill_cols), 1)
        self.turns, self.turn_loops = False, set()
        self.region_end = self.end
        chunk = self.fn.append_basic_block("chunk")
        b.branch(chunk)
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            c_first = b.load(self._st_at(0))
            resume = b.load(self._st_at(1))
            b.store(ir.Constant(I64, -1), self._st_at(1))
            entry = self.entry_pc = b.load(self._st_at(6))
            self.budget = b.load(self._st_at(2))
            nrec0 = b.load(self._st_at(5))
            if self.copies:     # the block's cp.async queue (async_native: st[7] is its address)
                self.async_q = b.inttoptr(b.load(self._st_at(7)), I64.as_pointer())
        dims = [self.ctx[f] for f in ("bx", "by", "bz")]      # (loaded into the entry block first)
        buffered = self.buffered = self._buffered(named, segs)
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            self.threads = b.mul(b.mul(dims[0], dims[1]), dims[2])      # a block's threads: one chunk
            size = b.add(self.threads, ir.Constant(I64, 2 * BUFFER_PAD))
            buffers = {name: b.alloca(self._st_ty(name), size=size, name="buf_" + name.replace("%", ""))
                       for name in buffered}
            self.phase_at = b.alloca(I64, size=self.threads, name="phase_at")
        cv, _, done = self._chunks(chunk, named, c_first, nrec0, self.threads,
                                   ("seg_most", "path", "stopped", "resume", "taken"))
        with b.goto_block(self.entry):
            b.position_before(self.entry.terminator)
            b.store(resume, self.resume)
        # the chunk's block in the batch: chunks are whole blocks of the lane list (block-major)
        self.chunk_block = b.sdiv(cv, self.threads)
        # a buffer's element for lane L is [L - the block's first lane]: the lane indexes it as it
        # indexes the register's array
        shift = b.sub(ir.Constant(I64, BUFFER_PAD), b.mul(self.chunk_block, self.ctx["lpb"]))
        self.buffers = {name: b.gep(buf, [shift]) for name, buf in buffers.items()}
        b.store(ir.Constant(I64, 0), self.stopped)
        b.store(ir.Constant(I64, 0), self.path)
        self.chunk_end = chunk_end = self.fn.append_basic_block("chunk_end")
        self.region_exit = self.fn.append_basic_block("region_exit")
        self.leaves = self.fn.append_basic_block("leaves")
        self.returning = self._local_var("returning", ir.Constant(I64, 0))
        self.seg_blocks = {seg["first"]: self.fn.append_basic_block(f"seg{seg['first']}") for seg in segs}
        # the first chunk of a call may go on at a loop head (the last call returned there for the
        # watchdog); every chunk starts at st[6] where the interpreter entered at a loop head
        at = b.load(self.resume)
        at = b.select(b.icmp_signed(">=", at, ir.Constant(I64, 0)), at, entry)
        b.store(ir.Constant(I64, -1), self.resume)
        heads = {seg["jump"] for seg in segs if "jump" in seg and seg["jump"] <= seg["first"]} - {segs[0]["first"]}
        starts = [segs[0]["first"]] + sorted(heads)
        into = {pc: self.fn.append_basic_block(f"into{pc}") for pc in starts}
        sw = b.switch(at, into[starts[0]])
        for pc in starts[1:]:
            sw.add_case(ir.Constant(I64, pc), into[pc])
        for pc in starts:       # the buffers take the values live where the chunk starts from the arrays
            b.position_at_end(into[pc])
            self._copy(self.live_in[pc], to_arrays=False)
            b.branch(self.seg_blocks[pc])
        self.counted = set()        # jumps whose guards the segment before counts as its lanes finish
        runs = warpvec.plan(self, segs) if self.warp_vectors else {}
        in_runs = {seg["first"] for run in runs.values() for seg in run[1:]}
        for seg, after in zip(segs, segs[1:] + [None]):
            b.position_at_end(self.seg_blocks[seg["first"]])
            if seg["first"] in in_runs:
                b.unreachable()         # (a warp run's later segments: its first one runs them all)
            elif seg["first"] in runs:
                warpvec.emit(self, runs[seg["first"]])
                b.branch(self._next(runs[seg["first"]][-1]["end"]))
            elif "jump" in seg:
                self._jump(seg)
            else:
                seg["guard_at_end"] = after and "jump" in after and after["guard"]
                if seg["guard_at_end"]:
                    self.counted.add(after["first"])
                    b.store(ir.Constant(I64, 0), self.taken)
                self._segment(seg)
                b.branch(self._next(seg["end"]))
        b.position_at_end(self.region_exit)
        self._copy(self.live_in[self.region_end], to_arrays=True)
        b.branch(chunk_end)
        # the chunk leaves native code (a thread stopped, the block stopped at a jump or a failed
        # check, the call returns for the watchdog): every buffered register to its array, once
        # for all of them (what is dead there is overwritten before it is read)
        b.position_at_end(self.leaves)
        self._copy(buffered, to_arrays=True)
        back = self.fn.append_basic_block("returns")
        b.cbranch(b.icmp_signed("!=", b.load(self.returning), ir.Constant(I64, 0)), back, chunk_end)
        b.position_at_end(back)
        self._report(b)
        b.ret(ir.Constant(I32, 1))
        b.position_at_end(chunk_end)
        p, m = b.load(self.path), b.load(self.most)
        b.store(b.select(b.icmp_signed(">", p, m), p, m), self.most)
        c1 = b.load(self.c1)
        b.store(c1, self.c)
        suspend = self.fn.append_basic_block("suspend")
        more = b.icmp_signed(">=", b.load(self.total), self.budget)
        if self.copies:         # copies still queued: the Runner hands them to asyncops before the next block
            more = b.or_(more, b.icmp_signed("!=", b.load(b.gep(self.async_q, [ir.Constant(I64, 1)])), ir.Constant(I64, 0)))
        more = b.and_(more, b.icmp_signed("<", c1, self.count))
        b.cbranch(more, suspend, chunk)
        b.position_at_end(suspend)
        b.store(c1, self._st_at(0))
        self._report(b)
        b.ret(ir.Constant(I32, 1))
        b.position_at_end(done)
        b.store(self.count, self._st_at(0))
        self._report(b)
        b.ret(ir.Constant(I32, 0))

    def _buffered(self, named, segs):
        """Registers that cross a cut inside the region (written in it, live where a later segment
        starts): they wait for the next segment in buffers of one block's lanes on the stack, which
        stay in the core's cache, instead of in their arrays, the batch's lanes wide (megabytes:
        a store to them went to memory). The arrays see them only where the chunk leaves native
        code (``_copy``): at the region's end, where it stops or returns for the watchdog. Uniform
        values computed again in each segment are never stored at all."""
        unstored = next((set(seg["unstored"]) for seg in segs if "unstored" in seg), set())
        written = rg.defined(self.code, self.start, self.end) & set(named) & set(self.func.regs)
        # where a segment starts, and where lanes wait for a later phase of theirs (a tree
        # reduction's sum, loaded in one phase and stored to shared memory in the next)
        points = [seg["first"] for seg in segs[1:]]
        points += [r["pc"] for seg in segs for ph in seg.get("phases", ())[1:] for r in ph["resume"]]
        out, room = [], BUFFER_BYTES // (1024 + 2 * BUFFER_PAD)      # (a block has at most 1024 threads)
        crossing = frozenset().union(*(self.live_in[x] for x in set(points)))
        if self.two_d:
            # and, in the version for rows, those live after the region: a phase that stores them to
            # their arrays (pointers LLVM knows nothing of) made its vectorizer test each against
            # every memory access, before each row (globalToShmemAsyncCopy's tile: 1,400 lines of
            # tests for 16 threads); a buffer on the stack is known apart from all of them
            crossing |= self.live_in[self.region_end]
        for r in sorted((written - unstored) & crossing):
            size = self._st_ty(r).width // 8
            if size <= room:          # (the rest stay in their arrays: a CUB kernel names hundreds)
                out.append(r)
                room -= size
        return out

    def address(self, op):
        """In the version for rows, an access whose phase checked the block's corners
        (``_closed_rows``): the first thread's address plus the slopes times threadIdx, in 64 bits,
        which the check proved is every thread's own. Computed from the registers in 32 bits, a
        shared address is zero-extended after the add, and LLVM's loop vectorizer then tests each
        for a wrap-around before every row of threads (in a 16-thread row, the test took more time
        than the product)."""
        corners = self.__dict__.get("from_corners")
        if corners and self._pc in corners and self.tid_xy is not None:
            b = self.b
            at, kx, ky = corners[self._pc]
            x, y = self.tid_xy64
            return b.add(b.load(at), b.add(b.mul(x, ir.Constant(I64, kx)), b.mul(y, ir.Constant(I64, ky))))
        return super().address(op)

    def _reg_ptr(self, name, key=None):
        buf = self.__dict__.get("buffers", {}).get(name)
        return buf if buf is not None else super()._reg_ptr(name, key)

    def padded(self, name):
        return name in self.__dict__.get("buffers", {})

    def _state(self, kk, col):
        """Where a lane of the chunk waits in its segment (the position of its pc: ``_park``), in a
        buffer of one block's lanes on the stack: a ``state`` row per lane of the batch was
        megabytes of stores that went to memory, one per lane and phase."""
        return self.b.gep(self.phase_at, [self.b.sub(kk, self.b.load(self.c))])

    def _state_b(self, b, col):
        return b.gep(self.phase_at, [b.sub(self.kk, b.load(self.c))])

    def _copy(self, live, to_arrays):
        """The buffered registers of ``live`` between their buffers and their arrays, for every lane
        of the chunk (a loop of its own; the builder is left after it)."""
        names = [name for name in sorted(live) if name in self.buffers]
        if not names:
            return
        b = self.b
        nxt, after = self._lanes("to_arrays" if to_arrays else "from_arrays")
        for name in names:
            buf, arr = b.gep(self.buffers[name], [self.lane]), b.gep(super()._reg_ptr(name), [self.lane])
            src, dst = (buf, arr) if to_arrays else (arr, buf)
            b.store(b.load(src), dst)
        b.branch(nxt)
        b.position_at_end(after)

    def _next(self, pc):
        """The block-level code where the chunk goes on at ``pc``: a segment, or the region's exit."""
        return self.region_exit if pc == self.region_end else self.seg_blocks[pc]

    def _jump(self, seg):
        """A branch the block takes as one (regions.skeleton): every thread's guard is read from
        its register array; when they agree the chunk goes on at the target or after the branch
        (a backward one returns for the watchdog once the call's budget is spent: the next call
        goes on at the loop head); when they differ, the block stops at the branch and the
        interpreter takes it from there (a record ``(-1 - first lane of the chunk, pc * 2)``)."""
        b = self.b
        p, t, g = seg["first"], seg["jump"], seg["guard"]
        n = b.sub(b.load(self.c1), b.load(self.c))
        if g is None:
            taken = n
        elif p in self.counted:
            taken = b.load(self.taken)
        else:
            b.store(ir.Constant(I64, 0), self.taken)
            nxt, after = self._lanes(f"j{p}")
            pv = self.to_type(self._load_reg(g[0]), "p", "pred")
            if g[1]:
                pv = b.not_(pv)
            b.store(b.add(b.load(self.taken), b.zext(pv, I64)), self.taken)
            b.branch(nxt)
            b.position_at_end(after)
            taken = b.load(self.taken)
        every = b.icmp_signed("==", taken, n)
        go, split = self.fn.append_basic_block(f"j{p}_as_one"), self.fn.append_basic_block(f"j{p}_diverges")
        b.cbranch(b.or_(every, b.icmp_signed("==", taken, ir.Constant(I64, 0))), go, split)
        b.position_at_end(split)
        self._block_stops(p)
        b.position_at_end(go)
        b.store(b.add(b.load(self.total), n), self.total)
        b.store(b.add(b.load(self.path), ir.Constant(I64, 1)), self.path)
        target = self._next(t)
        if t <= p:
            back = self.fn.append_basic_block(f"j{p}_back")
            suspend = self.fn.append_basic_block(f"j{p}_suspend")
            b.position_at_end(back)
            b.cbranch(b.icmp_signed(">=", b.load(self.total), self.budget), suspend, target)
            b.position_at_end(suspend)
            b.store(b.load(self.c), self._st_at(0))
            b.store(ir.Constant(I64, t), self._st_at(1))
            b.store(ir.Constant(I64, 1), self.returning)
            b.branch(self.leaves)
            target = back
            b.position_at_end(go)
        b.cbranch(every, target, self._next(p + 1))

    def _block_stops(self, pc):
        """The chunk's block stops whole at ``pc`` (a jump its threads disagree on, a failed address
        check at a segment's start): a record of it (-1 - the chunk's first lane, 2 pc) for
        regions.Runner, the chunk's flag, and the chunk's end."""
        b = self.b
        j = b.load(self.nrec)
        two = b.mul(j, ir.Constant(I64, 2))
        b.store(b.sub(ir.Constant(I64, -1), b.load(self.c)), b.gep(self.rec, [two]))
        b.store(ir.Constant(I64, pc * 2), b.gep(self.rec, [b.add(two, ir.Constant(I64, 1))]))
        b.store(b.add(j, ir.Constant(I64, 1)), self.nrec)
        b.store(ir.Constant(I64, 1), self.stopped)
        b.branch(self.leaves)

    def _lane_of(self, kk, pick, name=""):
        """The lane of counter ``kk`` computed, not read from ``lanes``: a region with cuts runs only
        when every valid lane of the batch is active (Runner.__call__), so the list is the valid
        lanes, block-major, ``lpb`` apart: the chunk's block's first lane plus the thread's offset.
        No load and no branch per lane, so LLVM can vectorize the lane loops."""
        b = self.b
        b.position_at_end(pick)
        self.lane = b.add(b.mul(self.chunk_block, self.ctx["lpb"]), b.sub(kk, b.load(self.c)), name="lane")
        self.body = pick

    def _parts(self):
        """(block, thread index in the block) of this lane: the chunk's block, and the lane's
        offset from the block's first lane (lanes are block-major, lanes_per_block apart)."""
        if self._lane_parts is None:
            b = self.b
            lpb = self.ctx["lpb"]
            with b.goto_block(self.body):
                b.position_after(self.lane)
                t = b.sub(self.lane, b.mul(self.chunk_block, lpb))
            self._lane_parts = (self.chunk_block, t)
        return self._lane_parts

    def special(self, name, comp):
        """``one_d``: this function runs only blocks of one dimension (regions.Runner picks it where
        blockDim.y and .z are 1), so threadIdx.x is the lane's offset in its block, computed from the
        loop counter, and .y and .z are 0. Read from the batch's array instead, threadIdx is a value
        LLVM knows nothing about (a load per lane and segment; an address computed from it, a
        shared-memory histogram's ``local[tid]``, a stencil's ``s[t - 1]``, is an unknown one);
        computed, it is the loop's induction variable, known to step by one."""
        if self.one_d and name == "tid":
            _, t = self._parts()
            return self.b.trunc(t, I32) if comp == "x" else ir.Constant(I32, 0)
        if self.two_d and name == "tid":
            if self.tid_xy is None:
                raise Skip("threadIdx outside a loop over a block's rows")
            return dict(zip("xy", self.tid_xy)).get(comp, ir.Constant(I32, 0))
        return super().special(name, comp)

    def _lanes(self, name, lo=None, hi=None, step=None):
        """A loop over the chunk's lanes (or those of [lo, hi), every ``step``-th one: a run of
        ``_narrowed``): positions the builder in its body (``self.lane`` set) and returns
        (next-lane block, after-the-loop block)."""
        if self.two_d and lo is None and hi is None and step is None:
            return self._rows(name)
        self.tid_xy = None
        b = self.b
        b.store(b.load(self.c) if lo is None else lo, self.k)
        head = self.fn.append_basic_block(f"{name}_lane")
        b.branch(head)
        b.position_at_end(head)
        kk = self.kk = b.load(self.k)
        pick, after = self.fn.append_basic_block(f"{name}_pick"), self.fn.append_basic_block(f"{name}_done")
        b.cbranch(b.icmp_signed("<", kk, b.load(self.c1) if hi is None else hi), pick, after)
        nxt = self.fn.append_basic_block(f"{name}_next")
        b.position_at_end(nxt)
        b.store(b.add(b.load(self.k), ir.Constant(I64, 1) if step is None else step), self.k)
        b.branch(head)
        self._lane_of(kk, pick, f"{name}_")
        self._lane_parts, self.cur = None, {}
        return nxt, after

    def _rows(self, name):
        """``_lanes`` in the version for blocks of rows (blockDim.z 1; regions.Runner picks it): a
        loop over the block's rows (threadIdx.y) around a loop over a row's threads, whose counter
        gives threadIdx.x, so that, as in the 1-D version (``special``), an address made of
        threadIdx is one LLVM can follow: a tiled product's ``Bs[k][tx]`` is a vector load of a
        row's threads, ``As[ty][k]`` one load for all of them, where threadIdx read from the
        batch's arrays made both a gather. The lanes run in the same order as one loop's (a row's
        threads are consecutive lanes). Leaves the builder in the inner loop's body; returns
        (next-lane block, after-both-loops block)."""
        b = self.b
        if self.__dict__.get("row") is None:
            self.row = self._local_var("row")
        zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
        bx = self.ctx["bx"]
        b.store(zero, self.row)
        rows = self.fn.append_basic_block(f"{name}_row")
        b.branch(rows)
        b.position_at_end(rows)
        c, c1 = b.load(self.c), b.load(self.c1)
        r = b.load(self.row)
        start = b.add(c, b.mul(r, bx), name=f"{name}_row_start")
        row_in, after = self.fn.append_basic_block(f"{name}_row_in"), self.fn.append_basic_block(f"{name}_done")
        b.cbranch(b.icmp_signed("<", start, c1), row_in, after)
        b.position_at_end(row_in)
        end = b.add(start, bx)
        end = b.select(b.icmp_signed("<", end, c1), end, c1)
        b.store(start, self.k)
        head = self.fn.append_basic_block(f"{name}_lane")
        b.branch(head)
        b.position_at_end(head)
        kk = self.kk = b.load(self.k)
        pick, row_next = self.fn.append_basic_block(f"{name}_pick"), self.fn.append_basic_block(f"{name}_row_next")
        b.cbranch(b.icmp_signed("<", kk, end), pick, row_next)
        b.position_at_end(row_next)
        b.store(b.add(r, one), self.row)
        b.branch(rows)
        nxt = self.fn.append_basic_block(f"{name}_next")
        b.position_at_end(nxt)
        b.store(b.add(b.load(self.k), one), self.k)
        b.branch(head)
        self._lane_of(kk, pick, f"{name}_")
        self._lane_parts, self.cur = None, {}
        self.tid_xy64 = (b.sub(kk, start), r)
        self.tid_xy = tuple(b.trunc(v, I32) for v in self.tid_xy64)
        return nxt, after

    def _recompute(self, names, pc):
        """Emit the defining instructions of uniform registers ``names`` (in order) for this lane.
        The registers they read that are not among them come from their arrays (the region never
        writes them: compiled._segments), not from the slots, which hold whatever lane last ran a
        segment that read them (a lane's ``tid`` computed from the block's last lane's)."""
        b = self.b
        feeds = {x for name in names for o in self.remat_defs[name].operands[1:] for x in _regs(o)}
        for x in sorted(feeds - set(names)):
            b.store(self._load_reg(x), self.slot(x))
            self.cur.pop(x, None)
        for name in names:
            self._pc, self._block_end, self._bail = pc, pc, None
            self.emit(self.remat_defs[name])

    def _segment(self, seg):
        """A segment's phases, each a loop over the chunk's lanes; a lane that stopped ends the
        chunk after the segment."""
        b = self.b
        a = seg["first"]
        self.seg = seg
        g = seg["guard_at_end"]
        if self.copies:     # copies issued from here on come later in lock step's order
            async_native.new_segment(self)
        join = None
        if seg.get("uniform") and (not g or g[0] in seg["defined"]):
            once, each = self.fn.append_basic_block(f"s{a}_once"), self.fn.append_basic_block(f"s{a}_each")
            join = self.fn.append_basic_block(f"s{a}_joined")
            b.cbranch(b.icmp_signed("<", self.entry_pc, ir.Constant(I64, 0)), once, each)
            b.position_at_end(once)
            self._once(seg)
            b.branch(join)
            b.position_at_end(each)
        remat = set(seg["remat"]).union(*(r["remat"] for ph in seg["phases"] for r in ph["resume"]))
        self.spill_cols = {n: col for n, col in self.spill_cols_all.items() if n in seg["defined"] or n in remat}
        self.npos = len(seg["pos"])
        ends = [ph["first"] for ph in seg["phases"][1:]] + [self.npos]
        # (the version for rows runs blocks of several rows, where _narrowed keeps every lane)
        run = self._narrowed(seg["narrow"]) if seg.get("narrow") and not g and not self.two_d else None
        for k, (ph, w) in enumerate(zip(seg["phases"], ends)):
            self._phase(ph["pcs"], ph["first"], w, ph["resume"] if k else None, run, k == 0)
        go = self.fn.append_basic_block(f"s{a}_through")
        # (a stopped thread's block waits at the segment's end: its registers go to their arrays,
        # the stopped thread's own then come from its spill row)
        b.cbranch(b.icmp_signed("!=", b.load(self.stopped), ir.Constant(I64, 0)), self.leaves, go)
        b.position_at_end(go)
        if join is not None:
            b.branch(join)
            b.position_at_end(join)

    def _once(self, seg):
        """A segment of block-uniform arithmetic only (compiled._segments: ``uniform``; a tree
        reduction's ``stride >>= 1`` and its loop test) for a chunk that began at the region's start:
        run once, as the block's first thread, its results stored for every thread and the next
        jump's guard taken for all of them; counted as every thread running it. Nothing in it can
        stop a thread (no memory, no division)."""
        b = self.b
        a, z = seg["first"], seg["end"]
        n = b.sub(b.load(self.c1), b.load(self.c))
        self.lane = b.mul(self.chunk_block, self.ctx["lpb"], name="first_lane")
        self.body, self._lane_parts, self.cur = b.block, None, {}
        self.tid_xy = (ir.Constant(I32, 0), ir.Constant(I32, 0))
        self.tid_xy64 = (ir.Constant(I64, 0), ir.Constant(I64, 0))
        for name in seg["inputs"]:
            b.store(self._load_reg(name), self.slot(name))
        self._recompute(seg["remat"], a)
        for p in range(a, z):
            inst = self.code[p][2]
            if inst.opcode not in ("bar", "barrier"):
                self._pc, self._block_end, self._bail = p, z, None
                self.emit(inst)
        names = sorted(self.live_in[z] & seg["defined"] - set(seg["unstored"]))
        values = [self.reg_storage(name) for name in names]
        g = seg["guard_at_end"]
        if g:
            pv = self.to_type(self.reg_storage(g[0]), "p", "pred")
            b.store(b.select(b.not_(pv) if g[1] else pv, n, ir.Constant(I64, 0)), self.taken)
        span = ir.Constant(I64, z - a)
        b.store(b.add(b.load(self.total), b.mul(n, span)), self.total)
        b.store(b.add(b.load(self.path), span), self.path)
        if names:
            nxt, after = self._lanes(f"u{a}")
            for name, v in zip(names, values):
                self._store_reg(name, v)
            b.branch(nxt)
            b.position_at_end(after)

    def _narrowed(self, guard):
        """(lo, hi, left, span, step) for a segment that starts with a thread-index guard
        (regions.tid_guard): the lanes [lo, hi) of the chunk that stay (a prefix, a suffix or one
        thread; or every ``step``-th lane of the chunk, a lane-mask guard), and ``left`` lanes that
        leave for the segment's end after ``span`` instructions,
        which is all a leaving lane does there (no register it writes lives on; later phases find
        no lane of theirs among them).
        Only in a 1-D block (thread index = lane offset) of a chunk that began at the region's
        start (entered at a loop head, the interpreter's threads might not agree on U); else every
        lane stays. U is block-uniform (regions.block_uniform): the block's first thread's value."""
        b = self.b
        c, c1 = b.load(self.c), b.load(self.c1)
        n = b.sub(c1, c)
        u, plus = guard["U"], guard["plus"]
        if u[0] == "imm":
            v = u[1] & 0xFFFFFFFF
            bound = ir.Constant(I64, (v - (1 << 32) if guard["signed"] and v >> 31 else v) + plus)
        else:
            first = b.mul(self.chunk_block, self.ctx["lpb"])
            raw = b.load(b.gep(self._reg_ptr(u[1]), [first]))
            bound = b.add(b.sext(raw, I64) if guard["signed"] else b.zext(raw, I64), ir.Constant(I64, plus))
        zero = ir.Constant(I64, 0)
        m = b.select(b.icmp_signed("<", bound, zero), zero, bound)
        m = b.select(b.icmp_signed(">", m, n), n, m)
        one = ir.Constant(I64, 1)
        on = b.and_(b.and_(b.icmp_signed("==", self.ctx["by"], one), b.icmp_signed("==", self.ctx["bz"], one)),
                    b.icmp_signed("<", self.entry_pc, zero))
        if guard.get("step", 1) > 1:            # threads t with t % step == 0: every step-th lane
            step = ir.Constant(I64, guard["step"])
            stays = b.sdiv(b.add(n, ir.Constant(I64, guard["step"] - 1)), step)
            one_step = ir.Constant(I64, 1)
            return c, c1, b.select(on, b.sub(n, stays), zero), guard["span"], b.select(on, step, one_step)
        if guard["single"]:                     # thread U alone: [U, U + 1) within the block
            m1 = b.add(bound, one)
            m1 = b.select(b.icmp_signed("<", m1, zero), zero, m1)
            m1 = b.select(b.icmp_signed(">", m1, n), n, m1)
            lo, hi, left = b.add(c, m), b.add(c, m1), b.sub(n, b.sub(m1, m))
        elif guard["prefix"]:
            lo, hi, left = c, b.add(c, m), b.sub(n, m)
        else:
            lo, hi, left = b.add(c, m), c1, m
        return b.select(on, lo, c), b.select(on, hi, c1), b.select(on, left, zero), guard["span"], one

    def _phase(self, pcs, v, w, resume, run=None, first_phase=False):
        """The pcs ``pcs`` of a segment (lock step's positions [v, w)) for every lane of the chunk
        (or the lanes ``run`` keeps: ``_narrowed``): from the segment's start (``resume`` None), or
        for the lanes waiting at one of them (``state[k]``: the position of their pc) from there. A
        lane whose path leaves the phase waits where it goes, its registers live there in their
        arrays."""
        b = self.b
        b.store(ir.Constant(I64, 0), self.seg_most)
        single = resume is None or len(resume) == 1 and resume[0]["pc"] == pcs[0]
        accesses, part = rg.prechecks(self.code, pcs, self.d.param_offsets) if single else ([], [])
        skipped = rg.skipped(self.code, pcs, accesses)
        if first_phase:     # key -> the pc from which lanes that skipped the access may come (inf: none)
            self.checked_first = {}
            for a in accesses:
                key = self._address_key(a)
                if key is not None:
                    self.checked_first[key] = max(self.checked_first.get(key, -1), skipped.get(a, float("inf")))
        if accesses and not first_phase and all(a < self.checked_first.get(self._address_key(a), a)
                                                for a in accesses):
            # a tree reduction's store s[tid] after its loads: the first phase checked that address
            self.prechecked = frozenset(accesses)
            self._phase_lanes(pcs, v, w, resume, run)
            self.prechecked = frozenset()
        elif accesses:
            fast, slow, join = (self.fn.append_basic_block(f"s{pcs[0]}_{n}") for n in ("fast", "slow", "joined"))
            b.cbranch(self._precheck(pcs, v, resume, run, accesses, part), fast, slow)
            b.position_at_end(slow)
            if skipped:
                # lanes that skip an access may hold any address there (CUB's onesweep scatter writes
                # through d_bins_out, a null pointer, in the last tile only; CUB's radix histogram
                # clears the rows past the last): the phase runs with each lane checking its own
                self._phase_lanes(pcs, v, w, resume, run)
                b.branch(join)
            elif self._precheck_failed(pcs, v, resume, run):
                b.branch(join)
            b.position_at_end(fast)
            self.prechecked = frozenset(accesses)
            self.from_corners = self.__dict__.pop("corner_addresses", None)
            self._phase_lanes(pcs, v, w, resume, run)
            self.prechecked, self.from_corners = frozenset(), None
            b.branch(join)
            b.position_at_end(join)
        else:
            self._phase_lanes(pcs, v, w, resume, run)
        if run and first_phase:           # the lanes that left at once: their instructions, as _lane_done counts them
            left, span = run[2], ir.Constant(I64, run[3])
            b.store(b.add(b.load(self.total), b.mul(left, span)), self.total)
            m = b.load(self.seg_most)
            b.store(b.select(b.and_(b.icmp_signed(">", left, ir.Constant(I64, 0)), b.icmp_signed(">", span, m)),
                             span, m), self.seg_most)
        b.store(b.add(b.load(self.path), b.load(self.seg_most)), self.path)
        if self.copies and any(async_native.lands(self.code[p][2]) for p in pcs):
            async_native.land_ready(self)       # the phase's waits land their copies, in lock step's order

    def _block_values(self, seg):
        """name -> its value, for the segment's inputs that hold one value for the whole block
        (regions.block_uniform: a tree reduction's ``stride``), read once from the block's first
        thread before a phase's loop over the lanes, where each lane loaded its own copy (a value
        LLVM could not tell was the same for all of them, so ``s[tid + stride]`` was no
        neighbour of ``s[tid + 1 + stride]``). Only in the version for 1-D blocks, which runs only
        chunks that start at the region's start or go on where a native call of theirs left
        off (regions.Runner): there every thread of the block computed them alike, natively."""
        if not (self.one_d or self.two_d) or not seg.get("same"):
            return {}
        b = self.b
        first = b.mul(self.chunk_block, self.ctx["lpb"])
        out = {}
        for name in seg["same"]:
            self.loaded.add(name)
            out[name] = b.load(b.gep(self._reg_ptr(name), [first]))
        return out

    def _address_key(self, p):
        """What makes two accesses of a segment check alike: space, size and address operand, whose
        registers the segment does not write (inputs, or uniform values computed again). Every lane
        that reaches a later phase was one of the first phase's lanes, whose addresses of such an
        access ``_precheck`` took (where they failed, the block stopped there, or checked each lane
        in the phase's copy), so a later access with the same key that every lane reaching it
        passed (``regions.skipped``) needs no check of its own."""
        space, op, size = lg.mem_access(self.code[p][2])
        if set(_regs(op)) & rg.defined(self.code, self.seg["first"], self.seg["end"]):
            return None
        return space, size, repr(op)

    def _precheck(self, pcs, v, resume, run, accesses, part):
        """i1: every lane of the phase (those ``run`` keeps; in a later phase, those waiting at its
        start) has the addresses of its ``accesses`` inside memory and aligned. A loop of its own
        computes them with the instructions ``part`` (regions.prechecks) and keeps each access's
        lowest and highest address and the OR of its alignment bits; then one search of the
        allocations covers a global access's range, one comparison a shared one's. Where that
        holds the phase runs those accesses unchecked (a loop LLVM can often vectorize); where not,
        its lanes go on interpreted (``_precheck_failed``), so a lane that would fault still stops
        at its own instruction, or, where some lanes skip an access (``regions.skipped``), they run
        a copy of the phase whose accesses check each lane."""
        b, code, seg = self.b, self.code, self.seg
        first, zero = pcs[0], ir.Constant(I64, 0)
        ranges = {a: [self._local_var(f"{n}{a}") for n in ("lo", "hi", "bits")] for a in accesses}
        failed = self._local_var(f"k{first}_failed")
        for lo, hi, bits in ranges.values():
            b.store(ir.Constant(I64, -1), lo)
            b.store(zero, hi)
            b.store(zero, bits)
        b.store(zero, failed)
        same = self._block_values(seg) if resume is None else {}
        closed = None
        if resume is None and self.one_d:
            closed = self._closed_form(first, run, accesses, part, same, ranges)
        elif resume is None and self.two_d and run is None:
            closed = self._closed_rows(first, accesses, part, same, ranges)
            if closed is not None:
                # no loop over the threads behind it: where the corners do not hold (a wrap-around,
                # a block not whole rows), the check fails (the phase's slow way), so the phase may
                # compute its addresses from the corners (``address``)
                b.store(ir.Constant(I64, 1), failed)
                b.branch(closed)
                b.position_at_end(closed)
                return self._ranges_ok(accesses, ranges, failed)
        nxt, after = self._lanes(f"k{first}", *(run[:2] + run[4:] if run else ()))
        if resume is None:
            inputs, remat = seg["inputs"], seg["remat"]
        else:
            here = self.fn.append_basic_block(f"k{first}_waits_here")
            b.cbranch(b.icmp_signed("==", b.load(self._state(self.kk, 0)), ir.Constant(I64, v)), here, nxt)
            b.position_at_end(here)
            inputs, remat = resume[0]["inputs"], resume[0]["remat"]
        fail = self.fn.append_basic_block(f"k{first}_fail")        # (an address instruction bails out)
        with b.goto_block(fail):
            b.store(ir.Constant(I64, 1), failed)
            b.branch(nxt)
        for name in inputs:
            b.store(same[name] if name in same else self._load_reg(name), self.slot(name))
        self._recompute(remat, first)
        for p in sorted(set(part) | set(accesses)):
            self._pc, self._block_end, self._bail = p, p, fail
            inst = code[p][2]
            if p not in ranges:
                self.emit(inst)
                continue
            addr = self.address(lg.mem_access(inst)[1])
            lo, hi, bits = ranges[p]
            was = b.load(lo)
            b.store(b.select(b.icmp_unsigned("<", addr, was), addr, was), lo)
            was = b.load(hi)
            b.store(b.select(b.icmp_unsigned(">", addr, was), addr, was), hi)
            b.store(b.or_(b.load(bits), addr), bits)
        b.branch(nxt)
        if closed is not None:
            b.position_at_end(closed)
            b.branch(after)
        b.position_at_end(after)
        return self._ranges_ok(accesses, ranges, failed)

    def _ranges_ok(self, accesses, ranges, failed):
        """i1: no address instruction bailed out and each access's range lies inside its memory,
        aligned (``_precheck``)."""
        b, code, zero = self.b, self.code, ir.Constant(I64, 0)
        ok = b.icmp_signed("==", b.load(failed), zero)
        for a, slots in ranges.items():
            space, _, size = lg.mem_access(code[a][2])
            lo, hi, bits = (b.load(x) for x in slots)
            if space == "shared":
                inside = self.shared_fits(hi, size)
            else:
                inside = self._inside_allocation(a, lo, b.add(hi, ir.Constant(I64, size)))
            aligned = b.icmp_unsigned("==", b.and_(bits, ir.Constant(I64, size - 1)), zero)
            ok = b.and_(ok, b.or_(b.icmp_unsigned(">", lo, hi), b.and_(inside, aligned)))
        return ok

    def _inside_allocation(self, a, lo, end):
        """Is [lo, end) inside one live allocation? The allocation access ``a`` found last in this call
        answers first (its bounds kept from the search); only a range outside it is searched for. Every
        block of a grid reads its part of the same arrays, and the search (a dozen unpredictable
        branches over the sorted bounds) ran for each block and checked access: a 2^20-thread
        kernel's 4,096 blocks of 256 threads spent more on it than on their shuffles."""
        b = self.b
        found = [self._local_var(f"found{a}_{n}", ir.Constant(I64, v)) for n, v in (("lo", 1), ("hi", 0))]
        known = b.and_(b.icmp_unsigned(">=", lo, b.load(found[0])), b.icmp_unsigned("<=", end, b.load(found[1])))
        before = b.block
        search, joined = self.fn.append_basic_block(f"find{a}"), self.fn.append_basic_block(f"found{a}")
        b.cbranch(known, joined, search)
        b.position_at_end(search)
        hit = b.call(self.find_fn, [lo, end, self.ctxp] + found)
        searched = b.block
        b.branch(joined)
        b.position_at_end(joined)
        inside = b.phi(I1)
        inside.add_incoming(ir.Constant(I1, 1), before)
        inside.add_incoming(hit, searched)
        return inside

    def _thread_addresses(self, t, name, same, feeds, pcs, insts, widen, accesses, loop):
        """(widened values, addresses) of the block's thread ``t`` (a lane offset): the segment's inputs
        and the values ``feeds`` stored for it, then ``insts`` emitted as that one thread runs them, the
        widened operands (regions.affine's ``widen``: (operand, type, slope)) read on the way. Any
        bail-out goes to ``loop``. Shared by the closed forms of 1-D blocks and of blocks of rows."""
        b, code, seg = self.b, self.code, self.seg
        self.lane = b.add(b.mul(self.chunk_block, self.ctx["lpb"]), t, name=name)
        self.body, self._lane_parts, self.cur = b.block, None, {}
        for reg in seg["inputs"]:
            b.store(same[reg] if reg in same else self._load_reg(reg), self.slot(reg))
        for x in sorted(feeds):
            b.store(self._load_reg(x), self.slot(x))
            self.cur.pop(x, None)
        wide = []
        for pc, inst in zip(pcs, insts):
            self._pc, self._block_end, self._bail = pc, pc, loop
            for j, t_src, slope in widen.get(id(inst), ()):
                v = self.read(inst.operands[j], t_src)
                wide.append((b.sext(v, I64) if t_src[0] == "s" else b.zext(v, I64), slope))
            self.emit(inst)
        return wide, [self.address(lg.mem_access(code[a][2])[1]) for a in accesses]

    def _closed_form(self, first, run, accesses, part, same, ranges):
        """The whole-block check of ``_precheck`` without its loop over the threads, where every
        address is affine in threadIdx.x (regions.affine: ``x[blockIdx.x * blockDim.x + threadIdx.x]``):
        the address instructions run for the first and the last thread of the phase only, whose
        addresses are then the lowest and the highest, and the first one's address OR the step
        between threads' addresses holds every thread's alignment bits. Where a widened value or an
        address wraps around between them (checked here), or an instruction would bail out, the
        loop runs instead. Emitted in the current block; leaves the builder where the loop is to
        start and returns the block, still open, that the ranges reach (the caller ends it with a
        branch past the loop), or None where an address is not affine (nothing emitted)."""
        b, code, seg = self.b, self.code, self.seg
        remat = seg["remat"]
        defs = [self.remat_defs[name] for name in remat]
        pcs = [first] * len(defs) + sorted(part)
        insts = defs + [code[p][2] for p in sorted(part)]
        got = rg.affine(insts, accesses, code, set(same))
        if got is None:
            return None
        slopes, widen = got
        one, zero = ir.Constant(I64, 1), ir.Constant(I64, 0)
        c = b.load(self.c)
        lo, hi, step = (run[0], run[1], run[4]) if run else (c, b.load(self.c1), one)
        n = b.sdiv(b.add(b.sub(hi, lo), b.sub(step, one)), step)          # the lanes the loop would visit
        t0 = b.sub(lo, c)
        dt = b.mul(b.sub(n, one), step)
        ends, loop, closed = (self.fn.append_basic_block(f"k{first}_{x}") for x in ("ends", "lanewise", "closed"))
        b.cbranch(b.icmp_signed(">", n, zero), ends, closed)
        b.position_at_end(ends)
        feeds = {x for name in remat for o in self.remat_defs[name].operands[1:] for x in _regs(o)} - set(remat)

        def at(t, tag):
            """(widened values, addresses) of the thread ``t`` of the block."""
            return self._thread_addresses(t, f"k{first}_{tag}", same, feeds, pcs, insts, widen, accesses, loop)
        wide0, addr0 = at(t0, "first")
        wide1, addr1 = at(b.add(t0, dt), "last")
        ok = ir.Constant(I1, 1)
        for (v0, k), (v1, _) in zip(wide0, wide1):
            ok = b.and_(ok, b.icmp_signed("==", v1, b.add(v0, b.mul(dt, ir.Constant(I64, k)))))
        i128 = ir.IntType(128)
        for a, a0, a1 in zip(accesses, addr0, addr1):
            span = b.sext(b.mul(dt, ir.Constant(I64, slopes[a])), i128)
            ok = b.and_(ok, b.icmp_unsigned("==", b.zext(a1, i128), b.add(b.zext(a0, i128), span)))
        stores = self.fn.append_basic_block(f"k{first}_ranges")
        b.cbranch(ok, stores, loop)
        b.position_at_end(stores)
        several = b.icmp_signed(">", n, one)
        for a, a0, a1 in zip(accesses, addr0, addr1):
            k = slopes[a]
            low, high = ranges[a][:2]
            b.store(a0 if k >= 0 else a1, low)
            b.store(a1 if k >= 0 else a0, high)
            between = b.select(several, b.mul(step, ir.Constant(I64, abs(k))), zero)
            b.store(b.or_(a0, between), ranges[a][2])
        b.branch(closed)
        self._bail = None
        b.position_at_end(loop)
        return closed

    def _closed_rows(self, first, accesses, part, same, ranges):
        """``_closed_form`` in the version for blocks of rows (``_rows``), where addresses are affine
        in threadIdx.x and threadIdx.y (regions.affine, axes "xy": a tile's ``As[ty][tx]``): the
        address instructions run for the four corner threads of the block's rectangle of threads,
        whose addresses hold the lowest and the highest (an affine function's extremes on a
        rectangle are at its corners), and the first thread's address OR the two steps holds every
        thread's alignment bits. A widened value or an address is checked to be exact at the three
        other corners (value at the first plus the slopes times the distance): an affine function
        between in-range values at a rectangle's corners stays in range inside it, so then no
        thread's wraps. Where that fails, a block is not whole rows, or an instruction would bail
        out, the loop runs instead (in the precheck loop of the phase, 24% of a 16x16 tiled
        product's time: 32 addresses' lowest, highest and bits per thread). Same contract as
        ``_closed_form``."""
        b, code, seg = self.b, self.code, self.seg
        remat = seg["remat"]
        defs = [self.remat_defs[name] for name in remat]
        pcs = [first] * len(defs) + sorted(part)
        insts = defs + [code[p][2] for p in sorted(part)]
        got = rg.affine(insts, accesses, code, set(same), axes="xy")
        if got is None:
            return None
        slopes, widen = got
        self.corner_addresses = {}
        one, zero = ir.Constant(I64, 1), ir.Constant(I64, 0)
        c, c1 = b.load(self.c), b.load(self.c1)
        n, bx = b.sub(c1, c), self.ctx["bx"]
        rows = b.sdiv(n, bx)
        dx, dy = b.sub(bx, one), b.sub(rows, one)
        ends, loop, closed = (self.fn.append_basic_block(f"k{first}_{x}") for x in ("corners", "lanewise", "closed"))
        whole = b.and_(b.icmp_signed(">", n, zero), b.icmp_signed("==", b.mul(rows, bx), n))
        b.cbranch(whole, ends, loop)
        b.position_at_end(ends)
        feeds = {x for name in remat for o in self.remat_defs[name].operands[1:] for x in _regs(o)} - set(remat)

        def at(x, y, tag):
            """(widened values, addresses) of the block's thread (x, y)."""
            t = b.add(b.mul(y, bx), x)
            self.tid_xy64 = (x, y)
            self.tid_xy = (b.trunc(x, I32), b.trunc(y, I32))
            return self._thread_addresses(t, f"k{first}_{tag}", same, feeds, pcs, insts, widen, accesses, loop)
        corners = [at(zero, zero, "first"), at(dx, zero, "row_end"), at(zero, dy, "column_end"), at(dx, dy, "last")]
        self.tid_xy = None

        def step(k, fx, fy, ty):
            """k's slopes times the corner's distance from the first thread, as ``ty``."""
            v = ir.Constant(ty, 0)
            for f, kk in ((fx, k[0]), (fy, k[1])):
                if f:
                    v = b.add(v, b.mul(b.sext(f, ty) if ty != I64 else f, ir.Constant(ty, kk)))
            return v
        ok = ir.Constant(I1, 1)
        far = [(dx, None), (None, dy), (dx, dy)]
        for m, (v0, k) in enumerate(corners[0][0]):
            for (fx, fy), corner in zip(far, corners[1:]):
                ok = b.and_(ok, b.icmp_signed("==", corner[0][m][0], b.add(v0, step(k, fx, fy, I64))))
        i128 = ir.IntType(128)
        for m, a in enumerate(accesses):
            a0 = corners[0][1][m]
            for (fx, fy), corner in zip(far, corners[1:]):
                want = b.add(b.zext(a0, i128), step(slopes[a], fx, fy, i128))
                ok = b.and_(ok, b.icmp_unsigned("==", b.zext(corner[1][m], i128), want))
        stores = self.fn.append_basic_block(f"k{first}_ranges")
        b.cbranch(ok, stores, loop)
        b.position_at_end(stores)
        for m, a in enumerate(accesses):
            addrs = [corner[1][m] for corner in corners]
            low, high = addrs[0], addrs[0]
            for x in addrs[1:]:
                low = b.select(b.icmp_unsigned("<", x, low), x, low)
                high = b.select(b.icmp_unsigned(">", x, high), x, high)
            kx, ky = slopes[a]
            bits = b.or_(addrs[0], b.select(b.icmp_signed(">", dx, zero), ir.Constant(I64, abs(kx)), zero))
            bits = b.or_(bits, b.select(b.icmp_signed(">", dy, zero), ir.Constant(I64, abs(ky)), zero))
            b.store(low, ranges[a][0])
            b.store(high, ranges[a][1])
            b.store(bits, ranges[a][2])
            first_address = self._local_var(f"k{first}_at{a}")
            b.store(addrs[0], first_address)
            self.corner_addresses[a] = (first_address, kx, ky)
        b.branch(closed)
        self._bail = None
        b.position_at_end(loop)
        return closed

    def _precheck_failed(self, pcs, v, resume, run):
        """Where a phase's addresses are not all inside memory and aligned (``_precheck``), its
        lanes go on interpreted from the phase's first pc, so the interpreter reports the fault at
        the very instruction (or runs what the whole-block check only suspected: a lane that skips
        the access). The phase has one native version, the unchecked one: a checked copy of every
        such phase doubled the code LLVM compiles for a path taken only by faulting blocks. In a
        segment's first phase nothing of the segment has run yet, so the whole block stops at the
        segment's start, as at a jump its threads disagree on (``_jump``); in a later phase each
        lane waiting at its start stops there, as a lane that bails out does, and the block's
        other lanes finish the segment and wait at its end. -> whether the phase goes on (a later
        phase: the builder is left after the loop)."""
        b, seg = self.b, self.seg
        first = pcs[0]
        if resume is None:
            self._block_stops(seg["first"])
            return False
        self.next_lane, after = self._lanes(f"f{first}", *(run[:2] + run[4:] if run else ()))
        here = self.fn.append_basic_block(f"f{first}_waits_here")
        b.cbranch(b.icmp_signed("==", b.load(self._state(self.kk, 0)), ir.Constant(I64, v)), here, self.next_lane)
        b.position_at_end(here)
        b.store(ir.Constant(I64, 0), self.cnt)
        for name in resume[0]["inputs"]:
            b.store(self._load_reg(name), self.slot(name))
        self._recompute(resume[0]["remat"], first)
        b.branch(self._stop(first, 0, 0))
        b.position_at_end(after)
        return True

    def _phase_lanes(self, pcs, v, w, resume, run):
        """The loop of ``_phase`` over the chunk's lanes."""
        b, code, seg = self.b, self.code, self.seg
        first = pcs[0]
        self.phase_pcs = set(pcs)
        self.phase_defined = set().union(*(rg.defined(code, p, p + 1) for p in pcs))
        same = self._block_values(seg) if resume is None else {}
        # the lanes' instruction counts summed and maxed in 32 bits, added to the call's 64-bit ones
        # after the loop: a lane's count in a phase is at most the phase's length (segments branch
        # only forward), and a vector of them holds 16 lanes where 64-bit counts held 8 (a guarded
        # load's lane loop spent a third of its instructions on the counts)
        counts = self.phase_counts = tuple(self._local_var32(f"s{first}_{n}") for n in ("total", "most"))
        for x in counts:
            b.store(ir.Constant(I32, 0), x)
        self.next_lane, after = self._lanes(f"s{first}", *(run[:2] + run[4:] if run else ()))
        if resume is not None:
            at = b.load(self._state(self.kk, 0))
            here = self.fn.append_basic_block(f"s{first}_waits_here")
            b.cbranch(b.and_(b.icmp_signed(">=", at, ir.Constant(I64, v)), b.icmp_signed("<", at, ir.Constant(I64, w))),
                      here, self.next_lane)
            b.position_at_end(here)
        b.store(ir.Constant(I64, 0), self.cnt)
        branches = [p for p in pcs if code[p][0] == K_BRA]
        leaders = ({first} | {r["pc"] for r in resume or ()}
                   | ({code[p][3] for p in branches} | {p + 1 for p in branches}) & self.phase_pcs)
        self.blocks = {q: self.fn.append_basic_block(f"pc{q}") for q in sorted(leaders)}
        self.parks = {}
        if resume is None:
            for name in seg["inputs"]:
                b.store(same[name] if name in same else self._load_reg(name), self.slot(name))
            self._recompute(seg["remat"], first)
            b.branch(self.blocks[first])
        else:
            sw = b.switch(at, self.next_lane)
            for r in resume:
                bb = self.fn.append_basic_block(f"resume{r['pc']}")
                sw.add_case(ir.Constant(I64, seg["pos"][r["pc"]]), bb)
                b.position_at_end(bb)
                self.cur = {}
                for name in r["inputs"]:
                    b.store(self._load_reg(name), self.slot(name))
                self._recompute(r["remat"], r["pc"])
                b.branch(self.blocks[r["pc"]])
        for q in sorted(leaders):
            end = q
            while True:                 # the block: to a branch, a leader, or out of the phase
                end += 1
                if code[end - 1][0] == K_BRA or end not in self.phase_pcs or end in leaders:
                    break
            b.position_at_end(self.blocks[q])
            self.cur = {}
            b.store(b.add(b.load(self.cnt), ir.Constant(I64, end - q)), self.cnt)
            for p in range(q, end):
                kind, _, inst, aux = code[p]
                if kind == K_BRA:
                    self._branch(p, inst, aux)
                    break
                if inst.opcode in ("bar", "barrier"):
                    continue        # a cut: every thread of the block is here
                self._pc, self._block_end, self._bail = p, end, None
                self.emit(inst)
            else:
                b.branch(self._edge(end - 1, end))
        self.phase_counts = None
        b.position_at_end(after)
        b.store(b.add(b.load(self.total), b.zext(b.load(counts[0]), I64)), self.total)
        most, m = b.zext(b.load(counts[1]), I64), b.load(self.seg_most)
        b.store(b.select(b.icmp_signed(">", most, m), most, m), self.seg_most)

    def _local_var32(self, name):
        with self.b.goto_block(self.entry):
            self.b.position_before(self.entry.terminator)
            return self.b.alloca(I32, name=name)

    def _park(self, t):
        """The block where a lane leaves the phase for ``t``: its registers live at ``t`` (that
        this phase writes and the segment does not compute again) into their arrays, ``t``'s
        position into its state. A register an earlier phase wrote is in its array already: that
        phase's park stored it (live here, so live there too), and storing it again cost a later
        phase a load and a store per lane for every register live across it (scan's second
        shared-memory store, a phase of two instructions, moved ten registers)."""
        bb = self.parks.get(t)
        if bb is None:
            seg, b = self.seg, self.b
            bb = self.parks[t] = self.fn.append_basic_block(f"park{t}")
            with b.goto_block(bb):
                for name in sorted(self.live_in[t] & seg["defined"] & self.phase_defined - set(seg["unstored"])):
                    self._store_reg(name, b.load(self.slot(name)))
                if len(seg["phases"]) > 1:
                    b.store(ir.Constant(I64, seg["pos"].get(t, self.npos)), self._state(self.kk, 0))
                g = seg["guard_at_end"]
                if g and t == seg["end"]:           # the jump's guard, counted here (see _jump)
                    v = b.load(self.slot(g[0])) if g[0] in seg["defined"] else self._load_reg(g[0])
                    pv = self.to_type(v, "p", "pred")
                    if g[1]:
                        pv = b.not_(pv)
                    b.store(b.add(b.load(self.taken), b.zext(pv, I64)), self.taken)
                self._lane_done(b)
                b.branch(self.next_lane)
        return bb

    def _edge(self, p, t):
        return self.blocks[t] if t in self.phase_pcs else self._park(t)

    def _check_target(self, p, target):
        if target is None or target <= p or target > self.seg["end"]:
            raise Skip("a loop in a segment of a region with cuts")      # (regions.skeleton makes it a jump)

    def _lane_done(self, b):
        c = b.load(self.cnt)
        if self.__dict__.get("phase_counts"):       # (in _phase_lanes' loop: see there)
            total, most = self.phase_counts
            c = b.trunc(c, I32)
            b.store(b.add(b.load(total), c), total)
            m = b.load(most)
            b.store(b.select(b.icmp_unsigned(">", c, m), c, m), most)
            return
        b.store(b.add(b.load(self.total), c), self.total)
        m = b.load(self.seg_most)
        b.store(b.select(b.icmp_signed(">", c, m), c, m), self.seg_most)

    def _stop(self, pc, spun, not_run):
        bb = super()._stop(pc, spun, not_run)
        b = ir.IRBuilder(bb)
        b.position_before(bb.terminator)
        b.store(ir.Constant(I64, 1), self.stopped)
        b.store(ir.Constant(I64, -2), self._state_b(b, 0))        # (later phases pass it over)
        return bb
