"""Python kernels from numba.cuda's documentation (and a few that reach further), in numba's own
dialect, with inputs and numpy's answers: the corpus for tests/test_python_kernels.py.

Each case: ``name, kernel`` (a plain Python function), ``grid, block``, ``make(rng)`` -> the launch
arguments (numpy arrays, copied in and back by the launch), ``expect(args_before)`` -> numpy's
answer for every array argument, and
``tol`` (0: equal; else numpy's allclose rtol). ``record.py`` runs every case with real numba-cuda on
a GPU and saves inputs and outputs in ``recorded/``: the bit-exact oracle.
"""
import math
from dataclasses import dataclass

import numpy as np
from numba import cuda, float32, int32
from numba.cuda.random import (init_xoroshiro128p_states_cpu, xoroshiro128p_dtype,
                               xoroshiro128p_uniform_float32)

TPB = 16          # threads per block side of the tiled matmul (numba's docs)


# ------------------------------------------------------------------ kernels (numba's docs, lightly trimmed)

def vector_add(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]


def matmul(A, B, C):
    i, j = cuda.grid(2)
    if i < C.shape[0] and j < C.shape[1]:
        tmp = 0.
        for k in range(A.shape[1]):
            tmp += A[i, k] * B[k, j]
        C[i, j] = tmp


def fast_matmul(A, B, C):
    sA = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    sB = cuda.shared.array(shape=(TPB, TPB), dtype=float32)
    x, y = cuda.grid(2)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    bpg = cuda.gridDim.x
    tmp = float32(0.)
    for i in range(bpg):
        sA[ty, tx] = 0
        sB[ty, tx] = 0
        if y < A.shape[0] and (tx + i * TPB) < A.shape[1]:
            sA[ty, tx] = A[y, tx + i * TPB]
        if x < B.shape[1] and (ty + i * TPB) < B.shape[0]:
            sB[ty, tx] = B[ty + i * TPB, x]
        cuda.syncthreads()
        for j in range(TPB):
            tmp += sA[ty, j] * sB[j, tx]
        cuda.syncthreads()
    if y < C.shape[0] and x < C.shape[1]:
        C[y, x] = tmp


def block_sum(a, partial):
    s = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    s[tid] = a[i] if i < a.size else float32(0)
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = s[0]


def histogram(x, xmin, xmax, hist_out):
    nbins = hist_out.shape[0]
    bin_width = (xmax - xmin) / nbins
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    for i in range(start, x.shape[0], stride):
        bin_number = int32((x[i] - xmin) / bin_width)
        if bin_number >= 0 and bin_number < hist_out.shape[0]:
            cuda.atomic.add(hist_out, bin_number, 1)


def warp_sum(a, out):
    i = cuda.grid(1)
    v = a[i] if i < a.size else float32(0)
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, offset)
        offset //= 2
    if cuda.laneid == 0:
        out[i // 32] = v


def compute_pi(rng_states, iterations, out):
    thread_id = cuda.grid(1)
    inside = 0
    for i in range(iterations):
        x = xoroshiro128p_uniform_float32(rng_states, thread_id)
        y = xoroshiro128p_uniform_float32(rng_states, thread_id)
        if x ** 2 + y ** 2 <= 1.0:
            inside += 1
    out[thread_id] = 4.0 * inside / iterations


def sequential_rows(M):
    col = cuda.grid(1)
    g = cuda.cg.this_grid()
    rows = M.shape[0]
    cols = M.shape[1]
    for row in range(1, rows):
        opposite = cols - col - 1
        M[row, col] = M[row - 1, opposite] + 1
        g.sync()


def math_functions(x, out32, out64):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        out32[i] = math.sin(v) * math.exp(-v) + math.sqrt(abs(v)) + math.atan2(v, float32(1.5))
        w = float(v)
        out64[i] = math.log1p(abs(w)) + math.cos(w) ** 2 + math.tanh(w)


def warp_votes(a, out):
    i = cuda.grid(1)
    p = a[i] > 0
    ballot = cuda.ballot_sync(0xffffffff, p)
    out[i, 0] = ballot
    out[i, 1] = cuda.all_sync(0xffffffff, p)
    out[i, 2] = cuda.any_sync(0xffffffff, p)
    out[i, 3] = cuda.popc(ballot)
    out[i, 4] = cuda.shfl_xor_sync(0xffffffff, a[i], 1)
    out[i, 5] = cuda.activemask()


@cuda.jit(device=True)
def clamp(v, lo, hi):
    return min(max(v, lo), hi)


def local_and_const(a, out):
    weights = cuda.const.array_like(WEIGHTS)
    window = cuda.local.array(5, int32)
    i = cuda.grid(1)
    if i < out.size:
        for k in range(5):
            window[k] = a[clamp(i + k - 2, 0, a.size - 1)]
        acc = 0
        for k in range(5):
            acc += window[k] * weights[k]
        out[i] = acc
        cuda.atomic.max(out, 0, acc)


WEIGHTS = np.array([1, 4, 6, 4, 1], np.int32)


# ------------------------------------------------------------------ cases

@dataclass
class Case:
    name: str
    kernel: object
    grid: object
    block: object
    make: object
    expect: object
    tol: float = 0.0


def _states(n, seed=1234):
    s = np.zeros(n, dtype=xoroshiro128p_dtype)
    init_xoroshiro128p_states_cpu(s, seed, 0)
    return s


def _compute_pi_cpu(states, iterations, out):
    """The same per-thread loop on the CPU (numba's xoroshiro functions compile for the CPU too)."""
    import numba

    @numba.njit
    def every_thread(states, iterations, out):
        for t in range(out.size):
            inside = 0
            for i in range(iterations):
                x = xoroshiro128p_uniform_float32(states, t)
                y = xoroshiro128p_uniform_float32(states, t)
                if x ** 2 + y ** 2 <= 1.0:
                    inside += 1
            out[t] = 4.0 * inside / iterations

    states, out = states.copy(), out.copy()
    every_thread(states, iterations, out)
    return [states, out]


def _fast_matmul_expect(args):
    A, B, _ = args
    return [A, B, A @ B]


def _histogram(x, xmin, xmax, nbins):
    """As the kernel bins: int32() truncates toward zero, so values just below xmin land in bin 0."""
    b = ((x - xmin) / ((xmax - xmin) / nbins)).astype(np.int32)
    return np.bincount(b[(b >= 0) & (b < nbins)], minlength=nbins).astype(np.int32)


def _block_sums(a, n):
    return a.reshape(-1, n).sum(axis=1)


def _conv5(a):
    idx = np.clip(np.arange(a.size)[:, None] + np.arange(5) - 2, 0, a.size - 1)
    out = (a[idx] * WEIGHTS).sum(axis=1).astype(np.int32)
    out[0] = max(out[0], out.max())
    return out


def _sequential_rows(M):
    M = M.copy()
    for r in range(1, M.shape[0]):
        M[r] = M[r - 1, ::-1] + 1
    return M


def _votes(a):
    p = (a > 0).reshape(-1, 32)
    bits = (p * (1 << np.arange(32, dtype=np.uint64))).sum(axis=1).astype(np.int64)
    out = np.zeros((a.size, 6), np.int64)
    out[:, 0] = np.repeat(bits.astype(np.uint32).view(np.int32), 32)     # numba's ballot_sync is an int32
    out[:, 1] = np.repeat(p.all(axis=1), 32)
    out[:, 2] = np.repeat(p.any(axis=1), 32)
    out[:, 3] = np.repeat(p.sum(axis=1), 32)
    out[:, 4] = a.reshape(-1, 2)[:, ::-1].reshape(-1)
    out[:, 5] = 0xFFFFFFFF
    return out


CASES = [
    Case("vector_add", vector_add, 40, 256,
         lambda r: (r.random(10_000, np.float32), r.random(10_000, np.float32), np.zeros(10_000, np.float32)),
         lambda a: [a[0], a[1], a[0] + a[1]]),
    Case("matmul", matmul, (4, 3), (16, 16),
         lambda r: (r.random((50, 37)), r.random((37, 45)), np.zeros((50, 45))),
         lambda a: [a[0], a[1], a[0] @ a[1]], 1e-12),
    Case("fast_matmul", fast_matmul, (4, 4), (TPB, TPB),
         lambda r: (r.random((64, 64), np.float32), r.random((64, 64), np.float32), np.zeros((64, 64), np.float32)),
         _fast_matmul_expect, 1e-5),
    Case("block_sum", block_sum, 16, 256,
         lambda r: (r.random(4096, np.float32), np.zeros(16, np.float32)),
         lambda a: [a[0], _block_sums(a[0], 256)], 1e-5),
    Case("histogram", histogram, 8, 128,
         lambda r: (r.normal(0.0, 1.0, 20_000), -3.0, 3.0, np.zeros(24, np.int32)),
         lambda a: [a[0], _histogram(a[0], -3.0, 3.0, 24)]),
    Case("warp_sum", warp_sum, 4, 256,
         lambda r: (r.random(1000, np.float32), np.zeros(32, np.float32)),
         lambda a: [a[0], np.pad(a[0], (0, 24)).reshape(32, 32).sum(axis=1)], 1e-5),
    Case("compute_pi", compute_pi, 4, 64,
         lambda r: (_states(256), 200, np.zeros(256, np.float32)),
         lambda a: _compute_pi_cpu(*a)),
    Case("sequential_rows", sequential_rows, 2, 256,
         lambda r: (r.integers(0, 100, (32, 512)).astype(np.int32),),
         lambda a: [_sequential_rows(a[0])]),
    Case("math_functions", math_functions, 4, 256,
         lambda r: (r.uniform(-20, 20, 1000).astype(np.float32), np.zeros(1000, np.float32), np.zeros(1000)),
         lambda a: [a[0], np.sin(a[0]) * np.exp(-a[0]) + np.sqrt(np.abs(a[0])) + np.arctan2(a[0], np.float32(1.5)),
                    np.log1p(np.abs(a[0].astype(float))) + np.cos(a[0].astype(float)) ** 2
                    + np.tanh(a[0].astype(float))], 1e-5),
    Case("warp_votes", warp_votes, 2, 64,
         lambda r: (r.integers(-3, 50, 128).astype(np.int32), np.zeros((128, 6), np.int64)),
         lambda a: [a[0], _votes(a[0])]),
    Case("local_and_const", local_and_const, 2, 128,
         lambda r: (r.integers(0, 100, 200).astype(np.int32), np.zeros(200, np.int32)),
         lambda a: [a[0], _conv5(a[0])]),
]


def case_inputs(case):
    """The case's launch arguments, the same on every machine (rng seeded from the name)."""
    import zlib
    return case.make(np.random.default_rng(zlib.crc32(case.name.encode())))
