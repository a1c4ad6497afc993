"""mufu.py's quick paths as one compiled pass over a batch (numba): imported once a process has run millions
of lanes of ex2, rcp, rsqrt, lg2, sin or cos.approx (mufu._loops), so that the emulator starts without numba.

Each loop computes, lane by lane, exactly the integer and float steps of its numpy twin in mufu.py
(ex2_ftz, rcp_ftz, rsqrt_ftz, lg2_ftz, _quick_turns and _quick_sine), writes the result's bits to ``out``
and marks in ``special`` the lanes the quick path does not take (zeros, subnormals, infinities, NaN,
answers out of range), which mufu then gives to the whole rule; it returns how many there are. numpy's
version made 15 to 25 passes over the batch for one table read (cuda-samples' BlackScholesGPU: 2.6 to
3.0 ms a 2^17-lane batch of ex2 where the read alone takes 0.3 to 0.7); here one loop works out the
indices and another reads the table, whose iterations are independent, so the processor overlaps their
cache misses as numpy's gather does.
"""
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

F = 0x7FFFFF                 # a float32's fraction bits


@intrinsic
def _bits(typingctx, value):
    """A float32's bits as a uint32."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))
    return types.uint32(types.float32), codegen


@intrinsic
def _float(typingctx, value):
    """A uint32's bits as a float32."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.FloatType())
    return types.float32(types.uint32), codegen


@numba.njit(cache=True, nogil=True)
def _gather(table, index, add, out):
    """out = table[index] + add (modulo 2^32), alone in its loop: a loop that also worked out the index held
    a few lanes' loads in flight where this one holds dozens (ex2's 2^17 lanes: 0.9 to 2.0 ms, against
    0.35 here and 0.07 for the index pass)."""
    for i in range(index.shape[0]):
        out[i] = np.uint32((np.int64(table[index[i]]) + add[i]) & 0xFFFFFFFF)


@numba.njit(cache=True, nogil=True)
def ex2_ftz(bits, table, out, special):
    """mufu.ex2_ftz's quick path: |a| < 128, normal, a normal result."""
    count = 0
    index, add = np.empty(bits.shape[0], np.uint64), np.empty(bits.shape[0], np.int64)
    for i in range(bits.shape[0]):
        b = np.int64(bits[i])
        e = (b >> 23) & 255
        negative = b >= 0x80000000
        shift = min(max(134 - e, 0), 63)                        # e >= 134 is special; numpy's uint32
        q = ((((b & F) | (1 << 23)) << 7) >> shift) & -np.int64(shift < 32)     # shift by 32 or more gives 0
        n, j = q >> 23, q & F                                   # the truncated 7.23 magnitude
        odd = (e == 0) | (e >= 134) | (negative & ((j == 0) | (n >= 126)))
        index[i] = np.uint64(j ^ (F & -np.int64(negative)))     # F - j where negative
        add[i] = -((n + 2) << 23) if negative else (n - 1) << 23    # times 2^(-n-2) or 2^(n-1)
        special[i] = odd
        count += odd
    _gather(table, index, add, out)
    return count


@numba.njit(cache=True, nogil=True)
def rcp_ftz(bits, table, out, special):
    """mufu.rcp_ftz's quick path: exponents 1 to 250 (the sign's bit added, as the sum is below 2^31)."""
    count = 0
    index, add = np.empty(bits.shape[0], np.uint64), np.empty(bits.shape[0], np.int64)
    for i in range(bits.shape[0]):
        b = np.int64(bits[i])
        e = (b >> 23) & 255
        odd = (e == 0) | (e >= 252)
        index[i] = np.uint64(b & F)
        add[i] = (127 << 23) - (e << 23) + (b & 0x80000000)
        special[i] = odd
        count += odd
    _gather(table, index, add, out)
    return count


@numba.njit(cache=True, nogil=True)
def rsqrt_ftz(bits, table, out, special):
    """mufu.rsqrt_ftz's quick path: positive normal floats."""
    count = 0
    index, add = np.empty(bits.shape[0], np.uint64), np.empty(bits.shape[0], np.int64)
    for i in range(bits.shape[0]):
        b = np.int64(bits[i])
        e = (b >> 23) & 255
        odd = (e == 0) | (e == 255) | (b >= 0x80000000)
        index[i] = np.uint64((b & F) | (((e & 1) ^ 1) << 23))   # m in [1, 4): an odd e - 127 doubles it
        add[i] = -(((e - 127) >> 1) << 23)                      # floor((e - 127) / 2)
        special[i] = odd
        count += odd
    _gather(table, index, add, out)
    return count


@numba.njit(cache=True, nogil=True)
def lg2_ftz(bits, pair, out, special):
    """mufu.lg2_ftz's quick path: positive normal floats (``pair``: mufu._lg2_pair, uint32)."""
    count = 0
    n = bits.shape[0]
    index, zero = np.empty(n, np.uint64), np.zeros(n, np.int64)
    for i in range(n):
        b = np.int64(bits[i])
        e = (b >> 23) & 255
        index[i] = np.uint64((b & F) | (np.int64(e == 126) << 23))     # [1, 2)'s table, or [0.5, 1)'s
    _gather(pair, index, zero, out)
    for i in range(n):
        b = np.int64(bits[i])
        e = (b >> 23) & 255
        odd = (e == 0) | (e == 255) | (b >= 0x80000000)
        lbits = out[i]
        u = e - 127
        positive = u > 0
        l = _float(lbits)
        absu = np.float32(abs(u))
        sl = l if positive else -l
        v = absu + sl
        d = v - absu
        down = (d > sl) if positive else (d >= sl)
        r = ((np.int64(_bits(v)) - down) & 0xFFFFFFFF) | (0x80000000 & -np.int64(u < 0))
        out[i] = lbits if (e == 126) | (e == 127) else np.uint32(r)    # u = -1 or 0: the table's own bits
        special[i] = odd
        count += odd
    return count


@numba.njit(cache=True, nogil=True)
def _gather_xor(table, index, flip, out):
    """out = table[index] ^ flip, alone in its loop (_gather says why)."""
    for i in range(index.shape[0]):
        out[i] = table[index[i]] ^ flip[i]


@numba.njit(cache=True, nogil=True)
def _sine(bits, inv_2pi, quarter_turn, sign, table, out, special):
    """mufu.sin (quarter_turn 0, sign 1) and mufu.cos (a quarter turn on, sign 0)'s quick path: finite
    inputs. mufu._quick_turns' steps: |a| / 2 pi in float64 (exact), rounded toward zero to float32, as
    2^-25 turns; then _quick_sine's reading of the quarter-turn table."""
    count = 0
    n = bits.shape[0]
    index, flip = np.empty(n, np.uint64), np.empty(n, np.uint32)
    q = 1 << 23
    for i in range(n):
        b = np.int64(bits[i])
        odd = (b & 0x7F800000) == 0x7F800000
        p = np.float64(abs(_float(np.uint32(b)))) * inv_2pi
        t = np.float32(p)
        tb = np.int64(_bits(t)) - np.int64(np.float64(t) > p)        # toward zero (t >= 0)
        e = min((tb >> 23) & 255, 160)
        shift = 165 - e                                             # numpy's uint64 shift by 64 or more gives 0
        m = np.uint64(((tb & F) | (1 << 23))) << np.uint64(40)
        r = np.int64((m >> np.uint64(min(shift, 63))) & np.uint64(4 * q - 1)) & -np.int64(shift < 64)
        r = (r + quarter_turn) & (4 * q - 1)
        quarter = r >> 23
        index[i] = np.uint64((r & (q - 1)) ^ ((-(quarter & 1)) & (q - 1)))
        flip[i] = np.uint32(((quarter >> 1) << 31) ^ ((b & 0x80000000) * sign))
        special[i] = odd
        count += odd
    _gather_xor(table, index, flip, out)
    return count
