// Vector addition as a whole program: allocate, copy in, launch, copy back, check.
// The same file runs on the emulated GPU and on a real one:  cudalab run examples/vector_add_program.cu
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, \
                   __LINE__, cudaGetErrorString(err_));                              \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__global__ void vectorAdd(const float *A, const float *B, float *C, int n)
{
    int i = blockDim.x * blockIdx.x + threadIdx.x;
    if (i < n)
        C[i] = A[i] + B[i];
}

int main()
{
    const int n = 50000;
    size_t bytes = n * sizeof(float);
    printf("[Vector addition of %d elements]\n", n);

    float *h_A = (float *)malloc(bytes), *h_B = (float *)malloc(bytes), *h_C = (float *)malloc(bytes);
    for (int i = 0; i < n; ++i) {
        h_A[i] = (i % 1000) / 1000.0f;
        h_B[i] = (i % 777) / 777.0f;
    }

    float *d_A, *d_B, *d_C;
    CHECK(cudaMalloc(&d_A, bytes));
    CHECK(cudaMalloc(&d_B, bytes));
    CHECK(cudaMalloc(&d_C, bytes));
    CHECK(cudaMemcpy(d_A, h_A, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_B, h_B, bytes, cudaMemcpyHostToDevice));

    int threads = 256, blocks = (n + threads - 1) / threads;
    printf("CUDA kernel launch with %d blocks of %d threads\n", blocks, threads);
    vectorAdd<<<blocks, threads>>>(d_A, d_B, d_C, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_C, d_C, bytes, cudaMemcpyDeviceToHost));

    int wrong = 0;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        if (h_C[i] != h_A[i] + h_B[i]) wrong++;
        sum += h_C[i];
    }
    printf("sum of C = %.3f, wrong elements = %d\n", sum, wrong);

    CHECK(cudaFree(d_A));
    CHECK(cudaFree(d_B));
    CHECK(cudaFree(d_C));
    free(h_A); free(h_B); free(h_C);
    printf("Result = %s\n", wrong == 0 ? "PASS" : "FAIL");
    return wrong == 0 ? 0 : 1;
}
