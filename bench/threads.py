"""Wall and CPU seconds of a launch on 1, 2 and 4 threads (CUDALAB_THREADS), side by side.

    python bench/threads.py [N]        # a 16x16 tiled matmul N x N on the compiled tier (default 1024)

Each thread count runs in a process of its own (a warm-up launch that builds the native code, then the
best of 3 launches); the output's hash shows the bytes are the same. The gain needs free cores: run it
on a quiet machine and give the load average with the figures (bench/README.md, "Batches on two cores").
"""
import os
import subprocess
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
CHILD = r'''
import hashlib, os, time
import numpy as np
import cudalab
SRC = r"""
#define T 16
extern "C" __global__ void tiled(const float *a, const float *b, float *c, int n) {
    __shared__ float sa[T][T], sb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; k += T) {
        sa[threadIdx.y][threadIdx.x] = a[row * n + k + threadIdx.x];
        sb[threadIdx.y][threadIdx.x] = b[(k + threadIdx.y) * n + col];
        __syncthreads();
        for (int j = 0; j < T; ++j) sum += sa[threadIdx.y][j] * sb[j][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = sum;
}"""
n = %d
k = cudalab.compile(SRC).get_kernel("tiled")
rng = np.random.default_rng(1)
a = cudalab.to_device(rng.random((n, n), dtype=np.float32)); b = cudalab.to_device(rng.random((n, n), dtype=np.float32))
c = cudalab.device_array((n, n), np.float32)
k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
best = None
for _ in range(3):
    w0, c0 = time.perf_counter(), time.process_time()
    k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
    w, cpu = time.perf_counter() - w0, time.process_time() - c0
    best = min(best or (w, cpu), (w, cpu))
print(f"threads={os.environ['CUDALAB_THREADS']} wall={best[0]:.3f}s cpu={best[1]:.3f}s out={hashlib.sha1(c.copy_to_host().tobytes()).hexdigest()[:12]}")
''' % N
for t in (1, 2, 4):
    env = dict(os.environ, CUDALAB_THREADS=str(t), CUDALAB_TIER="compiled")
    subprocess.run([sys.executable, "-c", CHILD], env=env)
