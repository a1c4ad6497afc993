"""Solutions to notebook 15's exercises (Python kernels in numba.cuda's dialect)."""
from numba import cuda, float32

import cudalab


@cudalab.jit
def map_add10(a, out):
    i = cuda.grid(1)
    out[i] = a[i] + 10


@cudalab.jit
def zip_add(a, b, out):
    i = cuda.grid(1)
    out[i] = a[i] + b[i]


@cudalab.jit
def guarded_add10(a, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + 10


@cudalab.jit
def add10_2d(a, out):
    r, c = cuda.grid(2)
    if r < out.shape[0] and c < out.shape[1]:
        out[r, c] = a[r, c] + 10


@cudalab.jit
def reverse_blocks(a, out):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i]
    cuda.syncthreads()
    out[i] = s[255 - t]


@cudalab.jit
def pool3(a, out):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    if i < a.size:
        s[t] = a[i]
    cuda.syncthreads()
    if i < a.size:
        total = s[t]
        for k in range(1, 3):
            if i >= k:
                total += s[t - k] if t >= k else a[i - k]
        out[i] = total


@cudalab.jit
def dot(a, b, out):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i] * b[i] if i < a.size else 0
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        cuda.atomic.add(out, 0, s[0])


@cudalab.jit
def conv1d(a, w, out):
    i = cuda.grid(1)
    if i < out.size:
        total = float32(0)
        for k in range(w.size):
            if i + k < a.size:
                total += a[i + k] * w[k]
        out[i] = total


@cudalab.jit
def block_scan(a, out):
    s = cuda.shared.array(256, float32)
    t = cuda.threadIdx.x
    i = cuda.grid(1)
    s[t] = a[i]
    cuda.syncthreads()
    offset = 1
    while offset < 256:
        v = s[t - offset] if t >= offset else 0
        cuda.syncthreads()
        s[t] += v
        cuda.syncthreads()
        offset *= 2
    out[i] = s[t]


@cudalab.jit
def row_sums(a, out):
    s = cuda.shared.array(256, float32)
    r, t = cuda.blockIdx.x, cuda.threadIdx.x
    s[t] = a[r, t]
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if t < stride:
            s[t] += s[t + stride]
        cuda.syncthreads()
        stride //= 2
    if t == 0:
        out[r] = s[0]


@cudalab.jit
def matmul(A, B, C):
    sA = cuda.shared.array((16, 16), float32)
    sB = cuda.shared.array((16, 16), float32)
    r, c = cuda.grid(2)
    tr, tc = cuda.threadIdx.x, cuda.threadIdx.y
    acc = float32(0)
    for t in range(A.shape[1] // 16):
        sA[tr, tc] = A[r, t * 16 + tc]
        sB[tr, tc] = B[t * 16 + tr, c]
        cuda.syncthreads()
        for k in range(16):
            acc += sA[tr, k] * sB[k, tc]
        cuda.syncthreads()
    C[r, c] = acc
