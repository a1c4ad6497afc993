"""Loads, stores and atomics over the state spaces (PTX ISA 9.7.9: ld, st, atom, red).

An access resolves each active lane's address to (buffer, element index): global and constant
addresses index the device arena, shared addresses the block's row of the batch's shared buffer,
local addresses the thread's row of the local buffer, and generic addresses pick one of these by
window. Bounds and alignment are checked for every lane before anything is read or written, so a
bad access stops the kernel without touching memory (memcheck's behaviour). An access a GPU runs
(past an allocation into memory a GPU maps, inside a block's shared allocation unit: slack.py) is a
warning instead, and reads and writes the bytes there, unless memcheck was asked for.
"""
from __future__ import annotations

import numpy as np

from .decode import Unsupported, op
from .dtypes import dtype, storage
from .memory import GLOBAL_BASE, LOCAL_WINDOW, PARAM_WINDOW, SHARED_WINDOW, WINDOW_SIZE
from .operands import address_reader, reader, writer
from .events import MemoryEvent

SPACES = ("global", "shared", "local", "const", "param")


def _space(inst):
    for m in inst.mods:
        if m in SPACES:
            return m
        if m in ("shared::cta", "shared::cluster"):        # sm_90: cluster.py
            return "shared" if m == "shared::cta" else m
        if m in ("param::entry", "param::func"):
            return "param"
    return "generic"


def _vec(inst):
    for m in inst.mods:
        if m in ("v2", "v4", "v8"):
            return int(m[1])
    return 1


# ------------------------------------------------------------------ address resolution

def resolve(ex, inst, space, addrs, sel, size, kind):
    """Map byte addresses of lanes ``sel`` to (buffer, byte offsets) of one space.

    Returns a list of (space, buffer, offsets, lane positions) groups: one group, except for generic
    accesses whose lanes fall in different spaces."""
    addrs = np.asarray(addrs, np.uint64)
    if addrs.ndim == 0:
        addrs = np.full(sel.size, addrs, np.uint64)
    if space == "generic":
        groups = []
        sh = (addrs >= np.uint64(SHARED_WINDOW)) & (addrs < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        lo = (addrs >= np.uint64(LOCAL_WINDOW)) & (addrs < np.uint64(LOCAL_WINDOW + WINDOW_SIZE))
        gl = ~(sh | lo)
        pa = (addrs >= np.uint64(PARAM_WINDOW)) & (addrs < np.uint64(PARAM_WINDOW + WINDOW_SIZE))
        gl &= ~pa
        # a generic shared address may point into another block of the cluster (cluster.py)
        for sp, m, base in (("global", gl, 0), ("shared::cluster", sh, SHARED_WINDOW), ("local", lo, LOCAL_WINDOW),
                            ("param", pa, PARAM_WINDOW)):
            if m.any():
                pos = np.flatnonzero(m) if not m.all() else slice(None)
                a = addrs[pos] - np.uint64(base)
                got = resolve(ex, inst, sp, a, sel[pos], size, kind) if sp != "global" else \
                    _global(ex, inst, a, sel[pos], size, kind, sp, slice(None))
                # groups from a recursive call index their own lanes: re-base them on this call's
                groups.extend((g[0], g[1], g[2], pos if isinstance(g[3], slice) else (
                    g[3] if isinstance(pos, slice) else pos[g[3]])) for g in got)
        return groups
    if space in ("global", "const"):
        return _global(ex, inst, addrs, sel, size, kind, space, slice(None))
    if space in ("shared", "shared::cluster"):
        hit = cluster.resolve_shared(ex, inst, space, addrs, sel, size, kind)
        if hit is not None:
            return hit
    if space in ("shared", "shared::cluster"):
        limit = ex.shared_size
        bad = addrs > np.uint64(limit - size) if limit >= size else np.ones(addrs.shape, bool)
        inside = None
        if bad.any():
            why = f"is out of bounds of the block's {limit}-byte shared memory"
            unit = slack.shared_allocation(limit)
            far = bad & (addrs + np.uint64(size) > np.uint64(unit))
            if slack.strict or far.any():
                worst = far if far.any() else bad
                ex.fault(inst, "shared", kind, sel[worst], addrs[worst], size, why)
            slack.warn(ex, inst, "shared", kind, sel[bad], addrs[bad], size,
                       f"is {int(addrs[bad][0]) - limit} bytes after the end of the block's {limit}-byte shared "
                       f"memory, inside its {unit}-byte allocation")
            inside = ~bad
        _align(ex, inst, "shared", kind, sel, addrs, size)
        # each lane's own block: sel may repeat lanes (a wmma fragment's elements), so a sel as long
        # as the batch is not necessarily every lane in order (fuzz seed 3357: a block read another's tile)
        base = ex.shared_base if sel is ex.idx and sel.size == ex.n else ex.shared_base[sel]
        off = base + addrs
        if ex.observers and (inside is None or inside.any()):   # (the analyses see the accesses inside it only)
            ev_sel, ev_addrs = (sel, addrs) if inside is None else (sel[inside], addrs[inside])
            ex.emit(MemoryEvent(inst, ev_sel, ex.batch, "shared", kind, size, ev_addrs))
        return [("shared", ex.shared, off, slice(None))]
    if space == "local":
        limit = ex.local_stride
        bad = addrs + np.uint64(size) > np.uint64(limit)
        past = None
        if bad.any():
            why = f"is past the thread's {limit}-byte local memory (stack overflow?)"
            far = bad & (addrs + np.uint64(size) > np.uint64(max(limit, slack.LOCAL_STACK)))
            if slack.strict or far.any():
                worst = far if far.any() else bad
                ex.fault(inst, "local", kind, sel[worst], addrs[worst], size, why)
            slack.warn(ex, inst, "local", kind, sel[bad], addrs[bad], size,
                       f"is {int(addrs[bad][0]) - limit} bytes after the end of the thread's {limit}-byte local "
                       "memory (its local arrays), inside the stack a GPU gives each thread; here it reads "
                       "zeros and a write is dropped")
            past = np.flatnonzero(bad)
        _align(ex, inst, "local", kind, sel, addrs, size)
        off = sel.astype(np.uint64) * np.uint64(limit) + addrs
        if ex.observers:
            ex.emit(MemoryEvent(inst, sel, ex.batch, "local", kind, size, addrs))
        if past is None:
            return [("local", ex.local, off, slice(None))]
        # the threads past their frame read and write a scratch buffer of zeros (the emulator keeps
        # only the frame)
        within = np.flatnonzero(~bad)
        return [("local", ex.local, off[within], within),
                ("local", np.zeros(64, np.uint8), np.zeros(past.size, np.uint64), past)]
    if space == "param":
        return sm90.resolve_param(ex, inst, addrs, sel, size, kind)
    raise Unsupported(f"{kind}.{space}")


def _align(ex, inst, space, kind, sel, addrs, size):
    if size > 1:
        bad = (addrs & np.uint64(size - 1)) != 0
        if bad.any():
            ex.fault(inst, space, kind, sel[bad], addrs[bad], size, f"is not aligned to {size} bytes",
                     code="cudaErrorMisalignedAddress")


def _global(ex, inst, addrs, sel, size, kind, space, pos):
    mem = ex.mem
    ok = ex.valid_global(addrs, size)
    if not ok.all():
        bad = ~ok
        named = "global" if space == "global" else space
        # in no live allocation but in memory a GPU has mapped there (an allocation's padding, the
        # pool around small ones): a GPU runs it (slack.py)
        runs = np.zeros(addrs.shape, bool)
        runs[bad] = slack.mapped(mem, addrs[bad], size, addrs[ok])
        far = bad & ~runs
        if slack.strict or far.any():
            worst = far if far.any() else bad
            ex.fault(inst, named, kind, sel[worst], addrs[worst], size, None)
        slack.warn(ex, inst, named, kind, sel[bad], addrs[bad], size)
        _align(ex, inst, space, kind, sel, addrs, size)
        if ex.observers and ok.any():       # (the analyses see the accesses inside allocations only)
            ex.emit(MemoryEvent(inst, sel[ok], ex.batch, space, kind, size, addrs[ok]))
        off = addrs - np.uint64(GLOBAL_BASE)
        # the arena holds the allocations' bytes only: farther (before the first allocation, past
        # the arena's end) reads give zeros and writes are dropped
        outside = off > np.uint64(max(mem.data.size - size, 0))
        if kind != "ld":        # a stray write past the allocations: zeroed before an allocation there
            landed = bad & ~outside
            if landed.any():
                mem.stray_write(int(off[landed].max()) + size)
        if not outside.any():
            return [(space, mem, off, pos)]
        within, past = np.flatnonzero(~outside), np.flatnonzero(outside)
        return [(space, mem, off[within], within),
                (space, np.zeros(64, np.uint8), np.zeros(past.size, np.uint64), past)]
    _align(ex, inst, space, kind, sel, addrs, size)
    if ex.observers:
        ex.emit(MemoryEvent(inst, sel, ex.batch, space, kind, size, addrs))
    return [(space, mem, addrs - np.uint64(GLOBAL_BASE), pos)]


_SHIFT = {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}


def _index(off, dt):
    return (off >> np.uint64(_SHIFT[dt.itemsize])).view(np.int64) if off.ndim else \
        np.int64(int(off) >> _SHIFT[dt.itemsize])


def gather(buf, off, dt):
    return buf.view(dt)[_index(off, dt)]


def scatter(buf, off, dt, vals):
    buf.view(dt)[_index(off, dt)] = vals


# ------------------------------------------------------------------ ld / st

@op("ld", "ldu")
def _ld(inst, d):
    space = _space(inst)
    t = inst.type
    dt = dtype(t) if t != "b128" else np.dtype(np.uint64)
    nv = _vec(inst)
    dst, src = inst.operands
    dsts = dst[1] if dst[0] == "vec" else (dst,)
    ws = [writer(o, t, d.func) if not (o[0] == "sym" and o[1] == "_") else None for o in dsts]
    esize = dt.itemsize
    size = esize * nv
    if space == "param":
        return _ld_param(inst, d, ws, dt, src)
    ar = address_reader(src, d.func, d)

    def run(ex):
        sel = ex.idx
        addrs = ar(ex, sel)
        for sp, buf, off, pos in resolve(ex, inst, space, addrs, sel, size, "ld"):
            lanes = sel if isinstance(pos, slice) else sel[pos]
            for k, w in enumerate(ws):
                if w is not None:
                    w(ex, lanes, gather(buf, off + np.uint64(k * esize), dt))
    return run


def _ld_param(inst, d, ws, dt, src):
    base, offset = src[1], src[2]
    name = base[1] if base and base[0] == "sym" else None
    if name is None:
        return sm90.ld_param_indirect(inst, d, ws, dt, src)
    kp = {p.name: p for p in d.func.params} if d.func.is_entry else {}
    if name in kp:
        koff = d.param_offsets[name] + offset

        def run(ex):
            raw = ex.kparams
            for k, w in enumerate(ws):
                o = koff + k * dt.itemsize
                w(ex, ex.ridx, np.frombuffer(raw, dt, 1, o)[0])
        return run

    def run(ex):
        buf = ex.fr.params[name]
        sel = ex.ridx
        rows = buf if sel is None else buf[sel]
        for k, w in enumerate(ws):
            o = offset + k * dt.itemsize
            w(ex, sel, np.ascontiguousarray(rows[:, o:o + dt.itemsize]).view(dt)[:, 0])
    return run


@op("st")
def _st(inst, d):
    space = _space(inst)
    t = inst.type
    dt = dtype(t)
    nv = _vec(inst)
    dst, src = inst.operands
    srcs = src[1] if src[0] == "vec" else (src,)
    rs = [reader(o, t, d.func, d) for o in srcs]
    esize = dt.itemsize
    size = esize * nv
    if space == "param":
        name, offset = dst[1][1], dst[2]

        def run(ex):
            sel = ex.ridx
            buf = ex.fr.param_buffer(name)
            for k, r in enumerate(rs):
                v = np.asarray(r(ex, sel), dt)
                col = buf[:, offset + k * esize: offset + (k + 1) * esize]
                vb = np.broadcast_to(v, (ex.n if sel is None else sel.size,)).view(np.uint8).reshape(-1, esize) \
                    if v.ndim else np.frombuffer(v.tobytes(), np.uint8)
                if sel is None:
                    col[:] = vb
                else:
                    col[sel] = vb
        return run
    ar = address_reader(dst, d.func, d)

    def run(ex):
        sel = ex.idx
        addrs = ar(ex, sel)
        vals = [np.asarray(r(ex, sel)) for r in rs]
        for sp, buf, off, pos in resolve(ex, inst, space, addrs, sel, size, "st"):
            for k, v in enumerate(vals):
                vv = v if v.ndim == 0 or isinstance(pos, slice) else v[pos]
                scatter(buf, off + np.uint64(k * esize), dt, vv.astype(dt, copy=False))
    return run


# ------------------------------------------------------------------ atomics (PTX ISA 9.7.13.5)

def _atomic_fn(opname, dt, t, space="global"):
    if opname == "add" and t == "f32":
        # f32 atomics return the canonical NaN; in global memory they also flush denormals
        # (measured on an H100: atomicAdd(&g, 1e-45f) on 0 gives 0 in global, 1e-45 in shared memory)
        from .alu import gpu_nan
        from .dtypes import flush_subnormal
        if space == "shared":
            return lambda old, v: gpu_nan(old + v).astype(dt)
        return lambda old, v: gpu_nan(flush_subnormal(flush_subnormal(old) + flush_subnormal(v))).astype(dt)
    if opname == "add" and t == "f64":
        return lambda old, v: (v + old).astype(dt)     # two NaNs: the GPU keeps the added value's payload
    if opname == "add":
        if t in ("f16x2", "bf16x2", "bf16", "f16"):
            from . import alu
            bf = t.startswith("bf")
            if t.endswith("x2"):
                return lambda old, v: alu.pack2(*(np.asarray(a + b, np.float32 if bf else np.float16)
                                                  for a, b in zip(alu.unpack2(old, bf), alu.unpack2(v, bf))), bf)
            if bf:
                return lambda old, v: alu.f32_to_bf16(alu.bf16_to_f32(old) + alu.bf16_to_f32(v))
        return lambda old, v: (old + v).astype(dt)
    if opname == "min":
        return lambda old, v: np.minimum(old, v)
    if opname == "max":
        return lambda old, v: np.maximum(old, v)
    if opname == "and":
        return lambda old, v: old & v
    if opname == "or":
        return lambda old, v: old | v
    if opname == "xor":
        return lambda old, v: old ^ v
    if opname == "exch":
        return lambda old, v: np.asarray(v, dt)
    if opname == "inc":       # ((old >= v) ? 0 : old + 1)
        return lambda old, v: np.where(old >= v, 0, old + 1).astype(dt)
    if opname == "dec":       # ((old == 0) | (old > v)) ? v : old - 1
        return lambda old, v: np.where((old == 0) | (old > v), v, old - 1).astype(dt)
    raise Unsupported(f"atom.{opname}")


_ACCUMULATE = {"add": np.add, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
               "or": np.bitwise_or, "xor": np.bitwise_xor}


def atomic_apply(view, index, vals, fn, opname, cmp=None, exact_ufunc=True, checked_ufunc=False):
    """Apply an atomic to ``view[index]`` lane by lane in lane order; return each lane's old value.

    Lanes on distinct addresses go together; lanes on one address go one after another, either
    round by round (the k-th lane of every address at once) or, when few addresses are hot,
    address by address with a ufunc accumulate, whichever takes fewer numpy steps.

    ``checked_ufunc``: the accumulate is the instruction's semantics only while every value it
    meets is a normal number or zero (float32 atomicAdd: the GPU flushes subnormals in global
    memory and gives its own NaN), so each address's run of sums is checked and, if any is not,
    that address goes lane by lane with ``fn``. A sum of 131,072 floats into one variable took
    1.4 s round by round, one numpy step per lane."""
    n = index.size
    old = np.empty(n, view.dtype)
    vals = np.broadcast_to(np.asarray(vals, view.dtype), (n,))
    cmps = None if cmp is None else np.broadcast_to(np.asarray(cmp, view.dtype), (n,))
    order = np.argsort(index, kind="stable")
    sidx = index[order]
    uniq, starts, counts = np.unique(sidx, return_index=True, return_counts=True)
    maxc = int(counts.max()) if n else 0
    # a ufunc accumulate gives the same sequence of results as one lane after another, where the
    # plain numpy operation is the instruction's exact semantics (integers; float32/64 normal values)
    acc = _ACCUMULATE.get(opname) if cmp is None and (exact_ufunc or checked_ufunc) else None
    if acc is not None and view.dtype == np.float64 and np.isnan(vals).any():
        acc = None
    if acc is not None and view.dtype == np.float32:
        tiny = np.finfo(np.float32).tiny
        if not np.all(np.isfinite(vals) & ((np.abs(vals) >= tiny) | (vals == 0))):
            acc = None
    if maxc > 1 and acc is not None and len(uniq) < maxc:
        for u, s, c in zip(uniq, starts, counts):
            lanes = order[s:s + c]
            seq = np.concatenate(([view[u]], vals[lanes])).astype(view.dtype)
            run = acc.accumulate(seq, dtype=view.dtype)
            if checked_ufunc and not _plain_numbers(run):
                for lane in lanes:                  # an overflow, a subnormal sum: as the GPU rounds it
                    old[lane] = view[u]
                    view[u] = fn(view[u:u + 1], vals[lane:lane + 1])[0]
                continue
            old[lanes] = run[:-1]
            view[u] = run[-1]
        return old
    for r in range(maxc):
        live = counts > r
        lanes = order[starts[live] + r]
        at = uniq[live]
        o = view[at]
        old[lanes] = o
        if cmps is not None:     # cas: write only where old == compare
            view[at] = np.where(o == cmps[lanes], vals[lanes], o)
        else:
            view[at] = fn(o, vals[lanes])
    return old


def _plain_numbers(a) -> bool:
    """Are all of ``a`` finite and normal or zero (no subnormal, infinity or NaN)?"""
    return bool(np.all(np.isfinite(a) & ((np.abs(a) >= np.finfo(a.dtype).tiny) | (a == 0))))


@op("atom", "red")
def _atom(inst, d):
    space = _space(inst)
    t = inst.type
    opname = next(m for m in inst.mods if m in ("add", "min", "max", "inc", "dec", "and", "or", "xor",
                                                 "exch", "cas"))
    dt = dtype(t) if t not in ("bf16",) else np.dtype(np.uint16)
    if t in ("b32", "b64") and opname in ("min", "max", "add"):
        dt = np.dtype(np.uint32 if t == "b32" else np.uint64)
    fns = {} if opname == "cas" else {sp: _atomic_fn(opname, dt, t, sp) for sp in ("global", "shared", "local")}
    exact = t in ("u32", "s32", "u64", "s64", "b32", "b64", "f64") and not (opname in ("inc", "dec", "exch"))
    ops = inst.operands
    if any(o[0] == "vec" for o in ops):
        return _vector_atom(inst, d, space, t, dt, opname, fns, exact)
    if inst.opcode == "atom":
        w = writer(ops[0], t, d.func)
        addr_op, rest = ops[1], ops[2:]
    else:
        w = None
        addr_op, rest = ops[0], ops[1:]
    ar = address_reader(addr_op, d.func, d)
    rs = [reader(o, t, d.func, d) for o in rest]
    size = dt.itemsize

    def run(ex):
        sel = ex.idx
        addrs = ar(ex, sel)
        vals = [np.asarray(r(ex, sel)) for r in rs]
        out = np.empty(sel.size, dt)
        for sp, buf, off, pos in resolve(ex, inst, space, addrs, sel, size, inst.opcode):
            view = buf.view(dt)
            index = _index(off, np.dtype(dt))
            part = [v if v.ndim == 0 or isinstance(pos, slice) else v[pos] for v in vals]
            if opname == "cas":
                old = atomic_apply(view, index, part[1], None, "cas", cmp=part[0])
            else:
                old = atomic_apply(view, index, part[0], fns.get(sp, fns["global"]), opname, exact_ufunc=exact,
                                   checked_ufunc=opname == "add" and t == "f32")
            out[pos] = old
        if w is not None:
            w(ex, sel, out)
    return run


def _vector_atom(inst, d, space, t, dt, opname, fns, exact):
    """``atom/red.global.add.v2.f32 {d0, d1}, [a], {b0, b1}`` (sm_90: float2/float4 atomicAdd): one
    atomic per element on consecutive words, as the PTX ISA defines it (each element is atomic on its
    own, not the vector as a whole). The accesses are checked as the vector's whole width once."""
    ops = inst.operands
    dst, addr_op, src = (ops[0], ops[1], ops[2]) if inst.opcode == "atom" else (None, ops[0], ops[1])
    elements = src[1]
    ws = [writer(o, t, d.func) for o in dst[1]] if dst is not None else None
    rs = [reader(o, t, d.func, d) for o in elements]
    ar = address_reader(addr_op, d.func, d)
    size, n = dt.itemsize, len(elements)
    fn = fns.get(space if space in fns else "global")

    def run(ex):
        sel = ex.idx
        addrs = ar(ex, sel)
        vals = [np.asarray(r(ex, sel)) for r in rs]
        out = [np.empty(sel.size, dt) for _ in range(n)]
        for sp, buf, off, pos in resolve(ex, inst, space, addrs, sel, size * n, inst.opcode):
            view = buf.view(dt)
            index = _index(off, np.dtype(dt))
            for k in range(n):
                part = vals[k] if vals[k].ndim == 0 or isinstance(pos, slice) else vals[k][pos]
                out[k][pos] = atomic_apply(view, index + k, part, fns.get(sp, fn), opname, exact_ufunc=exact,
                                           checked_ufunc=opname == "add" and t == "f32")
        if ws is not None:
            for k in range(n):
                ws[k](ex, sel, out[k])
    return run


# ------------------------------------------------------------------ generic-address predicates

@op("isspacep")
def _isspacep(inst, d):
    space = next(m for m in inst.mods if m in ("global", "shared", "local", "const", "param"))
    ra = reader(inst.operands[1], "u64", d.func, d)
    w = writer(inst.operands[0], "pred", d.func)

    def run(ex):
        sel = ex.ridx
        a = np.asarray(ra(ex, sel), np.uint64)
        sh = (a >= np.uint64(SHARED_WINDOW)) & (a < np.uint64(SHARED_WINDOW + WINDOW_SIZE))
        lo = (a >= np.uint64(LOCAL_WINDOW)) & (a < np.uint64(LOCAL_WINDOW + WINDOW_SIZE))
        co = np.zeros(a.shape, bool)
        for start, end in ex.program.const_ranges:      # __constant__ variables
            co |= (a >= np.uint64(start)) & (a < np.uint64(end))
        res = {"shared": sh, "local": lo, "const": co, "param": np.zeros(a.shape, bool)}.get(space)
        w(ex, sel, res if res is not None else ~(sh | lo | co))
    return run


from . import cluster, slack, sm90  # noqa: E402  (distributed shared memory; kernel parameters by address: they wrap decoders above)
