// printf from the device: every thread of one warp prints; the lines come out at the next
// synchronization, in lane order, between the host's own lines.
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

__global__ void hello(float scale)
{
    int t = threadIdx.x + threadIdx.y * blockDim.x;
    printf("block (%d,%d) thread (%d,%d): t=%d value=%.2f %s\n", blockIdx.x, blockIdx.y, threadIdx.x,
           threadIdx.y, t, t * scale, t % 2 ? "odd" : "even");
}

int main()
{
    printf("host: before the launch\n");
    hello<<<1, dim3(4, 2)>>>(1.5f);
    CHECK(cudaDeviceSynchronize());
    printf("host: between the launches\n");
    hello<<<dim3(1, 1), dim3(2, 1)>>>(-0.25f);
    CHECK(cudaDeviceSynchronize());
    printf("host: done\n");
    printf("Result = PASS\n");
    return 0;
}
