"""xorwow_jump's loop over many lanes (numba): imported when a launch of thousands of threads first
jumps, so that the emulator starts without numba."""
import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def jump_lanes(v, n, table):
    """Each lane's five words ``v[i]`` moved by ``n[i]`` with the byte tables of xorwow_jump.tables
    (flattened: place, digit - 1, byte position, byte value, word): for base-4 digit d > 0 at place p,
    the XOR over the state's 20 bytes of that byte's row."""
    for i in range(v.shape[0]):
        x = n[i]
        base = 0
        s0, s1, s2, s3, s4 = v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4]
        while x:
            d = np.int64(x & np.uint64(3))
            if d:
                t = base + (d - 1) * 25600
                r0 = r1 = r2 = r3 = r4 = np.uint32(0)
                for w in range(5):
                    word = s0 if w == 0 else s1 if w == 1 else s2 if w == 2 else s3 if w == 3 else s4
                    for k in range(4):
                        at = t + ((4 * w + k) * 256 + np.int64((word >> np.uint32(8 * k)) & np.uint32(255))) * 5
                        r0 ^= table[at]
                        r1 ^= table[at + 1]
                        r2 ^= table[at + 2]
                        r3 ^= table[at + 3]
                        r4 ^= table[at + 4]
                s0, s1, s2, s3, s4 = r0, r1, r2, r3, r4
            x >>= np.uint64(2)
            base += 3 * 25600
        v[i, 0], v[i, 1], v[i, 2], v[i, 3], v[i, 4] = s0, s1, s2, s3, s4
