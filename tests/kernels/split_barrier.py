"""Barriers that part of a warp reaches while the rest of the warp writes memory elsewhere.

The Programming Guide allows ``__syncthreads()`` only where the whole block gets to it, but a GPU
since Volta (independent thread scheduling) counts a barrier's threads one by one: the threads of a
warp that skip it run on, write, and end or reach another barrier, and the waiting ones read what
they wrote. What an H100 does here is what students see when such a kernel "works"; each kernel's
control flow depends on threadIdx only, so tools/sanitizer_gpu.py runs the same ones under
compute-sanitizer's synccheck.
"""
import numpy as np

from . import Corpus

CASES = Corpus("split_barrier")
case = CASES.case

# the kernels' sources, shared with tools/sanitizer_gpu.py (its synccheck cases)
EARLY_RETURN = r'''
__global__ void early_return(const int* in, int* out, int* flag) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  if ((t & 31) >= 20) {                   // 12 threads of each warp write and leave
    s[t] = in[t] * 2;
    flag[t] = in[t] + 1;
    return;
  }
  s[t] = in[t];
  __syncthreads();                        // 20 threads of each warp wait here
  out[t] = s[63 - t] + 1000 * flag[63 - t];
}'''

IF_ELSE = r'''
__global__ void if_else(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  if ((t & 31) < 16) {
    s[t] = in[t];
    __syncthreads();                      // half of each warp here,
    out[t] = s[t ^ 16] * 10 + s[(t + 32) & 63];
  } else {
    s[t] = in[t] * 3;
    __syncthreads();                      // the other half here
    out[t] = s[t ^ 16] * 10 + s[(t + 32) & 63];
  }
}'''

SKIP_THEN_WRITE = r'''
__global__ void skip_then_write(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = 0;
  __syncthreads();
  if ((t & 31) < 16) {
    __syncthreads();                      // waits while the other half writes below
    out[t] = s[t + 16];
  }
  s[t] = in[t];
  out[128 + t] = t;
  __syncthreads();
  out[64 + t] = s[63 - t] + out[128 + (63 - t)];
}'''

LOOP_TRIPS = r'''
__global__ void loop_trips(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  int acc = 0;
  for (int i = 0; i <= t % 3; i++) {      // one, two or three turns: every warp splits
    acc += s[(t + 1) & 63];
    __syncthreads();
    s[t] = acc + i;
    __syncthreads();
  }
  out[t] = acc;
}'''

NAMED_HALVES = r'''
__global__ void named_halves(const int* in, int* out) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  if ((t & 31) < 16) {                    // 64 threads: half of each of the four warps
    s[t] = in[t];
    asm volatile("bar.sync 1, 64;" ::: "memory");
    out[t] = s[(t + 32) & 127];
  } else {
    s[t] = in[t] * 2;
    asm volatile("bar.sync 2, 64;" ::: "memory");
    out[t] = s[(t + 32) & 127];
  }
}'''

NAMED_HALVES_UNALIGNED = NAMED_HALVES.replace("named_halves", "named_halves_unaligned").replace("bar.sync", "barrier.sync")

KERNELS = {"early_return": EARLY_RETURN, "if_else": IF_ELSE, "skip_then_write": SKIP_THEN_WRITE,
           "loop_trips": LOOP_TRIPS, "named_halves": NAMED_HALVES, "named_halves_unaligned": NAMED_HALVES_UNALIGNED}


def ints(r, n):
    return r.integers(1, 100, n).astype(np.int32)


case("early_return_writes_then_barrier", EARLY_RETURN, "early_return", 1, 64,
     lambda r: [ints(r, 64), np.zeros(64, np.int32), np.zeros(64, np.int32)])
case("if_else_two_barriers_half_warps", IF_ELSE, "if_else", 1, 64,
     lambda r: [ints(r, 64), np.zeros(64, np.int32)])
case("half_warp_waits_while_others_write", SKIP_THEN_WRITE, "skip_then_write", 1, 64,
     lambda r: [ints(r, 64), np.zeros(192, np.int32)])
case("barrier_in_loop_thread_trip_counts", LOOP_TRIPS, "loop_trips", 1, 64,
     lambda r: [ints(r, 64), np.zeros(64, np.int32)])
case("named_barrier_half_warps_bar_sync", NAMED_HALVES, "named_halves", 1, 128,
     lambda r: [ints(r, 128), np.zeros(128, np.int32)])
case("named_barrier_half_warps_barrier_sync", NAMED_HALVES_UNALIGNED, "named_halves_unaligned", 1, 128,
     lambda r: [ints(r, 128), np.zeros(128, np.int32)])

COUNT_SPLIT = r'''
__global__ void count_split(int* out) {
  int t = threadIdx.x, c;
  if ((t & 31) < 8) c = __syncthreads_count(t & 1);    // a quarter of each warp counts here,
  else c = __syncthreads_count(t < 40);                 // the rest here
  out[t] = c;
}'''
KERNELS["count_split"] = COUNT_SPLIT

case("syncthreads_count_at_two_places_in_a_warp", COUNT_SPLIT, "count_split", 1, 64,
     lambda r: [np.zeros(64, np.int32)])

OWN_TAILS = r'''
__global__ void own_tails(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  if ((t & 31) < 16) {
    s[t] = in[t];
    __syncthreads();                      // each half reads the other's value after its own barrier
    out[t] = s[t ^ 16];
  } else {
    s[t] = in[t] * 3;
    __syncthreads();
    out[t] = s[t ^ 16] * 7 + s[(t + 32) & 63];
    out[64 + t] = 1;
  }
}'''
KERNELS["own_tails"] = OWN_TAILS

LEAVERS_WRITE = r'''
__global__ void leavers_write(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  int acc = 0;
  for (int i = 0; i < (t & 3) + 1; i++) {   // lanes leave the loop after one to four turns
    __syncthreads();
    acc += s[(t + 1) & 63];
    __syncthreads();
  }
  s[t] = acc * 10 + t;                      // then write what the lanes still looping read
  out[t] = acc;
}'''
KERNELS["leavers_write"] = LEAVERS_WRITE

case("if_else_barriers_with_their_own_tails", OWN_TAILS, "own_tails", 1, 64,
     lambda r: [ints(r, 64), np.zeros(128, np.int32)])
case("loop_leavers_write_what_loopers_read", LEAVERS_WRITE, "leavers_write", 1, 64,
     lambda r: [ints(r, 64), np.zeros(64, np.int32)])
