"""dmma's k-loop programs as straight-line native code (emulator/mma_straight.py): the warps it runs get
the bits of the instructions one by one, and the warps it cannot prove (a NaN, an overflow, a tile at
another row stride) are left to the row-by-row loop, which answers them as before."""
import numpy as np

import cudalab

# the sample's shape in small: C read from global memory and scaled by beta, then an unrolled k-loop of
# two A and two B fragments a step from shared tiles, four accumulator chains (each B read by two)
STEP = """wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> fa[2];
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> fb[2];
    for (int i = 0; i < 2; i++) wmma::load_matrix_sync(fa[i], sa[w] + 8 * ld * i + 4 * k, ld);
    for (int j = 0; j < 2; j++) wmma::load_matrix_sync(fb[j], sb[w] + 8 * ld * j + 4 * k, ld);
    for (int i = 0; i < 2; i++)
      for (int j = 0; j < 2; j++) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);"""
GEMM = r'''
#include <mma.h>
using namespace nvcuda;
__global__ void gemm(const double* a, const double* b, const double* c, double* d, double beta) {
  __shared__ double sa[2][16 * 24], sb[2][16 * 24];   // each warp's A (16 rows of k) and B (16 columns of k)
  int w = threadIdx.x / 32, t = blockIdx.x * 2 + w;
  int ld = t % 3 == 1 ? 24 : 16;                       // (rows 24 doubles apart in warps 1, 4 and 7)
  for (int i = threadIdx.x % 32; i < 256; i += 32) {
    sa[w][i / 16 * ld + i % 16] = a[t * 256 + i];
    sb[w][i / 16 * ld + i % 16] = b[t * 256 + i];
  }
  __syncwarp();
  wmma::fragment<wmma::accumulator, 8, 8, 4, double> acc[2][2];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      wmma::load_matrix_sync(acc[i][j], c + t * 256 + 8 * i * 16 + 8 * j, 16, wmma::mem_row_major);
      for (int e = 0; e < acc[i][j].num_elements; e++) acc[i][j].x[e] *= beta;
    }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    STEP
  }
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++)
      wmma::store_matrix_sync(d + t * 256 + 8 * i * 16 + 8 * j, acc[i][j], 16, wmma::mem_row_major);
}'''.replace("STEP", STEP)


def _inputs():
    """Eight warps' A (16 x 16), B (16 columns of 16) and C (16 x 16): warps 0 and 4 small integers,
    2 and 6 random doubles (no sum exact), 1 and 5 a NaN in A's third k step, 3 and 7 products that
    overflow."""
    rng = np.random.default_rng(21)
    kind = np.arange(8) % 4
    a, b = rng.integers(-2, 3, (2, 8, 256)).astype(np.float64)
    c = rng.integers(0, 3, (8, 256)) * (1.2 / 1.1)
    a[kind == 2], b[kind == 2] = rng.standard_normal((2, 2, 256))
    a[kind == 1, 3 * 16 + 9] = np.nan
    a[kind == 3], b[kind == 3] = 1e200, -1e200
    return a, b, c


def test_straight_code_gives_the_instructions_bits_and_leaves_what_it_cannot_prove(monkeypatch):
    from cudalab.emulator import mma_native, mma_straight
    ran = []
    call = mma_straight.Straight.__call__

    def watched(self, warps, pos, *rest):
        done = call(self, warps, pos, *rest)
        ran.append(sorted(int(w) for w, p in zip(warps, pos) if p == self.rows))
        return done
    monkeypatch.setattr(mma_straight.Straight, "__call__", watched)
    a, b, c = _inputs()
    k = cudalab.compile(GEMM).get_kernel("gemm")
    got = []
    for worth in (lambda warps: False, lambda warps: True):       # one by one, then as one program
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
        d = np.zeros((8, 256))
        k[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), 1.2 / 1.1)
        got.append(d.view(np.uint64).copy())
    assert np.array_equal(got[0], got[1])
    assert np.isnan(got[1].view(np.float64)[1]).any() and np.isinf(got[1].view(np.float64)[3]).any()
    # the straight code ran the warps of finite values at the row stride it was built for (warp 0's);
    # warp 4's tiles lie 24 doubles a row apart, so the loop ran it
    assert ran and ran[0] == [0, 2, 6], ran
    ints = [0, 4]                       # D: an fma chain in k order (small integers: each product exact)
    want = c.reshape(8, 16, 16)[ints] * (1.2 / 1.1)
    for kk in range(16):
        want = want + a.reshape(8, 16, 16)[ints, :, kk:kk + 1] * b.reshape(8, 16, 16)[ints][:, None, :, kk]
    assert np.array_equal(got[1].view(np.float64).reshape(8, 16, 16)[ints], want)


def test_a_k_loop_in_two_programs_reads_fragments_loaded_before_its_own(monkeypatch):
    """The k-loop in two halves with a __syncwarp between: nvcc schedules the loads across the barrier,
    so a program starts with mmas whose A and B fragments are registers loaded outside it. The
    programs run as straight code (those fragments read from their registers) and
    give the bits of the whole loop one by one."""
    from cudalab.emulator import mma_native, mma_straight
    halves = GEMM.replace("for (int k = 0; k < 4; ++k) {", "for (int k = 0; k < 2; ++k) {").replace(
        "  }\n  for (int i = 0; i < 2; i++)\n    for (int j = 0; j < 2; j++)\n      wmma::store",
        "  }\n  __syncwarp();\n#pragma unroll\n  for (int k = 2; k < 4; ++k) {\n    " + STEP +
        "\n  }\n  for (int i = 0; i < 2; i++)\n    for (int j = 0; j < 2; j++)\n      wmma::store")
    assert halves.count("__syncwarp();") == 2 and halves.count("++k") == 2
    planned = []
    plan = mma_straight.plan

    def watched(*args):
        planned.append(plan(*args))
        return planned[-1]
    monkeypatch.setattr(mma_straight, "plan", watched)
    a, b, c = _inputs()
    got = []
    for source, worth in ((GEMM, lambda warps: False), (halves, lambda warps: True)):
        monkeypatch.setattr(mma_native, "worth_loading", worth)
        monkeypatch.setattr(mma_native, "COLD_WARPS", 0)
        d = np.zeros((8, 256))
        cudalab.compile(source).get_kernel("gemm")[4, 64](a.ravel(), b.ravel(), c.ravel(), d.ravel(), 1.2 / 1.1)
        got.append(d.view(np.uint64))
    assert np.array_equal(got[0], got[1])
    ran = [p for p in planned if p is not None and p.fn is not None]
    assert len(ran) >= 2, "both halves' k-loops ran as straight code"
    assert any(mma[0] is None for p in ran for mma in p.spec[7]), "an mma whose A is a register loaded before"
