// Tiled matrix multiplication: each block stages TILE x TILE tiles of A and B in shared memory
// (the CUDA Programming Guide's "Shared Memory" example), timed with events.
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

#define TILE 16

__global__ void matMulShared(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();                       // the tile is complete before anyone reads it
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();                       // everyone is done before the tile is overwritten
    }
    C[row * n + col] = acc;
}

int main()
{
    const int n = 128;
    size_t bytes = n * n * sizeof(float);
    float *A = (float *)malloc(bytes), *B = (float *)malloc(bytes), *C = (float *)malloc(bytes);
    for (int i = 0; i < n * n; ++i) {
        A[i] = (float)(i % 5 - 2);
        B[i] = (float)(i % 3 - 1);
    }
    float *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, bytes)); CHECK(cudaMalloc(&dB, bytes)); CHECK(cudaMalloc(&dC, bytes));
    CHECK(cudaMemcpy(dA, A, bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, bytes, cudaMemcpyHostToDevice));

    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start)); CHECK(cudaEventCreate(&stop));
    dim3 block(TILE, TILE), grid(n / TILE, n / TILE);
    CHECK(cudaEventRecord(start));
    matMulShared<<<grid, block>>>(dA, dB, dC, n);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    CHECK(cudaMemcpy(C, dC, bytes, cudaMemcpyDeviceToHost));

    int wrong = 0;
    double checksum = 0;
    for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
            float ref = 0;
            for (int k = 0; k < n; ++k) ref += A[r * n + k] * B[k * n + c];
            wrong += ref != C[r * n + c];
            checksum += C[r * n + c];
        }
    printf("%dx%d matrices, %dx%d tiles, checksum = %.1f, wrong = %d\n", n, n, TILE, TILE, checksum, wrong);
    printf("time: kernel %.3f ms, %.2f GFLOP/s\n", ms, 2.0 * n * n * n / (ms * 1e6));
    CHECK(cudaEventDestroy(start)); CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dC));
    printf("Result = %s\n", wrong ? "FAIL" : "PASS");
    return wrong != 0;
}
