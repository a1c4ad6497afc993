/* cudalab's libcudart, continued: the driver API entry points CCCL's host API reaches (included by cudart.c).
 *
 * CCCL 3 (`cuda::stream`, `cuda::launch`, `cuda::device_buffer`, memory pools) does not link the driver:
 * it dlopens libcuda.so.1, asks its cuGetProcAddress_v2 for each cu* function by name
 * (cuda/__driver/driver_api.h) and calls that. cudalab's libcuda.so.1 (shim/libcuda.c, beside this
 * library, found through the program's RUNPATH) forwards that one call here, and every function handed
 * out is a few lines over the runtime calls above: one implementation of streams, events, pools and
 * launches, whichever API a program uses. The driver's handles are the runtime's (CUstream is
 * cudaStream_t, CUfunction the host stub cudaGetFuncBySymbol gives), its enums the same numbers.
 * A name not in the table gets CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND and a line saying the driver API's
 * NAME is not emulated. cudaGetDriverEntryPoint(ByVersion) reads the same table.
 */
#include <cuda.h>
/* every driver function the shim defines is weak: a program that names its own (matrixMulDynlinkJIT's
 * function pointers called cuInit, cuMemAlloc, ... filled from dlsym) keeps its own */
#undef CUDAAPI
#define CUDAAPI __attribute__((weak))
#include "driver_errors.inc"   /* generated from cuda.h: the driver's error names (cuGetErrorName) */

/* CUresult and cudaError_t share their numbers, except the runtime's own codes for a bad function
 * or launch shape, which the driver calls an invalid handle or value */
static CUresult cu(cudaError_t e) {
    if (e == cudaErrorInvalidDeviceFunction) return CUDA_ERROR_INVALID_HANDLE;
    if (e == cudaErrorInvalidConfiguration) return CUDA_ERROR_INVALID_VALUE;
    return (CUresult)e;
}

/* one GPU, one primary context (the contexts a program creates: driver_modules.c) */
struct CUctx_st { int alive; unsigned flags; };
static struct CUctx_st primary_ctx = {1, 0};
#define PRIMARY (&primary_ctx)

CUresult CUDAAPI cuInit(unsigned int flags) { return flags ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS; }
CUresult CUDAAPI cuDriverGetVersion(int *v) { return cu(cudaDriverGetVersion(v)); }
CUresult CUDAAPI cuDeviceGetCount(int *n) { return cu(cudaGetDeviceCount(n)); }

CUresult CUDAAPI cuDeviceGet(CUdevice *dev, int ordinal) {
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
    *dev = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev) {
    struct cudaDeviceProp p;
    if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e) return cu(e);
    snprintf(name, (size_t)len, "%s", p.name);
    return CUDA_SUCCESS;
}

/* cuda.h names this cuDeviceTotalMem_v2 (a size_t since CUDA 3.2); deviceQueryDrv's first question */
CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev) {
    struct cudaDeviceProp p;
    if (!bytes) return CUDA_ERROR_INVALID_VALUE;
    cudaError_t e = cudaGetDeviceProperties(&p, dev);
    if (e) return cu(e);
    *bytes = p.totalGlobalMem;
    return CUDA_SUCCESS;
}

/* the driver's codes are the runtime's numbers (cu() above), so are their texts; a number the driver does not
 * define gets CUDA_ERROR_INVALID_VALUE and NULL, as the driver answers */
CUresult CUDAAPI cuGetErrorString(CUresult e, const char **text) {
    if (!text) return CUDA_ERROR_INVALID_VALUE;
    *text = cudaGetErrorString((cudaError_t)e);
    if (!strcmp(*text, cudaGetErrorString((cudaError_t)-1))) {
        *text = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice dev) {
    return cu(cudaDeviceGetAttribute(v, (enum cudaDeviceAttr)a, dev));
}

CUresult CUDAAPI cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
    return cu(cudaDeviceCanAccessPeer(can, dev, peer));
}

CUresult CUDAAPI cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice dev) {
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *ctx = PRIMARY;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDevicePrimaryCtxRelease(CUdevice dev) { return dev ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS; }

CUresult CUDAAPI cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active) {
    if (!flags || !active) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    *flags = 0;
    *active = 1;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ streams and events */
CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *s, unsigned int flags, int priority) {
    return cu(cudaStreamCreateWithPriority((cudaStream_t *)s, flags, priority));
}
CUresult CUDAAPI cuStreamDestroy(CUstream s) { return cu(cudaStreamDestroy((cudaStream_t)s)); }
CUresult CUDAAPI cuStreamSynchronize(CUstream s) { return cu(cudaStreamSynchronize((cudaStream_t)s)); }
CUresult CUDAAPI cuStreamQuery(CUstream s) { return cu(cudaStreamQuery((cudaStream_t)s)); }
CUresult CUDAAPI cuStreamGetPriority(CUstream s, int *p) { return cu(cudaStreamGetPriority((cudaStream_t)s, p)); }
CUresult CUDAAPI cuStreamGetId(CUstream s, unsigned long long *id) { return cu(cudaStreamGetId((cudaStream_t)s, id)); }
CUresult CUDAAPI cuStreamGetDevice(CUstream s, CUdevice *dev) { return cu(cudaStreamGetDevice((cudaStream_t)s, dev)); }

CUresult CUDAAPI cuStreamGetCtx(CUstream s, CUcontext *ctx) {
    (void)s;
    return cuCtxGetCurrent(ctx);
}

CUresult CUDAAPI cuStreamGetCtx_v2(CUstream s, CUcontext *ctx, CUgreenCtx *green) {
    if (green) *green = NULL;
    return cuStreamGetCtx(s, ctx);
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
    return cu(cudaStreamWaitEvent((cudaStream_t)s, (cudaEvent_t)e, flags));
}

CUresult CUDAAPI cuStreamAddCallback(CUstream s, CUstreamCallback fn, void *data, unsigned int flags) {
    return cu(cudaStreamAddCallback((cudaStream_t)s, (cudaStreamCallback_t)fn, data, flags));
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data) {
    return cu(cudaLaunchHostFunc((cudaStream_t)s, (cudaHostFn_t)fn, data));
}

CUresult CUDAAPI cuEventCreate(CUevent *e, unsigned int flags) { return cu(cudaEventCreateWithFlags((cudaEvent_t *)e, flags)); }
CUresult CUDAAPI cuEventRecord(CUevent e, CUstream s) { return cu(cudaEventRecord((cudaEvent_t)e, (cudaStream_t)s)); }
CUresult CUDAAPI cuEventSynchronize(CUevent e) { return cu(cudaEventSynchronize((cudaEvent_t)e)); }
CUresult CUDAAPI cuEventQuery(CUevent e) { return cu(cudaEventQuery((cudaEvent_t)e)); }
CUresult CUDAAPI cuEventDestroy(CUevent e) { return cu(cudaEventDestroy((cudaEvent_t)e)); }

CUresult CUDAAPI cuEventElapsedTime(float *ms, CUevent start, CUevent end) {
    return cu(cudaEventElapsedTime(ms, (cudaEvent_t)start, (cudaEvent_t)end));
}

/* ------------------------------------------------------------------ memory */
#define PTR(d) ((void *)(uintptr_t)(d))

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return cu(cudaMemcpyAsync(PTR(dst), PTR(src), n, cudaMemcpyDefault, (cudaStream_t)s));
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream s) {
    return cu(cudaMemsetAsync(PTR(dst), value, n, (cudaStream_t)s));
}

/* A 16- or 32-bit pattern: written by the host, in the stream's order, into the arena both sides map. */
static CUresult memset_pattern(CUdeviceptr dst, unsigned int value, size_t width, size_t n, CUstream s) {
    if (n == 0) return CUDA_SUCCESS;
    if (dst % width) return CUDA_ERROR_INVALID_VALUE;
    if (!in_arena(PTR(dst), n * width)) return CUDA_ERROR_INVALID_VALUE;
    cudaError_t e = cudaStreamSynchronize((cudaStream_t)s);
    if (e) return cu(e);
    for (size_t i = 0; i < n; i++) memcpy((char *)PTR(dst) + i * width, &value, width);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n, CUstream s) {
    return memset_pattern(dst, value, 2, n, s);
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dst, unsigned int value, size_t n, CUstream s) {
    return memset_pattern(dst, value, 4, n, s);
}

CUresult CUDAAPI cuMemAllocHost(void **p, size_t n) { return cu(cudaMallocHost(p, n)); }
CUresult CUDAAPI cuMemFreeHost(void *p) { return cu(cudaFreeHost(p)); }
CUresult CUDAAPI cuMemFree(CUdeviceptr p) { return cu(cudaFree(PTR(p))); }

CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned int flags) {
    return cu(cudaMallocManaged((void **)p, n, flags));
}

CUresult CUDAAPI cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s) {
    return cu(cudaMallocFromPoolAsync((void **)p, n, (cudaMemPool_t)pool, (cudaStream_t)s));
}

CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr p, CUstream s) { return cu(cudaFreeAsync(PTR(p), (cudaStream_t)s)); }

/* the pool structs and enums are the runtime's, field for field */
_Static_assert(sizeof(CUmemPoolProps) == sizeof(struct cudaMemPoolProps), "pool properties differ");
_Static_assert(sizeof(CUmemAccessDesc) == sizeof(struct cudaMemAccessDesc), "access descriptors differ");

CUresult CUDAAPI cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
    return cu(cudaMemPoolCreate((cudaMemPool_t *)pool, (const struct cudaMemPoolProps *)props));
}
CUresult CUDAAPI cuMemPoolDestroy(CUmemoryPool pool) { return cu(cudaMemPoolDestroy((cudaMemPool_t)pool)); }

CUresult CUDAAPI cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
    return cu(cudaMemPoolSetAttribute((cudaMemPool_t)pool, (enum cudaMemPoolAttr)a, v));
}

CUresult CUDAAPI cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
    return cu(cudaMemPoolGetAttribute((cudaMemPool_t)pool, (enum cudaMemPoolAttr)a, v));
}

CUresult CUDAAPI cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t count) {
    return cu(cudaMemPoolSetAccess((cudaMemPool_t)pool, (const struct cudaMemAccessDesc *)map, count));
}

CUresult CUDAAPI cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *where) {
    return cu(cudaMemPoolGetAccess((enum cudaMemAccessFlags *)flags, (cudaMemPool_t)pool,
                                   (struct cudaMemLocation *)where));
}

CUresult CUDAAPI cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) { return cu(cudaMemPoolTrimTo((cudaMemPool_t)pool, keep)); }

CUresult CUDAAPI cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev) {
    return cu(cudaDeviceGetDefaultMemPool((cudaMemPool_t *)pool, dev));
}

CUresult CUDAAPI cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) {
    return cu(cudaDeviceGetMemPool((cudaMemPool_t *)pool, dev));
}

CUresult CUDAAPI cuMemGetDefaultMemPool(CUmemoryPool *pool, CUmemLocation *where, CUmemAllocationType type) {
    if (!where || type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
    if (where->type != CU_MEM_LOCATION_TYPE_DEVICE) {
        say_once("cudalab: only the device's default memory pool is emulated (cuMemGetDefaultMemPool of a host "
                 "location is not supported)");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    return cuDeviceGetDefaultMemPool(pool, where->id);
}

/* ------------------------------------------------------------------ kernels: CUfunction is the host stub */
CUresult CUDAAPI cuFuncLoad(CUfunction f) { return find_func(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

CUresult CUDAAPI cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f) {
    struct cudaFuncAttributes fa;
    if (!v) return CUDA_ERROR_INVALID_VALUE;
    cudaError_t e = cudaFuncGetAttributes(&fa, f);
    if (e) return cu(e);
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = fa.maxThreadsPerBlock; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = (int)fa.sharedSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *v = (int)fa.constSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *v = (int)fa.localSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = fa.numRegs; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION: *v = fa.ptxVersion; break;
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *v = fa.binaryVersion; break;
    case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *v = fa.cacheModeCA; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = fa.maxDynamicSharedSizeBytes; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *v = fa.preferredShmemCarveout; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: *v = fa.clusterDimMustBeSet; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH: *v = fa.requiredClusterWidth; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT: *v = fa.requiredClusterHeight; break;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH: *v = fa.requiredClusterDepth; break;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *v = fa.nonPortableClusterSizeAllowed; break;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: *v = fa.clusterSchedulingPolicyPreference; break;
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

/* CU_FUNC_ATTRIBUTE_* from MAX_DYNAMIC_SHARED_SIZE_BYTES on are cudaFuncAttribute's numbers */
CUresult CUDAAPI cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int value) {
    if (a < CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_INVALID_VALUE;   /* read-only */
    return cu(cudaFuncSetAttribute(f, (enum cudaFuncAttribute)a, value));
}

_Static_assert(sizeof(CUlaunchAttribute) == sizeof(cudaLaunchAttribute), "launch attributes differ");
_Static_assert(sizeof(CUlaunchAttributeValue) == sizeof(cudaLaunchAttributeValue), "launch attribute values differ");

static CUresult driver_launch(CUfunction f, dim3 g, dim3 b, unsigned shmem, CUstream s, void **params, void **extra,
                              const char *options);   /* driver_modules.c */

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **params, void **extra) {
    if (!config) return CUDA_ERROR_INVALID_VALUE;
    cudaLaunchAttribute attrs[32];
    if (config->numAttrs > 32) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < config->numAttrs; i++) {       /* the same ids, the same value union */
        attrs[i].id = (cudaLaunchAttributeID)config->attrs[i].id;
        memcpy(&attrs[i].val, &config->attrs[i].value, sizeof attrs[i].val);
    }
    cudaLaunchConfig_t c = {
        .gridDim = {config->gridDimX, config->gridDimY, config->gridDimZ},
        .blockDim = {config->blockDimX, config->blockDimY, config->blockDimZ},
        .dynamicSmemBytes = config->sharedMemBytes, .stream = (cudaStream_t)config->hStream,
        .attrs = attrs, .numAttrs = config->numAttrs,
    };
    if (extra) {                  /* the parameters packed in one buffer: sent as they are, with the attributes */
        char opts[1024];
        launch_options(&c, opts, sizeof opts);
        return driver_launch(f, c.gridDim, c.blockDim, (unsigned)c.dynamicSmemBytes, config->hStream, params, extra,
                             opts);
    }
    return cu(cudaLaunchKernelExC(&c, (const void *)f, params));
}

#include "driver_modules.c"   /* contexts, modules, cuLaunchKernel, cuMem*, NVRTC's cubins */
#include "driver_memory.c"    /* arrays, texture objects, virtual memory management */
#include "driver_legacy.c"    /* CUDA 3's launch API, cuCtxCreate_v2, the PTX linker (cuLink*) */
#include "driver_fallbacks.inc"   /* generated: every other driver call answers CUDA_ERROR_NOT_SUPPORTED */
#include "driver_symbols.inc"     /* generated: DRIVER_SYMBOLS, every one of them by its symbol */

/* called by shim/libcuda.c when a program dlopens it: the function libcuda.so.1 exports as `symbol`
 * (cuMemAlloc_v2, cuCtxCreate_v2, cuInit, ...), or NULL (build.py exports the program's cudalab_* names) */
void *cudalab_driver_symbol(const char *symbol) {
    for (size_t i = 0; i < sizeof DRIVER_SYMBOLS / sizeof *DRIVER_SYMBOLS; i++)
        if (!strcmp(DRIVER_SYMBOLS[i].symbol, symbol)) return DRIVER_SYMBOLS[i].fn;
    return NULL;
}

/* ------------------------------------------------------------------ cuGetProcAddress */
#define ENTRY(name) {#name, 0, (void *)name}                 /* #name: CCCL's spelling, before cuda.h's _v2 */
static const struct { const char *name; int since; void *fn; } DRIVER[] = {
    ENTRY(cuInit), ENTRY(cuDriverGetVersion), ENTRY(cuDeviceGet), ENTRY(cuDeviceGetCount), ENTRY(cuDeviceGetName),
    ENTRY(cuDeviceGetAttribute), ENTRY(cuDeviceTotalMem), ENTRY(cuGetErrorString), ENTRY(cuDeviceCanAccessPeer), ENTRY(cuDevicePrimaryCtxRetain),
    ENTRY(cuDevicePrimaryCtxRelease), ENTRY(cuDevicePrimaryCtxGetState), ENTRY(cuCtxPushCurrent),
    ENTRY(cuCtxPopCurrent), ENTRY(cuCtxGetCurrent), ENTRY(cuCtxGetDevice), ENTRY(cuStreamCreateWithPriority),
    ENTRY(cuStreamDestroy), ENTRY(cuStreamSynchronize), ENTRY(cuStreamQuery), ENTRY(cuStreamGetPriority),
    ENTRY(cuStreamGetId), ENTRY(cuStreamGetDevice), ENTRY(cuStreamGetCtx),
    {"cuStreamGetCtx", 12050, (void *)cuStreamGetCtx_v2},   /* CUDA 12.5 added the green context */
    ENTRY(cuStreamWaitEvent), ENTRY(cuStreamAddCallback), ENTRY(cuLaunchHostFunc), ENTRY(cuEventCreate),
    ENTRY(cuEventRecord), ENTRY(cuEventSynchronize), ENTRY(cuEventQuery), ENTRY(cuEventDestroy),
    ENTRY(cuEventElapsedTime), ENTRY(cuMemcpyAsync), ENTRY(cuMemsetD8Async), ENTRY(cuMemsetD16Async),
    ENTRY(cuMemsetD32Async), ENTRY(cuMemAllocHost), ENTRY(cuMemFreeHost), ENTRY(cuMemFree), ENTRY(cuMemAllocManaged),
    ENTRY(cuMemAllocFromPoolAsync), ENTRY(cuMemFreeAsync), ENTRY(cuMemPoolCreate), ENTRY(cuMemPoolDestroy),
    ENTRY(cuMemPoolSetAttribute), ENTRY(cuMemPoolGetAttribute), ENTRY(cuMemPoolSetAccess), ENTRY(cuMemPoolGetAccess),
    ENTRY(cuMemPoolTrimTo), ENTRY(cuDeviceGetDefaultMemPool), ENTRY(cuDeviceGetMemPool), ENTRY(cuMemGetDefaultMemPool),
    ENTRY(cuFuncLoad), ENTRY(cuFuncGetAttribute), ENTRY(cuFuncSetAttribute), ENTRY(cuLaunchKernelEx),
    /* a driver-API program's (driver_modules.c, driver_memory.c) */
    ENTRY(cuCtxCreate), ENTRY(cuCtxDestroy), ENTRY(cuCtxSetCurrent), ENTRY(cuCtxGetFlags), ENTRY(cuCtxGetApiVersion),
    ENTRY(cuCtxSynchronize), ENTRY(cuCtxSetLimit), ENTRY(cuCtxGetLimit), ENTRY(cuCtxGetCacheConfig),
    ENTRY(cuCtxSetCacheConfig), ENTRY(cuCtxGetStreamPriorityRange), ENTRY(cuDevicePrimaryCtxReset),
    ENTRY(cuDevicePrimaryCtxSetFlags), ENTRY(cuDeviceComputeCapability), ENTRY(cuDeviceGetProperties),
    ENTRY(cuMemAlloc), ENTRY(cuMemAllocPitch), ENTRY(cuMemGetInfo), ENTRY(cuMemHostAlloc),
    ENTRY(cuMemHostGetDevicePointer), ENTRY(cuMemHostGetFlags), ENTRY(cuMemHostRegister), ENTRY(cuMemHostUnregister),
    ENTRY(cuMemcpy), ENTRY(cuMemcpyHtoD), ENTRY(cuMemcpyDtoH), ENTRY(cuMemcpyDtoD), ENTRY(cuMemcpyHtoDAsync),
    ENTRY(cuMemcpyDtoHAsync), ENTRY(cuMemcpyDtoDAsync), ENTRY(cuMemsetD8), ENTRY(cuMemsetD16), ENTRY(cuMemsetD32), ENTRY(cuMemGetAddressRange), ENTRY(cuMemsetD2D8), ENTRY(cuMemsetD2D16),
    ENTRY(cuMemsetD2D32),
    ENTRY(cuModuleLoad), ENTRY(cuModuleLoadData), ENTRY(cuModuleLoadDataEx), ENTRY(cuModuleLoadFatBinary),
    ENTRY(cuModuleUnload), ENTRY(cuModuleGetFunction), ENTRY(cuModuleGetGlobal), ENTRY(cuModuleGetLoadingMode),
    ENTRY(cuFuncGetModule), ENTRY(cuFuncSetCacheConfig), ENTRY(cuLaunchKernel), ENTRY(cuLaunchCooperativeKernel),
    ENTRY(cuOccupancyMaxPotentialBlockSize), ENTRY(cuOccupancyMaxActiveBlocksPerMultiprocessor), ENTRY(cuGetErrorName),
    ENTRY(cuArrayCreate), ENTRY(cuArray3DCreate), ENTRY(cuArrayDestroy), ENTRY(cuArrayGetDescriptor), ENTRY(cuMemcpy2D),
    ENTRY(cuMemcpy2DUnaligned), ENTRY(cuMemcpy2DAsync), ENTRY(cuMemcpyHtoA), ENTRY(cuMemcpyAtoH),
    ENTRY(cuTexObjectCreate), ENTRY(cuTexObjectDestroy), ENTRY(cuMemGetAllocationGranularity),
    ENTRY(cuMemAddressReserve), ENTRY(cuMemAddressFree), ENTRY(cuMemCreate), ENTRY(cuMemRelease), ENTRY(cuMemMap),
    ENTRY(cuMemUnmap), ENTRY(cuMemSetAccess), ENTRY(cuMemGetAccess), ENTRY(cuMemGetAllocationPropertiesFromHandle),
    ENTRY(cuMemRetainAllocationHandle), ENTRY(cuLinkCreate), ENTRY(cuLinkAddData), ENTRY(cuLinkAddFile),
    ENTRY(cuLinkComplete), ENTRY(cuLinkDestroy),
};

/* the entry point of `name` for a program built against CUDA `version` (1000 * major + 10 * minor), or NULL */
static void *driver_entry(const char *name, int version) {
    void *found = NULL;
    int since = -1;
    for (size_t i = 0; i < sizeof DRIVER / sizeof DRIVER[0]; i++)
        if (!strcmp(DRIVER[i].name, name) && DRIVER[i].since <= version && DRIVER[i].since > since) {
            found = DRIVER[i].fn;
            since = DRIVER[i].since;
        }
    if (!found) {
        char msg[300];
        snprintf(msg, sizeof msg, "cudalab: the CUDA driver API's %s is not emulated (cudalab answers contexts, modules, "
                 "launches, memory, streams, events and textures, not graphics interop or IPC)", name);
        say_once(msg);
    }
    return found;
}

/* called by shim/libcuda.c's cuGetProcAddress_v2: exported from the program (build.py links it -Wl,--dynamic-list) */
CUresult cudalab_driver_entry_point(const char *name, void **fn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status) {
    (void)flags;     /* per-thread default stream variants: the shim's functions take the stream they are given */
    if (!name || !fn) return CUDA_ERROR_INVALID_VALUE;
    *fn = driver_entry(name, version);
    if (status) *status = *fn ? CU_GET_PROC_ADDRESS_SUCCESS : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    return *fn ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

CUresult CUDAAPI cuGetProcAddress(const char *name, void **fn, int version, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *status) {
    return cudalab_driver_entry_point(name, fn, version, flags, status);
}

cudaError_t cudaGetDriverEntryPointByVersion(const char *name, void **fn, unsigned int version,
                                             unsigned long long flags, enum cudaDriverEntryPointQueryResult *status) {
    (void)flags;
    if (!name || !fn) return ret(cudaErrorInvalidValue);
    *fn = driver_entry(name, (int)version);
    if (status) *status = *fn ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
    return cudaSuccess;
}

cudaError_t cudaGetDriverEntryPoint(const char *name, void **fn, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *status) {
    return cudaGetDriverEntryPointByVersion(name, fn, CUDART_VERSION, flags, status);
}
