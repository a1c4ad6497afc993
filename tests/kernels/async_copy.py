"""Asynchronous copies and barriers: cp.async (sizes, zero-fill, groups), mbarrier (phases, tokens,
tx-count), cuda::barrier, cuda::pipeline, cooperative_groups::memcpy_async, cp.async.bulk and its
reductions (sm_90), and named barriers whose result depends on real producer/consumer scheduling.

PTX-level operations are written as inline asm, so the GPU and the emulator run the same instructions
whatever libcu++ version each compiler ships; the C++ APIs are used where they are the subject.
"""
import numpy as np

from . import Corpus, f32_mix, i32_mix

CASES = Corpus("async_copy")
case = CASES.case
SM90 = "compute_90"

# shared and global addresses for inline PTX, and the mbarrier operations the cases use
PTX = r'''
#define SMEM(p) static_cast<unsigned>(__cvta_generic_to_shared(p))
#define GMEM(p) static_cast<unsigned long long>(__cvta_generic_to_global(p))
__device__ __forceinline__ void mbar_init(void* bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(SMEM(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ unsigned long long mbar_arrive(void* bar) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(state) : "r"(SMEM(bar)) : "memory");
  return state;
}
__device__ __forceinline__ bool mbar_test(void* bar, unsigned long long state) {
  unsigned ok;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(ok) : "r"(SMEM(bar)), "l"(state) : "memory");
  return ok;
}
__device__ __forceinline__ bool mbar_test_parity(void* bar, unsigned parity) {
  unsigned ok;
  asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(ok) : "r"(SMEM(bar)), "r"(parity) : "memory");
  return ok;
}
__device__ __forceinline__ unsigned mbar_pending(unsigned long long state) {
  unsigned n;
  asm volatile("mbarrier.pending_count.b64 %0, %1;" : "=r"(n) : "l"(state));
  return n;
}
'''

# sm_90: try_wait, tx-counts, bulk copies
PTX90 = PTX + r'''
__device__ __forceinline__ bool mbar_try_parity(void* bar, unsigned parity) {
  unsigned ok;
  asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
               : "=r"(ok) : "r"(SMEM(bar)), "r"(parity) : "memory");
  return ok;
}
__device__ __forceinline__ void mbar_wait_parity(void* bar, unsigned parity) {
  while (!mbar_try_parity(bar, parity)) {}
}
__device__ __forceinline__ unsigned long long mbar_arrive_tx(void* bar, unsigned bytes) {
  unsigned long long state;
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 %0, [%1], %2;"
               : "=l"(state) : "r"(SMEM(bar)), "r"(bytes) : "memory");
  return state;
}
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}
__device__ __forceinline__ void bulk_g2s(void* dst, const void* src, unsigned bytes, void* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
               :: "r"(SMEM(dst)), "l"(GMEM(src)), "r"(bytes), "r"(SMEM(bar)) : "memory");
}
'''


# ---------------------------------------------------------------- cp.async (sm_80)

case("cp_async_ca_4_8_16_bytes", PTX + r'''
__global__ void ca_sizes(const int4* in, int4* out) {
  __shared__ int4 s[3][64];
  int t = threadIdx.x;
  for (int k = 0; k < 3; ++k) s[k][t] = make_int4(-1, -2, -3, -4);   // bytes a copy leaves alone stay visible
  __syncthreads();
  const char* src = reinterpret_cast<const char*>(in);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(SMEM(&s[0][t])), "l"(GMEM(src + 4 * t)) : "memory");
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(SMEM(&s[1][t])), "l"(GMEM(src + 8 * t)) : "memory");
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(SMEM(&s[2][t])), "l"(GMEM(src + 16 * t)) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  for (int k = 0; k < 3; ++k) out[64 * k + t] = s[k][63 - t];
}''', "ca_sizes", 1, 64, lambda r: [i32_mix(r, 256), np.zeros(768, np.int32)])

case("cp_async_cg_src_size_zero_fill", PTX + r'''
__global__ void zero_fill(const int4* in, int4* out) {
  __shared__ int4 s[128];
  int t = threadIdx.x;
  s[t] = make_int4(-1, -1, -1, -1);
  __syncthreads();
  unsigned n = t % 17;                      // 0 to 16 bytes come from global memory, the rest are zeros
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(SMEM(&s[t])), "l"(GMEM(in + t)), "r"(n) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
  __syncthreads();
  out[t] = s[(5 * t) & 127];
}''', "zero_fill", 1, 128, lambda r: [i32_mix(r, 512), np.zeros(512, np.int32)])

case("cp_async_ca_src_size_and_ignore_src", PTX + r'''
__global__ void partial(const int2* in, const int* flag, int2* out) {
  __shared__ int2 a[64], b[64];
  int t = threadIdx.x;
  a[t] = make_int2(0x11111111, 0x22222222);
  b[t] = make_int2(0x33333333, 0x44444444);
  __syncthreads();
  unsigned n = (t * 3) % 9;                 // an 8-byte copy taking 0..8 bytes from memory
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" :: "r"(SMEM(&a[t])), "l"(GMEM(in + t)), "r"(n) : "memory");
  asm volatile("{ .reg .pred p; setp.ne.b32 p, %2, 0; cp.async.ca.shared.global [%0], [%1], 8, p; }"
               :: "r"(SMEM(&b[t])), "l"(GMEM(in + 64 + t)), "r"(flag[t]) : "memory");   // ignore-src: zeros
  asm volatile("cp.async.commit_group;" ::: "memory");
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  __syncthreads();
  out[t] = a[63 - t];
  out[64 + t] = b[(t + 17) & 63];
}''', "partial", 1, 64, lambda r: [i32_mix(r, 256), (r.integers(0, 3, 64) == 0).astype(np.int32),
                                   np.zeros(256, np.int32)])

case("cp_async_cache_hints_and_pipeline_zfill", PTX + r'''
#include <cuda_pipeline.h>
__global__ void hints(const int4* in, int4* out) {
  __shared__ int4 s[2][64];
  int t = threadIdx.x;
  s[0][t] = s[1][t] = make_int4(9, 9, 9, 9);
  __syncthreads();
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
  asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::128B [%0], [%1], 16, %2;"
               :: "r"(SMEM(&s[0][t])), "l"(GMEM(in + t)), "l"(policy) : "memory");
  __pipeline_memcpy_async(&s[1][t], &in[64 + t], sizeof(int4), (t & 3) * 4);   // the last zfill bytes are zeros
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[0][(t + 9) & 63];
  out[64 + t] = s[1][63 - t];
}''', "hints", 1, 64, lambda r: [i32_mix(r, 512), np.zeros(512, np.int32)])

case("cp_async_commit_groups_wait_prior", PTX + r'''
__global__ void groups(const int* in, int* out) {
  __shared__ int s[4][128];
  int t = threadIdx.x;
  const int* base = in + blockIdx.x * 512;
  for (int g = 0; g < 4; ++g) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(SMEM(&s[g][t])), "l"(GMEM(base + 128 * g + t)) : "memory");
    asm volatile("cp.async.commit_group;" ::: "memory");
  }
  asm volatile("cp.async.wait_group 2;" ::: "memory");    // this thread's groups 0 and 1 are complete
  int older = s[0][t] * 3 + s[1][t];                       // its own copies: no barrier needed
  asm volatile("cp.async.wait_group 1;" ::: "memory");
  older = older * 5 + s[2][t];
  asm volatile("cp.async.wait_group 0;" ::: "memory");
  out[blockIdx.x * 128 + t] = older * 7 - s[3][t];
}''', "groups", 3, 128, lambda r: [i32_mix(r, 1536), np.zeros(384, np.int32)])

case("pipeline_primitives_double_buffer", r'''
#include <cuda_pipeline.h>
__global__ void double_buffer(const int* in, int* out, int tiles) {
  __shared__ int s[2][128];
  int t = threadIdx.x;
  const int* base = in + blockIdx.x * tiles * 128;
  int acc = 0;
  __pipeline_memcpy_async(&s[0][t], &base[t], sizeof(int));
  __pipeline_commit();
  for (int k = 0; k < tiles; ++k) {
    if (k + 1 < tiles) __pipeline_memcpy_async(&s[(k + 1) & 1][t], &base[(k + 1) * 128 + t], sizeof(int));
    __pipeline_commit();
    __pipeline_wait_prior(1);             // tile k is here, tile k+1 may still be in flight
    __syncthreads();
    acc = acc * 3 + (s[k & 1][(t * 5) & 127] ^ k);
    __syncthreads();                      // nobody reads buffer k&1 when it is refilled
  }
  out[blockIdx.x * 128 + t] = acc;
}''', "double_buffer", 2, 128, lambda r: [i32_mix(r, 2 * 6 * 128), np.zeros(256, np.int32), np.int32(6)])

case("cuda_pipeline_thread_scope_three_stages", r'''
#include <cuda/pipeline>
__global__ void thread_pipe(const int* in, int* out, int tiles) {
  constexpr int stages = 3;
  __shared__ int s[stages][64];
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  int t = threadIdx.x;
  const int* base = in + blockIdx.x * tiles * 64;
  int fetch = 0, acc = 0;
  for (int k = 0; k < tiles; ++k) {
    for (; fetch < tiles && fetch < k + stages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(&s[fetch % stages][t], &base[fetch * 64 + t], sizeof(int), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc = acc * 5 + (s[k % stages][t] ^ (k << 4));
    pipe.consumer_release();
  }
  out[blockIdx.x * 64 + t] = acc;
}''', "thread_pipe", 2, 64, lambda r: [i32_mix(r, 2 * 7 * 64), np.zeros(128, np.int32), np.int32(7)])

case("cuda_pipeline_block_scope_producer_consumer", r'''
#include <cuda/pipeline>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void roles(const int* in, int* out, int tiles) {
  constexpr int stages = 2;
  __shared__ int s[stages][64];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
  auto block = cg::this_thread_block();
  int t = threadIdx.x;
  bool producer = t >= 64;                   // warp 2 copies, warps 0 and 1 compute
  auto pipe = cuda::make_pipeline(block, &state, producer ? cuda::pipeline_role::producer : cuda::pipeline_role::consumer);
  const int* base = in + blockIdx.x * tiles * 64;
  int acc = 0;
  for (int k = 0; k < tiles; ++k) {
    if (producer) {
      int p = t - 64;
      pipe.producer_acquire();
      cuda::memcpy_async(&s[k % stages][p], &base[k * 64 + p], sizeof(int), pipe);
      cuda::memcpy_async(&s[k % stages][p + 32], &base[k * 64 + p + 32], sizeof(int), pipe);
      pipe.producer_commit();
    } else {
      pipe.consumer_wait();
      acc = acc * 3 + s[k % stages][63 - t];
      pipe.consumer_release();
    }
  }
  if (!producer) out[blockIdx.x * 64 + t] = acc;
}''', "roles", 2, 96, lambda r: [i32_mix(r, 2 * 5 * 64), np.zeros(128, np.int32), np.int32(5)])

case("cg_memcpy_async_wait_prior", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void cg_copy(const int* in, int* out, int n) {
  extern __shared__ int s[];
  auto block = cg::this_thread_block();
  const int* a = in + blockIdx.x * 2 * n;
  cg::memcpy_async(block, s, a, sizeof(int) * n);
  cg::memcpy_async(block, s + n, a + n, sizeof(int) * n);
  cg::wait_prior<1>(block);                 // the first copy is complete for the whole block
  int x = s[(threadIdx.x * 7) % n];
  cg::wait(block);
  out[blockIdx.x * blockDim.x + threadIdx.x] = x * 1000 + s[n + (threadIdx.x * 11) % n];
}''', "cg_copy", 2, 96, lambda r: [i32_mix(r, 2 * 2 * 203), np.zeros(192, np.int32), np.int32(203)],
     shared=2 * 203 * 4)

case("cg_memcpy_async_warp_tiles", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace cg = cooperative_groups;
__global__ void tile_copy(const float* in, float* out) {
  __shared__ float s[4][96];
  auto block = cg::this_thread_block();
  auto warp = cg::tiled_partition<32>(block);
  int w = warp.meta_group_rank();
  cg::memcpy_async(warp, s[w], in + blockIdx.x * 384 + w * 96, sizeof(float) * 96);   // each warp its own row
  cg::wait(warp);
  float v = s[w][(warp.thread_rank() * 3 + 1) % 96];
  out[blockIdx.x * 128 + threadIdx.x] = v;
}''', "tile_copy", 2, 128, lambda r: [f32_mix(r, 768), np.zeros(256, np.float32)])

case("cuda_memcpy_async_with_cuda_barrier", r'''
#include <cuda/barrier>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void with_barrier(const float* in, float* out) {
  __shared__ float s[256];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, s, in + blockIdx.x * 256, sizeof(float) * 256, bar);
  bar.arrive_and_wait();
  out[blockIdx.x * 256 + threadIdx.x] = s[255 - threadIdx.x];
}''', "with_barrier", 2, 256, lambda r: [f32_mix(r, 512), np.zeros(512, np.float32)])

case("cuda_memcpy_async_bulk_one_thread", r'''
#include <cuda/barrier>
__global__ void one_thread(const int* in, int* out) {
  __shared__ alignas(16) int s[256];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  if (threadIdx.x == 0) init(&bar, blockDim.x);
  __syncthreads();
  if (threadIdx.x == 0)                      // on sm_90, 16-byte aligned sizes become one bulk copy
    cuda::memcpy_async(s, in + blockIdx.x * 256, cuda::aligned_size_t<16>(sizeof(s)), bar);
  bar.arrive_and_wait();
  out[blockIdx.x * 256 + threadIdx.x] = s[(threadIdx.x * 9) & 255] - threadIdx.x;
}''', "one_thread", 3, 256, lambda r: [i32_mix(r, 768), np.zeros(768, np.int32)], arch=SM90)

case("cp_async_mbarrier_arrive_noinc", PTX + r'''
__global__ void noinc(const int* in, int* out) {
  __shared__ int s[128];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  if (t == 0) mbar_init(&bar, 2 * blockDim.x);   // per thread: one async arrive-on, one arrive
  __syncthreads();
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(SMEM(&s[t])), "l"(GMEM(in + t)) : "memory");
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(SMEM(&s[64 + t])), "l"(GMEM(in + 64 + t)) : "memory");
  asm volatile("cp.async.mbarrier.arrive.noinc.shared.b64 [%0];" :: "r"(SMEM(&bar)) : "memory");
  unsigned long long state = mbar_arrive(&bar);
  while (!mbar_test(&bar, state)) {}
  out[t] = s[127 - t] * 2 + s[(t + 30) & 127];
}''', "noinc", 1, 64, lambda r: [i32_mix(r, 128), np.zeros(64, np.int32)])

case("cp_async_mbarrier_arrive_counts_itself", PTX + r'''
__global__ void inc(const int* in, int* out, int rounds) {
  __shared__ int s[2][64];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  if (t == 0) mbar_init(&bar, blockDim.x);       // the async arrive-on adds its own pending arrival
  __syncthreads();
  int acc = 0;
  for (int k = 0; k < rounds; ++k) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(SMEM(&s[k & 1][t])), "l"(GMEM(in + k * 64 + t)) : "memory");
    asm volatile("cp.async.mbarrier.arrive.shared.b64 [%0];" :: "r"(SMEM(&bar)) : "memory");
    unsigned long long state = mbar_arrive(&bar);
    while (!mbar_test(&bar, state)) {}
    acc = acc * 7 + s[k & 1][63 - t];
    __syncthreads();                          // the buffer is reused two rounds later
  }
  out[t] = acc;
}''', "inc", 1, 64, lambda r: [i32_mix(r, 5 * 64), np.zeros(64, np.int32), np.int32(5)])


# ---------------------------------------------------------------- mbarrier and cuda::barrier

case("mbarrier_tokens_pending_count_and_phases", PTX90 + r'''
__global__ void tokens(unsigned* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x != 0) return;
  unsigned long long s;
  mbar_init(&bar, 5);
  s = mbar_arrive(&bar);                                   // pending 5 -> 4
  out[0] = mbar_pending(s); out[1] = mbar_test(&bar, s);
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(SMEM(&bar)), "r"(2) : "memory");
  out[2] = mbar_pending(s); out[3] = mbar_test(&bar, s);
  asm volatile("mbarrier.arrive_drop.release.cta.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(SMEM(&bar)), "r"(1) : "memory");
  out[4] = mbar_pending(s); out[5] = mbar_test(&bar, s);
  s = mbar_arrive(&bar);                                   // the last arrival: phase 0 completes
  out[6] = mbar_pending(s); out[7] = mbar_test(&bar, s);
  out[8] = mbar_test_parity(&bar, 0); out[9] = mbar_test_parity(&bar, 1);
  asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;" : "=l"(s) : "r"(SMEM(&bar)), "r"(3) : "memory");
  out[10] = mbar_pending(s); out[11] = mbar_test(&bar, s);   // phase 1 expects 4 (one was dropped)
  s = mbar_arrive(&bar);
  out[12] = mbar_test(&bar, s); out[13] = mbar_test_parity(&bar, 1); out[14] = mbar_test_parity(&bar, 0);
  asm volatile("mbarrier.arrive.noComplete.shared.b64 %0, [%1], %2;" : "=l"(s) : "r"(SMEM(&bar)), "r"(2) : "memory");
  out[15] = mbar_pending(s); out[16] = mbar_test(&bar, s);
  asm volatile("mbarrier.inval.shared.b64 [%0];" :: "r"(SMEM(&bar)) : "memory");
  mbar_init(&bar, 1);
  s = mbar_arrive(&bar);
  out[17] = mbar_pending(s); out[18] = mbar_test(&bar, s); out[19] = mbar_test_parity(&bar, 0);
}''', "tokens", 1, 32, lambda r: [np.full(20, 0xDEAD, np.uint32)], arch=SM90)

case("mbarrier_expect_tx_complete_tx", PTX90 + r'''
__global__ void tx(unsigned* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x != 0) return;
  mbar_init(&bar, 1);
  unsigned long long s = mbar_arrive_tx(&bar, 64);           // one arrival, 64 bytes expected
  out[0] = mbar_test(&bar, s);
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(SMEM(&bar)), "r"(40) : "memory");
  out[1] = mbar_test(&bar, s);
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(SMEM(&bar)), "r"(8) : "memory");
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(SMEM(&bar)), "r"(24) : "memory");
  out[2] = mbar_test(&bar, s);
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(SMEM(&bar)), "r"(8) : "memory");
  out[3] = mbar_test(&bar, s); out[4] = mbar_try_parity(&bar, 0);
  // phase 1: the bytes complete before the arrival that expects them
  asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;" :: "r"(SMEM(&bar)), "r"(16) : "memory");
  s = mbar_arrive_tx(&bar, 16);
  out[5] = mbar_test(&bar, s); out[6] = mbar_test_parity(&bar, 1);
}''', "tx", 1, 32, lambda r: [np.full(8, 0xDEAD, np.uint32)], arch=SM90)

case("cuda_barrier_arrive_and_drop_rounds", r'''
#include <cuda/barrier>
__global__ void rounds(const int* in, int* out) {
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  __shared__ int sum[4];
  int t = threadIdx.x;
  if (t == 0) init(&bar, blockDim.x);
  if (t < 4) sum[t] = 0;
  __syncthreads();
  int mine = 1 + (t >> 5);                  // warp w takes part in w + 1 rounds, then drops out
  int v = in[blockIdx.x * blockDim.x + t];
  for (int r = 0; r < mine; ++r) {
    atomicAdd(&sum[r], v * (r + 1));
    if (r + 1 == mine) {
      bar.arrive_and_drop();
    } else {
      bar.arrive_and_wait();               // every thread of round r has added by now
      v = (v ^ sum[r]) & 0xFFFF;
    }
  }
  out[blockIdx.x * blockDim.x + t] = v;
}''', "rounds", 2, 128, lambda r: [r.integers(0, 1000, 256).astype(np.int32), np.zeros(256, np.int32)])

case("cuda_barrier_completion_function", r'''
#include <cuda/barrier>
struct Step {
  int* count;
  __device__ void operator()() noexcept { *count += 1; }
};
__global__ void completion(const int* in, int* out) {
  __shared__ int count, buf[64];
  __shared__ cuda::barrier<cuda::thread_scope_block, Step> bar;
  int t = threadIdx.x;
  if (t == 0) { count = 0; init(&bar, blockDim.x, Step{&count}); }
  __syncthreads();
  int v = in[t];
  for (int r = 0; r < 3; ++r) {
    buf[t] = v;
    bar.arrive_and_wait();                  // the completion step runs once per phase
    v = buf[63 - t] + count * 1000;
    bar.arrive_and_wait();
  }
  out[t] = v;
}''', "completion", 1, 64, lambda r: [r.integers(-500, 500, 64).astype(np.int32), np.zeros(64, np.int32)])

case("mbarrier_warp_specialized_try_wait_parity", PTX90 + r'''
__global__ void specialized(const int* in, int* out, int tiles) {
  __shared__ int buf[2][64];
  __shared__ unsigned long long full[2], empty[2];
  int t = threadIdx.x;                       // warp 0 produces, warps 1 and 2 consume
  if (t == 0) for (int i = 0; i < 2; ++i) { mbar_init(&full[i], 32); mbar_init(&empty[i], 64); }
  __syncthreads();
  const int* base = in + blockIdx.x * tiles * 64;
  if (t < 32) {
    for (int k = 0; k < tiles; ++k) {
      int s = k & 1;
      if (k >= 2) mbar_wait_parity(&empty[s], ((k >> 1) - 1) & 1);   // consumers are done with the buffer
      buf[s][t] = base[k * 64 + t] * 3;
      buf[s][t + 32] = base[k * 64 + t + 32] - k;
      mbar_arrive(&full[s]);
    }
  } else {
    int c = t - 32, acc = 0;
    for (int k = 0; k < tiles; ++k) {
      int s = k & 1;
      mbar_wait_parity(&full[s], (k >> 1) & 1);
      acc = acc * 3 + buf[s][63 - c];
      mbar_arrive(&empty[s]);
    }
    out[blockIdx.x * 64 + c] = acc;
  }
}''', "specialized", 2, 96, lambda r: [i32_mix(r, 2 * 6 * 64), np.zeros(128, np.int32), np.int32(6)], arch=SM90)

case("mbarrier_try_wait_with_time_hint", PTX90 + r'''
__global__ void hinted(const int* in, int* out) {
  __shared__ int s[64];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  if (t == 0) mbar_init(&bar, 32);
  __syncthreads();
  if (t >= 32) {                                 // warp 1 fills, warp 0 waits with a suspend-time hint
    s[t - 32] = in[t] + in[t - 32];
    s[t] = in[t] ^ 0x5A5A;
    mbar_arrive(&bar);
  } else {
    unsigned ok = 0;
    while (!ok)
      asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3; selp.u32 %0, 1, 0, p; }"
                   : "=r"(ok) : "r"(SMEM(&bar)), "r"(0), "r"(100000) : "memory");
    out[t] = s[t] * 2 + s[63 - t];
  }
}''', "hinted", 1, 64, lambda r: [i32_mix(r, 64), np.zeros(32, np.int32)], arch=SM90)


# ---------------------------------------------------------------- cp.async.bulk (sm_90)

case("bulk_copy_global_to_shared_sizes", PTX90 + r'''
__global__ void g2s(const int* in, int* out) {
  __shared__ alignas(16) int s[256];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  s[t] = -7;
  if (t == 0) mbar_init(&bar, 1);
  fence_proxy_async();
  __syncthreads();
  const int* src = in + blockIdx.x * 256;
  if (t == 0) {
    mbar_arrive_tx(&bar, 16 + 48 + 192 + 256);
    bulk_g2s(s, src + 4, 16, &bar);             // 4 ints
    bulk_g2s(s + 4, src + 100, 48, &bar);       // 12 ints
    bulk_g2s(s + 16, src + 16, 192, &bar);      // 48 ints
    bulk_g2s(s + 192, src + 128, 256, &bar);    // 64 ints over the end of the first 192
  }
  mbar_wait_parity(&bar, 0);
  out[blockIdx.x * 256 + t] = s[(t * 7) & 255];
}''', "g2s", 2, 256, lambda r: [i32_mix(r, 512), np.zeros(512, np.int32)], arch=SM90)

case("bulk_copy_shared_to_global_bulk_group", PTX90 + r'''
__global__ void s2g(const int* in, int* out) {
  __shared__ alignas(16) int s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t] * 3 + t;
  fence_proxy_async();                          // generic-proxy writes, then the async proxy reads them
  __syncthreads();
  if (t == 0) {
    int* dst = out + blockIdx.x * 512;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" :: "l"(GMEM(in)), "r"(256) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(GMEM(dst)), "r"(SMEM(s)), "r"(1024) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(GMEM(dst + 256)), "r"(SMEM(s + 32)), "r"(64) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;"
                 :: "l"(GMEM(dst + 320)), "r"(SMEM(s + 100)), "r"(128) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}''', "s2g", 2, 256, lambda r: [i32_mix(r, 512), np.full(1024, -1, np.int32)], arch=SM90)

case("bulk_copy_shared_to_shared_cluster", PTX90 + r'''
__global__ void s2s(const int* in, int* out) {
  __shared__ alignas(16) int src[128];
  __shared__ alignas(16) int dst[128];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  src[t] = in[blockIdx.x * 128 + t] ^ 0x55;
  dst[t] = 0;
  if (t == 0) mbar_init(&bar, 1);
  fence_proxy_async();
  __syncthreads();
  if (t == 0) {
    mbar_arrive_tx(&bar, 512);
    asm volatile("cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(SMEM(dst)), "r"(SMEM(src)), "r"(512), "r"(SMEM(&bar)) : "memory");
  }
  mbar_wait_parity(&bar, 0);
  out[blockIdx.x * 128 + t] = dst[127 - t] + dst[t];
}''', "s2s", 2, 128, lambda r: [i32_mix(r, 256), np.zeros(256, np.int32)], arch=SM90)


def _reduce_inputs(r):
    f = np.concatenate([f32_mix(r, 96), np.array([1e-45, -1e-45, 1.1754942e-38, 2e-38] * 8, np.float32)])
    g = np.concatenate([f32_mix(r, 96)[::-1], np.array([1e-45, 1e-45, -1.1754942e-38, -5e-39] * 8, np.float32)])
    return [f, g.copy(), i32_mix(r, 64), i32_mix(r, 512), r.integers(0, 2 ** 63, 32, dtype=np.uint64),
            r.integers(0, 2 ** 63, 32, dtype=np.uint64) * np.uint64(2), r.standard_normal(32),
            r.standard_normal(32)]


case("bulk_reduce_global_ops_and_types", PTX90 + r'''
__global__ void bulk_reduce(const float* f, float* gf, const int* v, int* gi, const unsigned long long* u,
                            unsigned long long* gu, const double* d, double* gd) {
  __shared__ alignas(16) float sf[128];
  __shared__ alignas(16) int si[64];
  __shared__ alignas(16) unsigned long long su[32];
  __shared__ alignas(16) double sd[32];
  int t = threadIdx.x;
  sf[t] = f[t];
  if (t < 64) si[t] = v[t];
  if (t < 32) { su[t] = u[t]; sd[t] = d[t]; }
  fence_proxy_async();
  __syncthreads();
  if (t == 0) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], 512;" :: "l"(GMEM(gf)), "r"(SMEM(sf)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.s32 [%0], [%1], 256;" :: "l"(GMEM(gi)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.s32 [%0], [%1], 256;" :: "l"(GMEM(gi + 64)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.max.u32 [%0], [%1], 256;" :: "l"(GMEM(gi + 128)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.and.b32 [%0], [%1], 256;" :: "l"(GMEM(gi + 192)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.or.b32 [%0], [%1], 256;" :: "l"(GMEM(gi + 256)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.xor.b32 [%0], [%1], 256;" :: "l"(GMEM(gi + 320)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.inc.u32 [%0], [%1], 256;" :: "l"(GMEM(gi + 384)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.dec.u32 [%0], [%1], 256;" :: "l"(GMEM(gi + 448)), "r"(SMEM(si)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u64 [%0], [%1], 256;" :: "l"(GMEM(gu)), "r"(SMEM(su)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], 256;" :: "l"(GMEM(gd)), "r"(SMEM(sd)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}''', "bulk_reduce", 1, 128, _reduce_inputs, arch=SM90)

case("bulk_reduce_half_and_bfloat16", PTX90 + r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void half_reduce(const __half* h, __half* gh, const __nv_bfloat16* b, __nv_bfloat16* gb) {
  __shared__ alignas(16) __half sh[64];
  __shared__ alignas(16) __nv_bfloat16 sb[64];
  int t = threadIdx.x;
  sh[t] = h[t];
  sb[t] = b[t];
  fence_proxy_async();
  __syncthreads();
  if (t == 0) {
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.f16 [%0], [%1], 128;" :: "l"(GMEM(gh)), "r"(SMEM(sh)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.min.f16 [%0], [%1], 128;" :: "l"(GMEM(gh + 64)), "r"(SMEM(sh)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16 [%0], [%1], 128;" :: "l"(GMEM(gb)), "r"(SMEM(sb)) : "memory");
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.max.bf16 [%0], [%1], 128;" :: "l"(GMEM(gb + 64)), "r"(SMEM(sb)) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}''', "half_reduce", 1, 64, lambda r: [r.standard_normal(64).astype(np.float16), (r.standard_normal(128) * 4).astype(np.float16),
                                       (r.standard_normal(64).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16),
                                       (r.standard_normal(128).astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)],
     arch=SM90)

case("bulk_reduce_shared_cluster_mbarrier", PTX90 + r'''
__global__ void shared_reduce(const int* in, int* out) {
  __shared__ alignas(16) int acc[64];
  __shared__ alignas(16) int part[64];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  acc[t] = in[t];
  part[t] = in[64 + t];
  if (t == 0) mbar_init(&bar, 1);
  fence_proxy_async();
  __syncthreads();
  if (t == 0) {
    mbar_arrive_tx(&bar, 256);
    asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%0], [%1], 128, [%2];"
                 :: "r"(SMEM(acc)), "r"(SMEM(part)), "r"(SMEM(&bar)) : "memory");
    asm volatile("cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.max.s32 [%0], [%1], 128, [%2];"
                 :: "r"(SMEM(acc + 32)), "r"(SMEM(part + 32)), "r"(SMEM(&bar)) : "memory");
  }
  mbar_wait_parity(&bar, 0);
  out[t] = acc[t];
}''', "shared_reduce", 1, 64, lambda r: [i32_mix(r, 128), np.zeros(64, np.int32)], arch=SM90)


# ---------------------------------------------------------------- named barriers, really scheduled

case("named_barriers_consumers_first_ping_pong", r'''
__global__ void ping_pong(const int* in, int* out, int rounds) {
  __shared__ int buf[64];
  int t = threadIdx.x, acc = 0;
  for (int k = 0; k < rounds; ++k) {
    if (t >= 64) {                          // consumers come first in the code and wait for the data
      asm volatile("bar.sync 1, 128;" ::: "memory");
      acc = acc * 3 + buf[127 - t];
      asm volatile("bar.arrive 2, 128;" ::: "memory");   // the buffer may be refilled
    } else {
      if (k > 0) asm volatile("bar.sync 2, 128;" ::: "memory");
      buf[t] = in[k * 64 + t] + k;
      asm volatile("bar.arrive 1, 128;" ::: "memory");
    }
  }
  if (t >= 64) out[t - 64] = acc;
}''', "ping_pong", 1, 128, lambda r: [i32_mix(r, 4 * 64), np.zeros(64, np.int32), np.int32(4)])

case("named_barrier_red_popc_and_or_per_group", r'''
__global__ void groups(const int* in, int* out) {
  int t = threadIdx.x, g = t >> 6;              // two groups of two warps, each on its own barrier
  int x = in[blockIdx.x * blockDim.x + t];
  int id = 1 + g, n = 0, a = 0, o = 0;
  asm volatile("{ .reg .pred p; setp.gt.s32 p, %2, 0; bar.red.popc.u32 %0, %1, 64, p; }" : "=r"(n) : "r"(id), "r"(x));
  asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %2, 0; bar.red.and.pred q, %1, 64, p; selp.s32 %0, 1, 0, q; }"
               : "=r"(a) : "r"(id), "r"(x & 1));
  asm volatile("{ .reg .pred p, q; setp.eq.s32 p, %2, 7; bar.red.or.pred q, %1, 64, p; selp.s32 %0, 1, 0, q; }"
               : "=r"(o) : "r"(id), "r"(x));
  out[blockIdx.x * blockDim.x + t] = n * 100 + a * 10 + o;
}''', "groups", 2, 128, lambda r: [np.concatenate([r.integers(-3, 4, 64), np.full(64, 7), r.integers(0, 2, 64) * 2 + 1,
                                                   r.integers(-9, 9, 64)]).astype(np.int32), np.zeros(256, np.int32)])

case("barrier_sync_aligned_register_ids", r'''
__global__ void reg_ids(const int* in, int* out) {
  __shared__ int buf[4][32];
  int t = threadIdx.x, w = t >> 5, lane = t & 31;
  // warps 0,1 pair on barrier 3, warps 2,3 on barrier 5; the second warp of a pair writes, the first reads
  unsigned id = (w < 2) ? 3 : 5;
  if (w & 1) {
    buf[w][lane] = in[t] * 5 + w;
    asm volatile("barrier.arrive.aligned %0, 64;" :: "r"(id) : "memory");
  } else {
    asm volatile("barrier.sync.aligned %0, 64;" :: "r"(id) : "memory");
    out[t] = buf[w + 1][31 - lane] - buf[w + 1][lane];
  }
}''', "reg_ids", 2, 128, lambda r: [i32_mix(r, 128), np.zeros(128, np.int32)])

case("named_barrier_warp_specialized_double_buffer", r'''
__global__ void ws_pipe(const int* in, int* out, int tiles) {
  __shared__ int buf[2][64];
  int t = threadIdx.x;                      // warps 0,1 consume; warps 2,3 produce
  const int* base = in + blockIdx.x * tiles * 64;
  if (t < 64) {
    int acc = 0;
    for (int k = 0; k < tiles; ++k) {
      int s = k & 1;
      asm volatile("bar.sync %0, 128;" :: "r"(1 + s) : "memory");          // FULL[s]
      acc = acc * 5 + buf[s][(t * 3) & 63];
      asm volatile("bar.arrive %0, 128;" :: "r"(3 + s) : "memory");        // EMPTY[s]
    }
    out[blockIdx.x * 64 + t] = acc;
  } else {
    int p = t - 64;
    for (int k = 0; k < tiles; ++k) {
      int s = k & 1;
      if (k >= 2) asm volatile("bar.sync %0, 128;" :: "r"(3 + s) : "memory");
      buf[s][p] = base[k * 64 + p] ^ (k * 0x101);
      asm volatile("bar.arrive %0, 128;" :: "r"(1 + s) : "memory");
    }
  }
}''', "ws_pipe", 2, 128, lambda r: [i32_mix(r, 2 * 5 * 64), np.zeros(128, np.int32), np.int32(5)])
