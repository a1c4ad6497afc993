"""The benchmark kernels in numba.cuda Python, run by numba's simulator (NUMBA_ENABLE_CUDASIM=1) and, unchanged,
by cudalab through the drop-in (cudalab.numba.install(), which numba-cuda compiles); see worker.py."""
from numba import cuda, float32, uint32, uint64


@cuda.jit
def vector_add(a, b, c, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        c[i] = a[i] + b[i]


@cuda.jit
def matmul(A, B, C, n):
    As = cuda.shared.array((16, 16), float32)
    Bs = cuda.shared.array((16, 16), float32)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row, col = cuda.blockIdx.y * 16 + ty, cuda.blockIdx.x * 16 + tx
    acc = float32(0.0)
    for t in range(n // 16):
        As[ty, tx] = A[row, t * 16 + tx]
        Bs[ty, tx] = B[t * 16 + ty, col]
        cuda.syncthreads()
        for k in range(16):
            acc += As[ty, k] * Bs[k, tx]
        cuda.syncthreads()
    C[row, col] = acc


@cuda.jit
def reduce(x, partial, n):
    s = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    s[tid] = x[i] if i < n else 0.0
    cuda.syncthreads()
    stride = cuda.blockDim.x // 2
    while stride > 0:
        if tid < stride:
            s[tid] += s[tid + stride]
        cuda.syncthreads()
        stride >>= 1
    if tid == 0:
        partial[cuda.blockIdx.x] = s[0]


@cuda.jit
def histogram(data, hist, n):
    local = cuda.shared.array(256, uint32)
    tid = cuda.threadIdx.x
    local[tid] = 0
    cuda.syncthreads()
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    if i < n:
        cuda.atomic.add(local, data[i], 1)
    cuda.syncthreads()
    cuda.atomic.add(hist, tid, local[tid])


@cuda.jit
def warp_reduce(x, out, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    v = x[i] if i < n else 0
    offset = 16
    while offset > 0:
        v += cuda.shfl_down_sync(0xffffffff, v, offset)
        offset >>= 1
    if cuda.threadIdx.x & 31 == 0:
        out[i // 32] = v


@cuda.jit
def collatz(start, steps, n):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i >= n:
        return
    x = uint64(start[i])
    s = 0
    while x != 1:      # uint64 constants: numba types uint64 mixed with int64 as float64
        x = x * uint64(3) + uint64(1) if x & uint64(1) else x >> uint64(1)
        s += 1
    steps[i] = s
