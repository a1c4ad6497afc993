/* cudalab's libcudart, continued: the driver API of a program written for it (included by driver.c).
 *
 * Contexts, modules loaded at run time, cuLaunchKernel and the cuMem* calls, each over the runtime's own
 * requests: one device, one runtime. A module image (PTX text, a fat binary, a cubin) goes to the server
 * (`module_load`, programs/server_modules.py), which reads its PTX (programs/images.py) and makes it an
 * emulator Program like the program's own; cuModuleGetFunction answers a Func entry of the runtime's table
 * (its `host` is the entry itself, its name `@module:kernel`), so cuLaunchKernel is the runtime's launch.
 *
 * NVRTC is NVIDIA's own (libnvrtc from the pip wheel, linked with -lnvrtc); the one function wrapped is
 * nvrtcGetCUBIN: a cubin is GPU machine code, so the shim keeps the PTX NVRTC made with it and sends that
 * PTX when the program loads the cubin.
 */
#include <dlfcn.h>

/* ------------------------------------------------------------------ contexts
 * One device, one set of memory and modules: a context is a token the program creates, pushes, pops and
 * destroys, checked as the driver checks it. With none pushed, the primary context is current (the
 * runtime made it so at its first call). */
static struct CUctx_st created_ctx[256];
static int ncreated_ctx;
static __thread CUcontext ctx_stack[64];
static __thread int ctx_depth;
static __thread int primary_unbound;   /* the thread popped or unset the primary context the runtime bound */

/* the runtime binds the primary context to each thread at its first call: the bottom of the stack */
static CUcontext current_ctx(void) { return ctx_depth ? ctx_stack[ctx_depth - 1] : primary_unbound ? NULL : PRIMARY; }
static int ctx_alive(CUcontext c) { return c && c->alive; }

CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev) {
    (void)params;
    if (!pctx) return CUDA_ERROR_INVALID_VALUE;
    if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
    if (ncreated_ctx == 256 || ctx_depth == 64) return CUDA_ERROR_OUT_OF_MEMORY;
    CUcontext c = &created_ctx[ncreated_ctx++];
    c->alive = 1, c->flags = flags;
    ctx_stack[ctx_depth++] = c;        /* a new context is current to the thread that made it */
    *pctx = c;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxDestroy(CUcontext ctx) {
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    if (!ctx_alive(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    cudaDeviceSynchronize();           /* its work finishes first */
    for (int i = 0; i < ctx_depth; i++)
        if (ctx_stack[i] == ctx) {
            memmove(&ctx_stack[i], &ctx_stack[i + 1], (size_t)(ctx_depth - i - 1) * sizeof *ctx_stack);
            ctx_depth--, i--;
        }
    if (ctx != PRIMARY) ctx->alive = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {
    if (!ctx_alive(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth == 64) return CUDA_ERROR_OUT_OF_MEMORY;
    ctx_stack[ctx_depth++] = ctx;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext *ctx) {
    CUcontext top = current_ctx();
    if (!top) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth) ctx_depth--;
    else primary_unbound = 1;
    if (ctx) *ctx = top;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSetCurrent(CUcontext ctx) {
    if (ctx && !ctx_alive(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    if (ctx_depth) {
        if (ctx) ctx_stack[ctx_depth - 1] = ctx;
        else ctx_depth--;
    } else if (ctx) {
        ctx_stack[ctx_depth++] = ctx;
    } else {
        primary_unbound = 1;           /* unbinds the thread's current context */
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext *ctx) {
    if (!ctx) return CUDA_ERROR_INVALID_VALUE;
    *ctx = current_ctx();              /* NULL: none bound */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetDevice(CUdevice *dev) {
    if (!dev) return CUDA_ERROR_INVALID_VALUE;
    if (!ctx_alive(current_ctx())) return CUDA_ERROR_INVALID_CONTEXT;
    *dev = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetFlags(unsigned int *flags) {
    if (!flags) return CUDA_ERROR_INVALID_VALUE;
    *flags = current_ctx()->flags;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetApiVersion(CUcontext ctx, unsigned int *version) {
    if (!version) return CUDA_ERROR_INVALID_VALUE;
    if (ctx && !ctx_alive(ctx)) return CUDA_ERROR_INVALID_CONTEXT;
    *version = 3020;                   /* what every context since CUDA 3.2 answers */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxSynchronize(void) { return cu(cudaDeviceSynchronize()); }
CUresult CUDAAPI cuCtxSetLimit(CUlimit limit, size_t value) { return cu(cudaDeviceSetLimit((enum cudaLimit)limit, value)); }
CUresult CUDAAPI cuCtxGetLimit(size_t *value, CUlimit limit) { return cu(cudaDeviceGetLimit(value, (enum cudaLimit)limit)); }
CUresult CUDAAPI cuCtxGetCacheConfig(CUfunc_cache *c) { return cu(cudaDeviceGetCacheConfig((enum cudaFuncCache *)c)); }
CUresult CUDAAPI cuCtxSetCacheConfig(CUfunc_cache c) { return cu(cudaDeviceSetCacheConfig((enum cudaFuncCache)c)); }
CUresult CUDAAPI cuCtxGetStreamPriorityRange(int *least, int *greatest) {
    return cu(cudaDeviceGetStreamPriorityRange(least, greatest));
}
CUresult CUDAAPI cuDevicePrimaryCtxReset(CUdevice dev) { return dev ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS; }
CUresult CUDAAPI cuDevicePrimaryCtxSetFlags(CUdevice dev, unsigned int flags) {
    if (dev) return CUDA_ERROR_INVALID_DEVICE;
    primary_ctx.flags = flags;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ devices (the rest of what deviceQueryDrv asks) */
CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev) {
    if (!major || !minor) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cu(cudaDeviceGetAttribute(major, cudaDevAttrComputeCapabilityMajor, dev));
    return r ? r : cu(cudaDeviceGetAttribute(minor, cudaDevAttrComputeCapabilityMinor, dev));
}

CUresult CUDAAPI cuDeviceGetProperties(CUdevprop *p, CUdevice dev) {
    struct cudaDeviceProp d;
    if (!p) return CUDA_ERROR_INVALID_VALUE;
    cudaError_t e = cudaGetDeviceProperties(&d, dev);
    if (e) return cu(e);
    p->maxThreadsPerBlock = d.maxThreadsPerBlock;
    memcpy(p->maxThreadsDim, d.maxThreadsDim, sizeof p->maxThreadsDim);
    memcpy(p->maxGridSize, d.maxGridSize, sizeof p->maxGridSize);
    p->sharedMemPerBlock = (int)d.sharedMemPerBlock;
    p->totalConstantMemory = (int)d.totalConstMem;
    p->SIMDWidth = d.warpSize;
    p->memPitch = (int)(d.memPitch > 0x7fffffff ? 0x7fffffff : d.memPitch);
    p->regsPerBlock = d.regsPerBlock;
    cudaDeviceGetAttribute(&p->clockRate, cudaDevAttrClockRate, dev);
    p->textureAlign = (int)d.textureAlignment;
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------ memory */
CUresult CUDAAPI cuMemAlloc(CUdeviceptr *p, size_t n) {
    if (!p || !n) return CUDA_ERROR_INVALID_VALUE;     /* the driver refuses 0 bytes, where cudaMalloc gives NULL */
    return cu(cudaMalloc((void **)p, n));
}

CUresult CUDAAPI cuMemAllocPitch(CUdeviceptr *p, size_t *pitch, size_t width, size_t height, unsigned int element) {
    if (!p || !pitch || !width || !height || (element != 4 && element != 8 && element != 16))
        return CUDA_ERROR_INVALID_VALUE;
    return cu(cudaMallocPitch((void **)p, pitch, width, height));
}

CUresult CUDAAPI cuMemGetInfo(size_t *free_, size_t *total) { return cu(cudaMemGetInfo(free_, total)); }
CUresult CUDAAPI cuMemHostAlloc(void **p, size_t n, unsigned int flags) { return cu(cudaHostAlloc(p, n, flags)); }
CUresult CUDAAPI cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags) {
    return cu(cudaHostGetDevicePointer((void **)d, p, flags));
}
CUresult CUDAAPI cuMemHostGetFlags(unsigned int *flags, void *p) { return cu(cudaHostGetFlags(flags, p)); }
CUresult CUDAAPI cuMemHostRegister(void *p, size_t n, unsigned int flags) { return cu(cudaHostRegister(p, n, flags)); }
CUresult CUDAAPI cuMemHostUnregister(void *p) { return cu(cudaHostUnregister(p)); }

static CUresult driver_copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, CUstream s, int sync) {
    return cu(sync ? cudaMemcpy(dst, src, n, kind) : cudaMemcpyAsync(dst, src, n, kind, (cudaStream_t)s));
}
CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return driver_copy(PTR(dst), PTR(src), n, cudaMemcpyDefault, 0, 1);
}
CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
    return driver_copy(PTR(dst), src, n, cudaMemcpyHostToDevice, 0, 1);
}
CUresult CUDAAPI cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
    return driver_copy(dst, PTR(src), n, cudaMemcpyDeviceToHost, 0, 1);
}
CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
    return driver_copy(PTR(dst), PTR(src), n, cudaMemcpyDeviceToDevice, 0, 1);
}
CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
    return driver_copy(PTR(dst), src, n, cudaMemcpyHostToDevice, s, 0);
}
CUresult CUDAAPI cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
    return driver_copy(dst, PTR(src), n, cudaMemcpyDeviceToHost, s, 0);
}
CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    return driver_copy(PTR(dst), PTR(src), n, cudaMemcpyDeviceToDevice, s, 0);
}

CUresult CUDAAPI cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p) {
    int code = rpc("address_range %p", PTR(p));
    if (code) return cu((cudaError_t)code);
    if (base) *base = (CUdeviceptr)R[1];
    if (size) *size = (size_t)R[2];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n) { return cu(cudaMemset(PTR(dst), value, n)); }
CUresult CUDAAPI cuMemsetD16(CUdeviceptr dst, unsigned short value, size_t n) { return memset_pattern(dst, value, 2, n, 0); }
CUresult CUDAAPI cuMemsetD32(CUdeviceptr dst, unsigned int value, size_t n) { return memset_pattern(dst, value, 4, n, 0); }

/* pitched memsets: rows of width elements, pitch bytes apart */
CUresult CUDAAPI cuMemsetD2D8(CUdeviceptr dst, size_t pitch, unsigned char value, size_t width, size_t height) {
    return cu(cudaMemset2D(PTR(dst), pitch, value, width, height));
}

static CUresult memset_rows(CUdeviceptr dst, size_t pitch, unsigned int value, size_t element, size_t width,
                            size_t height) {
    if (height > 1 && pitch < width * element) return CUDA_ERROR_INVALID_VALUE;
    for (size_t y = 0; y < height; y++) {
        CUresult r = memset_pattern(dst + y * pitch, value, element, width, 0);
        if (r) return r;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD2D16(CUdeviceptr dst, size_t pitch, unsigned short value, size_t width, size_t height) {
    return memset_rows(dst, pitch, value, 2, width, height);
}

CUresult CUDAAPI cuMemsetD2D32(CUdeviceptr dst, size_t pitch, unsigned int value, size_t width, size_t height) {
    return memset_rows(dst, pitch, value, 4, width, height);
}

/* ------------------------------------------------------------------ NVRTC's cubins carry their PTX here */
typedef struct { char *cubin; size_t size; char *ptx; } Cubin;
static Cubin cubins[256];
static int ncubins;
static pthread_mutex_t cubins_lock = PTHREAD_MUTEX_INITIALIZER;

typedef int (*nvrtc_size_fn)(void *, size_t *);
typedef int (*nvrtc_get_fn)(void *, char *);

/* NVRTC's own nvrtcGetCUBIN (the -lnvrtc library after the program), then its PTX of the same program kept */
int nvrtcGetCUBIN(void *prog, char *cubin) {
    nvrtc_get_fn real = (nvrtc_get_fn)dlsym(RTLD_NEXT, "nvrtcGetCUBIN");
    nvrtc_size_fn cubin_size = (nvrtc_size_fn)dlsym(RTLD_NEXT, "nvrtcGetCUBINSize");
    nvrtc_size_fn ptx_size = (nvrtc_size_fn)dlsym(RTLD_NEXT, "nvrtcGetPTXSize");
    nvrtc_get_fn get_ptx = (nvrtc_get_fn)dlsym(RTLD_NEXT, "nvrtcGetPTX");
    if (!real) return 11;              /* NVRTC_ERROR_INTERNAL_ERROR: no NVRTC linked */
    int r = real(prog, cubin);
    size_t n = 0, np = 0;
    if (r || !cubin || !cubin_size || !ptx_size || !get_ptx || cubin_size(prog, &n) || ptx_size(prog, &np)) return r;
    char *ptx = malloc(np + 1), *copy = malloc(n);
    if (!ptx || !copy || get_ptx(prog, ptx)) return free(ptx), free(copy), r;
    ptx[np] = 0;
    memcpy(copy, cubin, n);
    pthread_mutex_lock(&cubins_lock);
    if (ncubins == 256) {              /* the oldest goes */
        free(cubins[0].cubin), free(cubins[0].ptx);
        memmove(cubins, cubins + 1, sizeof cubins - sizeof *cubins);
        ncubins--;
    }
    cubins[ncubins++] = (Cubin){copy, n, ptx};
    pthread_mutex_unlock(&cubins_lock);
    return r;
}

/* The bytes of a module image: an ELF's extent from its header, a fat binary's from its own, else text */
static size_t image_size(const unsigned char *p) {
    if (!memcmp(p, "\177ELF", 4)) {
        uint64_t shoff, phoff;
        uint16_t phentsize, phnum, shentsize, shnum;
        memcpy(&phoff, p + 0x20, 8), memcpy(&shoff, p + 0x28, 8);
        memcpy(&phentsize, p + 0x36, 2), memcpy(&phnum, p + 0x38, 2);
        memcpy(&shentsize, p + 0x3a, 2), memcpy(&shnum, p + 0x3c, 2);
        size_t a = shoff + (size_t)shnum * shentsize, b = phoff + (size_t)phnum * phentsize;
        return a > b ? a : b;
    }
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == 0xBA55ED50u) {
        uint16_t header;
        uint64_t size;
        memcpy(&header, p + 6, 2), memcpy(&size, p + 8, 8);
        return header + size;
    }
    return strlen((const char *)p) + 1;
}

/* ------------------------------------------------------------------ modules: the handle is the server's number */
#define MODULE(m) ((unsigned long long)(uintptr_t)(m))

static CUresult load_image(CUmodule *mod, const void *image) {
    if (!mod || !image) return CUDA_ERROR_INVALID_VALUE;
    size_t n = image_size(image);
    const void *sent = image;
    pthread_mutex_lock(&cubins_lock);
    for (int i = 0; i < ncubins; i++)
        if (cubins[i].size == n && !memcmp(cubins[i].cubin, image, n)) {
            sent = cubins[i].ptx, n = strlen(cubins[i].ptx) + 1;
            break;
        }
    pthread_mutex_unlock(&cubins_lock);
    int code = rpc_blob(sent, n, "module_load");
    if (code) return cu((cudaError_t)code);
    *mod = (CUmodule)(uintptr_t)R[1];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleLoadData(CUmodule *mod, const void *image) { return load_image(mod, image); }
CUresult CUDAAPI cuModuleLoadFatBinary(CUmodule *mod, const void *image) { return load_image(mod, image); }

/* The JIT options' answers: no log, no time (the PTX is read, not compiled) */
CUresult CUDAAPI cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int n, CUjit_option *options,
                                    void **values) {
    if (n && (!options || !values)) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = load_image(mod, image);
    for (unsigned i = 0; i < n && !r; i++) {
        if (options[i] == CU_JIT_WALL_TIME) {
            float zero = 0;
            memcpy(&values[i], &zero, sizeof zero);
        } else if ((options[i] == CU_JIT_INFO_LOG_BUFFER || options[i] == CU_JIT_ERROR_LOG_BUFFER) && values[i]) {
            *(char *)values[i] = 0;
        } else if (options[i] == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES || options[i] == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) {
            values[i] = 0;
        }
    }
    return r;
}

/* A whole file, zero-terminated (a PTX image is text), in memory the caller frees; NULL if it cannot be
 * read to its end. ``size`` gets its length. (cuModuleLoad, cuLinkAddFile) */
static char *read_whole_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *bytes = n < 0 ? NULL : calloc(1, (size_t)n + 1);
    size_t got = bytes ? fread(bytes, 1, (size_t)n, f) : 0;
    fclose(f);
    if (bytes && got != (size_t)n) {
        free(bytes);
        return NULL;
    }
    *size = got;
    return bytes;
}

CUresult CUDAAPI cuModuleLoad(CUmodule *mod, const char *path) {
    if (!mod || !path) return CUDA_ERROR_INVALID_VALUE;
    size_t n;
    char *bytes = read_whole_file(path, &n);
    if (!bytes) {
        char msg[600];
        snprintf(msg, sizeof msg, "cudalab: cuModuleLoad: no file %s (relative paths start in the folder the program "
                 "runs in)", path);
        say_once(msg);
        return CUDA_ERROR_FILE_NOT_FOUND;
    }
    CUresult r = load_image(mod, bytes);
    free(bytes);
    return r;
}

CUresult CUDAAPI cuModuleUnload(CUmodule mod) {
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    int code = rpc("module_unload %llu", MODULE(mod));
    if (code) return cu((cudaError_t)code);
    char prefix[32];
    int k = snprintf(prefix, sizeof prefix, "@%llu:", MODULE(mod));
    for (int i = 0; i < nfuncs; i++)
        if (funcs[i].name && !strncmp(funcs[i].name, prefix, (size_t)k)) funcs[i].host = NULL;   /* its handles die */
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetFunction(CUfunction *fn, CUmodule mod, const char *name) {
    if (!fn || !name) return CUDA_ERROR_INVALID_VALUE;
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    int code = rpc("module_func %llu %s", MODULE(mod), name);
    if (code) return cu((cudaError_t)code);
    char key[600];
    snprintf(key, sizeof key, "@%llu:%s", MODULE(mod), name);
    for (int i = 0; i < nfuncs; i++)
        if (funcs[i].host && !strcmp(funcs[i].name, key)) {
            *fn = (CUfunction)funcs[i].host;
            return CUDA_SUCCESS;
        }
    if (nfuncs == 1024) return CUDA_ERROR_OUT_OF_MEMORY;
    Func *f = &funcs[nfuncs++];
    f->host = f;                       /* the handle: the runtime's launch finds it by this address */
    f->name = strdup(key);
    f->n = -1;
    *fn = (CUfunction)f->host;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule mod, const char *name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    if (!mod) return CUDA_ERROR_INVALID_HANDLE;
    int code = rpc("module_global %llu %s", MODULE(mod), name);
    if (code) return cu((cudaError_t)code);
    if (dptr) *dptr = (CUdeviceptr)R[1];
    if (bytes) *bytes = (size_t)R[2];
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuModuleGetLoadingMode(CUmoduleLoadingMode *mode) {
    if (!mode) return CUDA_ERROR_INVALID_VALUE;
    *mode = CU_MODULE_EAGER_LOADING;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncGetModule(CUmodule *mod, CUfunction f) {
    Func *fn = find_func(f);
    if (!mod) return CUDA_ERROR_INVALID_VALUE;
    if (!fn || fn->name[0] != '@') return CUDA_ERROR_INVALID_HANDLE;
    *mod = (CUmodule)(uintptr_t)strtoull(fn->name + 1, NULL, 10);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c) {
    return cu(cudaFuncSetCacheConfig((const void *)f, (enum cudaFuncCache)c));
}

/* ------------------------------------------------------------------ launches */
/* kernelParams (one pointer per parameter), or `extra`: CU_LAUNCH_PARAM_BUFFER_POINTER and _SIZE, the
 * parameters already packed as the kernel's parameter buffer */
static CUresult driver_launch(CUfunction f, dim3 g, dim3 b, unsigned shmem, CUstream s, void **params, void **extra,
                              const char *options) {
    Func *fn = find_func(f);
    if (!f || !fn) return CUDA_ERROR_INVALID_HANDLE;
    if (params && extra) return CUDA_ERROR_INVALID_VALUE;
    if (!extra) {
        if (!params) {
            int code = load_params(fn);
            if (code) return cu((cudaError_t)code);
            if (fn->n) return CUDA_ERROR_INVALID_VALUE;     /* parameters, and nothing to read them from */
        }
        return cu(launch(f, g, b, params, shmem, (cudaStream_t)s, options));
    }
    void *buffer = NULL;
    size_t size = 0;
    int has_size = 0;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i++) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) buffer = extra[++i];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) size = *(size_t *)extra[++i], has_size = 1;
        else return CUDA_ERROR_INVALID_VALUE;
    }
    if (!buffer || !has_size) return CUDA_ERROR_INVALID_VALUE;
    int code = load_params(fn);
    if (code) return cu((cudaError_t)code);
    size_t total = 0;
    for (int i = 0; i < fn->n; i++) total = (total + fn->align[i] - 1) / fn->align[i] * fn->align[i] + fn->size[i];
    if (size < total) return CUDA_ERROR_INVALID_VALUE;
    flush_printf();
    return cu((cudaError_t)rpc_blob(buffer, total, "launch %s %u %u %u %u %u %u %u %p %s", fn->name, g.x, g.y, g.z,
                                    b.x, b.y, b.z, shmem, (void *)s, options));
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shmem, CUstream s, void **params, void **extra) {
    return driver_launch(f, (dim3){gx, gy, gz}, (dim3){bx, by, bz}, shmem, s, params, extra, "");
}

CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                           unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params) {
    return driver_launch(f, (dim3){gx, gy, gz}, (dim3){bx, by, bz}, shmem, s, params, NULL, "cooperative=1");
}

/* the block size that gives the most resident threads per SM, as cudaOccupancyMaxPotentialBlockSize */
CUresult CUDAAPI cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f, CUoccupancyB2DSize smem,
                                                  size_t dynamic, int limit) {
    struct cudaFuncAttributes fa;
    int sms = 0;
    if (!min_grid || !block) return CUDA_ERROR_INVALID_VALUE;
    if (!find_func(f)) return CUDA_ERROR_INVALID_HANDLE;
    cudaError_t e = cudaFuncGetAttributes(&fa, (const void *)f);
    if (!e) e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    if (e) return cu(e);
    int top = fa.maxThreadsPerBlock, best = 0, best_blocks = 0;
    if (limit > 0 && limit < top) top = limit;
    for (int size = top / 32 * 32; size > 0; size -= 32) {
        int n = 0;
        size_t shared = smem ? smem(size) : dynamic;
        if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, (const void *)f, size, shared)) continue;
        if (n * size > best_blocks * best) best = size, best_blocks = n;
    }
    *block = best, *min_grid = best_blocks * sms;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t dynamic) {
    if (!find_func(f)) return CUDA_ERROR_INVALID_HANDLE;
    return cu(cudaOccupancyMaxActiveBlocksPerMultiprocessor(n, (const void *)f, block, dynamic));
}

/* ------------------------------------------------------------------ errors */
CUresult CUDAAPI cuGetErrorName(CUresult e, const char **name) {
    if (!name) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof DRIVER_ERRORS / sizeof *DRIVER_ERRORS; i++)
        if (DRIVER_ERRORS[i].code == (int)e) {
            *name = DRIVER_ERRORS[i].name;
            return CUDA_SUCCESS;
        }
    *name = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}
