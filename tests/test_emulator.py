"""The emulator core: SIMT control flow, memory spaces, warp primitives, printf, exact arithmetic."""
import numpy as np
import pytest

import cudalab


def run(src, name, grid, block, *args, shared=0):
    k = cudalab.compile(src).get_kernel(name)
    return k[grid, block, 0, shared](*args)


def test_divergent_loops_with_data_dependent_trip_counts():
    src = r'''
    __global__ void collatz(const unsigned* x, int* steps, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      unsigned v = x[i]; int s = 0;
      while (v != 1) { v = (v & 1) ? 3 * v + 1 : v / 2; ++s; }
      steps[i] = s;
    }'''
    x = np.arange(1, 301, dtype=np.uint32)
    out = np.zeros(300, np.int32)
    run(src, "collatz", 3, 128, x, out, np.int32(300))

    def steps(v):
        s = 0
        while v != 1:
            v = 3 * v + 1 if v & 1 else v // 2
            s += 1
        return s
    assert out.tolist() == [steps(int(v)) for v in x]


def test_recursive_device_function_not_inlined():
    src = r'''
    __device__ __noinline__ int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
    __global__ void k(int* out) { out[threadIdx.x] = fib(threadIdx.x); }'''
    out = np.zeros(16, np.int32)
    run(src, "k", 1, 16, out)
    fib = [0, 1]
    for _ in range(14):
        fib.append(fib[-1] + fib[-2])
    assert out.tolist() == fib


def test_local_array_and_generic_pointer_into_shared():
    src = r'''
    __device__ __noinline__ void bump(int* p, int by) { *p += by; }
    __global__ void k(int* out) {
      __shared__ int s[32];
      int loc[8];
      for (int j = 0; j < 8; ++j) loc[j] = j * threadIdx.x;
      s[threadIdx.x] = loc[threadIdx.x % 8];
      bump(&s[threadIdx.x], 1000);          // a generic pointer to shared memory
      bump(&loc[3], 1);                     // and one to local memory
      out[threadIdx.x] = s[threadIdx.x] + loc[3];
    }'''
    out = np.zeros(32, np.int32)
    run(src, "k", 1, 32, out)
    t = np.arange(32)
    assert out.tolist() == ((t % 8) * t + 1000 + 3 * t + 1).tolist()


def test_shuffles_with_width_and_votes():
    src = r'''
    __global__ void k(const int* x, int* o) {
      int t = threadIdx.x, v = x[t];
      o[t] = __shfl_xor_sync(0xffffffff, v, 1, 8) + 1000 * __shfl_sync(0xffffffff, v, 0, 16);
      unsigned b = __ballot_sync(0xffffffff, v % 3 == 0);
      if (t % 32 == 0) o[64 + t / 32] = b;
    }'''
    x = np.arange(64, dtype=np.int32) * 7
    o = np.zeros(66, np.int32)
    run(src, "k", 1, 64, x, o)
    t = np.arange(64)
    assert o[:64].tolist() == (x[t ^ 1] + 1000 * x[t // 16 * 16]).tolist()
    for w in range(2):
        bits = sum(1 << l for l in range(32) if x[32 * w + l] % 3 == 0)
        assert o[64 + w] == np.array(bits, np.uint32).view(np.int32)


def test_syncthreads_count_and_or():
    src = r'''
    __global__ void k(const int* x, int* o) {
      int c = __syncthreads_count(x[threadIdx.x] > 10);
      int a = __syncthreads_or(x[threadIdx.x] == 99);
      if (threadIdx.x == 0) { o[blockIdx.x * 2] = c; o[blockIdx.x * 2 + 1] = a; }
    }'''
    x = np.arange(100, dtype=np.int32)
    o = np.zeros(2, np.int32)
    run(src, "k", 1, 100, x, o)
    assert o.tolist() == [89, 1]


def test_printf_prints_in_thread_order(capsys):
    src = r'''
    __global__ void hello() { printf("block %d thread %d: %5.2f %s\n", blockIdx.x, threadIdx.x, 1.5f * threadIdx.x, "hi"); }'''
    rec = run(src, "hello", 2, 3)
    out = capsys.readouterr().out.splitlines()
    assert out == [f"block {b} thread {t}: {1.5 * t:5.2f} hi" for b in range(2) for t in range(3)]
    assert rec.printed and len(rec.printed) == 6


@pytest.mark.parametrize("dtype,ctype", [(np.float32, "float"), (np.float64, "double")])
def test_fma_is_correctly_rounded(dtype, ctype):
    src = f'''
    __global__ void k(const {ctype}* a, const {ctype}* b, const {ctype}* c, {ctype}* o, int n) {{
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) o[i] = fma(a[i], b[i], c[i]);
    }}'''
    rng = np.random.default_rng(7)
    n = 4096
    a, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    c = (-(a.astype(np.float64) * b)).astype(dtype) + rng.standard_normal(n).astype(dtype) * dtype(1e-6)
    o = np.zeros(n, dtype)
    run(src, "k", n // 256, 256, a, b, c, o, np.int32(n))
    from fractions import Fraction
    for i in range(0, n, 97):
        exact = Fraction(float(a[i])) * Fraction(float(b[i])) + Fraction(float(c[i]))
        want = dtype(float(exact)) if dtype == np.float64 else np.float32(np.float64(float(exact)))
        # float(Fraction) rounds correctly to double; for float32, check against neighbours too
        if dtype == np.float32:
            cands = [np.nextafter(want, -np.inf, dtype=np.float32), want, np.nextafter(want, np.inf, dtype=np.float32)]
            # nearest, ties to the even bit pattern (IEEE round-to-nearest-even)
            best = min(cands, key=lambda v: (abs(Fraction(float(v)) - exact), int(np.array(v).view(np.uint32)) & 1))
            assert o[i] == best, i
        else:
            assert o[i] == want, i


def test_atomics_on_shared_and_global_return_old_values():
    src = r'''
    __global__ void k(int* g, int* olds) {
      __shared__ int s;
      if (threadIdx.x == 0) s = 0;
      __syncthreads();
      int old = atomicAdd(&s, 1);
      olds[threadIdx.x] = old;
      __syncthreads();
      if (threadIdx.x == 0) atomicMax(g, s);
      atomicCAS(g + 1, 0, threadIdx.x + 1);
    }'''
    g = np.zeros(2, np.int32)
    olds = np.zeros(64, np.int32)
    run(src, "k", 1, 64, g, olds)
    assert sorted(olds.tolist()) == list(range(64))
    assert g.tolist() == [64, 1]          # CAS: the first thread in order wins


def test_block_size_not_a_multiple_of_32_and_3d_indices():
    src = r'''
    __global__ void k(int* o) {
      int b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
      int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
      o[b * 60 + t] = (threadIdx.z * 100 + threadIdx.y) * 100 + threadIdx.x + 1000000 * blockIdx.z;
    }'''
    o = np.zeros(60 * 12, np.int32)
    run(src, "k", (2, 3, 2), (5, 4, 3), o)
    idx = np.arange(60)
    tx, ty, tz = idx % 5, (idx // 5) % 4, idx // 20
    for b in range(12):
        bz = b // 6
        assert o[b * 60:(b + 1) * 60].tolist() == ((tz * 100 + ty) * 100 + tx + 1000000 * bz).tolist()


def test_half_precision_through_cuda_fp16():
    src = r'''
    #include <cuda_fp16.h>
    __global__ void k(const __half* a, const __half* b, __half* o, float* f) {
      int i = threadIdx.x;
      o[i] = __hadd(a[i], b[i]);
      f[i] = __half2float(__hmul(a[i], b[i]));
    }'''
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal(32).astype(np.float16), rng.standard_normal(32).astype(np.float16)
    o, f = np.zeros(32, np.float16), np.zeros(32, np.float32)
    run(src, "k", 1, 32, a, b, o, f)
    assert np.array_equal(o, (a.astype(np.float64) + b).astype(np.float16))
    assert np.array_equal(f, (a.astype(np.float64) * b).astype(np.float16).astype(np.float32))


GRID_SYNC = r'''
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void rotate(int* a, int* out) {
  cg::grid_group g = cg::this_grid();
  int i = g.thread_rank();
  a[i] = i;
  g.sync();                                   // every block's writes are visible to every block
  out[i] = a[(i + 1) % g.size()];
}'''


def test_grid_sync_runs_as_a_cooperative_launch():
    a, out = np.zeros(256, np.int32), np.zeros(256, np.int32)
    run(GRID_SYNC, "rotate", 4, 64, a, out)
    assert out.tolist() == [(i + 1) % 256 for i in range(256)]


def test_grid_sync_with_too_many_blocks_says_so():
    from cudalab import LaunchError
    big = 1 << 15
    with pytest.raises(LaunchError, match="grid.sync"):
        run(GRID_SYNC, "rotate", big, 64, np.zeros(big * 64, np.int32), np.zeros(big * 64, np.int32))


@pytest.mark.gpu
def test_grid_sync_matches_the_gpu():
    k = cudalab.compile(GRID_SYNC).get_kernel("rotate")
    result = k.compare(4, 64, (np.zeros(256, np.int32), np.zeros(256, np.int32)))
    assert result.same, repr(result)


def test_bfi_with_one_position_and_length_matches_the_per_lane_form():
    """bfi's immediate form (one mask for the whole warp) gives the bits of the per-lane form, which
    the integer corpus checks against an H100, for every position and length up to past the width."""
    from cudalab.emulator import alu
    rng = np.random.default_rng(7)
    for dt in (np.uint32, np.int32, np.uint64, np.int64):
        a = rng.integers(0, 2 ** 63, 64, dtype=np.int64).astype(dt)
        b = rng.integers(0, 2 ** 63, 64, dtype=np.int64).astype(dt)
        for pos in (0, 1, 7, 31, 32, 33, 63, 64, 255, 256, 300):
            for ln in (0, 1, 8, 24, 31, 32, 33, 64, 65, 255):
                lanes = alu.bfi(a, b, np.full(64, pos, np.uint32), np.full(64, ln, np.uint32))
                uniform = alu.bfi(a, b, np.uint32(pos), np.uint32(ln))
                assert uniform.dtype == lanes.dtype and (uniform == lanes).all(), (dt, pos, ln)


def test_a_grid_barrier_spinner_lets_another_blocks_leader_run_on_to_its_syncthreads():
    """The stack that NVIDIA's conjugateGradientMultiBlockCG left in the compiled tier (2 blocks of
    512 lanes): block 0's leader spins in a grid barrier waiting for block 1's leader, which is parked
    in the previous grid barrier's loop, heading for a __syncthreads() without writing memory. That
    path alone would keep it parked (a looper of its own block could not be waiting for it), but a
    __syncthreads() waits only for its own block, and block 1 has no looping thread: it runs on."""
    from types import SimpleNamespace
    from cudalab.emulator import engine
    n, lpb = 1024, 512

    def lanes(*which):
        mask = np.zeros(n, bool)
        mask[list(which)] = True
        return mask
    df = SimpleNamespace(heads_for_syncthreads={585: True, 586: True})     # as _paths_end_at_syncthreads found
    ex = SimpleNamespace(n=n, batch=SimpleNamespace(lanes_per_block=lpb), parked=None, fr=SimpleNamespace(df=df),
                         exited=np.zeros(n, bool), idx=np.array([0]))
    stack = [[586, 976, lanes(*range(513, 1024))], [585, 586, lanes(512)], [744, 748, lanes(0)]]
    assert engine._let_waiting_threads_run(stack, ex, np.zeros(n, bool))
    assert stack[-1][0] == 585 and np.flatnonzero(stack[-1][2]).tolist() == [512]
    # within one block the rule holds: its threads heading for that block's __syncthreads() stay parked
    stack = [[585, 586, lanes(1)], [744, 748, lanes(0)]]
    assert not engine._let_waiting_threads_run(stack, ex, np.zeros(n, bool))
