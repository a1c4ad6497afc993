"""Operand access, decoded once per instruction: closures that read and write lane arrays.

A reader is ``r(ex, sel) -> array | scalar`` and a writer ``w(ex, sel, value)``: ``sel`` is None
for "every lane of the frame" (the fast path when no lane is masked off) or an int array of the
active lanes. Values come out already viewed as the instruction's PTX type.
"""
from __future__ import annotations

import numpy as np

from .dtypes import UINT, convert_storage, dtype, storage


def _regtype(func, name):
    t = func.regs.get(name)
    if t is None:
        raise KeyError(f"register {name} is used but not declared")
    return t


def imm_value(op, t):
    """An immediate as a numpy scalar of PTX type ``t``."""
    dt = dtype(t)
    v, kind = op[1], op[2]
    if kind == "int":
        if dt.kind == "f":
            return dt.type(v)
        if dt == np.bool_:
            return np.bool_(v != 0)
        return np.array(v & ((1 << (8 * dt.itemsize)) - 1), UINT[dt.itemsize]).view(dt)[()]
    if kind == "f32":
        f = np.array(v, np.uint32).view(np.float32)[()]
        if dt.kind == "f":
            return dt.type(f)
        return np.array(v & ((1 << (8 * dt.itemsize)) - 1), UINT[dt.itemsize]).view(dt)[()] if dt.itemsize == 4 \
            else dt.type(v)
    f = np.array(v, np.uint64).view(np.float64)[()]
    if dt.kind == "f":
        return dt.type(f)
    return np.array(v & ((1 << (8 * dt.itemsize)) - 1), UINT[dt.itemsize]).view(dt)[()]


def reader(op, t, func, env):
    """Closure reading operand ``op`` as PTX type ``t``. ``env`` resolves symbols and specials."""
    kind = op[0]
    dt = dtype(t)
    if kind == "reg":
        name, neg = op[1], op[2]
        st = storage(_regtype(func, name))
        if st == dt:
            if neg:
                def r(ex, sel):
                    a = ex.fr.regs[name]
                    return ~(a if sel is None else a[sel])
                return r

            def r(ex, sel):
                a = ex.fr.regs[name]
                return a if sel is None else a[sel]
            return r
        if st.itemsize == dt.itemsize and st != np.bool_ and dt != np.bool_:
            def r(ex, sel):
                a = ex.fr.regs[name]
                return (a if sel is None else a[sel]).view(dt)
            return r

        def r(ex, sel):
            a = ex.fr.regs[name]
            return convert_storage(a if sel is None else a[sel], st, dt)
        return r
    if kind == "imm":
        v = imm_value(op, t)
        return lambda ex, sel: v
    if kind == "sreg":
        key = (op[1], op[2])
        site = object()         # this instruction's read (a clock read again here is a loop waiting on it)

        def r(ex, sel):
            a = ex.special(key, site)
            if np.ndim(a) == 0:
                return convert_storage(np.asarray(a), np.asarray(a).dtype, dt)[()]
            a = a if sel is None else a[sel]
            return convert_storage(a, a.dtype, dt)
        return r
    if kind == "sym" and op[1] == "WARP_SZ":          # PTX's predefined warp-size constant
        v = dtype(t).type(32)
        return lambda ex, sel: v
    if kind == "sym":
        name = op[1]

        def r(ex, sel):
            return convert_storage(np.asarray(ex.symbol_address(name), np.uint64), np.uint64, dt)[()]
        return r
    if kind == "vec":
        parts = [reader(o, t, func, env) for o in op[1]]
        # a vector read as one wider value: mov.b64 %rd, {%r1, %r2} (low part first)
        return lambda ex, sel: tuple(p(ex, sel) for p in parts)
    raise KeyError(f"cannot read operand {op!r}")


def writer(op, t, func):
    """Closure writing a value of PTX type ``t`` into the register operand ``op``."""
    if op[0] == "sym" and op[1] == "_":
        return lambda ex, sel, v: None  # the PTX sink operand
    if op[0] != "reg":
        raise KeyError(f"cannot write to operand {op!r}")
    name = op[1]
    st = storage(_regtype(func, name))
    src_dt = dtype(t)

    def w(ex, sel, v):
        v = np.asarray(v)
        owned = v.base is None   # a fresh result may be kept; a view of another register may not
        if v.dtype != st:
            v = convert_storage(v.astype(src_dt, copy=False) if v.dtype != src_dt else v, src_dt, st)
        regs = ex.fr.regs
        if sel is None:
            if v.ndim == 0:
                regs[name] = np.full(ex.n, v, st)
            else:
                regs[name] = v if owned else v.copy()
        else:
            arr = regs[name]
            arr[sel] = v
    return w


def address_reader(op, func, env):
    """For ``[base+offset]``: closure giving (space_hint, uint64 addresses or scalar).

    A register base yields per-lane addresses; a symbol base yields that variable's address in its
    own space (a kernel parameter's offset, a shared variable's offset, a global's address).
    A 32-bit register base adds its offset in 32 bits, wrapping as the GPU's 32-bit shared and local
    addresses do: NVRTC may count a loop's shared pointer from far below zero and add the distance back
    as the offset (fuzz v3 seed 645: ``st.shared.u8 [%r212+1203317526]``, in bounds only modulo 2^32)."""
    base, off = op[1], np.uint64(op[2] & 0xFFFF_FFFF_FFFF_FFFF)
    if base is None:
        return lambda ex, sel: off
    if base[0] == "reg":
        st = storage(_regtype(func, base[1]))
        name = base[1]

        def r(ex, sel):
            a = ex.fr.regs[name]
            if sel is not None:
                if sel.dtype == bool:
                    a = a[sel]
                elif sel.size != a.size or a.ndim != 1 or sel[0] != 0 or sel[-1] != a.size - 1:
                    # take, not a[sel]: numpy's fancy indexing costs several times as much on a batch's lanes
                    a = a.take(sel)
                elif st == np.uint64 and not off:
                    # every lane (sorted, distinct, all below a.size: 0..n-1): a copy, not a gather (a
                    # pipeline's cp.async reads two addresses of every lane of a GEMM's batch)
                    return a.copy()
            if st != np.uint64:
                if not off:                  # a 32-bit address plus nothing: it fits, nothing to wrap
                    return a.astype(np.uint64)
                return (a.astype(np.uint64) + off) & np.uint64(0xFFFF_FFFF)
            return a + off
        return r
    if base[0] == "sym":
        name = base[1]
        return lambda ex, sel: np.uint64(ex.symbol_address(name)) + off
    raise KeyError(f"cannot use {base!r} as an address")
