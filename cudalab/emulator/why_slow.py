"""Why a kernel runs slowly on the emulator: the compiled tier's refusals, told to a student.

The emulator runs a kernel's instructions in native code (compiled.py: groups; regions.py: whole loops)
where its code generator takes them, and leaves the rest to the numpy interpreter, which is tens to
hundreds of times slower per thread. Nothing said so: a sample ran ten times slower than its neighbour
and only a profiler showed that one instruction (a texture fetch with a level of detail, a half-precision
multiply) kept its loop in the interpreter. ``cudalab run --why-slow`` (``CUDALAB_WHY_SLOW=1``) keeps,
per kernel, its launches, the CPU time of its batches and the thread-instructions the interpreter ran at
each instruction (``Tally``: counted only while the report is on, so launches pay nothing otherwise),
and at the end prints, for the kernels that took the time, which instructions stayed interpreted and
the generator's reason for each (``refusals``), and how much of the kernel's work they were.

Kept in a module of its own: the engine calls ``batch_done`` and hands ``tally_for`` a dict; the
compiled tier is asked only when the report is printed (``refusals`` builds nothing it keeps)."""
from __future__ import annotations

import os
import sys
from collections import defaultdict
from dataclasses import dataclass, field

ENV = "CUDALAB_WHY_SLOW"
SHOWN_KERNELS = 6           # the kernels that took most time; the rest are summed in one line
SHOWN_PLACES = 8            # a kernel's interpreted places, most work first
NATIVE_ENOUGH = 0.05        # below this share of interpreted thread-instructions a kernel's places are not listed


def enabled() -> bool:
    return os.environ.get(ENV, "") not in ("", "0")


ON = enabled()              # read by the engine at every launch and batch: a module global, set once


def turn_on():
    """Keep the counts from now on (``cudalab run --why-slow``)."""
    global ON
    ON = True


@dataclass
class KernelTime:
    """What one kernel cost: launches, batches and their CPU seconds, interpreted work per pc."""
    name: str
    df: object
    program: object
    launches: int = 0
    graph_launches: int = 0             # of them, a CUDA graph's kernel nodes (``IN_GRAPH``)
    batches: int = 0
    seconds: float = 0.0
    interp_seconds: float = 0.0         # batches with no native code at all (the tier had not built it)
    thread_instructions: int = 0
    interpreted: dict = field(default_factory=lambda: defaultdict(int))    # pc -> thread-instructions


_KERNELS: dict = {}


def _entry(program, df, name) -> KernelTime:
    k = _KERNELS.get(id(df))
    if k is None or k.df is not df:
        k = _KERNELS[id(df)] = KernelTime(name, df, program)
    return k


IN_GRAPH = False            # a graph's kernel node is running (runtime/core/graphs.py sets it, with the report on)


def launched(program, df, name):
    """A launch of ``df`` begins (engine._launch, with the report on)."""
    k = _entry(program, df, name)
    k.launches += 1
    k.graph_launches += IN_GRAPH


def tally_for(df):
    """The pc -> thread-instructions dict the interpreter adds its interpreted work to (run_function)."""
    k = _KERNELS.get(id(df))
    return k.interpreted if k is not None and k.df is df else None


def batch_done(df, seconds: float, native: bool):
    """A batch of ``df`` ran ``seconds`` of CPU time, in its native code (``native``) or interpreted only."""
    k = _KERNELS.get(id(df))
    if k is None or k.df is not df:
        return
    k.batches += 1
    k.seconds += seconds
    if not native:
        k.interp_seconds += seconds


def counted(df, thread_instructions: int):
    """A launch of ``df`` ran ``thread_instructions`` in all (both tiers; its device launches apart)."""
    k = _KERNELS.get(id(df))
    if k is not None and k.df is df:
        k.thread_instructions += thread_instructions


def reset():
    _KERNELS.clear()


# ------------------------------------------------------------------ the generator's reasons
def refusals(df, program) -> dict:
    """pc -> why the compiled tier leaves that instruction to the interpreter, in words, for every
    instruction of ``df`` its code generator refuses (the reason its ``Skip`` gave, or that it has no
    code for the opcode). Control flow the interpreter always runs (branches, barriers, returns) is
    not listed: what makes it slow is the loop it belongs to, which ``loop_of`` names."""
    from llvmlite import ir
    from . import llvmgen as lg
    from .compiled import TENSOR_CORE
    from .engine import K_NORMAL, K_WAIT, _DecodeContext
    d = _DecodeContext(df.func, program, df.param_offsets)
    out = {}
    for pc, (kind, _, inst, _) in enumerate(df.code):
        if kind not in (K_NORMAL, K_WAIT):
            continue
        op = inst.opcode
        if op in ("bar", "barrier", "membar", "fence", "nanosleep", "mov") and op not in lg.GENERATORS:
            continue
        if op in TENSOR_CORE:
            out[pc] = ("a tensor-core instruction: it runs as one compiled loop over the batch's warps "
                       "(emulator/mma_native.py), not in the tier's per-thread code")
            continue
        if op not in lg.GENERATORS:
            out[pc] = f"the compiled tier has no code for `{op}` yet"
            continue
        module = ir.Module(name="why")
        gb = lg.GroupBuilder(module, "w", df.func, d, [], lg.find_function(module))
        try:
            gb.emit(inst)
        except lg.Skip as e:
            out[pc] = _worded(op, str(e))
        except Exception as e:          # noqa: BLE001  (a form the generator misreads: it stays interpreted)
            out[pc] = f"the compiled tier could not build this form of `{op}` ({type(e).__name__}: {e})"
    return out


def _worded(op, reason: str) -> str:
    """The generator's Skip text as a sentence: it names the part of the instruction refused."""
    reason = reason.strip()
    if reason.startswith(op) or reason.startswith(f"{op}."):
        return f"the compiled tier leaves `{reason.split(' ')[0]}` to the interpreter{_rest(reason)}"
    return f"the compiled tier does not take `{op}` with this {reason}"


def _rest(reason):
    _, _, rest = reason.partition(" ")
    return f" {rest}" if rest else ""


def loop_of(df, pc):
    """(head pc, back-branch pc) of the innermost loop holding ``pc``, or None."""
    from .engine import K_BRA
    best = None
    for p, (kind, _, _, aux) in enumerate(df.code):
        if kind == K_BRA and aux is not None and aux <= pc <= p:
            if best is None or p - aux < best[1] - best[0]:
                best = (aux, p)
    return best


# ------------------------------------------------------------------ the report
QUICK_SECONDS = 0.5    # a program's kernels that took less than this in all are not slow
UNBUILT_MOST = 0.9     # a kernel whose batches ran this share of its time with no native code yet: the build's wait


def report(limit_kernels: int = SHOWN_KERNELS) -> str:
    """The text printed after the program: per kernel, most time first."""
    ks = sorted(_KERNELS.values(), key=lambda k: -k.seconds)
    if not ks:
        return "cudalab --why-slow: no kernel ran on the emulator."
    total = sum(k.seconds for k in ks)
    lines = [f"cudalab --why-slow: {len(ks)} kernel{'s' * (len(ks) != 1)} ran {total:.1f} s of the emulator's CPU time "
             f"(most first):" + (" that is quick, nothing here needs speeding up." if total < QUICK_SECONDS else "")]
    for k in ks[:limit_kernels]:
        lines += _kernel_lines(k, total)
    if len(ks) > limit_kernels:
        rest = ks[limit_kernels:]
        lines.append(f"  ... and {len(rest)} more kernels, {sum(k.seconds for k in rest):.1f} s in all.")
    return "\n".join(lines)


def _kernel_lines(k: KernelTime, total: float) -> list:
    share = k.seconds / total if total else 0.0
    per = k.seconds / max(k.launches, 1)
    lines = [f"- {k.name}: {k.launches} launch{'es' * (k.launches != 1)}, {k.seconds:.2f} s "
             f"({share:.0%} of the time, {per * 1e3:.1f} ms a launch)."]
    if k.launches >= 100 and per < 0.005 and k.graph_launches * 2 >= k.launches:
        # (a graph does not merge its nodes: each is a launch here, as on a GPU, where it saves the host's
        # submission only; a course's graph of 131,071 one-thread kernels)
        lines.append(f"    Many short launches, {k.graph_launches} of them a CUDA graph's kernel nodes: the emulator "
                     "runs each node as a launch of its own, and most of each is its own work per launch (Python), "
                     "not the kernel's; fewer nodes that each do more (one kernel over the range a loop of nodes "
                     "covers) are what helps here.")
    elif k.launches >= 100 and per < 0.005:
        lines.append("    Many short launches: most of each is the emulator's own work per launch (Python), not the "
                     "kernel's; fewer, larger launches (or a CUDA graph) are what helps here.")
    unbuilt = k.interp_seconds >= UNBUILT_MOST * k.seconds
    if unbuilt:         # (the interpreted lines would blame the code's shape for the build's wait: not listed)
        lines.append(f"    It ran without native code: the compiled tier builds a kernel's native code once its launches "
                     f"have done enough work to be worth the build (in the background, kept in the disk cache for "
                     f"the next run), and this kernel's {k.interp_seconds:.2f} s came before that.")
        return lines
    if k.interp_seconds > 0.05 * k.seconds and k.interp_seconds > 0.5:
        lines.append(f"    {k.interp_seconds:.2f} s of it ran before its native code was built (the first launches "
                     "run interpreted while LLVM builds it in the background; the disk cache keeps it for next time).")
    interpreted = sum(k.interpreted.values())
    frac = interpreted / max(k.thread_instructions, 1)
    if frac < NATIVE_ENOUGH:
        lines.append(f"    {1 - frac:.0%} of its thread-instructions ran in native code (the compiled tier): its time is "
                     "the work itself, at native code's pace.")
        return lines
    try:
        why = refusals(k.df, k.program)
    except Exception:       # noqa: BLE001  (no llvmlite: the reasons cannot be asked)
        why = {}
    lines.append(f"    {frac:.0%} of its thread-instructions ran in the interpreter, tens of times slower than native "
                 f"code. Where, most work first:")
    by_line = defaultdict(int)
    reasons, some_pc = {}, {}
    for pc, n in k.interpreted.items():
        inst = k.df.code[pc][2]
        place = _place(k.df, pc)
        by_line[place] += n
        some_pc.setdefault(place, pc)
        if pc in why:
            reasons.setdefault(place, (inst.text.strip(), why[pc]))
    for place, n in sorted(by_line.items(), key=lambda x: -x[1])[:SHOWN_PLACES]:
        text = f"      {place}: {n / max(interpreted, 1):.0%} of the interpreted work"
        if place in reasons:
            ptx, reason = reasons[place]
            text += f"; `{ptx}`: {reason}."
        else:
            text += "; " + _around(k.df, some_pc[place], why)
        lines.append(text)
    return lines


def _place(df, pc) -> str:
    inst = df.code[pc][2]
    return getattr(inst, "place", None) or f"PTX instruction {pc}"


def _span(df, head, back) -> str:
    """A loop's source lines, as "lines 7 to 9" (its instructions' lowest and highest line of the program's
    own file), or by the places of its head and its branch back where it lies in another file."""
    insts = [df.code[p][2] for p in range(head, back + 1)]
    lines = {i.line for i in insts if getattr(i, "line", None) and getattr(i, "elsewhere", None) is None}
    if lines and all(getattr(i, "elsewhere", None) is None for i in insts):
        lo, hi = min(lines), max(lines)
        return f"line {lo}" if lo == hi else f"lines {lo} to {hi}"
    return f"{_place(df, head)} to {_place(df, back)}"


def _around(df, pc, why) -> str:
    """Why an instruction the tier does take ran interpreted: the loop it is in holds one it refuses
    (so the loop is no native region and runs as native pieces between interpreted branches), or else
    the branches and barriers around it did."""
    loop = loop_of(df, pc)
    if loop is not None:
        inside = [p for p in range(loop[0], loop[1] + 1) if p in why]
        if inside:
            return (f"native code, but its loop ({_span(df, *loop)}) holds the "
                    f"instruction at {_place(df, inside[0])} that the tier refuses, so the loop's branches run "
                    "interpreted and the rest in small native pieces between them")
    from .engine import K_BRA, K_EXIT, K_RET
    if df.code[pc][0] in (K_BRA, K_RET, K_EXIT) or df.code[pc][2].opcode in ("bar", "barrier"):
        if loop is not None:
            return (f"a branch or barrier inside a loop ({_span(df, *loop)}) that is "
                    "not one native region: the interpreter runs it on every turn, and the loop's other "
                    "instructions in small native pieces between")
        return ("a branch, return or barrier outside a native region: the interpreter runs those once for every "
                "batch of threads that reaches them, which costs little unless a loop repeats them")
    return ("native code, but the branches or barriers around it ran interpreted (the code around it is not one "
            "native region), so it ran in small native pieces between interpreted steps")


def print_report(stream=None):
    if _KERNELS:
        print(report(), file=stream or sys.stderr)
