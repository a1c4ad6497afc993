"""The special function unit's instructions in the interpreter: what a batch of them costs, and two kernels.

    python bench/mufu.py                 # per-function table, then the two kernels (3 launches each)
    python bench/mufu.py --functions     # the table only
    python bench/mufu.py --kernels       # the kernels only (a tree from before the quick paths has no table)

ex2, rcp, rsqrt, sqrt, lg2, sin and cos.approx.f32 stay interpreted outside regions with cuts (llvmgen._approx:
their H100 bits come from 32 and 64 MiB tables, and numpy's gather over a batch overlaps the cache misses
that native code, lane after lane, waits for one by one). So their cost is numpy's: the table has a row per
function with the milliseconds of one 2^17-lane batch (the interpreter's batch) for the quick path
(mufu.ex2_ftz ...), the whole rule (mufu._ex2_ftz_every_case ...) and the bare table read (np.take of as
many random indices), best of 5 runs. Then two kernels of our own that are mostly such instructions: an
option price (__logf, rsqrtf, __fdividef, __expf: the shape of cuda-samples' BlackScholes) over 2^21
threads, and a Box-Muller turn loop (__logf, __sinf, __cosf, __expf) over 2^20 threads, 8 turns. CPU
seconds of the process; the load average is printed, since the table reads' time moves with other
processes' use of memory.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cudalab  # noqa: E402
from cudalab.emulator import mufu  # noqa: E402

BATCH = 1 << 17

OPTION_PRICE = r"""
__device__ float normal_tail(float d) {
    float k = __fdividef(1.0f, 1.0f + 0.2316419f * fabsf(d));
    float poly = k * (0.3193815f + k * (-0.3565638f + k * (1.7814779f + k * (-1.8212560f + k * 1.3302744f))));
    float p = 0.3989423f * __expf(-0.5f * d * d) * poly;
    return d > 0 ? 1.0f - p : p;
}
__global__ void price(const float* spot, const float* strike, const float* years, float* call, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float s = spot[i], x = strike[i], t = years[i];
        float root = __fdividef(1.0f, rsqrtf(t));
        float d1 = __fdividef(__logf(s / x) + 0.065f * t, 0.3f * root);
        float d2 = d1 - 0.3f * root;
        call[i] = s * normal_tail(d1) - x * __expf(-0.02f * t) * normal_tail(d2);
    }
}
"""

BOX_MULLER = r"""
__global__ void turns(const float* u, float* out, int n, int count) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = u[i], s = 0.0f;
    for (int k = 0; k < count; ++k) {
        float r = sqrtf(-2.0f * __logf(a)), v = 6.2831853f * a;
        s += __expf(0.1f * r * __sinf(v)) + r * __cosf(v);
        a = a * 0.73f + 0.131f;
        a -= floorf(a);
        a = fmaxf(a, 1e-6f);
    }
    out[i] = s;
}
"""


def _best_ms(f, runs=5):
    f()
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        f()
        best = min(best, time.process_time() - t)
    return best * 1e3


def functions():
    rng = np.random.default_rng(18)
    inputs = {      # what the two kernels give each function
        "ex2": ("ex2_ftz", "_ex2_ftz_every_case", "ex2", (-0.72 * rng.normal(0, 1, BATCH) ** 2)),
        "rcp": ("rcp_ftz", "_rcp_ftz_every_case", "rcp", rng.uniform(1.0, 3.5, BATCH)),
        "rsqrt": ("rsqrt_ftz", "_rsqrt_ftz_every_case", "rsqrt", rng.uniform(0.25, 10, BATCH)),
        "sqrt": ("sqrt_ftz", "_sqrt_ftz_every_case", "sqrt", rng.uniform(0.25, 100, BATCH)),
        "lg2": ("lg2_ftz", "_lg2_ftz_every_case", "lg2", rng.uniform(5, 30, BATCH) / rng.uniform(1, 100, BATCH)),
        "sin": ("sin", "_sin_every_case", "sin", rng.uniform(0, 6.3, BATCH)),
        "cos": ("cos", "_cos_every_case", "sin", rng.uniform(0, 6.3, BATCH)),
    }
    print(f"one batch of {BATCH:,} lanes, ms of CPU (best of 5), load {os.getloadavg()[0]:.1f}")
    print(f"{'function':10} {'quick':>8} {'whole rule':>11} {'table read':>11}")
    for name, (quick, whole, tab, x) in inputs.items():
        x = x.astype(np.float32)
        t = mufu.table(tab)
        idx = rng.integers(0, len(t), BATCH)
        q = _best_ms(lambda: getattr(mufu, quick)(x))
        w = _best_ms(lambda: getattr(mufu, whole)(x))
        g = _best_ms(lambda: t.take(idx))
        print(f"{name:10} {q:8.2f} {w:11.2f} {g:11.2f}")


def _launches(kernel, grid, block, args, count=3):
    out = []
    for _ in range(count + 1):          # the first launch plans and builds: not shown
        t = time.process_time()
        kernel[grid, block](*args)
        cudalab.synchronize()
        out.append(time.process_time() - t)
    return out[1:]


def kernels():
    rng = np.random.default_rng(5)
    n = 1 << 21
    spot, strike, years = (cudalab.to_device(rng.uniform(lo, hi, n).astype(np.float32))
                           for lo, hi in ((5, 30), (1, 100), (0.25, 10)))
    call = cudalab.device_array(n, np.float32)
    k = cudalab.compile(OPTION_PRICE).get_kernel("price")
    times = _launches(k, n // 128, 128, (spot, strike, years, call, np.int32(n)))
    print(f"option price, {n:,} threads: " + ", ".join(f"{t:.3f}" for t in times) + " s of CPU a launch")
    n = 1 << 20
    u = cudalab.to_device(rng.uniform(1e-3, 1, n).astype(np.float32))
    out = cudalab.device_array(n, np.float32)
    k = cudalab.compile(BOX_MULLER).get_kernel("turns")
    times = _launches(k, n // 256, 256, (u, out, np.int32(n), np.int32(8)))
    print(f"Box-Muller turns, {n:,} threads x 8: " + ", ".join(f"{t:.3f}" for t in times) + " s of CPU a launch")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--functions", action="store_true", help="the per-function table only")
    ap.add_argument("--kernels", action="store_true", help="the two kernels only")
    args = ap.parse_args(argv)
    if not args.kernels:
        functions()
    if not args.functions:
        kernels()


if __name__ == "__main__":
    main()
