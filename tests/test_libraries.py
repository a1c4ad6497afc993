"""cuBLAS and cuRAND's host API in whole programs: small programs call the library, numpy checks.

Inputs are small integers, so every product and sum is exact in float32 and the library's order
of summation cannot change the result: the tests compare with numpy's answer exactly.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cudalab.errors import CompileError
from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home
from cudalab.programs.libgen import SHIM_DIR, cublas_source, declarations, defined_in, legacy_source
from cudalab.runtime.libraries import rand
from library_programs import operands

needs_cublas = pytest.mark.skipif(not (cuda_home() / "include" / "cublas_api.h").exists(),
                                  reason="cuBLAS's headers come with the nvidia-cublas wheel (cudalab[cublas])")
needs_curand = pytest.mark.skipif(not (cuda_home() / "include" / "curand.h").exists(),
                                  reason="cuRAND's headers come with the nvidia-curand wheel (cudalab[curand])")

FILL = operands("cublas_v2.h", "cuda_fp16.h")


def value(seed, n):
    i = np.arange(n)
    return ((i * 7 + seed * 3) % 11 - 5).astype(np.float64)


def col_major(flat, rows, cols, ld):
    """The rows x cols matrix a column-major array with leading dimension ld holds."""
    return flat[: ld * cols].reshape(cols, ld).T[:rows]


def shown(stdout) -> dict:
    return {line.split()[0]: np.array([float(x) for x in line.split()[1:]]) for line in stdout.splitlines()
            if line.strip()}


def run(body: str):
    r = run_program_source(FILL + body, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


@needs_cublas
def test_gemm_with_transposes_leading_dimensions_and_batches_matches_numpy():
    r = run("""
int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    const int m = 5, n = 3, k = 4, lda = 6, ldb = 7, ldc = 8;
    float *A = device<float>(1, lda * m), *B = device<float>(2, ldb * k), *C = device<float>(3, ldc * n);
    float alpha = 2, beta = -1, fone = 1, fzero = 0;
    // C = alpha A^T B^T + beta C, A stored k x m (lda 6), B stored n x k (ldb 7)
    cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc);
    show("sgemm_tt", C, ldc * n);
    double *dA = device<double>(4, m * k), *dB = device<double>(5, k * n), *dC = device<double>(6, m * n);
    double one = 1, zero = 0;
    cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, m, dB, k, &zero, dC, m);
    show("dgemm", dC, m * n);
    // three 2x2 products, strides of 4 elements
    float *sA = device<float>(7, 12), *sB = device<float>(8, 12), *sC = device<float>(9, 12);
    cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 2, 2, 2, &alpha, sA, 2, 4, sB, 2, 4, &fzero, sC, 2, 4, 3);
    show("strided", sC, 12);
    __half *hA = device<__half>(1, m * k), *hB = device<__half>(2, k * n);
    float *fC = device<float>(0, m * n);
    // CUBLAS_COMPUTE_32F: alpha and beta are floats
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &fone, hA, CUDA_R_16F, m, hB, CUDA_R_16F, k, &fzero, fC,
                 CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    show("gemmex", fC, m * n);
    // gemmBatched: device arrays of device pointers (the same A and B twice, two outputs)
    float *outs[2] = {device<float>(0, 4), device<float>(0, 4)}, *as[2] = {sA, sA + 4}, *bs[2] = {sB, sB};
    float **dAs, **dBs, **dCs;
    cudaMalloc(&dAs, sizeof as); cudaMalloc(&dBs, sizeof bs); cudaMalloc(&dCs, sizeof outs);
    cudaMemcpy(dAs, as, sizeof as, cudaMemcpyHostToDevice);
    cudaMemcpy(dBs, bs, sizeof bs, cudaMemcpyHostToDevice);
    cudaMemcpy(dCs, outs, sizeof outs, cudaMemcpyHostToDevice);
    cublasSgemmBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &fone, dAs, 2, dBs, 2, &fzero, dCs, 2, 2);
    show("batched0", outs[0], 4);
    show("batched1", outs[1], 4);
    __half hone = __float2half(1.0f), hzero = __float2half(0.0f), *hC = device<__half>(0, m * n);
    cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &hone, hA, m, hB, k, &hzero, hC, m);
    show("hgemm", hC, m * n);
    // Z = A^H B with A = (a + 2ia), complex doubles: cuDoubleComplex is two doubles
    double2 *zA, *zB, *zC;
    cudaMalloc(&zA, 4 * sizeof(double2)); cudaMalloc(&zB, 4 * sizeof(double2)); cudaMalloc(&zC, 4 * sizeof(double2));
    double2 za[4] = {{1, 2}, {3, -1}, {0, 1}, {2, 2}}, zb[4] = {{1, 0}, {0, 1}, {2, -1}, {1, 1}};
    cudaMemcpy(zA, za, sizeof za, cudaMemcpyHostToDevice);
    cudaMemcpy(zB, zb, sizeof zb, cudaMemcpyHostToDevice);
    cuDoubleComplex zone = {1, 0}, zzero = {0, 0};
    cublasZgemm(h, CUBLAS_OP_C, CUBLAS_OP_N, 2, 2, 2, &zone, zA, 2, zB, 2, &zzero, zC, 2);
    double out[8];
    cudaMemcpy(out, zC, sizeof out, cudaMemcpyDeviceToHost);
    printf("zgemm");
    for (int i = 0; i < 8; i++) printf(" %g", out[i]);
    printf("\\n");
    cublasDestroy(h);
}
""")
    got = shown(r.stdout)
    m, n, k = 5, 3, 4
    a, b, c = col_major(value(1, 6 * m), k, m, 6), col_major(value(2, 7 * k), n, k, 7), value(3, 8 * n)
    want = c.copy()
    col_major(want, m, n, 8)[...] = 2 * a.T @ b.T - col_major(c, m, n, 8)
    np.testing.assert_array_equal(got["sgemm_tt"], want)       # rows past m (ldc padding) untouched
    product = col_major(value(4, m * k), m, k, m) @ col_major(value(5, k * n), k, n, k)
    np.testing.assert_array_equal(got["dgemm"], product.T.ravel())
    np.testing.assert_array_equal(got["gemmex"], col_major(value(1, m * k), m, k, m).dot(
        col_major(value(2, k * n), k, n, k)).T.ravel())
    sa, sb = value(7, 12), value(8, 12)
    for i in range(3):
        want = 2 * col_major(sa[4 * i:], 2, 2, 2) @ col_major(sb[4 * i:], 2, 2, 2).T
        np.testing.assert_array_equal(got["strided"][4 * i:4 * i + 4], want.T.ravel())
    for i in range(2):
        want = col_major(sa[4 * i:], 2, 2, 2) @ col_major(sb, 2, 2, 2)
        np.testing.assert_array_equal(got[f"batched{i}"], want.T.ravel())
    np.testing.assert_array_equal(got["hgemm"], got["gemmex"])           # the same halves, summed in float
    za = np.array([1 + 2j, 3 - 1j, 0 + 1j, 2 + 2j]).reshape(2, 2).T
    zb = np.array([1, 1j, 2 - 1j, 1 + 1j]).reshape(2, 2).T
    z = got["zgemm"]
    np.testing.assert_array_equal((z[0::2] + 1j * z[1::2]).reshape(2, 2).T, za.conj().T @ zb)


@needs_cublas
def test_sgemmex_multiplies_half_matrices_into_a_float_one_and_cgemmex_complex_ones():
    # the Ex routines from before cublasGemmEx took a compute type: Oxford's tensor-core practical times
    # cublasSgemmEx on half A and B with a float C; the letter is the compute precision and alpha's type
    r = run("""
int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    const int m = 5, n = 3, k = 4;
    __half *hA = device<__half>(1, m * k), *hB = device<__half>(2, k * n);
    float *fC = device<float>(3, m * n), alpha = 2, beta = -1;
    cublasStatus_t s = cublasSgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, hA, CUDA_R_16F, m, hB, CUDA_R_16F, k,
                                     &beta, fC, CUDA_R_32F, m);
    printf("status %d\\n", (int)s);
    show("sgemmex", fC, m * n);
    float2 *cA, *cB, *cC;
    cudaMalloc(&cA, 4 * sizeof(float2)); cudaMalloc(&cB, 4 * sizeof(float2)); cudaMalloc(&cC, 4 * sizeof(float2));
    float2 ca[4] = {{1, 2}, {3, -1}, {0, 1}, {2, 2}}, cb[4] = {{1, 0}, {0, 1}, {2, -1}, {1, 1}};
    cudaMemcpy(cA, ca, sizeof ca, cudaMemcpyHostToDevice);
    cudaMemcpy(cB, cb, sizeof cb, cudaMemcpyHostToDevice);
    cuComplex one = {1, 0}, zero = {0, 0};
    cublasCgemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, cA, CUDA_C_32F, 2, cB, CUDA_C_32F, 2, &zero, cC, CUDA_C_32F, 2);
    float out[8];
    cudaMemcpy(out, cC, sizeof out, cudaMemcpyDeviceToHost);
    printf("cgemmex");
    for (int i = 0; i < 8; i++) printf(" %g", out[i]);
    printf("\\n");
    cublasDestroy(h);
}
""")
    got = shown(r.stdout)
    np.testing.assert_array_equal(got["status"], [0])
    m, n, k = 5, 3, 4
    want = 2 * col_major(value(1, m * k), m, k, m) @ col_major(value(2, k * n), k, n, k) - col_major(value(3, m * n), m, n, m)
    np.testing.assert_array_equal(got["sgemmex"], want.T.ravel())
    ca = np.array([1 + 2j, 3 - 1j, 0 + 1j, 2 + 2j]).reshape(2, 2).T
    cb = np.array([1, 1j, 2 - 1j, 1 + 1j]).reshape(2, 2).T
    z = got["cgemmex"]
    np.testing.assert_array_equal((z[0::2] + 1j * z[1::2]).reshape(2, 2).T, ca @ cb)


@needs_cublas
def test_level_1_and_2_routines_with_host_and_device_scalars():
    r = run("""
int main() {
    cublasHandle_t h;
    cublasCreate(&h);
    const int n = 6;
    float *x = device<float>(1, 2 * n), *y = device<float>(2, n), *A = device<float>(3, 4 * 3);
    float two = 2, zero = 0, r;
    int i;
    cublasSaxpy(h, n, &two, x, 2, y, 1);               // y += 2 x[0:12:2]
    show("axpy", y, n);
    cublasSdot(h, n, x, 1, y, -1, &r);  printf("dot %g\\n", r);       // y backwards
    cublasSnrm2(h, n, y, 1, &r);        printf("nrm2 %.7g\\n", r);
    cublasSasum(h, n, y, 1, &r);        printf("asum %g\\n", r);
    cublasIsamax(h, n, y, 1, &i);       printf("amax %d\\n", i);
    cublasIsamin(h, n, y, 1, &i);       printf("amin %d\\n", i);
    cublasSscal(h, n, &two, y, 1);
    show("scal", y, n);
    // y(0:4) = 2 A^T x(0:3) + 0 y, A 3 x 4 (lda 3)
    cublasSgemv(h, CUBLAS_OP_T, 3, 4, &two, A, 3, x, 1, &zero, y, 1);
    show("gemv", y, n);
    cublasSger(h, 3, 4, &two, x, 1, y, 1, A, 3);        // A += 2 x y^T
    show("ger", A, 12);
    // pointer mode device: alpha and the result live in device memory
    float *dalpha = device<float>(4, 1), *dresult;
    cudaMalloc(&dresult, 4);
    cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE);
    cublasSscal(h, n, dalpha, y, 1);
    show("scal_device", y, n);
    cublasSdot(h, n, y, 1, y, 1, dresult);
    show("dot_device", dresult, 1);
    cublasScopy(h, n, y, 1, x, 1);
    cublasSswap(h, 3, x, 1, x + 3, 1);
    show("swap", x, n);
    cublasDestroy(h);
}
""")
    got = shown(r.stdout)
    x, y, a = value(1, 12), value(2, 6), col_major(value(3, 12), 3, 4, 3)
    y = y + 2 * x[::2]
    np.testing.assert_array_equal(got["axpy"], y)
    assert got["dot"][0] == x[:6] @ y[::-1]
    assert abs(got["nrm2"][0] - np.linalg.norm(y)) < 1e-5 * np.linalg.norm(y)
    assert got["asum"][0] == np.abs(y).sum()
    assert got["amax"][0] == np.argmax(np.abs(y)) + 1 and got["amin"][0] == np.argmin(np.abs(y)) + 1
    y = 2 * y
    np.testing.assert_array_equal(got["scal"], y)
    y[:4] = 2 * a.T @ x[:3]
    np.testing.assert_array_equal(got["gemv"], y)
    np.testing.assert_array_equal(got["ger"], (a + 2 * np.outer(x[:3], y[:4])).T.ravel())
    y = y * value(4, 1)[0]
    np.testing.assert_array_equal(got["scal_device"], y)
    assert got["dot_device"][0] == y @ y
    np.testing.assert_array_equal(got["swap"], np.concatenate([y[3:], y[:3]]))


@needs_cublas
def test_misuse_returns_cublas_status_codes_and_names_the_argument():
    r = run_program_source(FILL + """
int main() {
    cublasHandle_t h;
    float one = 1, host[4] = {1, 2, 3, 4}, *d = device<float>(1, 16);
    cublasCreate(&h);
    printf("%d\\n", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 2, &one, d, 2, d, 2, &one, d, 2));
    printf("%d\\n", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, d, 2, d, 2, &one, d, 4));
    printf("%d\\n", cublasSetVector(4, 4, host, 0, d, 1));
    printf("%d\\n", cublasSaxpy(h, 4, &one, host, 1, d, 1));          // a host pointer for x
    const int big = 20000;                                            // 16 TFLOP: hours of a CPU
    printf("%d\\n", cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, big, big, big, &one, d, big, d, big, &one, d, big));
    float r = 7;
    int i = 7;
    cublasSdot(h, 0, d, 1, d, 1, &r);                                 // no elements: *result untouched
    cublasIsamax(h, 0, d, 1, &i);
    printf("%g %d\\n", r, i);
    printf("%d\\n", cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT,
                                2, 2, &one, d, 2, d, 2));
    cublasDestroy(h);
    printf("%d\\n", cublasSaxpy(h, 4, &one, d, 1, d, 1));
    printf("%s\\n", cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE));
}
""", timeout=120)
    # the codes an H200 gave for the same calls (cuBLAS 13.1): INVALID_VALUE, NOT_SUPPORTED, NOT_INITIALIZED
    assert r.stdout.splitlines() == ["7", "7", "7", "13", "13", "7 7", "15", "1",
                                     "an unsupported value or parameter was passed to the function"]
    assert "cublasSgemm: m = -1 is negative (parameter 3)" in r.stderr
    assert "lda = 2 is less than the rows of the stored A" in r.stderr
    assert "cublasSaxpy: x needs 16 bytes of device memory" in r.stderr
    assert "cublasSgemm: 1 product of 20000 x 20000 by 20000 x 20000 is 16,000 GFLOP" in r.stderr
    assert r.stderr.count("cublasStrsm_v2 is not one of the cuBLAS routines cudalab implements") == 1


@needs_cublas
def test_a_routine_captured_into_a_graph_runs_when_the_graph_does():
    r = run("""
int main() {
    cublasHandle_t h;
    cudaStream_t s;
    cudaGraph_t g;
    cudaGraphExec_t e;
    float *x = device<float>(1, 4), *y = device<float>(0, 4), two = 2;
    cudaStreamCreate(&s);
    cublasCreate(&h);
    cublasSetStream(h, s);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    cublasSaxpy(h, 4, &two, x, 1, y, 1);
    cudaStreamEndCapture(s, &g);
    show("captured", y, 4);                 // nothing ran yet
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    show("launched", y, 4);
}
""")
    got = shown(r.stdout)
    np.testing.assert_array_equal(got["captured"], value(0, 4))
    np.testing.assert_array_equal(got["launched"], value(0, 4) + 4 * value(1, 4))


@needs_cublas
@pytest.mark.parametrize("header, call, named", [
    ("cublasXt.h", "cublasXtHandle_t h; float a = 1; cublasXtSsyrk(h, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, 1, 1, "
                   "&a, &a, 1, &a, &a, 1);", "uses cuBLASXt beyond its gemm, which cudalab does not emulate"),
])
def test_a_library_part_cudalab_lacks_is_named_at_link_time(header, call, named):
    with pytest.raises(CompileError, match=re.escape(named)):
        run_program_source(f"#include <{header}>\nint main() {{ {call} }}\n", timeout=60)


@needs_cublas
def test_cublasxt_gemm_takes_host_matrices_on_the_one_gpu():
    """cuBLASXt's gemm (NVIDIA's simpleCUBLASXT) on host memory: one cuBLAS gemm on the emulated GPU,
    with transposes and leading dimensions; device 0 is the only one to select."""
    r = run_program_source(r"""
#include <cstdio>
#include <cublasXt.h>
int main() {
    cublasXtHandle_t h;
    printf("create %d\n", cublasXtCreate(&h));
    int one[] = {0}, two[] = {0, 1};
    printf("select %d %d\n", cublasXtDeviceSelect(h, 1, one), cublasXtDeviceSelect(h, 2, two));
    int dim = 0, set = cublasXtSetBlockDim(h, 64);
    cublasXtGetBlockDim(h, &dim);
    printf("block %d %d\n", set, dim);
    const int m = 3, n = 2, k = 4, lda = 5, ldb = 4, ldc = 4;        // A stored k x m (transposed)
    float A[lda * m], B[ldb * n], C[ldc * n];
    for (int i = 0; i < lda * m; ++i) A[i] = i % 7 - 3;
    for (int i = 0; i < ldb * n; ++i) B[i] = i % 5 - 2;
    for (int i = 0; i < ldc * n; ++i) C[i] = 1;
    float alpha = 2, beta = -1;
    printf("gemm %d\n", cublasXtSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &alpha, A, lda, B, ldb, &beta, C, ldc));
    printf("C");
    for (int i = 0; i < ldc * n; ++i) printf(" %g", C[i]);
    printf("\ndestroy %d\n", cublasXtDestroy(h));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    assert lines["create"] == "0" and lines["destroy"] == "0" and lines["gemm"] == "0"
    assert lines["select"] == "0 7"                                  # CUBLAS_STATUS_INVALID_VALUE
    assert lines["block"] == "0 64"
    a = col_major(np.arange(5 * 3) % 7 - 3.0, 4, 3, 5)              # k x m, used transposed
    b = col_major(np.arange(4 * 2) % 5 - 2.0, 4, 2, 4)
    c = np.ones((4, 2))
    c[:3] = 2 * a.T @ b - 1                                          # row 3 (padding of ldc) untouched
    np.testing.assert_array_equal(np.array(lines["C"].split(), float), c.T.ravel())


@needs_cublas
def test_the_legacy_api_of_cublas_h_runs_the_same_routines():
    r = run_program_source("""
#include <cstdio>
#include <cublas.h>
int main() {
    float h[6] = {1, 2, 3, 4, 5, 6}, out[4], *A, *C;
    printf("init %d\\n", cublasInit());
    cublasAlloc(6, sizeof(float), (void **)&A);
    cublasAlloc(4, sizeof(float), (void **)&C);
    cublasSetVector(6, sizeof(float), h, 1, A, 1);
    cublasSgemm('n', 'T', 2, 2, 3, 1.0f, A, 2, A, 2, 0.0f, C, 2);     // C = A A^T, A 2 x 3
    int error = cublasGetError();
    cublasGetVector(4, sizeof(float), C, 1, out, 1);
    printf("gemm %d %g %g %g %g\\n", error, out[0], out[1], out[2], out[3]);
    float dot = cublasSdot(6, A, 1, A, 1);
    printf("dot %g %d\\n", dot, cublasIsamax(6, A, 1));
    cublasSgemm('x', 'n', 2, 2, 3, 1.0f, A, 2, A, 2, 0.0f, C, 2);
    error = cublasGetError();
    printf("bad_trans %d %d\\n", error, cublasGetError());          // read once, then cleared
    cublasStrsm('l', 'u', 'n', 'n', 2, 2, 1.0f, A, 2, C, 2);
    printf("trsm %d\\n", cublasGetError());
    printf("free %d %d\\n", cublasFree(A), cublasShutdown());
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    lines = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    a = np.arange(1, 7.0).reshape(3, 2).T
    assert lines["init"] == "0" and lines["free"] == "0 0"
    np.testing.assert_array_equal([float(x) for x in lines["gemm"].split()], [0, *(a @ a.T).ravel(order="F")])
    assert lines["dot"] == "91 6"
    assert lines["bad_trans"] == "7 0" and lines["trsm"] == "15"      # INVALID_VALUE, then NOT_SUPPORTED
    assert "cublasSgemm: transa = -1 is not CUBLAS_OP_N" in r.stderr
    assert "cublasStrsm is not one of the cuBLAS routines cudalab implements" in r.stderr


@needs_cublas
def test_including_both_cublas_h_and_cublas_v2_h_stops_at_nvidias_error():
    with pytest.raises(CompileError, match="It is an error to include both cublas.h and cublas_v2.h"):
        run_program_source("#include <cublas.h>\n#include <cublas_v2.h>\nint main() { cublasInit(); }\n", timeout=60)


@needs_cublas
def test_every_function_of_cublas_api_h_gets_a_definition():
    """Each is hand-written (cublas.c), a wrapper of a routine the emulator computes, or a fallback."""
    include = cuda_home() / "include"
    declared = set(declarations(include / "cublas_api.h"))
    source = cublas_source(include)
    generated = {name for name in declared if f" {name}(" in source}
    assert declared == generated | (declared & defined_in(SHIM_DIR / "cublas.c", "cublas"))
    assert "blas_call" in source.split("cublasSgemm_v2(")[1].split("\n}")[0]
    assert "blas_not_supported" in source.split("cublasStrsm_v2(")[1].split("}")[0]
    # and the legacy API's own functions (cublas.h less what it shares with cublas_api.h)
    legacy = set(declarations(include / "cublas.h")) - declared
    source = legacy_source(include)
    generated = {name for name in legacy if f" {name}(" in source}
    assert legacy == generated | (legacy & defined_in(SHIM_DIR / "cublas_legacy.c", "cublas"))
    assert "legacy_call" in source.split("cublasSgemm(")[1].split("\n}")[0]


# ------------------------------------------------------------------------------------------ cuRAND
RECORDED = json.loads((Path(__file__).parent / "libraries" / "curand_h200.json").read_text())
CALLS = {"bits": "curandGenerate(g, (unsigned *)out, n)", "uniform": "curandGenerateUniform(g, (float *)out, n)",
         "normal": "curandGenerateNormal(g, (float *)out, n, 1.0f, 2.0f)",
         "uniform_double": "curandGenerateUniformDouble(g, (double *)out, n)",
         "normal_double": "curandGenerateNormalDouble(g, (double *)out, n, 0.0, 1.0)"}


def recorded(case) -> np.ndarray:
    double = "double" in case["kind"]
    bits = np.array([int(v, 16) for v in case["values"]], np.uint64 if double else np.uint32)
    return bits if case["kind"] == "bits" else bits.view(np.float64 if double else np.float32)


def close_to_recorded(case, got: np.ndarray):
    """Integers and uniforms bit for bit; normals within float rounding (the GPU's sine and log differ)."""
    want = recorded(case)
    if "normal" in case["kind"]:
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 if got.dtype == np.float32 else 1e-12)
    else:
        np.testing.assert_array_equal(got, want)


@needs_curand
@pytest.mark.parametrize("case", RECORDED["cases"], ids=lambda c: f"{c['type']}-{c['kind']}-{c['n']}@{c['at']}")
def test_generators_give_curands_own_numbers(case):
    gen = rand.Generator(case["type"], seed=1234)
    kind = {"then_uniform": "uniform", "host_uniform": "uniform"}.get(case["kind"], case["kind"])
    if case["kind"] == "then_uniform":
        rand.generate(gen, "bits", case["n"])
    mean, stddev = (1.0, 2.0) if kind == "normal" else (0.0, 1.0)
    got = rand.generate(gen, kind, case["n"], mean, stddev)[case["at"]:case["at"] + len(case["values"])]
    close_to_recorded(dict(case, kind=kind), got)


CAPTURED_RAND = """
#include <cstdio>
#include <curand.h>
void show(const char *name, const float *d) {
    float h[4];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s %.9g %.9g %.9g %.9g\\n", name, h[0], h[1], h[2], h[3]);
}
int main() {
    curandGenerator_t g;
    cudaStream_t s;
    cudaGraph_t graph;
    cudaGraphExec_t e;
    float *x;
    cudaMalloc(&x, 8 * sizeof(float));
    cudaMemset(x, 0, 8 * sizeof(float));
    cudaStreamCreate(&s);
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
    curandSetStream(g, s);
    curandGenerateUniform(g, x, 8);                     // numbers 0-7
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    printf("status %d\\n", curandGenerateUniform(g, x, 8));       // numbers 8-15, when the graph runs
    cudaStreamEndCapture(s, &graph);
    show("captured", x);                                // nothing ran yet: still numbers 0-3
    cudaGraphInstantiate(&e, graph, 0);
    cudaGraphLaunch(e, s);
    cudaStreamSynchronize(s);
    show("first", x);
    curandGenerateUniform(g, x, 8);                     // the generator went on at the capture: 16-23
    show("after", x);
    cudaGraphLaunch(e, s);                              // the same threads' next numbers
    cudaStreamSynchronize(s);
    show("again", x);
}
"""


@needs_curand
def test_curand_captured_into_a_graph_writes_the_same_numbers_at_every_launch():
    """As an H200 printed: the node writes the numbers from the offset the generator had at the
    capture, the generator moves past them once, at the capture, and a second launch takes the
    same XORWOW threads' next numbers (their states live on in device memory)."""
    r = run_program_source(CAPTURED_RAND, timeout=60)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    numbers = rand.generate(rand.Generator(rand.DEFAULT, seed=1234), "uniform", 4096 + 12)
    assert got["status"][0] == 0
    np.testing.assert_array_equal(got["captured"].astype(np.float32), numbers[0:4])
    np.testing.assert_array_equal(got["first"].astype(np.float32), numbers[8:12])
    np.testing.assert_array_equal(got["after"].astype(np.float32), numbers[16:20])
    np.testing.assert_array_equal(got["again"].astype(np.float32), numbers[4096 + 8:4096 + 12])


@needs_curand
def test_a_program_gets_curands_numbers_on_device_and_host_generators():
    cases = [c for c in RECORDED["cases"] if c["kind"] in CALLS and c["n"] == 70000]
    body = "".join(f"""
    curandCreateGenerator{'Host' if i % 2 else ''}(&g, (curandRngType_t){c['type']});
    curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
    out = {'host' if i % 2 else 'dev'};
    {CALLS[c['kind']]};
    cudaMemcpy(host, out, n * 8, cudaMemcpyDefault);
    printf("case{i}");
    for (int j = {c['at']}; j < {c['at'] + len(c['values'])}; j++)
        printf(" %.17g", {'((double *)host)[j]' if 'double' in c['kind'] else '(double)((float *)host)[j]' if c['kind'] != 'bits' else '(double)((unsigned *)host)[j]'});
    printf("\\n");
    curandDestroyGenerator(g);""" for i, c in enumerate(cases))
    r = run_program_source("""
#include <cstdio>
#include <curand.h>
int main() {
    const size_t n = 70000;
    curandGenerator_t g;
    void *dev, *out, *host = malloc(n * 8);
    cudaMalloc(&dev, n * 8);
    """ + body + """
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    printf("odd %d\\n", curandGenerateNormal(g, (float *)dev, 7, 0, 1));
    curandDestroyGenerator(g);
    printf("destroyed %d\\n", curandGenerateNormal(g, (float *)dev, 8, 0, 1));
}""", timeout=120)
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    for i, c in enumerate(cases):
        close_to_recorded(c, got[f"case{i}"].astype(recorded(c).dtype))
    assert got["odd"][0] == RECORDED["status"]["normal_odd"] == 105       # CURAND_STATUS_LENGTH_NOT_MULTIPLE
    assert got["destroyed"][0] == 101                                      # CURAND_STATUS_NOT_INITIALIZED
    assert "n = 7 is odd" in r.stderr


# ------------------------------------------------------------------------------------------- cuFFT
needs_cufft = pytest.mark.skipif(not (cuda_home() / "include" / "cufft.h").exists(),
                                 reason="cuFFT's headers come with the nvidia-cufft wheel (cudalab[cufft])")


@needs_cufft
def test_fft_plans_match_numpy_fft():
    r = run_program_source("""
#include <cstdio>
#include <cufft.h>
template <typename T> void show(const char *name, const T *d, int n) {
    T h[64];
    cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost);
    printf("%s", name);
    for (int i = 0; i < n * (int)(sizeof(T) / 4); i++) printf(" %.9g", ((float *)h)[i]);
    printf("\\n");
}
int main() {
    cufftComplex h[32];
    for (int i = 0; i < 32; i++) h[i].x = i % 5, h[i].y = i % 3 - 1;
    cufftComplex *c, *c2;
    cudaMalloc(&c, sizeof h); cudaMalloc(&c2, sizeof h);
    cudaMemcpy(c, h, sizeof h, cudaMemcpyHostToDevice);
    cufftHandle p;
    cufftPlan1d(&p, 8, CUFFT_C2C, 2);                     // two transforms of 8, in place
    cufftExecC2C(p, c, c, CUFFT_FORWARD);
    show("c2c", c, 16);
    cufftExecC2C(p, c, c, CUFFT_INVERSE);                 // unnormalized: 8 times the input
    show("roundtrip", c, 16);
    int n[1] = {4}, embed[1] = {8};
    cufftHandle q;                                        // every other element, batches 16 apart
    cufftPlanMany(&q, 1, n, embed, 2, 16, embed, 1, 4, CUFFT_C2C, 2);
    cufftExecC2C(q, c, c2, CUFFT_FORWARD);
    show("strided", c2, 8);
    float r[16];
    for (int i = 0; i < 16; i++) r[i] = (i * 7) % 5;
    float *dr;
    cudaMalloc(&dr, sizeof r);
    cudaMemcpy(dr, r, sizeof r, cudaMemcpyHostToDevice);
    cufftHandle s;
    cufftPlan2d(&s, 4, 4, CUFFT_R2C);                      // 4 x 4 real -> 4 x 3 complex
    cufftExecR2C(s, dr, c2);
    show("r2c", c2, 12);
    cufftHandle t;
    cufftPlan2d(&t, 4, 4, CUFFT_C2R);
    cufftExecC2R(t, c2, dr);
    show("c2r", dr, 16);
    printf("wrong %d\\n", cufftExecC2C(s, c, c, CUFFT_FORWARD));
    cudaStream_t st;                                      // a transform captured into a graph
    cudaGraph_t g;
    cudaGraphExec_t e;
    cudaStreamCreate(&st);
    cufftSetStream(p, st);
    cudaMemcpy(c, h, sizeof h, cudaMemcpyHostToDevice);
    cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal);
    cufftExecC2C(p, c, c2, CUFFT_FORWARD);
    cudaStreamEndCapture(st, &g);
    cudaMemset(c2, 0, sizeof h);
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, st);
    cudaStreamSynchronize(st);
    show("graph", c2, 16);
}""", timeout=120)
    assert r.returncode == 0, r.stderr
    got = {k: v[0::2] + 1j * v[1::2] if k not in ("c2r", "wrong") else v for k, v in shown(r.stdout).items()}
    i = np.arange(32)
    x = (i % 5) + 1j * (i % 3 - 1)
    spectrum = np.fft.fft(x[:16].reshape(2, 8)).ravel()
    np.testing.assert_allclose(got["c2c"], spectrum, atol=1e-4)
    np.testing.assert_allclose(got["roundtrip"], 8 * x[:16], atol=1e-4)
    c = np.concatenate([8 * x[:16], x[16:]])              # c holds the round trip, then the untouched input
    np.testing.assert_allclose(got["strided"], np.fft.fft(np.stack([c[0:8:2], c[16:24:2]])).ravel(), atol=1e-3)
    real = ((np.arange(16) * 7) % 5).reshape(4, 4)
    np.testing.assert_allclose(got["r2c"], np.fft.rfft2(real).ravel(), atol=1e-4)
    np.testing.assert_allclose(got["c2r"], 16 * real.ravel(), atol=1e-3)
    assert got["wrong"][0] == 4 and "the plan was made for R2C transforms" in r.stderr    # CUFFT_INVALID_VALUE
    np.testing.assert_allclose(got["graph"], spectrum, atol=1e-4)


def test_batched_lu_factorization_pivots_as_lapack_does():
    """cublasDgetrfBatched (simpleCUBLAS_LU): P A = L U for each matrix, P as LAPACK's 1-based row swaps;
    a singular matrix says where in info."""
    r = run_program_source(r"""
#include <cstdio>
#include <cublas_v2.h>
int main() {
    // column-major: the first matrix is [[1 2 3] [4 5 6] [7 8 10]], the second all zeros
    double h[18] = {1, 4, 7, 2, 5, 8, 3, 6, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    double *a, *ptrs[2];
    int *pivots, *info, hp[6], hi[2];
    cudaMalloc(&a, sizeof h); cudaMalloc(&pivots, sizeof hp); cudaMalloc(&info, sizeof hi);
    cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
    ptrs[0] = a; ptrs[1] = a + 9;
    double **d_ptrs;
    cudaMalloc(&d_ptrs, sizeof ptrs);
    cudaMemcpy(d_ptrs, ptrs, sizeof ptrs, cudaMemcpyHostToDevice);
    cublasHandle_t handle;
    cublasCreate(&handle);
    printf("status %d\n", (int)cublasDgetrfBatched(handle, 3, d_ptrs, 3, pivots, info, 2));
    cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(hp, pivots, sizeof hp, cudaMemcpyDeviceToHost);
    cudaMemcpy(hi, info, sizeof hi, cudaMemcpyDeviceToHost);
    printf("pivots %d %d %d info %d %d\n", hp[0], hp[1], hp[2], hi[0], hi[1]);
    printf("lu");
    for (int i = 0; i < 9; i++) printf(" %.17g", h[i]);
    printf("\n");
}""", filename="getrf.cu", timeout=120)
    assert r.returncode == 0, r.stderr
    status, pivots, lu = r.stdout.splitlines()
    assert status == "status 0" and pivots == "pivots 3 3 3 info 0 1"
    packed = np.array([float(v) for v in lu.split()[1:]]).reshape(3, 3).T        # column-major
    lower, upper = np.tril(packed, -1) + np.eye(3), np.triu(packed)
    a = np.array([[1, 2, 3], [4, 5, 6], [7, 8, 10]], float)
    for j, p in enumerate([3, 3, 3]):                                              # P A: the swaps in order
        a[[j, p - 1]] = a[[p - 1, j]]
    np.testing.assert_allclose(lower @ upper, a, atol=1e-12)


@needs_cufft
def test_an_xt_plan_of_one_gpu_names_its_types_as_cuda_data_types():
    """simpleCUFFT's second plan: cufftXtMakePlanMany with CUDA_C_32F in and out is a C2C plan; a
    half-precision plan is refused with CUFFT_NOT_SUPPORTED and a message naming what is missing."""
    r = run_program_source("""
#include <cstdio>
#include <cufftXt.h>
int main() {
    cufftComplex h[8], *c;
    for (int i = 0; i < 8; i++) h[i].x = i, h[i].y = 0;
    cudaMalloc(&c, sizeof h);
    cudaMemcpy(c, h, sizeof h, cudaMemcpyHostToDevice);
    cufftHandle p, half;
    long long n = 8;
    size_t work = 1;
    cufftCreate(&p);
    int made = cufftXtMakePlanMany(p, 1, &n, NULL, 1, 1, CUDA_C_32F, NULL, 1, 1, CUDA_C_32F, 1, &work, CUDA_C_32F);
    cufftExecC2C(p, c, c, CUFFT_FORWARD);
    cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost);
    printf("made %d work %zu: %g %g %g\\n", made, work, h[0].x, h[1].x, h[1].y);
    cufftCreate(&half);
    printf("half %d\\n", cufftXtMakePlanMany(half, 1, &n, NULL, 1, 1, CUDA_C_16F, NULL, 1, 1, CUDA_C_16F, 1, &work,
                                              CUDA_C_16F));
}""", timeout=120)
    assert r.returncode == 0, r.stderr
    spectrum = np.fft.fft(np.arange(8))
    made, half = r.stdout.splitlines()
    assert made.startswith("made 0 work 0: ")
    np.testing.assert_allclose([float(v) for v in made.split(": ")[1].split()],
                               [spectrum[0].real, spectrum[1].real, spectrum[1].imag], atol=1e-4)
    assert half == "half 16" and "not half or bfloat16 ones" in r.stderr        # CUFFT_NOT_SUPPORTED


def test_a_library_call_is_one_row_on_its_streams_timeline_after_the_work_before_it():
    """The runtime core directly (no program): a copy, then cublasSaxpy on the same stream."""
    from cudalab.emulator.memory import DeviceMemory
    from cudalab.runtime.core import Context
    from cudalab.runtime.libraries import blas
    ctx = Context(DeviceMemory())
    s = ctx.stream_create(0, 0)
    x, y = ctx.malloc(4 * 1000, "device"), ctx.malloc(4 * 1000, "device")
    ctx.memory.arena.write(x, np.arange(1000, dtype=np.float32))
    ctx.memory.arena.write(y, np.ones(1000, np.float32))
    ctx.transfer(4000, "H2D", s, pinned=True, sync=False)
    blas.run(ctx, "cublasSaxpy_v2", s.handle, {"n": 1000, "alpha": ("host", np.float32(3).tobytes()), "x": x,
                                               "incx": 1, "y": y, "incy": 1}, device_scalars=False)
    np.testing.assert_array_equal(ctx.memory.arena.read(y, 4000).view(np.float32), 1 + 3 * np.arange(1000))
    copy, call = ctx.timeline.rows()[-2:]
    assert call["name"] == "cublasSaxpy" and call["stream"] == s.handle == copy["stream"]
    assert call["start"] >= copy["end"] and call["end"] > call["start"]


@needs_curand
@pytest.mark.parametrize("rng_type", [rand.DEFAULT, rand.PHILOX])
@pytest.mark.parametrize("kind", ["uniform", "normal", "uniform_double", "normal_double"])
def test_numbers_made_in_pieces_are_the_numbers_made_at_once(rng_type, kind):
    """A large request is made a piece at a time (rand.CHUNK), and consecutive calls continue the stream."""
    whole = rand.generate(rand.Generator(rng_type, seed=5), kind, 9000)
    gen = rand.Generator(rng_type, seed=5)
    np.testing.assert_array_equal(np.concatenate([rand.generate(gen, kind, 1000) for _ in range(9)]), whole)


@needs_cublas
@needs_curand
def test_each_library_reports_the_version_of_its_header():
    r = run_program_source("""
#include <cstdio>
#include <cublas_v2.h>
#include <curand.h>
#include <cufft.h>
int main() {
    int v[3], bad = 7;
    for (int k = 0; k < 3; k++) cublasGetProperty((libraryPropertyType)k, &v[k]);
    printf("cublas %d %d %d %d\\n", v[0], v[1], v[2], cublasGetProperty((libraryPropertyType)9, &bad));
    for (int k = 0; k < 3; k++) curandGetProperty((libraryPropertyType)k, &v[k]);
    printf("curand %d %d %d %d\\n", v[0], v[1], v[2], curandGetProperty(MAJOR_VERSION, NULL));
    for (int k = 0; k < 3; k++) cufftGetProperty((libraryPropertyType)k, &v[k]);
    printf("cufft %d %d %d %d\\n", v[0], v[1], v[2], cufftGetProperty((libraryPropertyType)9, &bad));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    include = (cuda_home() / "include")

    def version(header, prefix):
        text = (include / header).read_text()
        return [re.search(rf"#define {prefix}_VER_{part}\s+(\d+)", text).group(1) for part in ("MAJOR", "MINOR", "PATCH")]

    lines = {line.split()[0]: line.split()[1:] for line in r.stdout.splitlines()}
    # the version macros, then the status for a wrong property (or no place to write it)
    assert lines["cublas"] == version("cublas_api.h", "CUBLAS") + ["7"]        # CUBLAS_STATUS_INVALID_VALUE
    assert lines["curand"] == version("curand.h", "CURAND") + ["104"]          # CURAND_STATUS_OUT_OF_RANGE
    assert lines["cufft"] == version("cufft.h", "CUFFT") + ["3"]               # CUFFT_INVALID_TYPE


@needs_curand
@needs_cufft
def test_a_library_function_cudalab_lacks_says_so_once_and_returns_the_librarys_code():
    r = run_program_source("""
#include <cstdio>
#include <curand.h>
#include <cufft.h>
int main() {
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    unsigned long long *d;
    cudaMalloc(&d, 8 * sizeof *d);
    for (int k = 0; k < 2; k++) printf("%d\\n", curandGenerateLongLong(g, d, 8));
    size_t work;
    printf("%d\\n", cufftEstimate3d(4, 4, 4, CUFFT_C2C, &work));
}
""", timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["103", "103", "16"]          # CURAND_STATUS_TYPE_ERROR, CUFFT_NOT_SUPPORTED
    assert r.stderr.count("curandGenerateLongLong is not part of cudalab's cuRAND") == 1
    assert "cufftEstimate3d is not part of cudalab's cuFFT" in r.stderr
    assert "cudalab run --device gpu" in r.stderr


@pytest.mark.parametrize("gpu, half_speedup, double_slowdown", [("A100", 16, 1), ("RTX 3090", 2, 64), ("T4", 8, 32)])
def test_a_half_precision_product_is_timed_at_the_tensor_cores_rate(gpu, half_speedup, double_slowdown):
    """A course benchmark times cublasHgemm against cublasSgemm (cuda-course's cuBLASLt compare printed
    one time for FP32 and FP16): the timeline counts a half product at the GPU's FP16 tensor rate and a
    double one at its FP64 rate, each a multiple of its FP32 lanes' peak, from the data sheet."""
    from cudalab.device import profiles
    from cudalab.emulator.memory import DeviceMemory
    from cudalab.runtime.core import Context
    from cudalab.runtime.libraries import blas
    from cudalab.device.timing import LAUNCH_OVERHEAD_US
    ctx = Context(DeviceMemory(), profile=profiles.get(gpu))
    n = 2048                    # large enough that the arithmetic, not the bytes, sets each product's time
    times = {}
    for letter, dtype in (("S", np.float32), ("H", np.float16), ("D", np.float64)):
        a, b, c = (ctx.malloc(n * n * np.dtype(dtype).itemsize, "device") for _ in range(3))
        ctx.memory.arena.write(a, np.ones(n * n, dtype))
        ctx.memory.arena.write(b, np.full(n * n, 2, dtype))
        one, zero = np.array(1, dtype).tobytes(), np.array(0, dtype).tobytes()
        blas.run(ctx, f"cublas{letter}gemm_v2", 0, {"transa": 0, "transb": 0, "m": n, "n": n, "k": n,
                                                      "alpha": ("host", one), "A": a, "lda": n, "B": b, "ldb": n,
                                                      "beta": ("host", zero), "C": c, "ldc": n}, device_scalars=False)
        assert ctx.memory.arena.read(c, np.dtype(dtype).itemsize).view(dtype)[0] == 2 * n
        row = ctx.timeline.rows()[-1]
        assert row["name"] == f"cublas{letter}gemm"
        times[letter] = row["end"] - row["start"] - LAUNCH_OVERHEAD_US
    assert times["S"] / times["H"] == pytest.approx(half_speedup, rel=0.05)
    assert times["D"] / times["S"] == pytest.approx(double_slowdown, rel=0.05)
