"""Device functions copied into the kernels that call them (PTX IR to PTX IR).

Why: a call keeps the emulator's fast paths out. The compiled tier builds native code for kernels
only, and a loop whose body calls a function is no region, so every instruction of the loop and of
the function ran in the interpreter. nvcc leaves calls in exactly the code courses build most:
``-G`` (debug) builds keep every ``__device__`` function, ``tan()`` and ``sin()`` among them, as a
call, and ``-rdc=true`` programs call functions of other files. A ``-G`` kernel of one thread
looping 300,000 times over two ``tan()`` calls needed over ten minutes of CPU.

A call is replaced by a copy of the callee's body, as ptxas inlines: the callee's registers, labels,
local depots and call parameters get a suffix of their own per copy, its ``ret`` becomes a branch to
the instruction after the copy, and the parameters passed through the ``.param`` space become
registers (``st.param [param0+0], %fd1`` before the call and ``ld.param %fd9, [f_param_0]`` in the
callee become two moves through one register). Lock step runs the copy as it ran the call: the
callee ran with the caller's active lanes and they all left it together, at its end, which is where
the copy's branches reconverge.

Left as calls: recursion, calls through function pointers, guarded calls, functions with a
function-scope ``.shared`` variable or an ``alloca``, and any call whose parameters are passed in a
way this does not follow (a parameter's address taken, byte-sized parameter words, a word read that
the caller did not write). ``CUDALAB_INLINE=0`` turns it off.
"""
from __future__ import annotations

import dataclasses
import os
import re

from .ir import Function, Module, call_parts, leaves

# a kernel grows to at most this many instructions by inlining (the compiled tier's build time grows
# with it: about 10 ms an instruction), a copied body to at most BODY_MOST
TOTAL_MOST = 6000
BODY_MOST = 1500
# functions whose body the emulator never runs: it answers their calls natively (emulator/xorwow_jump.py and
# mrg_jump.py, the skip-aheads of cudalab's curand_kernel.h front), so their calls stay calls
NATIVE_CALLS = frozenset({"cudalab_xorwow_jump", "cudalab_mrg_power"})


class _NotInlined(Exception):
    """This call stays a call."""


def on() -> bool:
    return os.environ.get("CUDALAB_INLINE", "1").strip() not in ("0", "no", "off", "false")


def calls_inlined(module: Module, f: Function) -> Function:
    """``f`` with the calls to the module's device functions replaced by their bodies, where that
    is safe (see the module docstring); ``f`` itself when it calls none."""
    if not on() or f.extern or not any(i.opcode == "call" for i in f.insts):
        return f
    return _Inliner(module).flat(f.name, ()) or f


def _width(t: str) -> int | None:
    m = re.fullmatch(r"[bsuf](\d+)", t or "")
    return int(m.group(1)) if m else None


def _param_access(inst, names) -> tuple | None:
    """(name, offset) of an ld.param/st.param whose address is [name+offset] with name in ``names``."""
    if inst.opcode not in ("ld", "st") or "param" not in inst.mods:
        return None
    mem = inst.operands[1] if inst.opcode == "ld" else inst.operands[0]
    if mem[0] != "mem" or not mem[1] or mem[1][0] != "sym" or mem[1][1] not in names:
        return None
    return mem[1][1], mem[2]


def _renamed(op, regs, syms):
    kind = op[0]
    if kind == "reg":
        return ("reg", regs.get(op[1], op[1]), *op[2:])
    if kind == "sym":
        return ("sym", syms.get(op[1], op[1]))
    if kind in ("vec", "list"):
        return (kind, tuple(_renamed(o, regs, syms) for o in op[1]))
    if kind == "mem":
        return ("mem", None if op[1] is None else _renamed(op[1], regs, syms), *op[2:])
    if kind == "pair":
        return ("pair", _renamed(op[1], regs, syms), _renamed(op[2], regs, syms))
    return op


class _Inliner:
    def __init__(self, module: Module):
        self.module = module
        self.flats: dict = {}
        self.copies = 0

    def flat(self, name: str, path: tuple) -> Function | None:
        """Function ``name`` with its own calls inlined; None when it is recursive (on ``path``)."""
        if name in path:
            return None
        if name in self.flats:
            return self.flats[name]
        f = self.module.functions[name]
        regs, locals_, body_params = dict(f.regs), list(f.locals), dict(f.body_params)
        at = {}
        for label, i in f.labels.items():
            at.setdefault(i, []).append(label)
        items, size, changed = [], 0, False        # instructions, and ("label", name) markers
        k = 0
        while k < len(f.insts):
            inst = f.insts[k]
            items.extend(("label", label) for label in at.get(k, ()))
            if inst.opcode == "call":
                try:
                    start, copied, after = self._inline_call(f, k, path + (name,), size, regs, locals_, body_params)
                except _NotInlined:
                    pass
                else:
                    del items[len(items) - (k - start):]       # the argument stores: moves in the copy
                    items.extend(copied)
                    size += sum(1 for x in copied if not isinstance(x, tuple)) - (k - start)
                    changed = True
                    k = after
                    continue
            items.append(inst)
            size += 1
            k += 1
        items.extend(("label", label) for label in at.get(len(f.insts), ()))
        if not changed:
            self.flats[name] = f
            return f
        insts, labels = [], {}
        for x in items:
            if isinstance(x, tuple):
                labels[x[1]] = len(insts)
            else:
                insts.append(dataclasses.replace(x, index=len(insts)))
        result = dataclasses.replace(f, regs=regs, locals=locals_, body_params=body_params, insts=insts,
                                     labels=labels)
        self.flats[name] = result
        return result

    def _inline_call(self, f, k, path, size, regs, locals_, body_params):
        """(index of the first argument store, the items that replace the stores, the call and the
        result loads after it, index after those loads) for call ``k`` of ``f``."""
        call = f.insts[k]
        if call.guard is not None:
            raise _NotInlined
        target, rets, args = call_parts(call)
        fname = target[1] if target is not None and target[0] == "sym" else None     # (None: through a pointer)
        callee_ir = self.module.functions.get(fname) if fname else None
        if callee_ir is None or callee_ir.extern or callee_ir.is_entry or callee_ir.shared or fname in NATIVE_CALLS:
            raise _NotInlined
        if any(a[0] != "sym" for a in args) or any(r[0] != "sym" for r in rets):
            raise _NotInlined
        if len(args) != len(callee_ir.params) or len(rets) > len(callee_ir.returns):
            raise _NotInlined
        callee = self.flat(fname, path)
        if callee is None or len(callee.insts) > BODY_MOST or size + len(callee.insts) > TOTAL_MOST:
            raise _NotInlined
        arg_names = [a[1] for a in args]
        ret_names = [r[1] for r in rets]
        copy = self.copies + 1
        tag = f"$i{copy}"
        words: dict = {}                 # (param name, offset, width) -> register
        new_regs: dict = {}

        def word(name, off, width, write):
            key = (name, off, width)
            reg = words.get(key)
            if reg is None:
                if not write:
                    raise _NotInlined       # a word the other side never wrote
                reg = words[key] = f"%inl{copy}_{name}_{off}"
                if reg in regs:
                    raise _NotInlined
                new_regs[reg] = f"b{width}"
            return reg

        def moves(inst, name, off, write):
            t = inst.type
            width = _width(t)
            if width is None or width < 16:
                raise _NotInlined
            vals = inst.operands[0] if inst.opcode == "ld" else inst.operands[1]
            elems = vals[1] if vals[0] == "vec" else (vals,)
            made = []
            for e, v in enumerate(elems):
                reg = ("reg", word(name, off + e * width // 8, width, write), False)
                made.append(dataclasses.replace(inst, opcode="mov", mods=(t,), operands=(reg, v) if write else (v, reg)))
            return made

        labelled = set(f.labels.values())
        args_set = set(arg_names)
        out = []
        # the caller's stores of the arguments, right before the call
        start = k
        while start > 0 and f.insts[start - 1].opcode == "st" and _param_access(f.insts[start - 1], args_set) \
                and start not in labelled:
            start -= 1
        for j in range(start, k):
            name, off = _param_access(f.insts[j], args_set)
            out.extend(moves(f.insts[j], name, off, write=True))
        # the callee's body
        params = {p.name: a for p, a in zip(callee.params, arg_names)}
        returns = {p.name: (ret_names[i] if i < len(ret_names) else f"__unread{i}")
                   for i, p in enumerate(callee.returns)}
        reg_map = {r: r + tag for r in callee.regs}
        if any(r in regs for r in reg_map.values()):
            raise _NotInlined
        sym_map = {label: label + tag for label in callee.labels}
        sym_map.update({v.name: v.name + tag for v in callee.locals})
        sym_map.update({p: p + tag for p in callee.body_params})
        end_label = f"$Linl_end{tag}"
        at = {}
        for label, i in callee.labels.items():
            at.setdefault(i, []).append(label + tag)

        def renamed(inst):
            return dataclasses.replace(inst, operands=tuple(_renamed(o, reg_map, sym_map) for o in inst.operands),
                                       guard=None if inst.guard is None else
                                       (reg_map.get(inst.guard[0], inst.guard[0]), *inst.guard[1:]))

        passed = params.keys() | returns.keys()
        for i, inst in enumerate(callee.insts):
            out.extend(("label", label) for label in at.get(i, ()))
            if inst.opcode == "alloca":
                raise _NotInlined
            acc = _param_access(inst, passed)
            if acc is None:
                if any(o[0] == "sym" and o[1] in passed for o in leaves(inst.operands)):
                    raise _NotInlined       # a parameter's address, or a param access of another shape
                if inst.opcode == "ret":
                    out.append(dataclasses.replace(renamed(inst), opcode="bra",
                                                   mods=("uni",) if inst.guard is None else (),
                                                   operands=(("sym", end_label),)))
                else:
                    out.append(renamed(inst))
                continue
            name, off = acc
            if inst.opcode == "ld" and name in params:
                out.extend(moves(renamed(inst), params[name], off, write=False))
            elif inst.opcode == "st" and name in returns:
                out.extend(moves(renamed(inst), returns[name], off, write=True))
            else:
                raise _NotInlined
        out.extend(("label", label) for label in at.get(len(callee.insts), ()))
        out.append(("label", end_label))
        # the caller's loads of the results, right after the call: moves from the words the copy wrote
        ret_set = set(ret_names)
        j = k + 1
        while j < len(f.insts) and f.insts[j].opcode == "ld" and _param_access(f.insts[j], ret_set) \
                and j not in labelled:
            name, off = _param_access(f.insts[j], ret_set)
            out.extend(moves(f.insts[j], name, off, write=False))
            j += 1
        # everything checked: commit the copy's declarations
        self.copies = copy
        regs.update(new_regs)
        for r, t in callee.regs.items():
            regs[reg_map[r]] = t
        for v in callee.locals:
            locals_.append(dataclasses.replace(v, name=v.name + tag))
        for p, param in callee.body_params.items():
            body_params[p + tag] = dataclasses.replace(param, name=p + tag)
        return start, out, j


def _mark(label):
    return Instruction("$label", (), (("sym", label),))
