"""A Monte Carlo lesson's cuRAND kernels on the emulator: curand_init for 2^20 threads, then the draws.

    python bench/curand.py                  # 2^20 threads, 64 draws each
    python bench/curand.py --threads 65536 --markdown

Rows (CPU seconds of this process, the compiled tier as a notebook gets it, each launch after a
one-block warm-up that compiles the kernel and loads the jump's tables and loop):
- *setup*: ``curand_init(seed, id, 0, &states[id])``, cuRAND's XORWOW; its skip-ahead runs natively
  (emulator/xorwow_jump.py);
- *setup, cuRAND's loops*: the same kernel built with ``-DCUDALAB_CURAND_LOOPS`` (NVIDIA's header as it
  is, as before the front), on the compiled tier (the grid's last ``--loop-threads`` threads) and the
  interpreter (the last quarter of those), scaled to the grid (marked ~);
- *setup of MRG32k3a*: the same for curandStateMRG32k3a_t (emulator/mrg_jump.py);
- *draw*: each thread draws ``--draws`` uniform floats from its state and sums them (pi by darts).
The first 4096 states are checked against the host API's XORWOW (libraries/rand.py, recorded on an H200).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

SOURCE = r"""
#include <curand_kernel.h>
extern "C" __global__ void setup(curandState *states, unsigned long long seed, int first, int n) {
    int id = first + blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(seed, id, 0, &states[id - first]);
}
extern "C" __global__ void setup_mrg(curandStateMRG32k3a_t *states, unsigned long long seed, int first, int n) {
    int id = first + blockIdx.x * blockDim.x + threadIdx.x;
    if (id < n) curand_init(seed, id, 0, &states[id - first]);
}
extern "C" __global__ void darts(curandState *states, unsigned *inside, int n, int draws) {
    int id = blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= n) return;
    curandState s = states[id];
    unsigned hits = 0;
    for (int k = 0; k < draws; k++) {
        float x = curand_uniform(&s), y = curand_uniform(&s);
        hits += x * x + y * y <= 1.0f;
    }
    inside[id] = hits;
    states[id] = s;
}
"""


def cpu(f):
    import cudalab
    t = time.process_time()
    out = f()
    cudalab.synchronize()
    return time.process_time() - t, out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threads", type=int, default=1 << 20)
    ap.add_argument("--draws", type=int, default=64)
    ap.add_argument("--loop-threads", type=int, default=1024)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args(argv)
    os.environ.setdefault("CUDALAB_TIER", "compiled")
    import cudalab
    from cudalab.runtime.libraries import rand

    n, block = args.threads, 256
    mod = cudalab.compile(SOURCE)
    setup, darts = mod.get_kernel("setup"), mod.get_kernel("darts")
    states = cudalab.device_array((n * 48,), np.uint8)
    inside = cudalab.device_array((n,), np.uint32)
    seed = np.uint64(1234)
    setup[1, block](states, seed, np.int32(0), np.int32(block))            # warm-up: build, tables, numba
    darts[1, block](states, inside, np.int32(block), np.int32(args.draws))
    t_setup, _ = cpu(lambda: setup[(n + block - 1) // block, block](states, seed, np.int32(0), np.int32(n)))
    words = states.copy_to_host().view(np.uint32).reshape(n, 12)
    v, d = rand.xorwow_states(1234, min(n, 4096))
    assert (words[:len(v), 1:6] == v).all() and (words[:len(v), 0] == d).all(), "states differ from cuRAND's"
    t_draw, _ = cpu(lambda: darts[(n + block - 1) // block, block](states, inside, np.int32(n), np.int32(args.draws)))
    pi = 4 * inside.copy_to_host().astype(np.float64).sum() / (n * args.draws)

    loops = cudalab.compile(SOURCE, ("-DCUDALAB_CURAND_LOOPS",)).get_kernel("setup")
    rows = [("setup: curand_init, native skip-ahead", f"{t_setup:.2f}")]
    for tier, m in (("compiled", args.loop_threads), ("interp", args.loop_threads // 4)):
        os.environ["CUDALAB_TIER"] = tier
        few = cudalab.device_array((m * 48,), np.uint8)
        loops[1, block](few, seed, np.int32(0), np.int32(block))
        # the grid's last threads: their subsequences have as many base-4 digits as most of the grid's
        t_loops, _ = cpu(lambda: loops[(m + block - 1) // block, block](few, seed, np.int32(n - m), np.int32(n)))
        assert (few.copy_to_host().view(np.uint32).reshape(m, 12) == words[n - m:]).all(), "the loops disagree"
        rows.append((f"setup: cuRAND's loops, {tier} tier", f"~{t_loops * n / m:.1f} (timed {t_loops:.3f} on {m})"))
    os.environ["CUDALAB_TIER"] = "compiled"
    mrg = mod.get_kernel("setup_mrg")
    mrg_states = cudalab.device_array((n * 64,), np.uint8)
    mrg[1, block](mrg_states, seed, np.int32(0), np.int32(block))
    t_mrg, _ = cpu(lambda: mrg[(n + block - 1) // block, block](mrg_states, seed, np.int32(0), np.int32(n)))
    rows.append(("setup: curand_init of MRG32k3a, native matrix powers", f"{t_mrg:.2f}"))
    rows.append((f"draw: {args.draws} pairs of curand_uniform a thread (pi = {pi:.5f})", f"{t_draw:.2f}"))
    if args.markdown:
        print(f"| kernel ({n:,} threads) | CPU s |\n|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} |")
    else:
        print(f"{n:,} threads")
        for r in rows:
            print(f"{r[0]:<60} {r[1]}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
