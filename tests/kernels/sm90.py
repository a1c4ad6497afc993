"""Compute capability 9.0 and the device runtime: clusters and distributed shared memory, dynamic
parallelism, large kernel parameters, elect.sync, DPX, fp8/fp6/fp4 conversions, griddepcontrol and
the odd instructions (fns, bmsk, szext, video, cvt.pack, alloca).

Every case compiles with ``-arch=compute_90`` (the device runtime ones add ``-rdc=true``) and is
recorded through cudalab's GPU backend, so the H100 runs the very PTX the emulator runs.
"""
import numpy as np

from . import Corpus, f32_mix, i32_mix

CASES = Corpus("sm90")
SM90 = ("-arch=compute_90",)
RDC = ("-arch=compute_90", "-rdc=true")


def case(*a, options=SM90, **k):
    CASES.case(*a, options=options, **k)


def words(rng, n):
    return rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)


# ------------------------------------------------------------------ clusters and distributed shared memory

case("cluster_ring_exchange", r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(4, 1, 1) ring(const int* in, int* out) {
  __shared__ int mine[64];
  cg::cluster_group cluster = cg::this_cluster();
  unsigned rank = cluster.block_rank();
  mine[threadIdx.x] = in[blockIdx.x * 64 + threadIdx.x] * 3 + (int)rank;
  cluster.sync();
  unsigned next = (rank + 1) % cluster.num_blocks();
  int* theirs = cluster.map_shared_rank(mine, next);
  int got = theirs[63 - threadIdx.x];
  cluster.sync();                       // nobody leaves while a neighbour may still read its memory
  out[blockIdx.x * 64 + threadIdx.x] = got;
}''', "ring", 8, 64, lambda r: [i32_mix(r, 512) >> 2, np.zeros(512, np.int32)])

case("cluster_special_registers_launch_attribute", r'''
__global__ void ids(unsigned* out) {
  unsigned v[12];
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[0]));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[1]));
  asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(v[2]));
  asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(v[3]));
  asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v[4]));
  asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(v[5]));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(v[6]));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(v[7]));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(v[8]));
  asm("mov.u32 %0, %%nclusterid.y;" : "=r"(v[9]));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v[10]));
  v[11] = gridDim.x * 1000 + gridDim.y;           // the grid still counts blocks
  unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x < 12) out[b * 12 + threadIdx.x] = v[threadIdx.x];
}''', "ids", (4, 6), 32, lambda r: [np.zeros(4 * 6 * 12, np.uint32)], cluster=(2, 3, 1))

case("cluster_histogram_distributed", r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
// Each block of a cluster owns a quarter of the bins; every thread adds into the owner's shared
// memory (atomics on distributed shared memory), then the owners write their bins out.
__global__ void __cluster_dims__(4, 1, 1) hist(const unsigned* values, int n, unsigned* bins) {
  __shared__ unsigned part[64];
  cg::cluster_group cluster = cg::this_cluster();
  part[threadIdx.x % 64] = 0;
  cluster.sync();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    unsigned bin = values[i] % 256;
    unsigned* owner = cluster.map_shared_rank(part, bin / 64);
    atomicAdd(owner + bin % 64, 1u);
  }
  cluster.sync();
  unsigned cluster_id = blockIdx.x / 4;
  if (threadIdx.x < 64) bins[cluster_id * 256 + cluster.block_rank() * 64 + threadIdx.x] = part[threadIdx.x];
}''', "hist", 8, 128, lambda r: [(r.integers(0, 2 ** 20, 20000) ** 2 % 9973).astype(np.uint32), np.int32(20000),
                                np.zeros(2 * 256, np.uint32)])

case("cluster_split_barrier_and_ptx", r'''
// mapa / ld.shared::cluster / st.shared::cluster / getctarank written out, and a split barrier
// (arrive, independent work, wait).
__global__ void __cluster_dims__(2, 1, 1) raw(const unsigned* in, unsigned* out) {
  __shared__ unsigned box[32];
  unsigned rank, peer_addr, peer_rank, mine = (unsigned)__cvta_generic_to_shared(box) + 4 * threadIdx.x;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  box[threadIdx.x] = in[blockIdx.x * 32 + threadIdx.x];
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
  unsigned local = in[blockIdx.x * 32 + (threadIdx.x ^ 5)] * 7u;     // work while others arrive
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer_addr) : "r"(mine), "r"(rank ^ 1));
  unsigned theirs;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(theirs) : "r"(peer_addr));
  asm volatile("getctarank.shared::cluster.u32 %0, %1;" : "=r"(peer_rank) : "r"(peer_addr));
  asm volatile("barrier.cluster.arrive.relaxed.aligned; barrier.cluster.wait.aligned;" ::: "memory");   // loads done
  asm volatile("st.shared::cluster.u32 [%0], %1;" :: "r"(peer_addr), "r"(theirs + local) : "memory");
  // .relaxed would not release the store above: the GPU may then read the old value (it did)
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
  out[blockIdx.x * 64 + threadIdx.x] = box[threadIdx.x];
  out[blockIdx.x * 64 + 32 + threadIdx.x] = peer_rank * 100 + rank;
}''', "raw", 6, 32, lambda r: [words(r, 6 * 32), np.zeros(6 * 64, np.uint32)])

case("cluster_3d_reduce", r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 2, 2) reduce3(const int* in, int* out) {
  __shared__ int partial;
  cg::cluster_group cluster = cg::this_cluster();
  int b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
  if (threadIdx.x == 0) partial = 0;
  __syncthreads();
  atomicAdd(&partial, in[b * 32 + threadIdx.x]);
  cluster.sync();
  if (cluster.block_rank() == 0 && threadIdx.x == 0) {
    int total = 0;
    for (unsigned r = 0; r < cluster.num_blocks(); ++r) total += *cluster.map_shared_rank(&partial, r);
    dim3 c = cluster.block_index(), d = cluster.dim_blocks();
    int cid = (blockIdx.z / 2 * (gridDim.y / 2) + blockIdx.y / 2) * (gridDim.x / 2) + blockIdx.x / 2;
    out[cid * 4] = total;
    out[cid * 4 + 1] = c.x + 10 * c.y + 100 * c.z;
    out[cid * 4 + 2] = d.x + 10 * d.y + 100 * d.z;
    out[cid * 4 + 3] = cluster.num_threads();
  }
  cluster.sync();
}''', "reduce3", (4, 2, 4), 32, lambda r: [r.integers(-1000, 1000, 32 * 32).astype(np.int32),
                                          np.zeros(4 * 4, np.int32)])

case("cluster_of_one_defaults", r'''
// No cluster at launch or compile time: every block is a cluster of one (sm_90).
__global__ void plain(unsigned* out) {
  unsigned v[6];
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[0]));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[1]));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(v[2]));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(v[3]));
  asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(v[4]));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v[5]));
  if (threadIdx.x < 6) out[blockIdx.x * 6 + threadIdx.x] = v[threadIdx.x];
}''', "plain", 5, 32, lambda r: [np.zeros(30, np.uint32)])

# ------------------------------------------------------------------ dynamic parallelism

case("cdp_children_write_rows", r'''
__global__ void row(int* out, int r, int scale) {
  out[r * 64 + threadIdx.x] = (r + 1) * scale + threadIdx.x;
}
__global__ void parent(int* out, const int* scales) {
  // one child grid per thread of the parent, each into its own row
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  row<<<1, 64>>>(out, r, scales[r]);
}''', "parent", 2, 8, lambda r: [np.zeros(16 * 64, np.int32), r.integers(-50, 50, 16).astype(np.int32)], options=RDC)

case("cdp_tail_launch_combines", r'''
// Children sum halves; a tail launch adds their results after they (and the parent) finish.
__global__ void half_sum(const int* v, int n, long long* slot) {
  long long s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += v[i];
  atomicAdd((unsigned long long*)slot, (unsigned long long)s);
}
__global__ void combine(long long* slots, long long* total) { *total = slots[0] * 3 + slots[1]; }
__global__ void start(const int* v, int n, long long* slots, long long* total) {
  half_sum<<<1, 64>>>(v, n / 2, slots);
  half_sum<<<1, 64>>>(v + n / 2, n - n / 2, slots + 1);
  combine<<<1, 1, 0, cudaStreamTailLaunch>>>(slots, total);
}''', "start", 1, 1, lambda r: [r.integers(-10 ** 6, 10 ** 6, 1000).astype(np.int32), np.int32(1000),
                                 np.zeros(2, np.int64), np.zeros(1, np.int64)], options=RDC)

case("cdp_recursive_fill", r'''
// Each grid fills its range's middle element with its depth, then launches itself on both halves
// (from named non-blocking streams, as the cdp samples do).
__global__ void fill(int* a, int lo, int hi, int depth) {
  int mid = (lo + hi) / 2;
  a[mid] = depth * 1000 + (hi - lo);
  if (hi - lo <= 2) return;
  cudaStream_t s1, s2;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  fill<<<1, 1, 0, s1>>>(a, lo, mid, depth + 1);
  fill<<<1, 1, 0, s2>>>(a, mid + 1, hi, depth + 1);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}''', "fill", 1, 1, lambda r: [np.full(200, -1, np.int32), np.int32(0), np.int32(200), np.int32(0)], options=RDC)

case("cdp_launch_errors", r'''
__global__ void child(int* flag) { atomicAdd(flag, 1); }
__global__ void launcher(int* codes, int* flag) {
  int t = threadIdx.x;
  codes[8 * t] = (int)cudaGetLastError();                       // nothing failed yet
  if (t == 0) child<<<1, 2048>>>(flag);                         // too many threads per block
  if (t == 1) child<<<dim3(1, 70000), 1>>>(flag);               // gridDim.y too large
  if (t == 2) child<<<1, 32>>>(flag);                           // fine
  if (t == 3) child<<<1, 32, 0, cudaStreamFireAndForget>>>(flag);
  codes[8 * t + 1] = (int)cudaPeekAtLastError();
  codes[8 * t + 2] = (int)cudaGetLastError();
  codes[8 * t + 3] = (int)cudaGetLastError();                   // reset by the previous call
  cudaStream_t s;
  codes[8 * t + 4] = (int)cudaStreamCreateWithFlags(&s, cudaStreamDefault);   // device streams must be non-blocking
  codes[8 * t + 5] = (int)cudaGetLastError();
  int dev = -1, count = -1;
  codes[8 * t + 6] = (int)cudaGetDevice(&dev) * 100 + dev;
  codes[8 * t + 7] = (int)cudaGetDeviceCount(&count) * 100 + (count > 0);
}''', "launcher", 1, 4, lambda r: [np.full(32, -7, np.int32), np.zeros(1, np.int32)], options=RDC)

case("cdp_nesting_depth_limit", r'''
// Launch deeper and deeper; each grid records the launch's result. The hardware stops at 24 levels.
__global__ void dive(int* seen, int depth) {
  seen[depth] = 1000 + depth;
  if (depth >= 30) return;
  dive<<<1, 1>>>(seen, depth + 1);
  seen[32 + depth] = (int)cudaGetLastError();
}''', "dive", 1, 1, lambda r: [np.full(64, -1, np.int32), np.int32(0)], options=RDC)

case("cdp_device_memory_ops", r'''
// cudaMalloc in a parent, then a memset, a child launch and a copy in the NULL stream: the codes the
// calls return and what the copy saw.
__global__ void bump(unsigned char* buf, int n) { for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] += i; }
__global__ void host_like(unsigned char* out, int* codes, int n) {
  unsigned char* buf = nullptr;
  codes[0] = (int)cudaMalloc((void**)&buf, n);
  codes[1] = (int)cudaMemsetAsync(buf, 0x11, n, 0);
  codes[2] = (int)cudaGetLastError();
  bump<<<1, 32>>>(buf, n);
  codes[3] = (int)cudaMemcpyAsync(out, buf, n, cudaMemcpyDeviceToDevice, 0);
  codes[4] = (int)cudaGetLastError();
  codes[5] = buf != nullptr;
}''', "host_like", 1, 1, lambda r: [np.zeros(300, np.uint8), np.full(6, -1, np.int32), np.int32(300)], options=RDC)

case("cdp_quicksort_my_own", r'''
// A recursive quicksort: partition in one thread, then sort each side in a child grid.
__device__ void insertion(unsigned* a, int lo, int hi) {
  for (int i = lo + 1; i <= hi; ++i) {
    unsigned v = a[i]; int j = i - 1;
    while (j >= lo && a[j] > v) { a[j + 1] = a[j]; --j; }
    a[j + 1] = v;
  }
}
__global__ void qsort_cdp(unsigned* a, int lo, int hi, int depth) {
  if (hi - lo < 16 || depth >= 20) { insertion(a, lo, hi); return; }
  unsigned pivot = a[(lo + hi) / 2];
  int i = lo, j = hi;
  while (i <= j) {
    while (a[i] < pivot) ++i;
    while (a[j] > pivot) --j;
    if (i <= j) { unsigned t = a[i]; a[i] = a[j]; a[j] = t; ++i; --j; }
  }
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  if (lo < j) qsort_cdp<<<1, 1, 0, s>>>(a, lo, j, depth + 1);
  cudaStreamDestroy(s);
  if (i < hi) qsort_cdp<<<1, 1, 0, cudaStreamFireAndForget>>>(a, i, hi, depth + 1);
}''', "qsort_cdp", 1, 1, lambda r: [words(r, 700) % 5000, np.int32(0), np.int32(699), np.int32(0)], options=RDC)

# ------------------------------------------------------------------ large kernel parameters

case("large_param_32000_bytes", r'''
struct Table { int v[8000]; };
__global__ void sums(__grid_constant__ const Table t, long long* out) {
  long long s = 0;
  for (int i = threadIdx.x; i < 8000; i += blockDim.x) s += t.v[i] * (long long)(i % 7 + 1);
  out[threadIdx.x] = s;
}''', "sums", 1, 64, lambda r: [r.integers(-2 ** 31, 2 ** 31, 8000).astype(np.int32).view(np.dtype((np.void, 32000)))[0],
                                np.zeros(64, np.int64)])

case("large_param_read_through_pointer", r'''
struct Big { unsigned short w[15000]; double d[250]; };
__device__ __noinline__ unsigned pick(const unsigned short* p, int k) { return p[k] * 3u + p[k + 1]; }
__global__ void lookup(__grid_constant__ const Big b, const int* idx, unsigned* out, double* dout) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int k = idx[t];
  out[2 * t] = b.w[k];                          // ld.param through a computed address
  out[2 * t + 1] = pick(&b.w[k % 100], t % 50); // a generic pointer into the parameter
  dout[t] = b.d[k % 250] * 2.0;
}''', "lookup", 2, 64, lambda r: [np.concatenate([r.integers(0, 2 ** 16, 15000).astype(np.uint16).view(np.uint8),
                                                  r.standard_normal(250).view(np.uint8)]).view(np.dtype((np.void, 32000)))[0],
                                  r.integers(0, 14999, 128).astype(np.int32), np.zeros(256, np.uint32),
                                  np.zeros(128, np.float64)])

case("large_param_at_the_limit", r'''
struct Most { int v[8188]; };     // 32,752 bytes + an 8-byte pointer: 32,760 of the 32,764 allowed
__global__ void edge(__grid_constant__ const Most m, int* out) {
  out[threadIdx.x] = m.v[threadIdx.x * 255] ^ m.v[8187 - threadIdx.x];
}''', "edge", 1, 32, lambda r: [r.integers(-2 ** 31, 2 ** 31, 8188).astype(np.int32).view(np.dtype((np.void, 32752)))[0],
                                np.zeros(32, np.int32)])

# ------------------------------------------------------------------ elect.sync and invoke_one

case("elect_sync_divergent_masks", r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void elect(const unsigned* masks, unsigned* out) {
  int t = threadIdx.x, lane = t % 32;
  unsigned mask = masks[t / 32];
  unsigned leader = 99, is_leader = 0;
  if ((mask >> lane) & 1) {
    asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }"
                 : "=r"(leader), "=r"(is_leader) : "r"(mask));
  }
  out[3 * t] = leader;
  out[3 * t + 1] = is_leader;
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  out[3 * t + 2] = cg::invoke_one_broadcast(warp, [&]() { return 1000u + t * 7u; });
}''', "elect", 1, 128, lambda r: [np.array([0xFFFFFFFF, 0x00F0F000, 0x80000001, 0x7FFFFFFE], np.uint32),
                                  np.zeros(384, np.uint32)])

# ------------------------------------------------------------------ DPX

case("dpx_s32_and_u32", r'''
__global__ void dpx(const int* a, const int* b, const int* c, int* o) {
  int t = threadIdx.x, x = a[t], y = b[t], z = c[t];
  bool p;
  unsigned ux = x, uy = y, uz = z;
  int* q = o + 20 * t;
  q[0] = __vimax3_s32(x, y, z);      q[1] = __vimin3_s32(x, y, z);
  q[2] = __viaddmax_s32(x, y, z);    q[3] = __viaddmin_s32(x, y, z);
  q[4] = __vimax_s32_relu(x, y);     q[5] = __vimin_s32_relu(x, y);
  q[6] = __vimax3_s32_relu(x, y, z); q[7] = __vimin3_s32_relu(x, y, z);
  q[8] = __viaddmax_s32_relu(x, y, z); q[9] = __viaddmin_s32_relu(x, y, z);
  q[10] = __vibmax_s32(x, y, &p); q[11] = p;
  q[12] = __vibmin_s32(x, y, &p); q[13] = p;
  q[14] = __vimax3_u32(ux, uy, uz);  q[15] = __vimin3_u32(ux, uy, uz);
  q[16] = __viaddmax_u32(ux, uy, uz); q[17] = __viaddmin_u32(ux, uy, uz);
  q[18] = __vibmax_u32(ux, uy, &p); q[19] = p;
}''', "dpx", 1, 256, lambda r: [i32_mix(r, 256), np.roll(i32_mix(r, 256), 5), np.roll(i32_mix(r, 256), 11),
                               np.zeros(256 * 20, np.int32)])

case("dpx_16x2", r'''
__global__ void dpx2(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t], z = c[t];
  bool p, q2;
  unsigned* q = o + 16 * t;
  q[0] = __vimax3_s16x2(x, y, z);      q[1] = __vimin3_s16x2(x, y, z);
  q[2] = __vimax3_u16x2(x, y, z);      q[3] = __vimin3_u16x2(x, y, z);
  q[4] = __viaddmax_s16x2(x, y, z);    q[5] = __viaddmin_u16x2(x, y, z);
  q[6] = __vimax_s16x2_relu(x, y);     q[7] = __vimin3_s16x2_relu(x, y, z);
  q[8] = __viaddmax_s16x2_relu(x, y, z); q[9] = __viaddmin_s16x2_relu(x, y, z);
  q[10] = __vibmax_s16x2(x, y, &p, &q2); q[11] = p + 2 * q2;
  q[12] = __vibmin_u16x2(x, y, &p, &q2); q[13] = p + 2 * q2;
  q[14] = __vimax3_s16x2_relu(x, y, z); q[15] = __viaddmax_u16x2(x, y, z);
}''', "dpx2", 1, 256, lambda r: [words(r, 256), np.concatenate([np.array([0x7FFF8000, 0x80007FFF, 0xFFFF0000, 0], np.uint32),
                                                                 words(r, 252)]), words(r, 256),
                                 np.zeros(256 * 16, np.uint32)])

# ------------------------------------------------------------------ fp8 / fp6 / fp4

def _f32_fp8_inputs(r):
    """Every class of float32 a conversion to fp8 meets: signed zeros, float32 subnormals, the fp8
    subnormal range and its rounding ties, each binade, the largest finite values of e4m3 (448) and
    e5m2 (57344) and the points where rounding overflows them, infinities, NaNs of both signs."""
    fixed = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.125, 1.0625, 1.1875, 448.0, 449.0, 464.0, 464.00003, 480.0,
                      -464.0, 57344.0, 61439.0, 61440.0, 61440.004, 65536.0, -61440.0, 2 ** -6, 2 ** -7, 2 ** -9,
                      2 ** -10, 3 * 2 ** -11, 2 ** -14, 2 ** -16, 2 ** -17, 3 * 2 ** -18, 1.5 * 2 ** -17, 240.0,
                      1e38, -1e38, 3.4e38, np.inf, -np.inf], np.float32)
    odd = np.array([0x00000001, 0x80000001, 0x007FFFFF, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF812345,
                    0x7FFFFFFF, 0x3B800000, 0x3B900000, 0x3B880000, 0x37800000, 0x37880000], np.uint32).view(np.float32)
    # exact halfway points between neighbouring e4m3 and e5m2 values, and one ulp either side
    e4 = np.array([(1 + m / 8) * 2.0 ** e for e in range(-6, 9) for m in range(8)], np.float64)
    e5 = np.array([(1 + m / 4) * 2.0 ** e for e in range(-14, 16) for m in range(4)], np.float64)
    mids = np.concatenate([(e4[:-1] + e4[1:]) / 2, (e5[:-1] + e5[1:]) / 2]).astype(np.float32)
    near = np.concatenate([mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(0))])
    wide = (r.standard_normal(1000) * np.exp2(r.integers(-24, 18, 1000))).astype(np.float32)
    raw = words(r, 500).view(np.float32)
    x = np.concatenate([fixed, odd, near, -near[::3], wide, raw])
    return x[:2048] if x.size >= 2048 else np.concatenate([x, np.zeros(2048 - x.size, np.float32)])


case("fp8_from_f32_every_class", r'''
#include <cuda_fp8.h>
__global__ void to_fp8(const float* f, unsigned char* o, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float2 pair = make_float2(f[t], f[n - 1 - t]);
  __nv_fp8x2_storage_t a = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E4M3);
  __nv_fp8x2_storage_t b = __nv_cvt_float2_to_fp8x2(pair, __NV_SATFINITE, __NV_E5M2);
  unsigned c, d;
  asm("cvt.rn.satfinite.relu.e4m3x2.f32 %0, %1, %2;" : "=h"(*(unsigned short*)&c) : "f"(pair.y), "f"(pair.x));
  asm("cvt.rn.satfinite.relu.e5m2x2.f32 %0, %1, %2;" : "=h"(*(unsigned short*)&d) : "f"(pair.y), "f"(pair.x));
  o[8 * t + 0] = a & 0xff; o[8 * t + 1] = a >> 8; o[8 * t + 2] = b & 0xff; o[8 * t + 3] = b >> 8;
  o[8 * t + 4] = c & 0xff; o[8 * t + 5] = (c >> 8) & 0xff; o[8 * t + 6] = d & 0xff; o[8 * t + 7] = (d >> 8) & 0xff;
}''', "to_fp8", 8, 256, lambda r: [_f32_fp8_inputs(r), np.zeros(8 * 2048, np.uint8), np.int32(2048)])

case("fp8_from_every_half", r'''
#include <cuda_fp8.h>
__global__ void halves(unsigned short* e4, unsigned short* e5) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;        // every f16 bit pattern, twice
  __half2_raw h; h.x = (unsigned short)t; h.y = (unsigned short)(t ^ 0x8001);
  e4[t] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E4M3);
  e5[t] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E5M2);
}''', "halves", 256, 256, lambda r: [np.zeros(65536, np.uint16), np.zeros(65536, np.uint16)])

case("fp8_to_half_every_code", r'''
#include <cuda_fp8.h>
__global__ void widen(unsigned* from_e4, unsigned* from_e5, unsigned* relu) {
  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;        // every pair of fp8 codes
  __half2_raw a = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)t, __NV_E4M3);
  __half2_raw b = __nv_cvt_fp8x2_to_halfraw2((__nv_fp8x2_storage_t)t, __NV_E5M2);
  from_e4[t] = a.x | ((unsigned)a.y << 16);
  from_e5[t] = b.x | ((unsigned)b.y << 16);
  unsigned r;
  asm("cvt.rn.relu.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"((unsigned short)t));
  relu[t] = r;
}''', "widen", 256, 256, lambda r: [np.zeros(65536, np.uint32), np.zeros(65536, np.uint32), np.zeros(65536, np.uint32)])

case("fp8_software_paths", r'''
#include <cuda_fp8.h>
#include <cuda_bf16.h>
// Conversions the header does in software on every GPU: from double and bfloat16, and without
// saturation (overflow to Inf/NaN).
__global__ void soft(const double* d, const float* f, unsigned char* o) {
  int t = threadIdx.x;
  o[6 * t + 0] = __nv_cvt_double_to_fp8(d[t], __NV_SATFINITE, __NV_E4M3);
  o[6 * t + 1] = __nv_cvt_double_to_fp8(d[t], __NV_NOSAT, __NV_E5M2);
  __nv_bfloat16 b = __float2bfloat16_rn(f[t]);
  o[6 * t + 2] = __nv_cvt_bfloat16raw_to_fp8(*(__nv_bfloat16_raw*)&b, __NV_SATFINITE, __NV_E4M3);
  o[6 * t + 3] = __nv_cvt_bfloat16raw_to_fp8(*(__nv_bfloat16_raw*)&b, __NV_NOSAT, __NV_E5M2);
  o[6 * t + 4] = __nv_cvt_float_to_fp8(f[t], __NV_NOSAT, __NV_E4M3);
  o[6 * t + 5] = __nv_fp8_e5m2(f[t]).__x;
}''', "soft", 1, 512, lambda r: [np.concatenate([_f32_fp8_inputs(r)[:400].astype(np.float64),
                                                 r.standard_normal(112) * 1e3]), _f32_fp8_inputs(r)[100:612],
                                 np.zeros(6 * 512, np.uint8)])

def _small_float_inputs(r):
    """fp6/fp4 edges (their largest values 7.5 and 28 and 6, ties, tiny values, NaN, Inf), then spread-out values."""
    edges = np.array([0, -0.0, np.inf, -np.inf, np.nan, 7.5, 7.6, 8, 28, 30, 32, 6, 6.5, 0.25, 0.125, 0.0625, 0.09375,
                      -0.24, 1e-9, 5.0, 3.5, 0.75], np.float32)
    wide = (r.standard_normal(4096 - edges.size) * np.exp2(r.integers(-8, 7, 4096 - edges.size))).astype(np.float32)
    return np.concatenate([edges, wide])


case("fp6_fp4_software_conversions", r'''
#include <cuda_fp6.h>
#include <cuda_fp4.h>
// On sm_90 these are the header's software conversions; sm_100a has native cvt forms for them.
__global__ void small(const float* f, unsigned char* o, unsigned* back, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float2 v = make_float2(f[t], f[n - 1 - t]);
  __nv_fp6x2_storage_t a = __nv_cvt_float2_to_fp6x2(v, __NV_E2M3, cudaRoundNearest);
  __nv_fp6x2_storage_t b = __nv_cvt_float2_to_fp6x2(v, __NV_E3M2, cudaRoundNearest);
  __nv_fp4x2_storage_t c = __nv_cvt_float2_to_fp4x2(v, __NV_E2M1, cudaRoundNearest);
  o[5 * t] = a & 0xff; o[5 * t + 1] = a >> 8; o[5 * t + 2] = b & 0xff; o[5 * t + 3] = b >> 8; o[5 * t + 4] = c;
  __half2_raw x = __nv_cvt_fp6x2_to_halfraw2((__nv_fp6x2_storage_t)(t & 0x3f3f), __NV_E2M3);
  __half2_raw y = __nv_cvt_fp6x2_to_halfraw2((__nv_fp6x2_storage_t)(t & 0x3f3f), __NV_E3M2);
  __half2_raw z = __nv_cvt_fp4x2_to_halfraw2((__nv_fp4x2_storage_t)(t & 0xff), __NV_E2M1);
  back[3 * t] = x.x | ((unsigned)x.y << 16); back[3 * t + 1] = y.x | ((unsigned)y.y << 16);
  back[3 * t + 2] = z.x | ((unsigned)z.y << 16);
}''', "small", 16, 256, lambda r: [_small_float_inputs(r), np.zeros(5 * 4096, np.uint8), np.zeros(3 * 4096, np.uint32),
                                  np.int32(4096)])

# ------------------------------------------------------------------ griddepcontrol, fences, warp primitives

case("griddepcontrol_and_fences", r'''
__global__ void pdl(const int* in, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int v = in[t] * 5;
  asm volatile("griddepcontrol.wait;" ::: "memory");          // cudaGridDependencySynchronize()
  out[t] = v;
  __threadfence();
  asm volatile("fence.acq_rel.cluster;" ::: "memory");
  asm volatile("fence.sc.gpu;" ::: "memory");
  asm volatile("membar.sys;" ::: "memory");
  __nanosleep(100);
  asm volatile("griddepcontrol.launch_dependents;");          // cudaTriggerProgrammaticLaunchCompletion()
  out[t + 256] = v + 1;
}''', "pdl", 4, 64, lambda r: [i32_mix(r, 256) >> 4, np.zeros(512, np.int32)])

case("warp_votes_under_divergence_sm90", r'''
__global__ void votes(const unsigned* v, unsigned* out) {
  int t = threadIdx.x;
  unsigned x = v[t];
  unsigned* q = out + 8 * t;
  if (x % 3) {
    unsigned m = __activemask();
    q[0] = m;
    q[1] = __reduce_add_sync(m, x & 0xffff);
    q[2] = __reduce_max_sync(m, x >> 8);
    q[3] = __reduce_or_sync(m, x);
    q[4] = __match_any_sync(m, x % 5);
    int pred;
    q[5] = __match_all_sync(m, x & 1, &pred);
    q[6] = pred;
    q[7] = __reduce_min_sync(m, (int)x);
  } else {
    q[0] = __activemask(); q[1] = __reduce_xor_sync(__activemask(), x);
  }
}''', "votes", 1, 128, lambda r: [words(r, 128), np.zeros(1024, np.uint32)])

# ------------------------------------------------------------------ odd instructions, written out

case("fns_bmsk_szext", r'''
__global__ void bits(const unsigned* a, const unsigned* b, const int* c, unsigned* o) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t] % 40, r[6];
  r[0] = __fns(x, y % 32, c[t]);
  asm("fns.b32 %0, %1, %2, %3;" : "=r"(r[1]) : "r"(x), "r"(t % 32), "r"(-(t % 5)));
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(r[2]) : "r"(y), "r"(b[t] % 37));
  asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(r[3]) : "r"(y), "r"(b[t] % 37));
  asm("szext.clamp.s32 %0, %1, %2;" : "=r"(r[4]) : "r"(x), "r"(y));
  asm("szext.wrap.u32 %0, %1, %2;" : "=r"(r[5]) : "r"(x), "r"(y));
  for (int k = 0; k < 6; ++k) o[6 * t + k] = r[k];
}''', "bits", 1, 128, lambda r: [words(r, 128), words(r, 128), r.integers(-33, 34, 128).astype(np.int32),
                                 np.zeros(768, np.uint32)])

case("video_scalar_and_cvt_pack", r'''
__global__ void video(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t], z = c[t], r[10];
  asm("vadd.s32.s32.s32.sat %0, %1.b0, %2.h1;" : "=r"(r[0]) : "r"(x), "r"(y));
  asm("vsub.u32.s32.u32.sat.add %0, %1, %2, %3;" : "=r"(r[1]) : "r"(x), "r"(y), "r"(z));
  asm("vabsdiff.u32.u32.u32 %0.h0, %1.b2, %2.b3, %3;" : "=r"(r[2]) : "r"(x), "r"(y), "r"(z));
  asm("vmin.s32.s32.s32.max %0, %1, %2, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(z));
  asm("vmax.u32.u32.u32.sat %0, %1.h1, %2.h0;" : "=r"(r[4]) : "r"(x), "r"(y));
  asm("vshl.u32.u32.u32.clamp %0, %1, %2;" : "=r"(r[5]) : "r"(x), "r"(y % 40));
  asm("vshr.s32.s32.u32.wrap.add %0, %1, %2, %3;" : "=r"(r[6]) : "r"(x), "r"(y), "r"(z));
  asm("vmad.s32.s32.s32.sat %0, %1.h0, %2.h1, %3;" : "=r"(r[7]) : "r"(x), "r"(y), "r"(z));
  asm("vset.s32.u32.lt.add %0, %1.b1, %2.b1, %3;" : "=r"(r[8]) : "r"(x), "r"(y), "r"(z));
  asm("cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;" : "=r"(r[9]) : "r"(x), "r"(y), "r"(z));
  for (int k = 0; k < 10; ++k) o[10 * t + k] = r[k];
}''', "video", 1, 128, lambda r: [np.concatenate([np.array([0, 0xFFFFFFFF, 0x7FFFFFFF, 0x80000000, 0x80, 0x7F, 0xFF80,
                                                           0x8000, 0x12345678], np.uint32), words(r, 119)]),
                                  words(r, 128), words(r, 128), np.zeros(1280, np.uint32)])

case("simd_intrinsics_vset_forms", r'''
__global__ void simd(const unsigned* a, const unsigned* b, unsigned* o) {
  int t = threadIdx.x;
  unsigned x = a[t], y = b[t];
  unsigned* q = o + 8 * t;
  q[0] = __vcmpgts2(x, y); q[1] = __vcmpleu4(x, y); q[2] = __vcmpeq2(x, y); q[3] = __vcmpne4(x, y);
  q[4] = __vsetgts2(x, y); q[5] = __vsetltu4(x, y); q[6] = __vmaxs2(x, y); q[7] = __vsads4(x, y);
}''', "simd", 1, 128, lambda r: [words(r, 128), np.concatenate([words(r, 64), words(r, 64) & 0x00FF00FF]),
                                 np.zeros(1024, np.uint32)])

case("alloca_dynamic_stack", r'''
__global__ void dyn(const int* n, int* out) {
  int t = threadIdx.x, k = n[t];
  int* a;      // alloca gives a .local address; C++ pointers are generic
  asm volatile("{ .reg .u64 p; alloca.u64 p, %1, 16; cvta.local.u64 %0, p; }" : "=l"(a) : "l"((unsigned long long)(k * 4)));
  for (int i = 0; i < k; ++i) a[i] = i * t + k;
  int s = 0;
  for (int i = k - 1; i >= 0; --i) s = s * 3 + a[i];
  out[t] = s;
}''', "dyn", 1, 64, lambda r: [r.integers(1, 40, 64).astype(np.int32), np.zeros(64, np.int32)])
