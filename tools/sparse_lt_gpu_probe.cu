// Records what cuSPARSE's generic API and cuBLASLt answer on a real GPU (status codes, a GELU), one
// "label value" per line, for tests/libraries/sparse_lt_h200.txt (tests/test_libraries_sparse.py
// compares the emulator's answers with it):
//     nvcc -o probe tools/sparse_lt_gpu_probe.cu -lcusparse -lcublasLt && ./probe
// Calls with a NULL or destroyed handle are on purpose: they show the libraries' own answers.
#include <cstdio>
#include <cmath>
#include <cusparse.h>
#include <cublasLt.h>
#define P(label, expr) printf("%s %d\n", label, (int)(expr))
int main() {
    setvbuf(stdout, NULL, _IONBF, 0);     // every line out before a crash
    // ---------------- cuSPARSE
    for (int s = 0; s <= 11; s++) printf("sp_str %d %s | %s\n", s, cusparseGetErrorName((cusparseStatus_t)s), cusparseGetErrorString((cusparseStatus_t)s));
    cusparseHandle_t h;
    P("sp_create", cusparseCreate(&h));
    int off[] = {0, 2, 3, 6}, col[] = {0, 2, 1, 0, 2, 3};
    float val[] = {1, 2, 3, 4, 5, 6};
    int *dOff, *dCol; float *dVal, *dX, *dY;
    cudaMalloc(&dOff, sizeof off); cudaMalloc(&dCol, sizeof col); cudaMalloc(&dVal, sizeof val);
    cudaMalloc(&dX, 64); cudaMalloc(&dY, 64);
    cudaMemcpy(dOff, off, sizeof off, cudaMemcpyHostToDevice); cudaMemcpy(dCol, col, sizeof col, cudaMemcpyHostToDevice);
    cudaMemcpy(dVal, val, sizeof val, cudaMemcpyHostToDevice);
    cusparseSpMatDescr_t A, B;
    cusparseDnVecDescr_t X, Y, Y4;
    P("sp_csr", cusparseCreateCsr(&A, 3, 4, 6, dOff, dCol, dVal, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    P("sp_csr_negative_rows", cusparseCreateCsr(&B, -3, 4, 6, dOff, dCol, dVal, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    P("sp_csr_null_values", cusparseCreateCsr(&B, 3, 4, 6, dOff, dCol, 0, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    P("sp_csr_null_all_empty", cusparseCreateCsr(&B, 0, 0, 0, 0, 0, 0, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    P("sp_csr_bad_base", cusparseCreateCsr(&B, 3, 4, 6, dOff, dCol, dVal, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, (cusparseIndexBase_t)5, CUDA_R_32F));
    P("sp_dnvec", cusparseCreateDnVec(&X, 4, dX, CUDA_R_32F));
    P("sp_dnvec_negative", cusparseCreateDnVec(&Y, -1, dY, CUDA_R_32F));
    P("sp_dnvec_null", cusparseCreateDnVec(&Y, 3, 0, CUDA_R_32F));
    cusparseCreateDnVec(&Y, 3, dY, CUDA_R_32F);
    cusparseCreateDnVec(&Y4, 4, dY, CUDA_R_32F);
    cusparseDnMatDescr_t M;
    P("sp_dnmat_small_ld", cusparseCreateDnMat(&M, 4, 2, 3, dX, CUDA_R_32F, CUSPARSE_ORDER_COL));
    P("sp_dnmat_row_ld", cusparseCreateDnMat(&M, 4, 2, 2, dX, CUDA_R_32F, CUSPARSE_ORDER_ROW));
    float alpha = 1, beta = 0;
    size_t size = 12345;
    P("sp_spmv_buffersize", cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &size));
    printf("sp_spmv_buffersize_value %zu\n", size);
    P("sp_spmv_null_handle", cusparseSpMV(0, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, 0));
    P("sp_spmv_null_alpha", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, 0, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, 0));
    P("sp_spmv_wrong_y", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y4, CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, 0));
    P("sp_spmv_f64_compute", cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F, CUSPARSE_SPMV_ALG_DEFAULT, 0));
    P("sp_spmm_buffersize_null", cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, 0, &beta, 0, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &size));
    P("sp_coo2csr_negative", cusparseXcoo2csr(h, dCol, -1, 3, dOff, CUSPARSE_INDEX_BASE_ZERO));
    P("sp_csr2csc_buffersize", cusparseCsr2cscEx2_bufferSize(h, 3, 4, 6, dVal, dOff, dCol, dVal, dOff, dCol, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &size));
    printf("sp_csr2csc_buffersize_value %zu\n", size);
    P("sp_destroy_null_spmat", cusparseDestroySpMat(0));
    P("sp_destroy_null_dnvec", cusparseDestroyDnVec(0));
    cusparseMatDescr_t md;
    P("sp_matdescr", cusparseCreateMatDescr(&md));
    P("sp_matdescr_type", cusparseGetMatType(md));
    P("sp_set_bad_base", cusparseSetMatIndexBase(md, (cusparseIndexBase_t)3));
    P("sp_destroy", cusparseDestroy(h));
    P("sp_destroy_null", cusparseDestroy(0));
    int version;
    P("sp_version_null_handle", cusparseGetVersion(0, &version));
    // ---------------- cuBLASLt
    cublasLtHandle_t lt;
    P("lt_create", cublasLtCreate(&lt));
    cublasLtMatmulDesc_t desc;
    P("lt_desc", cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t t = CUBLAS_OP_T;
    P("lt_set_wrong_size", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, 8));
    P("lt_set_null", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, 0, 4));
    size_t written = 0;
    P("lt_get_size_query", cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, 0, 0, &written));
    printf("lt_get_size_query_value %zu\n", written);
    int32_t small;
    P("lt_get_too_small", cublasLtMatmulDescGetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &small, 4, &written));
    cublasLtMatrixLayout_t la, lb, l54;
    P("lt_layout", cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, 4, 3, 4));
    cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 4, 3, 4);
    cublasLtMatrixLayoutCreate(&l54, CUDA_R_32F, 5, 4, 5);
    P("lt_layout_small_ld", cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, 4, 3, 2));
    cublasLtMatmulPreference_t pref;
    P("lt_pref", cublasLtMatmulPreferenceCreate(&pref));
    cublasLtMatmulHeuristicResult_t res[2];
    int found = 7;
    P("lt_heur_mismatch", cublasLtMatmulAlgoGetHeuristic(lt, desc, la, la, la, la, pref, 1, res, &found));
    printf("lt_heur_mismatch_found %d\n", found);
    found = 7;
    P("lt_heur_zero_requested", cublasLtMatmulAlgoGetHeuristic(lt, desc, la, la, la, la, pref, 0, res, &found));
    float *scale = 0;
    P("lt_set_a_scale", cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale, sizeof scale));
    cublasLtMatmulDescDestroy(desc);
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    float *dA, *dB, *dC, hA[20], hB[12];
    for (int i = 0; i < 20; i++) hA[i] = (i * 7 % 11 - 5) * 0.5f;
    for (int i = 0; i < 12; i++) hB[i] = (i * 5 % 7 - 3) * 0.5f;
    cudaMalloc(&dA, sizeof hA); cudaMalloc(&dB, sizeof hB); cudaMalloc(&dC, 15 * 4);
    cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice); cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice);
    // D (5 x 3) = gelu(A (5 x 4) B (4 x 3)), the GELU's values against tanh's formula
    cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_GELU;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep);
    cublasLtMatrixLayout_t lA, lB, lD;
    cublasLtMatrixLayoutCreate(&lA, CUDA_R_32F, 5, 4, 5); cublasLtMatrixLayoutCreate(&lB, CUDA_R_32F, 4, 3, 4);
    cublasLtMatrixLayoutCreate(&lD, CUDA_R_32F, 5, 3, 5);
    P("lt_heur_ok", cublasLtMatmulAlgoGetHeuristic(lt, desc, lA, lB, lD, lD, pref, 2, res, &found));
    printf("lt_heur_ok_found %d state %d workspace %zu\n", found, res[0].state, res[0].workspaceSize);
    P("lt_matmul_gelu", cublasLtMatmul(lt, desc, &alpha, dA, lA, dB, lB, &beta, dC, lD, dC, lD, 0, 0, 0, 0));
    float hD[15];
    cudaMemcpy(hD, dC, sizeof hD, cudaMemcpyDeviceToHost);
    printf("lt_gelu");
    for (int i = 0; i < 15; i++) printf(" %.9g", hD[i]);
    printf("\n");
    ep = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep);
    P("lt_matmul_bias_without_pointer", cublasLtMatmul(lt, desc, &alpha, dA, lA, dB, lB, &beta, dC, lD, dC, lD, 0, 0, 0, 0));
    P("lt_matmul_null_alpha", cublasLtMatmul(lt, desc, 0, dA, lA, dB, lB, &beta, dC, lD, dC, lD, 0, 0, 0, 0));
    ep = CUBLASLT_EPILOGUE_RELU_AUX;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep);
    P("lt_destroy", cublasLtDestroy(lt));
    P("lt_heur_destroyed", cublasLtMatmulAlgoGetHeuristic(lt, desc, lA, lB, lD, lD, pref, 1, res, &found));
    printf("lt_status_string %s | %s\n", cublasLtGetStatusName(CUBLAS_STATUS_INVALID_VALUE), cublasLtGetStatusString(CUBLAS_STATUS_INVALID_VALUE));
    return 0;
}
