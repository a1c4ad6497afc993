// Every device attribute and every cudaDeviceProp field, as the runtime reports them.
// tests/test_runtime_api.py compares these lines with what an H100 printed (tests/runtime_api/h100/).
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

int main() {
    // cudaDevAttr values run from 1 to 160 with gaps; a gap answers cudaErrorInvalidValue
    for (int a = 0; a <= 162; ++a) {
        int v = -7;
        cudaError_t e = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)a, 0);
        printf("attr %d: %s %d\n", a, cudaGetErrorName(e), e == cudaSuccess ? v : -7);
    }
    int v;
    SHOW(cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, 1));
    SHOW(cudaDeviceGetAttribute(&v, cudaDevAttrComputeMode, -1));
    SHOW(cudaDeviceGetAttribute(nullptr, cudaDevAttrComputeMode, 0));

    cudaDeviceProp p;
    SHOW(cudaGetDeviceProperties(&p, 1));
    SHOW(cudaGetDeviceProperties(&p, 0));
#define I(f) printf("prop " #f " = %lld\n", (long long)p.f);
#define A2(f) printf("prop " #f " = %d %d\n", p.f[0], p.f[1]);
#define A3(f) printf("prop " #f " = %d %d %d\n", p.f[0], p.f[1], p.f[2]);
    I(totalGlobalMem) I(sharedMemPerBlock) I(regsPerBlock) I(warpSize) I(memPitch) I(maxThreadsPerBlock)
    A3(maxThreadsDim) A3(maxGridSize) I(totalConstMem) I(major) I(minor) I(textureAlignment)
    I(texturePitchAlignment) I(multiProcessorCount) I(integrated) I(canMapHostMemory) I(maxTexture1D)
    I(maxTexture1DMipmap) A2(maxTexture2D) A2(maxTexture2DMipmap) A3(maxTexture2DLinear) A2(maxTexture2DGather)
    A3(maxTexture3D) A3(maxTexture3DAlt) I(maxTextureCubemap) A2(maxTexture1DLayered) A3(maxTexture2DLayered)
    A2(maxTextureCubemapLayered) I(maxSurface1D) A2(maxSurface2D) A3(maxSurface3D) A2(maxSurface1DLayered)
    A3(maxSurface2DLayered) I(maxSurfaceCubemap) A2(maxSurfaceCubemapLayered) I(surfaceAlignment)
    I(concurrentKernels) I(ECCEnabled) I(pciBusID) I(pciDeviceID) I(pciDomainID) I(tccDriver) I(asyncEngineCount)
    I(unifiedAddressing) I(memoryBusWidth) I(l2CacheSize) I(persistingL2CacheMaxSize) I(maxThreadsPerMultiProcessor)
    I(streamPrioritiesSupported) I(globalL1CacheSupported) I(localL1CacheSupported) I(sharedMemPerMultiprocessor)
    I(regsPerMultiprocessor) I(managedMemory) I(isMultiGpuBoard) I(multiGpuBoardGroupID)
    I(hostNativeAtomicSupported) I(pageableMemoryAccess) I(concurrentManagedAccess) I(computePreemptionSupported)
    I(canUseHostPointerForRegisteredMem) I(cooperativeLaunch) I(sharedMemPerBlockOptin)
    I(pageableMemoryAccessUsesHostPageTables) I(directManagedMemAccessFromHost) I(maxBlocksPerMultiProcessor)
    I(accessPolicyMaxWindowSize) I(reservedSharedMemPerBlock) I(hostRegisterSupported) I(sparseCudaArraySupported)
    I(hostRegisterReadOnlySupported) I(timelineSemaphoreInteropSupported) I(memoryPoolsSupported)
    I(gpuDirectRDMASupported) I(gpuDirectRDMAFlushWritesOptions) I(gpuDirectRDMAWritesOrdering)
    I(memoryPoolSupportedHandleTypes) I(deferredMappingCudaArraySupported) I(ipcEventSupported) I(clusterLaunch)
    I(unifiedFunctionPointers) I(deviceNumaConfig) I(deviceNumaId) I(mpsEnabled) I(hostNumaId) I(gpuPciDeviceID)
    I(gpuPciSubsystemID) I(hostNumaMultinodeIpcSupported) I(luidDeviceNodeMask)
    printf("device: prop name = %s\n", p.name);
    int count = -1, dev = -1;
    SHOW(cudaGetDeviceCount(&count));
    SHOW(cudaGetDevice(&dev));
    printf("count %d device %d\n", count, dev);
    SHOW(cudaSetDevice(1));
    SHOW(cudaSetDevice(0));
    int least, greatest;
    SHOW(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    printf("stream priorities %d..%d\n", least, greatest);
    printf("Result = PASS\n");
}
