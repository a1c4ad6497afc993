"""Blocks of rows in the compiled tier: a region with cuts that reads threadIdx.y gets a version
(regiongen.CutRegionBuilder._rows) whose lane loops are a loop over the block's rows around a loop
over a row's threads, threadIdx.x the inner counter, so LLVM vectorizes a tiled product's inner
loop (``Bs[k][tx]`` a vector load, ``As[ty][k]`` one load for the row) and a phase's address check
takes the block's four corner threads (``_closed_rows``) instead of a loop over every thread.
Each case runs under both tiers and must give the interpreter's bytes, counts and errors.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import cudalab

sys.path.insert(0, str(Path(__file__).parent))
from test_compiled import both_tiers, same_in_both_tiers  # noqa: E402

TILED = r"""
#define TILE %(tile)d
__global__ void tiled_%(tag)s(const float* A, const float* B, float* C, int n) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
"""

# a tile of 12 x 5 threads: blockDim.x not a multiple of the vector width, guards for the
# partial blocks at the right and bottom edges, and a shared row read backwards (slope -1 in y)
EDGES = r"""
#define BX 12
#define BY 5
__global__ void edges(const float* in, float* out, int w, int h) {
    __shared__ float s[BY][BX];
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    s[threadIdx.y][threadIdx.x] = (x < w && y < h) ? in[y * w + x] : 0.0f;
    __syncthreads();
    float v = s[BY - 1 - threadIdx.y][threadIdx.x] * 2.0f + s[threadIdx.y][0];
    if (x < w && y < h) out[y * w + x] = v;
}
"""


def calls_per_version(monkeypatch):
    """{"fn": n, "fn_1d": n, "fn_2d": n}: how often each native version of a region ran."""
    from cudalab.emulator import regions
    calls = {"fn": 0, "fn_1d": 0, "fn_2d": 0}
    real_init = regions.Runner.__init__

    def counting(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        for name in calls:
            f = getattr(self, name)
            if f is not None:
                setattr(self, name, lambda *a, f=f, name=name: (calls.__setitem__(name, calls[name] + 1), f(*a))[1])
    monkeypatch.setattr(regions.Runner, "__init__", counting)
    return calls


@pytest.mark.parametrize("tile", [16, 8])
def test_a_tiled_product_in_2d_blocks_runs_the_rows_version_with_the_same_bytes_and_counts(tile, tmp_path,
                                                                                          monkeypatch):
    calls = calls_per_version(monkeypatch)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))       # built here, not loaded
    source = TILED % dict(tile=tile, tag=f"rows{tile}")
    rng = np.random.default_rng(tile)
    n = 4 * tile
    a, b = rng.random((n, n), np.float32), rng.random((n, n), np.float32)
    args = same_in_both_tiers(monkeypatch, source, f"tiled_rows{tile}", (4, 4), (tile, tile),
                              lambda: [a, b, np.zeros((n, n), np.float32), np.int32(n)])
    assert np.allclose(args[2], a.astype(np.float64) @ b, rtol=1e-5)
    assert calls["fn_2d"] and not calls["fn"]


def test_blocks_of_12_by_5_threads_with_partial_edge_blocks_give_the_same_bytes_and_counts(tmp_path, monkeypatch):
    calls = calls_per_version(monkeypatch)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    a = np.random.default_rng(3).random((23, 37), np.float32)
    same_in_both_tiers(monkeypatch, EDGES, "edges", (4, 5), (12, 5),
                       lambda: [a, np.zeros((23, 37), np.float32), np.int32(37), np.int32(23)])
    assert calls["fn_2d"] and not calls["fn"]


def test_blocks_of_three_dimensions_run_the_general_version(tmp_path, monkeypatch):
    calls = calls_per_version(monkeypatch)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    source = TILED % dict(tile=8, tag="deep")
    rng = np.random.default_rng(4)
    a, b = rng.random((32, 32), np.float32), rng.random((32, 32), np.float32)
    same_in_both_tiers(monkeypatch, source, "tiled_deep", (4, 4), (8, 8, 1),
                       lambda: [a, b, np.zeros((32, 32), np.float32), np.int32(32)])
    calls.update(fn=0, fn_2d=0)
    same_in_both_tiers(monkeypatch, source, "tiled_deep", (4, 2), (8, 4, 2),
                       lambda: [a, b, np.zeros((32, 32), np.float32), np.int32(32)])
    assert calls["fn"] and not calls["fn_2d"]


def test_an_out_of_bounds_global_read_in_the_rows_version_names_the_line_and_thread(monkeypatch):
    """B holds 31 rows of 32: the last tile's loads of B run one row past its end, at the line of
    ``Bs[ty][tx] = ...``, for the threads of the tile's last row; the whole-block check of that
    phase fails and the block goes on interpreted, which reports the first of them."""
    source = TILED % dict(tile=8, tag="fault")
    rng = np.random.default_rng(5)
    a, b = rng.random((32, 32), np.float32), rng.random((31, 32), np.float32)

    def run():
        c = cudalab.to_device(np.zeros((32, 32), np.float32))
        cudalab.compile(source).get_kernel("tiled_fault")[(4, 4), (8, 8)](
            cudalab.to_device(a), cudalab.to_device(b), c, np.int32(32))
        return c.copy_to_host().tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __global__ read of size 4 bytes" in got["compiled"][0] and "line 11" in got["compiled"][0]


def test_an_out_of_bounds_shared_read_in_the_vectorized_loop_names_the_line_and_thread(monkeypatch):
    """``Bs[k + off][tx]`` with ``off`` past the tiles: the unrolled product's phase, the one LLVM
    vectorizes, fails its corner check, and the interpreter names the line of the product."""
    source = (TILED % dict(tile=8, tag="shared_fault")).replace("int n)", "int n, int off)").replace(
        "Bs[k][tx]", "Bs[k + off][tx]")
    rng = np.random.default_rng(6)
    a, b = rng.random((32, 32), np.float32), rng.random((32, 32), np.float32)

    def run(off):
        c = cudalab.to_device(np.zeros((32, 32), np.float32))
        cudalab.compile(source).get_kernel("tiled_shared_fault")[(4, 4), (8, 8)](
            cudalab.to_device(a), cudalab.to_device(b), c, np.int32(32), np.int32(off))
        return c.copy_to_host().tobytes()
    got = both_tiers(lambda: run(0), monkeypatch)
    assert got["compiled"] == got["interp"] and got["compiled"][0] is None
    got = both_tiers(lambda: run(4096), monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "Invalid __shared__ read of size 4 bytes" in got["compiled"][0] and "line 13" in got["compiled"][0]


PIPED = r"""
#include <cuda_pipeline.h>
#define T 8
__global__ void piped(const float* A, const float* B, float* C, int n) {
    __shared__ __align__(16) float As[T][T];
    __shared__ __align__(16) float Bs[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / T; ++t) {
        __pipeline_memcpy_async(&As[ty][tx], &A[row * n + t * T + tx], 4);
        __pipeline_memcpy_async(&Bs[ty][tx], &B[(t * T + ty) * n + col], 4);
        __pipeline_commit();
        __pipeline_wait_prior(0);
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
"""


def test_a_pipelined_tile_loop_is_a_region_with_the_same_bytes_and_counts(tmp_path, monkeypatch):
    """The tile loop with its cp.async, commit and wait is one region (async_native: the copies
    land at the wait in native code, as asyncops lands them), and its product runs in the rows
    version (globalToShmemAsyncCopy's shape)."""
    calls = calls_per_version(monkeypatch)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    rng = np.random.default_rng(7)
    a, b = rng.random((32, 32), np.float32), rng.random((32, 32), np.float32)
    args = same_in_both_tiers(monkeypatch, PIPED, "piped", (4, 4), (8, 8),
                              lambda: [a, b, np.zeros((32, 32), np.float32), np.int32(32)])
    assert np.allclose(args[2], a.astype(np.float64) @ b, rtol=1e-5)
    assert calls["fn_2d"] and not calls["fn"]


UNEVEN = r"""
#define T 8
__global__ void uneven(const float* in, float* out) {
    __shared__ float s[T][T];
    int tx = threadIdx.x, ty = threadIdx.y;
    int k = 0;
    for (int i = 0; i < (tx + ty) % 3; ++i) k += 5;     // per thread: not one value for the block
    for (int r = 0; r < 2; ++r) {
        s[ty][tx] = in[(blockIdx.x * T + ty) * T + tx] + r;
        __syncthreads();
        out[(blockIdx.x * T + ty) * T + tx] += s[ty][(tx + k) % T];
        __syncthreads();
    }
}
"""


def test_a_value_a_thread_dependent_loop_computes_before_the_region_stays_each_threads_own(monkeypatch):
    """``k`` is computed before the region in a loop whose trip count depends on the thread: it is
    not read once for the block (regions.block_uniform), and each thread's own gives the bytes."""
    x = np.random.default_rng(8).random(4 * 64, np.float32)
    args = same_in_both_tiers(monkeypatch, UNEVEN, "uneven", 4, (8, 8), lambda: [x, np.zeros(4 * 64, np.float32)])
    tx, ty = np.meshgrid(np.arange(8), np.arange(8))
    k = 5 * ((tx + ty) % 3)
    blocks = x.reshape(4, 8, 8)
    want = sum(blocks[:, ty, (tx + k) % 8] + r for r in range(2)).astype(np.float32)
    assert np.allclose(args[1].reshape(4, 8, 8), want)
