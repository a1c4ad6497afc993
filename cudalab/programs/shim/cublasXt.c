/* cudalab's cuBLASXt (cublasXt.h): its handle, device selection, block size and pinning mode, and
 * gemm in the four types.
 *
 * cuBLASXt spreads a product of matrices in host memory over the selected GPUs, tile by tile. The
 * emulator has one GPU, so a cuBLASXt gemm is one cuBLAS gemm: the operands are copied to device
 * memory (cublasSetMatrix), the v2 routine runs (runtime/libraries/blas.py computes it, a row on the
 * timeline) and C is copied back. The block size and pinning mode are kept and answered, not used.
 * Its other routines (syrk, trsm, ...) are not provided: a program using them stops at link time
 * with a line naming cuBLASXt (programs/build.py).
 *
 * Included by cudart.c after cublas.c.
 */
/* cublasXt.h includes cublas_v2.h, whose macros (cublasSgemm -> cublasSgemm_v2) would rename the legacy
 * API's functions below and whose #error refuses cublas.h: its guard keeps it out (cublas.c has
 * included cublas_api.h, all that cublasXt.h needs) */
#define CUBLAS_V2_H_
#include <cublasXt.h>
#undef CUBLAS_V2_H_

struct cublasXtContext {
    cublasHandle_t blas;
    int block_dim;
    cublasXtPinnedMemMode_t pinning;
};

cublasStatus_t cublasXtCreate(cublasXtHandle_t *handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasXtContext *h = calloc(1, sizeof *h);
    if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
    cublasStatus_t s = cublasCreate_v2(&h->blas);
    if (s != CUBLAS_STATUS_SUCCESS) {
        free(h);
        return s;
    }
    h->block_dim = 1024;                    /* cuBLASXt's default tile */
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtDestroy(cublasXtHandle_t handle) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    cublasDestroy_v2(handle->blas);
    free(handle);
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtMaxBoards(int *nbGpuBoards) {
    if (!nbGpuBoards) return CUBLAS_STATUS_INVALID_VALUE;
    *nbGpuBoards = 1;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtGetNumBoards(int nbDevices, int deviceId[], int *nbBoards) {
    if (!nbBoards || nbDevices < 0) return CUBLAS_STATUS_INVALID_VALUE;
    *nbBoards = nbDevices > 0;
    return CUBLAS_STATUS_SUCCESS;
}

/* the one emulated GPU is device 0; naming another is as on a machine without it */
cublasStatus_t cublasXtDeviceSelect(cublasXtHandle_t handle, int nbDevices, int deviceId[]) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (nbDevices != 1 || !deviceId || deviceId[0] != 0) {
        say_once("cudalab: cublasXtDeviceSelect: the emulated machine has one GPU, device 0; select {0}.\n");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtSetBlockDim(cublasXtHandle_t handle, int blockDim) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (blockDim <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    handle->block_dim = blockDim;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtGetBlockDim(cublasXtHandle_t handle, int *blockDim) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!blockDim) return CUBLAS_STATUS_INVALID_VALUE;
    *blockDim = handle->block_dim;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtGetPinningMemMode(cublasXtHandle_t handle, cublasXtPinnedMemMode_t *mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!mode) return CUBLAS_STATUS_INVALID_VALUE;
    *mode = handle->pinning;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasXtSetPinningMemMode(cublasXtHandle_t handle, cublasXtPinnedMemMode_t mode) {
    if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
    handle->pinning = mode;
    return CUBLAS_STATUS_SUCCESS;
}

/* a rows x cols operand (leading dimension ld) into fresh device memory, or back out of it */
static cublasStatus_t xt_upload(const void *host, size_t elem, size_t rows, size_t cols, size_t ld, void **dev) {
    if (cudaMalloc(dev, rows * cols * elem) != cudaSuccess) return CUBLAS_STATUS_ALLOC_FAILED;
    return cublasSetMatrix((int)rows, (int)cols, (int)elem, host, (int)ld, *dev, (int)rows);
}

/* C = alpha op(A) op(B) + beta C for host (or device) matrices: one gemm on the emulated GPU */
#define XT_GEMM(name, T, gemm)                                                                                  \
    cublasStatus_t name(cublasXtHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, size_t m,  \
                        size_t n, size_t k, const T *alpha, const T *A, size_t lda, const T *B, size_t ldb,       \
                        const T *beta, T *C, size_t ldc) {                                                      \
        if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;                                                      \
        size_t ar = transa == CUBLAS_OP_N ? m : k, ac = transa == CUBLAS_OP_N ? k : m;                          \
        size_t br = transb == CUBLAS_OP_N ? k : n, bc = transb == CUBLAS_OP_N ? n : k;                          \
        if (lda < (ar ? ar : 1) || ldb < (br ? br : 1) || ldc < (m ? m : 1) || !alpha || !beta)                 \
            return CUBLAS_STATUS_INVALID_VALUE;                                                                 \
        if (!m || !n) return CUBLAS_STATUS_SUCCESS;                                                             \
        void *dA = NULL, *dB = NULL, *dC = NULL;                                                                \
        cublasStatus_t s = xt_upload(A, sizeof(T), ar, ac, lda, &dA);                                           \
        if (s == CUBLAS_STATUS_SUCCESS) s = xt_upload(B, sizeof(T), br, bc, ldb, &dB);                          \
        if (s == CUBLAS_STATUS_SUCCESS) s = xt_upload(C, sizeof(T), m, n, ldc, &dC);                            \
        if (s == CUBLAS_STATUS_SUCCESS)                                                                         \
            s = gemm(handle->blas, transa, transb, (int)m, (int)n, (int)k, alpha, dA, (int)(ar ? ar : 1), dB,   \
                     (int)(br ? br : 1), beta, dC, (int)m);                                                     \
        if (s == CUBLAS_STATUS_SUCCESS) s = cublasGetMatrix((int)m, (int)n, sizeof(T), dC, (int)m, C, (int)ldc); \
        cudaFree(dA);                                                                                           \
        cudaFree(dB);                                                                                           \
        cudaFree(dC);                                                                                           \
        return s;                                                                                               \
    }

XT_GEMM(cublasXtSgemm, float, cublasSgemm_v2)
XT_GEMM(cublasXtDgemm, double, cublasDgemm_v2)
XT_GEMM(cublasXtCgemm, cuComplex, cublasCgemm_v2)
XT_GEMM(cublasXtZgemm, cuDoubleComplex, cublasZgemm_v2)
