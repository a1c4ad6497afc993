"""How many cycles a warp alone needs per instruction of a function's hot code, from its dependent chains:
the latency side of the timing model (device/timing.py), read from the PTX alone.

Why: a warp waits for each result it needs. A thread that hashes a character with 5,000 dependent
multiply-xor steps spends ~11 cycles a step however few instructions a step is, and only other warps
of its scheduler can use the wait; a copy loop waits out a DRAM access (~750 cycles) before its store,
every iteration. The issue-bound model (one instruction a clock per scheduler) called such kernels
fast, and kernels of four streams then had no room to overlap (an H100 ran four streams of a one-block-
per-SM hash 1.4x to 2x faster than one; tools/latency_gpu_probe_h100.txt).

The loop body is run through a small schedule, iteration after iteration (``loop_cycles``):

* an instruction issues once its operands (and its guard predicate) are ready, and no earlier than the
  iteration's start; the compiler reorders within an iteration (ptxas schedules a loop body), so PTX order
  inside it does not matter, but an iteration starts only once the one before it has issued everything
  (a warp issues in order; ptxas does not overlap iterations beyond the unrolling the PTX shows);
* its result is ready ``latency(inst)`` cycles later (H100 cycles: the constants below);
* a load waits for the stores before it in the same state space (they may alias: a copy loop's next
  load waits for the store that waited for the last load's data);
* an iteration takes at least one cycle per instruction (a scheduler issues one a clock).

The hot code is the function's main loop (``mix.main_loop``: the longest of the innermost loops nested
deepest, which is where the iterations go: a loop the compiler unrolled, not its short remainder loop nor
a set-up loop), or the whole function when it has no loop. Its steady cycles per iteration over its
instruction count is the answer, twice: global loads hitting L2, and going to DRAM; the timing model
mixes them by the share of a launch's traffic that reaches DRAM.

Latencies (H100 cycles per dependent PTX instruction, fitted to tools/latency_gpu_probe.cu's chains:
xor-add and multiply-xor 11.3 a step of two instructions, FMA 5.2, a shared-memory pointer chase 31 a
step of shift, add and load, a global one 750 a step of a 256 MB random walk, 329 of a 4 MB one that L2
holds); what the probe did not measure (division, special functions, 64-bit floats, shuffles, tensor
cores) are round figures of the
size published microbenchmarks of recent NVIDIA GPUs report, not measured here. Every device profile uses
these cycles at its own clock (not measured on other GPUs).
"""
from __future__ import annotations

from .ir import Function
from .mix import main_loop

INT = 5.6              # add, xor, shifts, 32-bit multiply-add, compares, conversions
FP32 = 5.2             # fma, add, mul on f32 (and f16, bf16)
FP64 = 8.0
MUFU = 18.0            # ex2, lg2, sin, cos, rsqrt, approximate rcp and sqrt
DIVISION = 40.0        # IEEE f32 division, rcp, sqrt (a Newton sequence of several instructions)
DIVISION_F64 = 80.0
INT_DIVISION = 60.0    # integer division and remainder (a sequence of ~20 instructions)
SHARED = 20.0          # ld.shared (with the shift and add of its address: 31, as measured)
SHUFFLE = 20.0
L2 = 318.0             # a global load that hits L2 (with its address's multiply and add: 329, as measured)
DRAM = 740.0           # one that goes to DRAM (with its address's multiply and add: 750, as measured)
LOCAL = 35.0           # local memory (spills, stack arrays): L1 mostly
TENSOR = 32.0          # mma / wmma.mma
ITERATIONS = 4         # loop iterations scheduled; the steady cost is read from the last three

NO_RESULT = {"st", "red", "bra", "ret", "exit", "bar", "barrier", "membar", "fence", "prefetch", "prefetchu",
             "trap", "brkpt", "pmevent", "nanosleep", "cp", "griddepcontrol", "stmatrix"}
SPECIAL = {"ex2", "lg2", "sin", "cos", "rsqrt", "tanh"}
MEMORY = {"ld", "ldu", "atom", "tex", "tld4", "suld", "ldmatrix"}


def _space(inst) -> str:
    """'shared', 'local', 'param', 'const' or 'global' (generic addresses count as global)."""
    for m in inst.mods:
        base = m.split("::")[0]
        if base in ("shared", "local", "param", "const"):
            return base
    return "global"


def latency(inst, global_latency: float) -> float:
    """Cycles from ``inst``'s issue until its result can be used."""
    op, mods = inst.opcode, inst.mods
    if op == "wmma" and ("load" in mods or "store" in mods):
        op = "ld"                                     # a fragment load: a memory access of its space
    elif op in ("mma", "wmma"):
        return TENSOR
    if op in MEMORY:
        space = _space(inst)
        if op == "atom":
            return SHARED * 2 if space == "shared" else max(global_latency, L2)
        return {"shared": SHARED, "local": LOCAL, "param": INT, "const": INT}.get(space, global_latency)
    if op == "mov" and len(inst.operands) > 1 and inst.operands[1][0] == "reg":
        return 0.0                                    # a register copy: a renaming, no instruction
    if op == "shfl":
        return SHUFFLE
    f64 = "f64" in mods
    if op in SPECIAL or ("approx" in mods and op in ("rcp", "sqrt", "div")):
        return FP64 * 4 if f64 else MUFU
    if op in ("div", "rem", "rcp", "sqrt"):
        if any(m.startswith("f") for m in mods):
            return DIVISION_F64 if f64 else DIVISION
        return INT_DIVISION
    if f64:
        return FP64
    if any(m in ("f32", "f16", "f16x2", "bf16", "bf16x2", "ftz") for m in mods) and op != "cvt":
        return FP32
    if op == "mul" and "lo" in mods and ("s64" in mods or "u64" in mods):
        return 2 * INT
    return INT


def _regs(op) -> list:
    """Register names in one operand (vectors, addresses and lists included)."""
    kind = op[0]
    if kind == "reg":
        return [op[1]]
    if kind == "mem":
        return _regs(op[1]) if isinstance(op[1], tuple) else []
    if kind in ("vec", "list"):
        return [r for o in op[1] for r in _regs(o)]
    if kind == "pair":
        return _regs(op[1]) + _regs(op[2])
    return []


def reads_writes(inst) -> tuple:
    """(registers ``inst`` reads, registers it writes)."""
    ops = inst.operands
    guard = [inst.guard[0]] if inst.guard else []
    if inst.opcode in NO_RESULT or not ops or ops[0][0] not in ("reg", "vec", "pair", "list"):
        return [r for o in ops for r in _regs(o)] + guard, []
    return [r for o in ops[1:] for r in _regs(o)] + guard, _regs(ops[0])


def loop_cycles(insts, global_latency: float, iterations: int = ITERATIONS) -> float:
    """Steady cycles per iteration of a lone warp running ``insts`` (a loop body) again and again."""
    ready: dict = {}                     # register -> cycle its value is ready
    stored = {"shared": 0.0, "global": 0.0, "local": 0.0}    # when the last store of each space issued
    start, starts = 0.0, []
    for _ in range(iterations):
        starts.append(start)
        last = start
        for inst in insts:
            reads, writes = reads_writes(inst)
            t = max([start, *(ready.get(r, 0.0) for r in reads)])
            space = _space(inst) if inst.opcode in MEMORY or inst.opcode in ("st", "red") else None
            if inst.opcode in MEMORY and space in stored:
                t = max(t, stored[space])
            if inst.opcode in ("st", "red", "atom") and space in stored:
                stored[space] = max(stored[space], t)
            if inst.opcode in ("bar", "barrier"):
                t = max(t, *stored.values())
            lat = latency(inst, global_latency)
            for r in writes:
                ready[r] = t + lat
            last = max(last, t)
        start = max(last + 1.0, start + len(insts))
    starts.append(start)
    steady = starts[-3:]
    return (steady[-1] - steady[0]) / (len(steady) - 1)


def chain_cycles(f: Function) -> tuple:
    """(cycles per instruction with global loads hitting L2, with them going to DRAM) of a lone warp
    running ``f``'s main loop (``mix.main_loop``), or all of ``f`` when it has no loop (cached on ``f``);
    at least 1: a scheduler issues one instruction a clock."""
    cached = f.__dict__.get("_chain_cycles")
    if cached is None:
        loop = main_loop(f)
        body = f.insts[loop[0]:loop[1] + 1] if loop else f.insts
        l2 = max(1.0, loop_cycles(body, L2) / len(body)) if body else 1.0
        loads = any(i.opcode in MEMORY and _space(i) == "global" for i in body)
        cached = (l2, max(1.0, loop_cycles(body, DRAM) / len(body)) if loads else l2)
        f.__dict__["_chain_cycles"] = cached
    return cached
