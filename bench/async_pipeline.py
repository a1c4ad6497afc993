"""Where a cp.async pipeline's time goes on the emulator: the copies, the pipeline's bookkeeping, the product.

    python bench/async_pipeline.py              # n = 640, 5 launches of each kernel
    python bench/async_pipeline.py 1280 3       # globalToShmemAsyncCopy's own size

Three kernels compute the same C = A * B in 16 x 16 tiles, and differ only in how a tile reaches shared
memory (the shape of cuda-samples' globalToShmemAsyncCopy, whose 101 launches at 1280 are its time):

- ``staged``: a cuda::pipeline of four stages, a quarter of the threads issuing two 16-byte
  ``cuda::memcpy_async`` per tile; ``consumer_wait`` is a ``switch`` over ``cp.async.wait_group N``;
- ``staged_sync``: the same pipeline calls around plain float4 copies (no cp.async is issued, so
  nothing queues or lands: what is left over ``tiled`` is the producer loop, the commits and the waits);
- ``tiled``: the plain copies and two ``__syncthreads()`` a tile, no pipeline.

All three run as native regions (``--why-slow`` says 100%). Each prints the CPU time of a launch
(the process's, after a first launch that builds the native code: CUDALAB_TIER=compiled) and
whether C matches numpy's. CPU time of the process: a busy machine inflates it far less than wall time,
but on a 2-core machine shared by many processes still by up to a third (caches): compare numbers
from one run.
"""
import os
import sys
import time

import numpy as np

import cudalab

KERNELS = r'''
#include <cuda/pipeline>
#define TILE 16
#define STAGES 4

// the tile of A (rows of this block) and of B (columns of this block) for step k, a float4 per thread
// of the first quarter of each row
__device__ const float4* a_part(const float* a, int n, int k) {
    return (const float4*)&a[(blockIdx.y * TILE + threadIdx.y) * n + k * TILE + 4 * threadIdx.x];
}
__device__ const float4* b_part(const float* b, int n, int k) {
    return (const float4*)&b[(k * TILE + threadIdx.y) * n + blockIdx.x * TILE + 4 * threadIdx.x];
}

__device__ float dot_tiles(float (*ta)[TILE], float (*tb)[TILE]) {
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < TILE; ++i) s += ta[threadIdx.y][i] * tb[i][threadIdx.x];
    return s;
}

template <bool ASYNC>
__global__ void staged_kernel(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    __shared__ __align__(16) float ta[STAGES][TILE][TILE];
    __shared__ __align__(16) float tb[STAGES][TILE][TILE];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
    const auto chunk = cuda::aligned_size_t<16>(16);
    int steps = n / TILE, issued = 0;
    float sum = 0.0f;
    for (int k = 0; k < steps; ++k) {
        // keep STAGES - 1 tiles ahead. Kept a loop, as the sample's is: unrolled by NVRTC (without the
        // pragma) it became 14 cp.async in branches and ran twice as long (463 -> 218 ms at 640)
#pragma unroll 1
        for (; issued < steps && issued < k + STAGES - 1; ++issued) {
            pipe.producer_acquire();
            if (threadIdx.x < TILE / 4) {
                int s = issued % STAGES;
                float4* da = (float4*)&ta[s][threadIdx.y][4 * threadIdx.x];
                float4* db = (float4*)&tb[s][threadIdx.y][4 * threadIdx.x];
                if (ASYNC) {
                    cuda::memcpy_async(da, a_part(a, n, issued), chunk, pipe);
                    cuda::memcpy_async(db, b_part(b, n, issued), chunk, pipe);
                } else {
                    *da = *a_part(a, n, issued);
                    *db = *b_part(b, n, issued);
                }
            }
            pipe.producer_commit();
        }
        pipe.consumer_wait();
        __syncthreads();
        sum += dot_tiles(ta[k % STAGES], tb[k % STAGES]);
        pipe.consumer_release();
        __syncthreads();                  // (the next issue refills a stage others may still read)
    }
    c[(blockIdx.y * TILE + threadIdx.y) * n + blockIdx.x * TILE + threadIdx.x] = sum;
}

__global__ void tiled(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    __shared__ __align__(16) float ta[TILE][TILE];
    __shared__ __align__(16) float tb[TILE][TILE];
    float sum = 0.0f;
    for (int k = 0; k < n / TILE; ++k) {
        if (threadIdx.x < TILE / 4) {
            *(float4*)&ta[threadIdx.y][4 * threadIdx.x] = *a_part(a, n, k);
            *(float4*)&tb[threadIdx.y][4 * threadIdx.x] = *b_part(b, n, k);
        }
        __syncthreads();
        sum += dot_tiles(ta, tb);
        __syncthreads();
    }
    c[(blockIdx.y * TILE + threadIdx.y) * n + blockIdx.x * TILE + threadIdx.x] = sum;
}

template __global__ void staged_kernel<true>(const float*, const float*, float*, int);
template __global__ void staged_kernel<false>(const float*, const float*, float*, int);
'''
NAMES = {"staged": "staged_kernel<true>", "staged_sync": "staged_kernel<false>", "tiled": "tiled"}


def module():
    return cudalab.compile(KERNELS, options=("-std=c++17",))


def inputs(n, seed=3):
    """Small integers: every sum is exact, so each kernel's C equals numpy's bit for bit."""
    rng = np.random.default_rng(seed)
    return (rng.integers(-4, 5, (n, n)).astype(np.float32), rng.integers(-4, 5, (n, n)).astype(np.float32))


def run(mod, name, a, b, launches):
    """(CPU seconds a launch, C) of ``launches`` launches after a first one."""
    n = a.shape[0]
    k = mod.get_kernel(NAMES[name])
    da, db, dc = cudalab.to_device(a), cudalab.to_device(b), cudalab.device_array((n, n), np.float32)
    shape = ((n // 16, n // 16), (16, 16))
    k[shape](da, db, dc, np.int32(n))
    cudalab.synchronize()
    t0 = time.process_time()
    for _ in range(launches):
        k[shape](da, db, dc, np.int32(n))
    cudalab.synchronize()
    return (time.process_time() - t0) / launches, dc.copy_to_host()


def main():
    os.environ.setdefault("CUDALAB_TIER", "compiled")      # (native code from the first launch on)
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 640
    launches = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    a, b = inputs(n)
    want = a @ b
    mod = module()
    print(f"C = A * B, {n}^3 in 16 x 16 tiles, CPU ms a launch (mean of {launches}), load {os.getloadavg()[0]:.1f}")
    for name in NAMES:
        seconds, c = run(mod, name, a, b, launches)
        print(f"  {name:12s} {seconds * 1e3:8.1f}   {'C right' if np.array_equal(c, want) else 'C WRONG'}")


if __name__ == "__main__":
    main()
