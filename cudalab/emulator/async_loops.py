"""The compiled check and read of a batch's 16-byte cp.async (numba), for asyncops._in_bounds.

A pipeline's tile copy is one cp.async for every lane of the batch: numpy checked its lanes (shared
bounds, alignment, an allocation for each source) and read their bytes in some eighteen passes over
the lanes' addresses, a quarter of a millisecond a copy at a GEMM's 16,000 lanes, and
dmmaTensorCoreGemm issues 16 a k-step (in its 2048 x 2048 x 1024 copy, 4,488 of them: as much CPU as
its mma loop). Here it is one pass. Imported only where numba already is (a tensor-core kernel's
loops) or a batch has issued many copies: a lesson's kernel never loads numba for it."""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

WORDS = 2                   # 8-byte words a copy
AHEAD = 128                 # lanes: how far ahead of the copying lane its source is asked for (4 warps)


@intrinsic
def prefetch(typingctx, address):
    """A hint that the cache line at byte ``address`` (an integer) will be read soon (llvm.prefetch:
    no fault, whatever the address)."""
    def codegen(context, builder, sig, args):
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        fn = builder.module.globals.get("llvm.prefetch.p0i8") or ir.Function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch.p0i8")
        builder.call(fn, [builder.inttoptr(args[0], i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                          ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return types.void(address), codegen


@numba.njit(cache=True, nogil=True)
def check_and_read(dst, src, sel, shared_base, limit, starts, ends, words, base, out_dst, out_words):
    """For lane i (``sel[i]`` of the batch) copying 16 bytes from global address src[i] to shared
    offset dst[i]: out_dst[i] = its byte in the batch's shared buffer (shared_base[sel[i]] + dst[i]),
    out_words[i] = the two words at src[i] (``words``: the arena as uint64, from address ``base``).
    False, with nothing to trust in the outputs, where some lane is misaligned, outside the block's
    ``limit`` bytes of shared memory, or not inside one live allocation (starts/ends, sorted): the
    checked path then words the fault."""
    lo, hi = np.uint64(1), np.uint64(0)         # the allocation the last lane lay in (none yet)
    top = np.uint64(words.size * 8)
    first = np.uint64(words.ctypes.data) - base
    for i in range(sel.size):
        d, s = dst[i], src[i]
        if i & 3 == 0 and i + AHEAD < sel.size:     # (a line of 64 bytes every fourth lane)
            prefetch(first + src[i + AHEAD])
        if d > limit - 16 or (d | s) & np.uint64(15):
            return False
        if not (lo <= s and s + np.uint64(16) <= hi):
            k = np.searchsorted(starts, s, side="right") - 1
            if k < 0 or s + np.uint64(16) > ends[k]:
                return False
            lo, hi = starts[k], ends[k]
        at = s - base
        if at + np.uint64(16) > top:
            return False
        out_dst[i] = np.int64(shared_base[sel[i]]) + np.int64(d)
        w = at >> np.uint64(3)
        out_words[i, 0], out_words[i, 1] = words[w], words[w + np.uint64(1)]
    return True


@numba.njit(cache=True, nogil=True)
def land(shared, dst, data):
    """A wait's landing of one whole cp.async: row i of ``data`` (16 bytes, as two words) to byte dst[i]
    of the batch's shared buffer ``shared`` (as words; the offsets checked and 16-byte aligned at
    issue), in one pass: numpy divided the offsets into a new array, then assigned 16-byte records
    through it."""
    for i in range(dst.size):
        at = dst[i] >> 3
        shared[at], shared[at + 1] = data[i, 0], data[i, 1]


def quick(ex, dst, src, sel):
    """(shared offsets, data as (lanes, 16) bytes) of a 16-byte cp.async whose every lane passes
    check_and_read, else None."""
    from .memory import GLOBAL_BASE
    starts, ends = ex.mem.bounds()
    buf = ex.mem.data
    words = buf[:buf.size - buf.size % 8].view(np.uint64)
    out_dst, out_words = np.empty(sel.size, np.int64), np.empty((sel.size, WORDS), np.uint64)
    if not check_and_read(np.ascontiguousarray(dst, np.uint64), np.ascontiguousarray(src, np.uint64),
                          np.ascontiguousarray(sel, np.int64), ex.shared_base, np.uint64(ex.shared_size), starts,
                          ends, words, np.uint64(GLOBAL_BASE), out_dst, out_words):
        return None
    return out_dst, out_words.view(np.uint8)
