"""Extended-precision arithmetic (the carry flag CC.CF) written as plain instructions on a register.

``add.cc``, ``addc``, ``sub.cc``, ``subc``, ``mad.lo.cc`` / ``mad.hi.cc`` and ``madc`` pass a carry
from one instruction to the next through a flag that no operand names. The interpreter keeps that
flag per lane, but the compiled tier's code generator works on named registers only, so every such
instruction stayed interpreted, and with it every loop that holds one was no native region. nvcc
puts these chains in code courses use all the time: CUDA's double-precision ``sin``, ``cos``,
``tan`` and ``pow`` reduce large arguments with a 192-bit product (``__internal_trig_reduction_slowpathd``),
so a kernel that calls ``sin(x)`` on doubles ran its whole loop interpreted.

A subtraction's CC.CF is the carry of a + ~b + CF, as the hardware's adder has it: 1 when nothing was
borrowed, so ``sub.cc`` then ``addc d, 0, 0`` gives 1 for a non-negative difference, and ``subc`` takes
1 - CF as its borrow. Chains of sub.cc/subc alone read the same either way; NVVM's own 128-bit
division mixes them (``subc.cc`` ... ``addc.u32 %r, 0, 0`` to test the remainder's sign), and with the
flag taken as the borrow, ``x / y`` of unsigned __int128 came out one too big.

Here each carry instruction becomes a few ordinary ones (widened add or subtract, the carry taken from
the high half, or, for 64-bit words, from a comparison), with the flag in a register of its own
(``%cc$flag``, 0 or 1) that later carry instructions read. The same guard is put on every instruction
of the expansion, so a lane that skips the original leaves the flag and the destination alone, as
the hardware does. Results are bit for bit those of the flag-based instructions.
"""
from __future__ import annotations

import dataclasses

from .ir import Function

FLAG = "%cc$flag"
_TEMPS = {FLAG: "b32", "%cc$m32": "b32", "%cc$a": "b64", "%cc$b": "b64", "%cc$c": "b64", "%cc$s": "b64",
          "%cc$t": "b64", "%cc$p": "pred", "%cc$q": "pred"}
_CARRY_OPS = ("addc", "subc", "madc")


def uses_carry(inst) -> bool:
    return inst.opcode in _CARRY_OPS or inst.opcode in ("add", "sub", "mad") and "cc" in inst.mods


def carries_explicit(f: Function) -> Function:
    """``f`` with its carry instructions expanded (the function itself when it has none, or when a
    name of the temporaries is taken)."""
    if not any(uses_carry(i) for i in f.insts) or any(r in f.regs for r in _TEMPS):
        return f
    insts, where = [], {}
    try:
        for k, inst in enumerate(f.insts):
            where[k] = len(insts)
            insts.extend(_expanded(inst) if uses_carry(inst) else [inst])
    except ValueError:
        return f
    where[len(f.insts)] = len(insts)
    insts = [dataclasses.replace(i, index=j) for j, i in enumerate(insts)]
    return dataclasses.replace(f, insts=insts, regs={**f.regs, **_TEMPS},
                               labels={label: where[i] for label, i in f.labels.items()})


def _reg(name):
    return ("reg", name, False)


def _imm(v):
    return ("imm", v, "int")


def _expanded(inst):
    t = inst.type
    if t not in ("u32", "s32", "b32", "u64", "s64", "b64"):
        raise ValueError(t)
    wide = t.endswith("64")
    ops = inst.operands
    if any(o[0] not in ("reg", "imm") or o[0] == "reg" and o[2] for o in ops):
        raise ValueError("operand form")
    out = []

    def emit(opcode, mods, *operands):
        out.append(dataclasses.replace(inst, opcode=opcode, mods=tuple(mods), operands=tuple(operands)))

    dst, a, b = ops[0], ops[1], ops[2]
    use_in = inst.opcode in _CARRY_OPS
    set_out = "cc" in inst.mods
    sub = inst.opcode in ("sub", "subc")
    if inst.opcode in ("mad", "madc"):
        half = "hi" if "hi" in inst.mods else "lo"
        product = _reg("%cc$t") if wide else _reg("%cc$m32")
        emit("mul", (half, "u64" if wide else "u32"), product, a, b)
        a, b = product, ops[3]
    if not wide:
        A, B, S, C = _reg("%cc$a"), _reg("%cc$b"), _reg("%cc$s"), _reg("%cc$c")
        emit("cvt", ("u64", "u32"), A, a)
        emit("cvt", ("u64", "u32"), B, b)
        emit("sub" if sub else "add", ("u64",), S, A, B)
        if use_in:
            emit("cvt", ("u64", "u32"), C, _reg(FLAG))
            if sub:                                   # the borrow in is the flag's complement
                emit("xor", ("b64",), C, C, _imm(1))
            emit("sub" if sub else "add", ("u64",), S, S, C)
        emit("cvt", ("u32", "u64"), dst, S)
        if set_out:
            emit("shr", ("u64",), S, S, _imm(63 if sub else 32))
            emit("cvt", ("u32", "u64"), _reg(FLAG), S)
            if sub:                                   # the flag is the carry: no borrow
                emit("xor", ("b32",), _reg(FLAG), _reg(FLAG), _imm(1))
        return out
    # 64-bit words: the carry (borrow) out of a + b (a - b) is s < b (a < b); with a carry in, either step's
    S, T, C, P, Q = _reg("%cc$s"), _reg("%cc$t"), _reg("%cc$c"), _reg("%cc$p"), _reg("%cc$q")
    if sub:
        emit("sub", ("u64",), S, a, b)
        emit("setp", ("lt", "u64"), P, a, b)
    else:
        emit("add", ("u64",), S, a, b)
        emit("setp", ("lt", "u64"), P, S, b)
    if use_in:
        emit("cvt", ("u64", "u32"), C, _reg(FLAG))
        if sub:
            emit("xor", ("b64",), C, C, _imm(1))      # the borrow in is the flag's complement
            emit("setp", ("lt", "u64"), Q, S, C)
            emit("sub", ("u64",), S, S, C)
        else:
            emit("add", ("u64",), S, S, C)
            emit("setp", ("lt", "u64"), Q, S, C)
        emit("or", ("pred",), P, P, Q)
    if set_out:                                       # a subtraction's flag is the carry: no borrow
        emit("selp", ("u32",), _reg(FLAG), _imm(0 if sub else 1), _imm(1 if sub else 0), P)
    emit("mov", ("u64",), dst, S)
    return out
