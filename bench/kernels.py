"""The benchmark kernels: CUDA C++ source, launch shape, inputs and a numpy check for each."""
from dataclasses import dataclass
from typing import Callable

import numpy as np

VECTOR_ADD = r"""
__global__ void vector_add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

TILED_MATMUL = r"""
#define TILE 16
__global__ void matmul(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
"""

TREE_REDUCTION = r"""
__global__ void reduce(const float* x, float* partial, int n) {
    __shared__ float s[256];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}
"""

HISTOGRAM = r"""
__global__ void histogram(const unsigned char* data, unsigned int* hist, int n) {
    __shared__ unsigned int local[256];
    int tid = threadIdx.x;
    local[tid] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + tid;
    if (i < n) atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    atomicAdd(&hist[tid], local[tid]);
}
"""

WARP_REDUCTION = r"""
__global__ void warp_reduce(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}
"""

COLLATZ = r"""
__global__ void collatz(const unsigned int* start, int* steps, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = start[i];
    int s = 0;
    while (x != 1) {
        x = (x & 1) ? 3 * x + 1 : x >> 1;
        ++s;
    }
    steps[i] = s;
}
"""


def _collatz_steps(start):
    x, steps = start.astype(np.uint64), np.zeros(start.shape, np.int32)
    while (live := x != 1).any():
        steps += live
        x = np.where(live, np.where(x & 1, 3 * x + 1, x >> 1), x)
    return steps


@dataclass(frozen=True)
class Bench:
    """One benchmark kernel; `blocks` is how many blocks of the last grid dimension to run."""
    name: str
    kernel: str                          # __global__ function name (also the numba function name)
    source: str
    sizes: tuple                         # default sizes (elements, or n for an n x n matmul)
    block: tuple
    grid: Callable                       # size -> full grid tuple
    inputs: Callable                     # size, rng -> list of kernel arguments (numpy arrays, ints)
    check: Callable                      # size, args after launch, blocks run -> None or message

    def launch(self, size, blocks=None):
        """Grid for `blocks` blocks of the outermost grid dimension (all of them by default)."""
        grid = self.grid(size)
        return grid if blocks is None else grid[:-1] + (min(blocks, grid[-1]),)

    def thread_count(self, size, grid=None):
        return int(np.prod(grid or self.grid(size))) * int(np.prod(self.block))


def _compare(name, got, want, exact=True):
    ok = np.array_equal(got, want) if exact else np.allclose(got, want, rtol=1e-4, atol=1e-3)
    if ok:
        return None
    bad = np.flatnonzero(~np.isclose(got, want, rtol=1e-4, atol=1e-3) if not exact else got != want)
    i = bad[0]
    return f"{name}: {bad.size} of {got.size} wrong, first at [{i}]: got {got.flat[i]}, want {want.flat[i]}"


def _vector_add_check(size, args, blocks):
    a, b, c, _ = args
    m = blocks * 256
    return _compare("c", c[:m], a[:m] + b[:m])


def _matmul_check(size, args, blocks):
    A, B, C, _ = args
    rows = blocks * 16
    want = A[:rows].astype(np.float64) @ B.astype(np.float64)
    return _compare("C", C[:rows], want, exact=False)


def _reduction_check(size, args, blocks):
    x, partial, _ = args
    want = x[:blocks * 256].reshape(blocks, 256).sum(axis=1)   # small integers: exact in float32
    return _compare("partial", partial[:blocks], want)


def _histogram_check(size, args, blocks):
    data, hist, _ = args
    return _compare("hist", hist, np.bincount(data[:blocks * 256], minlength=256).astype(np.uint32))


def _warp_check(size, args, blocks):
    x, out, _ = args
    warps = blocks * 256 // 32
    return _compare("out", out[:warps], x[:warps * 32].reshape(warps, 32).sum(axis=1, dtype=np.int32))


def _collatz_check(size, args, blocks):
    start, steps, _ = args
    m = blocks * 256
    return _compare("steps", steps[:m], _collatz_steps(start[:m]))


def _blocks_1d(size):
    return ((size + 255) // 256,)


BENCHES = {b.name: b for b in [
    Bench("vector_add", "vector_add", VECTOR_ADD, (2**16, 2**20), (256,), _blocks_1d,
          lambda n, rng: [rng.random(n, np.float32), rng.random(n, np.float32),
                          np.zeros(n, np.float32), np.int32(n)],
          _vector_add_check),
    Bench("matmul", "matmul", TILED_MATMUL, (64, 128, 256), (16, 16), lambda n: (n // 16, n // 16),
          lambda n, rng: [rng.random((n, n), np.float32), rng.random((n, n), np.float32),
                          np.zeros((n, n), np.float32), np.int32(n)],
          _matmul_check),
    Bench("reduction", "reduce", TREE_REDUCTION, (2**16, 2**20), (256,), _blocks_1d,
          lambda n, rng: [rng.integers(0, 8, n).astype(np.float32), np.zeros((n + 255) // 256, np.float32),
                          np.int32(n)],
          _reduction_check),
    Bench("histogram", "histogram", HISTOGRAM, (2**16,), (256,), _blocks_1d,
          lambda n, rng: [rng.integers(0, 256, n, dtype=np.uint8), np.zeros(256, np.uint32), np.int32(n)],
          _histogram_check),
    Bench("warp_shuffle", "warp_reduce", WARP_REDUCTION, (2**16,), (256,), _blocks_1d,
          lambda n, rng: [rng.integers(-100, 100, n, dtype=np.int32), np.zeros(n // 32, np.int32),
                          np.int32(n)],
          _warp_check),
    Bench("collatz", "collatz", COLLATZ, (2**14,), (256,), _blocks_1d,
          lambda n, rng: [np.arange(1, n + 1, dtype=np.uint32), np.zeros(n, np.int32), np.int32(n)],
          _collatz_check),
]}
