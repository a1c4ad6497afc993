// cudaLaunchKernelEx with launch attributes, stream attributes (access policy window), the
// persisting L2 cache, and the occupancy API.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void add_one(int *p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] += 1;
}

__global__ void staged(int *p) {
    extern __shared__ int buf[];
    buf[threadIdx.x] = p[threadIdx.x];
    __syncthreads();
    p[threadIdx.x] = buf[blockDim.x - 1 - threadIdx.x];
}

int main() {
    const int n = 1024;
    int *d;
    cudaMalloc(&d, n * sizeof(int));
    cudaMemset(d, 0, n * sizeof(int));
    cudaStream_t s;
    cudaStreamCreate(&s);

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(n / 256);
    cfg.blockDim = dim3(256);
    cfg.stream = s;
    SHOW(cudaLaunchKernelEx(&cfg, add_one, d, n));
    cudaLaunchAttribute attrs[4];
    attrs[0].id = cudaLaunchAttributePriority;
    attrs[0].val.priority = -1;
    attrs[1].id = cudaLaunchAttributeCooperative;
    attrs[1].val.cooperative = 1;
    cfg.attrs = attrs;
    cfg.numAttrs = 2;
    SHOW(cudaLaunchKernelEx(&cfg, add_one, d, n));
    attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attrs[0].val.programmaticStreamSerializationAllowed = 1;
    cfg.numAttrs = 1;
    SHOW(cudaLaunchKernelEx(&cfg, add_one, d, n));
    void *args[] = {&d, (void *)&n};
    SHOW(cudaLaunchKernelExC(&cfg, (const void *)add_one, args));
    cfg.numAttrs = 0;
    cfg.blockDim = dim3(n);
    cfg.gridDim = dim3(1);
    cfg.dynamicSmemBytes = n * sizeof(int);
    SHOW(cudaLaunchKernelEx(&cfg, staged, d));
    SHOW(cudaStreamSynchronize(s));
    int h[n];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("after 4 increments and a reversal: %d %d\n", h[0], h[n - 1]);

    // misuse
    cfg.gridDim = dim3(0);
    SHOW(cudaLaunchKernelEx(&cfg, staged, d));
    cfg.gridDim = dim3(1);
    cfg.blockDim = dim3(2048);
    SHOW(cudaLaunchKernelEx(&cfg, staged, d));
    cfg.blockDim = dim3(256);
    cfg.dynamicSmemBytes = 0;
    attrs[0].id = cudaLaunchAttributeCooperative;
    attrs[0].val.cooperative = 1;
    cfg.numAttrs = 1;
    cfg.gridDim = dim3(100000);
    SHOW(cudaLaunchKernelEx(&cfg, add_one, d, n));
    SHOW(cudaGetLastError());
    SHOW(cudaLaunchKernelEx(&cfg, (void (*)(int *, int))nullptr, d, n));
    SHOW(cudaGetLastError());

    // stream attributes: the access policy window
    cudaStreamAttrValue v = {};
    v.accessPolicyWindow.base_ptr = d;
    v.accessPolicyWindow.num_bytes = n * sizeof(int);
    v.accessPolicyWindow.hitRatio = 0.6f;
    v.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    v.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    SHOW(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 1 << 20));
    SHOW(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    cudaStreamAttrValue got = {};
    SHOW(cudaStreamGetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &got));
    printf("window: %zu bytes, hit ratio %g, hit %d, miss %d, same base %d\n", got.accessPolicyWindow.num_bytes,
           got.accessPolicyWindow.hitRatio, (int)got.accessPolicyWindow.hitProp, (int)got.accessPolicyWindow.missProp,
           got.accessPolicyWindow.base_ptr == d);
    add_one<<<n / 256, 256, 0, s>>>(d, n);
    SHOW(cudaCtxResetPersistingL2Cache());
    v.accessPolicyWindow.num_bytes = (size_t)1 << 40;
    SHOW(cudaStreamSetAttribute(s, cudaStreamAttributeAccessPolicyWindow, &v));
    v.priority = 0;
    SHOW(cudaStreamGetAttribute(s, cudaStreamAttributePriority, &got));
    printf("priority %d\n", got.priority);
    SHOW(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &got));
    printf("sync policy %d\n", (int)got.syncPolicy);
    v.syncPolicy = cudaSyncPolicyBlockingSync;
    SHOW(cudaStreamSetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &v));
    SHOW(cudaStreamGetAttribute(s, cudaStreamAttributeSynchronizationPolicy, &got));
    printf("sync policy %d\n", (int)got.syncPolicy);
    SHOW(cudaStreamSynchronize(s));
    SHOW(cudaGetLastError());

    // occupancy
    int min_grid = 0, block = 0, blocks = 0;
    SHOW(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, add_one, 0, 0));
    printf("add_one: min grid %d, block %d\n", min_grid, block);
    SHOW(cudaOccupancyMaxPotentialBlockSize(&min_grid, &block, staged, 32 * 1024, 0));
    printf("staged with 32 KiB: min grid %d, block %d\n", min_grid, block);
    for (int threads = 32; threads <= 1024; threads *= 2) {
        SHOW(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, threads, 0));
        printf("add_one, %d threads: %d blocks per SM\n", threads, blocks);
    }
    SHOW(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, staged, 256, 100 * 1024));
    printf("staged, 256 threads, 100 KiB: %d blocks per SM\n", blocks);
    SHOW(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 0, 0));
    SHOW(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, add_one, 2048, 0));
    size_t smem = 0;
    for (int nb = 1; nb <= 4; ++nb) {
        SHOW(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, staged, nb, 256));
        printf("staged, %d blocks of 256: %zu bytes of dynamic shared memory each\n", nb, smem);
    }
    SHOW(cudaOccupancyAvailableDynamicSMemPerBlock(&smem, staged, 100, 256));
    printf("100 blocks: %zu\n", smem);
    SHOW(cudaGetLastError());
    printf("Result = PASS\n");
}
