"""Generic loads, stores and atomics that provably reach shared or global memory, written with their space.

An optimized build's PTX says ``ld.shared``/``st.global``/``red.global``: NVVM infers the state space
of each pointer. A ``-G`` (debug) build skips that: it takes a ``__shared__`` array's generic address
(``cvta.shared.u64``) and uses a kernel's pointer parameters as they come, and every access is a
generic ``ld``/``st``/``atom``. The compiled tier's regions hand a thread back to the interpreter
at a generic access that lands in shared memory where the region also writes shared memory (it
could meet that write out of lock step's order), and the code generator takes no generic atomics,
so a ``-G`` tree reduction ran thread by thread in the interpreter: 3 s of CPU for 4 million floats
where the optimized build takes 0.02 s.

Here a 64-bit register every definition of which is ``cvta.shared`` of something (a shared pointer),
or in a kernel a load of one of its own parameters or ``cvta.global`` (a global pointer: a host can
give a kernel no other memory), or such a register plus or minus an integer, or a copy of one, keeps
that space; a generic access through one becomes ``cvta.to.<space>`` into a register of its own and
the same access in ``.<space>`` (the original's guard on both). That is NVVM's inference for the
cases ``-G`` code has; an offset that may come from memory does not count for a global pointer (it may
be a pointer itself: a shared array's address kept in memory, plus a byte count the kernel is given). An address that such arithmetic moves outside its window is reported as a bad
access of that space, where the generic access would have been reported for the window it reached.
"""
from __future__ import annotations

import dataclasses

from .ir import Function, leaves

_ACCESS = ("ld", "st", "atom", "red")
_SPACES = {"global", "shared", "local", "const", "param", "tex", "surf"}


def generic_accesses_explicit(f: Function) -> Function:
    """``f`` with its generic accesses through provably shared (or, in a kernel, global) pointers
    made ``.shared`` (``.global``)."""
    known = {r: "shared" for r in _pointers(f, _is_shared_seed)}
    if f.is_entry:
        params = {p.name for p in f.params}
        loaded = _from_memory(f)
        known.update({r: "global" for r in _pointers(f, lambda d: _is_global_seed(d, params), loaded)
                      if r not in known})
    if not known:
        return f
    insts, where, fresh = [], {}, 0
    for k, inst in enumerate(f.insts):
        where[k] = len(insts)
        reg = _generic_through(inst, known)
        if reg is None:
            insts.append(inst)
            continue
        space = known[reg]
        fresh += 1
        to = f"%spaceptr${fresh}"
        insts.append(dataclasses.replace(inst, opcode="cvta", mods=("to", space, "u64"),
                                         operands=(("reg", to, False), ("reg", reg, False))))
        mods = list(inst.mods)
        at = next((i for i, m in enumerate(mods) if m not in ("volatile", "relaxed", "acquire", "release", "weak",
                                                              "cta", "gpu", "sys", "cluster")), len(mods))
        mods.insert(at, space)
        k_mem = 1 if inst.opcode in ("ld", "atom") else 0
        ops = list(inst.operands)
        mem = ops[k_mem]
        ops[k_mem] = ("mem", ("reg", to, False), *mem[2:])
        insts.append(dataclasses.replace(inst, mods=tuple(mods), operands=tuple(ops)))
    if not fresh:
        return f
    where[len(f.insts)] = len(insts)
    regs = dict(f.regs)
    regs.update({f"%spaceptr${i}": "b64" for i in range(1, fresh + 1)})
    if len(regs) != len(f.regs) + fresh:
        return f                      # a name taken (never by nvcc's naming)
    return dataclasses.replace(f, regs=regs, insts=[dataclasses.replace(i, index=j) for j, i in enumerate(insts)],
                               labels={label: where[i] for label, i in f.labels.items()})


def _is_shared_seed(d) -> bool:
    return d.opcode == "cvta" and "shared" in d.mods and "to" not in d.mods and _wide(d)


def _is_global_seed(d, params) -> bool:
    """A kernel's pointer parameter (CUDA gives kernels global memory only: a host cannot name
    another block's shared memory or a thread's local memory), or a global address made generic."""
    if d.opcode == "cvta":
        return "global" in d.mods and _wide(d)
    if d.opcode == "ld" and "param" in d.mods and _wide(d):
        mem = d.operands[1]
        return mem[0] == "mem" and bool(mem[1]) and mem[1][0] == "sym" and mem[1][1] in params
    return False


def _generic_through(inst, known) -> str | None:
    """The pointer register of ``known`` that a generic access goes through, or None."""
    if inst.opcode not in _ACCESS or any(m in _SPACES for m in inst.mods):
        return None
    k_mem = 1 if inst.opcode in ("ld", "atom") else 0
    if len(inst.operands) <= k_mem:
        return None
    mem = inst.operands[k_mem]
    if mem[0] != "mem" or not mem[1] or mem[1][0] != "reg" or mem[1][1] not in known:
        return None
    return mem[1][1]


def _pointers(f: Function, seed, loaded=frozenset()) -> set:
    """64-bit registers every definition of which is a ``seed`` or an integer offset or copy of
    such a register: they hold addresses of the seed's state space wherever they are defined. An
    offset in ``loaded`` does not count: it may be a pointer itself (a parameter plus a pointer read
    from memory is not known to be global)."""
    defs: dict = {}
    for inst in f.insts:
        if inst.operands and inst.operands[0][0] == "reg" and inst.opcode not in ("st", "red", "bra", "call"):
            defs.setdefault(inst.operands[0][1], []).append(inst)
    wide = ("b64", "u64", "s64")
    candidates = {r for r, ds in defs.items() if f.regs.get(r) in wide and any(seed(d) for d in ds)}
    grew = True
    while grew:                 # grow through copies and offsets ...
        grew = False
        for r, ds in defs.items():
            if r not in candidates and f.regs.get(r) in wide and any(_from(d, candidates) for d in ds):
                candidates.add(r)
                grew = True
    changed = True
    while changed:              # ... then keep the registers all of whose definitions qualify
        changed = False
        for r in list(candidates):
            if not all(seed(d) or _offset_or_copy(d, candidates, loaded) for d in defs[r]):
                candidates.discard(r)
                changed = True
    return candidates


def _from(d, known) -> bool:
    return d.opcode in ("add", "sub", "mov") and any(o[0] == "reg" and o[1] in known for o in d.operands[1:])


def _offset_or_copy(d, known, loaded=frozenset()) -> bool:
    """Does ``d`` leave a pointer of the kind of ``known`` in its destination?"""
    op = d.opcode
    if op == "mov":
        src = d.operands[1]
        return _wide(d) and src[0] == "reg" and src[1] in known and not src[2]
    if op in ("add", "sub") and _wide(d) and len(d.operands) == 3 and not any(m in d.mods for m in ("cc", "sat")):
        a, b = d.operands[1], d.operands[2]
        if a[0] not in ("reg", "imm") or b[0] not in ("reg", "imm"):
            return False
        a_in = a[0] == "reg" and a[1] in known
        b_in = b[0] == "reg" and b[1] in known
        if any(o[0] == "reg" and o[1] in loaded for o in (a, b) if not (o[0] == "reg" and o[1] in known)):
            return False
        return a_in != b_in if op == "add" else a_in and not b_in
    return False


def _from_memory(f: Function) -> set:
    """Registers whose value may come from memory (a load other than a parameter's, an atomic, a
    shuffle), directly or through any arithmetic."""
    out = set()
    for inst in f.insts:
        if inst.opcode in ("ld", "ldu", "atom", "shfl", "tex", "tld4", "suld") and "param" not in inst.mods:
            out.update(r for r in _dest_regs(inst))
    changed = True
    while changed:
        changed = False
        for inst in f.insts:
            if inst.opcode in ("st", "red", "bra", "call") or not inst.operands:
                continue
            if any(o[0] == "reg" and o[1] in out for o in leaves(inst.operands[1:])):
                for r in _dest_regs(inst):
                    if r not in out:
                        out.add(r)
                        changed = True
    return out


def _dest_regs(inst):
    first = inst.operands[0]
    return [o[1] for o in leaves((first,)) if o[0] == "reg"]


def _wide(d) -> bool:
    return d.type in ("u64", "s64", "b64")
