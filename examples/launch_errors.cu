// What the CUDA runtime answers to common mistakes: bad launch shapes, too much shared memory,
// bad frees and copies. Each call's error is printed by name; none of these breaks the context.
#include <cstdio>
#include <cstdlib>

__global__ void kernel(float *out)
{
    extern __shared__ float buffer[];
    buffer[threadIdx.x] = threadIdx.x;
    __syncthreads();
    if (out) out[threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}

void report(const char *what, cudaError_t e)
{
    printf("%-48s %s\n", what, cudaGetErrorName(e));
    cudaGetLastError();                       // clear it before the next experiment
}

int main()
{
    float *d;
    cudaMalloc(&d, 1024 * sizeof(float));

    kernel<<<1, 1025>>>(d);
    report("1025 threads per block", cudaGetLastError());
    kernel<<<1, dim3(1, 1, 65)>>>(d);
    report("blockDim.z = 65", cudaGetLastError());
    kernel<<<0, 32>>>(d);
    report("a grid of 0 blocks", cudaGetLastError());
    kernel<<<dim3(1, 65536), 32>>>(nullptr);
    report("gridDim.y = 65536", cudaGetLastError());
    kernel<<<1, 32, 64 * 1024>>>(d);
    report("64 KiB dynamic shared memory", cudaGetLastError());
    report("opt in to 64 KiB", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));
    kernel<<<1, 32, 64 * 1024>>>(d);
    report("64 KiB dynamic shared memory after opting in", cudaGetLastError());
    report("opt in to 300 KiB", cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 300 * 1024));
    kernel<<<1, 32, 32 * sizeof(float)>>>(d);
    report("a correct launch", cudaDeviceSynchronize());

    float host[4];
    int x;
    report("cudaFree of a host pointer", cudaFree(host));
    float *e;
    cudaMalloc(&e, 16);
    cudaFree(e);
    report("cudaFree twice", cudaFree(e));
    report("cudaMalloc of 2^50 bytes", cudaMalloc(&e, (size_t)1 << 50));
    report("cudaMemset past the end", cudaMemset(d, 0, 4096 + 4));
    report("cudaMemcpy past the end", cudaMemcpy(host, d + 1022, sizeof host, cudaMemcpyDeviceToHost));
    report("cudaMemcpy with a bad kind", cudaMemcpy(d, host, sizeof host, (cudaMemcpyKind)7));
    report("cudaMemcpy Default host to device", cudaMemcpy(d, host, sizeof host, cudaMemcpyDefault));
    report("cudaMemcpyToSymbol of a non-symbol", cudaMemcpyToSymbol(x, host, 4));
    report("cudaSetDevice(-1)", cudaSetDevice(-1));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    float ms;
    report("cudaEventElapsedTime with an unrecorded event", cudaEventElapsedTime(&ms, a, b));
    report("cudaEventQuery of an unrecorded event", cudaEventQuery(b));
    cudaEventRecord(b);
    report("cudaEventSynchronize", cudaEventSynchronize(b));
    report("cudaEventQuery after synchronizing", cudaEventQuery(b));
    report("cudaDeviceSynchronize at the end", cudaDeviceSynchronize());
    cudaFree(d);
    printf("Result = PASS\n");
    return 0;
}
