// Querying the device and handling errors (NVIDIA's deviceQuery and the error-checking idiom).
// What differs between GPUs is printed on "device:" lines.
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

__global__ void noop() {}

int main()
{
    int count;
    CHECK(cudaGetDeviceCount(&count));
    printf("%s\n", count > 0 ? "found a CUDA device" : "no CUDA device");
    CHECK(cudaSetDevice(0));
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    printf("device: %s, compute capability %d.%d, %d SMs, %.1f GiB\n", p.name, p.major, p.minor,
           p.multiProcessorCount, p.totalGlobalMem / 1073741824.0);
    printf("warp size %d, max threads per block %d, max block (%d, %d, %d)\n", p.warpSize, p.maxThreadsPerBlock,
           p.maxThreadsDim[0], p.maxThreadsDim[1], p.maxThreadsDim[2]);
    printf("shared memory per block %zu bytes, registers per block %d, constant memory %zu bytes\n",
           p.sharedMemPerBlock, p.regsPerBlock, p.totalConstMem);
    int threadsPerSM;
    CHECK(cudaDeviceGetAttribute(&threadsPerSM, cudaDevAttrMaxThreadsPerMultiProcessor, 0));
    printf("max threads per SM %d, unified addressing %d, managed memory %d\n", threadsPerSM,
           p.unifiedAddressing, p.managedMemory);

    // errors: a launch with too many threads, a bad device, a bad copy
    noop<<<1, 2048>>>();
    cudaError_t e1 = cudaGetLastError();
    cudaError_t e1again = cudaGetLastError();            // reading the error clears it
    cudaError_t e2 = cudaSetDevice(count + 3);
    int *d;
    CHECK(cudaMalloc(&d, 16));
    int h[8];
    cudaError_t e3 = cudaMemcpy(h, d, sizeof h * 4, cudaMemcpyDeviceToHost);   // 128 bytes from 16
    cudaGetLastError();
    printf("launch with 2048 threads: %s (%s); then: %s\n", cudaGetErrorName(e1), cudaGetErrorString(e1),
           cudaGetErrorName(e1again));
    printf("cudaSetDevice(%d): %s\n", count + 3, cudaGetErrorName(e2));
    printf("copy past the end of an allocation: %s\n", cudaGetErrorName(e3));
    CHECK(cudaFree(d));
    noop<<<1, 32>>>();
    CHECK(cudaDeviceSynchronize());
    bool ok = e1 != cudaSuccess && e1again == cudaSuccess && e2 == cudaErrorInvalidDevice &&
              e3 == cudaErrorInvalidValue;
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
