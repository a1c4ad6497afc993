"""cuRAND's MRG32k3a skip-ahead, run natively: the matrix powers of ``curand_init``, ``skipahead``,
``skipahead_subsequence`` and ``skipahead_sequence`` for curandStateMRG32k3a_t.

cuRAND jumps MRG32k3a's two 3-word states with ``curand_MRGmatPow3x3(table, out, m, n)``: the product,
modulo m, of ``table[i]`` (a 3x3 matrix, the step matrix to the power 2^i) for each set bit i of n, each
multiplied on the left in turn, its modular products done in doubles split so that they stay exact.
Interpreted, a curand_init costs each thread about as much as XORWOW's did (33 s of CPU for 2^20 threads on
the compiled tier). cudalab's curand_kernel.h front sends the call to ``cudalab_mrg_power(table, n, m)``
(NVIDIA's code as its body); this module answers it for every lane with integer arithmetic, which
gives the same words: every product of two words below 2^32 fits 64 bits, and cuRAND's double
arithmetic is exact for them. The matrices are read from the emulated device's memory, where the
program's copy of cuRAND's table lies, so a distance past the table's 56 or 64 entries (MRG32k3a takes
subsequences below 2^51) reads what the interpreted code would have read there.
"""
from __future__ import annotations

import numpy as np

from .memory import GLOBAL_BASE

NAME = "cudalab_mrg_power"
ENTRIES = 64                 # bits of the distance, each a 3x3 matrix of the table


def _table(ex, address: int) -> np.ndarray:
    """(64, 3, 3) uint64: the words at ``address`` in device memory (zeros past the arena's end)."""
    start = int(address) - GLOBAL_BASE
    raw = np.zeros(ENTRIES * 36, np.uint8)
    data = ex.mem.data
    if 0 <= start < len(data):
        got = np.asarray(data[start:start + len(raw)])
        raw[:len(got)] = got
    return raw.view(np.uint32).astype(np.uint64).reshape(ENTRIES, 3, 3)


def power(table: np.ndarray, n: np.ndarray, modulus: int) -> np.ndarray:
    """(lanes, 9) uint32: table[i] @ ... @ table[j] @ I (the later bits on the left) modulo ``modulus`` for
    the set bits i > ... > j of each lane's n."""
    m = np.uint64(modulus)
    out = np.zeros((len(n), 3, 3), np.uint64)
    out[:, 0, 0] = out[:, 1, 1] = out[:, 2, 2] = 1
    for bit in range(ENTRIES):
        lanes = np.flatnonzero((n >> np.uint64(bit)) & np.uint64(1))
        if not lanes.size:
            if not (n >> np.uint64(bit)).any():
                break
            continue
        a, o = table[bit], out[lanes]
        new = np.empty_like(o)
        for r in range(3):
            for c in range(3):
                total = (a[r, 0] * o[:, 0, c]) % m + (a[r, 1] * o[:, 1, c]) % m + (a[r, 2] * o[:, 2, c]) % m
                new[:, r, c] = total % m
        out[lanes] = new
    return out.astype(np.uint32).reshape(len(n), 9)


def run_call(ex, inst, rets, args):
    """The emulator's answer to ``cudalab_mrg_power(table, n, m)`` for the active lanes: the 3x3 matrix
    in the 36-byte return value."""
    sel = ex.idx

    def param(name, dtype):
        return np.ascontiguousarray(ex.fr.param_buffer(name)[sel, 0:8]).view(dtype)[:, 0]

    tables, n, moduli = param(args[0], np.uint64), param(args[1], np.uint64), param(args[2], np.float64)
    out = np.empty((len(sel), 9), np.uint32)
    keys = np.stack([tables, moduli.view(np.uint64)], 1)
    for address, modulus in np.unique(keys, axis=0).tolist():
        which = (tables == address) & (moduli.view(np.uint64) == modulus)
        out[which] = power(_table(ex, address), n[which], int(np.uint64(modulus).view(np.float64)))
    if rets:
        ex.fr.param_buffer(rets[0])[sel, 0:36] = out.view(np.uint8).reshape(-1, 36)


HANDLERS = {NAME: run_call}
