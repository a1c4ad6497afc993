// Atomic intrinsics (NVIDIA's simpleAtomicIntrinsics): every thread updates the same few words;
// atomics make the read-modify-write of each one indivisible, so the result is exact.
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

__global__ void atomicKernel(int *g)
{
    unsigned int tid = blockDim.x * blockIdx.x + threadIdx.x;
    atomicAdd(&g[0], 10);
    atomicExch(&g[1], tid);                  // some thread's id: checked for range only
    atomicMax(&g[2], tid);
    atomicMin(&g[3], tid);
    atomicInc((unsigned int *)&g[4], 16);    // counts 0..16 and wraps
    atomicDec((unsigned int *)&g[5], 137);
    atomicCAS(&g[6], 0, tid + 1);            // only the first thread to arrive finds 0 and wins
    atomicAnd(&g[7], 2 * tid + 7);
    atomicOr(&g[8], 1 << (tid % 32));
    atomicXor(&g[9], tid);
    atomicSub(&g[10], 10);
}

int main()
{
    const int threads = 256, blocks = 4, n = threads * blocks, words = 11;
    int h[words] = {0, 0, -(1 << 8), 1 << 8, 0, 0, 0, 0xff, 0, 0xff, 0};
    int *d;
    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    atomicKernel<<<blocks, threads>>>(d);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));

    int xr = 0xff, andv = 0xff;
    for (int t = 0; t < n; ++t) xr ^= t, andv &= 2 * t + 7;
    int inc = n % 17, dec = 0;
    for (int t = 0; t < n; ++t) dec = (dec == 0 || dec > 137) ? 137 : dec - 1;
    bool ok = h[0] == 10 * n && h[1] >= 0 && h[1] < n && h[2] == n - 1 && h[3] == 0 && h[4] == inc &&
              h[5] == dec && h[6] >= 1 && h[6] <= n && h[7] == andv && h[8] == -1 && h[9] == xr && h[10] == -10 * n;
    printf("add %d, max %d, min %d, inc %d, dec %d, and 0x%x, or 0x%x, xor 0x%x, sub %d\n", h[0], h[2], h[3],
           h[4], h[5], h[7], h[8], h[9], h[10]);
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    CHECK(cudaFree(d));
    return !ok;
}
