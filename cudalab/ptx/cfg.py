"""Control-flow graph of a PTX function and the reconvergence point of every branch.

A warp that splits at a branch runs both paths and joins again at the branch block's immediate
post-dominator (the classic SIMT reconvergence stack, as in GPGPU-Sim and the pre-Volta
hardware). ``reconvergence(f)`` maps each branch's instruction index to that join point's
instruction index; ``len(f.insts)`` stands for "the function's exit".
"""
from __future__ import annotations

from dataclasses import dataclass

from .ir import Function

_TERMINATORS = {"ret", "exit", "trap"}


@dataclass
class Block:
    start: int
    end: int          # exclusive
    succs: tuple


def _target(inst):
    op = inst.operands[0]
    return op[1] if op[0] == "sym" else None


def blocks(f: Function) -> list:
    n = len(f.insts)
    leaders = {0}
    for label, idx in f.labels.items():
        if idx < n:
            leaders.add(idx)
    for i, inst in enumerate(f.insts):
        if inst.opcode in ("bra", "brx") or inst.opcode in _TERMINATORS:
            if i + 1 < n:
                leaders.add(i + 1)
    starts = sorted(leaders)
    out = []
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else n
        last = f.insts[e - 1] if e > s else None
        succs = []
        if last is None:
            succs = [e]
        elif last.opcode == "bra":
            succs.append(f.labels[_target(last)])
            if last.guard is not None:
                succs.append(e)
        elif last.opcode == "brx":
            succs.extend(f.labels.get(t, n) for t in last.targets) if hasattr(last, "targets") else None
        elif last.opcode in _TERMINATORS:
            if last.guard is not None:
                succs.append(e)
            else:
                succs.append(n)
        else:
            succs.append(e)
        out.append(Block(s, e, tuple(min(x, n) for x in succs)))
    return out


def reconvergence(f: Function) -> dict:
    """Instruction index of each branch -> index where its paths reconverge (immediate post-dominator)."""
    n = len(f.insts)
    bl = blocks(f)
    if not bl:
        return {}
    index_of = {b.start: k for k, b in enumerate(bl)}
    EXIT = len(bl)
    succ = [[index_of.get(s, EXIT) if s < n else EXIT for s in b.succs] for b in bl]
    # post-dominator sets, iterative (functions are small)
    allset = frozenset(range(EXIT + 1))
    pdom = [allset] * len(bl) + [frozenset([EXIT])]
    changed = True
    while changed:
        changed = False
        for k in reversed(range(len(bl))):
            ss = [pdom[s] for s in succ[k]] or [frozenset([EXIT])]
            new = frozenset.intersection(*ss) | {k}
            if new != pdom[k]:
                pdom[k] = new
                changed = True
    out = {}
    for k, b in enumerate(bl):
        last = f.insts[b.end - 1] if b.end > b.start else None
        if last is None or last.opcode not in ("bra", "brx") and last.opcode not in _TERMINATORS:
            continue
        cands = pdom[k] - {k}
        # the immediate post-dominator is the candidate post-dominated by all other candidates
        ipdom = EXIT
        for c in cands:
            if all(c2 in pdom[c] for c2 in cands):
                ipdom = c
                break
        out[b.end - 1] = bl[ipdom].start if ipdom != EXIT else n
    return out
