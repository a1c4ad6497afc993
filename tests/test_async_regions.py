"""cp.async pipelines in native code (emulator/async_native.py): a loop that issues copies, commits
groups, waits and meets at __syncthreads() is one region of the compiled tier, whose copies are
read when issued and land at the issuing thread's wait, as asyncops lands them. Each kernel runs
under both tiers and must give the interpreter's bytes, thread-instruction counts and errors.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import cudalab

sys.path.insert(0, str(Path(__file__).parent))
from test_compiled import both_tiers, same_in_both_tiers  # noqa: E402


@pytest.fixture
def native_copies(monkeypatch, tmp_path):
    """How often a region holding cp.async ran natively, and how many times its copies were handed
    to asyncops (built here, not loaded from another run's cache)."""
    from cudalab.emulator import async_native, regions
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    seen = {"runs": 0, "handed": 0}
    run, hand = regions.Runner._run, async_native.hand_over

    def counting_run(self, ex, stack, ent):
        seen["runs"] += bool(self.r.copies)
        return run(self, ex, stack, ent)

    def counting_hand(*args):
        seen["handed"] += 1
        return hand(*args)
    monkeypatch.setattr(regions.Runner, "_run", counting_run)
    monkeypatch.setattr(async_native, "hand_over", counting_hand)
    return seen


# three stages in a ring: two groups in flight while the third is waited for (wait_group 2), and
# each thread sums a neighbour's copy, which only the barrier makes visible
RING = r"""
#include <cuda_pipeline.h>
#define STAGES 3
__global__ void ring(const float4* in, float* out, int tiles) {
    __shared__ __align__(16) float4 ring[STAGES][64];
    int t = threadIdx.x;
    const float4* base = in + blockIdx.x * tiles * 64;
    float acc = 0.0f;
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) __pipeline_memcpy_async(&ring[s][t], &base[s * 64 + t], 16);
        __pipeline_commit();
    }
    for (int k = 0; k < tiles; ++k) {
        int next = k + STAGES - 1;
        if (next < tiles) __pipeline_memcpy_async(&ring[next % STAGES][t], &base[next * 64 + t], 16);
        __pipeline_commit();
        __pipeline_wait_prior(STAGES - 1);
        __syncthreads();
        float4 v = ring[k % STAGES][(t + 1) % 64];
        acc += v.x + 2.0f * v.y + 3.0f * v.z + 4.0f * v.w;
        __syncthreads();
    }
    out[blockIdx.x * 64 + t] = acc;
}
"""


def test_a_ring_of_stages_with_groups_in_flight_runs_natively_with_the_interpreters_bytes(native_copies,
                                                                                          monkeypatch):
    rng = np.random.default_rng(17)
    tiles = 7
    data = rng.random((5 * tiles * 64, 4), np.float32)
    args = same_in_both_tiers(monkeypatch, RING, "ring", 5, 64,
                              lambda: [data, np.zeros(5 * 64, np.float32), np.int32(tiles)])
    want = (data.reshape(5, tiles, 64, 4) @ np.float32([1, 2, 3, 4])).astype(np.float32)
    assert np.allclose(args[1].reshape(5, 64), np.roll(want, -1, axis=2).sum(axis=1), rtol=1e-5)
    assert native_copies["runs"] and not native_copies["handed"]


# inline PTX: 4- and 8-byte .ca copies whose src-size comes from a register (0: zeros, nothing read;
# the full size: every byte; part of it: the interpreter's), and an ignore-src predicate
ZFILL = r"""
__device__ unsigned smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__global__ void zfill(const int* in, int n, int partial, int* out4, long long* out8, int* outi) {
    __shared__ __align__(16) int s4[128];
    __shared__ __align__(16) long long s8[128];
    __shared__ __align__(16) int si[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
    s4[t] = -1; s8[t] = -1; si[t] = -1;
    __syncthreads();
    unsigned n4 = i < n ? 4 : 0;
    unsigned n8 = 2 * i + 1 < n ? 8 : 2 * i < n ? (partial ? 4 : 0) : 0;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(smem(&s4[t])), "l"(in + i), "r"(n4));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" :: "r"(smem(&s8[t])), "l"(in + 2 * i), "r"(n8));
    asm volatile("{ .reg .pred p; setp.ge.s32 p, %2, %3;\n"
                 "  cp.async.ca.shared.global [%0], [%1], 4, p; }" :: "r"(smem(&si[t])), "l"(in + i), "r"(i), "r"(n));
    asm volatile("cp.async.commit_group;");
    asm volatile("cp.async.wait_group 0;");
    __syncthreads();
    out4[i] = s4[(t + 1) % blockDim.x];
    out8[i] = s8[t];
    outi[i] = si[t];
}
"""


@pytest.mark.parametrize("partial", [0, 1])
def test_zero_fill_and_a_partial_last_block_read_nothing_past_the_array(partial, native_copies, monkeypatch):
    """The last block's threads past ``n`` copy zeros from addresses past the array's end, which
    neither tier reads (memcheck is on: a read there would be an error); a 4-byte src-size of an
    8-byte copy (``partial``) is left to the interpreter, the rest stays native."""
    n = 300                                     # 3 blocks of 128: the last one partly past the end
    data = np.arange(1, 2 * 3 * 128 + 1, dtype=np.int32)

    def run():
        src = cudalab.to_device(data[:n])
        outs = [cudalab.to_device(np.zeros(384, t)) for t in (np.int32, np.int64, np.int32)]
        rec = cudalab.compile(ZFILL).get_kernel("zfill")[3, 128](src, np.int32(n), np.int32(partial), *outs)
        return [o.copy_to_host().tobytes() for o in outs], rec.thread_instructions
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["compiled"][0] is None
    (b4, b8, bi), _ = got["compiled"][1]
    i = np.arange(384)
    want4 = np.where(i < n, i + 1, 0)
    assert (np.frombuffer(b4, np.int32) == np.roll(want4.reshape(3, 128), -1, axis=1).ravel()).all()
    lo, hi = np.where(2 * i < n, 2 * i + 1, 0), np.where(2 * i + 1 < n, 2 * i + 2, 0)
    if not partial:
        lo = np.where(2 * i + 1 < n, lo, 0)
    assert (np.frombuffer(b8, np.int64) == (lo.astype(np.int64) | hi.astype(np.int64) << 32)).all()
    assert (np.frombuffer(bi, np.int32) == want4).all()
    assert native_copies["runs"]


# a thread reads its destination before its wait (the old bytes, as on an H100), then after it
# (its own copy), and a neighbour's after the wait with no barrier between (lock step: landed)
EARLY = r"""
#include <cuda_pipeline.h>
__global__ void early(const int* in, int* before, int* after, int* neighbour) {
    __shared__ __align__(16) int s[128];
    int t = threadIdx.x, i = blockIdx.x * 128 + t;
    s[t] = -7;
    __syncthreads();
    __pipeline_memcpy_async(&s[t], &in[i], 4);
    __pipeline_commit();
    before[i] = s[t];
    __pipeline_wait_prior(0);
    after[i] = s[t];
    neighbour[i] = s[t ^ 1];
}
"""


def test_a_read_before_the_wait_sees_the_old_bytes_and_one_after_it_the_copy(native_copies, monkeypatch):
    data = np.arange(100, 100 + 256, dtype=np.int32)
    args = same_in_both_tiers(monkeypatch, EARLY, "early", 2, 128,
                              lambda: [data, *(np.zeros(256, np.int32) for _ in range(3))])
    assert (args[1] == -7).all()
    assert (args[2] == data).all()
    assert (args[3] == data.reshape(-1, 2)[:, ::-1].ravel()).all()
    assert native_copies["runs"]


# more copies in flight than a thread's native queue holds: the thread stops at the copy that
# does not fit, its queued copies go to asyncops, and the interpreter's wait lands them all
DEEP = r"""
#include <cuda_pipeline.h>
#define K 40
__global__ void deep(const int* in, int* out) {
    __shared__ __align__(16) int s[K][64];
    int t = threadIdx.x;
    __syncthreads();
    for (int k = 0; k < K; ++k) {
        __pipeline_memcpy_async(&s[k][t], &in[(blockIdx.x * K + k) * 64 + t], 4);
        __pipeline_commit();
    }
    __pipeline_wait_prior(3);
    __syncthreads();
    int sum = 0;
    for (int k = 0; k < K - 3; ++k) sum += s[k][(t + k) % 64] * (k + 1);
    __syncthreads();
    __pipeline_wait_prior(0);
    out[blockIdx.x * 64 + t] = sum + s[K - 1][t];
}
"""


def test_more_copies_in_flight_than_the_queue_holds_are_handed_to_the_interpreter(native_copies, monkeypatch):
    data = np.random.default_rng(3).integers(-1000, 1000, 2 * 40 * 64).astype(np.int32)
    args = same_in_both_tiers(monkeypatch, DEEP, "deep", 2, 64, lambda: [data, np.zeros(128, np.int32)])
    tiles = data.reshape(2, 40, 64)
    k = np.arange(37)[:, None]
    t = np.arange(64)
    want = (tiles[:, k, (t + k) % 64] * (k + 1)[None]).sum(axis=1) + tiles[:, 39, :]
    assert (args[1] == want.ravel()).all()
    assert native_copies["runs"] and native_copies["handed"]


TAIL = r"""
#include <cuda_pipeline.h>
__global__ void tail(const float* in, float* out, int tiles) {
    __shared__ __align__(16) float s[2][32];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < tiles; ++k) {
        __pipeline_memcpy_async(&s[k & 1][t], &in[(blockIdx.x * tiles + k) * 32 + t + (k == tiles - 1 && blockIdx.x == 2 ? 40 : 0)], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        acc += s[k & 1][31 - t];
        __syncthreads();
    }
    out[blockIdx.x * 32 + t] = acc;
}
"""


def test_memcheck_names_the_line_of_a_copy_from_past_the_array_in_both_tiers(native_copies, monkeypatch):
    data = np.ones(3 * 4 * 32, np.float32)

    def run():
        out = cudalab.to_device(np.zeros(96, np.float32))
        cudalab.compile(TAIL).get_kernel("tail")[3, 32](cudalab.to_device(data), out, np.int32(4))
        return out.copy_to_host().tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "line 8" in got["compiled"][0] and "Invalid __global__ read of size 4 bytes" in got["compiled"][0]
    assert native_copies["runs"]


# two threads' copies of one group write the same shared bytes: lock step issues the first copy of
# every thread before any second one, so each slot ends with the second copy's bytes, as asyncops
# lands rows in issue order, then lane order (a race on a GPU: the tiers must still agree)
OVERLAP = r"""
#include <cuda_pipeline.h>
__global__ void overlap(const long long* first, const long long* second, long long* out) {
    __shared__ __align__(16) long long s[64];
    int t = threadIdx.x;
    __syncthreads();
    __pipeline_memcpy_async(&s[t], &first[t], 8);
    __pipeline_memcpy_async(&s[(t + 5) % 64], &second[t], 8);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    out[t] = s[t];
}
"""


def test_copies_of_two_threads_to_the_same_bytes_land_in_lock_steps_order(native_copies, monkeypatch):
    first = np.arange(64, dtype=np.int64)
    second = -np.arange(1, 65, dtype=np.int64)
    args = same_in_both_tiers(monkeypatch, OVERLAP, "overlap", 1, 64,
                              lambda: [first, second, np.zeros(64, np.int64)])
    assert (args[2] == np.roll(second, 5)).all()
    assert native_copies["runs"]


def _bench_async_pipeline():
    """bench/async_pipeline.py, imported by its path (bench is no package)."""
    import importlib.util
    path = Path(__file__).parent.parent / "bench" / "async_pipeline.py"
    spec = importlib.util.spec_from_file_location("bench_async_pipeline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["staged", "staged_sync"])
def test_a_thread_scope_cuda_pipeline_whose_wait_is_a_switch_runs_natively_with_the_interpreters_bytes(
        name, native_copies, monkeypatch):
    """The benchmark's four-stage cuda::pipeline (bench/async_pipeline.py): its producer is a loop that
    keeps three tiles ahead, and consumer_wait a switch over cp.async.wait_group 0 to 8 on how many
    groups are in flight. At 64^3 both tiers give the same bytes and thread-instruction counts, C is
    numpy's, and the copies never leave native code."""
    bench = _bench_async_pipeline()
    a, b = bench.inputs(64)
    args = same_in_both_tiers(monkeypatch, bench.KERNELS, bench.NAMES[name], (4, 4), (16, 16),
                              lambda: [a, b, np.zeros((64, 64), np.float32), np.int32(64)])
    assert np.array_equal(args[2], a @ b)
    assert native_copies["runs"] and not native_copies["handed"]
