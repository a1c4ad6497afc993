// The stream-ordered allocator: cudaMallocAsync/cudaFreeAsync, the default pool, explicit pools
// and their attributes.
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void fill(int *p, int n, int v) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = v + i;
}

void show_pool(const char *when, cudaMemPool_t pool) {
    unsigned long long reserved, reserved_high, used, used_high, threshold;
    int follow, opportunistic, internal;
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &reserved_high);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &used_high);
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold);
    cudaMemPoolGetAttribute(pool, cudaMemPoolReuseFollowEventDependencies, &follow);
    cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &opportunistic);
    cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowInternalDependencies, &internal);
    printf("%s: reserved %llu (high %llu), used %llu (high %llu), threshold %llu, reuse %d%d%d\n", when,
           (unsigned long long)reserved, (unsigned long long)reserved_high, (unsigned long long)used,
           (unsigned long long)used_high, (unsigned long long)threshold, follow, opportunistic, internal);
}

int main() {
    const int n = 1 << 18;                     // 1 MiB of ints
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemPool_t pool, current;
    SHOW(cudaDeviceGetDefaultMemPool(&pool, 0));
    SHOW(cudaDeviceGetMemPool(&current, 0));
    printf("the current pool is the default: %d\n", pool == current);
    SHOW(cudaDeviceGetDefaultMemPool(&pool, 1));
    show_pool("start", pool);

    int *a = nullptr, *b = nullptr;
    SHOW(cudaMallocAsync((void **)&a, n * sizeof(int), s));
    fill<<<n / 256, 256, 0, s>>>(a, n, 5);
    show_pool("after cudaMallocAsync", pool);
    int h[4];
    SHOW(cudaMemcpyAsync(h, a + n - 4, sizeof h, cudaMemcpyDeviceToHost, s));
    SHOW(cudaFreeAsync(a, s));
    show_pool("after cudaFreeAsync", pool);
    SHOW(cudaStreamSynchronize(s));
    printf("values %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    show_pool("after synchronize (threshold 0 gives memory back)", pool);

    unsigned long long keep = UINT64_MAX;
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    SHOW(cudaMallocAsync((void **)&a, n * sizeof(int), s));
    SHOW(cudaFreeAsync(a, s));
    SHOW(cudaMallocAsync((void **)&b, n * sizeof(int), s));
    printf("a freed block is reused in stream order: %d\n", a == b);
    SHOW(cudaFreeAsync(b, s));
    SHOW(cudaStreamSynchronize(s));
    show_pool("threshold max, after synchronize", pool);
    SHOW(cudaMemPoolTrimTo(pool, 0));
    show_pool("after cudaMemPoolTrimTo(0)", pool);
    unsigned long long zero = 0, one = 1;
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &zero));
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemHigh, &zero));
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &one));
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &zero));
    SHOW(cudaMemPoolSetAttribute(pool, (cudaMemPoolAttr)42, &zero));
    show_pool("after resetting the high marks", pool);
    int off = 0;
    SHOW(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &off));
    show_pool("opportunistic reuse off", pool);

    // an explicit pool
    cudaMemPoolProps props = {};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t mine;
    SHOW(cudaMemPoolCreate(&mine, &props));
    show_pool("new pool", mine);
    int *c = nullptr;
    SHOW(cudaMallocFromPoolAsync((void **)&c, 3000, mine, s));
    fill<<<3, 256, 0, s>>>(c, 750, 100);
    SHOW(cudaMemcpyAsync(h, c + 746, sizeof h, cudaMemcpyDeviceToHost, s));
    SHOW(cudaStreamSynchronize(s));
    printf("values %d %d %d %d\n", h[0], h[1], h[2], h[3]);
    show_pool("new pool, 3000 bytes in use", mine);
    cudaMemAccessDesc desc = {};
    desc.location.type = cudaMemLocationTypeDevice;
    desc.location.id = 0;
    desc.flags = cudaMemAccessFlagsProtReadWrite;
    SHOW(cudaMemPoolSetAccess(mine, &desc, 1));
    cudaMemAccessFlags flags;
    cudaMemLocation loc = {};
    loc.type = cudaMemLocationTypeDevice;
    loc.id = 0;
    SHOW(cudaMemPoolGetAccess(&flags, mine, &loc));
    printf("access %d\n", (int)flags);
    desc.location.id = 1;
    SHOW(cudaMemPoolSetAccess(mine, &desc, 1));
    SHOW(cudaDeviceSetMemPool(0, mine));
    SHOW(cudaDeviceGetMemPool(&current, 0));
    printf("the current pool is the new one: %d\n", current == mine);
    int *d = nullptr;
    SHOW(cudaMallocAsync((void **)&d, 1000, s));
    SHOW(cudaFreeAsync(d, s));
    SHOW(cudaFreeAsync(c, s));
    SHOW(cudaStreamSynchronize(s));
    show_pool("new pool after frees", mine);
    SHOW(cudaDeviceSetMemPool(0, pool));
    SHOW(cudaMemPoolDestroy(mine));

    // misuse
    int x;
    SHOW(cudaFreeAsync(&x, s));
    SHOW(cudaGetLastError());
    SHOW(cudaMallocAsync(nullptr, 16, s));
    SHOW(cudaMemPoolDestroy(pool));
    props.location.id = 3;
    SHOW(cudaMemPoolCreate(&mine, &props));
    SHOW(cudaGetLastError());
    int *z = nullptr;
    SHOW(cudaMallocAsync((void **)&z, 0, s));
    printf("zero bytes gives a null pointer: %d\n", z == nullptr);
    SHOW(cudaMallocAsync((void **)&z, (size_t)1 << 50, s));
    SHOW(cudaGetLastError());
    // a pointer from cudaMalloc can be freed with cudaFreeAsync
    int *m;
    cudaMalloc(&m, 64);
    SHOW(cudaFreeAsync(m, s));
    SHOW(cudaStreamSynchronize(s));
    printf("Result = PASS\n");
}
