"""Atomics on global and shared memory: every atomicXxx and type, CAS loops, locks, fences.

Thread order is not deterministic on a GPU, so every kernel here is written so that its outputs are:
commutative operations only, one thread per address where return values are kept, or counts of the
values returned rather than which thread got which.
"""
import numpy as np

from . import F32_EDGES, Corpus, f32_mix, i32_mix, i64_mix

CASES = Corpus("atomics")
case = CASES.case


case("histogram_global", r'''
__global__ void histogram(const int* data, unsigned* bins, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&bins[data[i] & 63], 1u);
}''', "histogram", 4, 128, lambda r: [r.zipf(1.5, 5000).astype(np.int32), np.zeros(64, np.uint32), np.int32(5000)])

case("histogram_shared_privatized", r'''
#define BINS 256
__global__ void histo_shared(const unsigned char* data, unsigned* bins, int n) {
  __shared__ unsigned local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
    atomicAdd(&local[data[i]], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x)
    if (local[b]) atomicAdd(&bins[b], local[b]);
}''', "histo_shared", 3, 96, lambda r: [r.binomial(255, 0.3, 6000).astype(np.uint8), np.zeros(256, np.uint32),
                                        np.int32(6000)])

case("int_atomic_family", r'''
__global__ void family(const int* v, int* s, unsigned* u) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = v[i];
  atomicAdd(&s[0], x);      atomicSub(&s[1], x);
  atomicMin(&s[2], x);      atomicMax(&s[3], x);
  atomicAnd(&s[4], x | 0x10000);   atomicOr(&s[5], x & 0x00F0F0F0);
  atomicXor(&s[6], x);      atomicAdd(&s[7 + (x & 3)], 1);
  unsigned y = (unsigned)x;
  atomicAdd(&u[0], y);      atomicSub(&u[1], y);
  atomicMin(&u[2], y);      atomicMax(&u[3], y);
  atomicAnd(&u[4], ~y | 1u); atomicOr(&u[5], y >> 20);
  atomicXor(&u[6], y * 2654435761u);
}''', "family", 2, 128, lambda r: [i32_mix(r, 256), np.array([0, 0, 0x7FFFFFFF, -2 ** 31, -1, 0, 0x5A5A5A5A, 0, 0, 0, 0],
                                                              np.int64).astype(np.int32),
                                   np.array([0, 0, 0xFFFFFFFF, 0, 0xFFFFFFFF, 0, 0], np.uint32)])

case("int64_atomic_family", r'''
__global__ void family64(const long long* v, unsigned long long* u, long long* s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long y = (unsigned long long)v[i];
  atomicAdd(&u[0], y);
  atomicMin(&u[1], y);       atomicMax(&u[2], y);
  atomicAnd(&u[3], y | 0xFFFF0000FFFF0000ull);
  atomicOr(&u[4], y & 0x0101010101010101ull);
  atomicXor(&u[5], y);
  atomicMin(&s[0], v[i]);    atomicMax(&s[1], v[i]);
}''', "family64", 2, 64, lambda r: [i64_mix(r, 128), np.array([0, 2 ** 64 - 1, 0, 2 ** 64 - 1, 0, 7], np.uint64),
                                    np.array([2 ** 63 - 1, -2 ** 63], np.int64)])

case("returned_values_are_a_permutation", r'''
__global__ void tickets(unsigned* counters, unsigned* seen_add, unsigned* seen_inc, unsigned* seen_dec,
                        unsigned long long* wide, unsigned* seen_wide) {
  unsigned a = atomicAdd(&counters[0], 1u);
  atomicAdd(&seen_add[a], 1u);
  unsigned b = atomicInc(&counters[1], 99u);      // wraps to 0 after 99
  atomicAdd(&seen_inc[b], 1u);
  unsigned c = atomicDec(&counters[2], 20u);      // 0 (and > 20) wrap to 20
  atomicAdd(&seen_dec[c], 1u);
  unsigned long long w = atomicAdd(&wide[0], 0x100000000ull);
  atomicAdd(&seen_wide[(w >> 32) & 511], 1u);
}''', "tickets", 3, 128, lambda r: [np.array([0, 0, 5], np.uint32), np.zeros(384, np.uint32), np.zeros(100, np.uint32),
                                    np.zeros(64, np.uint32), np.array([0xFFFFFF0000000000], np.uint64),
                                    np.zeros(512, np.uint32)])

case("atomic_exchange_unique_slots", r'''
__global__ void exchange(int* slots, float* fslots, unsigned long long* wslots, int* old, float* fold,
                         unsigned long long* wold) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  old[i] = atomicExch(&slots[i], i * 3 - 100);
  fold[i] = atomicExch(&fslots[i], -(float)i);
  wold[i] = atomicExch(&wslots[i], ~(unsigned long long)i);
}''', "exchange", 2, 64, lambda r: [i32_mix(r, 128), f32_mix(r, 128), i64_mix(r, 128).view(np.uint64),
                                    np.zeros(128, np.int32), np.zeros(128, np.float32), np.zeros(128, np.uint64)])

case("atomic_cas_winner_by_data", r'''
__global__ void cas(int* slots, const int* owner, int* old, unsigned long long* wslots, unsigned short* hslots) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int s = i % 32;
  // Only the thread named owner[s] expects the right value, so exactly it succeeds.
  int expect = owner[s] == i ? slots[s] : slots[s] + 1;
  old[i] = atomicCAS(&slots[s], expect, expect + 1000 + i) == expect;
  atomicCAS(&wslots[i], (unsigned long long)i, 0xAAAA000000000000ull + i);
  unsigned short h = hslots[i], seen;
  while ((seen = atomicCAS(&hslots[i], h, (unsigned short)(h * 3 + 1))) != h) h = seen;
}''', "cas", 2, 64, lambda r: [np.arange(32, dtype=np.int32) * 10, np.where(np.arange(32) % 2, np.arange(32) + 32 * r.integers(0, 4, 32), -1).astype(np.int32),
                               np.zeros(128, np.int32), (np.arange(128) + (np.arange(128) % 3 == 0)).astype(np.uint64),
                               r.integers(0, 2 ** 16, 128).astype(np.uint16)])

case("cas_loop_float_max_and_double_product", r'''
__device__ float atomic_max_float(float* addr, float v) {
  int* p = (int*)addr;
  int old = *p, assumed;
  do {
    assumed = old;
    if (__int_as_float(assumed) >= v) break;
    old = atomicCAS(p, assumed, __float_as_int(v));
  } while (assumed != old);
  return __int_as_float(old);
}
__device__ double atomic_mul_double(double* addr, double v) {
  unsigned long long* p = (unsigned long long*)addr;
  unsigned long long old = *p, assumed;
  do {
    assumed = old;
    old = atomicCAS(p, assumed, __double_as_longlong(__longlong_as_double(assumed) * v));
  } while (assumed != old);
  return __longlong_as_double(old);
}
__global__ void casloops(const float* x, const double* m, float* fmax_out, double* prod) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomic_max_float(&fmax_out[i & 7], x[i]);
  atomic_mul_double(&prod[i & 3], m[i]);
}''', "casloops", 2, 128, lambda r: [(r.standard_normal(256) * 100).astype(np.float32),
                                     np.exp2(r.integers(-3, 4, 256)).astype(np.float64) * np.where(r.random(256) < 0.1, -1, 1),
                                     np.full(8, -np.inf, np.float32), np.array([1.0, -1.0, 0.5, 3.0])])

case("float_double_atomic_add_exact_sums", r'''
__global__ void fsum(const float* x, const double* y, float* fs, double* ds, float* shared_out) {
  __shared__ float s[4];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 4) s[threadIdx.x] = 0.0f;
  __syncthreads();
  atomicAdd(&fs[i & 3], x[i]);
  atomicAdd(&ds[i & 1], y[i]);
  atomicAdd(&s[i & 3], x[i] * 0.5f);
  __syncthreads();
  if (threadIdx.x < 4) atomicAdd(&shared_out[threadIdx.x], s[threadIdx.x]);
}''', "fsum", 4, 128, lambda r: [r.integers(-1000, 1000, 512).astype(np.float32), r.integers(-10 ** 6, 10 ** 6, 512) * 0.25,
                                 np.array([0.0, -0.0, 1e6, -3.5], np.float32), np.array([0.0, 2.0 ** 40]),
                                 np.zeros(4, np.float32)])

case("atomic_add_special_values_one_thread_each", r'''
__global__ void fspecial(float* g, const float* add, float* old, double* dg, const double* dadd, double* dold, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  s[threadIdx.x] = g[i + n];
  old[i] = atomicAdd(&g[i], add[i]);              // global f32 atomic add (flushes denormals?)
  old[i + n] = atomicAdd(&s[threadIdx.x], add[i]); // shared f32 atomic add
  g[i + n] = s[threadIdx.x];
  dold[i] = atomicAdd(&dg[i], dadd[i]);
}''', "fspecial", 7, 256, lambda r: [np.tile(np.repeat(F32_EDGES, F32_EDGES.size), 2), np.tile(F32_EDGES, F32_EDGES.size),
                                     np.zeros(2 * F32_EDGES.size ** 2, np.float32),
                                     np.repeat(F32_EDGES, F32_EDGES.size).astype(np.float64) * 1e-300,
                                     np.tile(F32_EDGES, F32_EDGES.size).astype(np.float64) * 1e-300,
                                     np.zeros(F32_EDGES.size ** 2), np.int32(F32_EDGES.size ** 2)])

case("half_and_bfloat16_atomic_add", r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void hsum(const float* x, __half* h, __half2* h2, __nv_bfloat162* b2, __nv_bfloat16* b) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  atomicAdd(&h[i & 3], __float2half(v));
  atomicAdd(&h2[i & 1], __floats2half2_rn(v, -2.0f * v));
  atomicAdd(&b2[i & 1], __floats2bfloat162_rn(v, 0.5f));
  atomicAdd(&b[i & 1], __float2bfloat16(v));
}''', "hsum", 2, 64, lambda r: [r.integers(-4, 5, 128).astype(np.float32), np.zeros(4, np.float16),
                                np.zeros(4, np.float16), np.zeros(4, np.uint16), np.zeros(2, np.uint16)])

case("scoped_atomics_block_and_system", r'''
__global__ void scoped(const int* v, int* out, unsigned long long* wide) {
  __shared__ int s[2];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (threadIdx.x < 2) s[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd_block(&s[0], v[i]);
  atomicMax_block(&s[1], v[i]);
  atomicOr_system(&out[2 * gridDim.x], 1 << (i & 31));
  atomicAdd_system(&wide[0], (unsigned long long)(unsigned)v[i]);
  __syncthreads();
  if (threadIdx.x == 0) { out[2 * blockIdx.x] = s[0]; out[2 * blockIdx.x + 1] = s[1]; }
}''', "scoped", 3, 64, lambda r: [r.integers(-10 ** 6, 10 ** 6, 192).astype(np.int32), np.zeros(7, np.int32),
                                  np.zeros(1, np.uint64)])

case("last_block_done_reduction", r'''
__device__ unsigned retired = 0;
__global__ void sum_all(const float* in, float* partial, float* total, int n) {
  __shared__ float s[128];
  __shared__ bool last;
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int k = 64; k > 0; k >>= 1) { if (t < k) s[t] += s[t + k]; __syncthreads(); }
  if (t == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    last = atomicInc(&retired, gridDim.x - 1) == gridDim.x - 1;   // wraps to 0: ready for the next launch
  }
  __syncthreads();
  if (last && t == 0) {
    float acc = 0.0f;
    for (int b = 0; b < gridDim.x; ++b) acc += ((volatile float*)partial)[b];
    *total = acc;
  }
}''', "sum_all", 6, 128, lambda r: [r.standard_normal(700).astype(np.float32), np.zeros(6, np.float32),
                                    np.zeros(1, np.float32), np.int32(700)])

case("spin_lock_one_thread_per_block", r'''
__global__ void locked(int* mutex, int* counter, int* log) {
  if (threadIdx.x != 0) return;
  while (atomicCAS(mutex, 0, 1) != 0) { }
  __threadfence();
  int c = *(volatile int*)counter;      // a plain read-modify-write, safe only under the lock
  *(volatile int*)counter = c + 1 + blockIdx.x;
  atomicAdd(&log[blockIdx.x], 1);
  __threadfence();
  atomicExch(mutex, 0);
}''', "locked", 8, 32, lambda r: [np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(8, np.int32)])

case("warp_aggregated_atomic_compaction", r'''
__global__ void compact(const int* in, int* rank, int* count, long long* checksum, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  bool keep = i < n && in[i] % 3 == 0;
  unsigned mask = __ballot_sync(0xffffffffu, keep);
  int lane = threadIdx.x & 31, leader = __ffs(mask) - 1;
  if (lane == leader) atomicAdd(count, __popc(mask));    // one atomic per warp instead of one per thread
  if (keep) {
    rank[i] = __popc(mask & ((1u << lane) - 1));          // the slot within the warp's share
    atomicAdd((unsigned long long*)checksum, (unsigned long long)(long long)in[i]);
  }
}''', "compact", 4, 128, lambda r: [r.integers(-1000, 1000, 500).astype(np.int32), np.full(500, -1, np.int32),
                                    np.zeros(1, np.int32), np.zeros(1, np.int64), np.int32(500)])
