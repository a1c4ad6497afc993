"""The SIMT engine: runs a kernel over batches of blocks, every lane of a batch in one numpy array.

A *batch* is as many whole blocks as fit a lane budget. Each block is padded to whole warps, so
warp-level instructions reshape lane arrays to (warps, 32). Control flow follows the classic SIMT
reconvergence stack: at a branch where lanes disagree, both paths run one after the other with
their masks and join again at the branch's immediate post-dominator (``ptx.cfg``). Lanes of
different blocks in one batch are just more lanes: a block-uniform branch that differs between
blocks diverges here, which changes nothing for any block's own threads.

Why this is faithful: within a block the emulator executes instructions in lock step over all
threads, so a ``__syncthreads()`` is automatically respected (all stores before it happen before
any load after it). What lock step cannot show (races between warps) is caught by racecheck.
"""
from __future__ import annotations

import functools
import threading
import time
import weakref
from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import CudaError, KernelError, UnsupportedError
from ..ptx import carry, inline, ir, spaces
from ..ptx.cfg import reconvergence
from ..ptx.chains import chain_cycles
from ..ptx.mix import global_bytes_per_instruction
from . import asyncops, memops, texture, warp  # noqa: F401  (register their decoders)
from . import cluster, compiled, devrt, sm90  # noqa: F401  (clusters, native code, device launches, sm_90's ISA)
from . import forecast, mrg_jump, parallel, slack, why_slow, xorwow_jump
from . import pace as pace_mod
from . import mma, mma_runs  # noqa: F401  (warp matrix operations: wmma, mma.sync, ldmatrix, stmatrix)
from .decode import Unsupported, decode
from .dtypes import storage
from .events import BatchInfo, InstructionEvent, BranchEvent
from .findings import Finding
from .memory import FUNC_BASE, GLOBAL_BASE, LOCAL_WINDOW, DeviceMemory
from .barriers import is_named as is_named_barrier, rejoins, topmost
from .barriers import waits_at_barrier_zero
from .pace import CLEARLY, RUNNING, Pace
from .printf import ArgReader, format_call

cluster_mod = cluster

K_NORMAL, K_BRA, K_RET, K_EXIT, K_CALL, K_TRAP, K_WAIT, K_FUSED, K_REGION = range(9)   # K_FUSED, K_REGION: compiled.py
LANE_BUDGET = 1 << 17
BATCH_BYTES = 256 << 20         # a batch's per-lane state (registers, local memory) and shared memory stay within this
LANE_BYTES = 64                 # per-lane state besides registers and local memory (geometry, masks, SIMT stack)
MAX_COOPERATIVE_LANES = 1 << 20      # blocks of a cooperative launch run as one batch
MAX_CALL_DEPTH = 200
SPIN_LIMIT = 512                # loop iterations before parked threads are let run ahead (see below)
SPIN_LOCK_LIMIT = 8             # ... in a loop that tries to take a lock (_takes_a_lock)
CLOCK_START_MASK = (1 << 30) - 1  # a batch's clock starts below 2^30 cycles (Exec.cycles)
CLOCK_SPIN_GAP = 32             # instructions between two clock reads of a loop that waits on the clock
# bytes of a launch's register arrays (and its last batch's shared and local memory, where they fit too)
# kept for the kernel's next launch, by the kernels launched last (at most KEEP_POOLS): a 2^20-thread
# tree reduction's batches of 2^19 threads hold 5.2 MB of registers and 2 MB of shared memory, which
# at 4 MB it made afresh at every launch, 330 page faults (about a millisecond of system time) a launch
KEEP_REGISTERS = 16 << 20
KEEP_POOLS = 4
MAX_LOCAL = 512 * 1024          # bytes of local memory a thread may use (CUDA C++ Guide, "Local Memory")
BUILTINS = {"vprintf", "__assertfail", "malloc", "free", "__nv_trap"}
# extern device functions other modules implement: name -> handler(ex, inst, rets, args) (devrt.py:
# the device runtime of dynamic parallelism; graphcalls.py: cudaGraphSetConditional; xorwow_jump.py: cuRAND's
# XORWOW skip-ahead, and mrg_jump.py: MRG32k3a's, functions of cudalab's curand_kernel.h front run natively
# although the PTX defines them)
DEVICE_FUNCTIONS: dict = {**devrt.HANDLERS, **xorwow_jump.HANDLERS, **mrg_jump.HANDLERS}
# the curand front's skip-aheads, answered natively only as the front defines them: where the compiler
# dropped parameters it proved constant (curand_init(seed, 0, 0, ...): n is 0), the call runs the PTX
# function it left, which is that specialized body
NATIVE_ARITY = {xorwow_jump.NAME: 7, mrg_jump.NAME: 3}


class Watchdog(Exception):
    pass


def _xyz(v):
    return f"({v[0]},{v[1]},{v[2]})"


# ------------------------------------------------------------------ decoded program

@dataclass
class DecodedFunction:
    func: ir.Function
    code: list                      # [(kind, run, inst, aux)]
    reconv: dict
    param_offsets: dict             # kernel params: name -> byte offset in the param buffer
    param_sizes: dict               # every .param name visible in the body -> bytes
    depots: dict                    # local depot name -> offset within the frame
    local_size: int
    heads_for_syncthreads: dict = field(default_factory=dict)   # pc -> _only_heads_for_syncthreads (cache)
    reaches_syncthreads: dict = field(default_factory=dict)     # pc -> reaches_syncthreads (cache)
    ends_without_barrier: dict = field(default_factory=dict)    # pc -> ends_without_barrier (cache)
    takes_a_lock: dict = field(default_factory=dict)            # backward branch pc -> _takes_a_lock (cache)

    @functools.cached_property
    def ends(self) -> frozenset:
        """The pcs of the kernel's unguarded ``ret``/``exit``: threads waiting there have ended."""
        return frozenset(pc for pc, (kind, _, inst, _) in enumerate(self.code)
                         if kind in (K_RET, K_EXIT) and inst.guard is None)


class Program:
    """A PTX module made ready to run: globals placed in device memory, functions decoded once."""

    def __init__(self, module: ir.Module, memory: DeviceMemory, sm_count: int = 80, clock_khz: int = 1000):
        self.module = module
        self.memory = memory
        self.sm_count = sm_count
        # %clock/%clock64 tick this many thousand times per second of the emulator's time (on top of
        # 4 per instruction): a program's kernels get the device's cudaDevAttrClockRate, so a kernel
        # that waits N ticks to last N / clockRate seconds on a GPU lasts about as long here
        self.clock_khz = clock_khz
        # what device code reads of the device through the device runtime (cudaDeviceGetAttribute,
        # cudaDeviceGetLimit, the launch limits of device-side launches): cudaDevAttr -> value and
        # cudaLimit -> value, given with sm_count and clock_khz by the runtime (Context.bind)
        self.device_attributes: dict = {}
        self.device_limits: dict = {}
        self.globals: dict = {}
        # decoded code depends only on the PTX, so programs built from one parsed module share it
        if not hasattr(module, "_decoded"):
            module._decoded = {}
        self._decoded: dict = module._decoded
        # functions get addresses too, for function pointers and virtual-function tables
        self.func_addr = {name: FUNC_BASE + 16 * k for k, name in enumerate(module.functions)}
        self.func_at = {a: name for name, a in self.func_addr.items()}
        self._place_globals()
        # a dropped program (its Module gone) gives its globals back: a notebook or test run
        # compiles hundreds of modules, each with dozens of __device__ constants from the CUDA
        # headers, and every live allocation costs each later launch a little (bounds searches)
        weakref.finalize(self, memory.release_later, list(self.globals.values()))

    def _place_globals(self):
        self.const_ranges = []
        for v in self.module.variables.values():
            if v.space in ("global", "const") and not (v.extern and v.size == 0):
                addr = self.memory.alloc(max(v.size, 1), label=v.name)
                if v.init:
                    self.memory.write(addr, v.init)
                self.globals[v.name] = addr
                if v.space == "const":
                    self.const_ranges.append((addr, addr + max(v.size, 1)))
        for v in self.module.variables.values():
            for off, sym in v.relocs:
                target = self.globals.get(sym, self.func_addr.get(sym))
                if v.name in self.globals and target is not None:
                    self.memory.write(self.globals[v.name] + off, np.uint64(target).tobytes())

    def function(self, name: str) -> DecodedFunction:
        df = self._decoded.get(name)
        if df is None:
            f = self.module.functions[name]
            if f.is_entry:
                # device functions copied into the kernel, so that native code covers them (ptx/inline.py)
                f = inline.calls_inlined(self.module, f)
            # the carry flag as a register, which native code can hold (ptx/carry.py)
            f = carry.carries_explicit(f)
            # shared and global accesses that a -G build writes as generic ones, as NVVM infers them (ptx/spaces.py)
            df = self._decoded[name] = self._decode(spaces.generic_accesses_explicit(f))
        return df

    def _decode(self, f: ir.Function) -> DecodedFunction:
        offsets, off = {}, 0
        for p in f.params:
            off = (off + p.align - 1) // p.align * p.align
            offsets[p.name] = off
            off += p.size
        sizes = {p.name: p.size for p in f.params}
        sizes.update({p.name: p.size for p in f.returns})
        sizes.update({p.name: p.size for p in f.body_params.values()})
        depots, loff = {}, 0
        for v in f.locals:
            loff = (loff + max(v.align, 1) - 1) // max(v.align, 1) * max(v.align, 1)
            depots[v.name] = loff
            loff += v.size
        ctx = _DecodeContext(f, self.module, offsets)
        code = []
        for inst in f.insts:
            try:
                code.append(self._decode_inst(inst, ctx))
            except CudaError:
                raise
            except Exception as e:
                line = source_line(f, inst)
                where = f" (from source line {line})" if line else ""
                if isinstance(e, (Unsupported, NotImplementedError, KeyError, StopIteration, ValueError, IndexError)):
                    why = f"{e or inst.opcode} is not implemented yet."
                else:                   # a bug in a decoder
                    why = (f"reading it failed ({type(e).__name__}: {e}). This is a bug in cudalab; please report "
                           "it with the program.")
                raise UnsupportedError(f"The emulator cannot run the PTX instruction `{inst.text}`{where}: {why} "
                                       "Try simpler code for that line, or run on a real GPU.") from None
        code = mma_runs.fuse(code, f)        # a GEMM's stretches of wmma instructions run as one program
        return DecodedFunction(f, code, reconvergence(f), offsets, sizes, depots, (loff + 15) // 16 * 16)

    def _decode_inst(self, inst, ctx):
        opc = inst.opcode
        if opc == "bra":
            return (K_BRA, None, inst, ctx.func.labels[inst.operands[0][1]])
        if opc in ("ret",):
            return (K_RET, None, inst, None)
        if opc == "exit":
            return (K_EXIT, None, inst, None)
        if opc in ("trap", "brkpt"):
            return (K_TRAP, None, inst, None)
        if opc == "call":
            target, rets, args = ir.call_parts(inst)
            rets, args = [x[1] for x in rets], [x[1] for x in args]
            # an indirect call's target is the register of a function address per lane
            fname = target[1] if target[0] == "sym" else target
            if isinstance(fname, tuple):
                return (K_CALL, None, inst, (fname, rets, args))
            known = fname in BUILTINS or fname in DEVICE_FUNCTIONS
            if not known and fname not in self.module.functions:
                raise Unsupported(f"a call to {fname}")
            if not known and self.module.functions[fname].extern:
                raise Unsupported(devrt.extern_call_reason(fname))
            return (K_CALL, None, inst, (fname, rets, args))
        run = decode(inst, ctx)
        return (K_WAIT if getattr(run, "waits", False) else K_NORMAL, run, inst, None)


def source_line(f: ir.Function, inst) -> int | None:
    """The cell line of an instruction; header code without line info takes the line of the
    nearest instruction before it that has one (the statement that led there)."""
    for k in range(inst.index, -1, -1):
        if f.insts[k].line:
            return f.insts[k].line
    return None


@dataclass
class _DecodeContext:
    func: ir.Function
    module: ir.Module
    param_offsets: dict


# ------------------------------------------------------------------ execution state

SPARE = "\0memory"     # key of a register pool (Regs.pool) that holds the batch's (shared, local) memory


def _zeroed(buf, n: int) -> np.ndarray:
    """``n`` zero bytes: a finished batch's buffer, refilled, where it is big enough, else new ones.
    Refilling touches pages the process has; a fresh np.zeros of megabytes maps new ones, which fault
    in at their first touch and go back at the end: a 2^20-thread tree reduction's two batches of 2 MB
    of shared memory took 412 page faults and about a millisecond of system time a launch."""
    if buf is not None and buf.size >= n:
        buf = buf[:n]
        buf.fill(0)
        return buf
    return np.zeros(n, np.uint8)


class Regs(dict):
    """Registers of one frame: created on first use as zeros of their storage type."""

    def __init__(self, func, n, pool=None):
        super().__init__()
        self.func, self.n = func, n
        self.pool = pool if pool is not None else {}     # a finished batch's arrays, to reuse

    def __missing__(self, name):
        return self.take(name)

    def take(self, name, zeroed=True):
        """A new array for register ``name``: a finished batch's from the pool when one is big
        enough (a grid's last, smaller batch takes a prefix), else fresh. ``zeroed=False`` for a
        register about to be written in every lane (the compiled tier): its old values may stay."""
        st = storage(self.func.regs[name])
        arr = self.pool.pop(name, None)
        if arr is not None and arr.size >= self.n and arr.dtype == st:
            arr = arr[:self.n]
            if zeroed:
                arr.fill(0)      # cheaper than fresh pages: a big np.zeros maps and faults them in anew
        else:
            arr = np.zeros(self.n, st) if zeroed else np.empty(self.n, st)
        self[name] = arr
        return arr


class Frame:
    def __init__(self, df: DecodedFunction, n: int, local_base: int, pool=None):
        self.df = df
        self.regs = Regs(df.func, n, pool)
        self.params: dict = {}
        self.local_base = local_base
        self.n = n

    def param_buffer(self, name):
        buf = self.params.get(name)
        if buf is None:
            size = self.df.param_sizes.get(name, 64)
            buf = self.params[name] = np.zeros((self.n, max(size, 1)), np.uint8)
        return buf


@dataclass
class LaunchStats:
    """What one launch did, for the LaunchRecord."""

    # A batch run on a worker thread counts into a LaunchStats of its own, added to the launch's in block
    # order (parallel.merge) field by field: numbers add, lists are extended, dicts updated; a field whose
    # metadata says merge="launch" is the launch's own (a batch's is left out), "warnings" parallel.merge's
    # rule for repeated warnings. A new counter needs nothing more.
    instructions: int = 0            # instructions executed by the batch engine (PTX, batch-level)
    thread_instructions: int = 0     # summed over active threads
    warp_instructions: int = 0       # summed over warps with at least one active thread
    batches: int = 0
    printed: list = field(default_factory=list)
    findings: list = field(default_factory=list, metadata={"merge": "warnings"})
    warned: dict = field(default_factory=dict, metadata={"merge": "warnings"})   # memcheck warnings by site (slack.py)
    device_launches: list = field(default_factory=list)   # grids launched from the device (devrt.py), in run order
    pdl: dict = field(default_factory=dict)               # griddepcontrol events (sm90.py), for the timeline
    # of the kernel's hot code (ptx/mix.py), for the timeline
    global_bytes_per_instruction: float = field(default=0.0, metadata={"merge": "launch"})
    # a lone warp's cycles per instruction of the kernel's main loop, global loads from L2 / DRAM (ptx/chains.py)
    chain_cycles: tuple = field(default=(), metadata={"merge": "launch"})
    # [microseconds] per batch that waited on clock64() or %globaltimer (Exec.clock_read), for the timeline
    clock_waits: list = field(default_factory=list)
    # this thread's CPU seconds for the whole launch (its record's cpu_time: programs/stopping.py), from the
    # clock reads its batches make anyway (each read is a system call)
    cpu_seconds: float = field(default=0.0, metadata={"merge": "launch"})


class Exec:
    """Everything an instruction closure can touch while a batch runs."""

    def __init__(self, program: Program, kernel: DecodedFunction, batch: BatchInfo, kparams: bytes,
                 shared_size: int, shared_layout: dict, local_stride: int, observers, stats, deadline,
                 kernel_name: str, checks=(), spare=None):
        """``spare``: a finished batch's (shared, local) memory to zero and reuse (``_zeroed``)."""
        self.program = program
        self.mem = program.memory
        self.kernel = kernel
        self.kernel_name = kernel_name
        self.batch = batch
        self.lanes_per_block = batch.lanes_per_block
        self.n = batch.nblocks * batch.lanes_per_block
        self.kparams = kparams
        self.shared_size = shared_size
        # each block's row holds its whole allocation unit: a read past the shared size but inside the
        # unit runs on a GPU, and here reads the block's own padding (slack.py)
        self.shared_stride = max(16, slack.shared_allocation(shared_size))
        self.shared = _zeroed(spare and spare[0], batch.nblocks * self.shared_stride if shared_size else 16)
        self.shared_layout = shared_layout
        self.local_stride = local_stride
        self.local = _zeroed(spare and spare[1], self.n * local_stride if local_stride else 16)
        geo = _geometry(batch.nblocks, self.lanes_per_block, batch.threads_per_block, batch.block, self.shared_stride)
        self.lane_block, self.thread_linear, self.shared_base, valid, self._tid, self.valid_idx = geo
        self.valid = valid
        self._exited = None      # ~valid, made at first use (exited): a batch that native code runs whole never asks
        self.observers = list(observers)
        self.stats = stats
        self.deadline = deadline
        self.wall_deadline = float("inf")   # time.monotonic() limit: a whole program's timeout
        self.upgrade = None                 # compiled.upgrade_later's question, for an interpreted batch
        self.checks = set(checks)
        self._special = {}
        self._carry = None
        self.fr: Frame | None = None
        self.idx = self.ridx = self.mask = None
        self.depth = 0
        self._sm_clock = None               # the batch's SM clock, from its first read (cycles)
        self._clock_sites = {}              # instruction reading the clock -> instructions when it last did
        self._clock_wait = None             # [us waited on a clock, last read] (clock_read)
        self.clock_waited = False           # the latest clock read ended a turn of a loop waiting on it (cycles)
        self.pc_of = {}
        # loops that wait on another thread (a lock, a flag): (id of function, head, branch pc) -> [function,
        # turns past SPIN_LOCK_LIMIT, times a waiting thread was let run ahead]; the watchdog's message tells
        # whether such a wait was getting on (waiting_on)
        self.spins = {}
        self.grid_workspace = 0
        # waiting instructions (K_WAIT): a barrier change bumps sync_version; parked[lane] is the
        # version a lane saw when it last had to wait (-1: not waiting); see _let_waiting_threads_run
        self.sync_version = 0
        self.parked = None
        self.must_proceed = False

    @property
    def exited(self):
        """Lanes that have exited (and the padding lanes that never ran): made when first asked for,
        since a batch that one native region runs from start to end never is (a 2^19-lane batch's
        inversion and its pages, tens of microseconds)."""
        e = self._exited
        if e is None:
            e = self._exited = ~self.valid
        return e

    @exited.setter
    def exited(self, value):
        self._exited = value

    # ---------------------------------------------------------------- helpers for instructions
    def emit(self, ev):
        kind = type(ev).__name__
        for o in self.observers:
            if kind == "MemoryEvent":
                o.on_memory(ev)
            elif kind == "BranchEvent":
                o.on_branch(ev)
            elif kind == "BarrierEvent":
                o.on_barrier(ev)
            elif kind == "AsyncEvent":
                hook = getattr(o, "on_async", None)
                if hook is not None:
                    hook(ev)
            else:
                o.on_instruction(ev)

    def active_full(self):
        return self.mask

    def valid_global(self, addrs, size):
        return self.mem.valid(addrs, size)

    def carry_in(self, sel):
        c = self._carry if self._carry is not None else np.zeros(self.n, bool)
        return (c if sel is None else c[sel]).astype(np.uint64)

    def carry_out(self, sel, cout):
        if self._carry is None:
            self._carry = np.zeros(self.n, bool)
        if sel is None:
            self._carry[:] = cout
        else:
            self._carry[sel] = cout

    def cycles(self, site=None) -> int:
        """The batch's SM clock (``clock64()``), in cycles: its start, 4 a batch-level instruction (the
        kernel's own progress), and the CPU time of the thread running the batch (at the device's clock
        rate) spent in loops that wait on the clock: since the read before, where the same ``site`` (the
        instruction that reads it) read it at most CLOCK_SPIN_GAP instructions ago (``while (clock64() -
        t0 < n)``; a loop reading %globaltimer_lo and _hi reads at two sites in turn).

        Why: a GPU's clock counts its SM's cycles, so work timed between two reads (the clock sample's
        reduction, a course's latency lab) shows cycles of that work, here the model's 4 an instruction,
        not the emulator's pace (6.5 million a block for the clock sample on the CPU's time, 16 to 29
        million on the host's); and a spin ``while (clock64() - t0 < n)`` ends after ``n`` cycles. A spin
        turns at the host's pace, a few microseconds a turn: its instructions alone would take millions
        of turns for a 20 ms wait, so a wait takes the CPU time of its turns. CPU time, not the host's
        clock (clock round 19): a thread's CPU clock stands still while the host does not run it
        (descheduled on a busy machine, waiting for the GIL), so a wait lasts as long at any load; the
        host's clock counted a pause as GPU cycles. Monotonic within a batch, also should the batch move
        to another thread. Native code never reads it (llvmgen leaves clock reads to the interpreter)."""
        now, me, n = time.thread_time_ns(), threading.get_ident(), self.stats.instructions
        c = self._sm_clock              # [thread, its CPU ns at the last read, host ns less the start, cycles]
        khz = self.program.clock_khz
        if c is None:
            # it starts where the host's monotonic clock is, in cycles, as an SM's counts from its reset:
            # batches (and runs) read different clocks (a ``curand_init(clock64(), ...)`` seed differs),
            # and under 2^30, so that 32-bit clock() has 2^31 cycles (1.5 s at 1.41 GHz) before it wraps
            start = time.perf_counter_ns() * khz // 1_000_000 & CLOCK_START_MASK
            c = self._sm_clock = [me, now, time.time_ns() - start * 1_000_000 // khz, start]
            self._clock_sites = {}
        before = self._clock_sites.get(site)
        self.clock_waited = before is not None and n - before <= CLOCK_SPIN_GAP and c[0] == me
        if self.clock_waited:
            c[3] += (now - c[1]) * khz // 1_000_000
        c[0], c[1] = me, now
        if site is not None:
            self._clock_sites[site] = n
        return 4 * n + c[3]

    def global_ns(self, cycles: int) -> int:
        """``%globaltimer`` at ``cycles`` of the batch's clock: the host's time when the batch first read
        a clock, plus the modelled nanoseconds since (a GPU's timer counts nanoseconds, as the SM clock
        counts cycles: both stand still here while the host does not run the batch; ``_sm_clock[2]`` is
        that time less the clock's start)."""
        return self._sm_clock[2] + cycles * 1_000_000 // self.program.clock_khz

    def clock_read(self, us: float):
        """A clock read at ``us`` (microseconds of the clock handed out). A read that ``cycles`` took for
        a loop waiting on the clock (``clock_waited``) adds the time since the read before to the batch's
        wait, ``stats.clock_waits`` (the timeline gives the kernel at least that long: a GPU spends it
        too). Reads that time work between them show its modelled cycles and are not a wait."""
        wait = self._clock_wait          # [us waited, last read]
        if wait is None:
            self._clock_wait = [0.0, us]
            self.stats.clock_waits.append(self._clock_wait)
            return
        if self.clock_waited and us > wait[1]:
            wait[0] += us - wait[1]
        wait[1] = us

    def special(self, key, site=None):
        """A special register's value; ``site``: the instruction reading it, for a clock (``cycles``)."""
        v = self._special.get(key)
        if v is not None:
            return v
        name, comp = key
        b = self.batch
        if name in ("clock", "clock64", "clock_hi", "globaltimer", "globaltimer_lo", "globaltimer_hi"):
            # modelled clocks: monotonic, advancing with the batch's instructions and CPU time (cycles)
            t = self.cycles(site)
            if name == "clock":
                self.clock_read(t * 1000 / self.program.clock_khz)
                return np.uint32(t & 0xFFFFFFFF)
            if name == "clock_hi":
                return np.uint32((t >> 32) & 0xFFFFFFFF)
            if name.startswith("globaltimer"):
                g = self.global_ns(t)
                if not name.endswith("hi"):
                    self.clock_read(g / 1000)
                return np.uint32(g & 0xFFFFFFFF) if name.endswith("lo") else \
                    np.uint32(g >> 32) if name.endswith("hi") else np.uint64(g)
            self.clock_read(t * 1000 / self.program.clock_khz)
            return np.uint64(t)
        axis = {"x": 0, "y": 1, "z": 2}.get(comp)
        bx, by, bz = b.block
        gx, gy, gz = b.grid
        t = self.thread_linear
        if name == "tid":
            v = self._tid[axis]
        elif name == "ctaid" and gy == 1 and gz == 1:
            v = self.lane_block.astype(np.uint32) + np.uint32(b.first_block) if axis == 0 else np.uint32(0)
        elif name == "ntid":
            v = np.uint32(b.block[axis])
        elif name == "ctaid":
            blk = b.first_block + self.lane_block
            v = (blk % gx, (blk // gx) % gy, blk // (gx * gy))[axis]
        elif name == "nctaid":
            v = np.uint32(b.grid[axis])
        elif name == "laneid":
            v = t & 31
        elif name == "warpid":
            v = t >> 5
        elif name == "nwarpid":
            v = np.uint32(b.lanes_per_block // 32)
        elif name == "smid":
            v = (b.first_block + self.lane_block) % self.program.sm_count
        elif name == "nsmid":
            v = np.uint32(self.program.sm_count)
        elif name.startswith("lanemask_"):
            lane = (t & 31).astype(np.uint64)
            one = np.uint64(1)
            eq = one << lane
            v = {"eq": eq, "lt": eq - one, "le": (eq << one) - one, "gt": ~((eq << one) - one),
                 "ge": ~(eq - one)}[name[9:]] & np.uint64(0xFFFFFFFF)
        elif name in ("dynamic_smem_size", "total_smem_size", "aggr_smem_size"):
            v = np.uint32(self.shared_size)
        elif name.startswith("envreg"):
            # %envreg1:%envreg2 hold the grid-sync workspace of a cooperative launch (0 otherwise)
            ws = self.grid_workspace
            v = np.uint32(ws >> 32) if name == "envreg1" else np.uint32(ws & 0xFFFFFFFF) if name == "envreg2" \
                else np.uint32(0)
        elif name == "gridid":
            v = np.uint64(1)
        elif name.startswith("cluster") or name.startswith("ncluster") or name == "is_explicit_cluster":
            v = cluster.special(self, name, axis)      # a block is a cluster of one unless launched with clusters
        else:
            raise Unsupported(f"special register %{name}")
        if np.ndim(v):
            v = np.asarray(v).astype(np.uint32 if name != "lanemask" else np.uint32)
        self._special[key] = v
        return v

    def symbol_address(self, name):
        g = self.program.globals.get(name)
        if g is not None:
            return g
        s = self.shared_layout.get(name)
        if s is not None:
            return s
        d = self.fr.df.depots.get(name)
        if d is not None:
            return self.fr.local_base + d
        f = self.program.func_addr.get(name)
        if f is not None:
            return f
        p = self.kernel.param_offsets.get(name)
        if p is not None:            # a kernel parameter's address (read back with ld.param [%rd], sm90.py)
            return sm90.PARAM_WINDOW + p
        raise Unsupported(f"the address of {name}")

    # ---------------------------------------------------------------- errors a student reads
    def where(self, lane):
        b = self.batch
        blk = b.first_block + int(lane) // b.lanes_per_block
        t = int(lane) % b.lanes_per_block
        gx, gy, _ = b.grid
        bx, by, _ = b.block
        return (blk % gx, (blk // gx) % gy, blk // (gx * gy)), (t % bx, (t // bx) % by, t // (bx * by))

    def run_on(self, lanes, fn, *args):
        """``fn(*args)`` with only ``lanes`` active: a predicated instruction, or the lanes of an
        indirect call that chose one target."""
        save = self.idx, self.ridx, self.mask
        mask = np.zeros(self.n, bool)
        mask[lanes] = True
        self.idx, self.ridx, self.mask = lanes, lanes, mask
        try:
            return fn(*args)
        finally:
            self.idx, self.ridx, self.mask = save

    def stop(self, lane, kind, code, inst, text, address=None):
        """Stop the kernel with a Finding: ``text(block, thread)`` words the message for the student."""
        block, thread = self.where(int(lane))
        msg = text(_xyz(block), _xyz(thread))
        raise KernelError(msg, code, [Finding(kind, msg, self.kernel_name, inst.line, block, thread, address)])

    def fault(self, inst, space, kind, lanes, addrs, size, why, code="cudaErrorIllegalAddress"):
        f = self.access_finding(inst, space, kind, lanes, addrs, size, why, code)
        raise KernelError(f.message, code, [f])

    def access_finding(self, inst, space, kind, lanes, addrs, size, why, code="cudaErrorIllegalAddress",
                       counted=True):
        """memcheck's report of a bad access by ``lanes`` (the first one named), as a Finding: the
        error of ``fault``, or a warning (slack.py; ``counted=False``: the thread count is kept in
        the details, not in the message, since later batches add to it)."""
        lane, addr = int(lanes[0]), int(addrs[0])
        block, thread = self.where(lane)
        op = {"ld": "read", "st": "write"}.get(kind, "atomic access")
        sp = {"global": "__global__", "shared": "__shared__", "local": "__local__", "const": "__constant__"}.get(space, space)
        if why is None:
            shown = addr
            why = self.mem.describe(addr, size)
            address = f"Address 0x{shown:x} is {why}"
        else:
            address = f"Address 0x{addr:x} {why}"
        more = f" ({len(lanes)} threads of this batch made such accesses at this instruction)" \
            if len(lanes) > 1 and counted else ""
        line = inst.place
        msg = (f"Invalid {sp} {op} of size {size} bytes\n"
               f"    at {line} in kernel {self.kernel_name}\n"
               f"    by thread ({thread[0]},{thread[1]},{thread[2]}) in block ({block[0]},{block[1]},{block[2]})\n"
               f"    {address}{more}")
        if code == "cudaErrorMisalignedAddress":
            msg = msg.replace("Invalid", "Misaligned", 1)
        return Finding("memcheck", msg, self.kernel_name, inst.line, block, thread, addr,
                       {"space": space, "access": op, "size": size, "threads": len(lanes)})

    def elsewhere(self, grid=False):
        """The threads of the blocks here (``grid``: of the grid) that have not exited and are not
        at this instruction. Threads waiting to go straight to the kernel's end (`if (i >= n)
        return;` compiles to a branch to the final `ret`) count as exited, as they do on the GPU; so
        do whole warps waiting where no path meets a barrier before the end (`if (threadIdx.x < 32)
        __syncthreads(); out[i] = 1;` with 64 threads): on an H100 they run on and exit, and the
        barrier waits for live threads only (compute-sanitizer's synccheck is silent too). A warp with
        threads at the barrier and others that skipped it stays an error: those others wait for them
        to reconverge first (synccheck reports `if (threadIdx.x < 16) __syncthreads();`)."""
        waiting = ~(self.exited | self.mask)
        if waiting.any() and self.depth == 0:
            # a kernel whose threads end apart holds an entry per group of them at its end (eigenvalues'
            # bisection: over a hundred), checked at every barrier: one pass over their masks
            ends, past = self.kernel.ends, len(self.kernel.code)
            ending = _topmost(self.kernel_stack, lambda pc: pc in ends or pc >= past)
            if ending is not None:
                waiting &= ~ending
            tails = _topmost(self.kernel_stack, lambda pc: ends_without_barrier(self.kernel, pc))
            if tails is not None:   # whole warps only: threads of a warp at the barrier wait for them to reconverge
                at_barrier = np.zeros((len(waiting) >> 5) + 1, bool)
                at_barrier[self.idx >> 5] = True
                waiting &= ~(tails & ~at_barrier[np.arange(len(waiting)) >> 5])
        if waiting.any() and not grid:
            here = np.zeros(int(self.lane_block[-1]) + 1, bool)      # the blocks of the lanes at this instruction
            here[self.lane_block[self.idx]] = True
            waiting &= here[self.lane_block]
        return waiting

    def _run_on_past(self, lanes) -> np.ndarray:
        """Of ``lanes`` (threads away from this barrier), those a GPU since Volta lets the barrier
        complete without: where each waits (its topmost stack entry), every path ends the kernel
        without a barrier, or reaches a ``__syncthreads()`` writing nothing on the way (measured on an
        H200: a tree reduction whose loop a warp's threads leave one by one, and ``if (t < 16)
        __syncthreads(); __syncthreads();``); or, for threads of the warps here, they wait to rejoin the
        threads here after the barrier, whatever they do then: ptxas predicates such a branch and the
        warp arrives whole, its skipping threads storing after the barrier (an H100 ran
        tests/kernels/split_barrier.py's half_warp_waits_while_others_write so)."""
        free = np.zeros(self.n, bool)
        stack = self.kernel_stack
        idx = np.flatnonzero(lanes)
        if self.depth or not stack or not idx.size:
            return free
        top, somewhere = topmost(stack, idx)
        warps = np.zeros((self.n >> 5) + 1, bool)
        warps[self.idx >> 5] = True
        for k in np.unique(top[somewhere]).tolist():
            pc, _, m = stack[k]
            mine = (top == k) & somewhere
            if ends_without_barrier(self.kernel, pc) or _only_heads_for_syncthreads(self.kernel, pc):
                free[idx[mine]] = True
            elif (m & self.mask).any() or rejoins(self.kernel, stack[k]):
                # waiting to rejoin the threads here (an H100 predicates such a branch: the warp arrives
                # whole at the barrier, tests/kernels/split_barrier.py)
                free[idx[mine & warps[idx >> 5]]] = True
        return free

    def _warn_split_barrier(self, inst, apart):
        """synccheck's report of a barrier a warp reached split, as a warning: the kernel goes on
        (once per instruction and launch; ``slack.strict_sync``, synccheck asked for, stops it)."""
        site = (id(inst), "sync", "barrier")
        if site in self.stats.warned:
            return
        block, thread = self.where(int(np.flatnonzero(apart)[0]))
        block, thread = _xyz(block), _xyz(thread)
        line = f"line {inst.line}" if inst.line else "a barrier"
        msg = (f"__syncthreads() at {line} in kernel {self.kernel_name} was reached by only some threads of a warp "
               f"in block {block}; thread {thread} took another path and rejoins the others after it (or goes to the "
               "kernel's end or to another __syncthreads()). A GPU since Volta counts the threads at a barrier one by one and lets the others "
               "run on, so the kernel went on; compute-sanitizer's synccheck reports it as an error, and older GPUs "
               "could hang. Let every thread of the block reach the same __syncthreads(); run with --check synccheck "
               "(cudalab.check(\"synccheck\")) to stop here.")
        f = Finding("synccheck", msg, self.kernel_name, inst.line, block, thread, None,
                    {"warning": True, "space": "barrier", "access": "sync"})
        self.stats.warned[site] = f
        self.stats.findings.append(f)

    def check_barrier(self, inst, warp=False, grid=False):
        """synccheck for __syncthreads() (``grid=True``: for a grid-wide barrier, cudaCGSynchronize)."""
        if warp:
            return
        bad = self.__dict__.pop("apart", None)          # found already (barriers.when_split)
        if bad is None or grid:
            bad = self.elsewhere(grid)
        if bad.any() and not grid and not slack.strict_sync and not (bad & ~self._run_on_past(bad)).any():
            self._warn_split_barrier(inst, bad)
            return
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            block, thread = self.where(lane)
            line = f"line {inst.line}" if inst.line else "a barrier"
            where = f"block ({block[0]},{block[1]},{block[2]})"
            what, of, who = (("grid.sync()", "the grid", f"the grid; thread ({thread[0]},{thread[1]},{thread[2]}) of "
                              f"{where}") if grid else ("__syncthreads()", "the block",
                                                        f"{where}; thread ({thread[0]},{thread[1]},{thread[2]})"))
            msg = (f"Barrier error: {what} at {line} in kernel {self.kernel_name} was reached by only "
                   f"some threads of {who} took another path. On a real GPU this hangs or gives wrong results. "
                   f"Move the {what} out of the if/loop so that every thread of {of} reaches it.")
            f = Finding("synccheck", msg, self.kernel_name, inst.line, block, thread)
            raise KernelError(msg, "cudaErrorLaunchFailure", [f])


def _topmost(stack, where):
    """The lanes whose topmost stack entry (where each thread is now; the entries below it are where it
    rejoins others) is at a pc for which ``where(pc)`` holds, or None if no entry is. A path still to
    run above the entry at the kernel's end is not the end (the other side of an if/else)."""
    marks = [where(pc) for pc, _, _ in stack]
    if not any(marks):
        return None
    low = marks.index(True)
    if low == len(stack) - 1 or not any(not m for m in marks[low + 1:]):
        return np.logical_or.reduce([m for (_, _, m), k in zip(stack, marks) if k])
    above = np.zeros_like(stack[-1][2])
    found = np.zeros_like(above)
    for k in range(len(stack) - 1, low - 1, -1):
        m = stack[k][2]
        if marks[k]:
            found |= m & ~above
        above |= m
    return found


_GEOMETRY: dict = {}


def _geometry(nblocks, lpb, threads, block, shared_stride):
    """Per-lane index arrays of a batch shape, shared by every batch and launch of that shape:
    block of each lane, thread index in the block, shared-memory base, valid lanes, threadIdx, and
    the valid lanes' indices."""
    key = (nblocks, lpb, threads, tuple(block), shared_stride)
    g = _GEOMETRY.get(key)
    if g is None:
        if len(_GEOMETRY) > 32:
            _GEOMETRY.clear()
        # a grid's last, smaller batch (or its sample batch, after a bigger one) is the first blocks of a
        # bigger batch's shape: its arrays are their prefixes (a 2^20-thread launch's first run built a
        # 2,032-block geometry of 19 MB beside the 2,048-block one)
        bigger = min((k for k in _GEOMETRY if k[1:] == key[1:] and k[0] > nblocks), default=None)
        if bigger is not None:
            g = _GEOMETRY[key] = _geometry_prefix(_GEOMETRY[bigger], nblocks, lpb, threads)
        else:
            g = _GEOMETRY[key] = _build_geometry(nblocks, lpb, threads, block, shared_stride)
            for a in g[:4] + g[4] + g[5:]:
                a.setflags(write=False)       # shared by every batch: nobody may change them
    return g


def _geometry_prefix(g, nblocks, lpb, threads):
    """The geometry of a batch's first ``nblocks`` blocks, as views of the bigger batch's ``g``: every
    block has the same layout, so each per-lane array's first lanes are the smaller batch's whole."""
    n = nblocks * lpb
    lane_block, t, shared_base, valid, tid, valid_idx = g
    return (lane_block[:n], t[:n], shared_base[:n], valid[:n], tuple(a[:n] for a in tid),
            valid_idx[:nblocks * threads])


def _build_geometry(nblocks, lpb, threads, block, shared_stride):
    """_geometry's arrays. Every block has the same thread layout: one block's worth is computed and
    broadcast into place (no division over every lane), and all of it goes into one buffer that can
    take 2 MiB pages (_lane_slab). A threadIdx component that is 0 everywhere (.y and .z of a 1-D
    block) is np.zeros, whose pages nobody touches unless the kernel reads it."""
    bx, by, _ = block
    t1 = np.arange(lpb, dtype=np.int64)
    blk = np.arange(nblocks, dtype=np.int64)
    tid1 = [a.astype(np.uint32) for a in (t1 % bx, (t1 // bx) % by, t1 // (bx * by))]
    spread = [k for k in range(3) if k == 0 or tid1[k].any()]
    n = nblocks * lpb
    views = _lane_slab([8 * n, 8 * n, 8 * n, n] + [4 * n] * len(spread) + [8 * nblocks * threads])
    lane_block, t, shared_base = (v.view(dt) for v, dt in zip(views, (np.int64, np.int64, np.uint64)))
    valid = views[3].view(np.bool_)
    lane_block.reshape(nblocks, lpb)[:] = blk[:, None]
    t.reshape(nblocks, lpb)[:] = t1
    shared_base.reshape(nblocks, lpb)[:] = (blk.astype(np.uint64) * np.uint64(shared_stride))[:, None]
    valid.reshape(nblocks, lpb)[:] = t1 < threads
    tid = [np.zeros(n, np.uint32) for _ in range(3)]
    for k, v in zip(spread, views[4:]):
        tid[k] = v.view(np.uint32)
        tid[k].reshape(nblocks, lpb)[:] = tid1[k]
    valid_idx = views[-1].view(np.int64)
    np.add((blk * lpb)[:, None], t1[:threads], out=valid_idx.reshape(nblocks, threads))
    return lane_block, t, shared_base, valid, tuple(tid), valid_idx


_HUGE_PAGE = 2 << 20
SLAB_BYTES = 8 << 20       # lane arrays of a batch shape from one huge-page buffer from this size (_lane_slab)


def _lane_slab(sizes):
    """Uninitialized uint8 arrays of these byte sizes, each 64-byte aligned, cut from one buffer.

    For a big batch the buffer is at least 4 MiB, which numpy asks Linux to back with 2 MiB pages
    (transparent huge pages), and the arrays start at a 2 MiB boundary in it: filling them takes a
    few page faults instead of one per 4 KiB page. (A 2^20-thread launch's first batch took 2,600
    faults here, 10 ms on a virtual machine; it is the first big launch of a shape that pays.)
    Below ``SLAB_BYTES`` the arrays are plain ones: a 2 MiB page can cost Linux a compaction of memory
    first (transparent huge pages' ``defrag=madvise``), and a 256-block batch (2.4 MB of these arrays)
    padded out to 6 MiB of huge pages took 0.7 to 11 ms to fill on the shared dev machine, its plain
    arrays 1.1 to 1.4 ms; compare.py times such launches one at a time, each a new shape."""
    offsets, total = [], 0
    for size in sizes:
        offsets.append(total)
        total += (size + 63) // 64 * 64
    if total < SLAB_BYTES:
        return [np.empty(size, np.uint8) for size in sizes]
    buf = np.empty(max(total, 4 << 20) + _HUGE_PAGE, np.uint8)
    start = -buf.ctypes.data % _HUGE_PAGE
    return [buf[start + off:start + off + size] for off, size in zip(offsets, sizes)]


# ------------------------------------------------------------------ the SIMT loop

_EVERY: dict = {}


def _lanes_of(mask, n):
    """np.flatnonzero(mask), but every lane of the batch is one shared, read-only arange (a
    count costs a twentieth of the scan)."""
    if np.count_nonzero(mask) != n:
        return np.flatnonzero(mask)
    every = _EVERY.get(n)
    if every is None:
        if len(_EVERY) > 8:
            _EVERY.clear()
        every = _EVERY[n] = np.arange(n, dtype=np.int64)
        every.setflags(write=False)
    return every


def run_function(ex: Exec, df: DecodedFunction, frame_mask: np.ndarray, is_kernel: bool, span=None,
                 count: int | None = None):
    """Run ``df`` with the lanes of ``frame_mask`` (``span``: (start, stop) pcs, only that stretch).
    ``count``: the lanes set in ``frame_mask`` where the caller knows it (a kernel starting on the
    batch's valid lanes: a count over the whole batch saved at each batch)."""
    code, reconv = df.code, df.reconv
    n_code = len(code)
    stack = [[0, n_code, frame_mask] if span is None else [span[0], span[1], frame_mask]]
    if is_kernel:
        ex.kernel_stack = stack
    # lanes that returned from this frame: made at the first return that leaves other lanes running
    # (most frames end with one return of all their lanes; a batch's zeros and their pages cost tens of us)
    returned = None
    frame_count = -1 if span is not None else count if count is not None else int(np.count_nonzero(frame_mask))
    # (a stretch: lanes may wait outside it, so no count)
    stats = ex.stats
    observers = ex.observers
    check_every = 0
    backedges = 0
    # a kernel starts on every valid lane: their index list is the batch shape's (engine._geometry),
    # which saves a search of the whole batch per batch while the entry keeps that mask
    frame_idx = ex.valid_idx if is_kernel and frame_count == ex.valid_idx.size else None
    # (cudalab run --why-slow: the thread-instructions interpreted at each pc, why_slow.py; else None)
    tally = why_slow.tally_for(ex.kernel) if why_slow.ON and is_kernel else None
    while stack:
        ent = stack[-1]
        pc, rpc, mask = ent
        if pc == rpc or pc >= n_code:
            stack.pop()
            continue
        if returned is not None and returned.any():
            mask = mask & ~returned
        idx = frame_idx if mask is frame_mask and frame_idx is not None else _lanes_of(mask, ex.n)
        if idx.size == 0:
            stack.pop()
            continue
        ex.mask, ex.idx = mask, idx
        ex.ridx = None if idx.size == frame_count else idx
        backedges = 0
        while True:
            # reconvergence points can lie before the branch in the code layout: compare for equality
            if pc == rpc or pc >= n_code:
                stack.pop()
                break
            kind, fn, inst, aux = code[pc]
            if kind == K_REGION:         # a compiled region pc..aux-1, each lane on its own (regions.py)
                nxt = fn(ex, stack, ent, rpc)
                if nxt is None:          # lanes stopped inside: they are entries of the stack now
                    break
                if nxt >= 0:
                    pc = nxt
                    continue
                kind, fn, inst, aux = fn.orig
            if kind == K_FUSED:          # a compiled group of instructions pc..aux-1 (compiled.py)
                stats.instructions += aux - pc - 1
                stats.thread_instructions += ex.idx.size * (aux - pc - 1)
                check_every += aux - pc - 1
            stats.instructions += 1
            stats.thread_instructions += ex.idx.size
            if tally is not None and kind != K_FUSED:
                tally[pc] += ex.idx.size
            if kind == K_WAIT and ex.parked is not None:
                # lanes parked here try the instruction again: a GPU's thread issues it once and waits
                # (smsp__thread_inst_executed counts it once), whichever path the emulator runs first
                again = ex.parked[ex.idx] >= 0
                if again.any():
                    stats.thread_instructions -= int(np.count_nonzero(again))
            check_every += 1
            if check_every >= 512:
                check_every = 0
                now = time.thread_time()
                if now > ex.deadline or time.monotonic() > ex.wall_deadline:
                    ex.pc_of = {"pc": pc, "inst": inst, "mask": ex.mask, "endless": kind == K_BRA and aux == pc}
                    raise Watchdog()
                if is_kernel and ex.upgrade is not None:
                    # a long batch goes on in native code once it is built (compiled.upgrade_later)
                    native = ex.upgrade(now)
                    if native is not None:
                        ex.upgrade = None
                        code = native.code
            g = inst.guard
            if g is not None:
                pv = ex.fr.regs[g[0]]
                if ex.idx.size != pv.size:       # (every lane active: idx is 0..n-1, no gather needed)
                    pv = pv[ex.idx]
                if g[1]:
                    pv = ~pv
                all_t = pv.all()
                any_t = all_t or pv.any()
            else:
                all_t = any_t = True
            if observers:
                lanes = ex.idx if kind != K_WAIT or ex.parked is None else ex.idx[ex.parked[ex.idx] < 0]
                if lanes.size:      # (lanes trying a wait again were seen the first time)
                    ex.emit(InstructionEvent(inst, lanes, ex.batch))
            if kind == K_NORMAL:
                if all_t:
                    fn(ex)
                elif any_t:
                    ex.run_on(ex.idx[pv], fn, ex)
                pc += 1
                continue
            if kind == K_FUSED:
                fn(ex)
                pc = aux
                continue
            if kind == K_WAIT:
                if returned is None:
                    returned = np.zeros(ex.n, bool)
                if _wait(ex, fn, all_t, any_t, None if g is None else pv, stack, ent, pc, returned):
                    break
                pc += 1
                continue
            if kind == K_BRA:
                if aux <= pc and any_t:
                    backedges += 1
                    if backedges >= SPIN_LOCK_LIMIT and (backedges >= SPIN_LIMIT or _takes_a_lock(df, aux, pc)):
                        spin = ex.spins.get((id(df), aux, pc))
                        if spin is None:
                            spin = ex.spins[(id(df), aux, pc)] = [df, 0, 0]
                        spin[1] += 1
                        if returned is None:
                            returned = np.zeros(ex.n, bool)
                        if _let_waiting_threads_run(stack, ex, returned):
                            # independent thread scheduling: threads parked at a reconvergence point go on
                            # while these keep looping (a spin lock waits for a holder that has left the loop)
                            spin[2] += 1
                            ent[0], ent[2] = pc, ex.mask
                            break
                if observers and g is not None:
                    ex.emit(BranchEvent(inst, ex.idx, ex.batch, taken=np.broadcast_to(pv, ex.idx.shape).copy()
                                        if g is not None else np.ones(ex.idx.size, bool)))
                if all_t:
                    pc = aux
                    continue
                if not any_t:
                    pc += 1
                    continue
                # divergence: the taken lanes and the others go separately, joining at r
                r = reconv.get(pc, n_code)
                t_mask = np.zeros(ex.n, bool)
                t_mask[ex.idx[pv]] = True
                nt_mask = ex.mask & ~t_mask
                if ent[1] == r:
                    # this entry already ends at r: reuse it instead of growing the stack
                    if pc + 1 != r:
                        ent[0], ent[2] = pc + 1, nt_mask
                        stack.append([aux, r, t_mask])
                    else:
                        ent[0], ent[2] = aux, t_mask
                else:
                    ent[0] = r
                    if pc + 1 != r:
                        stack.append([pc + 1, r, nt_mask])
                    stack.append([aux, r, t_mask])
                break
            if kind in (K_RET, K_EXIT):
                if not any_t:
                    pc += 1
                    continue
                # all of the entry's lanes leave (a whole batch, at the kernel's end): or its mask in,
                # ~20x cheaper than scattering its list of lanes
                lanes = ex.mask if all_t else ex.idx[pv]
                last = all_t and len(stack) == 1
                if not last and returned is None:
                    returned = np.zeros(ex.n, bool)
                if all_t and not last:     # (the last entry leaving: nothing reads returned again)
                    returned |= lanes
                elif not all_t:
                    returned[lanes] = True
                if last and is_kernel and kind == K_RET and ex._exited is None:
                    pass            # the kernel's end: nothing asks which lanes exited (and none has before)
                elif is_kernel or kind == K_EXIT:
                    if all_t:
                        ex.exited |= lanes
                    else:
                        ex.exited[lanes] = True
                    if kind == K_EXIT and not is_kernel:
                        ex.exited_in_call = True
                if all_t:
                    stack.pop()
                    break
                ent[2] = ex.mask & ~returned
                ent[0] = pc + 1
                break
            if kind == K_CALL:
                ent[0] = pc
                if all_t:
                    do_call(ex, df, inst, aux)
                elif any_t:
                    ex.run_on(ex.idx[pv], do_call, ex, df, inst, aux)
                # lanes may have exited inside the callee (exit, trap)
                pc += 1
                if ex.exited[ex.idx].any():
                    if returned is None:
                        returned = np.zeros(ex.n, bool)
                    returned |= ex.exited
                    ent[0], ent[2] = pc, ex.mask & ~returned
                    break
                continue
            if kind == K_TRAP:
                if any_t:
                    line = inst.place
                    # brkpt (__brkpt(), Python's breakpoint() in a numba kernel) without a debugger attached
                    # fails the launch as trap does (an H200: CUDA_ERROR_LAUNCH_FAILED)
                    what = ("a breakpoint (brkpt: breakpoint() in Python, __brkpt() in C++) was reached, with no "
                            "debugger attached," if inst.opcode == "brkpt" else "__trap() was called")
                    ex.stop((ex.idx if all_t else ex.idx[pv])[0], "trap", "cudaErrorLaunchFailure", inst,
                            lambda b, t: (f"{what} at {line} in kernel {ex.kernel_name} by thread {t} "
                                          f"in block {b}: the kernel stopped (on a GPU: 'unspecified launch failure')."))
                pc += 1
                continue


def _wait(ex, fn, all_t, any_t, pv, stack, ent, pc, returned):
    """Run a waiting instruction (a named barrier, an mbarrier wait). ``fn`` returns the lanes that
    must wait (None: all went through). Waiting lanes park at ``pc`` and other paths run first:
    if only some lanes wait, they become a path of their own that runs after the others reach this
    entry's reconvergence point; if all wait, lanes found by _let_waiting_threads_run go ahead.
    When nothing else can run, ``fn`` runs again with ``ex.must_proceed`` set and decides: an
    mbarrier wait reads False, a barrier that can never complete is reported as a hang.
    Returns True when the top of the stack changed (the SIMT loop must re-read it)."""
    lanes = ex.idx if all_t else ex.idx[pv] if any_t else None
    if lanes is None:
        return False
    waiting = fn(ex) if all_t else ex.run_on(lanes, fn, ex)
    if ex.parked is not None:
        ex.parked[lanes] = -1
    if waiting is None or waiting.size == 0:
        return False
    if ex.parked is None:
        ex.parked = np.full(ex.n, -1, np.int64)
    ex.parked[waiting] = ex.sync_version
    wait_mask = np.zeros(ex.n, bool)
    wait_mask[waiting] = True
    if waiting.size < ex.idx.size:
        ent[0], ent[2] = pc + 1, ex.mask & ~wait_mask
        stack.insert(len(stack) - 1, [pc, ent[1], wait_mask])
        return True
    ent[0], ent[2] = pc, ex.mask
    if _let_waiting_threads_run(stack, ex, returned):
        return True
    ex.must_proceed = True
    try:
        fn(ex) if all_t else ex.run_on(lanes, fn, ex)
    finally:
        ex.must_proceed = False
    ex.parked[lanes] = -1
    return False


def _let_waiting_threads_run(stack, ex, returned):
    """Find threads parked at a reconvergence point below the top of the stack and let them run on
    ahead (to that entry's own reconvergence point). Volta's independent thread scheduling gives
    such threads forward progress; a lock-step SIMT stack would otherwise spin forever. Threads
    waiting at a barrier that has not changed since they last tried are passed over: they could
    not go on anyway, and trying them again and again would starve the others."""
    above = stack[-1][2].copy()
    stale = ex.parked == ex.sync_version if ex.parked is not None else np.False_
    df = ex.fr.df
    lpb = ex.batch.lanes_per_block
    looping = np.zeros(ex.n // lpb, bool)
    looping[np.flatnonzero(above) // lpb] = True
    looping = np.repeat(looping, lpb)         # the lanes of blocks with a looping thread
    for k in range(len(stack) - 2, -1, -1):
        e = stack[k]
        waiting = e[2] & ~above & ~returned & ~ex.exited & ~stale
        # a __syncthreads() waits for its own block only: threads of other blocks heading for one may be
        # what the loopers wait for (a grid barrier's spin waits for every block's leader)
        elsewhere = waiting & ~looping
        if elsewhere.any():
            waiting = elsewhere
        # threads heading for a __syncthreads() go on when others wait, counted, at one: they complete it
        if waiting.any() and (elsewhere.any() or waits_at_barrier_zero(ex, ex.idx)
                              or not _only_heads_for_syncthreads(df, e[0])):
            e[2] = e[2] & ~waiting
            stack.append([e[0], e[1], waiting])
            return True
        above |= e[2]
    return False


def _takes_a_lock(df, head, pc):
    """Is the loop from ``head`` to its backward branch at ``pc`` one that tries to take a lock
    (an atomicCAS or atomicExch in its body: ``while (atomicCAS(lock, 0, 1)) ;``)? Its lanes have
    gone round ``SPIN_LOCK_LIMIT`` times with none leaving (a lane leaving diverges, which starts
    the count again), so the holder, parked where it left the loop, is let run ahead after those few
    turns rather than ``SPIN_LIMIT``: a block leader's lock taken once per block in a grid-stride
    loop (the CUDA Handbook's spinlockReduction, 16,384 acquisitions) paid 512 interpreted turns
    of every waiting leader per hand-over, 3.4 ms, where a GPU's holder runs on at once. A
    compare-and-swap update loop (a float atomicMax) loses a lane every turn, so it never waits
    that long and keeps lock step's order."""
    known = df.takes_a_lock.get(pc)
    if known is None:
        body = [inst for _, _, inst, _ in df.code[head:pc + 1]]
        known = df.takes_a_lock[pc] = any(map(_takes_lock, body)) or _waits_for_another_thread(body)
    return known


def _takes_lock(inst) -> bool:
    """An atomicCAS or atomicExch: how a thread takes (or gives back) a lock."""
    return inst.opcode == "atom" and ("cas" in inst.mods or "exch" in inst.mods)


def _waits_for_another_thread(body) -> bool:
    """Is a loop body a wait for another thread's write: it reads memory atomically or volatile
    (``while (atomicAdd(&done, 0) < bid) {}``, ``while (flag[bid - 1] == 0) ;`` on a volatile
    pointer) and writes nothing itself? A chained scan's blocks each wait so for the block before
    them (HCMUS's radix sort, PMPP's single-pass scan): the block that was waited for has left the
    loop and is parked at its end, and 512 turns of every waiting leader per hand-over made such a
    scan of 4,096 blocks 25 times slower than the same kernel without the wait. Like a lock, it is
    handed over after ``SPIN_LOCK_LIMIT`` turns."""
    reads = any(inst.opcode == "atom" or (inst.opcode == "ld" and inst.has("volatile", "acquire", "relaxed"))
                for inst in body)
    return reads and not any(inst.opcode in ("st", "red", "bar", "barrier") or
                             (inst.opcode == "atom" and not _adds_nothing(inst)) for inst in body)


def _adds_nothing(inst) -> bool:
    """An atomic that only reads: atomicAdd(p, 0), atomicOr(p, 0) and atomicXor(p, 0), an add, or or
    xor of the literal 0, change nothing (an ``atomicCAS(p, x, x)`` read counts as taking a lock above)."""
    last = inst.operands[-1] if len(inst.operands) >= 3 else None
    return any(m in inst.mods for m in ("add", "or", "xor")) and isinstance(last, tuple) and len(last) >= 2 \
        and last[0] == "imm" and last[1] == 0


_NO_RUNNING_AHEAD = ("st", "atom", "red", "cp", "mbarrier", "sust", "sured", "stmatrix", "multimem", "shfl",
                     "vote", "match", "redux", "activemask", "bar", "barrier", "elect", "wmma", "mma", "ldmatrix")


def _only_heads_for_syncthreads(df, pc):
    """Do threads at ``pc`` reach a __syncthreads() on every path, writing no memory and meeting no
    other thread on the way? Then no looping thread can be waiting for them, and letting them run
    ahead would only bring them early to a barrier that waits for the loopers (a false synccheck
    error for ``if (threadIdx.x == 0) { long loop } __syncthreads();``): on a GPU they wait there."""
    known = df.heads_for_syncthreads.get(pc)
    if known is None:
        known = df.heads_for_syncthreads[pc] = _paths_end_at_syncthreads(df.code, pc)
    return known


def every_path(code, pc, verdict, past_end, limit=None):
    """Does every path from ``pc`` end well? ``verdict(pc, kind, inst)`` judges each instruction on
    the way: True ends the path well, False the whole walk badly, None goes on (a branch is then
    followed, both ways where guarded); a path that runs past the code ends as ``past_end``, and a
    walk of more than ``limit`` instructions (when given) badly. A path that joins one already
    followed (or loops) is done. The one control-flow walker: the barrier checks here and
    barriers.py's split-warp questions are all verdicts over it."""
    todo, seen = [pc], set()
    while todo:
        pc = todo.pop()
        while pc not in seen:
            if pc >= len(code):
                if not past_end:
                    return False
                break
            if limit is not None and len(seen) > limit:
                return False
            seen.add(pc)
            kind, _, inst, aux = code[pc]
            judged = verdict(pc, kind, inst)
            if judged is not None:
                if not judged:
                    return False
                break
            if kind == K_BRA:
                if inst.guard is not None:
                    todo.append(pc + 1)
                pc = aux
                continue
            pc += 1
    return True


def _paths_end_at_syncthreads(code, pc, limit=256, quiet=True):
    """Does every path from ``pc`` meet a ``__syncthreads()`` (``quiet``: doing nothing another
    thread could see on the way; else anything but ending the kernel)?"""
    def verdict(_pc, kind, inst):
        if inst.opcode in ("bar", "barrier") and not ({"warp", "arrive"} & set(inst.mods)) \
                and not is_named_barrier(inst):
            return True
        if kind == K_BRA:
            return None
        if kind in (K_RET, K_EXIT, K_TRAP) or quiet and (kind != K_NORMAL or inst.opcode in _NO_RUNNING_AHEAD):
            return False
        return None
    return every_path(code, pc, verdict, past_end=False, limit=limit)


def reaches_syncthreads(df, pc, limit=4096) -> bool:
    """Does every path from ``pc`` meet a ``__syncthreads()`` before the kernel's end? (Whatever it
    does on the way: threads there will arrive at the barrier that others wait at.)"""
    known = df.reaches_syncthreads.get(pc)
    if known is None:
        known = df.reaches_syncthreads[pc] = _paths_end_at_syncthreads(df.code, pc, limit, quiet=False)
    return known


def ends_without_barrier(df, pc, limit=4096) -> bool:
    """Does every path from ``pc`` end the kernel without meeting a barrier (or a call, which might
    hold one)? Threads waiting there will never arrive at one."""
    known = df.ends_without_barrier.get(pc)
    if known is None:
        known = df.ends_without_barrier[pc] = _ends_without_barrier(df.code, pc, limit)
    return known


def _ends_without_barrier(code, pc, limit):
    def verdict(_pc, kind, inst):
        if kind == K_CALL or inst.opcode in ("bar", "barrier") and "warp" not in inst.mods:
            return False
        if kind in (K_RET, K_EXIT, K_TRAP) and inst.guard is None:
            return True
        return None
    return every_path(code, pc, verdict, past_end=True, limit=limit)


def do_call(ex: Exec, caller: DecodedFunction, inst, aux):
    fname, rets, args = aux
    if isinstance(fname, tuple):
        # function pointer / virtual call: each distinct target runs with the lanes that chose it
        targets = ex.fr.regs[fname[1]][ex.idx].astype(np.uint64)
        results = {r: None for r in rets}
        for t in np.unique(targets).tolist():
            name = ex.program.func_at.get(int(t))
            if name is None:
                ex.stop(ex.idx[targets == t][0], "memcheck", "cudaErrorIllegalInstruction", inst, lambda b, th: (
                    f"A call through a function pointer at line {inst.line} in kernel {ex.kernel_name} jumped to "
                    f"0x{int(t):x}, which is not a device function (thread {th} of block {b}). Is the pointer set?"),
                    int(t))
            sub = ex.idx[targets == t]
            ex.run_on(sub, do_call, ex, caller, inst, (name, rets, args))
            for r in rets:       # each group's return values land in its own lanes' rows
                got = ex.fr.params[r]
                if results[r] is None:
                    results[r] = got.copy()
                else:
                    results[r][sub] = got[sub]
        for r in rets:
            ex.fr.params[r] = results[r]
        return
    if fname in DEVICE_FUNCTIONS and len(args) == NATIVE_ARITY.get(fname, len(args)):
        return DEVICE_FUNCTIONS[fname](ex, inst, rets, args)
    if fname in BUILTINS:
        return _builtin(ex, inst, fname, rets, args)
    callee = ex.program.function(fname)
    if ex.depth >= MAX_CALL_DEPTH:
        ex.stop(ex.idx[0], "stack", "cudaErrorLaunchOutOfResources", inst, lambda b, t: (
            f"Call stack overflow: {fname} called itself (directly or not) more than {MAX_CALL_DEPTH} levels "
            f"deep at line {inst.line} in kernel {ex.kernel_name}, thread {t} of block {b}. "
            "Check the recursion's base case."))
    caller_frame = ex.fr
    base = caller_frame.local_base + caller.local_size
    if callee.local_size and base + callee.local_size > ex.local_stride:
        ex.stop(ex.idx[0], "stack", "cudaErrorLaunchOutOfResources", inst, lambda b, t: (
            f"Stack overflow in {fname} (line {inst.line}, kernel {ex.kernel_name}, thread {t} of block {b}): "
            f"the thread's {ex.local_stride}-byte stack is full. Deep recursion with local arrays uses it up."))
    frame = Frame(callee, ex.n, base)
    for p, a in zip(callee.func.params, args):
        frame.params[p.name] = caller_frame.param_buffer(a)
    for p in callee.func.returns:
        frame.param_buffer(p.name)
    save = ex.fr, ex.idx, ex.ridx, ex.mask, ex._special
    ex.fr = frame
    ex.depth += 1
    try:
        run_function(ex, callee, ex.mask.copy(), is_kernel=False)
    finally:
        ex.depth -= 1
        ex.fr, ex.idx, ex.ridx, ex.mask, ex._special = save
    for p, r in zip(callee.func.returns, rets):
        caller_frame.params[r] = frame.params[p.name]
    for r in rets[len(callee.func.returns):]:
        # a callee defined without the return value its declaration promised (numba declares a C-ABI
        # void function as returning a word, which it never reads): on a GPU the register is undefined
        caller_frame.params.pop(r, None)
        caller_frame.param_buffer(r)


# ------------------------------------------------------------------ printf, assert, malloc

def _param_u64(ex, name, sel):
    buf = ex.fr.param_buffer(name)
    return np.ascontiguousarray(buf[sel, 0:8]).view(np.uint64)[:, 0]


def read_cstring(mem: DeviceMemory, addr: int, limit: int = 4096) -> str:
    off = int(addr) - GLOBAL_BASE
    data = mem.data[off:off + limit].tobytes()
    return data.split(b"\0", 1)[0].decode(errors="replace")


def _builtin(ex: Exec, inst, fname, rets, args):
    sel = ex.idx
    if fname == "vprintf":
        fmts = _param_u64(ex, args[0], sel)
        bufs = _param_u64(ex, args[1], sel)
        cache = {}
        out = ex.stats.printed
        for lane, fa, ba in zip(sel.tolist(), fmts.tolist(), bufs.tolist()):
            fmt = cache.get(fa)
            if fmt is None:
                fmt = cache[fa] = read_cstring(ex.mem, fa)
            if ba >= LOCAL_WINDOW and ba < GLOBAL_BASE:
                start = lane * ex.local_stride + (ba - LOCAL_WINDOW)
                raw = ex.local[start: (lane + 1) * ex.local_stride].tobytes()
            elif ba == 0:
                raw = b""
            else:
                raw = ex.mem.data[ba - GLOBAL_BASE: ba - GLOBAL_BASE + 256].tobytes()
            out.append(format_call(fmt, ArgReader(raw, lambda a: read_cstring(ex.mem, a) if a else "(null)")))
        if rets:
            buf = ex.fr.param_buffer(rets[0])
            buf[sel, 0:4] = 0
        return
    if fname == "__assertfail":
        msgs = _param_u64(ex, args[0], sel)
        files = _param_u64(ex, args[1], sel)
        lines = np.ascontiguousarray(ex.fr.param_buffer(args[2])[sel, 0:4]).view(np.uint32)[:, 0]
        funcs = _param_u64(ex, args[3], sel)
        lane = int(sel[0])
        block, thread = ex.where(lane)
        text = read_cstring(ex.mem, int(msgs[0]))
        file = read_cstring(ex.mem, int(files[0]))
        func = read_cstring(ex.mem, int(funcs[0]))
        ln = int(lines[0])
        msg = (f"{file}:{ln}: {func}: block: [{block[0]},{block[1]},{block[2]}], thread: "
               f"[{thread[0]},{thread[1]},{thread[2]}] Assertion `{text}` failed.")
        if sel.size > 1:
            msg += f"\n({sel.size} threads of this batch failed this assertion; the first is shown.)"
        raise KernelError(msg, "cudaErrorAssert", [Finding("assert", msg, ex.kernel_name, ln, block, thread)])
    if fname == "malloc":
        sizes = _param_u64(ex, args[0], sel)
        ptrs = devrt.heap_alloc(ex, sizes.tolist(), zero_is_null=False)
        buf = ex.fr.param_buffer(rets[0])
        buf[sel, 0:8] = ptrs.view(np.uint8).reshape(-1, 8)
        return
    if fname == "free":
        for lane, p in zip(sel.tolist(), _param_u64(ex, args[0], sel).tolist()):
            if not p:
                continue
            a = ex.mem.allocs.get(int(p))
            freed = a is not None and (a.freed or (ex.grid_state is not None and ex.grid_state.heap_freed(p)))
            if a is None or freed or a.label != "device malloc":
                what = ("was already freed" if freed else
                        "is not the start of an allocation made by malloc() in a kernel")
                ex.stop(lane, "memcheck", "cudaErrorLaunchFailure", inst, lambda b, t: (
                    f"free() at line {inst.line} in kernel {ex.kernel_name}, thread {t} of block {b}: the pointer "
                    f"0x{int(p):x} {what}. Free each malloc() pointer exactly once."), int(p))
            if ex.grid_state is not None:
                ex.grid_state.free_heap(int(p))
            else:
                ex.mem.free(int(p))
        return
    raise UnsupportedError(f"the device function {fname} is not available in the emulator")


# ------------------------------------------------------------------ launch

def _kept(df: DecodedFunction, name: str, compute):
    """``compute()``, once per decoded function: its code never changes, and every launch asks."""
    known = df.__dict__.get(name)
    if known is None:
        known = df.__dict__[name] = compute()
    return known


def uses_grid_sync(df: DecodedFunction) -> bool:
    """cooperative_groups' grid.sync() reads its workspace from %envreg1/2: such a kernel is launched
    cooperatively (all blocks resident), as numba.cuda does when it sees a grid sync; numba.cuda's own
    ``cg.this_grid()`` asks the device runtime for it (cudaCGGetIntrinsicHandle, devrt.py).
    (Every launch asks: the answer is kept with the decoded function.)"""
    return _kept(df, "_grid_sync", lambda: any((o[0] == "sreg" and o[1].startswith("envreg")) or
                                                (o[0] == "sym" and o[1] == devrt.GRID_HANDLE)
                                                for i in df.func.insts for o in i.operands))


def shared_layout(program: Program, df: DecodedFunction, dynamic: int):
    """Byte offsets of the shared variables a kernel uses, static first, dynamic (extern) last."""
    used = _kept(df, "_shared_used", lambda: _shared_used(program, df))
    layout, off, extern = {}, 0, []
    for v in program.module.variables.values():
        if v.space != "shared" or v.name not in used:
            continue
        if v.extern or v.size == 0:
            extern.append(v)
            continue
        off = (off + v.align - 1) // v.align * v.align
        layout[v.name] = off
        off += v.size
    static = off
    dyn_off = (off + 15) // 16 * 16 if extern else off
    for v in extern:
        layout[v.name] = dyn_off
    total = (dyn_off + dynamic) if extern or dynamic else static
    return layout, static, total


def static_shared(program: Program, df: DecodedFunction) -> int:
    """Bytes of the kernel's static __shared__ variables (shared_layout's second answer), kept with the
    decoded function like the variables it uses: every launch's record asks (the timeline's blocks per
    SM), and shared_layout walks all the module's variables (hundreds in a CUB program)."""
    return _kept(df, "_static_shared", lambda: shared_layout(program, df, 0)[1])


def _shared_used(program: Program, df: DecodedFunction) -> frozenset:
    """The symbols the kernel and the functions it calls name (its shared variables among them)."""
    used = set()
    seen, todo = set(), [df.func.name]
    while todo:
        name = todo.pop()
        if name in seen or name not in program.module.functions:
            continue
        seen.add(name)
        f = program.module.functions[name]
        for inst in f.insts:
            for o in _walk(inst.operands):
                if o[0] == "sym":
                    used.add(o[1])
                    if o[1] in program.module.functions:
                        todo.append(o[1])
    return frozenset(used)


def _walk(ops):
    for o in ops:
        if o[0] in ("vec", "list"):
            yield from _walk(o[1])
        elif o[0] == "mem":
            if o[1] is not None:
                yield o[1]
        elif o[0] == "pair":
            yield o[1]
            yield o[2]
        else:
            yield o


def stack_size(program: Program, df: DecodedFunction):
    """Local bytes per thread: the deepest chain of depots, at least 1 KiB when the code recurses
    (CUDA's default per-thread stack is 1 KiB). Kept with the decoded function: every launch asks."""
    return _kept(df, "_stack_size", lambda: _stack_size(program, df))


def _stack_size(program: Program, df: DecodedFunction):
    memo, recursive = {}, [False]

    def depth(name, path):
        if name in path:
            recursive[0] = True
            return 0
        if name in memo:
            return memo[name]
        f = program.module.functions.get(name)
        if f is None or f.extern:
            return 0
        decoded = program.function(name)
        own = decoded.local_size
        deepest = 0
        for inst in decoded.func.insts:      # (a kernel's own calls: those ptx/inline.py left)
            if inst.opcode == "alloca":      # dynamic stack allocation (sm90.py): CUDA's 1 KiB default stack
                recursive[0] = True
            if inst.opcode == "call":
                target = ir.call_parts(inst)[0]
                if target is not None and target[0] == "sym":
                    deepest = max(deepest, depth(target[1], path | {name}))
                elif target is not None:
                    # a call through a pointer (a virtual function): ptxas cannot size the stack either and
                    # says so; the GPU gives the thread cudaLimitStackSize. Any function whose address the
                    # module takes may be the callee, so its chain counts as this call's
                    recursive[0] = True
                    for callee in _address_taken(program):
                        deepest = max(deepest, depth(callee, path | {name}))
        memo[name] = own + deepest
        return memo[name]

    need = depth(df.func.name, frozenset())
    if recursive[0]:
        need = max(need * 4, 1024)
    return (need + 15) // 16 * 16


def _address_taken(program: Program) -> list:
    """The module's functions whose address it takes (in a virtual-function table's initializer, or
    moved into a register), those a call through a pointer can reach: a ray tracer's
    ``hittable_list::hit`` calls each object's ``hit`` so, and those frames lie on the same stack."""
    module = program.module

    def found():
        names = {sym for v in module.variables.values() for _off, sym in v.relocs}
        for f in module.functions.values():
            for inst in f.insts:
                if inst.opcode != "call":
                    names.update(o[1] for o in inst.operands if o[0] == "sym")
        return sorted(n for n in names if n in module.functions and not module.functions[n].is_entry)
    if not hasattr(module, "_address_taken"):
        module._address_taken = found()
    return module._address_taken


def register_bytes(df) -> int:
    """Bytes per lane of the kernel's registers, all in use (each is made on first use, so a batch
    may hold them all by its end), less those that live only inside a tensor-core program: they get
    no array over the batch (mma_runs.Run.unheld and .joined; the largest program's count, for the
    scratch rows and a stop's hand-over). An unrolled GEMM's k-loops name thousands of them
    (tf32TensorCoreGemm's async-copy kernel: 13.2 of its 52.6 kB a lane are left), and counting them
    made its batches 19 blocks where 77 fit: every interpreted instruction, cp.async and program call
    paid its Python once per batch, four times as often."""
    n = df.__dict__.get("_register_bytes")
    if n is None:
        n = df._register_bytes = sum(storage(t).itemsize for t in df.func.regs.values()) - \
            mma_runs.unheld_bytes(df.code, df.func.regs)
    return n


@dataclass(frozen=True)
class LaunchPlan:
    """What a launch needs before its first block runs and that is the same at every launch of one
    shape: its cluster shape, shared-memory layout, lanes per block, local memory, blocks per batch.
    Kept per (grid, block, dynamic shared bytes, cluster) with the decoded function
    (``launch_plan``), because programs launch the same kernel the same way thousands of times (a
    loop that times it, a graph replayed) and each launch re-deriving these cost more CPU than a
    small kernel's own run. Only a shape that passed its checks is kept: a bad one raises each time."""

    shape: object                   # cluster.ClusterShape
    layout: dict                    # shared variable -> byte offset (never changed by a launch)
    total_shared: int               # static + dynamic bytes per block
    threads: int                    # per block
    lpb: int                        # lanes per block: threads padded to whole warps
    blocks: int                     # in the grid
    local_stride: int               # local bytes per thread (stack_size)
    cooperative: bool               # uses grid.sync(): every block in one batch
    per_block_bytes: int            # a block's share of a batch's memory
    interpreter_bpb: int            # blocks per batch of the interpreter's LANE_BUDGET lanes

    def blocks_per_batch(self, lanes: int, grid, kernel_name: str) -> int:
        """Blocks in a batch of about ``lanes`` lanes, within BATCH_BYTES, rounded to whole clusters:
        a kernel of thousands of PTX registers (unrolled tensor-core tiles) over 2^17 lanes would
        need gigabytes, and a notebook killed for memory loses everything."""
        bpb = max(1, min(self.blocks, lanes // self.lpb, BATCH_BYTES // max(self.per_block_bytes, 1)))
        return cluster_mod.batch_blocks(bpb, grid, self.shape, self.lpb, kernel_name)


MAX_PLANS = 64          # launch shapes kept per kernel (a sweep over block sizes starts again past it)


def launch_plan(program: Program, df: DecodedFunction, grid, block, dynamic_shared: int, cluster=None,
                non_portable_cluster: bool = False, kernel_name: str = "") -> LaunchPlan:
    """The LaunchPlan of one launch shape, checked (cluster shape, local memory, a cooperative grid's
    size) and derived the first time, then kept with the decoded function."""
    plans = df.__dict__.setdefault("_plans", {})
    # a cluster is given as CUDA's dim3 or, from Python, as one number (cluster=16)
    key = (tuple(grid), tuple(block), int(dynamic_shared),
           None if cluster is None else tuple(cluster) if hasattr(cluster, "__iter__") else int(cluster),
           bool(non_portable_cluster))
    plan = plans.get(key)
    if plan is not None:
        return plan
    shape = cluster_mod.launch_shape(df.func, grid, cluster, kernel_name, non_portable_cluster)
    layout, _, total_shared = shared_layout(program, df, dynamic_shared)
    threads = block[0] * block[1] * block[2]
    lpb = (threads + 31) // 32 * 32
    blocks = grid[0] * grid[1] * grid[2]
    local_stride = stack_size(program, df)
    if local_stride > MAX_LOCAL:
        from ..errors import LaunchError
        raise LaunchError(f"{kernel_name} needs {local_stride:,} bytes of local memory per thread (local arrays and "
                          f"the call stack), more than the {MAX_LOCAL:,} a GPU allows. Use a smaller local array, or "
                          "shared or global memory.", "cudaErrorLaunchOutOfResources")
    per_block_bytes = lpb * (local_stride + register_bytes(df) + LANE_BYTES) + max(total_shared, 16)
    plan = LaunchPlan(shape, layout, total_shared, threads, lpb, blocks, local_stride, uses_grid_sync(df),
                      per_block_bytes, 0)
    plan = replace(plan, interpreter_bpb=plan.blocks_per_batch(LANE_BUDGET, grid, kernel_name))
    # grid.sync() needs every block resident at once, as a cooperative launch guarantees: one batch
    if plan.cooperative and blocks * lpb > MAX_COOPERATIVE_LANES:
        from ..errors import LaunchError
        raise LaunchError(f"{kernel_name} uses grid.sync(), so all its blocks must run at once (a cooperative "
                          f"launch), but {blocks:,} blocks of {threads} threads are too many. Launch at most "
                          f"{MAX_COOPERATIVE_LANES // lpb:,} blocks (or use cudalab.occupancy to size the grid).",
                          "cudaErrorCooperativeLaunchTooLarge")
    if len(plans) >= MAX_PLANS:
        plans.clear()
    plans[key] = plan
    return plan


def launch(program: Program, mangled: str, *args, kernel_name: str = "", **kwargs) -> LaunchStats:
    """Run one kernel launch to completion (``_launch``). Jupyter's stop button may land before
    the first block runs, while the launch is being set up (loading its native code from the disk
    cache takes a moment): that ends the launch with the same kind of error as one that lands
    while it runs, not with a bare KeyboardInterrupt from cudalab's insides."""
    try:
        return _launch(program, mangled, *args, kernel_name=kernel_name, **kwargs)
    except KeyboardInterrupt:
        name = kernel_name or mangled
        msg = f"The kernel {name} was interrupted before it began to run. No memory was changed."
        raise KernelError(msg, "cudaErrorLaunchFailure", [Finding("interrupted", msg, name)]) from None


def _launch(program: Program, mangled: str, grid, block, dynamic_shared: int, kparams: bytes,
            observers=(), timeout: float = 10.0, kernel_name: str = "", checks=(), cluster=None,
            non_portable_cluster: bool = False, wall_deadline: float = float("inf"), progress=None,
            _device_launch=None) -> LaunchStats:
    """Run one kernel launch to completion; raises KernelError on a fault, assert, trap or timeout.

    ``timeout`` is the watchdog in CPU seconds; ``wall_deadline`` a time.monotonic() instant (a
    whole program's time limit) past which the launch is stopped the same way. ``cluster`` is the
    launch's cluster size (cudaLaunchAttributeClusterDimension), None for none (``__cluster_dims__``
    still applies). The launch returns once the grid and every grid it launched from the device
    (dynamic parallelism, devrt.py) have finished, as CUDA's grid completion does. ``progress`` is
    called with a ``pace.Progress`` after every batch of blocks (a progress bar); a grid that would
    clearly outlast ``timeout`` or ``wall_deadline`` is stopped after its first, small batch (pace.py)."""
    df = program.function(mangled)
    kernel_name = kernel_name or mangled
    plan = launch_plan(program, df, grid, block, dynamic_shared, cluster, non_portable_cluster, kernel_name)
    shape, layout, total_shared, threads, lpb = plan.shape, plan.layout, plan.total_shared, plan.threads, plan.lpb
    nblocks_total, local_stride, cooperative = plan.blocks, plan.local_stride, plan.cooperative
    bpb = native_bpb = plan.interpreter_bpb
    # (a grid within one interpreter batch is one batch either way, unless it runs quick code: compiled.py)
    if nblocks_total * lpb > min(LANE_BUDGET, compiled.QUICK_BATCH_LANES):
        native_bpb = plan.blocks_per_batch(compiled.batch_lanes(program, df, observers, nblocks_total * lpb,
                                                                shape.size), grid, kernel_name)
    workspace = 0
    if cooperative:
        bpb = nblocks_total
        workspace = program.memory.alloc(8, label="grid sync workspace")
    stats = LaunchStats() if _device_launch is None else _device_launch.stats
    if _device_launch is None:
        stats.global_bytes_per_instruction = global_bytes_per_instruction(df.func)
        stats.chain_cycles = chain_cycles(df.func)
    if why_slow.ON:
        why_slow.launched(program, df, kernel_name)
    # CPU time of this thread, not wall time: a busy shared machine (mybinder) must not kill a good
    # kernel, nor may a compile running in the background
    pace = Pace(kernel_name, nblocks_total, timeout, wall_deadline, stats, progress)
    pace.sample_of = bpb                 # the first (sample) batch: the interpreter's size either way
    pace.known_pace = _pace_known(df, native_bpb > bpb and not cooperative and not observers, nblocks_total * threads,
                                  timeout)
    bpb = native_bpb if not cooperative else bpb
    for o in observers:
        o.on_launch_start(dict(kernel=kernel_name, grid=grid, block=block, shared=total_shared, cluster=shape.dims))
    RUNNING.append(pace)
    grid_state = None
    with _quiet_fp():
        try:
            grid_state = devrt.GridState(program, stats, _device_launch, kernel_name, timeout, observers, checks,
                                         wall_deadline, pace)
            counted = stats.thread_instructions
            _run_batches(program, df, grid, block, kparams, observers, stats, pace, kernel_name,
                         checks, layout, total_shared, threads, lpb, local_stride, bpb, workspace, shape, grid_state)
            if why_slow.ON:
                why_slow.counted(df, stats.thread_instructions - counted)
            grid_state.finish()              # the grids it launched from the device run now (devrt.py)
            if _device_launch is None:
                end = pace.ended if pace.ended is not None and not stats.device_launches else time.thread_time()
                stats.cpu_seconds = pace.total_cpu(end)
        except KernelError as e:
            e.printed = list(stats.printed)     # what the kernel printed before it stopped is shown too
            e.cpu_seconds = pace.total_cpu()
            raise
        except KeyboardInterrupt:
            # Jupyter's stop button (or Ctrl-C): end the launch cleanly; the next one works as usual
            msg = (f"The kernel {kernel_name} was interrupted while it ran. {pace.progress().describe()} "
                   "Memory it was writing may be partly updated.")
            err = KernelError(msg, "cudaErrorLaunchFailure", [Finding("interrupted", msg, kernel_name)])
            err.printed = list(stats.printed)
            err.cpu_seconds = pace.total_cpu()
            raise err from None
        finally:
            RUNNING.remove(pace)
            if workspace:
                program.memory.free(workspace)
            _unlink(pace, grid_state)
    for o in observers:
        o.on_launch_end(stats)
    return stats


try:        # numpy's own context variable of floating-point error handling, set without np.errstate's steps
    from numpy._core._ufunc_config import _extobj_contextvar as _FP_STATE, _make_extobj
    _FP_IGNORED = _make_extobj(all="ignore")
except ImportError:         # (another numpy: np.errstate itself)
    _FP_STATE = None


class _QuietFP:
    """``np.errstate(all="ignore")`` for a launch (a kernel's float overflow or 0/0 is no numpy warning):
    the same context variable set to the same value, made once. np.errstate builds it anew at every
    ``with`` (2 to 4 us a launch, launch19)."""
    __slots__ = ("token",)

    def __enter__(self):
        self.token = _FP_STATE.set(_FP_IGNORED)

    def __exit__(self, *exc):
        _FP_STATE.reset(self.token)


def _quiet_fp():
    return _QuietFP() if _FP_STATE is not None else np.errstate(all="ignore")


def _unlink(pace, grid_state):
    """Break the launch's reference cycles (the last batch's Exec -> its grid state -> the launch's Pace
    -> that Exec; a root grid state's ``root`` is itself), so its objects go when the launch returns
    instead of waiting for the garbage collector: a collection every few dozen launches that freed
    them all took 0.25 to 0.5 ms, 20 to 30 us a launch of a small kernel."""
    pace.batch = None
    if grid_state is not None and grid_state.root is grid_state:
        grid_state.root = None


def _run_batches(program, df, grid, block, kparams, observers, stats, pace, kernel_name,
                 checks, layout, total_shared, threads, lpb, local_stride, bpb, workspace=0, shape=None,
                 grid_state=None):
    whole_clusters = lambda n: cluster_mod.batch_blocks(n, grid, shape, lpb, kernel_name)  # noqa: E731
    if not observers and does_nothing(df):
        # every thread runs one ret: counted as the batches would count it, without building them (an
        # empty kernel launched over a 2^30-thread grid 1000 times: 126 ms a launch in 8,192 batches)
        sizes = [nb for _, nb in pace.batches(bpb, whole_clusters)]
        stats.batches += len(sizes)
        stats.instructions += len(sizes)
        stats.thread_instructions += pace.blocks_total * threads
        pace.batch_done(pace.blocks_total, 0.0)
        return
    # register arrays of the previous batch (not kept for observers): the first batch takes the last
    # launch's, if it was small (KEEP_REGISTERS), so a kernel launched in a loop allocates no registers
    pool = None if observers else df.__dict__.pop("_pool", None)
    # and its shared and local memory, zeroed again (_zeroed)
    spare = pool.pop(SPARE, None) if pool else None
    native_only = True          # every batch ran the kernel's native code (its pace: _pace_known)
    # batches that may run on several threads at once (parallel.py): their own stats, added in block order
    # (a grid of one batch has nothing to run beside it: not asked, 5% of a one-block launch's Python)
    window = _window(program, df, observers, checks, shape, bpb, lpb, local_stride, total_shared) \
        if pace.blocks_total > bpb else 1
    if window > 1 and pace.blocks_total > bpb:
        # as many batches as a multiple of the threads: a 2^20-thread matmul's two native batches of 2^19
        # lanes each go to a thread of their own, five batches on two threads would leave one alone
        threads_n = min(parallel.workers(), window)
        batches = -(-pace.blocks_total // bpb)
        bpb = -(-pace.blocks_total // (-(-batches // threads_n) * threads_n))
        # the launch is timed by its busiest thread (pace.py), and its estimates share the rest out
        pace.cores = parallel.cores()
        pace.ways = min(threads_n, pace.cores)
    flight = []                 # batches running on worker threads, oldest first
    ended = None                # this thread's CPU clock at the end of its last batch (None: read it afresh)
    # a batch's end (waited for, oldest first): done(batch, the later ones still running) -> (pool, spare)
    done = functools.partial(_batch_done, df=df, program=program, observers=observers, stats=stats, pace=pace,
                             kernel_name=kernel_name, kparams=kparams, total_shared=total_shared, layout=layout,
                             local_stride=local_stride, shape=shape, threads=threads)
    try:
        for first, nb in pace.batches(bpb, whole_clusters):
            batch = BatchInfo(first, nb, tuple(grid), tuple(block), threads, lpb)
            for o in observers:
                o.on_batch_start(batch)
            ex = Exec(program, df, batch, kparams, total_shared, layout, local_stride, observers, stats,
                      pace.deadline, kernel_name, checks, spare)
            spare = None
            ex.fr = Frame(df, ex.n, 0, pool)
            pool = None
            ex.grid_workspace = workspace
            ex.wall_deadline = pace.wall_deadline
            pace.batch = ex
            ex.cluster, ex.grid_state = shape, grid_state
            stats.batches += 1
            # native code that is there and has nothing to wait for is taken without reading the clock
            # around it (each thread_time() is a system call, 1 to 3 us: launch19)
            run_df = compiled.ready(df, observers, shape.size if shape else 1)
            if run_df is None:
                t_pick = time.thread_time()
                run_df = compiled.pick(program, df, observers, pace.blocks_total * lpb, shape.size if shape else 1)
                t0 = time.thread_time()         # (the CPU clock is a system call: read once for both)
                pace.not_counted(t0 - t_pick)   # compiling is not the kernel's time (the watchdog's clock
                # is this thread's CPU time, so background compiles are not counted either)
            else:
                t0 = time.thread_time()
            native_only = native_only and run_df is not df
            ex.deadline = pace.deadline
            b = parallel.Batch(ex, run_df, batch, nb)
            if window > 1 and _beside(df, run_df, pace, t0, threads):
                # on a worker thread, with its own stats and its own clock against the time its worker has left
                b.budget = functools.partial(pace.worker_left, t0 - pace.start)
                b.clock = pace.workers
                ex.stats = parallel.own_stats(stats, LaunchStats)
                pace.in_flight.append(ex)
                parallel.submit(b, _run_batch, min(parallel.workers(), window))
                flight.append(b)
                ended = None
                while len(flight) >= window:
                    pool, spare = done(flight[0], flight[1:])
                    flight.pop(0)
                continue
            waited = bool(flight)
            while flight:               # (in block order: the batches before it end first)
                pool, spare = done(flight[0], flight[1:])
                flight.pop(0)
            if run_df is df:
                ex.upgrade = compiled.upgrade_later(program, df, observers, shape.size if shape else 1, pace.timeout)
            parallel.run(b, _run_batch, None if waited else t0)     # (the clock as read above: a system call less)
            ended = b.ended
            pool, spare = done(b, ())
            if pace.blocks_done < pace.blocks_total and run_df is not df and window <= parallel.workers():
                # a native batch shows what one holds (_window): more of the rest may run at once
                wider = _window(program, df, observers, checks, shape, bpb, lpb, local_stride, total_shared)
                if wider > window:
                    window, pace.cores = wider, parallel.cores()
                    pace.ways = min(parallel.workers(), window, pace.cores)
        while flight:
            pool, spare = done(flight[0], flight[1:])
            flight.pop(0)
    finally:
        parallel.stop(flight)           # an error or an interrupt: none may go on writing memory
        pace.in_flight.clear()
    pace.ended = ended
    if native_only and not observers and pace.blocks_done == pace.blocks_total:
        df._native_pace = pace.cpu_seconds(ended) / (pace.blocks_total * threads)
    kept = sum(a.nbytes for a in pool.values()) if pool else 0
    # (a kernel that native code runs whole leaves no registers: its spare memory is kept all the same, so
    # that its next launch runs on the same buffers and the same native context, compiled._context)
    if pool is not None and kept <= KEEP_REGISTERS:
        if spare is not None and kept + spare[0].nbytes + spare[1].nbytes <= KEEP_REGISTERS:
            pool[SPARE] = spare
        df._pool = pool
        _POOLED[:] = [d for d in _POOLED if d is not df] + [df]
        while len(_POOLED) > KEEP_POOLS:
            _POOLED.pop(0).__dict__.pop("_pool", None)


def _run_batch(b):
    """Run one batch's kernel from its start (on this thread or a worker's: parallel.run)."""
    ex = b.ex
    # (the batch shape's valid lanes themselves: read-only, and the stack makes new masks)
    run_function(ex, b.run_df, ex.valid, is_kernel=True, count=ex.valid_idx.size)


def _batch_done(b, later, df, program, observers, stats, pace, kernel_name, kparams, total_shared, layout,
                local_stride, shape, threads):
    """After a batch (the oldest still running, waited for): its error, raised as one batch after another
    would (the ``later`` batches stopped first), or its counts, its pace and its progress. Returns the
    (register pool, shared and local memory) the next batch may take over."""
    if b.done is not None:          # (a batch run on this thread is done: it ran before this call)
        b.done.wait()
    ex, nb, run_df = b.ex, b.nb, b.run_df
    beside = ex.stats is not stats
    if beside:                      # a worker's batch: its counts join the launch's (its time did: parallel.run)
        pace.in_flight.remove(ex)
        parallel.merge(stats, ex.stats)
        ex.stats = stats
    e = b.error
    if e is not None:
        parallel.stop(later)
        try:
            raise e
        except Unsupported as e:
            raise UnsupportedError(f"The emulator cannot run kernel {kernel_name}: {e} is not supported yet. "
                                   "Try simpler code, or run on a real GPU.") from None
        except Watchdog:
            waiting = waiting_on(ex)
            batch = b.info
            if pace.estimate is None:       # no block has finished: count the batch's work another way
                # (threads taking turns at a lock: its loops counted once a turn, the least the work can be)
                pace.forecast_batch(nb, lambda seconds: forecast.thread_instructions(
                    program, df, batch, kparams, total_shared, layout, local_stride, kernel_name, seconds, shape,
                    free_locks=bool(waiting[1])), CLEARLY if waiting[1] else 1.0)
                if pace.estimate is None or pace.forecast_partial:     # or by the threads that have ended
                    pace.forecast_threads(_threads_finished(ex, df.code), pace.blocks_total * threads)
            raise pace.timed_out(_still_running(ex), ex.pc_of["inst"].line, *waiting) from None
        except CudaError:
            raise
        except Exception as e:          # a bug in the emulator: the program hears of it as a CUDA error
            raise UnsupportedError(_internal_error(e, kernel_name)) from e
    spent = b.seconds
    # the launch's rest at this batch's pace, CPU s (``later`` is the batches queued behind this one)
    rest = spent * (pace.blocks_total - pace.blocks_done - nb) / nb
    if run_df is df:
        compiled.note_time(df, spent, None if observers or shape and shape.size > 1 else program, rest,
                           pace.spent() + rest >= compiled.DEBUG_LAUNCH_SHARE * pace.timeout,
                           sample=pace.blocks_done == 0 and nb < pace.per_batch)
    else:                           # quick native code that keeps running gets its better code (compiled.py)
        compiled.note_native(df, run_df, spent, rest)
    if why_slow.ON:
        why_slow.batch_done(df, spent, run_df is not df)
    pool = None if observers else dict(ex.fr.regs)
    spare = (ex.shared, ex.local) if pool is not None else None
    if pool is not None and run_df is not df:       # what a native batch really held (_window)
        held = sum(a.nbytes for a in pool.values()) // max(ex.n, 1)
        df._native_register_bytes = max(df.__dict__.get("_native_register_bytes", 0), held)
    # on a cold cache the first batches run interpreted while LLVM builds the kernel: a grid too
    # long at the interpreter's pace, but not at native code's, waits for that code and its pace
    native_soon = run_df is df and compiled.native_next(df)
    if beside:                      # (its system time is its own: pace.batch_done leaves this thread's out)
        pace.system_at_start = pace_mod.system_seconds()
        spent = b.user
    # native batches of a launch on several threads: the rest of the grid is shared out over them
    ways = pace.ways if run_df is not df or native_soon or _has_mma_runs(df) else 1
    pace.batch_done(nb, spent, compiled.NATIVE_GAIN if native_soon else 1.0, ways=ways,
                    now=None if beside else b.ended)      # (this thread's clock at the batch's end)
    if native_soon and pace.clearly_too_long():
        compiled.wait_for_build(df)
    return pool, spare


def _window(program, df, observers, checks, shape, bpb, lpb, local_stride, total_shared) -> int:
    """How many of a launch's batches may be under way at once (1: one after another, as on one core):
    the worker threads (parallel.workers) and one more, queued, where the kernel's blocks cannot see
    each other's work (parallel.independent) and nothing watches them (observers, checks), within
    parallel.IN_FLIGHT_BYTES of batch memory (batches of 256 MiB: two at a time, none queued). A batch's
    registers are counted as its kernel's native batches have held them (``_native_register_bytes``, the
    most any held: an array is made at a register's first use, and native code keeps most of its
    registers to itself), else all of them (``register_bytes``): the 16x16 tiled matmul's native batches
    held 62 of its 523 bytes a lane, and counting 523 let a 2048 product (batches of 2^18 lanes, about
    170 MB so counted) have two batches in flight, so four threads ran it on two (7.65 s of wall time,
    as two threads' 7.46)."""
    threads = parallel.workers()
    if threads < 2 or observers or checks or slack.strict or slack.strict_sync or compiled.mode() == "check" \
            or (shape is not None and shape.size > 1) or parallel.independent(df, program):
        return 1
    registers = min(register_bytes(df), df.__dict__.get("_native_register_bytes", register_bytes(df)))
    per_batch = bpb * (lpb * (local_stride + registers + LANE_BYTES) + max(total_shared, 16))
    return max(1, min(threads + 1, parallel.IN_FLIGHT_BYTES // max(per_batch, 1)))


def _beside(df, run_df, pace, now, threads) -> bool:
    """Should this batch run on a worker thread? Only once the batches so far show that the grid fits
    its time (the sample batch and the first full one decide whether the launch stops early, pace.py:
    batches run beside them would be work thrown away): at the first full batch's pace, or at the
    sample's per block, which overstates it (``Pace.surely_fits``), or from the start where the kernel's
    last native launch showed it (``Pace.known_pace``: no sample batch); not where the rest of the launch is
    short (a thread's start-up is not worth it), and only where most of the work leaves the GIL:
    native code, or the tensor-core loops."""
    if pace.known_pace and not pace.blocks_done:
        # no sample: the kernel's last native launch puts this grid far within its time (_pace_known)
        if df.__dict__.get("_native_pace", 0.0) * pace.blocks_total * threads < parallel.MIN_SECONDS:
            return False
    elif not pace.blocks_done or pace.estimate is None or not (pace.at_least is None and pace.fitted or
                                                               pace.surely_fits()) \
            or pace.estimate - pace.spent(now) < parallel.MIN_SECONDS:
        return False
    return run_df is not df or _has_mma_runs(df)


def _has_mma_runs(df) -> bool:
    return _kept(df, "_mma_runs", lambda: any(c[0] == K_FUSED and isinstance(c[1], mma_runs.Run) for c in df.code))


_POOLED: list = []      # the decoded functions that keep a launch's register arrays, last launched last


def does_nothing(df: DecodedFunction) -> bool:
    """Is the kernel's whole body one unguarded ``ret`` (``__global__ void k() {}``, or a body whose
    results nothing stores, which the compiler removed): no thread can do anything a program sees."""
    return len(df.code) == 1 and df.code[0][0] in (K_RET, K_EXIT) and df.code[0][2].guard is None

# a grid that the kernel's native code, at its last launch's pace (CPU seconds a thread), runs in
# less than this share of the watchdog's time starts without a sample batch (pace.Pace.batches)
KNOWN_PACE_SHARE = 0.05


def _pace_known(df, native_whole: bool, threads: int, timeout: float) -> bool:
    """Can this launch skip its sample batch? The sample (pace.py) exists to stop a launch that
    would clearly outlast its time before a full batch has run; each batch also costs the Python
    around native code (the batch's masks, context, register table: about 0.1 ms), a tenth of a
    2^20-thread launch whose native code takes a millisecond. Where one native region runs the
    whole kernel (``native_whole``: compiled.batch_lanes) and the kernel's last launch ran natively
    at a pace that puts this grid far within the watchdog, the sample tells nothing new; the
    watchdog still stops a launch that turns out slower (native code returns to it regularly)."""
    known = df.__dict__.get("_native_pace") if native_whole else None
    return known is not None and known * threads < KNOWN_PACE_SHARE * timeout


def _internal_error(e: Exception, kernel_name: str) -> str:
    """What to tell about a Python error met while running a kernel: the instruction that was
    running (the innermost ``run_function`` frame's) and its line, instead of a traceback."""
    import traceback
    frames = [f for f, _ in traceback.walk_tb(e.__traceback__) if f.f_code is run_function.__code__]
    what = f"{type(e).__name__}: {e}"
    if not frames or "inst" not in frames[-1].f_locals:
        return (f"The emulator failed while running kernel {kernel_name} ({what}). This is a bug in cudalab; "
                "please report it with the program. Run on a real GPU meanwhile.")
    inst, df = frames[-1].f_locals["inst"], frames[-1].f_locals["df"]
    line = source_line(df.func, inst)
    where = f" (from source line {line})" if line else ""
    return (f"The emulator failed on the PTX instruction `{inst.text}`{where} of kernel {kernel_name} ({what}). "
            "This is a bug in cudalab; please report it with the program. Try simpler code for that line, or "
            "run on a real GPU.")


def _threads_finished(ex, code) -> int:
    """Threads of the batch that have ended when the watchdog stops it: exited in the interpreter, or
    through a native region after which the kernel only returns (``regions._timed_out`` names them)."""
    done = ex.exited & ex.valid
    through = ex.pc_of.get("through")
    if through is not None and all(c[2].opcode in ("ret", "exit") for c in code[ex.pc_of["end"]:]):
        done = done.copy()
        done[through] = True
    return int(np.count_nonzero(done))


# what the watchdog adds where the threads it stopped sit on a branch to itself (nvcc's code for a loop whose
# test nothing in it changes: `for (i = 0; i < n; it++)`, or a wait on a value read once before the loop)
ENDLESS_LOOP = (" The compiled code there branches to itself: a loop that can never end, since nothing in it "
                "changes (a loop that steps another variable than the one its test reads: for (i = 0; i < n; it++)). "
                "A loop that waits for a value another thread or the host writes must read it each time, "
                "through a volatile pointer or an atomic; otherwise the compiler reads it once, before the loop.")


def _still_running(ex):
    """Where the watchdog found the kernel's threads, for its message."""
    inst = ex.pc_of["inst"]
    mask = ex.pc_of["mask"]
    lanes = np.flatnonzero(mask)
    line = inst.place
    if not lanes.size:          # stopped between instructions (native code's return): no thread to name
        return f"It was stopped at {line}."
    block, thread = ex.where(int(lanes[0]))
    endless = ENDLESS_LOOP if ex.pc_of.get("endless") else ""
    return (f"{lanes.size} threads were still running, e.g. thread ({thread[0]},{thread[1]},{thread[2]}) of block "
            f"({block[0]},{block[1]},{block[2]}) at {line}.{endless}")


def waiting_on(ex) -> tuple:
    """(what the batch's threads were waiting on, whether that wait was getting on) for the watchdog's
    message; ("", None) when no thread waited on another. A batch whose blocks all run together in
    lock step ends no block before the watchdog (CUDA by Example's hashtable_gpu: every thread takes
    a bucket's lock in turn, one lane at a time, 26 million keys), so no block's pace can be scaled
    to the grid; what the student can still be told is whether its threads were taking turns (slow)
    or waiting for something that never came (stuck)."""
    locks = [(df, head, pc, tries, handed) for (_, head, pc), (df, tries, handed) in ex.spins.items()
             if _takes_a_lock(df, head, pc)]
    if not locks:
        return "", None
    df, head, pc, tries, handed = max(locks, key=lambda spin: (spin[4], spin[3]))
    body = [inst for _, _, inst, _ in df.code[head:pc + 1]]
    taking = next(filter(_takes_lock, body), None)
    place = (taking or body[-1]).place
    what = (f"take a lock in a loop at {place} (an atomic{'CAS' if 'cas' in taking.mods else 'Exch'})"
            if taking is not None else f"wait in a loop at {place} for a value another thread writes")
    if handed:
        return (f"Its threads {what}, one thread at a time: the wait ended for a thread {handed:,} times, so the "
                "kernel was getting on, slowly (the emulator runs each thread's turn of that loop by itself, "
                "where a GPU runs them at once)."), True
    why = ("is the lock ever given back (atomicExch(lock, 0)) by the thread that holds it?" if taking is not None
           else "does any thread set it?")
    return f"Its threads {what}, and in {tries:,} turns of that loop no thread got through: {why}", False
