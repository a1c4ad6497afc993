"""NVIDIA's cuda-samples that teach async copies and barriers, run on the emulator kernel by kernel.

The samples are test material only and are not part of the repository: their kernels are read from a
cuda-samples checkout at test time (CUDA_SAMPLES, by default /work/samples), the host code is cut
off, and each kernel is launched at a small size against numpy, as the sample's own check does.
"""
import os
from pathlib import Path

import numpy as np
import pytest

import cudalab

SAMPLES = Path(os.environ.get("CUDA_SAMPLES", "/work/samples")) / "Samples"


def device_code(relative, host_starts_at):
    """The sample's includes and kernels: the host part (from ``host_starts_at`` on) and the helper
    headers that only host code needs are left out."""
    path = SAMPLES / relative
    if not path.exists():
        pytest.skip(f"no cuda-samples checkout at {SAMPLES}")
    text = path.read_text()
    text = text[:text.index(host_starts_at)]
    return "\n".join(line for line in text.splitlines()
                     if not line.startswith(("#include <helper_", "#include <cuda_runtime.h>")))


MATMUL = "3_CUDA_Features/globalToShmemAsyncCopy/globalToShmemAsyncCopy.cu"
KERNELS = ["MatrixMulAsyncCopyMultiStageLargeChunk", "MatrixMulAsyncCopyLargeChunk",
           "MatrixMulAsyncCopyLargeChunkAWBarrier", "MatrixMulAsyncCopyMultiStageSharedState",
           "MatrixMulAsyncCopyMultiStage", "MatrixMulAsyncCopySingleStage", "MatrixMulNaive",
           "MatrixMulNaiveLargeChunk"]


@pytest.fixture(scope="module")
def matmul():
    names = [f"{k}<16>" for k in KERNELS]
    # -default-device: the sample's host tables of kernel names become (unused) device variables
    return cudalab.compile(device_code(MATMUL, "void ConstantInit("), "-default-device", name_expressions=names)


def multiply(matmul, kernel, a, b):
    ha, wa = a.shape
    c = np.zeros((ha, b.shape[1]), np.float32)
    block = (16, 18) if kernel.endswith("SharedState") else (16, 16)
    matmul.get_kernel(f"{kernel}<16>")[(b.shape[1] // 16, ha // 16), block](c, a, b, np.int32(wa), np.int32(b.shape[1]))
    return c


@pytest.mark.parametrize("kernel", KERNELS)
def test_global_to_shmem_async_copy_as_the_sample_checks(matmul, kernel):
    """C = A B with 16x16 tiles moved by memcpy_async: pipelines of 1 to 4 stages, float4 chunks, an
    arrive/wait barrier, and (SharedState) one producer warp feeding 8 consumer warps. The sample's own
    data and check: A all 1.0, B all 2.1, every C element within 1e-6 of wA * 2.1."""
    wa, ha, wb = 64, 32, 32                              # four tiles along k, a 2x2 grid of blocks
    c = multiply(matmul, kernel, np.ones((ha, wa), np.float32), np.full((wa, wb), 2.1, np.float32))
    assert np.all(np.abs(c - wa * 2.1) / abs(wa * 2.1) / wa < 1e-6)


# The LargeChunk kernels read B with A's indices (B[aStage + wA * y + 4x]): the sample's constant
# matrices hide it, random ones do not. The other four multiply any matrices.
@pytest.mark.parametrize("kernel", [k for k in KERNELS if "LargeChunk" not in k])
def test_global_to_shmem_async_copy_random_matrices(matmul, kernel):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((32, 64)).astype(np.float32)
    b = rng.standard_normal((64, 48)).astype(np.float32)
    np.testing.assert_allclose(multiply(matmul, kernel, a, b), a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


def test_simple_aw_barrier():
    """normVecByDotProductAWBarrier: a cuda::barrier-based block reduction, grid.sync(), then both vectors
    divided by the square root of their dot product (a cooperative launch)."""
    mod = cudalab.compile(device_code("0_Introduction/simpleAWBarrier/simpleAWBarrier.cu",
                                      "int runNormVecByDotProductAWBarrier("))
    rng = np.random.default_rng(3)
    n, blocks, threads = 3000, 4, 128
    a = rng.uniform(0.5, 1.5, n).astype(np.float32)
    b = rng.uniform(0.5, 1.5, n).astype(np.float32)
    partial = np.zeros(blocks, np.float64)
    va, vb = a.copy(), b.copy()
    mod.normVecByDotProductAWBarrier[blocks, threads, 0, threads // 32 * 8](va, vb, partial, np.int32(n))
    norm = np.sqrt(np.sum((a * b).astype(np.float64)))   # float32 products, summed in double
    assert partial[0] == pytest.approx(norm, rel=1e-12)
    np.testing.assert_allclose(va, a / norm, rtol=1e-6)
    np.testing.assert_allclose(vb, b / norm, rtol=1e-6)
