"""Barriers and warp-level primitives: __syncthreads_*, __syncwarp, shuffles, votes, match, reduce, groups."""
import numpy as np

from . import Corpus, f32_mix, i32_mix

CASES = Corpus("sync_warp")
case = CASES.case


case("syncthreads_count_and_or", r'''
__global__ void votes(const int* v, int* out) {
  int t = threadIdx.x, x = v[blockIdx.x * blockDim.x + t];
  int c = __syncthreads_count(x > 0);
  int a = __syncthreads_and(x != 0);
  int o = __syncthreads_or(x == 42);
  int all_even = __syncthreads_and((x & 1) == 0);
  if (t == 0) { out[4 * blockIdx.x] = c; out[4 * blockIdx.x + 1] = a; out[4 * blockIdx.x + 2] = o;
                out[4 * blockIdx.x + 3] = all_even; }
}''', "votes", 4, 160, lambda r: [np.concatenate([r.integers(-5, 6, 160), np.full(160, 2), r.integers(1, 100, 160),
                                                  np.r_[42, np.zeros(159, int)]]).astype(np.int32), np.zeros(16, np.int32)])

case("block_reduce_tree", r'''
__global__ void reduce(const int* in, int* out) {
  __shared__ int s[256];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * blockDim.x + t];
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] = max(s[t], s[t + k]) + (s[t] ^ s[t + k]) % 7;
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}''', "reduce", 3, 256, lambda r: [r.integers(0, 1 << 20, 768).astype(np.int32), np.zeros(3, np.int32)])

case("shfl_idx_with_widths", r'''
__global__ void shfl(const int* v, int* out, const int* src) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, x = v[t], s = src[t];
  out[5 * t + 0] = __shfl_sync(0xffffffffu, x, s);
  out[5 * t + 1] = __shfl_sync(0xffffffffu, x, s, 16);
  out[5 * t + 2] = __shfl_sync(0xffffffffu, x, s, 8);
  out[5 * t + 3] = __shfl_sync(0xffffffffu, x, s, 4);
  out[5 * t + 4] = __shfl_sync(0xffffffffu, x, 0, 2);
}''', "shfl", 2, 64, lambda r: [i32_mix(r, 128), np.zeros(640, np.int32), r.integers(-40, 70, 128).astype(np.int32)])

case("shfl_up_down_xor_widths", r'''
__global__ void shifts(const int* v, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, x = v[t];
  out[8 * t + 0] = __shfl_up_sync(0xffffffffu, x, 1);
  out[8 * t + 1] = __shfl_up_sync(0xffffffffu, x, 5, 8);
  out[8 * t + 2] = __shfl_down_sync(0xffffffffu, x, 3);
  out[8 * t + 3] = __shfl_down_sync(0xffffffffu, x, 2, 4);
  out[8 * t + 4] = __shfl_xor_sync(0xffffffffu, x, 1);
  out[8 * t + 5] = __shfl_xor_sync(0xffffffffu, x, 21);
  out[8 * t + 6] = __shfl_xor_sync(0xffffffffu, x, 12, 16);
  out[8 * t + 7] = __shfl_down_sync(0xffffffffu, x, 31);
}''', "shifts", 2, 64, lambda r: [i32_mix(r, 128), np.zeros(1024, np.int32)])

case("shfl_64bit_and_float", r'''
__global__ void wide(const double* d, const long long* w, const float* f, double* dout, long long* wout, float* fout) {
  int t = threadIdx.x;
  dout[t] = __shfl_xor_sync(0xffffffffu, d[t], 3);
  wout[t] = __shfl_down_sync(0xffffffffu, w[t], 7);
  fout[t] = __shfl_sync(0xffffffffu, f[t], 31 - (t & 31));
}''', "wide", 1, 64, lambda r: [r.standard_normal(64), r.integers(-2 ** 62, 2 ** 62, 64), f32_mix(r, 64),
                                np.zeros(64), np.zeros(64, np.int64), np.zeros(64, np.float32)])

case("shfl_partial_mask", r'''
__global__ void partial(const int* v, int* out) {
  int t = threadIdx.x, lane = t & 31, x = v[t];
  int r = -1;
  if (lane < 16) r = __shfl_sync(0x0000ffffu, x, lane ^ 3);
  else if (lane & 1) r = __shfl_xor_sync(0xaaaa0000u, x, 2);
  out[t] = r;
}''', "partial", 1, 64, lambda r: [i32_mix(r, 64), np.zeros(64, np.int32)])

case("warp_reduce_shfl_down", r'''
__global__ void warp_sum(const int* v, int* out, float* fout, const float* f) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int x = v[t];
  float y = f[t];
  for (int off = 16; off > 0; off >>= 1) {
    x += __shfl_down_sync(0xffffffffu, x, off);
    y += __shfl_down_sync(0xffffffffu, y, off);
  }
  if ((threadIdx.x & 31) == 0) { out[t / 32] = x; fout[t / 32] = y; }
}''', "warp_sum", 2, 128, lambda r: [i32_mix(r, 256), np.zeros(8, np.int32), np.zeros(8, np.float32),
                                     r.standard_normal(256).astype(np.float32)])

case("ballot_any_all", r'''
__global__ void ballots(const float* v, unsigned* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float x = v[t];
  unsigned b = __ballot_sync(0xffffffffu, x > 0.0f);
  int any_nan = __any_sync(0xffffffffu, x != x);
  int all_fin = __all_sync(0xffffffffu, isfinite(x));
  unsigned lanes_lt;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(lanes_lt));
  out[3 * t + 0] = b;
  out[3 * t + 1] = any_nan | all_fin << 1;
  out[3 * t + 2] = __popc(b & lanes_lt);
}''', "ballots", 2, 96, lambda r: [np.where(r.random(192) < 0.05, np.nan, r.standard_normal(192)).astype(np.float32),
                                  np.zeros(576, np.uint32)])

case("activemask_in_divergent_branches", r'''
__global__ void active(const int* v, unsigned* out) {
  int t = threadIdx.x;
  unsigned m = 0;
  if (v[t] % 3 == 0) {
    m = __activemask();
  } else if (v[t] % 3 == 1) {
    m = __activemask() | 0x80000000u;
  } else {
    m = __ballot_sync(__activemask(), v[t] > 50);
  }
  __syncwarp();
  out[t] = m;
  out[64 + t] = __activemask();
}''', "active", 1, 64, lambda r: [r.integers(0, 100, 64).astype(np.int32), np.zeros(128, np.uint32)])

case("match_any_all", r'''
__global__ void match(const int* v, const long long* w, unsigned* out) {
  int t = threadIdx.x;
  int pred;
  out[4 * t + 0] = __match_any_sync(0xffffffffu, v[t]);
  out[4 * t + 1] = __match_all_sync(0xffffffffu, v[t] / 2, &pred);
  out[4 * t + 2] = pred;
  out[4 * t + 3] = __match_any_sync(0xffffffffu, w[t]);
}''', "match", 1, 96, lambda r: [np.concatenate([r.integers(0, 4, 64), np.full(32, 7)]).astype(np.int32),
                                 r.integers(0, 3, 96) << 40, np.zeros(384, np.uint32)])

case("reduce_sync_sm80", r'''
__global__ void wreduce(const int* v, int* out) {
  int t = threadIdx.x, x = v[t];
  unsigned u = (unsigned)x;
  out[6 * t + 0] = (int)__reduce_add_sync(0xffffffffu, u);
  out[6 * t + 1] = __reduce_min_sync(0xffffffffu, x);
  out[6 * t + 2] = __reduce_max_sync(0xffffffffu, x);
  out[6 * t + 3] = (int)__reduce_and_sync(0xffffffffu, u);
  out[6 * t + 4] = (int)__reduce_or_sync(0xffffffffu, u);
  out[6 * t + 5] = (int)__reduce_xor_sync(0xffffffffu, u);
}''', "wreduce", 1, 96, lambda r: [i32_mix(r, 96), np.zeros(576, np.int32)])

case("warp_inclusive_scan_then_block_scan", r'''
__global__ void scan(const int* in, int* out) {
  __shared__ int warp_sums[32];
  int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  int x = in[blockIdx.x * blockDim.x + t];
  for (int off = 1; off < 32; off <<= 1) {
    int y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  if (lane == 31) warp_sums[warp] = x;
  __syncthreads();
  if (warp == 0) {
    int s = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
    for (int off = 1; off < 32; off <<= 1) {
      int y = __shfl_up_sync(0xffffffffu, s, off);
      if (lane >= off) s += y;
    }
    warp_sums[lane] = s;
  }
  __syncthreads();
  if (warp > 0) x += warp_sums[warp - 1];
  out[blockIdx.x * blockDim.x + t] = x;
}''', "scan", 2, 256, lambda r: [r.integers(-100, 100, 512).astype(np.int32), np.zeros(512, np.int32)])

case("syncwarp_partial_mask_exchange", r'''
__global__ void exchange(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x, lane = t & 31;
  s[t] = in[t];
  __syncwarp();
  if (lane < 8) {
    int v = s[t ^ 7];
    __syncwarp(0xffu);
    s[t] = v * 2;
    __syncwarp(0xffu);
  }
  __syncwarp();
  out[t] = s[(t & ~31) | ((t + 1) & 31)];   // a neighbour in the same warp
}''', "exchange", 1, 64, lambda r: [i32_mix(r, 64), np.zeros(64, np.int32)])

case("warp_bitonic_sort_shfl", r'''
__global__ void bitonic32(const float* in, float* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  float x = in[t];
  for (int k = 2; k <= 32; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      float y = __shfl_xor_sync(0xffffffffu, x, j);
      bool up = (lane & k) == 0, lower = (lane & j) == 0;
      x = (lower == up) ? fminf(x, y) : fmaxf(x, y);
    }
  out[t] = x;
}''', "bitonic32", 2, 64, lambda r: [np.concatenate([r.standard_normal(96), [0.0, -0.0] * 8, np.inf * np.ones(8),
                                                     -np.inf * np.ones(8)]).astype(np.float32), np.zeros(128, np.float32)])

case("named_barriers_producer_consumer", r'''
__global__ void producer_consumer(const int* in, int* out) {
  __shared__ int buf[64];
  int t = threadIdx.x;
  if (t < 64) {                        // producers: warps 0-1
    buf[t] = in[t] * 3;
    asm volatile("bar.arrive 1, 128;");
  } else {                             // consumers: warps 2-3 wait for the producers only
    asm volatile("bar.sync 1, 128;");
    out[t - 64] = buf[127 - t] + buf[(t + 5) & 63];
  }
}''', "producer_consumer", 1, 128, lambda r: [r.integers(-1000, 1000, 64).astype(np.int32), np.zeros(64, np.int32)])

case("cg_tiled_partition_reduce", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void tiles(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(block);
  int x = in[block.group_index().x * block.size() + block.thread_rank()];
  int sum = cg::reduce(tile, x, cg::plus<int>());
  int mx = cg::reduce(tile, x, cg::greater<int>());
  int down = tile.shfl_down(x, 1);
  unsigned b = tile.ballot(x > 0);
  int g = block.group_index().x * block.size() + block.thread_rank();
  out[5 * g + 0] = sum; out[5 * g + 1] = mx; out[5 * g + 2] = down; out[5 * g + 3] = (int)b;
  out[5 * g + 4] = tile.meta_group_rank() * 100 + tile.thread_rank();
  block.sync();
}''', "tiles", 2, 64, lambda r: [r.integers(-1000, 1000, 128).astype(np.int32), np.zeros(640, np.int32)])

case("cg_coalesced_threads_in_branch", r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void coalesced(const int* in, int* out) {
  int t = threadIdx.x;
  out[t] = -1;
  if (in[t] & 1) {
    cg::coalesced_group active = cg::coalesced_threads();
    int leader_value = active.shfl(in[t], 0);
    out[t] = active.thread_rank() * 10000 + active.size() * 100 + (leader_value & 63);
  }
}''', "coalesced", 1, 64, lambda r: [r.integers(0, 1000, 64).astype(np.int32), np.zeros(64, np.int32)])

case("cg_tile_scan_and_dynamic_partition", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
__global__ void tscan(const int* in, int* out) {
  cg::thread_block block = cg::this_thread_block();
  auto tile8 = cg::tiled_partition<8>(block);
  cg::thread_group dyn = cg::tiled_partition(block, 4);
  int x = in[block.thread_rank()];
  out[3 * block.thread_rank() + 0] = cg::inclusive_scan(tile8, x);
  out[3 * block.thread_rank() + 1] = cg::exclusive_scan(tile8, x, cg::bit_xor<int>());
  out[3 * block.thread_rank() + 2] = dyn.thread_rank() + 10 * (int)dyn.size();
}''', "tscan", 1, 64, lambda r: [r.integers(-50, 50, 64).astype(np.int32), np.zeros(192, np.int32)])

case("barrier_in_loop_with_shrinking_work", r'''
__global__ void rounds(const int* in, int* out, int n) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  for (int active = n; active > 1; active = (active + 1) / 2) {
    int v = 0;
    if (t < active / 2) v = s[2 * t] * 3 - s[2 * t + 1];
    else if (t == active / 2 && (active & 1)) v = s[active - 1];
    __syncthreads();
    if (t <= active / 2) s[t] = v;
    __syncthreads();
  }
  if (t == 0) out[0] = s[0];
  out[1 + t] = s[t];
}''', "rounds", 1, 128, lambda r: [r.integers(-3, 4, 128).astype(np.int32), np.zeros(129, np.int32), np.int32(97)])

case("shfl_half2_and_votes_in_loop", r'''
#include <cuda_fp16.h>
__global__ void loopvote(const int* trip, int* out) {
  int t = threadIdx.x, k = 0, rounds = 0;
  // Each lane loops a different number of times; the vote sees only the lanes still looping.
  while (k < trip[t]) {
    unsigned m = __activemask();
    rounds += __popc(m);
    ++k;
  }
  __half2 h = __floats2half2_rn((float)rounds, (float)k);
  h = __shfl_xor_sync(0xffffffffu, h, 1);
  out[2 * t] = rounds;
  out[2 * t + 1] = (int)__high2float(h) * 1000 + (int)__low2float(h) % 1000;
}''', "loopvote", 1, 64, lambda r: [r.integers(0, 20, 64).astype(np.int32), np.zeros(128, np.int32)])
