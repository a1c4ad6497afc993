// Device limits, cache and shared-memory configuration, the profiler API and kernel attributes.
#include <cstdio>
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void small_kernel(float *out) { out[threadIdx.x] = threadIdx.x * 2.0f; }

__global__ void tiled(float *out) {
    __shared__ float tile[1024];
    tile[threadIdx.x] = threadIdx.x;
    __syncthreads();
    out[threadIdx.x] = tile[1023 - threadIdx.x];
}

const char *limit_names[] = {"StackSize", "PrintfFifoSize", "MallocHeapSize", "DevRuntimeSyncDepth",
                             "DevRuntimePendingLaunchCount", "MaxL2FetchGranularity", "PersistingL2CacheSize"};

int main() {
    size_t value = 0;
    for (int l = 0; l < 7; ++l) {
        cudaError_t e = cudaDeviceGetLimit(&value, (cudaLimit)l);
        printf("limit %s default: %s %zu\n", limit_names[l], cudaGetErrorName(e), e ? 0 : value);
    }
    size_t want[] = {4096, 4 << 20, 16 << 20, 4, 4096, 64, 4 << 20};
    for (int l = 0; l < 7; ++l) {
        cudaError_t e = cudaDeviceSetLimit((cudaLimit)l, want[l]);
        value = 0;
        cudaError_t g = cudaDeviceGetLimit(&value, (cudaLimit)l);
        printf("limit %s set %zu: %s, reads %s %zu\n", limit_names[l], want[l], cudaGetErrorName(e),
               cudaGetErrorName(g), value);
    }
    SHOW(cudaDeviceSetLimit(cudaLimitMaxL2FetchGranularity, 100));
    SHOW(cudaDeviceGetLimit(&value, cudaLimitMaxL2FetchGranularity));
    printf("granularity after 100: %zu\n", value);
    SHOW(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, (size_t)1 << 40));
    SHOW(cudaDeviceGetLimit(&value, cudaLimitPersistingL2CacheSize));
    printf("persisting L2 after 1 TiB: %zu\n", value);
    SHOW(cudaDeviceSetLimit((cudaLimit)99, 1));
    SHOW(cudaDeviceGetLimit(&value, (cudaLimit)99));
    SHOW(cudaDeviceGetLimit(nullptr, cudaLimitStackSize));
    SHOW(cudaGetLastError());

    cudaFuncCache cache;
    SHOW(cudaDeviceGetCacheConfig(&cache));
    printf("cache config %d\n", (int)cache);
    SHOW(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
    SHOW(cudaDeviceGetCacheConfig(&cache));
    printf("cache config %d\n", (int)cache);
    SHOW(cudaDeviceSetCacheConfig((cudaFuncCache)9));
    SHOW(cudaFuncSetCacheConfig(small_kernel, cudaFuncCachePreferL1));
    SHOW(cudaGetLastError());

    cudaSharedMemConfig shm;
    SHOW(cudaDeviceGetSharedMemConfig(&shm));
    printf("shared mem config %d\n", (int)shm);
    SHOW(cudaDeviceSetSharedMemConfig(cudaSharedMemBankSizeEightByte));
    SHOW(cudaDeviceGetSharedMemConfig(&shm));
    printf("shared mem config %d\n", (int)shm);
    SHOW(cudaFuncSetSharedMemConfig(small_kernel, cudaSharedMemBankSizeFourByte));
    SHOW(cudaGetLastError());

    SHOW(cudaProfilerStart());
    SHOW(cudaProfilerStop());
    SHOW(cudaProfilerStop());

    const char *name = nullptr;
    SHOW(cudaFuncGetName(&name, small_kernel));
    printf("name %s\n", name ? name : "(null)");
    SHOW(cudaFuncGetName(&name, (const void *)main));

    cudaFuncAttributes fa;
    SHOW(cudaFuncGetAttributes(&fa, tiled));
    printf("tiled: shared %zu, const %zu, local %zu, maxThreads %d, maxDynamicShared %d, carveout %d\n",
           fa.sharedSizeBytes, fa.constSizeBytes, fa.localSizeBytes, fa.maxThreadsPerBlock,
           fa.maxDynamicSharedSizeBytes, fa.preferredShmemCarveout);
    printf("device: tiled registers %d ptx %d binary %d\n", fa.numRegs, fa.ptxVersion, fa.binaryVersion);
    SHOW(cudaFuncGetAttributes(&fa, (const void *)main));
    SHOW(cudaGetLastError());
    SHOW(cudaFuncSetAttribute(tiled, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
    SHOW(cudaFuncSetAttribute(tiled, cudaFuncAttributeMaxDynamicSharedMemorySize, 1 << 20));
    SHOW(cudaFuncSetAttribute(tiled, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
    SHOW(cudaFuncSetAttribute(tiled, cudaFuncAttributePreferredSharedMemoryCarveout, 101));
    SHOW(cudaFuncGetAttributes(&fa, tiled));
    printf("tiled after: maxDynamicShared %d, carveout %d\n", fa.maxDynamicSharedSizeBytes, fa.preferredShmemCarveout);
    SHOW(cudaGetLastError());

    float *d;
    cudaMalloc(&d, 1024 * sizeof(float));
    tiled<<<1, 1024, 100 * 1024>>>(d);
    SHOW(cudaGetLastError());
    SHOW(cudaDeviceSynchronize());
    float h[1024];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("tiled: %g %g\n", h[0], h[1023]);

    // printf fifo and malloc heap take effect in kernels
    SHOW(cudaDeviceSetLimit(cudaLimitPrintfFifoSize, 1 << 20));
    cudaFree(d);
    printf("Result = PASS\n");
}
