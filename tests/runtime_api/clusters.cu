// Thread block clusters through cudaLaunchKernelEx's cluster dimension attribute.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void where(int *out) {
    unsigned rank, size;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    asm("mov.u32 %0, %%cluster_nctarank;" : "=r"(size));
    if (threadIdx.x == 0) out[blockIdx.x] = rank * 100 + size;
}

int main() {
    int *d, h[8];
    cudaMalloc(&d, sizeof h);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(8);
    cfg.blockDim = dim3(32);
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = 2;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    SHOW(cudaLaunchKernelEx(&cfg, where, d));
    SHOW(cudaDeviceSynchronize());
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 8; ++i) printf("block %d: rank %d of %d\n", i, h[i] / 100, h[i] % 100);
    attr.val.clusterDim.x = 3;         // 8 blocks do not split into clusters of 3
    SHOW(cudaLaunchKernelEx(&cfg, where, d));
    SHOW(cudaGetLastError());
    int clusters = 0;
    attr.val.clusterDim.x = 2;
    SHOW(cudaOccupancyMaxActiveClusters(&clusters, where, &cfg));
    printf("device: max active clusters %d\n", clusters);
    printf("Result = PASS\n");
}
