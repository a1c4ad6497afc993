// The occupancy API: how many blocks of a kernel fit on one SM, and which block size the
// runtime suggests (NVIDIA's simpleOccupancy). Device-specific numbers are on "device:" lines.
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

__global__ void scale(float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void bigShared(float *x)
{
    __shared__ float tile[12 * 1024];              // 48 KiB of static shared memory per block
    tile[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = tile[(threadIdx.x + 1) % blockDim.x];
}

int main()
{
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs, compute capability %d.%d\n", prop.name, prop.multiProcessorCount, prop.major,
           prop.minor);
    int sizes[] = {64, 128, 256, 512, 1024};
    for (int k = 0; k < 5; ++k) {
        int blocks;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, scale, sizes[k], 0));
        printf("scale with %4d threads per block: %2d blocks per SM, occupancy %3.0f%%\n", sizes[k], blocks,
               100.0 * blocks * sizes[k] / prop.maxThreadsPerMultiProcessor);
    }
    int blocks;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, bigShared, 256, 0));
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, bigShared));
    printf("bigShared: %zu bytes of static shared memory per block\n", attr.sharedSizeBytes);
    printf("device: %d blocks of bigShared fit in the %zu bytes of shared memory of an SM\n", blocks,
           prop.sharedMemPerMultiprocessor);

    int minGrid, blockSize;
    CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &blockSize, scale, 0, 0));
    printf("suggested block size for scale: %d\n", blockSize);
    printf("device: minimum grid for a full device: %d blocks\n", minGrid);

    const int n = 1 << 16;
    float *d;
    CHECK(cudaMalloc(&d, n * sizeof(float)));
    CHECK(cudaMemset(d, 0, n * sizeof(float)));
    scale<<<(n + blockSize - 1) / blockSize, blockSize>>>(d, 2.0f, n);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaFree(d));
    printf("Result = PASS\n");
    return 0;
}
