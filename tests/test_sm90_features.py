"""Compute capability 9.0 and the device runtime as a student meets them: thread block clusters and
distributed shared memory, kernels that launch kernels, big kernel parameters, elect.sync, PDL, the
small float formats, and the occupancy calculator's clusters. (Bit-exactness against an H100 is in
tests/kernels/sm90.py; these tests check the API, the errors and the limits.)"""
import json
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.errors import CompileError, KernelError, LaunchError

SM90 = ["-arch=compute_90"]
RDC = ["-arch=compute_90", "-rdc=true"]
DOCS = Path(__file__).parent.parent / "docs"


@pytest.fixture
def h100():
    from cudalab.device import current, set_device
    before = current()
    set_device("H100")
    yield
    set_device(before)


# ------------------------------------------------------------------ clusters

IDS = r'''
__global__ void ids(unsigned* out) {
  unsigned v[6];
  asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(v[0]));
  asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(v[1]));
  asm("mov.u32 %0, %%clusterid.x;" : "=r"(v[2]));
  asm("mov.u32 %0, %%clusterid.y;" : "=r"(v[3]));
  asm("mov.u32 %0, %%nclusterid.x;" : "=r"(v[4]));
  asm("{ .reg .pred p; mov.pred p, %%is_explicit_cluster; selp.u32 %0, 1, 0, p; }" : "=r"(v[5]));
  unsigned b = blockIdx.y * gridDim.x + blockIdx.x;
  if (threadIdx.x < 6) out[b * 6 + threadIdx.x] = v[threadIdx.x];
}'''


def test_cluster_launch_attribute_sets_the_cluster_registers(h100):
    k = cudalab.compile(IDS, options=SM90).ids
    out = np.zeros(6 * 6 * 4, np.uint32)
    k.launch((6, 4), 32, (out,), cluster=(3, 2, 1))
    got = out.reshape(4, 6, 6)                           # [blockIdx.y, blockIdx.x, value]
    by, bx = np.mgrid[0:4, 0:6]
    assert (got[..., 0] == (bx % 3) + (by % 2) * 3).all()       # rank in the cluster
    assert (got[..., 1] == 6).all()
    assert (got[..., 2] == bx // 3).all() and (got[..., 3] == by // 2).all()
    assert (got[..., 4] == 2).all() and (got[..., 5] == 1).all()


def test_without_clusters_every_block_is_a_cluster_of_one(h100):
    k = cudalab.compile(IDS, options=SM90).ids
    out = np.zeros(6 * 4, np.uint32)
    k[4, 32](out)
    assert out.reshape(4, 6).tolist() == [[0, 1, b, 0, 4, 0] for b in range(4)]


@pytest.mark.parametrize("cluster,grid,why", [
    ((3, 1, 1), 8, "not a multiple"),
    ((9, 1, 1), 9, "at most 8 blocks"),
    ((0, 1, 1), 4, "at least 1"),
])
def test_bad_cluster_launches_say_why(h100, cluster, grid, why):
    k = cudalab.compile(IDS, options=SM90).ids
    with pytest.raises(LaunchError) as e:
        k.launch(grid, 32, (np.zeros(6 * 16, np.uint32),), cluster=cluster)
    assert e.value.code == "cudaErrorInvalidClusterSize" and why in str(e.value)


def test_sixteen_blocks_need_the_non_portable_opt_in(h100):
    k = cudalab.compile(IDS, options=SM90).ids
    out = np.zeros(6 * 16, np.uint32)
    with pytest.raises(LaunchError, match="NonPortableClusterSizeAllowed"):
        k.launch(16, 32, (out,), cluster=16)
    k.non_portable_cluster_size_allowed = True
    k.launch(16, 32, (out,), cluster=16)
    assert out.reshape(16, 6)[:, 0].tolist() == list(range(16))


def test_cluster_dims_and_a_different_launch_attribute_conflict(h100):
    src = "__global__ void __cluster_dims__(2, 1, 1) k(int* o) { o[blockIdx.x] = 1; }"
    k = cudalab.compile(src, options=SM90).k
    k.launch(4, 32, (np.zeros(4, np.int32),), cluster=(2, 1, 1))        # the same shape: fine
    with pytest.raises(LaunchError, match="__cluster_dims__") as e:
        k.launch(8, 32, (np.zeros(8, np.int32),), cluster=(4, 1, 1))
    assert e.value.code == "cudaErrorInvalidClusterSize"


def test_clusters_need_an_sm90_device():
    k = cudalab.compile(IDS, options=SM90).ids
    with pytest.raises(LaunchError) as e:
        k.launch(4, 32, (np.zeros(24, np.uint32),), cluster=2)
    assert e.value.code == "cudaErrorNotSupported" and "9.0" in str(e.value)


DSMEM = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(4, 1, 1) neighbours(int* out, int peer_offset) {
  __shared__ int mine[32];
  cg::cluster_group cluster = cg::this_cluster();
  mine[threadIdx.x] = blockIdx.x * 100 + threadIdx.x;
  cluster.sync();
  int* theirs = cluster.map_shared_rank(mine, (cluster.block_rank() + peer_offset) % 4);
  out[blockIdx.x * 32 + threadIdx.x] = theirs[threadIdx.x];
  cluster.sync();
}'''


def test_blocks_read_each_others_shared_memory(h100):
    k = cudalab.compile(DSMEM, options=SM90).neighbours
    out = np.zeros(8 * 32, np.int32)
    k[8, 32](out, 1)
    b, t = np.divmod(np.arange(256), 32)
    assert (out == ((b // 4) * 4 + (b % 4 + 1) % 4) * 100 + t).all()


def test_a_rank_outside_the_cluster_is_a_memcheck_error(h100):
    src = DSMEM.replace("(cluster.block_rank() + peer_offset) % 4", "cluster.block_rank() + peer_offset")
    k = cudalab.compile(src, options=SM90).neighbours
    with pytest.raises(KernelError) as e:
        k[4, 32](np.zeros(4 * 32, np.int32), 1)
    assert e.value.code == "cudaErrorIllegalAddress" and "rank 4" in str(e.value) and "ranks 0..3" in str(e.value)


def test_cluster_sync_on_another_path_is_reported(h100):
    src = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void __cluster_dims__(2, 1, 1) split(int* out) {
  __shared__ int s;
  if (blockIdx.x == 0) { s = 1; cg::this_cluster().sync(); }
  else { s = 2; cg::this_cluster().sync(); }
  out[blockIdx.x] = *cg::this_cluster().map_shared_rank(&s, 1 - blockIdx.x);
}'''
    k = cudalab.compile(src, options=SM90).split
    with pytest.raises(KernelError, match="Cluster barrier") as e:
        k[2, 32](np.zeros(2, np.int32))
    assert e.value.findings[0].kind == "synccheck"


# ------------------------------------------------------------------ dynamic parallelism

TREE = r'''
#include <cstdio>
__global__ void node(int depth, int id) {
  if (threadIdx.x == 0) printf("depth %d node %d\n", depth, id);
  if (depth >= 2) return;
  if (threadIdx.x < 2) node<<<1, 4>>>(depth + 1, id * 2 + threadIdx.x);
  if (threadIdx.x == 3) node<<<1, 1, 0, cudaStreamTailLaunch>>>(99, id);
}'''


def test_children_print_after_their_parent_and_tail_launches_come_last(capsys):
    rec = cudalab.compile(TREE, options=RDC).node[1, 4](0, 1)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "depth 0 node 1"
    assert sorted(lines) == sorted(["depth 0 node 1", "depth 1 node 2", "depth 1 node 3", "depth 2 node 4",
                                    "depth 2 node 5", "depth 2 node 6", "depth 2 node 7", "depth 99 node 1",
                                    "depth 99 node 2", "depth 99 node 3"])
    assert lines[-1] == "depth 99 node 1"             # the root's tail launch, after everything it started
    assert len(rec.device_launches) == 9
    assert [d["stream"] for d in rec.device_launches].count("tail") == 3
    assert max(d["depth"] for d in rec.device_launches) == 2
    assert sum(d["instructions"] for d in rec.device_launches if d["depth"] == 1) > 0


def test_endless_device_recursion_is_stopped_by_the_watchdog():
    src = "__global__ void forever(int d) { forever<<<1, 2>>>(d + 1); forever<<<1, 2>>>(d + 1); }"
    cudalab.set_watchdog(1)
    try:
        with pytest.raises(KernelError, match="watchdog") as e:
            cudalab.compile(src, options=RDC).forever[1, 1](0)
    finally:
        cudalab.set_watchdog(10)
    assert e.value.code == "cudaErrorLaunchTimeout"


def test_device_side_cudaDeviceSynchronize_does_not_compile():
    src = "__global__ void c() {}\n__global__ void p() { c<<<1, 1>>>(); cudaDeviceSynchronize(); }"
    with pytest.raises(CompileError, match="cudaDeviceSynchronize"):
        cudalab.compile(src, options=RDC)


# a parent that frees its child's buffer right after launching it (CDP1 code ported to CDP2 without its
# cudaDeviceSynchronize): the child runs after the parent's grid, and on an H200 it still reads the
# bytes, since the device heap stays mapped after a free (gpu-programming-101's recursive ray tracer)
HANDOFF = r'''
__global__ void child(const float* in, float* out) { *out = 2.0f * *in; }
__global__ void parent(float* out, int free_twice) {
  float* buf;
  cudaMalloc((void**)&buf, sizeof(float));
  *buf = 21.0f;
  child<<<1, 1>>>(buf, out);
  cudaFree(buf);                         // before the child has run
  if (free_twice) out[1] = (float)cudaFree(buf);
}'''


def test_a_child_reads_the_buffer_its_parent_freed_after_launching_it():
    k = cudalab.compile(HANDOFF, options=RDC).parent
    out = np.zeros(2, np.float32)
    k[1, 1](out, np.int32(0))
    assert out[0] == 42.0
    # the block is still freed only once: a second cudaFree answers cudaErrorInvalidValue (1)
    k[1, 1](out, np.int32(1))
    assert out.tolist() == [42.0, 1.0]


def test_too_many_pending_launches_fail_with_their_error_code():
    src = r'''
__global__ void tiny(int* ran) { atomicAdd(ran, 1); }
__global__ void many(int* ran, int* failed, int* code) {
  tiny<<<1, 1>>>(ran);
  int e = (int)cudaGetLastError();
  if (e) { atomicAdd(failed, 1); *code = e; }
}'''
    k = cudalab.compile(src, options=RDC).many
    ran, failed, code = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
    cudalab.set_device_limit("DevRuntimePendingLaunchCount", 100)    # cudaDeviceSetLimit, as a program would
    try:
        k[2, 128](ran, failed, code)
    finally:
        cudalab.set_device_limit("DevRuntimePendingLaunchCount", 2048)
    assert (ran[0], failed[0], code[0]) == (100, 156, 69)       # cudaErrorLaunchPendingCountExceeded


def test_nesting_stops_at_256_levels():
    src = r'''
__global__ void dive(int* seen, int depth) {
  seen[depth] = 1;
  if (depth >= 300) return;
  dive<<<1, 1>>>(seen, depth + 1);
  int e = (int)cudaGetLastError();
  if (e) seen[512 + depth] = e;
}'''
    seen = np.zeros(1024, np.int32)
    cudalab.compile(src, options=RDC).dive[1, 1](seen, 0)
    assert seen[:256].all() and not seen[256:512].any()
    assert seen[512 + 255] == 65                            # cudaErrorLaunchMaxDepthExceeded
    assert np.count_nonzero(seen[512:]) == 1


def test_a_fault_in_a_child_names_the_child_and_its_parent():
    src = r'''
__global__ void child(int* p) { p[1ll << 36] = 1; }     // far past any allocation (4 MB past could be another test's)
__global__ void parent(int* p) { if (threadIdx.x == 1) child<<<1, 1>>>(p); }'''
    with pytest.raises(KernelError) as e:
        cudalab.compile(src, options=RDC).parent[1, 2](np.zeros(4, np.int32))
    msg = str(e.value)
    assert "kernel child" in msg and "launched from the device by thread (1,0,0) of block (0,0,0) of kernel parent" in msg


# ------------------------------------------------------------------ large parameters, elect, PDL, alloca

def test_a_32000_byte_parameter_is_read_through_pointers():
    src = r'''
struct Table { int v[8000]; };
__device__ __noinline__ long long sum(const int* p, int n) { long long s = 0; for (int i = 0; i < n; ++i) s += p[i]; return s; }
__global__ void total(__grid_constant__ const Table t, long long* out) {
  out[threadIdx.x] = sum(&t.v[threadIdx.x * 1000], 1000);
}'''
    v = np.arange(8000, dtype=np.int32) * 3 - 7
    out = np.zeros(8, np.int64)
    cudalab.compile(src, options=SM90).total[1, 8](v.view(np.dtype((np.void, 32000)))[0], out)
    assert out.tolist() == [int(v[i * 1000:(i + 1) * 1000].sum()) for i in range(8)]


def test_elect_sync_picks_the_lowest_member_lane():
    src = r'''
__global__ void leader(unsigned mask, unsigned* out) {
  unsigned lane = 99, me = 0;
  if ((mask >> threadIdx.x) & 1)
    asm volatile("{ .reg .pred p; elect.sync %0|p, %2; selp.u32 %1, 1, 0, p; }" : "=r"(lane), "=r"(me) : "r"(mask));
  out[threadIdx.x] = lane * 10 + me;
}'''
    out = np.zeros(32, np.uint32)
    cudalab.compile(src, options=SM90).leader[1, 32](np.uint32(0x0000F0F0), out)
    members = [t for t in range(32) if (0xF0F0 >> t) & 1]
    assert out.tolist() == [(41 if t == 4 else 40) if t in members else 990 for t in range(32)]


def test_griddepcontrol_is_recorded_for_the_timeline():
    src = r'''
__global__ void stage(int* a, int n) {
  a[threadIdx.x] *= 2;
  asm volatile("griddepcontrol.launch_dependents;");
  for (int i = 0; i < n; ++i) a[threadIdx.x] = a[threadIdx.x] * 3 + i;
}'''
    rec = cudalab.compile(src, options=SM90).stage[1, 32](np.ones(32, np.int32), 50)
    frac = rec.reports["pdl"]["trigger_fraction"]
    assert 0.0 < frac < 0.5                                  # triggered early: the loop is most of the work


def test_alloca_memory_is_local_and_per_thread():
    src = r'''
__global__ void dyn(int* out) {
  int* a;
  asm volatile("{ .reg .u64 p; alloca.u64 p, %1, 8; cvta.local.u64 %0, p; }" : "=l"(a) : "l"(4ull * (threadIdx.x + 1)));
  for (int i = 0; i <= threadIdx.x; ++i) a[i] = i * threadIdx.x;
  int s = 0;
  for (int i = 0; i <= threadIdx.x; ++i) s += a[i];
  out[threadIdx.x] = s;
}'''
    out = np.zeros(32, np.int32)
    cudalab.compile(src, options=SM90).dyn[1, 32](out)
    assert out.tolist() == [t * t * (t + 1) // 2 for t in range(32)]


# ------------------------------------------------------------------ small floats

def test_fp8_formats_have_their_documented_ranges():
    from cudalab.emulator import minifloat as mf
    assert np.nanmax(mf.table("e4m3")) == 448 and np.nanmax(mf.table("e5m2")) == np.inf
    assert mf.encode([1e9, -1e9, np.inf], "e4m3").tolist() == [0x7E, 0xFE, 0x7E]     # satfinite: +-448
    assert mf.encode([1e9, np.inf, np.nan], "e5m2").tolist() == [0x7B, 0x7B, 0x7F]   # 57344 and NaN
    assert mf.encode([2.0 ** -10, 3 * 2.0 ** -10, 3 * 2.0 ** -11], "e4m3").tolist() == [0, 2, 1]   # ties to even
    assert mf.decode(np.arange(256), "e4m3")[[1, 8, 0x7F]].tolist()[:2] == [2.0 ** -9, 2.0 ** -6]


SMALL = r'''
#include <cuda_fp6.h>
#include <cuda_fp4.h>
__global__ void small(const float* f, unsigned char* o, unsigned* back, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float2 v = make_float2(f[t], f[n - 1 - t]);
  __nv_fp6x2_storage_t a = __nv_cvt_float2_to_fp6x2(v, __NV_E2M3, cudaRoundNearest);
  __nv_fp6x2_storage_t b = __nv_cvt_float2_to_fp6x2(v, __NV_E3M2, cudaRoundNearest);
  __nv_fp4x2_storage_t c = __nv_cvt_float2_to_fp4x2(v, __NV_E2M1, cudaRoundNearest);
  o[5 * t] = a & 0xff; o[5 * t + 1] = a >> 8; o[5 * t + 2] = b & 0xff; o[5 * t + 3] = b >> 8; o[5 * t + 4] = c;
  __half2_raw x = __nv_cvt_fp6x2_to_halfraw2((__nv_fp6x2_storage_t)(t & 0x3f3f), __NV_E3M2);
  __half2_raw z = __nv_cvt_fp4x2_to_halfraw2((__nv_fp4x2_storage_t)(t & 0xff), __NV_E2M1);
  back[2 * t] = x.x | ((unsigned)x.y << 16); back[2 * t + 1] = z.x | ((unsigned)z.y << 16);
}'''


def test_native_fp6_fp4_conversions_match_the_headers_software():
    """sm_100a compiles these to cvt ... e2m3x2/e3m2x2/e2m1x2 (minifloat.py); sm_90 to NVIDIA's
    software versions in cuda_fp6.h/cuda_fp4.h. Both must agree on every input class."""
    rng = np.random.default_rng(5)
    f = np.concatenate([np.array([0, -0.0, np.inf, -np.inf, np.nan, 7.5, 7.6, 8, 28, 30, 32, 6, 6.5, 0.25, 0.125,
                                  0.0625, 0.09375, -0.24, 1e-9], np.float32),
                        (rng.standard_normal(4077) * np.exp2(rng.integers(-8, 7, 4077))).astype(np.float32)])
    results = []
    for arch in ("compute_90", "compute_100a"):
        m = cudalab.compile(SMALL, options=[f"-arch={arch}"])
        assert ("e2m3x2" in m.ptx) == (arch == "compute_100a")
        o, back = np.zeros(5 * 4096, np.uint8), np.zeros(2 * 4096, np.uint32)
        m.small[16, 256](f, o, back, 4096)
        results.append((o, back))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])


# ------------------------------------------------------------------ occupancy and widgets

PLAIN = r'''
extern "C" __global__ void plain(float* o) {
  extern __shared__ float s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (o) o[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}'''


def test_max_active_clusters_matches_the_h100_driver():
    """Every configuration tools/cluster_cdp_gpu.py asked the H100's driver (docs/cluster_cdp_h100.json):
    the blocks per SM come from the occupancy calculator, the cluster count from them."""
    k = cudalab.compile(PLAIN, options=SM90).plain
    rows = json.loads((DOCS / "cluster_cdp_h100.json").read_text())["occupancy"]
    checked = 0
    for r in rows:
        if not isinstance(r["max_active_clusters"], int):
            continue
        got = cudalab.max_active_clusters(k, r["block"], r["cluster"], r["smem"], device="H100",
                                          non_portable=bool(r["nonportable"]), max_dynamic_smem=227 * 1024)
        assert got.blocks_per_sm == r["blocks_per_sm"], r
        assert got.max_active_clusters == r["max_active_clusters"], r
        checked += 1
    assert checked == 340
    assert cudalab.max_potential_cluster_size(k, 128, device="H100") == 8
    assert cudalab.max_potential_cluster_size(k, 128, device="H100", non_portable=True) == 16


def test_occupancy_widget_and_thread_hierarchy_know_clusters(h100):
    from cudalab.widgets import hierarchy, occupancy, trace
    m = occupancy.occupancy_model(256, 32, 0, "H100", 4)
    assert m["clusters"]["resident"] == 248 and "clusters of 4 blocks" in occupancy.render_svg(m)
    assert occupancy.occupancy_model(256, 32, 0, "A100", 4)["clusters"] is None
    k = cudalab.compile(IDS, options=SM90).ids
    rec = trace(k, (6, 4), 32, (np.zeros(144, np.uint32),), cluster=(3, 2, 1))
    t = rec.reports["threads"]
    assert t.cluster == (3, 2, 1) and "rank in cluster" in hierarchy.colour_choices(t)
    hm = hierarchy.hierarchy_model(t, block=10, thread=0)           # blockIdx (4, 1)
    assert hm["cluster_idx"] == (1, 0, 0) and hm["cluster_rank"] == 4
    assert "block rank 4" in hierarchy.details_html(hm)
