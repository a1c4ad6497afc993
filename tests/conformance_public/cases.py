# Copied unchanged from the project's shared public conformance material (shared/conformance/cases.py)
# so that it travels with the repository (e.g. to a GPU machine). Keep in sync with the original.
"""Public conformance kernels for cudalab: CUDA C++ source, launch shape, inputs, numpy reference.

Every reference here was checked against a real NVIDIA GPU. Each case is a dict:
  name, src, kernel (C++ name; templates as e.g. "scale<3>"), grid, block, shared (dynamic bytes),
  make() -> kernel arguments (numpy arrays are copied to the device and back; numpy scalars are
  passed by value with their dtype), ref(*inputs) -> {argument index: expected array},
  exact (bit-for-bit) or rtol/atol, and consts {global name: numpy array} to copy in first.
"""
import numpy as np

rng = np.random.default_rng(20261122)
CASES = []


def case(name, src, kernel, grid, block, make, ref, shared=0, rtol=1e-5, atol=1e-6, exact=False, consts=None):
    CASES.append(dict(name=name, src=src, kernel=kernel, grid=grid, block=block, make=make, ref=ref,
                      shared=shared, rtol=rtol, atol=atol, exact=exact, consts=consts or {}))


# ------------------------------------------------------------------ indexing and control flow
case("matadd_2d", r'''
#define W 70
#define H 45
__global__ void MatAdd(const float* A, const float* B, float* C) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (col < W && row < H) C[row * W + col] = A[row * W + col] + B[row * W + col];
}''', "MatAdd", (5, 3), (16, 16),
     lambda: [rng.random(45 * 70, dtype=np.float32), rng.random(45 * 70, dtype=np.float32), np.zeros(45 * 70, np.float32)],
     lambda a, b, c: {2: a + b}, exact=True)

case("odd_even_divergence", r'''
__global__ void oddeven(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  if (v & 1) { v = 3 * v + 1; if (v % 5 == 0) v = -v; }
  else       { v = v / 2; }
  out[i] = v;
}''', "oddeven", 4, 64,
     lambda: [rng.integers(-1000, 1000, 250).astype(np.int32), np.zeros(250, np.int32), np.int32(250)],
     lambda a, o, n: {1: np.where(a & 1, np.where((3 * a + 1) % 5 == 0, -(3 * a + 1), 3 * a + 1),
                                  np.trunc(a / 2).astype(np.int32))}, exact=True)


def _gcd(a, b):
    return np.array([np.gcd(x, y) for x, y in zip(a, b)], np.int32)


case("gcd_while_loop", r'''
__device__ int gcd(int a, int b) { while (b != 0) { int t = a % b; a = b; b = t; } return a; }
__global__ void gcdk(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = gcd(a[i], b[i]);
}''', "gcdk", 2, 128,
     lambda: [rng.integers(1, 100000, 200).astype(np.int32), rng.integers(1, 100000, 200).astype(np.int32),
              np.zeros(200, np.int32), np.int32(200)],
     lambda a, b, o, n: {2: _gcd(a, b)}, exact=True)

case("template_scale", r'''
template <int K> __global__ void scale(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * K + (i % K);
}''', "scale<3>", 3, 32,
     lambda: [np.arange(90, dtype=np.int32), np.int32(90)],
     lambda x, n: {0: x * 3 + np.arange(90) % 3}, exact=True)

# ------------------------------------------------------------------ integer and float semantics
case("int64_and_bits", r'''
__global__ void bits(const unsigned* a, unsigned long long* wide, int* misc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned v = a[i];
  wide[i] = (unsigned long long)v * 2654435761ull + ((unsigned long long)v << 33);
  misc[4 * i + 0] = __popc(v);
  misc[4 * i + 1] = __clz(v);
  misc[4 * i + 2] = (int)(v >> 7) ^ (int)(v << 3);
  misc[4 * i + 3] = __umulhi(v, 0x9E3779B9u);
}''', "bits", 1, 100,
     lambda: [rng.integers(0, 2**32, 100, dtype=np.uint64).astype(np.uint32), np.zeros(100, np.uint64),
              np.zeros(400, np.int32), np.int32(100)],
     lambda a, w, m, n: {1: a.astype(np.uint64) * np.uint64(2654435761) + (a.astype(np.uint64) << np.uint64(33)),
                         2: np.stack([np.array([bin(int(v)).count("1") for v in a]),
                                      np.array([32 - int(v).bit_length() for v in a]),
                                      ((a >> 7).astype(np.int64) ^ ((a.astype(np.uint64) << 3) & 0xFFFFFFFF).astype(np.int64)).astype(np.uint32).view(np.int32),
                                      ((a.astype(np.uint64) * 0x9E3779B9) >> 32).astype(np.uint32).view(np.int32)], 1).ravel()},
     exact=True)

case("float_to_int_rounding", r'''
__global__ void rnd(const float* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = __float2int_rn(x[i]);
  out[4 * i + 1] = __float2int_rz(x[i]);
  out[4 * i + 2] = __float2int_rd(x[i]);
  out[4 * i + 3] = __float2int_ru(x[i]);
}''', "rnd", 1, 64,
     lambda: [np.array(list(np.arange(-8, 8) * 0.5) + list(rng.normal(0, 100, 48)), np.float32),
              np.zeros(256, np.int32), np.int32(64)],
     lambda x, o, n: {1: np.stack([np.rint(x), np.trunc(x), np.floor(x), np.ceil(x)], 1).astype(np.int32).ravel()},
     exact=True)

case("double_newton_sqrt", r'''
__global__ void nsqrt(const double* x, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double g = x[i] > 1.0 ? x[i] / 2.0 : 1.0;
  for (int k = 0; k < 60; ++k) g = 0.5 * (g + x[i] / g);
  out[2 * i] = g;
  out[2 * i + 1] = sqrt(x[i]);
}''', "nsqrt", 1, 50,
     lambda: [rng.random(50) * 1e4, np.zeros(100), np.int32(50)],
     lambda x, o, n: {1: np.stack([np.sqrt(x), np.sqrt(x)], 1).ravel()}, rtol=1e-15, atol=0)

# ------------------------------------------------------------------ shared memory and barriers
case("tiled_matmul_macro", r'''
#define TILE 16
__global__ void MatMul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE];
  __shared__ float Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.0f;
  for (int t = 0; t < (n + TILE - 1) / TILE; ++t) {
    As[threadIdx.y][threadIdx.x] = (row < n && t * TILE + threadIdx.x < n) ? A[row * n + t * TILE + threadIdx.x] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (col < n && t * TILE + threadIdx.y < n) ? B[(t * TILE + threadIdx.y) * n + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}''', "MatMul", (3, 3), (16, 16),
     lambda: [rng.random(40 * 40, dtype=np.float32), rng.random(40 * 40, dtype=np.float32), np.zeros(1600, np.float32), np.int32(40)],
     lambda a, b, c, n: {2: (a.reshape(40, 40).astype(np.float64) @ b.reshape(40, 40)).ravel()}, rtol=1e-5)

case("reduce_sequential_addressing", r'''
__global__ void reduce(const float* in, float* partial, int n) {
  __shared__ float s[256];
  unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
  float v = 0.0f;
  if (i < n) v += in[i];
  if (i + blockDim.x < n) v += in[i + blockDim.x];
  s[t] = v;
  __syncthreads();
  for (unsigned k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) partial[blockIdx.x] = s[0];
}''', "reduce", 8, 256,
     lambda: [rng.integers(0, 100, 4000).astype(np.float32), np.zeros(8, np.float32), np.int32(4000)],
     lambda x, p, n: {1: np.pad(x, (0, 4096 - 4000)).reshape(8, 512).sum(1)}, exact=True)

case("dynamic_shared_reverse", r'''
__global__ void reverse(int* d, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x;
  s[t] = d[blockIdx.x * n + t];
  __syncthreads();
  d[blockIdx.x * n + t] = s[n - t - 1];
}''', "reverse", 3, 100,
     lambda: [np.arange(300, dtype=np.int32), np.int32(100)],
     lambda d, n: {0: d.reshape(3, 100)[:, ::-1].ravel()}, shared=400, exact=True)

# ------------------------------------------------------------------ atomics and warp primitives
case("global_atomic_histogram", r'''
__global__ void hist(const unsigned char* data, unsigned* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    atomicAdd(&bins[data[i] >> 4], 1u);
}''', "hist", 4, 128,
     lambda: [rng.integers(0, 256, 5000).astype(np.uint8), np.zeros(16, np.uint32), np.int32(5000)],
     lambda d, b, n: {1: np.bincount(d >> 4, minlength=16)}, exact=True)

case("atomic_cas_float_max", r'''
__device__ float atomicMaxFloat(float* addr, float v) {
  int* p = (int*)addr; int old = *p, assumed;
  do { assumed = old; if (__int_as_float(assumed) >= v) break;
       old = atomicCAS(p, assumed, __float_as_int(v)); } while (assumed != old);
  return __int_as_float(old);
}
__global__ void fmaxk(const float* x, float* m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicMaxFloat(m, x[i]);
}''', "fmaxk", 10, 100,
     lambda: [rng.normal(0, 10, 1000).astype(np.float32), np.full(1, -1e30, np.float32), np.int32(1000)],
     lambda x, m, n: {1: np.array([x.max()], np.float32)}, exact=True)

case("warp_shfl_down_sum", r'''
__global__ void wsum(const int* in, int* out) {
  int v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffff, v, off);
  if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}''', "wsum", 2, 128,
     lambda: [rng.integers(-50, 50, 256).astype(np.int32), np.zeros(8, np.int32)],
     lambda x, o: {1: x.reshape(8, 32).sum(1)}, exact=True)

case("ballot_and_popc", r'''
__global__ void vote(const float* x, unsigned* ballots, int* counts, int* anyall) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool pred = x[i] > 0.5f;
  unsigned b = __ballot_sync(0xffffffff, pred);
  int w = i / 32;
  if ((threadIdx.x & 31) == 0) {
    ballots[w] = b; counts[w] = __popc(b);
  }
  int a = __any_sync(0xffffffff, x[i] > 0.97f), l = __all_sync(0xffffffff, x[i] > 0.01f);
  if ((threadIdx.x & 31) == 1) anyall[w] = a * 2 + l;
}''', "vote", 1, 96,
     lambda: [rng.random(96, dtype=np.float32), np.zeros(3, np.uint32), np.zeros(3, np.int32), np.zeros(3, np.int32)],
     lambda x, b, c, aa: {1: np.array([int("".join("1" if v else "0" for v in (x[32 * w:32 * w + 32] > 0.5)[::-1]), 2) for w in range(3)], np.uint32),
                          2: (x > 0.5).reshape(3, 32).sum(1),
                          3: (x > 0.97).reshape(3, 32).any(1) * 2 + (x > 0.01).reshape(3, 32).all(1)},
     exact=True)

# ------------------------------------------------------------------ constant memory
POLY = np.array([1.0, -0.5, 0.25, 0.125], np.float32)
case("constant_polynomial", r'''
__constant__ float coef[4];
__global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = ((coef[3] * v + coef[2]) * v + coef[1]) * v + coef[0]; }
}''', "poly", 2, 64,
     lambda: [rng.random(100, dtype=np.float32), np.zeros(100, np.float32), np.int32(100)],
     lambda x, y, n: {1: ((POLY[3] * x.astype(np.float64) + POLY[2]) * x + POLY[1]) * x + POLY[0]},
     rtol=1e-6, consts={"coef": POLY})
