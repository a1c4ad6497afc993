// Records what cuRAND's host API and a few cuBLAS misuse calls give on a real GPU, for
// tests/libraries/curand_h200.json (the emulator's cuRAND is checked against it):
//     nvcc -O2 -o probe tools/libraries_gpu_probe.cu -lcublas -lcurand && ./probe probe.txt
#include <cstdio>
#include <cublas_v2.h>
#include <curand.h>
#include <cuda_runtime.h>
static void dump(FILE *f, const char *tag, const float *h, int n) {
    fprintf(f, "%s", tag);
    for (int i = 0; i < n; i++) fprintf(f, " %08x", *(const unsigned *)&h[i]);
    fprintf(f, "\n");
}
static void dumpd(FILE *f, const char *tag, const double *h, int n) {
    fprintf(f, "%s", tag);
    for (int i = 0; i < n; i++) fprintf(f, " %016llx", *(const unsigned long long *)&h[i]);
    fprintf(f, "\n");
}
int main(int argc, char **argv) {
    FILE *f = fopen(argv[1], "w");
    int types[] = {CURAND_RNG_PSEUDO_DEFAULT, CURAND_RNG_PSEUDO_PHILOX4_32_10, CURAND_RNG_PSEUDO_MRG32K3A};
    int sizes[] = {16, 1000, 70000};
    static float h[70000]; static double hd[70000]; static unsigned hu[70000];
    float *d; cudaMalloc(&d, 70000 * 8);
    for (int t = 0; t < 3; t++) for (int s = 0; s < 3; s++) {
        int n = sizes[s];
        char tag[64];
        curandGenerator_t g;
        curandCreateGenerator(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGenerate(g, (unsigned *)d, n);
        cudaMemcpy(hu, d, n * 4, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "bits %d %d", types[t], n); dump(f, tag, (float *)hu, n);
        curandGenerateUniform(g, d, n);   // the second call continues the sequence
        cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "uniform2 %d %d", types[t], n); dump(f, tag, h, n);
        curandDestroyGenerator(g);
        curandCreateGenerator(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGenerateUniform(g, d, n);
        cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "uniform %d %d", types[t], n); dump(f, tag, h, n);
        curandDestroyGenerator(g);
        curandCreateGenerator(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGenerateNormal(g, d, n, 1.0f, 2.0f);
        cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "normal %d %d", types[t], n); dump(f, tag, h, n);
        curandDestroyGenerator(g);
        curandCreateGenerator(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGenerateUniformDouble(g, (double *)d, n);
        cudaMemcpy(hd, d, n * 8, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "udouble %d %d", types[t], n); dumpd(f, tag, hd, n);
        curandDestroyGenerator(g);
        curandCreateGenerator(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGenerateNormalDouble(g, (double *)d, n, 0.0, 1.0);
        cudaMemcpy(hd, d, n * 8, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "ndouble %d %d", types[t], n); dumpd(f, tag, hd, n);
        curandDestroyGenerator(g);
        curandCreateGenerator(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGeneratePoisson(g, (unsigned *)d, n, 4.5);
        cudaMemcpy(hu, d, n * 4, cudaMemcpyDeviceToHost);
        snprintf(tag, 64, "poisson %d %d", types[t], n); dump(f, tag, (float *)hu, n);
        curandDestroyGenerator(g);
        curandCreateGeneratorHost(&g, (curandRngType_t)types[t]);
        curandSetPseudoRandomGeneratorSeed(g, 1234ULL);
        curandGenerateUniform(g, h, n);
        snprintf(tag, 64, "host %d %d", types[t], n); dump(f, tag, h, n);
        curandDestroyGenerator(g);
    }
    curandGenerator_t g;
    curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT);
    fprintf(f, "status normal_odd %d\n", (int)curandGenerateNormal(g, d, 7, 0, 1));
    fprintf(f, "status lognormal_odd %d\n", (int)curandGenerateLogNormal(g, d, 7, 0, 1));
    curandSetGeneratorOffset(g, 5);
    curandGenerateUniform(g, d, 16);
    cudaMemcpy(h, d, 64, cudaMemcpyDeviceToHost);
    dump(f, "offset5_default_seed", h, 16);
    curandDestroyGenerator(g);
    // cuBLAS misuse
    cublasHandle_t hb;
    fprintf(f, "status create %d\n", (int)cublasCreate(&hb));
    float one = 1, zero = 0;
    fprintf(f, "status gemm_m_neg %d\n", (int)cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, -1, 2, 2, &one, d, 2, d, 2, &zero, d, 2));
    fprintf(f, "status gemm_lda_small %d\n", (int)cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, 4, 2, 2, &one, d, 2, d, 2, &zero, d, 4));
    fprintf(f, "status gemm_zero %d\n", (int)cublasSgemm(hb, CUBLAS_OP_N, CUBLAS_OP_N, 0, 2, 2, &one, d, 2, d, 2, &zero, d, 2));
    fprintf(f, "status axpy_n_neg %d\n", (int)cublasSaxpy(hb, -1, &one, d, 1, d, 1));
    fprintf(f, "status axpy_inc0 %d\n", (int)cublasSaxpy(hb, 4, &one, d, 0, d, 1));
    float r = 7;
    fprintf(f, "status dot_n0 %d %g\n", (int)cublasSdot(hb, 0, d, 1, d, 1, &r), r);
    int ir = 7;
    fprintf(f, "status amax_n0 %d %d\n", (int)cublasIsamax(hb, 0, d, 1, &ir), ir);
    fprintf(f, "status setvector_inc0 %d\n", (int)cublasSetVector(4, 4, h, 0, d, 1));
    fprintf(f, "status setvector_elem0 %d\n", (int)cublasSetVector(4, 0, h, 1, d, 1));
    fprintf(f, "status setmatrix_lda %d\n", (int)cublasSetMatrix(4, 2, 4, h, 2, d, 4));
    fprintf(f, "status gemv_trans_bad %d\n", (int)cublasSgemv(hb, (cublasOperation_t)7, 2, 2, &one, d, 2, d, 1, &zero, d, 1));
    int v; cublasGetVersion(hb, &v); fprintf(f, "version %d\n", v);
    fprintf(f, "status destroy %d\n", (int)cublasDestroy(hb));
    fprintf(f, "status destroy_null %d\n", (int)cublasDestroy(nullptr));
    fprintf(f, "status gemm_null %d\n", (int)cublasSgemm(nullptr, CUBLAS_OP_N, CUBLAS_OP_N, 2, 2, 2, &one, d, 2, d, 2, &zero, d, 2));
    fprintf(f, "string %s|%s|%s\n", cublasGetStatusString(CUBLAS_STATUS_INVALID_VALUE), cublasGetStatusString(CUBLAS_STATUS_NOT_INITIALIZED), cublasGetStatusString(CUBLAS_STATUS_NOT_SUPPORTED));
    fclose(f);
    return 0;
}
