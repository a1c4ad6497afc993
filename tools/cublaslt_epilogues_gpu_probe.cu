// cuBLASLt's epilogues on a real GPU: the status, D and the bias/aux each writes (f32, with llm.c's
// two pairs of transposes), for tests/libraries/sparse_lt_h200.txt:
//     nvcc -o epilogues tools/cublaslt_epilogues_gpu_probe.cu -lcublasLt && ./epilogues
#include <cstdio>
#include <cublasLt.h>
static float *dev(const float *h, int n) { float *d; cudaMalloc(&d, n * 4); cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice); return d; }
static void show(const char *name, const float *d, int n) {
    float h[64]; cudaMemcpy(h, d, n * 4, cudaMemcpyDeviceToHost);
    printf("%s", name); for (int i = 0; i < n; i++) printf(" %.9g", h[i]); printf("\n");
}
int main() {
    setvbuf(stdout, NULL, _IONBF, 0);
    const int m = 5, n = 3, k = 4;          // D m x n = op(A) op(B); A stored k x m (transa T), B k x n
    float a[20], b[12], zeros[64] = {0}, fill[64];
    for (int i = 0; i < 20; i++) a[i] = (i * 7 % 11 - 5) * 0.5f;
    for (int i = 0; i < 12; i++) b[i] = (i * 5 % 7 - 3) * 0.5f;
    for (int i = 0; i < 64; i++) fill[i] = (i % 5 - 2) * 0.25f;
    float *A = dev(a, 20), *B = dev(b, 12), *D = dev(zeros, 64), *bias = dev(fill, 64), *aux = dev(fill, 64);
    cublasLtHandle_t h; cublasLtCreate(&h);
    cublasLtMatrixLayout_t lA, lB, lD;
    cublasLtMatrixLayoutCreate(&lA, CUDA_R_32F, k, m, k); cublasLtMatrixLayoutCreate(&lB, CUDA_R_32F, k, n, k);
    cublasLtMatrixLayoutCreate(&lD, CUDA_R_32F, m, n, m);
    const cublasLtEpilogue_t eps[] = {CUBLASLT_EPILOGUE_RELU_BIAS, CUBLASLT_EPILOGUE_GELU_AUX, CUBLASLT_EPILOGUE_DGELU,
                                      CUBLASLT_EPILOGUE_DGELU_BGRAD, CUBLASLT_EPILOGUE_BGRADA, CUBLASLT_EPILOGUE_BGRADB};
    const char *names[] = {"relu_bias", "gelu_aux", "dgelu", "dgelu_bgrad", "bgrada", "bgradb"};
    float alpha = 1, beta = 0;
    cublasOperation_t opA = CUBLAS_OP_T, opB = CUBLAS_OP_N;
    for (int t = 0; t < 2; t++) {
        if (t) opA = CUBLAS_OP_N, opB = CUBLAS_OP_T;      // then A stored m x k, B n x k
        if (t) {
            cublasLtMatrixLayoutCreate(&lA, CUDA_R_32F, m, k, m); cublasLtMatrixLayoutCreate(&lB, CUDA_R_32F, n, k, n);
        }
        for (int e = 0; e < 6; e++) {
            cudaMemcpy(D, zeros, 64 * 4, cudaMemcpyHostToDevice);
            cudaMemcpy(bias, fill, 64 * 4, cudaMemcpyHostToDevice);
            cudaMemcpy(aux, fill, 64 * 4, cudaMemcpyHostToDevice);
            cublasLtMatmulDesc_t desc; cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &eps[e], sizeof eps[e]);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
            int64_t ld = m;
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux, sizeof aux);
            cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld, sizeof ld);
            void *ws; cudaMalloc(&ws, 1 << 22);
            int s = cublasLtMatmul(h, desc, &alpha, A, lA, B, lB, &beta, D, lD, D, lD, 0, ws, 1 << 22, 0);
            cudaDeviceSynchronize();
            printf("%s_%s status %d\n", names[e], t ? "NT" : "TN", s);
            char label[64];
            snprintf(label, sizeof label, "%s_%s_D", names[e], t ? "NT" : "TN"); show(label, D, m * n);
            snprintf(label, sizeof label, "%s_%s_bias", names[e], t ? "NT" : "TN"); show(label, bias, 8);
            snprintf(label, sizeof label, "%s_%s_aux", names[e], t ? "NT" : "TN"); show(label, aux, m * n);
        }
    }
    return 0;
}
