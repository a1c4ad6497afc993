"""mma's fast path: every warp of a batch multiplied in one compiled loop (numba), where the data
make each sum exact.

mma.py's numpy path spends a dozen whole-batch passes on one warp-level mma (gathers, the exactness
test, the matrix product, the truncation): about 15 us a warp for m16n16k16, which made the
tensor-core GEMM samples take minutes. This loop reads each warp's fragment elements straight from
their bits, proves from exponents and lowest set bits that the tensor core cuts nothing (mma.py's
rule: C and every product on the grid of 2**(top - 25), element by element), sums in float64 (then
exact, in any order) and writes D's bits; f64 (DMMA) is the CPU's own fma chain in k order, which is
the tensor core's wherever every value and D are finite. A warp it cannot prove (a term the alignment
would cut, an infinity or NaN, a float32 sum outside the normal range, an f64 D that overflows) is
answered ``ok = False`` and mma.py's path computes it: the bits are the same either way, the fast path
only says sooner what the general rule says.
"""
from __future__ import annotations

import functools
import time

import numpy as np

from . import pace

INTEGERS = {"s8": True, "u8": False, "s4": True, "u4": False}          # signed?
_KERNELS = {}

# Loading numba and the compiled loops costs a process 0.6 s of CPU with numba's disk cache warm, and
# 4.8 s the first time (numba compiles the loops into it): measured on notebook 16's one-warp wmma
# launch. The numpy path costs about 15 us more a warp-level operation. So a process's first COLD_WARPS
# warp-level operations take the numpy path (0.3 s at most): a lesson's launch of a few warps answers
# at once, and a GEMM of many warps loads the loops once, after a few of its batches.
COLD_WARPS = 20_000
_numpy_warps = 0
_loaded = False


def worth_loading(warps: int) -> bool:
    """Whether the compiled loops should answer ``warps`` more warp-level operations: once they are
    loaded, or once the numpy path would have answered more than COLD_WARPS of them in this process."""
    global _numpy_warps
    if _loaded or _numpy_warps + warps > COLD_WARPS:
        return True
    _numpy_warps += warps
    return False


def kernels(shape, block):
    """The compiled loops for one mMnNkK shape and hardware step (numba is imported, and a loop
    compiled or read from its cache, on first use)."""
    global _loaded
    if (shape, block) not in _KERNELS:
        from . import mma_loops
        _KERNELS[shape, block] = mma_loops.make(*shape, block)
        _loaded = True
    return _KERNELS[shape, block]


def loader():
    """The compiled wmma.load from shared memory."""
    global _loaded
    from . import mma_loops
    _loaded = True
    return functools.partial(_call, mma_loops.load_shared)


def _call(f, *args):
    """Call one of mma_loops' numba functions. numba builds it for these argument types on the first
    such call (or reads its disk cache): about 10 s from a cold cache, more on a busy machine, inside
    whatever launch first needs it. That is not the kernel's time (nor is the one call that builds
    it): no running launch's watchdog counts it."""
    built = len(f.overloads)
    t0 = time.thread_time()
    try:
        return f(*args)
    finally:
        if len(f.overloads) != built:
            pace.not_counted_by_running(time.thread_time() - t0)


# the columns of a program's row (mma_runs.Run builds them, mma_loops runs them): an mma reads its A, B
# and C registers and writes D's (slots into ptrs) and names its A and B fragment ids; a load writes REGS registers from
# the address BASE + OFFSET (BASE_WORD: the base register's bytes, 4 adding in 32 bits) with the
# row stride LD (a register, or LD_IMM), its elements where table TABLE of major/minor says. An mma of an
# accumulator chain (c = mma(a, b, c), mma_runs.chains) keeps its D in the chain's SLOT: CARRY, its C is
# the slot's (the previous mma of the chain wrote it); KEEP, its D is not written to the registers (the
# next mma of the chain reads it from the slot). A load whose registers are an mma's A or B fragment
# (OPERAND 0 or 1) decodes them as fragment id FRAGMENT (-1: none); QUIET, its registers are not written
# (nothing outside the program reads them); ROUND (a LANE row's KIND + 1, 0: none), the fragment's words are
# rounded so before they are decoded (mma_runs._rounded_at_load: tf32's __float_to_tf32 folded into the load)
MMA, LOAD, LANE = 1, 0, 2
FA, FB, A, B, C, D = 1, 2, 3, 11, 19, 27
NREGS, REGS, BASE, BASE_WORD, OFFSET, LD, LD_IMM = 1, 3, 11, 12, 13, 14, 15
TABLE, DISTINCT, ESIZE, ELEMENT_BITS, WORD = 16, 17, 18, 19, 20
FRAGMENT, OPERAND, QUIET, ROUND = 21, 22, 23, 24
SLOT, CARRY, KEEP = 35, 36, 37
COLUMNS = 38
# a LANE row (mma_runs.lane_op: a 32-bit mov, or a cvt to tf32, between a GEMM's loads and its mmas, as
# tf32TensorCoreGemm's __float_to_tf32 puts there) writes register DST from register SRC, lane by lane, as
# its KIND says; one whose rounding a load did (ROUND) names that fragment (LFRAGMENT, -1: none, and LOPERAND)
# and is skipped where the warp has it decoded (its register is then read by nothing)
KIND, DST, SRC, LFRAGMENT, LOPERAND = 1, 3, 4, 5, 6
MOVE, TF32_RNA, TF32_RN, TF32_RZ = 0, 1, 2, 3

_FORMS = {}
_NO_TABLE = np.zeros((1, 32, 1), np.uint64)        # a program without loads


def plan(places, elements, dplaces, shape, atype, btype, ctype, dtype, sat, block):
    """The Form of an mma for the types the fast path takes, else None; one object per distinct
    form, so that mma_runs can tell a program's mmas are alike. ``places``: for "a", "b" and "c", each
    matrix element's place among a warp's fragment elements (mma.matrix_places); ``elements``: their
    fragments' elements a lane; ``dplaces``: the matrix element (row * n + col) of each of D's places
    (one element a register)."""
    if ctype != dtype or (atype, btype, ctype) not in _TAKEN:
        return None
    key = (shape, atype, btype, ctype, sat, block, tuple(elements[u] for u in "abc"),
           *(np.asarray(places[u]).tobytes() for u in "abc"), np.asarray(dplaces).tobytes())
    if key not in _FORMS:
        _FORMS[key] = Form(places, elements, dplaces, shape, atype, btype, ctype, sat, block)
    return _FORMS[key]


class Form:
    """One mma form (shape, types, fragment layouts) as the compiled loops take it. Called as
    ``form(warps, a, b, c)`` (the registers of A, B and C, each a tuple of arrays over the batch's
    lanes) it runs one instruction: (D's registers (set at those warps' lanes), ok per warp)."""

    def __init__(self, places, elements, dplaces, shape, atype, btype, ctype, sat, block):
        from .mma import BITS
        m, n, k = shape
        self.shape, self.block = shape, block or k
        bits = {"a": BITS[atype], "b": BITS[btype], "c": BITS[ctype]}
        target = {u: _targets(places[u], elements[u]) for u in "abc"}
        # sm_70's f16 fragments repeat their elements in the later registers: those are not read
        self.counts = np.array([1 + int(np.flatnonzero((target[u] >= 0).any(axis=0)).max()) // max(1, 32 // bits[u])
                                for u in "abc"], np.int64)
        self.dsrc = np.ascontiguousarray(dplaces, np.int64)
        self.registers = self.dsrc.size // 32
        self.word = np.uint64 if bits["c"] == 64 else np.uint32
        self.kind = _TAKEN[(atype, btype, ctype)]
        self.targets = (target["a"], target["b"], target["c"])
        self.types, self.bits, self.sat = (atype, btype), bits, sat

    @functools.cached_property
    def extra(self):
        """The kind's own arguments (the input tables imported with the loops, on first use)."""
        atype, btype = self.types
        if self.kind == "floats":
            return (self.bits["a"], np.uint64(13 if atype == "tf32" else 0), *input_table(atype))
        if self.kind == "integers":
            return (self.bits["a"], INTEGERS[atype], self.bits["b"], INTEGERS[btype], self.sat)
        return ()

    def run(self, warps, pos, ptrs, ops, major=_NO_TABLE, minor=_NO_TABLE, shared=0, block_base=None, limit=0,
            fragments=None, straight=None):
        """The compiled loop over a program (mma_loops.make): every warp from its row ``pos``, which
        it updates. ``straight`` (mma_straight.Straight, a doubles program's own code) runs first: the
        warps it leaves at row 0 take the loop."""
        if straight is not None and (pos == straight.start).any():
            straight(warps, pos, ptrs, shared, block_base, limit)
            at = np.flatnonzero(pos < len(ops))
            if at.size < warps.size:
                sub = pos[at]
                if at.size:
                    self.run(np.ascontiguousarray(warps[at]), sub, ptrs, ops, major, minor, shared, block_base, limit,
                             fragments)
                pos[at] = sub
                return
        _call(kernels(self.shape, self.block)[self.kind], warps, pos, ptrs, ops, major, minor, shared,
              _NO_BASE if block_base is None else read_only(block_base), limit, *self.targets, self.dsrc, self.counts,
              np.ones(3, np.int64) if fragments is None else fragments, *self.extra)

    def __call__(self, warps, a, b, c):
        lanes = a[0].size
        d = tuple(np.empty(lanes, self.word) for _ in range(self.registers))
        regs = (*a[:self.counts[0]], *b[:self.counts[1]], *c[:self.counts[2]], *d)
        ptrs = np.array([x.ctypes.data for x in regs], np.int64)
        op = np.zeros((1, COLUMNS), np.int64)
        op[0, 0] = MMA
        slot = 0
        for col, count in ((A, self.counts[0]), (B, self.counts[1]), (C, self.counts[2]), (D, self.registers)):
            op[0, col:col + count] = np.arange(slot, slot + count)
            slot += count
        pos = np.zeros(warps.size, np.int64)
        self.run(np.ascontiguousarray(warps, np.int64), pos, ptrs, op)
        return d, pos == 1


def read_only(a):
    """``a``, or a read-only view of it: numba compiles a loop once for each signature it is called with,
    and an array's signature says whether it may be written. The batch's block bases are read-only (engine's
    shared geometry), so every call passes them so: an mma alone once passed a writable stand-in and
    made numba build the whole loop a second time (about 25 s of CPU on the first one-thread run of a
    2048^3 bf16 GEMM: 29.7 s against 5.1 s, the same run again 5.0 s)."""
    if a.flags.writeable:
        a = a.view()
        a.flags.writeable = False
    return a


_NO_BASE = read_only(np.zeros(1, np.uint64))        # an mma alone: no loads


def _targets(places, elements):
    """For each fragment element (lane, element), the matrix element it holds, -1 where it repeats
    one held at an earlier place (``places``: each matrix element's first place, mma.matrix_places)."""
    places = np.asarray(places, np.int64)
    target = np.full(32 * elements, -1, np.int64)
    target[places[places >= 0]] = np.flatnonzero(places >= 0)
    return target.reshape(32, elements)


def input_table(typ):
    """(value, exponent, lowest set bit) of every bit pattern of an f16/bf16/tf32 element (tf32: its
    top 19 bits), as mma._f32_fields gives them (a zero's far out of the way); an infinity's or a
    NaN's exponent is mma_loops.NOT_FINITE."""
    if typ not in _TABLES:
        from . import mma, mma_loops
        raw = np.arange(1 << (19 if typ == "tf32" else 16), dtype=np.uint64) << np.uint64(13 if typ == "tf32" else 0)
        with np.errstate(invalid="ignore"):
            v = mma.values(raw, typ)
            e, low, _ = mma._f32_fields(v, mma.EMIN[typ])
        _TABLES[typ] = (v, np.where(np.isfinite(v), e, mma_loops.NOT_FINITE).astype(np.int64), low.astype(np.int64))
    return _TABLES[typ]


_TABLES = {}
_TAKEN = {**{(x, y, "f32"): "floats" for x in ("f16", "bf16", "tf32") for y in ("f16", "bf16", "tf32") if x == y},
          ("f64", "f64", "f64"): "doubles",
          **{(x, y, "s32"): "integers" for x in ("s8", "u8", "s4", "u4") for y in ("s8", "u8", "s4", "u4")
             if x[1:] == y[1:]}}
