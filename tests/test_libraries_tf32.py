"""TF32 in whole programs: cuBLAS and cuBLASLt round a product's float32 inputs to TF32 when asked.

Each program multiplies crafted float32 values by an identity matrix, so every result is one input
as the tensor cores saw it: exact in float32, rounded to 10 mantissa bits with TF32. The expected
bits are an H200's (cuBLAS 13.1, the same programs' values), not cudalab's own rounding function.
"""
from __future__ import annotations

import numpy as np
import pytest

from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home
from cudalab.runtime.libraries.precision import tf32_round

needs_cublas = pytest.mark.skipif(not (cuda_home() / "include" / "cublasLt.h").exists(),
                                  reason="cuBLAS's headers come with the nvidia-cublas wheel (cudalab[cublas])")

# float32 input bits -> what an H200's cublasSgemm in CUBLAS_TF32_TENSOR_OP_MATH gave for it times 1:
# to nearest, ties to even, on the 10th mantissa bit
MEASURED = {0x3F801000: 0x3F800000,    # 1 + 2^-11 (a tie, even below): down
            0x3F803000: 0x3F804000,    # 1 + 2^-10 + 2^-11 (a tie, odd below): up
            0x3F800FFF: 0x3F800000, 0x3F801001: 0x3F802000, 0x3F801FFF: 0x3F802000, 0x3F800001: 0x3F800000,
            0xBF801000: 0xBF800000, 0xBF801001: 0xBF802000, 0x3F808000: 0x3F808000, 0x3F818000: 0x3F818000,
            0x3F808001: 0x3F808000, 0x3F804000: 0x3F804000}

PROGRAM = """
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <cublas_v2.h>
#include <cublasLt.h>
const int R = 3, K = 4;                       // values: R x K, column-major
const uint32_t bits[R * K] = {%s};
float *upload(const float *h, int n) {
    float *d;
    cudaMalloc(&d, n * 4);
    cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice);
    return d;
}
void show(const char *name, const float *d) {
    float h[R * K];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%%s", name);
    for (int i = 0; i < R * K; i++) { uint32_t u; memcpy(&u, &h[i], 4); printf(" %%08x", u); }
    printf("\\n");
}
int main() {
    float values[R * K], eyeK[K * K] = {}, eyeR[R * R] = {}, one = 1, zero = 0;
    memcpy(values, bits, sizeof values);
    for (int i = 0; i < K; i++) eyeK[i * K + i] = 1;
    for (int i = 0; i < R; i++) eyeR[i * R + i] = 1;
    float *A = upload(values, R * K), *I = upload(eyeK, K * K), *J = upload(eyeR, R * R), *C;
    cudaMalloc(&C, R * K * 4);
    cublasHandle_t h;
    cublasCreate(&h);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, R, K, K, &one, A, R, I, K, &zero, C, R);
    show("fp32", C);
    cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, R, K, K, &one, A, R, I, K, &zero, C, R);
    show("tf32_a", C);
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, R, K, R, &one, J, R, A, R, &zero, C, R);   // the values as B
    show("tf32_b", C);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, R, K, K, &one, A, CUDA_R_32F, R, I, CUDA_R_32F, K, &zero, C,
                 CUDA_R_32F, R, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_GEMM_DEFAULT);
    show("pedantic", C);
    cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, R, K, K, &one, A, CUDA_R_32F, R, I, CUDA_R_32F, K, &zero, C,
                 CUDA_R_32F, R, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT);
    show("fast_tf32", C);
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, R, K, K, &one, A, CUDA_R_32F, R, I, CUDA_R_32F, K, &zero, C,
                 CUDA_R_32F, R, CUBLAS_COMPUTE_32F_FAST_16BF, CUBLAS_GEMM_DEFAULT);
    show("fast_16bf", C);
    cublasLtHandle_t lt;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F);
    cublasLtMatrixLayout_t aL, iL;
    cublasLtMatrixLayoutCreate(&aL, CUDA_R_32F, R, K, R);
    cublasLtMatrixLayoutCreate(&iL, CUDA_R_32F, K, K, K);
    cublasLtMatmul(lt, desc, &one, A, aL, I, iL, &zero, C, aL, C, aL, NULL, NULL, 0, 0);
    show("lt_fast_tf32", C);
    cudaDeviceSynchronize();
    return 0;
}
""" % ", ".join(f"0x{b:08x}u" for b in MEASURED)


def results(monkeypatch, override=None) -> dict:
    if override is None:
        monkeypatch.delenv("NVIDIA_TF32_OVERRIDE", raising=False)
    else:
        monkeypatch.setenv("NVIDIA_TF32_OVERRIDE", override)
    r = run_program_source(PROGRAM, timeout=120)
    assert r.returncode == 0, r.stderr
    return {line.split()[0]: [int(x, 16) for x in line.split()[1:]] for line in r.stdout.splitlines() if line.strip()}


@needs_cublas
def test_tf32_rounds_the_inputs_to_nearest_even_as_an_h200_does(monkeypatch):
    got = results(monkeypatch)
    exact, tf32 = list(MEASURED), list(MEASURED.values())
    assert got["fp32"] == exact            # the default math mode: full float32
    assert got["pedantic"] == exact        # CUBLAS_COMPUTE_32F_PEDANTIC ignores the TF32 math mode
    for name in ("tf32_a", "tf32_b", "fast_tf32", "fast_16bf", "lt_fast_tf32"):
        assert got[name] == tf32, name


@needs_cublas
def test_nvidia_tf32_override_0_turns_tf32_off(monkeypatch):
    got = results(monkeypatch, override="0")
    for name in ("fp32", "tf32_a", "tf32_b", "fast_tf32", "lt_fast_tf32"):
        assert got[name] == list(MEASURED), name


def test_tf32_rounding_keeps_infinities_and_nans_and_overflows_to_infinity():
    bits = np.array([0x7F800000, 0xFF800000, 0x7FC00001, 0x7F7FFFFF, 0x00001FFF, 0x3F803000], np.uint32)
    got = tf32_round(bits.view(np.float32)).view(np.uint32)
    # inf, -inf, a NaN's payload untouched; float32's largest is past TF32's; a subnormal rounds too
    assert [hex(x) for x in got] == ["0x7f800000", "0xff800000", "0x7fc00001", "0x7f800000", "0x2000", "0x3f804000"]
    pair = tf32_round(np.array([(1 + 2 ** -11) + 1j * (1 + 3 * 2 ** -11)], np.complex64))
    assert pair.dtype == np.complex64 and pair[0] == 1 + 1j * (1 + 2 ** -9)
