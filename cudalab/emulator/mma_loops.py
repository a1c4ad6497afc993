"""The compiled loops of mma_native (numba): imported when a tensor-core instruction first runs, so
that the emulator starts without numba."""
import math

import numba
import numpy as np

FAR = 1 << 20            # a zero's exponent lies this far below, its lowest set bit this far above, any other's
NOT_FINITE = 1 << 10     # an infinity's or NaN's exponent in mma_native.input_table
_OFFSET = 1100
_POW2 = np.ldexp(1.0, np.arange(-_OFFSET, 1000))              # 2**s for the significands' scales (f64: -1074 to 971)
_DEBRUIJN = np.uint64(0x022FDD63CC95386D)                   # de Bruijn sequence for a 64-bit count of trailing zeros
_CTZ = np.zeros(64, np.int64)
_CTZ[((np.uint64(1) << np.arange(64, dtype=np.uint64)) * _DEBRUIJN) >> np.uint64(58)] = np.arange(64)


@numba.njit(inline="always", cache=True)
def ctz(m):
    """The number of trailing zero bits of a nonzero uint64."""
    return _CTZ[((m & (~m + np.uint64(1))) * _DEBRUIJN) >> np.uint64(58)]


@numba.njit(inline="always", cache=True)
def decode(u, ebits, mbits):
    """An element's bits -> (value, exponent (at least the smallest normal's), lowest set bit,
    finite). A zero's exponent is -FAR and its lowest bit FAR: it bounds nothing."""
    emask = (np.uint64(1) << np.uint64(ebits)) - np.uint64(1)
    bias = (1 << (ebits - 1)) - 1
    e = (u >> np.uint64(mbits)) & emask
    sig = u & ((np.uint64(1) << np.uint64(mbits)) - np.uint64(1))
    if e == emask:
        return 0.0, 0, 0, False
    if e == 0 and sig == 0:
        return 0.0, -FAR, FAR, True
    if e > 0:
        sig |= np.uint64(1) << np.uint64(mbits)
    exponent = max(np.int64(e), 1) - bias
    scale = exponent - mbits
    v = np.float64(sig) * _POW2[scale + _OFFSET]
    if (u >> np.uint64(mbits + ebits)) & np.uint64(1):
        v = -v
    return v, exponent, scale + ctz(sig), True


@numba.njit(cache=True, nogil=True)
def load_shared(base, ld, block_base, major, minor, limit, size, shared, out):
    """wmma.load of every lane from shared memory: lane l's element e lies at byte base[l] +
    (major * ld[l] + minor) * size (the tables by l % 32) of its block's row of ``shared`` (viewed
    as the element type), which starts at byte block_base[l]. False, with nothing read, where
    some element is out of bounds or misaligned: mma.py's path then reports it. All uint64."""
    for l in range(base.size):
        for e in range(out.shape[1]):
            addr = base[l] + (major[l % 32, e] * ld[l] + minor[l % 32, e]) * size
            if addr > limit - size or addr % size:
                return False
    for l in range(base.size):
        for e in range(out.shape[1]):
            addr = base[l] + (major[l % 32, e] * ld[l] + minor[l % 32, e]) * size
            out[l, e] = shared[(block_base[l] + addr) // size]
    return True


def make(m, n, k, block):
    """floats, doubles and integers for one mMnNkK shape and hardware step of k: the sizes are
    constants of the code (closure variables), so LLVM unrolls and vectorizes the loops over them."""
    jit = numba.njit(cache=True, nogil=True)
    # the sums are exact wherever they are used, so their order is free: reassociation lets LLVM vectorize
    exact_sums = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})

    @exact_sums
    def floats(a, b, c, asrc, bsrc, csrc, dsrc, shift, values, exponents, lowest, out, ok):
        """D = A B + C for f16/bf16/tf32 inputs and float32 C and D: a, b, c (warps, places) element
        bits (c: float32's), *src the place of each matrix element (row-major; -1: no lane holds it, a
        zero), dsrc the matrix element of each of D's places; values/exponents/lowest the input type's
        tables (mma_native.input_table) by its bits shifted right by ``shift``. out gets D's float32
        bits and ok whether the warp's were proven exact. The proof takes the largest exponent and the
        lowest set bit over the whole warp's A, B and C (per hardware step of k): bounds of every
        element's."""
        steps = (k + block - 1) // block
        av = np.empty((m, k))
        bt = np.empty((n, k))
        ta = np.empty(steps, np.int64)
        tla = np.empty(steps, np.int64)
        tb = np.empty(steps, np.int64)
        tlb = np.empty(steps, np.int64)
        s = np.empty(m * n)
        d = np.empty(m * n, np.float32)
        du = d.view(np.uint32)
        cf = c.view(np.float32)
        zero = a.dtype.type(0)
        for w in range(a.shape[0]):
            for q in range(steps):
                e, low = -FAR, FAR
                for i in range(m):
                    for kk in range(q * block, min(k, q * block + block)):
                        p = asrc[i * k + kk]
                        u = a[w, p] >> shift if p >= 0 else zero
                        av[i, kk] = values[u]
                        e = max(e, exponents[u])
                        low = min(low, lowest[u])
                ta[q], tla[q] = e, low
                e, low = -FAR, FAR
                for kk in range(q * block, min(k, q * block + block)):
                    for j in range(n):
                        p = bsrc[kk * n + j]
                        u = b[w, p] >> shift if p >= 0 else zero
                        bt[j, kk] = values[u]
                        e = max(e, exponents[u])
                        low = min(low, lowest[u])
                tb[q], tlb[q] = e, low
            good = True
            for i in range(m * n):
                p = csrc[i]
                s[i] = cf[w, p] if p >= 0 else 0.0
            for q in range(steps):
                # C's exponent counts as at least 2**-126, a zero C's as 2**-133 (mma.EMIN_C, ZERO_C)
                biggest, finite = 0.0, True
                for i in range(m * n):
                    biggest = max(biggest, abs(s[i]))
                    finite &= s[i] - s[i] == 0.0
                ec = max(math.frexp(biggest)[1] - 1, -126) if biggest > 0.0 else -133
                top = max(ec, ta[q] + tb[q])
                good &= finite and ta[q] < NOT_FINITE and tb[q] < NOT_FINITE and tla[q] + tlb[q] >= top - 25
                if not good:
                    break
                grid = 2.0 ** (25 - top)            # C on the grid too: each C times it a whole number
                for i in range(m * n):
                    x = s[i] * grid
                    good &= x == math.floor(x)
                if not good:
                    break
                for i in range(m):                  # every term on one grid, fewer than 2**32 of its steps:
                    for j in range(n):              # exact in float64, in any order
                        acc = 0.0
                        for kk in range(q * block, min(k, q * block + block)):
                            acc += av[i, kk] * bt[j, kk]
                        s[i * n + j] += acc
                for i in range(m * n):              # cut toward zero to float32; an exact zero is +0
                    v = s[i]
                    size = abs(v)
                    good &= (size >= 2.0 ** -126 or v == 0.0) and size < 2.0 ** 128
                    d[i] = np.float32(v) if v != 0.0 else np.float32(0.0)
                    if abs(np.float64(d[i])) > size:
                        du[i] -= np.uint32(1)
                    s[i] = d[i]                     # the next hardware step adds to this float32
            ok[w] = good
            if good:
                for p in range(dsrc.size):
                    out[w, p] = du[dsrc[p]]

    @jit
    def doubles(a, b, c, asrc, bsrc, csrc, dsrc, out, ok):
        """DMMA where every partial sum of the fma chain is exact in float64 (all terms on one grid,
        the sum of their magnitudes below 2**53 of its steps): then it is C + A B in any order.
        Arguments as floats', the bits float64's."""
        av = np.empty(m * k)
        la = np.empty(m * k, np.int64)
        bv = np.empty(k * n)
        lb = np.empty(k * n, np.int64)
        for w in range(a.shape[0]):
            good = True
            for i in range(m * k):
                p = asrc[i]
                av[i], _, la[i], fin = decode(a[w, p] if p >= 0 else np.uint64(0), 11, 52)
                good &= fin
            for i in range(k * n):
                p = bsrc[i]
                bv[i], _, lb[i], fin = decode(b[w, p] if p >= 0 else np.uint64(0), 11, 52)
                good &= fin
            for p in range(dsrc.size):
                if not good:
                    break
                i, j = dsrc[p] // n, dsrc[p] % n
                q = csrc[dsrc[p]]
                cvalue, _, low, fin = decode(c[w, q] if q >= 0 else np.uint64(0), 11, 52)
                total, bound = cvalue, abs(cvalue)
                for kk in range(k):
                    total += av[i * k + kk] * bv[kk * n + j]
                    bound += abs(av[i * k + kk] * bv[kk * n + j])
                    low = min(low, la[i * k + kk] + lb[kk * n + j])
                if not fin or bound == 0.0 or bound > 1e300 or math.frexp(bound)[1] + 1 - low > 53:
                    good = False
                out[w, p] = total
            ok[w] = good

    @jit
    def integers(a, b, c, asrc, bsrc, csrc, dsrc, abits, asigned, bbits, bsigned, sat, out):
        """Integer mma: exact, wrapping to 32 bits or clamped (.satfinite); always proven."""
        av = np.empty(m * k, np.int64)
        bv = np.empty(k * n, np.int64)
        s = np.empty(m * n, np.int64)
        for w in range(a.shape[0]):
            for i in range(m * k):
                p = asrc[i]
                x = np.int64(a[w, p]) if p >= 0 else 0
                av[i] = x - (1 << abits) if asigned and x >= 1 << (abits - 1) else x
            for i in range(k * n):
                p = bsrc[i]
                x = np.int64(b[w, p]) if p >= 0 else 0
                bv[i] = x - (1 << bbits) if bsigned and x >= 1 << (bbits - 1) else x
            for i in range(m * n):
                p = csrc[i]
                s[i] = np.int64(c[w, p]) if p >= 0 else 0
            for i in range(m):
                for kk in range(k):
                    x = av[i * k + kk]
                    for j in range(n):
                        s[i * n + j] += x * bv[kk * n + j]
            for p in range(dsrc.size):
                v = s[dsrc[p]]
                out[w, p] = min(max(v, -2 ** 31), 2 ** 31 - 1) if sat else v     # stored: the low 32 bits

    return {"floats": floats, "doubles": doubles, "integers": integers}
