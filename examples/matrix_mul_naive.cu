// Matrix multiplication C = A * B, one thread per element of C, reading A and B from global memory.
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(err_), __LINE__,  \
                   cudaGetErrorString(err_));                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__global__ void matMul(const float *A, const float *B, float *C, int M, int N, int K)
{
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}

int main()
{
    const int M = 96, N = 80, K = 64;            // not multiples of the block: the edges are tested too
    float *A = (float *)malloc(M * K * sizeof(float)), *B = (float *)malloc(K * N * sizeof(float));
    float *C = (float *)malloc(M * N * sizeof(float));
    for (int i = 0; i < M * K; ++i) A[i] = (float)((i * 7) % 13 - 6);     // small integers: exact sums
    for (int i = 0; i < K * N; ++i) B[i] = (float)((i * 5) % 11 - 5);

    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, M * K * sizeof(float)));
    CHECK(cudaMalloc(&dB, K * N * sizeof(float)));
    CHECK(cudaMalloc(&dC, M * N * sizeof(float)));
    CHECK(cudaMemcpy(dA, A, M * K * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, K * N * sizeof(float), cudaMemcpyHostToDevice));

    dim3 block(16, 16), grid((N + 15) / 16, (M + 15) / 16);
    printf("C(%dx%d) = A(%dx%d) * B(%dx%d), grid (%d,%d), block (%d,%d)\n", M, N, M, K, K, N,
           grid.x, grid.y, block.x, block.y);
    matMul<<<grid, block>>>(dA, dB, dC, M, N, K);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(C, dC, M * N * sizeof(float), cudaMemcpyDeviceToHost));

    int wrong = 0;
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
            float ref = 0;
            for (int k = 0; k < K; ++k) ref += A[r * K + k] * B[k * N + c];
            if (ref != C[r * N + c]) wrong++;
        }
    printf("C[0][0] = %.1f, C[%d][%d] = %.1f, wrong = %d\n", C[0], M - 1, N - 1, C[M * N - 1], wrong);
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dC));
    printf("Result = %s\n", wrong ? "FAIL" : "PASS");
    return wrong != 0;
}
