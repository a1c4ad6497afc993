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
        return -0.0 if u >> np.uint64(mbits + ebits) else 0.0, -FAR, FAR, True
    if e > 0:
        sig |= np.uint64(1) << np.uint64(mbits)
    exponent = max(np.int64(e), 1) - bias
    scale = exponent - mbits
    v = np.float64(sig) * _POW2[scale + _OFFSET]
    if (u >> np.uint64(mbits + ebits)) & np.uint64(1):
        v = -v
    return v, exponent, scale + ctz(sig), True


@numba.njit(inline="always", cache=True)
def unpack(regs, target, bits, w, raw):
    """Warp w's fragment elements into raw[matrix element] (their bits): element e of lane l, the
    (e % per)-th of register e // per (per = 32 // bits elements a register), goes to raw[target[l,
    e]] (-1: a repeated element, read from its first place). ``regs``: the fragment's registers, a
    tuple of arrays over the batch (the leading ones: those holding no first place may be left out)."""
    per = max(1, 32 // bits)
    mask = ~np.uint64(0) if bits == 64 else (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    for j in range(len(regs)):
        reg = regs[j]
        for l in range(32):
            word = np.uint64(reg[w * 32 + l])
            for sub in range(per):
                t = target[l, j * per + sub]
                if t >= 0:
                    raw[t] = (word >> np.uint64(sub * bits)) & mask


@numba.njit(inline="always", cache=True)
def gather_inputs(regs, target, w, bits, shift, values, exponents, lowest, k, block, vals, vals32, top, low):
    """Warp w's A or B fragment (f16/bf16/tf32 elements) into vals and vals32 (flat float64 and
    float32 copies of a matrix of rows of k: A, or B transposed, so that both are read along k), with
    the largest exponent and the lowest set bit of each hardware step of ``block`` k's in top and
    low. Fragment element (lane l, element e) goes to vals[target[l, e]] (-1: a repeated element);
    values/exponents/lowest: mma_native.input_table's, by the element's bits shifted right by
    ``shift``. One loop for A and B, which differ only in their targets."""
    per = max(1, 32 // bits)
    mask = (np.uint64(1) << np.uint64(bits)) - np.uint64(1)
    for j in range(len(regs)):
        reg = regs[j]
        for l in range(32):
            word = np.uint64(reg[w * 32 + l])
            for sub in range(per):
                t = target[l, j * per + sub]
                if t >= 0:
                    u = ((word >> np.uint64(sub * bits)) & mask) >> shift
                    q = (t % k) // block
                    vals[t] = values[u]
                    vals32[t] = values[u]
                    top[q], low[q] = max(top[q], exponents[u]), min(low[q], lowest[u])


@numba.njit(inline="always", cache=True)
def product32(av, bv, out, m, n, k):
    """out (m x n) = A B for A (m x k) and B (k x n), flat float32 arrays of integers whose every
    partial sum float32 holds exactly; m, n, k the caller's constants. Each row of D is summed eight
    columns at a time in eight scalars, which LLVM packs into one vector register (a loop adding into
    out as it goes is not vectorized: out might alias the inputs; on this AVX-without-AVX2 CPU int64
    products are not vectorized either: 2.3 us for 16x16x16 against about 0.8). Inlined, not a
    closure of make(): numba's cache cannot key a loop that calls another closure (it compiled
    again in every process)."""
    for i in range(m):
        for j in range(0, n, 8):
            t0 = t1 = t2 = t3 = t4 = t5 = t6 = t7 = np.float32(0.0)
            for kk in range(k):
                x, r = av[i * k + kk], kk * n + j
                t0 += x * bv[r]
                t1 += x * bv[r + 1]
                t2 += x * bv[r + 2]
                t3 += x * bv[r + 3]
                t4 += x * bv[r + 4]
                t5 += x * bv[r + 5]
                t6 += x * bv[r + 6]
                t7 += x * bv[r + 7]
            o = i * n + j
            out[o], out[o + 1], out[o + 2], out[o + 3] = t0, t1, t2, t3
            out[o + 4], out[o + 5], out[o + 6], out[o + 7] = t4, t5, t6, t7


@numba.njit(cache=True, nogil=True)
def load_shared(lanes, base, ld, block_base, major, minor, limit, shift, shared, bits, regs):
    """wmma.load of the given lanes from shared memory into registers ``regs`` (arrays over the
    batch; each holds 32 / bits elements, element e of a lane the (e % len(major[0]))-th it reads:
    sm_70's repeated halves). Lane lanes[i]'s element e lies at byte base[i] + (major * ld[i] + minor)
    << shift (the tables by lane % 32) of its block's row of ``shared`` (viewed as the element type,
    of 1 << shift bytes), which starts at byte block_base[lane]. False where some element is out of
    bounds or misaligned (registers half written): mma.py's path then reports it. Addresses uint64."""
    distinct = major.shape[1]
    per = max(1, 32 // bits)
    size = np.uint64(1) << shift
    for i in range(lanes.size):
        lane = lanes[i]
        for j in range(len(regs)):
            word = np.uint64(0)
            for sub in range(per):
                e = (j * per + sub) % distinct
                addr = base[i] + ((major[lane & 31, e] * ld[i] + minor[lane & 31, e]) << shift)
                if addr > limit - size or addr & (size - np.uint64(1)):
                    return False
                word |= np.uint64(shared[(block_base[lane] + addr) >> shift]) << np.uint64(sub * bits)
            regs[j][lane] = word
    return True


def make(m, n, k, block):
    """floats, doubles and integers for one mMnNkK shape and hardware step of k: the sizes are
    constants of the code (closure variables), so LLVM unrolls and vectorizes the loops over them.
    Their arguments: the warps to multiply, a, b, c the fragments' registers (tuples of arrays over
    the batch), *target where
    each fragment element goes (unpack), *bits the elements' widths; d_regs (fresh arrays) get D, whose
    register r of lane l holds matrix element dsrc[l * len(d_regs) + r]; ok whether each warp's
    sums were proven exact (where not, d_regs are left for mma.py's path to fill)."""
    jit = numba.njit(cache=True, nogil=True)
    # the sums are exact wherever they are used, so their order is free: reassociation lets LLVM vectorize
    exact_sums = numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
    steps = (k + block - 1) // block
    assert n % 8 == 0 and k <= 256, "product32 takes D's columns 8 at a time and sums exactly in float32"

    @exact_sums
    def floats(warps, a, b, c, atarget, btarget, ctarget, dsrc, bits, shift, values, exponents, lowest, d_regs, ok):
        """D = A B + C for f16/bf16/tf32 inputs and float32 C and D (c's registers viewed as float32);
        values/exponents/lowest the input type's tables (mma_native.input_table) by an element's bits
        shifted right by ``shift``; btarget places B's elements transposed (mma_native.plan). The proof
        takes the largest exponent and the lowest set bit over the whole warp's A, B and C (per hardware
        step of k): bounds of every element's."""
        av = np.zeros((m, k))
        bt = np.zeros((n, k))
        av32 = np.zeros((m, k), np.float32)
        bt32 = np.zeros((n, k), np.float32)
        avf, btf, av32f, bt32f = av.reshape(m * k), bt.reshape(n * k), av32.reshape(m * k), bt32.reshape(n * k)
        ta = np.empty(steps, np.int64)
        tla = np.empty(steps, np.int64)
        tb = np.empty(steps, np.int64)
        tlb = np.empty(steps, np.int64)
        s = np.zeros(m * n)
        d = np.empty(m * n, np.float32)
        du = d.view(np.uint32)
        for wi in range(warps.size):
            w = warps[wi]
            # A and B: each element's value, and per hardware step the largest exponent and lowest set
            # bit (a zero's lie far out: input_table); a matrix element no lane holds stays 0
            ta[:], tla[:], tb[:], tlb[:] = -FAR, FAR, -FAR, FAR
            gather_inputs(a, atarget, w, bits, shift, values, exponents, lowest, k, block, avf, av32f, ta, tla)
            gather_inputs(b, btarget, w, bits, shift, values, exponents, lowest, k, block, btf, bt32f, tb, tlb)
            for r in range(len(c)):
                reg = c[r]
                for l in range(32):
                    t = ctarget[l, r]
                    if t >= 0:
                        s[t] = reg[w * 32 + l]
            good = True
            for q in range(steps):
                k0, k1 = q * block, min(k, q * block + block)
                # C's exponent counts as at least 2**-126, a zero C's as 2**-133 (mma.EMIN_C, ZERO_C)
                biggest, finite = 0.0, True
                for i in range(m * n):
                    biggest = max(biggest, abs(s[i]))
                    finite &= s[i] - s[i] == 0.0
                ec = max(math.frexp(biggest)[1] - 1, -126) if biggest > 0.0 else -133
                top = max(ec, ta[q] + tb[q])
                good &= finite and ta[q] < NOT_FINITE and tb[q] < NOT_FINITE
                if not good:
                    break
                grid = 2.0 ** (25 - top)            # C on the grid too: each C times it a whole number
                whole = tla[q] + tlb[q] >= top - 25
                for i in range(m * n):
                    x = s[i] * grid
                    whole &= x == math.floor(x)
                if not whole:
                    # the tensor core aligns each element of D on its own top: one C much bigger than
                    # another (2.18 and 35.1 in cudaTensorCoreGemm's first step) fails the warp's bound
                    # but not its own, with the products' bound kept for every element
                    for i in range(m * n):
                        e = max(math.frexp(s[i])[1] - 1, -126) if s[i] != 0.0 else -133
                        own = max(e, ta[q] + tb[q])
                        x = s[i] * 2.0 ** (25 - own)
                        good &= tla[q] + tlb[q] >= own - 25 and x == math.floor(x)
                if not good:
                    break
                # where every term is on the grid of its lowest set bit and the sum of their sizes stays
                # below 2**24 of its steps (the samples' small integers), every partial sum is a float32
                # (a normal one): float32 sums them exactly, twice as many at a time, and D is that sum
                narrow = tla[q] + tlb[q]
                small = narrow >= -126 and narrow + 24 <= 127 and \
                    biggest + (k1 - k0) * 2.0 ** (ta[q] + tb[q] + 2) < 2.0 ** (narrow + 24)
                if small:
                    grid = 2.0 ** -narrow
                    for i in range(m * n):
                        x = s[i] * grid
                        small &= x == math.floor(x)
                if small:
                    for i in range(m):
                        for j in range(n):
                            acc = np.float32(0.0)
                            for kk in range(k0, k1):
                                acc += av32[i, kk] * bt32[j, kk]
                            v = np.float32(s[i * n + j]) + acc
                            d[i * n + j] = v if v != 0.0 else np.float32(0.0)
                    for i in range(m * n):
                        s[i] = d[i]
                    continue
                for i in range(m):                  # every term on one grid, fewer than 2**32 of its steps:
                    for j in range(n):              # exact in float64, in any order
                        acc = 0.0
                        for kk in range(k0, k1):
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
            ok[wi] = good
            if good:
                for r in range(len(d_regs)):
                    reg = d_regs[r]
                    for l in range(32):
                        reg[w * 32 + l] = du[dsrc[l * len(d_regs) + r]]

    @jit
    def doubles(warps, a, b, c, atarget, btarget, ctarget, dsrc, d_regs, ok):
        """DMMA where every partial sum of the fma chain is exact in float64 (all terms on one grid,
        the sum of their magnitudes below 2**53 of its steps): then it is C + A B, summed here in the
        chain's k order (so zeros keep the chain's signs). d_regs viewed as float64."""
        raw_a = np.zeros(m * k, np.uint64)
        raw_b = np.zeros(k * n, np.uint64)
        raw_c = np.zeros(m * n, np.uint64)
        av = np.empty(m * k)
        la = np.empty(m * k, np.int64)
        bv = np.empty(k * n)
        lb = np.empty(k * n, np.int64)
        for wi in range(warps.size):
            w = warps[wi]
            unpack(a, atarget, 64, w, raw_a)
            unpack(b, btarget, 64, w, raw_b)
            unpack(c, ctarget, 64, w, raw_c)
            good = True
            for i in range(m * k):
                av[i], _, la[i], fin = decode(raw_a[i], 11, 52)
                good &= fin
            for i in range(k * n):
                bv[i], _, lb[i], fin = decode(raw_b[i], 11, 52)
                good &= fin
            for r in range(len(d_regs)):
                reg = d_regs[r]
                for l in range(32):
                    x = dsrc[l * len(d_regs) + r]
                    i, j = x // n, x % n
                    total, _, low, fin = decode(raw_c[x], 11, 52)
                    bound = abs(total)
                    for kk in range(k):
                        total += av[i * k + kk] * bv[kk * n + j]
                        bound += abs(av[i * k + kk] * bv[kk * n + j])
                        low = min(low, la[i * k + kk] + lb[kk * n + j])
                    good &= fin and bound < 1e300 and (bound == 0.0 or math.frexp(bound)[1] + 1 - low <= 53)
                    reg[w * 32 + l] = total
            ok[wi] = good

    @jit
    def integers(warps, a, b, c, atarget, btarget, ctarget, dsrc, abits, asigned, bbits, bsigned, sat, d_regs):
        """Integer mma: exact, wrapping to 32 bits or clamped (.satfinite); always proven. A B is summed
        in float32 (product32): at most k * 255 * 255 < 2**24 (k <= 256), every partial sum exact."""
        raw_a = np.zeros(m * k, np.uint64)
        raw_b = np.zeros(k * n, np.uint64)
        raw_c = np.zeros(m * n, np.uint64)
        av = np.empty(m * k, np.float32)
        bv = np.empty(k * n, np.float32)
        ab = np.empty(m * n, np.float32)
        s = np.empty(m * n, np.int64)
        for wi in range(warps.size):
            w = warps[wi]
            unpack(a, atarget, abits, w, raw_a)
            unpack(b, btarget, bbits, w, raw_b)
            unpack(c, ctarget, 32, w, raw_c)
            for i in range(m * k):
                x = np.int64(raw_a[i])
                av[i] = x - (1 << abits) if asigned and x >= 1 << (abits - 1) else x
            for i in range(k * n):
                x = np.int64(raw_b[i])
                bv[i] = x - (1 << bbits) if bsigned and x >= 1 << (bbits - 1) else x
            product32(av, bv, ab, m, n, k)
            for i in range(m * n):
                x = np.int64(raw_c[i])
                s[i] = (x - (1 << 32) if x >= 1 << 31 else x) + np.int64(ab[i])
            for r in range(len(d_regs)):
                reg = d_regs[r]
                for l in range(32):
                    v = s[dsrc[l * len(d_regs) + r]]
                    reg[w * 32 + l] = (min(max(v, -2 ** 31), 2 ** 31 - 1) if sat else v) & 0xFFFFFFFF

    return {"floats": floats, "doubles": doubles, "integers": integers}
