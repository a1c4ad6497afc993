// cuSPARSE's prune routines on a GPU: dense -> CSR and CSR -> CSR by a threshold and by a percentage, in
// half, float and double, with each status (tests/test_libraries_prune.py compares the emulator with
// what an H200 printed, tests/libraries/prune_h200.txt). Lines: "LABEL status N" for a call's status,
// "LABEL rows|cols|vals|nnz|bytes ..." for its output.
//     nvcc -o probe tools/prune_gpu_probe.cu -lcusparse && ./probe
//     for i in $(seq 0 30); do ./probe misuse S $i || [ $? != 3 ] || break; done    (a process a case)
#include <cstdio>
#include <cstdlib>
#include <cuda_fp16.h>
#include <cusparse.h>

// (a negative threshold is left out: an H200's cuSPARSE 12.6 then kept 32 "columns" a row, past n, whatever n is)
// A is 4 x 5, column-major with lda 6 (the two rows past m hold 99, which must never be read)
const int M = 4, N = 5, LDA = 6;
const float A_ROWS[M][N] = {{0, 1, -1, 2, 0.5f}, {-3, 0, 1.5f, -0.5f, 1}, {4, -2, 0, 0.25f, -1}, {1, 1, 0, -4, 2.5f}};
// a CSR matrix 4 x 5 (base 0) with an explicit zero stored, to be pruned again
const int C_ROWS[] = {0, 3, 5, 5, 8}, C_COLS[] = {0, 2, 4, 1, 3, 0, 2, 4};
const float C_VALS[] = {0.75f, 0, -2, 3, -0.75f, 1, -1, 6};
const int C_NNZ = 8;

template <typename T> float as_float(T v) { return (float)v; }
template <> float as_float<__half>(__half v) { return __half2float(v); }
template <typename T> T from_float(float v) { return (T)v; }
template <> __half from_float<__half>(float v) { return __float2half(v); }

template <typename T> struct Prune;
#define PRUNE(T, X)                                                                                                   \
    template <> struct Prune<T> {                                                                                     \
        static constexpr const char *name = #X;                                                                      \
        template <typename... A> static cusparseStatus_t dense_size(A... a) { return cusparse##X##pruneDense2csr_bufferSizeExt(a...); } \
        template <typename... A> static cusparseStatus_t dense_nnz(A... a) { return cusparse##X##pruneDense2csrNnz(a...); } \
        template <typename... A> static cusparseStatus_t dense(A... a) { return cusparse##X##pruneDense2csr(a...); } \
        template <typename... A> static cusparseStatus_t csr_size(A... a) { return cusparse##X##pruneCsr2csr_bufferSizeExt(a...); } \
        template <typename... A> static cusparseStatus_t csr_nnz(A... a) { return cusparse##X##pruneCsr2csrNnz(a...); } \
        template <typename... A> static cusparseStatus_t csr(A... a) { return cusparse##X##pruneCsr2csr(a...); }     \
        template <typename... A> static cusparseStatus_t pdense_size(A... a) { return cusparse##X##pruneDense2csrByPercentage_bufferSizeExt(a...); } \
        template <typename... A> static cusparseStatus_t pdense_nnz(A... a) { return cusparse##X##pruneDense2csrNnzByPercentage(a...); } \
        template <typename... A> static cusparseStatus_t pdense(A... a) { return cusparse##X##pruneDense2csrByPercentage(a...); } \
        template <typename... A> static cusparseStatus_t pcsr_size(A... a) { return cusparse##X##pruneCsr2csrByPercentage_bufferSizeExt(a...); } \
        template <typename... A> static cusparseStatus_t pcsr_nnz(A... a) { return cusparse##X##pruneCsr2csrNnzByPercentage(a...); } \
        template <typename... A> static cusparseStatus_t pcsr(A... a) { return cusparse##X##pruneCsr2csrByPercentage(a...); } \
    };
PRUNE(__half, H)
PRUNE(float, S)
PRUNE(double, D)

template <typename T> T *upload(const T *h, int n) {
    T *d;
    cudaMalloc(&d, (n ? n : 1) * sizeof(T));
    cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice);
    return d;
}

template <typename T> void show(const char *label, const int *drows, const int *dcols, const T *dvals, int nnz) {
    if (nnz > 64) nnz = 64;   // (never, for a right answer: 20 entries at most)
    int rows[M + 1], cols[64];
    T vals[64];
    cudaMemcpy(rows, drows, sizeof rows, cudaMemcpyDeviceToHost);
    cudaMemcpy(cols, dcols, nnz * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(vals, dvals, nnz * sizeof(T), cudaMemcpyDeviceToHost);
    printf("%s rows", label);
    for (int i = 0; i <= M; i++) printf(" %d", rows[i]);
    printf("\n%s cols", label);
    for (int i = 0; i < nnz; i++) printf(" %d", cols[i]);
    printf("\n%s vals", label);
    for (int i = 0; i < nnz; i++) printf(" %g", as_float(vals[i]));
    printf("\n");
}

struct Out {
    int *rows, *cols;
    void *vals;
};

template <typename T> struct Inputs {
    T *A, *cvals;
    int *crows, *ccols;
    Inputs() {
        T h[LDA * N];
        for (int j = 0; j < N; j++)
            for (int i = 0; i < LDA; i++) h[i + j * LDA] = from_float<T>(i < M ? A_ROWS[i][j] : 99.0f);
        A = upload(h, LDA * N);
        T v[C_NNZ];
        for (int i = 0; i < C_NNZ; i++) v[i] = from_float<T>(C_VALS[i]);
        cvals = upload(v, C_NNZ), crows = upload(C_ROWS, M + 1), ccols = upload(C_COLS, C_NNZ);
    }
};

#define STATUS(label, call) do { cusparseStatus_t st_ = call; printf("%s status %d\n", label, (int)st_); if (st_) return; } while (0)

// by threshold: the three steps, from the dense matrix or from the CSR one
template <typename T> void by_threshold(cusparseHandle_t h, Inputs<T> &in, bool from_csr, float threshold, int base,
                                        bool device_pointers) {
    char label[128];
    snprintf(label, sizeof label, "%s_%s_t%g_b%d%s", Prune<T>::name, from_csr ? "csr" : "dense", threshold, base,
             device_pointers ? "_dev" : "");
    cusparseMatDescr_t dA, dC;
    cusparseCreateMatDescr(&dA), cusparseCreateMatDescr(&dC);
    cusparseSetMatIndexBase(dC, base ? CUSPARSE_INDEX_BASE_ONE : CUSPARSE_INDEX_BASE_ZERO);
    T th = from_float<T>(threshold), *dth = upload(&th, 1);
    int *rows, *cols, nnz = -1, *dnnz;
    T *vals;
    cudaMalloc(&rows, (M + 1) * sizeof(int)), cudaMalloc(&dnnz, sizeof(int));
    cusparseSetPointerMode(h, device_pointers ? CUSPARSE_POINTER_MODE_DEVICE : CUSPARSE_POINTER_MODE_HOST);
    const T *tp = device_pointers ? dth : &th;
    int *np = device_pointers ? dnnz : &nnz;
    size_t size = 0;
    char step[160];
    snprintf(step, sizeof step, "%s_size", label);
    if (from_csr)
        STATUS(step, Prune<T>::csr_size(h, M, N, C_NNZ, dA, in.cvals, in.crows, in.ccols, tp, dC, (T *)nullptr, rows,
                                        (int *)nullptr, &size));
    else
        STATUS(step, Prune<T>::dense_size(h, M, N, in.A, LDA, tp, dC, (T *)nullptr, rows, (int *)nullptr, &size));
    printf("%s_size bytes %zu\n", label, size);
    void *buffer;
    cudaMalloc(&buffer, size ? size : 1);
    snprintf(step, sizeof step, "%s_nnz", label);
    if (from_csr)
        STATUS(step, Prune<T>::csr_nnz(h, M, N, C_NNZ, dA, in.cvals, in.crows, in.ccols, tp, dC, rows, np, buffer));
    else
        STATUS(step, Prune<T>::dense_nnz(h, M, N, in.A, LDA, tp, dC, rows, np, buffer));
    if (device_pointers) cudaMemcpy(&nnz, dnnz, sizeof(int), cudaMemcpyDeviceToHost);
    printf("%s nnz %d\n", label, nnz);
    cudaMalloc(&cols, (nnz ? nnz : 1) * sizeof(int)), cudaMalloc(&vals, (nnz ? nnz : 1) * sizeof(T));
    snprintf(step, sizeof step, "%s_fill", label);
    if (from_csr)
        STATUS(step, Prune<T>::csr(h, M, N, C_NNZ, dA, in.cvals, in.crows, in.ccols, tp, dC, vals, rows, cols, buffer));
    else
        STATUS(step, Prune<T>::dense(h, M, N, in.A, LDA, tp, dC, vals, rows, cols, buffer));
    cudaDeviceSynchronize();
    show(label, rows, cols, vals, nnz);
    cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST);
}

template <typename T> void by_percentage(cusparseHandle_t h, Inputs<T> &in, bool from_csr, float percentage, int base) {
    char label[128];
    snprintf(label, sizeof label, "%s_%s_p%g_b%d", Prune<T>::name, from_csr ? "csr" : "dense", percentage, base);
    cusparseMatDescr_t dA, dC;
    cusparseCreateMatDescr(&dA), cusparseCreateMatDescr(&dC);
    cusparseSetMatIndexBase(dC, base ? CUSPARSE_INDEX_BASE_ONE : CUSPARSE_INDEX_BASE_ZERO);
    pruneInfo_t info;
    cusparseCreatePruneInfo(&info);
    int *rows, *cols, nnz = -1;
    T *vals;
    cudaMalloc(&rows, (M + 1) * sizeof(int));
    size_t size = 0;
    char step[160];
    snprintf(step, sizeof step, "%s_size", label);
    if (from_csr)
        STATUS(step, Prune<T>::pcsr_size(h, M, N, C_NNZ, dA, in.cvals, in.crows, in.ccols, percentage, dC, (T *)nullptr,
                                         rows, (int *)nullptr, info, &size));
    else
        STATUS(step, Prune<T>::pdense_size(h, M, N, in.A, LDA, percentage, dC, (T *)nullptr, rows, (int *)nullptr, info,
                                           &size));
    printf("%s_size bytes %zu\n", label, size);
    void *buffer;
    cudaMalloc(&buffer, size ? size : 1);
    snprintf(step, sizeof step, "%s_nnz", label);
    if (from_csr)
        STATUS(step, Prune<T>::pcsr_nnz(h, M, N, C_NNZ, dA, in.cvals, in.crows, in.ccols, percentage, dC, rows, &nnz, info,
                                        buffer));
    else
        STATUS(step, Prune<T>::pdense_nnz(h, M, N, in.A, LDA, percentage, dC, rows, &nnz, info, buffer));
    printf("%s nnz %d\n", label, nnz);
    cudaMalloc(&cols, (nnz ? nnz : 1) * sizeof(int)), cudaMalloc(&vals, (nnz ? nnz : 1) * sizeof(T));
    snprintf(step, sizeof step, "%s_fill", label);
    if (from_csr)
        STATUS(step, Prune<T>::pcsr(h, M, N, C_NNZ, dA, in.cvals, in.crows, in.ccols, percentage, dC, vals, rows, cols,
                                    info, buffer));
    else
        STATUS(step, Prune<T>::pdense(h, M, N, in.A, LDA, percentage, dC, vals, rows, cols, info, buffer));
    cudaDeviceSynchronize();
    show(label, rows, cols, vals, nnz);
    cusparseDestroyPruneInfo(info);
}

// one misuse case a process (a NULL size pointer crashed an H200's cuSPARSE): false past the last case
template <typename T> bool misuse(cusparseHandle_t h, Inputs<T> &in, int which) {
    cusparseMatDescr_t d, sym;
    cusparseCreateMatDescr(&d), cusparseCreateMatDescr(&sym);
    cusparseSetMatType(sym, CUSPARSE_MATRIX_TYPE_SYMMETRIC);
    pruneInfo_t info;
    cusparseCreatePruneInfo(&info);
    T th = from_float<T>(1);
    int *rows, nnz;
    cudaMalloc(&rows, (M + 1) * sizeof(int));
    size_t size;
    void *buffer;
    cudaMalloc(&buffer, 1 << 16);
    const char *X = Prune<T>::name;
#define MIS(what, call) printf("%s_misuse_%s status %d\n", X, what, (int)(call))
    if (which == 0) MIS("size_m_negative", Prune<T>::dense_size(h, -1, N, in.A, LDA, &th, d, (T *)nullptr, rows, (int *)nullptr, &size));
    if (which == 1) MIS("size_lda_small", Prune<T>::dense_size(h, M, N, in.A, M - 1, &th, d, (T *)nullptr, rows, (int *)nullptr, &size));
    if (which == 2) MIS("size_null_size", Prune<T>::dense_size(h, M, N, in.A, LDA, &th, d, (T *)nullptr, rows, (int *)nullptr, (size_t *)nullptr));
    if (which == 3) MIS("size_null_descr", Prune<T>::dense_size(h, M, N, in.A, LDA, &th, (cusparseMatDescr_t) nullptr, (T *)nullptr, rows, (int *)nullptr, &size));
    if (which == 4) MIS("nnz_m_negative", Prune<T>::dense_nnz(h, -1, N, in.A, LDA, &th, d, rows, &nnz, buffer));
    if (which == 5) MIS("nnz_n_negative", Prune<T>::dense_nnz(h, M, -1, in.A, LDA, &th, d, rows, &nnz, buffer));
    if (which == 6) MIS("nnz_lda_small", Prune<T>::dense_nnz(h, M, N, in.A, M - 1, &th, d, rows, &nnz, buffer));
    if (which == 7) MIS("nnz_null_threshold", Prune<T>::dense_nnz(h, M, N, in.A, LDA, (T *)nullptr, d, rows, &nnz, buffer));
    if (which == 8) MIS("nnz_null_descr", Prune<T>::dense_nnz(h, M, N, in.A, LDA, &th, (cusparseMatDescr_t) nullptr, rows, &nnz, buffer));
    if (which == 9) MIS("nnz_symmetric", Prune<T>::dense_nnz(h, M, N, in.A, LDA, &th, sym, rows, &nnz, buffer));
    if (which == 10) MIS("nnz_null_nnz", Prune<T>::dense_nnz(h, M, N, in.A, LDA, &th, d, rows, (int *)nullptr, buffer));
    if (which == 11) MIS("nnz_null_rows", Prune<T>::dense_nnz(h, M, N, in.A, LDA, &th, d, (int *)nullptr, &nnz, buffer));
    if (which == 12) MIS("nnz_null_buffer", Prune<T>::dense_nnz(h, M, N, in.A, LDA, &th, d, rows, &nnz, (void *)nullptr));
    nnz = -7;
    if (which == 13) MIS("nnz_empty", Prune<T>::dense_nnz(h, 0, 0, in.A, 1, &th, d, rows, &nnz, buffer));
    if (which == 13) printf("%s_misuse_nnz_empty nnz %d\n", X, nnz);
    if (which == 14) MIS("csr_nnz_negative_nnzA", Prune<T>::csr_nnz(h, M, N, -1, d, in.cvals, in.crows, in.ccols, &th, d, rows, &nnz, buffer));
    if (which == 15) MIS("csr_nnz_symmetric_A", Prune<T>::csr_nnz(h, M, N, C_NNZ, sym, in.cvals, in.crows, in.ccols, &th, d, rows, &nnz, buffer));
    if (which == 16) MIS("p_nnz_negative", Prune<T>::pdense_nnz(h, M, N, in.A, LDA, -1.0f, d, rows, &nnz, info, buffer));
    if (which == 17) MIS("p_nnz_over_100", Prune<T>::pdense_nnz(h, M, N, in.A, LDA, 101.0f, d, rows, &nnz, info, buffer));
    if (which == 18) MIS("p_nnz_null_info", Prune<T>::pdense_nnz(h, M, N, in.A, LDA, 50.0f, d, rows, &nnz, (pruneInfo_t) nullptr, buffer));
    if (which == 19) MIS("p_size_null_info", Prune<T>::pdense_size(h, M, N, in.A, LDA, 50.0f, d, (T *)nullptr, rows, (int *)nullptr, (pruneInfo_t) nullptr, &size));
    if (which == 20) MIS("pcsr_nnz_over_100", Prune<T>::pcsr_nnz(h, M, N, C_NNZ, d, in.cvals, in.crows, in.ccols, 101.0f, d, rows, &nnz, info, buffer));
    cusparseHandle_t gone;
    cusparseCreate(&gone);
    cusparseDestroy(gone);
    if (which == 21) MIS("null_handle", Prune<T>::dense_nnz((cusparseHandle_t) nullptr, M, N, in.A, LDA, &th, d, rows, &nnz, buffer));
    cusparseDestroyPruneInfo(info);
    return which < 22;
}

template <typename T> void all(cusparseHandle_t h) {
    Inputs<T> in;
    for (int from_csr = 0; from_csr < 2; from_csr++) {
        for (float t : {1.0f, 0.0f, 0.5f, 0.75f, 10.0f}) by_threshold<T>(h, in, from_csr, t, 0, false);
        by_threshold<T>(h, in, from_csr, 1.0f, 1, false);
        by_threshold<T>(h, in, from_csr, 0.5f, 0, true);
        for (float p : {0.0f, 10.0f, 25.0f, 30.0f, 50.0f, 52.5f, 62.5f, 90.0f, 99.0f, 100.0f})
            by_percentage<T>(h, in, from_csr, p, 0);
        by_percentage<T>(h, in, from_csr, 50.0f, 1);
    }
}

int main(int argc, char **argv) {
    setvbuf(stdout, nullptr, _IOLBF, 0);
    cusparseHandle_t h;
    cusparseCreate(&h);
    if (argc == 4) {     // misuse H|S|D CASE, or all of them in this process ("all": a GPU crashes on some)
        int which = argv[3][0] == 'a' ? -1 : atoi(argv[3]);
        if (which < 0) {
            for (which = 0; argv[2][0] == 'H' ? misuse(h, *new Inputs<__half>, which)
                            : argv[2][0] == 'S' ? misuse(h, *new Inputs<float>, which)
                                                : misuse(h, *new Inputs<double>, which);
                 which++) {}
            return 0;
        }
        bool more = argv[2][0] == 'H' ? misuse(h, *new Inputs<__half>, which)
                    : argv[2][0] == 'S' ? misuse(h, *new Inputs<float>, which) : misuse(h, *new Inputs<double>, which);
        return more ? 0 : 3;
    }
    int version = 0;
    cusparseGetVersion(h, &version);
    printf("version %d\n", version);
    all<__half>(h);
    all<float>(h);
    all<double>(h);
    cusparseDestroy(h);
    printf("done\n");
    return 0;
}
