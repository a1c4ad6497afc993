// assert() in a kernel: a failing assertion stops the kernel, the host sees cudaErrorAssert at
// the next synchronization, and the context is unusable afterwards (a "sticky" error).
#include <cassert>
#include <cstdio>
#include <cstdlib>

__global__ void checkPositive(const int *data, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        assert(data[i] > 0);
}

int main()
{
    const int n = 64;
    int h[n];
    for (int i = 0; i < n; ++i) h[i] = i + 1;
    int *d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);

    checkPositive<<<2, 32>>>(d, n);
    cudaError_t first = cudaDeviceSynchronize();
    printf("all positive: %s\n", cudaGetErrorString(first));

    h[37] = -5;                                  // one bad element: thread 5 of block 1 fails
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    checkPositive<<<2, 32>>>(d, n);
    cudaError_t second = cudaDeviceSynchronize();
    printf("one negative: %s (%s)\n", cudaGetErrorName(second), cudaGetErrorString(second));
    cudaError_t after = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("a copy afterwards: %s\n", cudaGetErrorName(after));

    bool ok = first == cudaSuccess && second == cudaErrorAssert && after == cudaErrorAssert;
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
