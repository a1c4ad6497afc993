"""cuBLASLt's matmul in whole programs: small programs call the library, numpy checks.

Inputs are small integers, so products and sums are exact in every precision (the epilogues'
GELU aside, compared within float32 rounding).
"""
from __future__ import annotations

import numpy as np
import pytest

from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home
from cudalab.programs.libgen import SHIM_DIR, declarations, defined_in, fallbacks_source
from cudalab.runtime.libraries.blaslt import gelu
from library_programs import operands

needs_cublaslt = pytest.mark.skipif(not (cuda_home() / "include" / "cublasLt.h").exists(),
                                    reason="cuBLASLt's header comes with the nvidia-cublas wheel (cudalab[cublas])")

HELPERS = operands("cublasLt.h", "cuda_fp16.h", "cuda_bf16.h", digits=".9") + """template <typename T> void set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, T v) {
    cublasLtMatmulDescSetAttribute(d, a, &v, sizeof v);
}
"""


def value(seed, n):
    i = np.arange(n)
    return ((i * 7 + seed * 3) % 11 - 5).astype(np.float64)


def shown(stdout) -> dict:
    return {line.split()[0]: np.array([float(x) for x in line.split()[1:]]) for line in stdout.splitlines()
            if line.strip()}


@needs_cublaslt
def test_llm_c_style_matmul_with_bias_and_gelu_epilogues():
    """out (BT x OC, row-major) = inp (BT x C) weight^T + bias, as llm.c's matmul_forward asks cuBLASLt:
    weight is C x OC column-major transposed, inp C x BT column-major."""
    r = run_program_source(HELPERS + """
int main() {
    const int BT = 3, C = 4, OC = 5;      // as on an H200, which gave the same numbers (GELU within 2e-7)
    float *inp = device<float>(1, BT * C), *weight = device<float>(2, OC * C), *bias = device<float>(3, OC);
    float *out, *pre, *gelu_out, alpha = 1, beta = 0;
    cudaMalloc(&out, BT * OC * 4), cudaMalloc(&pre, BT * OC * 4), cudaMalloc(&gelu_out, BT * OC * 4);
    cublasLtHandle_t h;
    cublasLtCreate(&h);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    set(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T);
    set(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N);
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS);
    set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, bias);
    cublasLtMatrixLayout_t wL, iL, oL;
    cublasLtMatrixLayoutCreate(&wL, CUDA_R_32F, C, OC, C);
    cublasLtMatrixLayoutCreate(&iL, CUDA_R_32F, C, BT, C);
    cublasLtMatrixLayoutCreate(&oL, CUDA_R_32F, OC, BT, OC);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    size_t workspace = 32 << 20;
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof workspace);
    cublasLtMatmulHeuristicResult_t heuristic;
    int found = 0;
    int status = cublasLtMatmulAlgoGetHeuristic(h, desc, wL, iL, oL, oL, pref, 1, &heuristic, &found);
    printf("heuristic %d %d %d\\n", status, found, heuristic.state);
    cublasLtMatmul(h, desc, &alpha, weight, wL, inp, iL, &beta, out, oL, out, oL, &heuristic.algo, 0, 0, 0);
    show("bias", out, BT * OC);
    // GELU with its input kept for the backward pass (llm.c's GELU_AUX_BIAS)
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_GELU_AUX_BIAS);
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, pre);
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, (int64_t)OC);
    cublasLtMatmul(h, desc, &alpha, weight, wL, inp, iL, &beta, gelu_out, oL, gelu_out, oL, 0, 0, 0, 0);
    show("gelu", gelu_out, BT * OC);
    show("pre_gelu", pre, BT * OC);
    // the backward pass's bias gradient (BGRADB): with these transposes an H200 refuses it (NOT_SUPPORTED) ...
    float *dbias, *D;
    cudaMalloc(&dbias, BT * 4), cudaMalloc(&D, C * BT * 4);
    set(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BGRADB);
    set(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, dbias);
    printf("bgradb_tn %d\\n", cublasLtMatmul(h, desc, &alpha, weight, wL, inp, iL, &beta, out, oL, out, oL, 0, 0, 0, 0));
    // ... and with llm.c's (N, T): D (C x BT) = weight (C x OC) dout^T, dbias = row sums of dout (BT x OC)
    float *dout = device<float>(4, BT * OC);
    cublasLtMatrixLayout_t doutL, dL;
    cublasLtMatrixLayoutCreate(&doutL, CUDA_R_32F, BT, OC, BT);
    cublasLtMatrixLayoutCreate(&dL, CUDA_R_32F, C, BT, C);
    set(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_N);
    set(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_T);
    printf("bgradb_nt %d\\n", cublasLtMatmul(h, desc, &alpha, weight, wL, dout, doutL, &beta, D, dL, D, dL, 0, 0, 0, 0));
    show("bgradb_D", D, C * BT);
    show("bgradb", dbias, BT);
    size_t written;
    cublasLtEpilogue_t epilogue;
    cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue, &written);
    printf("epilogue %d %d\\n", (int)epilogue, (int)written);
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    inp, weight, bias = value(1, 12).reshape(3, 4), value(2, 20).reshape(5, 4), value(3, 5)
    np.testing.assert_array_equal(got["heuristic"], [0, 1, 0])
    expected = inp @ weight.T + bias                      # row-major BT x OC
    np.testing.assert_array_equal(got["bias"], expected.ravel())
    np.testing.assert_array_equal(got["pre_gelu"], expected.ravel())
    np.testing.assert_allclose(got["gelu"], gelu(expected).ravel(), rtol=1e-6, atol=1e-6)
    assert got["bgradb_tn"][0] == 15 and got["bgradb_nt"][0] == 0
    w, dout = value(2, 20).reshape(5, 4).T, value(4, 15).reshape(5, 3).T     # column-major C x OC, BT x OC
    np.testing.assert_array_equal(got["bgradb_D"], (w @ dout.T).T.ravel())
    np.testing.assert_array_equal(got["bgradb"], dout.sum(axis=1))
    np.testing.assert_array_equal(got["epilogue"], [512, 4])


@needs_cublaslt
def test_half_and_bfloat16_inputs_row_major_layouts_batches_and_beta():
    r = run_program_source(HELPERS + """
template <typename T> void product(cublasLtHandle_t h, cudaDataType type, const char *name, cublasLtOrder_t order) {
    // D = A B + C, A 2x3, B 3x2, all in `order`, two batches 6 elements apart; C and D are float
    const int m = 2, n = 2, k = 3, batches = 2;
    T *A = device<T>(1, 12), *B = device<T>(2, 12);
    float *C = device<float>(3, 8), *D, one = 1;
    cudaMalloc(&D, 8 * sizeof(float));
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t layouts[4];
    const int rows[] = {m, k, m, m}, cols[] = {k, n, n, n};
    const int64_t strides[] = {6, 6, 4, 4};
    const cudaDataType types[] = {type, type, CUDA_R_32F, CUDA_R_32F};
    for (int i = 0; i < 4; i++) {
        cublasLtMatrixLayoutCreate(&layouts[i], types[i], rows[i], cols[i], order == CUBLASLT_ORDER_ROW ? cols[i] : rows[i]);
        cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order);
        cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batches, sizeof batches);
        cublasLtMatrixLayoutSetAttribute(layouts[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                         sizeof strides[i]);
    }
    int status = cublasLtMatmul(h, desc, &one, A, layouts[0], B, layouts[1], &one, C, layouts[2], D, layouts[3], 0, 0,
                                0, 0);
    printf("%s_status %d\\n", name, status);
    show(name, D, 8);
}
int main() {
    cublasLtHandle_t h;
    cublasLtCreate(&h);
    product<__half>(h, CUDA_R_16F, "half_col", CUBLASLT_ORDER_COL);
    product<__nv_bfloat16>(h, CUDA_R_16BF, "bf16_row", CUBLASLT_ORDER_ROW);
    product<float>(h, CUDA_R_32F, "float_row", CUBLASLT_ORDER_ROW);
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    a, b, c = value(1, 12), value(2, 12), value(3, 8)
    for name, order in (("half_col", "F"), ("bf16_row", "C"), ("float_row", "C")):
        assert got[f"{name}_status"][0] == 0
        expected = [a[6 * i:6 * i + 6].reshape(2, 3, order=order) @ b[6 * i:6 * i + 6].reshape(3, 2, order=order)
                    + c[4 * i:4 * i + 4].reshape(2, 2, order=order) for i in range(2)]
        np.testing.assert_array_equal(got[name], np.concatenate([e.ravel(order=order) for e in expected]))


@needs_cublaslt
def test_lt_misuse_returns_cublas_status_codes_and_says_why():
    r = run_program_source(HELPERS + """
int main() {
    cublasLtHandle_t h;
    cublasLtCreate(&h);
    cublasLtMatmulDesc_t desc;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    cublasLtMatrixLayout_t a, b;
    cublasLtMatrixLayoutCreate(&a, CUDA_R_32F, 4, 3, 4);
    cublasLtMatrixLayoutCreate(&b, CUDA_R_32F, 4, 3, 4);
    cublasLtMatmulPreference_t pref;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulHeuristicResult_t result;
    int found = 7;
    cublasOperation_t t = CUBLAS_OP_T;
    printf("%d\\n", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, 8));     // int32_t, not 8 bytes
    printf("%d", cublasLtMatmulAlgoGetHeuristic(h, desc, a, b, a, a, pref, 1, &result, &found));  // 4x3 by 4x3
    printf(" %d\\n", found);
    float *scale = 0;
    for (int k = 0; k < 2; k++)     // fp8's scale: accepted, as cuBLASLt does, and said to change nothing
        printf("%d\\n", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    # INVALID_VALUE; INVALID_VALUE with *returnAlgoCount untouched; SUCCESS twice: as an H200 answered
    assert r.stdout.splitlines() == ["7", "7 7", "0", "0"]
    assert "op(A) is 4 x 3 and op(B) 4 x 3, which do not give D's 4 x 3" in r.stderr
    assert r.stderr.count("cublasLtMatmulDescSetAttribute: attribute 17 is accepted but not modeled") == 1


@needs_cublaslt
def test_every_function_of_cublaslt_h_gets_a_definition():
    header = cuda_home() / "include" / "cublasLt.h"
    declared = set(declarations(header))
    source = fallbacks_source(header, "cublasLt.c", "cublasLt", "CUBLASWINAPI", "lt_not_supported")
    generated = {name for name in declared if f" {name}(" in source}
    assert {"cublasLtMatmul", "cublasLtMatmulDescInit_internal", "cublasLtMatrixTransform"} <= declared
    assert declared == generated | (declared & defined_in(SHIM_DIR / "cublasLt.c", "cublasLt"))
    assert "cublasLtMatmul(" not in source and "cublasLtMatrixTransform(" in source
