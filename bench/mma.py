"""The cost of one warp-level tensor-core instruction on the emulator, as the GEMM samples use it.

    python bench/mma.py                 # f16 and s8 wmma m16n16k16, small integers and random halves

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


if __name__ == "__main__":
    main()
