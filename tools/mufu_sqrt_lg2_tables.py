"""After tools/mufu_sqrt_lg2_probe.cu, in the folder of its raw_*.u32: the tables as first + deltas
(int8 for sqrt; int32 for lg2, whose bits jump where its result crosses powers of two near 1), in the
form of cudalab/emulator/mufu_h100.npz, and the random sample of inputs with the GPU's four results.
Usage: python3 mufu_sqrt_lg2_tables.py OUT_DIR"""
import sys

import numpy as np

raw = lambda n: np.fromfile(f"raw_{n}.u32", np.uint32)
keep = {}
for name, key, dt in (("sqrt_ftz", "sqrt", np.int8), ("lg2_ftz", "lg2", np.int32), ("lg2_half", "lg2half", np.int32)):
    t = raw(name)
    d = np.diff(t.astype(np.int64))
    assert np.iinfo(dt).min <= d.min() and d.max() <= np.iinfo(dt).max, (name, d.min(), d.max())
    keep[f"{key}_first"], keep[f"{key}_delta"] = t[0], d.astype(dt)
np.savez_compressed(f"{sys.argv[1]}/mufu_sqrt_lg2.npz", **keep)
s = raw("sample")
n = len(s) // 5
np.savez_compressed(f"{sys.argv[1]}/mufu_sample.npz", x=s[:n], out=s[n:].reshape(n, 4))
