// A 256-bin histogram: each block counts into its own shared-memory histogram with shared
// atomics, then adds it to the global one (NVIDIA's histogram sample, simplified).
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

#define BINS 256

__global__ void histogram(const unsigned char *data, int n, unsigned int *hist)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i]], 1);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (local[b]) atomicAdd(&hist[b], local[b]);
}

int main()
{
    const int n = 1 << 18;
    unsigned char *h = (unsigned char *)malloc(n);
    unsigned int seed = 12345, ref[BINS] = {0}, got[BINS];
    for (int i = 0; i < n; ++i) {
        seed = seed * 1103515245u + 12345u;
        h[i] = (unsigned char)((seed >> 16) & 0xff);
        ref[h[i]]++;
    }
    unsigned char *d;
    unsigned int *dh;
    CHECK(cudaMalloc(&d, n));
    CHECK(cudaMalloc(&dh, sizeof got));
    CHECK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dh, 0, sizeof got));
    histogram<<<64, 256>>>(d, n, dh);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(got, dh, sizeof got, cudaMemcpyDeviceToHost));
    int wrong = 0;
    unsigned int total = 0;
    for (int b = 0; b < BINS; ++b) wrong += got[b] != ref[b], total += got[b];
    printf("%d bytes, %u counted, bin[0]=%u bin[128]=%u bin[255]=%u, wrong bins = %d\n", n, total, got[0],
           got[128], got[255], wrong);
    CHECK(cudaFree(d)); CHECK(cudaFree(dh));
    printf("Result = %s\n", wrong ? "FAIL" : "PASS");
    return wrong != 0;
}
