"""After tools/mufu_sin_cos_probe.cu, in the folder of its raw_*.u32: packs them small enough to
carry home. Each t-binade table as its first value and the differences of consecutive bit patterns
(the smallest integer type that holds them), with a bit mask of the t that no float x reaches
(their entries repeat the previous value). Usage: python3 mufu_sin_cos_pack.py OUT_DIR"""
import os
import sys

import numpy as np

out = sys.argv[1]


def deltas(t):
    d = np.diff(t.astype(np.int64))
    d = np.where(d > 2**31 - 1, d - 2**32, np.where(d < -2**31, d + 2**32, d))
    for dt in (np.int8, np.int16, np.int32):
        if np.iinfo(dt).min <= d.min() and d.max() <= np.iinfo(dt).max:
            return d.astype(dt)


for op in ("sin", "cos"):
    ks = list(range(9))
    while ks:
        keep = {}
        for k in ks:
            t = np.fromfile(f"raw_tgrid_{op}_{k}.u32", np.uint32)
            miss = t == 0xFFFFFFFF
            idx = np.where(miss, 0, np.arange(len(t)))
            np.maximum.accumulate(idx, out=idx)
            t = t[idx]
            keep[f"k{k}_first"], keep[f"k{k}_delta"], keep[f"k{k}_miss"] = t[0], deltas(t), np.packbits(miss)
        path = f"{out}/tgrid_{op}.npz"
        np.savez_compressed(path, **keep)
        size = os.path.getsize(path)
        print(op, ks, size, flush=True)
        if size < 15_500_000:
            break
        ks = ks[:-1]
np.savez_compressed(f"{out}/windows.npz", w=np.fromfile("raw_windows.u32", np.uint32).reshape(255, 2, 2, 4, 1024))
s = np.fromfile("raw_sample.u32", np.uint32)
n = len(s) // 5
np.savez_compressed(f"{out}/sample.npz", x=s[:n], out=s[n:].reshape(n, 4))
