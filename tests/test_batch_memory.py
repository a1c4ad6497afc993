"""A kernel of many registers over a big grid runs in batches small enough for a student's
notebook: the emulator keeps one register array per PTX register per lane, and a kernel of
thousands of registers (cuda-samples' cudaTensorCoreGemm: 35,000) over 2^17 lanes would need
gigabytes; its batches get fewer blocks instead (engine.BATCH_BYTES)."""
import tracemalloc

import numpy as np

import cudalab
from cudalab.emulator import engine

# 128 values kept in registers at once (the unrolled local array), then summed in pairs: 270 PTX registers
MANY_REGISTERS = r"""
__global__ void many(const float *x, float *out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[128];
#pragma unroll
    for (int k = 0; k < 128; k++) v[k] = x[i] * (k + 1);
    float s = 0;
#pragma unroll
    for (int k = 0; k < 128; k++) s += v[k] * v[127 - k];
    out[i] = s;
}
"""


def test_a_kernel_with_many_registers_over_a_big_grid_stays_within_the_batch_budget(monkeypatch):
    budget = 16 << 20
    monkeypatch.setattr(engine, "BATCH_BYTES", budget)
    monkeypatch.setenv("CUDALAB_TIER", "interp")        # the interpreter makes each register on first use
    n = 1 << 17
    mod = cudalab.compile(MANY_REGISTERS)
    x, out = cudalab.to_device(np.arange(n, dtype=np.float32) % 4), cudalab.device_array(n, np.float32)
    mod.many[1, 256](x, out)                            # decoded and warm: only the batches are measured
    program = next(iter(mod._programs.values()))
    per_lane = engine.register_bytes(program.function(mod.many.mangled))
    assert per_lane * n > 8 * budget                    # in one batch of 2^17 lanes: over 140 MB of registers
    tracemalloc.start()
    try:
        mod.many[n // 256, 256](x, out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * budget                            # (152 MB without the budget)
    pairs = sum((k + 1) * (128 - k) for k in range(128))
    np.testing.assert_array_equal(out.copy_to_host(), (np.arange(n) % 4) ** 2 * pairs)


# a GEMM's k-loop as nvcc unrolls it: four stretches of wmma.load and wmma.mma between barriers, each one
# program (mma_runs.Run) whose fragments and accumulators are fresh registers that only it names
UNROLLED_K_LOOPS = r"""
#include <mma.h>
using namespace nvcuda;
__global__ void gemm(const half *a, const half *b, float *c) {
    __shared__ half sa[16 * 64], sb[16 * 64];
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
    wmma::fill_fragment(acc, 0);
#pragma unroll
    for (int h = 0; h < 4; h++) {
        for (int i = threadIdx.x; i < 16 * 64; i += blockDim.x) { sa[i] = a[h * 1024 + i]; sb[i] = b[h * 1024 + i]; }
        __syncthreads();
#pragma unroll
        for (int s = 0; s < 4; s++) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
            wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
            wmma::load_matrix_sync(fa, sa + s * 16, 64);
            wmma::load_matrix_sync(fb, sb + s * 16, 64);
            wmma::mma_sync(acc, fa, fb, acc);
        }
        __syncthreads();
    }
    wmma::store_matrix_sync(c + (blockIdx.x * blockDim.x + threadIdx.x) / 32 * 256, acc, 16, wmma::mem_row_major);
}
"""


def _gemm_inputs(rng, random):
    """A and B of UNROLLED_K_LOOPS (16 x 256 halves each): small integers (every sum proven exact in the
    compiled loop) or random halves (every warp stops at its mmas: the numpy path sums them)."""
    if random:
        return [(rng.random(16 * 256) - 0.5).astype(np.float16) for _ in range(2)]
    return [rng.integers(0, 3, 16 * 256).astype(np.float16) for _ in range(2)]


def test_registers_only_a_tensor_core_program_names_do_not_shrink_the_batch():
    """The registers of an unrolled k-loop that nothing but its program names get no array over the
    batch (one scratch buffer serves every program), so they do not count against engine.BATCH_BYTES:
    tf32TensorCoreGemm's 45 of 53 kB a lane made its batches 19 blocks where 77 fit. What the largest
    program would hold still counts (a stop hands its registers arrays until the program ends)."""
    from cudalab.emulator import mma_runs
    from cudalab.emulator.dtypes import storage
    mod = cudalab.compile(UNROLLED_K_LOOPS)
    a, b = _gemm_inputs(np.random.default_rng(1), False)
    mod.gemm[1, 64](a, b, np.zeros(2 * 256, np.float32))
    program = next(iter(mod._programs.values()))
    df = program.function(mod.gemm.mangled)
    runs = [fn for _, fn, _, _ in df.code if isinstance(fn, mma_runs.Run)]
    assert len(runs) == 4
    every = sum(storage(t).itemsize for t in df.func.regs.values())
    held = [4 * len(r.unheld) for r in runs]                # (the fragments and accumulators are 32-bit)
    assert min(held) > 0
    assert engine.register_bytes(df) == every - sum(held) + max(held)


def test_a_program_whose_warps_stopped_leaves_no_arrays_for_its_own_registers(monkeypatch):
    """Random halves stop every warp at its mmas; the stopped instructions' own path then reads the
    program's registers from arrays (Run._hand_over). Once the program ends, nothing can read them, and
    they are dropped: kept, the four programs' arrays would pile up in a batch sized without them. Either
    way the product is A B."""
    from cudalab.emulator import mma_native, mma_runs
    monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
    left, handed = [], []
    run, hand_over = mma_runs.Run.__call__, mma_runs.Run._hand_over
    monkeypatch.setattr(mma_runs.Run, "_hand_over", lambda self, ex, scratch: handed.append(hand_over(self, ex, scratch)))

    def watched(self, ex):
        run(self, ex)
        left.append(sum(name in ex.fr.regs for name in self.unheld))
    monkeypatch.setattr(mma_runs.Run, "__call__", watched)
    mod = cudalab.compile(UNROLLED_K_LOOPS)
    rng = np.random.default_rng(2)
    for random in (False, True):
        a, b = _gemm_inputs(rng, random)
        c = cudalab.device_array(8 * 256, np.float32)
        mod.gemm[4, 64](a, b, c)
        want = sum(a.reshape(4, 16, 64)[h].astype(np.float64) @ b.reshape(4, 16, 64)[h].T.astype(np.float64)
                   for h in range(4))
        got = c.copy_to_host().reshape(8, 16, 16)
        np.testing.assert_allclose(got, np.broadcast_to(want, got.shape), rtol=1e-3 if random else 0,
                                   atol=1e-3 if random else 0)
        assert bool(handed) == random                      # (the random halves' warps stopped)
    assert left == [0] * 8
