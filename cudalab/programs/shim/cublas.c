/* cudalab's libcublas: cuBLAS's v2 API for a whole program, computed by the emulator.
 *
 * The handle lives here (its stream, pointer mode and math mode); each routine is one request
 * (libraries.c's) whose values are its C arguments by their names in cublas_api.h, and the
 * emulator does the arithmetic on the device memory it holds (cudalab/runtime/libraries/blas.py).
 * The routines' wrappers are generated from the header by cudalab/programs/libgen.py (cublas.inc), with a CUBLAS_STATUS_NOT_SUPPORTED fallback for every
 * routine cudalab lacks. cublasSetVector/GetVector/SetMatrix/GetMatrix are strided copies, done
 * with cudaMemcpy2D as cuBLAS does (a failed copy is CUBLAS_STATUS_MAPPING_ERROR).
 *
 * Included by cudart.c (through the generated libraries.inc) when the nvidia-cublas wheel's
 * headers are installed.
 */
#include <cublas_api.h>

#define HANDLE_MAGIC 0x63626c73u   /* "cbls": a live handle (a destroyed one is cleared) */

struct cublasContext {
    unsigned magic;
    cudaStream_t stream;
    cublasPointerMode_t pointer_mode;
    cublasMath_t math_mode;
    cublasAtomicsMode_t atomics_mode;
};

static int live(cublasHandle_t h) { return h && h->magic == HANDLE_MAGIC; }

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
    if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
    struct cublasContext *h = calloc(1, sizeof *h);
    if (!h) return CUBLAS_STATUS_ALLOC_FAILED;
    h->magic = HANDLE_MAGIC;
    *handle = h;
    return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
    if (!live(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->magic = 0;          /* kept, not freed: a later call with it answers NOT_INITIALIZED */
    return CUBLAS_STATUS_SUCCESS;
}

#define HANDLE_FIELD(set, get, type, field)                                          \
    cublasStatus_t set(cublasHandle_t h, type v) {                                   \
        if (!live(h)) return CUBLAS_STATUS_NOT_INITIALIZED;                           \
        h->field = v;                                                                \
        return CUBLAS_STATUS_SUCCESS;                                                \
    }                                                                                \
    cublasStatus_t get(cublasHandle_t h, type *v) {                                  \
        if (!live(h)) return CUBLAS_STATUS_NOT_INITIALIZED;                           \
        if (!v) return CUBLAS_STATUS_INVALID_VALUE;                                   \
        *v = h->field;                                                               \
        return CUBLAS_STATUS_SUCCESS;                                                \
    }
HANDLE_FIELD(cublasSetStream_v2, cublasGetStream_v2, cudaStream_t, stream)
HANDLE_FIELD(cublasSetPointerMode_v2, cublasGetPointerMode_v2, cublasPointerMode_t, pointer_mode)
HANDLE_FIELD(cublasSetMathMode, cublasGetMathMode, cublasMath_t, math_mode)
HANDLE_FIELD(cublasSetAtomicsMode, cublasGetAtomicsMode, cublasAtomicsMode_t, atomics_mode)

cublasStatus_t cublasGetVersion_v2(cublasHandle_t h, int *version) {
    if (!live(h)) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!version) return CUBLAS_STATUS_INVALID_VALUE;
    *version = CUBLAS_VERSION;
    return CUBLAS_STATUS_SUCCESS;
}

LIBRARY_PROPERTY(cublasGetProperty, cublasStatus_t, CUBLAS, CUBLAS_STATUS_SUCCESS, CUBLAS_STATUS_INVALID_VALUE, CUBLAS_STATUS_INVALID_VALUE)

size_t cublasGetCudartVersion(void) { return CUDART_VERSION; }

/* the workspace is cuBLAS's scratch memory for its kernels: the emulator's routines need none */
cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t h, void *workspace, size_t bytes) {
    (void)workspace, (void)bytes;
    return live(h) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasLoggerConfigure(int on, int out, int err, const char *file) {
    (void)on, (void)out, (void)err, (void)file;
    return CUBLAS_STATUS_SUCCESS;
}

const char *cublasGetStatusName(cublasStatus_t s) {
    switch (s) {
#define NAME(x) case x: return #x;
    NAME(CUBLAS_STATUS_SUCCESS) NAME(CUBLAS_STATUS_NOT_INITIALIZED) NAME(CUBLAS_STATUS_ALLOC_FAILED)
    NAME(CUBLAS_STATUS_INVALID_VALUE) NAME(CUBLAS_STATUS_ARCH_MISMATCH) NAME(CUBLAS_STATUS_MAPPING_ERROR)
    NAME(CUBLAS_STATUS_EXECUTION_FAILED) NAME(CUBLAS_STATUS_INTERNAL_ERROR) NAME(CUBLAS_STATUS_NOT_SUPPORTED)
    NAME(CUBLAS_STATUS_LICENSE_ERROR)
#undef NAME
    }
    return "CUBLAS_STATUS_UNKNOWN";
}

/* cuBLAS's own wording (cublasGetStatusString of CUDA 13) */
const char *cublasGetStatusString(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return "success";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "the library was not initialized";
    case CUBLAS_STATUS_ALLOC_FAILED: return "the resource allocation failed";
    case CUBLAS_STATUS_INVALID_VALUE: return "an unsupported value or parameter was passed to the function";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "the function requires a feature absent from the device architecture";
    case CUBLAS_STATUS_MAPPING_ERROR: return "an access to GPU memory space failed";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "the GPU program failed to execute";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "an internal operation failed";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the requested functionality is not supported";
    case CUBLAS_STATUS_LICENSE_ERROR: return "an error was detected when checking the current licensing";
    }
    return "unknown error";
}

/* ------------------------------------------------------------------ strided host <-> device copies */
static cublasStatus_t strided_copy(long long n, long long size, const void *src, long long incs, void *dst,
                                   long long incd, int kind, cudaStream_t s, int sync) {
    if (n < 0 || size <= 0 || incs <= 0 || incd <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    cudaError_t e = sync ? cudaMemcpy2D(dst, incd * size, src, incs * size, size, n, kind)
                         : cudaMemcpy2DAsync(dst, incd * size, src, incs * size, size, n, kind, s);
    return e ? CUBLAS_STATUS_MAPPING_ERROR : CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t matrix_copy(long long rows, long long cols, long long size, const void *src, long long lds,
                                  void *dst, long long ldd, int kind, cudaStream_t s, int sync) {
    if (rows < 0 || cols < 0 || size <= 0 || lds <= 0 || ldd <= 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (!rows || !cols) return CUBLAS_STATUS_SUCCESS;
    cudaError_t e = sync ? cudaMemcpy2D(dst, ldd * size, src, lds * size, rows * size, cols, kind)
                         : cudaMemcpy2DAsync(dst, ldd * size, src, lds * size, rows * size, cols, kind, s);
    return e ? CUBLAS_STATUS_MAPPING_ERROR : CUBLAS_STATUS_SUCCESS;
}

/* every name spelled out, so that shimgen sees which functions this file defines */
#define COPIES(T, setv, getv, setva, getva, setm, getm, setma, getma)                                          \
    cublasStatus_t setv(T n, T size, const void *x, T incx, void *y, T incy)                                  \
    { return strided_copy(n, size, x, incx, y, incy, cudaMemcpyHostToDevice, 0, 1); }                         \
    cublasStatus_t getv(T n, T size, const void *x, T incx, void *y, T incy)                                  \
    { return strided_copy(n, size, x, incx, y, incy, cudaMemcpyDeviceToHost, 0, 1); }                         \
    cublasStatus_t setva(T n, T size, const void *x, T incx, void *y, T incy, cudaStream_t s)                 \
    { return strided_copy(n, size, x, incx, y, incy, cudaMemcpyHostToDevice, s, 0); }                         \
    cublasStatus_t getva(T n, T size, const void *x, T incx, void *y, T incy, cudaStream_t s)                 \
    { return strided_copy(n, size, x, incx, y, incy, cudaMemcpyDeviceToHost, s, 0); }                         \
    cublasStatus_t setm(T rows, T cols, T size, const void *a, T lda, void *b, T ldb)                         \
    { return matrix_copy(rows, cols, size, a, lda, b, ldb, cudaMemcpyHostToDevice, 0, 1); }                   \
    cublasStatus_t getm(T rows, T cols, T size, const void *a, T lda, void *b, T ldb)                         \
    { return matrix_copy(rows, cols, size, a, lda, b, ldb, cudaMemcpyDeviceToHost, 0, 1); }                   \
    cublasStatus_t setma(T rows, T cols, T size, const void *a, T lda, void *b, T ldb, cudaStream_t s)        \
    { return matrix_copy(rows, cols, size, a, lda, b, ldb, cudaMemcpyHostToDevice, s, 0); }                   \
    cublasStatus_t getma(T rows, T cols, T size, const void *a, T lda, void *b, T ldb, cudaStream_t s)        \
    { return matrix_copy(rows, cols, size, a, lda, b, ldb, cudaMemcpyDeviceToHost, s, 0); }
COPIES(int, cublasSetVector, cublasGetVector, cublasSetVectorAsync, cublasGetVectorAsync, cublasSetMatrix,
       cublasGetMatrix, cublasSetMatrixAsync, cublasGetMatrixAsync)
COPIES(int64_t, cublasSetVector_64, cublasGetVector_64, cublasSetVectorAsync_64, cublasGetVectorAsync_64,
       cublasSetMatrix_64, cublasGetMatrix_64, cublasSetMatrixAsync_64, cublasGetMatrixAsync_64)

/* ------------------------------------------------------------------ routines: one request each */
/* libraries.c's request, begun with the handle's stream and pointer mode (0 for a dead handle), and its
 * math mode (CUBLAS_TF32_TENSOR_OP_MATH rounds a gemm's float32 inputs to TF32: libraries/precision.py) */
static int blas_begin(struct request *q, cublasHandle_t h, const char *name) {
    if (!live(h)) return 0;
    request_begin(q, "blas", name, h->stream, h->pointer_mode == CUBLAS_POINTER_MODE_DEVICE);
    request_int(q, "mathMode", h->math_mode);
    request_tf32_override(q);
    return 1;
}

/* alpha and beta of the *Ex routines have the compute type's precision (complex with a complex C) */
static size_t ex_scalar_size(cublasComputeType_t compute, cudaDataType c) {
    size_t real = compute <= CUBLAS_COMPUTE_16F_PEDANTIC ? 2
                  : compute == CUBLAS_COMPUTE_64F || compute == CUBLAS_COMPUTE_64F_PEDANTIC ||
                    compute == CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT ? 8 : 4;
    return c == CUDA_C_32F || c == CUDA_C_64F || c == CUDA_C_16F ? 2 * real : real;
}

/* Send the request; a host result (dot, nrm2, asum, amax) comes back as bytes. */
static cublasStatus_t blas_call(struct request *q, cublasHandle_t h, void *result, size_t result_size) {
    cublasStatus_t status = (cublasStatus_t)request_send(q, h->stream, CUBLAS_STATUS_EXECUTION_FAILED);
    if (!status && result && h->pointer_mode == CUBLAS_POINTER_MODE_HOST && RBN >= result_size)
        memcpy(result, RB, result_size);
    return status;
}

static cublasStatus_t blas_not_supported(const char *name) {
    say_library_lacks(name, "is not one of the cuBLAS routines cudalab implements", "CUBLAS_STATUS_NOT_SUPPORTED");
    return CUBLAS_STATUS_NOT_SUPPORTED;
}

#include "cublas.inc"   /* generated from cublas_api.h: the routines' wrappers and the fallbacks */
