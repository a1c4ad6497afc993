"""cuSPARSE's triangular solve (SpSV) and incomplete LU (csrilu02) in whole programs, checked with numpy.

The matrix is a 3 x 3 grid's five-point stencil, made unsymmetric (4 on the diagonal, -1 to the left
and up, -2 to the right and down, in the order cuSPARSE's ILU-preconditioned CG sample builds its
Laplacian): its ILU(0) keeps the 33 entries' pattern, which a dense LU would fill in.
"""
from __future__ import annotations

import numpy as np
import pytest

from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home

needs_cusparse = pytest.mark.skipif(not (cuda_home() / "include" / "cusparse.h").exists(),
                                    reason="cuSPARSE's header comes with the nvidia-cusparse wheel (cudalab[cusparse])")

SIDE = 3
N = SIDE * SIDE


def grid_matrix() -> np.ndarray:
    a = np.zeros((N, N))
    for i in range(N):
        x, y = i % SIDE, i // SIDE
        a[i, i] = 4
        if y > 0:
            a[i, i - SIDE] = -1
        if x > 0:
            a[i, i - 1] = -1
        if x < SIDE - 1:
            a[i, i + 1] = -2
        if y < SIDE - 1:
            a[i, i + SIDE] = -2
    return a


def ilu0(a: np.ndarray) -> np.ndarray:
    """The textbook ILU(0) (Saad's IKJ form) on a's nonzero pattern: L below the diagonal, U on and above."""
    lu, keep = a.copy(), a != 0
    for i in range(1, len(a)):
        for k in range(i):
            if keep[i, k]:
                lu[i, k] /= lu[k, k]
                for j in range(k + 1, len(a)):
                    if keep[i, j]:
                        lu[i, j] -= lu[i, k] * lu[k, j]
    return lu


PROGRAM = """
#include <cstdio>
#include <vector>
#include <cusparse.h>
const int side = 3, n = side * side;
template <typename T> struct Csr { std::vector<int> row, col; std::vector<T> val; };
template <typename T> Csr<T> grid() {          // the five-point stencil, unsymmetric, columns in order
    Csr<T> m;
    for (int i = 0; i < n; i++) {
        int x = i % side, y = i / side;
        m.row.push_back((int)m.col.size());
        if (y > 0) m.col.push_back(i - side), m.val.push_back(-1);
        if (x > 0) m.col.push_back(i - 1), m.val.push_back(-1);
        m.col.push_back(i), m.val.push_back(4);
        if (x < side - 1) m.col.push_back(i + 1), m.val.push_back(-2);
        if (y < side - 1) m.col.push_back(i + side), m.val.push_back(-2);
    }
    m.row.push_back((int)m.col.size());
    return m;
}
template <typename T> T *device(const std::vector<T> &h) {
    T *d;
    cudaMalloc(&d, h.size() * sizeof(T));
    cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}
template <typename T> void show(const char *name, const T *d, int count) {
    std::vector<T> h(count);
    cudaMemcpy(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost);
    printf("%s", name);
    for (int i = 0; i < count; i++) printf(" %.17g", (double)h[i]);
    printf("\\n");
}
"""

SOLVES = PROGRAM + """
// ILU(0) in place, then z = U^-1 L^-1 r with L's unit diagonal, as the preconditioned CG does; then
// solves with the transpose and with alpha = 2 on A's own triangles
template <typename T> void run(const char *tag, cudaDataType type,
                               cusparseStatus_t (*factor)(cusparseHandle_t, int, int, const cusparseMatDescr_t, T *,
                                                          const int *, const int *, csrilu02Info_t,
                                                          cusparseSolvePolicy_t, void *)) {
    cusparseHandle_t h;
    cusparseCreate(&h);
    Csr<T> a = grid<T>();
    int nnz = (int)a.col.size(), *row = device(a.row), *col = device(a.col);
    T *lu = device(a.val), *orig = device(a.val);
    std::vector<T> r(n);
    for (int i = 0; i < n; i++) r[i] = T(i % 4 - 1.5);
    T *d_r = device(r), *d_y = device(r), *d_z = device(r), one = 1, two = 2;
    cusparseMatDescr_t descr;
    cusparseCreateMatDescr(&descr);
    csrilu02Info_t info;
    cusparseCreateCsrilu02Info(&info);
    int bytes = 0;
    void *buffer;
    cusparseScsrilu02_bufferSize(h, n, nnz, descr, (float *)lu, row, col, info, &bytes);
    cudaMalloc(&buffer, bytes);
    cusparseStatus_t s1 = type == CUDA_R_32F ? cusparseScsrilu02_analysis(h, n, nnz, descr, (float *)lu, row, col, info,
                                                                          CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer)
                                             : cusparseDcsrilu02_analysis(h, n, nnz, descr, (double *)lu, row, col, info,
                                                                          CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer);
    cusparseStatus_t s2 = factor(h, n, nnz, descr, lu, row, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer);
    int zero = 7;
    cusparseStatus_t s3 = cusparseXcsrilu02_zeroPivot(h, info, &zero);
    printf("%s_status %d %d %d %d %d\\n", tag, bytes > 0, s1, s2, s3, zero);
    char name[32];
    snprintf(name, sizeof name, "%s_lu", tag);
    show(name, lu, nnz);

    cusparseSpMatDescr_t lower, upper, plain;
    cusparseFillMode_t fill_lower = CUSPARSE_FILL_MODE_LOWER, fill_upper = CUSPARSE_FILL_MODE_UPPER;
    cusparseDiagType_t unit = CUSPARSE_DIAG_TYPE_UNIT, non_unit = CUSPARSE_DIAG_TYPE_NON_UNIT;
    cusparseCreateCsr(&lower, n, n, nnz, row, col, lu, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type);
    cusparseCreateCsr(&upper, n, n, nnz, row, col, lu, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type);
    cusparseCreateCsr(&plain, n, n, nnz, row, col, orig, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, type);
    cusparseSpMatSetAttribute(lower, CUSPARSE_SPMAT_FILL_MODE, &fill_lower, sizeof fill_lower);
    cusparseSpMatSetAttribute(lower, CUSPARSE_SPMAT_DIAG_TYPE, &unit, sizeof unit);
    cusparseSpMatSetAttribute(upper, CUSPARSE_SPMAT_FILL_MODE, &fill_upper, sizeof fill_upper);
    cusparseSpMatSetAttribute(upper, CUSPARSE_SPMAT_DIAG_TYPE, &non_unit, sizeof non_unit);
    cusparseDnVecDescr_t R, Y, Z;
    cusparseCreateDnVec(&R, n, d_r, type), cusparseCreateDnVec(&Y, n, d_y, type), cusparseCreateDnVec(&Z, n, d_z, type);
    cusparseSpSVDescr_t dl, du, dt;
    cusparseSpSV_createDescr(&dl), cusparseSpSV_createDescr(&du), cusparseSpSV_createDescr(&dt);
    size_t size;
    cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lower, R, Y, type, CUSPARSE_SPSV_ALG_DEFAULT, dl,
                            &size);
    void *bl, *bu, *bt;
    cudaMalloc(&bl, size), cudaMalloc(&bu, size), cudaMalloc(&bt, size);
    cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lower, R, Y, type, CUSPARSE_SPSV_ALG_DEFAULT, dl, bl);
    cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, upper, R, Y, type, CUSPARSE_SPSV_ALG_DEFAULT, du, bu);
    cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, lower, R, Y, type, CUSPARSE_SPSV_ALG_DEFAULT, dl);
    cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, upper, Y, Z, type, CUSPARSE_SPSV_ALG_DEFAULT, du);
    snprintf(name, sizeof name, "%s_z", tag);
    show(name, d_z, n);
    // A's own lower triangle (the default fill mode and diagonal type), transposed, times 2
    cusparseSpSV_analysis(h, CUSPARSE_OPERATION_TRANSPOSE, &two, plain, R, Y, type, CUSPARSE_SPSV_ALG_DEFAULT, dt, bt);
    cusparseSpSV_solve(h, CUSPARSE_OPERATION_TRANSPOSE, &two, plain, R, Y, type, CUSPARSE_SPSV_ALG_DEFAULT, dt);
    snprintf(name, sizeof name, "%s_t", tag);
    show(name, d_y, n);
    cusparseSpSV_destroyDescr(dl), cusparseSpSV_destroyDescr(du), cusparseSpSV_destroyDescr(dt);
    cusparseDestroyCsrilu02Info(info);
    cusparseDestroy(h);
}
int main() {
    run<float>("f32", CUDA_R_32F, cusparseScsrilu02);
    run<double>("f64", CUDA_R_64F, cusparseDcsrilu02);
}
"""


def shown(stdout) -> dict:
    return {line.split()[0]: np.array([float(x) for x in line.split()[1:]]) for line in stdout.splitlines()
            if line.strip()}


@needs_cusparse
def test_ilu0_and_the_triangular_solves_of_the_preconditioned_cg_match_numpy():
    r = run_program_source(SOLVES, timeout=120)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    a = grid_matrix()
    lu = ilu0(a)
    rhs = np.array([i % 4 - 1.5 for i in range(N)])
    lower, upper = np.tril(lu, -1) + np.eye(N), np.triu(lu)
    z = np.linalg.solve(upper, np.linalg.solve(lower, rhs))
    t = np.linalg.solve(np.tril(a).T, 2 * rhs)
    for tag, tol in (("f32", 1e-5), ("f64", 1e-13)):
        # a buffer size, analysis and factorization succeed, no zero pivot (-1)
        np.testing.assert_array_equal(got[f"{tag}_status"], [1, 0, 0, 0, -1])
        np.testing.assert_allclose(got[f"{tag}_lu"], lu[a != 0], rtol=tol)
        np.testing.assert_allclose(got[f"{tag}_z"], z, rtol=tol)
        np.testing.assert_allclose(got[f"{tag}_t"], t, rtol=tol)
    assert not np.allclose(lu, a) and not np.allclose(lower @ upper, a)      # incomplete: L U is not A


@needs_cusparse
def test_zero_pivots_attributes_and_misuse_say_what_went_wrong():
    r = run_program_source(PROGRAM + """
int main() {
    cusparseHandle_t h;
    cusparseCreate(&h);
    Csr<float> a = grid<float>();
    int nnz = (int)a.col.size(), *row = device(a.row), *col = device(a.col), zero;
    // row 4 without its diagonal entry (a structural zero), then with a zero on it (a numerical one)
    std::vector<int> col_missing = a.col;
    col_missing[a.row[4] + 2] = 0;                 // an unsorted row too: refused by the factorization
    cusparseMatDescr_t descr;
    cusparseCreateMatDescr(&descr);
    csrilu02Info_t info;
    cusparseCreateCsrilu02Info(&info);
    void *buffer;
    cudaMalloc(&buffer, 64);
    std::vector<float> zeroed = a.val;
    zeroed[a.row[0]] = 0;                          // A(0,0) = 0
    float *val = device(zeroed);
    printf("factor_first %d\\n", cusparseScsrilu02(h, n, nnz, descr, val, row, col, info,
                                                   CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer));
    cusparseScsrilu02_analysis(h, n, nnz, descr, val, row, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer);
    printf("numeric %d", cusparseScsrilu02(h, n, nnz, descr, val, row, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL,
                                            buffer));
    printf(" %d", cusparseXcsrilu02_zeroPivot(h, info, &zero));
    printf(" %d\\n", zero);
    int *bad = device(col_missing);
    printf("structural %d", cusparseScsrilu02_analysis(h, n, nnz, descr, val, row, bad, info,
                                                        CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer));
    printf(" %d", cusparseXcsrilu02_zeroPivot(h, info, &zero));
    printf(" %d\\n", zero);
    printf("unsorted %d\\n", cusparseScsrilu02(h, n, nnz, descr, val, row, bad, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL,
                                               buffer));
    cusparseSetMatType(descr, CUSPARSE_MATRIX_TYPE_SYMMETRIC);
    printf("symmetric %d\\n", cusparseScsrilu02_analysis(h, n, nnz, descr, val, row, col, info,
                                                          CUSPARSE_SOLVE_POLICY_USE_LEVEL, buffer));
    // attributes: defaults, a set and a get, a wrong size, a storage cudalab does not model
    cusparseSpMatDescr_t m;
    cusparseCreateCsr(&m, n, n, nnz, row, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                      CUDA_R_32F);
    cusparseFillMode_t fill;
    cusparseDiagType_t diag;
    cusparseSpMatGetAttribute(m, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill);
    cusparseSpMatGetAttribute(m, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag);
    printf("defaults %d %d\\n", fill, diag);
    fill = CUSPARSE_FILL_MODE_UPPER;
    printf("set %d", cusparseSpMatSetAttribute(m, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
    fill = CUSPARSE_FILL_MODE_LOWER;
    cusparseSpMatGetAttribute(m, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill);
    printf(" %d", fill);
    printf(" %d", cusparseSpMatSetAttribute(m, CUSPARSE_SPMAT_FILL_MODE, &fill, 1));
    cusparseSpMatStorage_t storage = CUSPARSE_STORE_LOWER;
    printf(" %d\\n", cusparseSpMatSetAttribute(m, CUSPARSE_SPMAT_STORAGE, &storage, sizeof storage));
    // a solve before its analysis, and a rectangular matrix
    cusparseDnVecDescr_t X, Y;
    float one = 1, *x = device(a.val);
    cusparseCreateDnVec(&X, n, x, CUDA_R_32F), cusparseCreateDnVec(&Y, n, x + n, CUDA_R_32F);
    cusparseSpSVDescr_t d;
    cusparseSpSV_createDescr(&d);
    printf("early %d\\n", cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m, X, Y, CUDA_R_32F,
                                             CUSPARSE_SPSV_ALG_DEFAULT, d));
    cusparseSpMatDescr_t wide;
    cusparseCreateCsr(&wide, n - 1, n, a.row[n - 1], row, col, val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
    printf("wide %d\\n", cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, wide, X, Y, CUDA_R_32F,
                                               CUSPARSE_SPSV_ALG_DEFAULT, d, buffer));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["factor_first"] == "3"                 # INVALID_VALUE: no analysis yet
    assert lines["numeric"] == "0 9 0"                  # computed; ZERO_PIVOT at row 0
    assert lines["structural"] == "0 9 4"               # row 4 has no diagonal entry
    assert lines["unsorted"] == "6"
    assert lines["symmetric"] == "8"                    # MATRIX_TYPE_NOT_SUPPORTED
    assert lines["defaults"] == "0 0"                   # lower, non-unit
    assert lines["set"] == "0 1 3 10"
    assert lines["early"] == "3" and lines["wide"] == "3"
    assert "has not been through csrilu02_analysis" in r.stderr
    assert "csrColIndA is not sorted (strictly rising) in row 4" in r.stderr
    assert "CUSPARSE_MATRIX_TYPE_GENERAL, the only one csrilu02 takes" in r.stderr
    assert "takes only the full storage and general symmetry" in r.stderr
    assert "spsvDescr has not been through cusparseSpSV_analysis" in r.stderr
    assert "a triangular solve needs a square matrix" in r.stderr
