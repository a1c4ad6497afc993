"""After tools/mufu_sin_cos_probe.cu and tools/mufu_sin_cos_pack.py: the quarter-turn table of
cudalab/emulator/mufu_h100.npz ('sin': the unit's sine of j*2^-25 turns, j < 2^23) from the t-binade
tables, checking on the way what mufu.py relies on: the result depends on t only through t truncated
to 25 fraction bits (whole turns dropped), and the eight places where a quarter's value shows up
(sin and cos, each read forwards, backwards from one step short of the next quarter, and negated
half a turn on) agree wherever the GPU gave them. On an H100: all 2^23 entries measured, 0 conflicts.
Usage: python3 mufu_sin_cos_tables.py PACKED_DIR OUT.npz"""
import sys

import numpy as np

F, Q = 25, 1 << 23


def binades(op):
    z = np.load(f"{sys.argv[1]}/tgrid_{op}.npz")
    for k in range(1, 9):                     # t in [2^-k, 2^(1-k)): t = (2^23 + j) 2^-(23+k)
        d = z[f"k{k}_delta"].astype(np.int64).astype(np.uint32)
        t = np.add.accumulate(np.concatenate([[z[f"k{k}_first"]], d]).astype(np.uint32), dtype=np.uint32)
        yield k, t, np.unpackbits(z[f"k{k}_miss"])[:len(t)].astype(bool)


def turns_table(op):
    """Result bits for every t = i 2^-25 of [0, 1) that a float x reaches, and which ones it reaches."""
    T, have = np.zeros(1 << F, np.uint32), np.zeros(1 << F, bool)
    for k, t, miss in binades(op):
        q = (1 << 23) + np.arange(len(t), dtype=np.int64)
        i = q >> (23 + k - F) if 23 + k >= F else q << (F - 23 - k)
        ok = ~miss
        assert not (have[i[ok]] & (T[i[ok]] != t[ok])).any(), f"{op}: not a function of t's 25 bits"
        T[i[ok]], have[i[ok]] = t[ok], True
    return T, have


S, HS = turns_table("sin")
C, HC = turns_table("cos")
j = np.arange(Q, dtype=np.int64)
NEG = np.uint32(0x80000000)
quarter, have = np.zeros(Q, np.uint32), np.zeros(Q, bool)
for A, H, at, sign in [(S, HS, j, 0), (S, HS, 2 * Q - 1 - j, 0), (S, HS, 2 * Q + j, NEG), (S, HS, 4 * Q - 1 - j, NEG),
                       (C, HC, 3 * Q + j, 0), (C, HC, Q - 1 - j, 0), (C, HC, Q + j, NEG), (C, HC, 3 * Q - 1 - j, NEG)]:
    v, h = A[at] ^ np.uint32(sign), H[at]
    assert not (have & h & (quarter != v)).any(), "the quarters disagree"
    quarter, have = np.where(h & ~have, v, quarter), have | h
assert have.all(), f"{(~have).sum()} quarter-turn entries not measured"
np.savez_compressed(sys.argv[2], sin_first=quarter[0], sin_delta=np.diff(quarter.astype(np.int64)).astype(np.int32))
print("quarter table: all", Q, "entries measured, no conflicts")
