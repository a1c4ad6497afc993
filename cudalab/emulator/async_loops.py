"""The compiled check and read of a batch's 16-byte cp.async (numba), for asyncops._in_bounds.

A pipeline's tile copy is one cp.async for every lane of the batch: numpy checked its lanes (shared
bounds, alignment, an allocation for each source) and read their bytes in some eighteen passes over
the lanes' addresses, a quarter of a millisecond a copy at a GEMM's 16,000 lanes, and
dmmaTensorCoreGemm issues 16 a k-step (in its 2048 x 2048 x 1024 copy, 4,488 of them: as much CPU as
its mma loop). Here it is one pass. Imported only where numba already is (a tensor-core kernel's
loops) or a batch has issued many copies: a lesson's kernel never loads numba for it."""
import numba
import numpy as np

WORDS = 2                   # 8-byte words a copy


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
    for i in range(sel.size):
        d, s = dst[i], src[i]
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
