"""cuSPARSE's generic API in whole programs: small programs call the library, numpy checks.

The matrix is A = [[1 0 2 0], [0 3 0 0], [4 0 5 6]], given in CSR, CSC and COO; inputs are small
integers, so every sum is exact and cuSPARSE's order of summation cannot change the result.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home
from cudalab.programs.libgen import SHIM_DIR, declarations, defined_in, fallbacks_source

needs_cusparse = pytest.mark.skipif(not (cuda_home() / "include" / "cusparse.h").exists(),
                                    reason="cuSPARSE's header comes with the nvidia-cusparse wheel (cudalab[cusparse])")

A = np.array([[1, 0, 2, 0], [0, 3, 0, 0], [4, 0, 5, 6]], np.float64)

MATRIX = """
#include <cstdio>
#include <cusparse.h>
template <typename T> T *device(const T *h, int n) {
    T *d;
    cudaMalloc(&d, n * sizeof(T));
    cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}
template <typename T> void show(const char *name, const T *d, int n) {
    T h[64];
    cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost);
    printf("%s", name);
    for (int i = 0; i < n; i++) printf(" %g", (double)h[i]);
    printf("\\n");
}
// A = [[1 0 2 0], [0 3 0 0], [4 0 5 6]] in CSR, CSC and COO (1-based)
const int csr_off[] = {0, 2, 3, 6}, csr_col[] = {0, 2, 1, 0, 2, 3};
const int csc_off[] = {0, 2, 3, 5, 6}, csc_row[] = {0, 2, 1, 0, 2, 2};
const int coo_row[] = {1, 1, 2, 3, 3, 3}, coo_col[] = {1, 3, 2, 1, 3, 4};
const float val[] = {1, 2, 3, 4, 5, 6}, csc_val[] = {1, 4, 3, 2, 5, 6};
const double dval[] = {1, 2, 3, 4, 5, 6};
"""


def shown(stdout) -> dict:
    return {line.split()[0]: np.array([float(x) for x in line.split()[1:]]) for line in stdout.splitlines()
            if line.strip()}


@needs_cusparse
def test_spmv_and_spmm_in_every_format_match_numpy():
    r = run_program_source(MATRIX + """
int main() {
    cusparseHandle_t h;
    cusparseCreate(&h);
    cusparseSpMatDescr_t csr, csc, coo, dcsr;
    cusparseCreateCsr(&csr, 3, 4, 6, device(csr_off, 4), device(csr_col, 6), device(val, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseCreateCsc(&csc, 3, 4, 6, device(csc_off, 5), device(csc_row, 6), device(csc_val, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseCreateCoo(&coo, 3, 4, 6, device(coo_row, 6), device(coo_col, 6), device(val, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_BASE_ONE, CUDA_R_32F);
    cusparseCreateCsr(&dcsr, 3, 4, 6, device(csr_off, 4), device(csr_col, 6), device(dval, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
    const float x4[] = {1, 2, 3, 4}, x3[] = {1, -1, 2}, ones[] = {1, 1, 1, 1};
    float alpha = 2, beta = 1;
    const char *names[] = {"csr", "csc", "coo"};
    cusparseSpMatDescr_t mats[] = {csr, csc, coo};
    for (int k = 0; k < 3; k++) {
        // y = 2 A x + y, and z = 2 A^T w + z
        cusparseDnVecDescr_t X, Y, W, Z;
        float *y = device(ones, 3), *z = device(ones, 4);
        cusparseCreateDnVec(&X, 4, device(x4, 4), CUDA_R_32F);
        cusparseCreateDnVec(&Y, 3, y, CUDA_R_32F);
        cusparseCreateDnVec(&W, 3, device(x3, 3), CUDA_R_32F);
        cusparseCreateDnVec(&Z, 4, z, CUDA_R_32F);
        size_t size;
        cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mats[k], X, &beta, Y, CUDA_R_32F,
                                CUSPARSE_SPMV_ALG_DEFAULT, &size);
        void *buffer;
        cudaMalloc(&buffer, size);
        cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mats[k], X, &beta, Y, CUDA_R_32F,
                     CUSPARSE_SPMV_ALG_DEFAULT, buffer);
        cusparseSpMV(h, CUSPARSE_OPERATION_TRANSPOSE, &alpha, mats[k], W, &beta, Z, CUDA_R_32F,
                     CUSPARSE_SPMV_ALG_DEFAULT, buffer);
        char name[16];
        snprintf(name, sizeof name, "%s_y", names[k]);
        show(name, y, 3);
        snprintf(name, sizeof name, "%s_z", names[k]);
        show(name, z, 4);
    }
    // doubles, alpha and beta in device memory (CUSPARSE_POINTER_MODE_DEVICE)
    const double dx[] = {1, 2, 3, 4}, dscalars[] = {0.5, 0};
    double *dy, *ds = device(dscalars, 2);
    void *buffer;
    cudaMalloc(&buffer, 1 << 16);             // more than any bufferSize here asks
    cudaMalloc(&dy, 3 * sizeof(double));
    cusparseDnVecDescr_t DX, DY;
    cusparseCreateDnVec(&DX, 4, device(dx, 4), CUDA_R_64F);
    cusparseCreateDnVec(&DY, 3, dy, CUDA_R_64F);
    cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_DEVICE);
    cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, ds, dcsr, DX, ds + 1, DY, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT,
                 buffer);
    cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST);
    show("double_y", dy, 3);
    // complex: A (1 + i) x, x = (1, i, 2, -i)
    const cuComplex cval[] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}}, cx[] = {{1, 0}, {0, 1}, {2, 0}, {0, -1}};
    cuComplex cone = {1, 0}, czero = {0, 0}, *cy;
    cudaMalloc(&cy, 3 * sizeof(cuComplex));
    cusparseSpMatDescr_t ccsr;
    cusparseDnVecDescr_t CX, CY;
    cusparseCreateCsr(&ccsr, 3, 4, 6, device(csr_off, 4), device(csr_col, 6), device(cval, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_C_32F);
    cusparseCreateDnVec(&CX, 4, device(cx, 4), CUDA_C_32F);
    cusparseCreateDnVec(&CY, 3, cy, CUDA_C_32F);
    cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &cone, ccsr, CX, &czero, CY, CUDA_C_32F, CUSPARSE_SPMV_ALG_DEFAULT,
                 buffer);
    show("complex_y", (float *)cy, 6);
    // C (3 x 2) = A B with B 4 x 2 column-major, then row-major with ld 3
    const float b[] = {1, 2, 3, 4, -1, 0, 1, 0}, brow[] = {1, -1, 9, 2, 0, 9, 3, 1, 9, 4, 0, 9};
    float zero = 0, one = 1, *c = device(b, 6), *crow = device(b, 6);
    cusparseDnMatDescr_t B, C, BR, CR;
    cusparseCreateDnMat(&B, 4, 2, 4, device(b, 8), CUDA_R_32F, CUSPARSE_ORDER_COL);
    cusparseCreateDnMat(&C, 3, 2, 3, c, CUDA_R_32F, CUSPARSE_ORDER_COL);
    cusparseCreateDnMat(&BR, 4, 2, 3, device(brow, 12), CUDA_R_32F, CUSPARSE_ORDER_ROW);
    cusparseCreateDnMat(&CR, 3, 2, 2, crow, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, csr, B, &zero, C,
                 CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer);
    cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, coo, BR, &zero, CR,
                 CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, buffer);
    show("spmm_col", c, 6);
    show("spmm_row", crow, 6);
    cusparseDestroySpMat(csr), cusparseDestroySpMat(csc), cusparseDestroySpMat(coo), cusparseDestroySpMat(dcsr);
    cusparseDestroyDnMat(B), cusparseDestroyDnMat(C), cusparseDestroyDnMat(BR), cusparseDestroyDnMat(CR);
    printf("destroy %d\\n", cusparseDestroy(h));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    x4, x3 = np.array([1, 2, 3, 4.0]), np.array([1, -1, 2.0])
    for fmt in ("csr", "csc", "coo"):
        np.testing.assert_array_equal(got[f"{fmt}_y"], 2 * A @ x4 + 1)
        np.testing.assert_array_equal(got[f"{fmt}_z"], 2 * A.T @ x3 + 1)
    np.testing.assert_array_equal(got["double_y"], 0.5 * A @ x4)
    complex_y = (1 + 1j) * A @ np.array([1, 1j, 2, -1j])
    np.testing.assert_array_equal(got["complex_y"], np.column_stack([complex_y.real, complex_y.imag]).ravel())
    b = np.array([[1, -1], [2, 0], [3, 1], [4, 0.0]])
    np.testing.assert_array_equal(got["spmm_col"], (A @ b).T.ravel())      # column-major C
    np.testing.assert_array_equal(got["spmm_row"], (A @ b).ravel())        # row-major C
    assert got["destroy"][0] == 0


@needs_cusparse
def test_conversions_coo_to_csr_csr_to_csc_and_dense_to_sparse_and_back():
    r = run_program_source(MATRIX + """
int main() {
    cusparseHandle_t h;
    cusparseCreate(&h);
    int *offsets, *csc_offsets, *rows;
    float *values;
    cudaMalloc(&offsets, 4 * sizeof(int)), cudaMalloc(&csc_offsets, 5 * sizeof(int));
    cudaMalloc(&rows, 6 * sizeof(int)), cudaMalloc(&values, 6 * sizeof(float));
    printf("coo2csr %d\\n", cusparseXcoo2csr(h, device(coo_row, 6), 6, 3, offsets, CUSPARSE_INDEX_BASE_ONE));
    show("offsets", offsets, 4);
    size_t size;
    cusparseCsr2cscEx2_bufferSize(h, 3, 4, 6, device(val, 6), device(csr_off, 4), device(csr_col, 6), values,
                                  csc_offsets, rows, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                                  CUSPARSE_CSR2CSC_ALG1, &size);
    void *buffer;
    cudaMalloc(&buffer, size);
    printf("csr2csc %d\\n", cusparseCsr2cscEx2(h, 3, 4, 6, device(val, 6), device(csr_off, 4), device(csr_col, 6),
                                               values, csc_offsets, rows, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
                                               CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, buffer));
    show("csc_offsets", csc_offsets, 5);
    show("csc_rows", rows, 6);
    show("csc_values", values, 6);
    // dense (column-major) -> CSR, as cuSPARSE's examples do: the analysis finds nnz, then the arrays
    const float dense[] = {1, 0, 4, 0, 3, 0, 2, 0, 5, 0, 0, 6};
    cusparseDnMatDescr_t D, back;
    cusparseSpMatDescr_t S;
    int *d_offsets, *d_columns;
    float *d_values, *d_back;
    cudaMalloc(&d_offsets, 4 * sizeof(int)), cudaMalloc(&d_back, 12 * sizeof(float));
    cusparseCreateDnMat(&D, 3, 4, 3, device(dense, 12), CUDA_R_32F, CUSPARSE_ORDER_COL);
    cusparseCreateCsr(&S, 3, 4, 0, d_offsets, NULL, NULL, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseDenseToSparse_bufferSize(h, D, S, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, &size);
    cudaMalloc(&buffer, size);
    cusparseDenseToSparse_analysis(h, D, S, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, buffer);
    int64_t r, c, nnz;
    cusparseSpMatGetSize(S, &r, &c, &nnz);
    cudaMalloc(&d_columns, nnz * sizeof(int)), cudaMalloc(&d_values, nnz * sizeof(float));
    cusparseCsrSetPointers(S, d_offsets, d_columns, d_values);
    printf("convert %d %d\\n", cusparseDenseToSparse_convert(h, D, S, CUSPARSE_DENSETOSPARSE_ALG_DEFAULT, buffer),
           (int)nnz);
    show("d2s_offsets", d_offsets, 4);
    show("d2s_columns", d_columns, (int)nnz);
    show("d2s_values", d_values, (int)nnz);
    // and back, row-major
    cusparseCreateDnMat(&back, 3, 4, 4, d_back, CUDA_R_32F, CUSPARSE_ORDER_ROW);
    cusparseSparseToDense(h, S, back, CUSPARSE_SPARSETODENSE_ALG_DEFAULT, buffer);
    show("s2d", d_back, 12);
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    assert got["coo2csr"][0] == got["csr2csc"][0] == 0
    np.testing.assert_array_equal(got["offsets"], [1, 3, 4, 7])          # 1-based in, 1-based out
    np.testing.assert_array_equal(got["csc_offsets"], [0, 2, 3, 5, 6])
    np.testing.assert_array_equal(got["csc_rows"], [0, 2, 1, 0, 2, 2])
    np.testing.assert_array_equal(got["csc_values"], [1, 4, 3, 2, 5, 6])
    np.testing.assert_array_equal(got["convert"], [0, 6])
    np.testing.assert_array_equal(got["d2s_offsets"], [0, 2, 3, 6])
    np.testing.assert_array_equal(got["d2s_columns"], [0, 2, 1, 0, 2, 3])
    np.testing.assert_array_equal(got["d2s_values"], [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(got["s2d"], A.ravel())


@needs_cusparse
def test_misuse_returns_cusparse_status_codes_and_says_why():
    r = run_program_source(MATRIX + """
int main() {
    cusparseHandle_t h;
    cusparseCreate(&h);
    cusparseSpMatDescr_t A, bad;
    cusparseDnVecDescr_t X, Y, Y3;
    const int wrong_col[] = {0, 2, 1, 0, 7, 3};
    float alpha = 1, beta = 0, *y;
    void *buffer;
    cudaMalloc(&y, 4 * sizeof(float));
    cudaMalloc(&buffer, 1 << 16);
    cusparseCreateCsr(&A, 3, 4, 6, device(csr_off, 4), device(csr_col, 6), device(val, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseCreateCsr(&bad, 3, 4, 6, device(csr_off, 4), device(wrong_col, 6), device(val, 6), CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    cusparseCreateDnVec(&X, 4, y, CUDA_R_32F);
    cusparseCreateDnVec(&Y, 4, y, CUDA_R_32F);
    cusparseCreateDnVec(&Y3, 3, y, CUDA_R_32F);
    printf("%d\\n", cusparseCreateCsr(&A, -3, 4, 6, 0, 0, 0, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));             // negative rows
    printf("%d\\n", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_32F,
                                 CUSPARSE_SPMV_ALG_DEFAULT, buffer));                       // Y has 4, not 3
    printf("%d\\n", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y3, CUDA_R_32F,
                                 CUSPARSE_SPMV_ALG_DEFAULT, 0));                            // no buffer
    printf("%d\\n", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y3, CUDA_R_64F,
                                 CUSPARSE_SPMV_ALG_DEFAULT, buffer));                       // f32 data, f64 compute
    printf("%d\\n", cusparseSpMV(h, CUSPARSE_OPERATION_TRANSPOSE, &alpha, bad, Y3, &beta, X, CUDA_R_32F,
                                 CUSPARSE_SPMV_ALG_DEFAULT, buffer));                       // column 7 of 4
    cusparseSpGEMMDescr_t g;
    for (int k = 0; k < 2; k++) printf("%d\\n", cusparseSpGEMM_createDescr(&g));
    cusparseDestroy(h);
    printf("%d\\n", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y3, CUDA_R_32F,
                                 CUSPARSE_SPMV_ALG_DEFAULT, buffer));                       // a destroyed handle
    printf("%s: %s\\n", cusparseGetErrorName(CUSPARSE_STATUS_INVALID_VALUE),
           cusparseGetErrorString(CUSPARSE_STATUS_INVALID_VALUE));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    # INVALID_VALUE (three times), NOT_SUPPORTED, EXECUTION_FAILED (cudalab's index check: a GPU reads
    # on), NOT_SUPPORTED for SpGEMM (a GPU has it), INVALID_VALUE for a destroyed handle: checked on an H200
    assert r.stdout.splitlines() == ["3", "3", "3", "10", "6", "10", "10", "3",
                                     "CUSPARSE_STATUS_INVALID_VALUE: invalid value"]
    assert "cusparseSpMV: op(A) is 3 x 4, so X must have 4 elements and Y 3, but they have 4 and 4" in r.stderr
    assert "cusparseSpMV: externalBuffer is NULL" in r.stderr
    assert "with computeType 1 are not a combination cuSPARSE computes" in r.stderr
    assert "matA's column indices[4] = 7 is outside 0..3" in r.stderr
    assert r.stderr.count("cusparseSpGEMM_createDescr is not part of cudalab's cuSPARSE") == 1


@needs_cusparse
def test_every_function_of_cusparse_h_gets_a_definition():
    """Each is hand-written (cusparse.c) or a fallback answering CUSPARSE_STATUS_NOT_SUPPORTED, deprecated
    ones (marked CUSPARSE_DEPRECATED before their return type) included."""
    header = cuda_home() / "include" / "cusparse.h"
    declared = set(declarations(header, "CUSPARSEAPI"))
    source = fallbacks_source(header, "cusparse.c", "cusparse", "CUSPARSEAPI", "sparse_not_supported")
    generated = {name for name in declared if f" {name}(" in source}
    assert {"cusparseSpMV", "cusparseCreateCsr", "cusparseScsr2csr_compress"} <= declared
    assert declared == generated | (declared & defined_in(SHIM_DIR / "cusparse.c", "cusparse"))
    assert "cusparseSpMV(" not in source and "cusparseSpGEMM_compute(" in source


# ------------------------------------------------------------------------------ against an H200
RECORDED = Path(__file__).parent / "libraries" / "sparse_lt_h200.txt"
# label -> why the emulator's answer differs from the H200's (cuSPARSE 12.9, cuBLAS 13.0)
KNOWN_DIFFERENCES = {
    "relu_bias_TN status": "an H200 refuses RELU_BIAS with f32 compute (NOT_SUPPORTED); cudalab computes it",
    "relu_bias_NT status": "the same",
    "gelu_aux_TN status": "an H200 answered INVALID_VALUE to GELU_AUX and DGELU with this aux layout, yet takes "
                          "GELU_AUX_BIAS and DGELU_BGRAD with it; cudalab computes them",
    "gelu_aux_NT status": "the same", "dgelu_TN status": "the same", "dgelu_NT status": "the same",
    "sp_spmv_buffersize_value": "the size of cuSPARSE's own scratch; cudalab needs none and answers 16 bytes",
    "sp_csr2csc_buffersize_value": "the same",
    "lt_heur_ok_found": "cudalab offers one algorithm where cuBLASLt lists several",
    "lt_heur_destroyed": "cudalab's cuBLASLt lacks the RELU_AUX epilogue (its bit-mask aux): NOT_SUPPORTED",
}


def answers(text: str) -> dict:
    """label -> the rest of the line, from the probes' "label value ..." lines ("name status N" and
    "sp_str N ..." take their second word into the label; cuSPARSE's own log lines, which begin with
    " **", are left out)."""
    found = {}
    for line in text.splitlines():
        if not line or line.startswith((" **", "===")):
            continue
        label, value = line.split(" ", 1)
        if value.startswith("status ") or label == "sp_str":
            more, value = value.split(" ", 1)
            label = f"{label} {more}"
        found[label] = value
    return found


def same(got: str, expected: str) -> bool:
    """Equal, numbers within float32 rounding (a GPU's GELU and sums differ in the last digits)."""
    if got == expected:
        return True
    try:
        return np.allclose([float(x) for x in got.split()], [float(x) for x in expected.split()], rtol=1e-5,
                           atol=3e-7)
    except ValueError:
        return False


@needs_cusparse
@pytest.mark.skipif(not (cuda_home() / "include" / "cublasLt.h").exists(), reason="cuBLASLt's header (cudalab[cublas])")
def test_answers_match_an_h200s_but_for_the_known_differences():
    """tools/sparse_lt_gpu_probe.cu and cublaslt_epilogues_gpu_probe.cu, run on the emulator, against
    what they printed on an H200; every line it answers differently is listed above with its reason."""
    tools = Path(__file__).parents[1] / "tools"
    got = {}
    for probe in ("sparse_lt_gpu_probe.cu", "cublaslt_epilogues_gpu_probe.cu"):
        r = run_program_source((tools / probe).read_text(), timeout=120)
        assert r.returncode == 0, r.stderr
        got.update(answers(r.stdout))
    recorded = answers(RECORDED.read_text())
    statuses = {label: value for label, value in recorded.items() if label.endswith(" status")}
    assert len(recorded) == 112 and len(statuses) == 12
    differing = {label for label in recorded if not same(got.get(label, "missing"), recorded[label])}
    # the D (and aux) of an epilogue the H200 refused are its untouched buffers: they differ with the status
    refused = {label.rsplit(" ", 1)[0] for label in KNOWN_DIFFERENCES if label.endswith(" status")}
    differing -= {f"{name}_{part}" for name in refused for part in ("D", "aux")}
    assert differing == set(KNOWN_DIFFERENCES)
