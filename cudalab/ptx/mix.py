"""Bytes of global memory a function moves per instruction it executes, read from its PTX alone.

Why: a launch run without observers (a whole program's kernel, a Python launch outside
``record_timeline``) has only its instruction count, and the timing model then saw no memory
traffic at all: a copy or transpose kernel timed by cudaEvents came out issue-bound, and the
CUDA Handbook's AOStoSOA reported 4,644 GB/s on an emulated H100 (3,350 GB/s of DRAM; an H200
measured 558 with the program's own formula). Scaling the thread-instructions by this ratio gives
the traffic the model needs, without counting a single access.

The hot code is the function's innermost loops nested deepest (a grid-stride loop's body; a hash loop
inside it, not the grid-stride loop's other inner loops), or all of it when it has none: the
instructions there run many times for each one of set-up. Loads, stores, atomics
and reductions count with their width (vectors included); ``.global`` ones and generic ones, which
in a kernel are mostly global (a pointer loaded from memory), not ``.shared``, ``.local``,
``.param`` or ``.const``. Every byte is taken as coalesced: the estimate is the least traffic the
kernel can cause, so the bandwidth a benchmark derives from it is an upper bound, as the GPU's is.
"""
from __future__ import annotations

import re

from .ir import Function

MEMORY = ("ld", "ldu", "st", "atom", "red")
NOT_GLOBAL = ("shared", "local", "param", "const")


def access_bytes(inst) -> int:
    """Bytes one thread moves with ``inst`` in global memory (0 for other instructions)."""
    if inst.opcode not in MEMORY or any(m.startswith(NOT_GLOBAL) for m in inst.mods):
        return 0
    types = [m for m in inst.mods if re.fullmatch(r"[bsuf]\d+(x\d+)?", m)]
    if not types:
        return 0
    bits, _, lanes = types[-1][1:].partition("x")
    width = next((int(m[1:]) for m in inst.mods if re.fullmatch(r"v\d", m)), 1)
    return int(bits) // 8 * int(lanes or 1) * width


def _loops(f: Function) -> list:
    """(first, last) instruction indices of every loop: a branch back to a label at or before it."""
    loops = []
    for i, inst in enumerate(f.insts):
        if inst.opcode == "bra" and inst.operands and inst.operands[0][0] == "sym":
            target = f.labels.get(inst.operands[0][1])
            if target is not None and target <= i:
                loops.append((target, i))
    return loops


def innermost_loops(f: Function) -> list:
    """(first, last) instruction indices of the innermost loops: a backward branch's span that holds
    no other loop."""
    loops = _loops(f)
    return [(a, b) for a, b in loops if not any((a, b) != (c, d) and a <= c and d <= b for c, d in loops)]


def deepest_loops(f: Function) -> list:
    """(first, last) indices of the innermost loops nested deepest (in the most other loops): where a
    function's iterations go. A hash loop inside a grid-stride loop runs thousands of times for each
    turn of the outer loop's other inner loops (loops the compiler made for the hash's zero-trip case,
    a set-up loop of shared memory), so those count for nothing."""
    loops = _loops(f)
    inner = innermost_loops(f)
    depth = {ab: sum(c <= ab[0] and ab[1] <= d for c, d in loops) for ab in inner}
    return [ab for ab in inner if depth[ab] == max(depth.values())]


def main_loop(f: Function) -> tuple | None:
    """(first, last) indices of the longest of the deepest loops (a loop the compiler unrolled, not the
    short remainder loop after it), or None without loops."""
    deepest = deepest_loops(f)
    return max(deepest, key=lambda ab: ab[1] - ab[0]) if deepest else None


def hot_range(f: Function) -> list:
    """Instruction indices of the deepest innermost loops, or every index when there is no loop."""
    deepest = deepest_loops(f)
    if not deepest:
        return list(range(len(f.insts)))
    return sorted({i for a, b in deepest for i in range(a, b + 1)})


def global_bytes_per_instruction(f: Function) -> float:
    """Global-memory bytes per executed instruction of ``f``'s hot code (cached on ``f``)."""
    cached = f.__dict__.get("_global_bytes_per_instruction")
    if cached is None:
        hot = hot_range(f)
        cached = sum(access_bytes(f.insts[i]) for i in hot) / len(hot) if hot else 0.0
        f.__dict__["_global_bytes_per_instruction"] = cached
    return cached


LOADS = ("ld", "ldu")


def access_sources(f: Function) -> dict:
    """{kernel parameters an access's address is computed from (a frozenset of names): [load bytes, store
    bytes] per executed instruction of the hot code} (cached on ``f``), so a launch can tell which part of
    its global traffic goes through which pointer argument: a pointer to mapped host memory
    (cudaHostAlloc ... Mapped) sends its bytes over the host link, not to DRAM. Flow-insensitive: a
    register's parameters are those of every value ever written to it (a loop's pointer increment
    keeps its parameter); a value loaded from memory (a pointer read from an array) has none."""
    cached = f.__dict__.get("_access_sources")
    if cached is not None:
        return cached
    params = {p.name for p in f.params}
    origin: dict = {}
    changed = True
    while changed:
        changed = False
        for inst in f.insts:
            ops = inst.operands
            if not ops or ops[0][0] != "reg":
                continue
            if inst.opcode in LOADS:
                base = ops[1][1] if len(ops) > 1 and ops[1][0] == "mem" else None
                new = frozenset([base[1]]) if "param" in inst.mods and base and base[0] == "sym" \
                    and base[1] in params else frozenset()
            else:
                new = frozenset().union(*(origin.get(o[1], frozenset()) for o in ops[1:] if o[0] == "reg"))
            have = origin.get(ops[0][1], frozenset())
            if not new <= have:
                origin[ops[0][1]] = have | new
                changed = True
    hot = hot_range(f)
    sources: dict = {}
    for i in hot:
        inst = f.insts[i]
        nbytes = access_bytes(inst)
        if not nbytes:
            continue
        mem = next((o[1] for o in inst.operands if o[0] == "mem"), None)
        names = origin.get(mem[1], frozenset()) if mem is not None and mem[0] == "reg" else frozenset()
        sources.setdefault(names, [0.0, 0.0])[inst.opcode not in LOADS] += nbytes / len(hot)
    f.__dict__["_access_sources"] = sources
    return sources
