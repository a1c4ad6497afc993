"""The cost of one warp-level tensor-core instruction on the emulator, as the GEMM samples use it.

    python bench/mma.py                 # f16 and s8 wmma m16n16k16, small integers and random halves, and
                                        # an unrolled k-loop (one program: mma_runs.py) of f16 integers,
                                        # tf32, with C scaled by beta, and dmmaTensorCoreGemm's f64 k-loop

One launch of 108 blocks of 8 warps (cudaTensorCoreGemm's persistent grid: every warp of the batch
runs each instruction together) loads its fragments, runs ``iters`` wmma::mma_sync and stores the
result; the cost of one warp-level mma is the CPU time of a launch with 21 of them less one with 1,
over 20 x 864. Small integers are the samples' data (every sum exact: the fast path); random halves
make the tensor core's alignment cut terms (the term-by-term path). CPU time of the process, so a
busy machine inflates it little; compare numbers from one run.
"""
import time

import numpy as np

import cudalab

KERNEL = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void k(const T* a, const T* b, ACC* c, int iters) {
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, ACC> fc;
  wmma::load_matrix_sync(fa, a + w * 256, 16);
  wmma::load_matrix_sync(fb, b + w * 256, 16);
  wmma::fill_fragment(fc, 0);
  for (int i = 0; i < iters; ++i) wmma::mma_sync(fc, fa, fb, fc);
  wmma::store_matrix_sync(c + w * 256, fc, 16, wmma::mem_row_major);
}'''
WARPS = 108 * 8

# a GEMM's unrolled k-loop as the samples have it: per k step, 2 A and 4 B fragments loaded from shared
# memory and 8 mmas into 8 accumulators (mma_runs.py runs the STEPS steps as one program)
PROGRAM = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void k(const half* a, const half* b, float* c) {
  __shared__ half sa[32 * 16 * STEPS], sb[64 * 16 * STEPS];       // A: 32 rows, B: 64 columns, by rows of k
  for (int i = threadIdx.x; i < 32 * 16 * STEPS; i += blockDim.x) sa[i] = a[i];
  for (int i = threadIdx.x; i < 64 * 16 * STEPS; i += blockDim.x) sb[i] = b[i];
  __syncthreads();
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][4];
  for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) wmma::fill_fragment(acc[i][j], 0);
#pragma unroll
  for (int s = 0; s < STEPS; s++) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb[4];
    for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], sa + i * 16 * 16 * STEPS + s * 16, 16 * STEPS);
    for (int j = 0; j < 4; j++) wmma::load_matrix_sync(fb[j], sb + j * 16 * 16 * STEPS + s * 16, 16 * STEPS);
    for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
  }
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++)
    wmma::store_matrix_sync(c + (w * 8 + i * 4 + j) * 256, acc[i][j], 16, wmma::mem_row_major);
}'''

# the same k-loop as tf32TensorCoreGemm has it: m16n16k8 fragments of floats, each element rounded with
# __float_to_tf32 between its load and its mma (mov, cvt.rna.tf32.f32, mov, mov: one LANE row of the program)
TF32_PROGRAM = (PROGRAM.replace("const half*", "const float*").replace("__shared__ half", "__shared__ float")
                .replace("16, 16, 16, half", "16, 16, 8, wmma::precision::tf32")
                .replace("16, 16, 16, float", "16, 16, 8, float").replace("* 16 * STEPS", "* 8 * STEPS")
                .replace("s * 16, 16 * STEPS", "s * 8, 8 * STEPS")
                .replace("for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) wmma::mma_sync",
                         "for (int i = 0; i < 2; i++) for (int t = 0; t < fa[i].num_elements; t++)\n"
                         "      fa[i].x[t] = wmma::__float_to_tf32(fa[i].x[t]);\n"
                         "    for (int j = 0; j < 4; j++) for (int t = 0; t < fb[j].num_elements; t++)\n"
                         "      fb[j].x[t] = wmma::__float_to_tf32(fb[j].x[t]);\n"
                         "    for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) wmma::mma_sync"))


# the samples' C: read from memory and scaled by beta / alpha (1.2f / 1.1f), a float32 with a full significand,
# so each hardware step's sum is cut (mma_loops.mma_bounded's cut path, not its float32 sums)
BETA_C = ("wmma::fill_fragment(acc[i][j], 0);",
          "{ wmma::load_matrix_sync(acc[i][j], c + ((blockIdx.x * blockDim.x + threadIdx.x) / 32 * 8 + i * 4 + j) * 256,"
          " 16, wmma::mem_row_major);\n"
          "    for (int t = 0; t < acc[i][j].num_elements; t++) acc[i][j].x[t] *= 1.2f / 1.1f; }")


# dmmaTensorCoreGemm's k-loop: f64 m8n8k4, per k step 2 A and 4 B fragments from shared tiles whose rows are
# 4 * STEPS + 4 doubles apart (the sample's skew), 8 mmas into 8 accumulators read from memory and scaled by beta
DMMA_PROGRAM = r'''
#include <mma.h>
using namespace nvcuda;
#define LD (4 * STEPS + 4)
__global__ void k(const double* a, const double* b, double* c) {
  __shared__ double sa[16 * LD], sb[32 * LD];          // A: 16 rows, B: 32 columns, by rows of k
  for (int i = threadIdx.x; i < 16 * 4 * STEPS; i += blockDim.x) sa[i / (4 * STEPS) * LD + i % (4 * STEPS)] = a[i];
  for (int i = threadIdx.x; i < 32 * 4 * STEPS; i += blockDim.x) sb[i / (4 * STEPS) * LD + i % (4 * STEPS)] = b[i];
  __syncthreads();
  int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc[2][4];
  for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) {
    wmma::load_matrix_sync(acc[i][j], c + (w * 8 + i * 4 + j) * 64, 8, wmma::mem_row_major);
    for (int t = 0; t < acc[i][j].num_elements; t++) acc[i][j].x[t] *= 1.2 / 1.1;
  }
#pragma unroll
  for (int s = 0; s < STEPS; s++) {
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb[4];
    for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], sa + i * 8 * LD + s * 4, LD);
    for (int j = 0; j < 4; j++) wmma::load_matrix_sync(fb[j], sb + j * 8 * LD + s * 4, LD);
    for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
  }
  for (int i = 0; i < 2; i++) for (int j = 0; j < 4; j++)
    wmma::store_matrix_sync(c + (w * 8 + i * 4 + j) * 64, acc[i][j], 8, wmma::mem_row_major);
}'''


def per_program_dmma(steps: int = 16) -> float:
    """CPU us per warp-level f64 mma (with its share of the loads) in DMMA_PROGRAM's k-loop of ``steps``
    unrolled steps (8 mmas each; dmmaTensorCoreGemm's CHUNK_K is 16), small integers into a C scaled by
    beta: a launch of ``steps`` less one of 1 step, over the mmas between."""
    rng = np.random.default_rng(1)

    def operands(n):
        kern = cudalab.compile(DMMA_PROGRAM.replace("STEPS", str(n))).get_kernel("k")
        a, b = rng.integers(0, 3, 16 * 4 * n).astype(np.float64), rng.integers(0, 3, 32 * 4 * n).astype(np.float64)
        return kern, a, b, rng.integers(0, 3, WARPS * 8 * 64).astype(np.float64)
    return _per_step_mma(operands, steps)


def _per_step_mma(operands, steps: int) -> float:
    """CPU us per warp-level mma: the best of 5 launches of a program of ``steps`` k steps less the best
    of 5 of 1 step, over the mmas between (8 a step per warp). ``operands(n)`` -> (kernel, a, b, c0) of
    the program of n steps; each launch starts from c0 (C scaled by beta changes it)."""
    from cudalab.emulator import mma_native
    mma_native.COLD_WARPS = 0           # the compiled loops from the first launch on (a GEMM's steady state)
    times = []
    for n in (1, steps):
        kern, a, b, c0 = operands(n)
        c = c0.copy()
        kern[108, 256](a, b, c)

        def launch():
            c[:] = c0
            t0 = time.process_time()
            kern[108, 256](a, b, c)
            return time.process_time() - t0
        times.append(min(launch() for _ in range(5)))
    return (times[1] - times[0]) / ((steps - 1) * 8 * WARPS) * 1e6


def per_program_mma(steps: int = 8, tf32: bool = False, beta: bool = False) -> float:
    """CPU us per warp-level mma (with its share of the loads) inside a program of ``steps`` unrolled k
    steps (8 mmas each), small integers: a launch of ``steps`` less one of 1 step, over the mmas between.
    ``tf32``: TF32_PROGRAM's (floats rounded to tf32; half the k of a step). ``beta``: C as the samples
    have it (BETA_C: small integers scaled by 1.2f / 1.1f), not zero."""
    rng = np.random.default_rng(1)
    k = 8 if tf32 else 16

    def operands(n):
        source = (TF32_PROGRAM if tf32 else PROGRAM).replace("STEPS", str(n))
        kern = cudalab.compile(source.replace(*BETA_C) if beta else source).get_kernel("k")
        a = rng.integers(0, 3, 32 * k * n).astype(np.float32 if tf32 else np.float16)
        b = rng.integers(0, 3, 64 * k * n).astype(np.float32 if tf32 else np.float16)
        return kern, a, b, rng.integers(0, 3, WARPS * 8 * 256).astype(np.float32)
    return _per_step_mma(operands, steps)


def per_mma(kind: str) -> tuple:
    """(CPU us per warp-level mma, CPU ms of a launch with one) for 'f16 integers', 'f16 random', 's8'."""
    s8 = kind.startswith("s8")
    t, acc = ("signed char", "int") if s8 else ("half", "float")
    kern = cudalab.compile(KERNEL.replace("ACC", acc).replace("T*", t + "*").replace(", T,", f", {t},")).get_kernel("k")
    rng = np.random.default_rng(1)
    if kind.endswith("random"):
        a, b = ((rng.random(WARPS * 256) - 0.5).astype(np.float16) for _ in range(2))
    else:
        a, b = (rng.integers(0, 3, WARPS * 256).astype(np.int8 if s8 else np.float16) for _ in range(2))
    c = np.zeros(WARPS * 256, np.int32 if s8 else np.float32)

    def launch(iters):
        t0 = time.process_time()
        kern[108, 256](a, b, c, np.int32(iters))
        return time.process_time() - t0
    launch(1)
    one = min(launch(1) for _ in range(2))
    many = min(launch(21) for _ in range(2))
    return (many - one) / (20 * WARPS) * 1e6, one * 1e3


def main():
    print(f"{'wmma m16n16k16':<28} {'us a warp-level mma':>20} {'ms a launch with one':>22}")
    for kind in ("f16 integers", "f16 random", "s8 integers"):
        us, ms = per_mma(kind)
        print(f"{kind:<28} {us:>20.1f} {ms:>22.0f}")
    print(f"{'f16 k-loop program (8 steps)':<28} {per_program_mma():>20.2f}")
    print(f"{'tf32 k-loop program (8 steps)':<28} {per_program_mma(tf32=True):>20.2f}")
    print(f"{'f16 k-loop, C scaled by beta':<28} {per_program_mma(beta=True):>20.2f}")
    print(f"{'tf32 k-loop, C scaled by beta':<28} {per_program_mma(tf32=True, beta=True):>20.2f}")
    print(f"{'f64 k-loop (16 steps), beta':<28} {per_program_dmma():>20.2f}")


if __name__ == "__main__":
    main()
