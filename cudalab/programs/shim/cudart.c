/* cudalab's libcudart: the CUDA runtime API of a whole program, answered by the emulator.
 *
 * The GPGPU-Sim approach: nvcc compiles the student's program as usual and the executable is
 * linked against this library instead of NVIDIA's libcudart. Device memory is a shared arena
 * (a memfd the Python side also maps) placed at the emulator's own device addresses, so device
 * pointers are the same numbers on both sides, copies are plain memcpy here, and managed or
 * pinned memory can be read by the host and the kernels alike. Everything else (allocation
 * table, launches, streams, events, properties) is a small request to the emulator over the
 * socket inherited in CUDALAB_FD:  u32 length | header text | '\0' | bytes.
 *
 * Built by cudalab/programs/build.py with the system C compiler against the CUDA headers of the
 * nvidia-cuda-runtime wheel, so every signature here is checked against NVIDIA's declarations.
 */
#define _GNU_SOURCE
#include <cuda_runtime_api.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "errors.inc"   /* generated from cudalab/programs/errors.py: {code, name, text} */

/* ------------------------------------------------------------------ connection to the emulator */
static int sock = -1;
static char *arena;
static size_t arena_size;

static void die(const char *msg) {
    fflush(stdout);
    fprintf(stderr, "cudalab: %s\n", msg);
    _exit(99);
}

static void connect_emulator(void) {
    if (sock >= 0) return;
    const char *fd = getenv("CUDALAB_FD"), *afd = getenv("CUDALAB_ARENA_FD");
    const char *base = getenv("CUDALAB_ARENA_BASE"), *size = getenv("CUDALAB_ARENA_SIZE");
    if (!fd || !afd || !base || !size)
        die("this program was linked against cudalab's emulated CUDA runtime; run it with "
            "`cudalab run prog.cu` (or a %%cuda cell), which starts the emulator it talks to.");
    sock = atoi(fd);
    arena_size = strtoull(size, 0, 0);
    void *want = (void *)strtoull(base, 0, 0);
    arena = mmap(want, arena_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED_NOREPLACE, atoi(afd), 0);
    if (arena != want && !getenv("CUDALAB_REEXEC")) {
        /* a library landed on the arena's addresses: start again with a fresh random layout */
        static char buf[1 << 16];
        char *argv[256];
        int n = 0;
        FILE *f = fopen("/proc/self/cmdline", "rb");
        size_t len = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f) fclose(f);
        for (size_t i = 0; i < len && n < 255; i += strlen(buf + i) + 1) argv[n++] = buf + i;
        argv[n] = 0;
        setenv("CUDALAB_REEXEC", "1", 1);
        if (n) execv("/proc/self/exe", argv);
    }
    if (arena != want)
        die("could not map the emulated device memory at its address (address space randomization?); "
            "try again, or report this with your system's details.");
}

static int in_arena(const void *p, size_t n) {
    return (const char *)p >= arena && (const char *)p + n <= arena + arena_size && n <= arena_size;
}

static void send_all(const void *p, size_t n) {
    while (n) {
        ssize_t k = write(sock, p, n);
        if (k <= 0) die("lost the connection to the emulator.");
        p = (const char *)p + k, n -= (size_t)k;
    }
}

static void recv_all(void *p, size_t n) {
    while (n) {
        ssize_t k = read(sock, p, n);
        if (k <= 0) die("lost the connection to the emulator.");
        p = (char *)p + k, n -= (size_t)k;
    }
}

/* The last reply: its numbers and its bytes (printf text, a message, device properties). */
static unsigned long long R[64];
static int NR;
static char *RB;
static size_t RBN;

static int rpc_blob(const void *blob, size_t bloblen, const char *fmt, ...) {
    connect_emulator();
    char head[512];
    va_list ap;
    va_start(ap, fmt);
    int h = vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    uint32_t len = (uint32_t)(h + 1 + bloblen);
    send_all(&len, 4);
    send_all(head, (size_t)h + 1);
    if (bloblen) send_all(blob, bloblen);
    recv_all(&len, 4);
    free(RB);
    RB = malloc(len + 1);
    recv_all(RB, len);
    RB[len] = 0;
    size_t hl = strlen(RB);
    RBN = len > hl ? len - hl - 1 : 0;
    char *s = RB, *e;
    NR = 0;
    while (NR < 64) {
        unsigned long long v = strtoull(s, &e, 0);
        if (e == s) break;
        R[NR++] = v, s = e;
    }
    memmove(RB, RB + (len > hl ? hl + 1 : hl), RBN);
    RB[RBN] = 0;
    return NR ? (int)R[0] : (int)cudaErrorUnknown;
}
#define rpc(...) rpc_blob(0, 0, __VA_ARGS__)

/* ------------------------------------------------------------------ errors */
static cudaError_t last_error = cudaSuccess;

static cudaError_t ret(int code) {
    if (code) last_error = (cudaError_t)code;
    return (cudaError_t)code;
}

const char *cudaGetErrorString(cudaError_t e) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == (int)e) return ERRORS[i].text;
    return "unrecognized error code";
}

const char *cudaGetErrorName(cudaError_t e) {
    for (size_t i = 0; i < sizeof ERRORS / sizeof *ERRORS; i++)
        if (ERRORS[i].code == (int)e) return ERRORS[i].name;
    return "cudaErrorUnknown";
}

cudaError_t cudaGetLastError(void) {
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e ? e : (cudaError_t)rpc("last_error");   /* a sticky (kernel) error stays */
}

cudaError_t cudaPeekAtLastError(void) {
    if (last_error) return last_error;
    return (cudaError_t)rpc("last_error");
}

/* ------------------------------------------------------------------ device printf */
/* Kernels' printf text comes back with each launch; like the GPU's printf buffer it is written
 * out at the next synchronization point, through stdio so it keeps its place among the host's
 * own printf lines. */
static char *pending;
static size_t npending;

static void flush_printf(void) {
    if (!npending) return;
    fwrite(pending, 1, npending, stdout);
    fflush(stdout);
    npending = 0;
}

static void at_exit(void) { flush_printf(); }

static int synced(int code) {
    flush_printf();
    return code;
}

/* ------------------------------------------------------------------ registration (nvcc's hidden calls) */
typedef struct { const void *host; char *name; int n; int size[64], align[64]; } Func;
static Func funcs[1024];
static int nfuncs;

typedef struct { const void *host; unsigned long long dev; size_t size; } Var;
static Var vars[1024];
static int nvars;

void **__cudaRegisterFatBinary(void *fatCubin) {
    static int hooked;
    if (!hooked) atexit(at_exit), hooked = 1;
    return (void **)fatCubin;
}

void __cudaRegisterFatBinaryEnd(void **h) { (void)h; }
void __cudaUnregisterFatBinary(void **h) { (void)h; }
char __cudaInitModule(void **h) { (void)h; return 1; }

void __cudaRegisterFunction(void **h, const char *hostFun, char *deviceFun, const char *deviceName,
                            int thread_limit, void *tid, void *bid, void *bDim, void *gDim, int *wSize) {
    (void)h, (void)deviceFun, (void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
    if (nfuncs == 1024) die("too many kernels in one program (the limit is 1024).");
    Func *f = &funcs[nfuncs++];
    f->host = hostFun;
    f->name = strdup(deviceName);
    f->n = -1;   /* parameter layout asked for at the first launch */
    rpc("func %p %s", (const void *)hostFun, deviceName);
}

static void register_var(const void *host, const char *name, size_t size, int managed) {
    if (nvars == 1024) die("too many __device__ variables in one program (the limit is 1024).");
    if (rpc("var %p %s %zu %d", host, name, size, managed) == 0) {
        vars[nvars].host = host, vars[nvars].dev = R[1], vars[nvars].size = size;
        nvars++;
    }
}

void __cudaRegisterVar(void **h, char *hostVar, char *deviceAddress, const char *deviceName,
                       int ext, size_t size, int constant, int global) {
    (void)h, (void)deviceAddress, (void)ext, (void)constant, (void)global;
    register_var(hostVar, deviceName, size, 0);
}

void __cudaRegisterManagedVar(void **h, void **hostVarPtrAddress, char *deviceAddress, const char *deviceName,
                              int ext, size_t size, int constant, int global) {
    (void)h, (void)deviceAddress, (void)ext, (void)constant, (void)global;
    register_var(hostVarPtrAddress, deviceName, size, 1);
    if (nvars && vars[nvars - 1].host == hostVarPtrAddress)
        *hostVarPtrAddress = (void *)vars[nvars - 1].dev;   /* the host reads it through this pointer */
}

static Func *find_func(const void *host) {
    for (int i = 0; i < nfuncs; i++)
        if (funcs[i].host == host) return &funcs[i];
    return 0;
}

static Var *find_var(const void *host) {
    for (int i = 0; i < nvars; i++)
        if (vars[i].host == host) return &vars[i];
    return 0;
}

/* ------------------------------------------------------------------ launches */
typedef struct { dim3 grid, block; size_t shmem; cudaStream_t stream; } Config;
static Config configs[64];
static int nconfigs;

unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem, struct CUstream_st *stream) {
    if (nconfigs == 64) return 1;
    configs[nconfigs++] = (Config){gridDim, blockDim, sharedMem, stream};
    return 0;
}

cudaError_t __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim, size_t *sharedMem, void *stream) {
    if (!nconfigs) return cudaErrorMissingConfiguration;
    Config c = configs[--nconfigs];
    *gridDim = c.grid, *blockDim = c.block, *sharedMem = c.shmem;
    *(cudaStream_t *)stream = c.stream;
    return cudaSuccess;
}

cudaError_t __cudaGetKernel(cudaKernel_t *kernel, const void *func) {
    *kernel = (cudaKernel_t)func;   /* the host stub's address names the kernel */
    return cudaSuccess;
}

static cudaError_t launch(const char *how, const void *func, dim3 g, dim3 b, void **args, size_t shmem,
                          cudaStream_t stream) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    if (f->n < 0) {
        int code = rpc("params %s", f->name);
        if (code) return ret(code);
        f->n = (int)R[1];
        for (int i = 0; i < f->n && i < 64; i++) f->size[i] = (int)R[2 + 2 * i], f->align[i] = (int)R[3 + 2 * i];
    }
    size_t total = 0;
    for (int i = 0; i < f->n; i++)
        total = (total + f->align[i] - 1) / f->align[i] * f->align[i] + f->size[i];
    char *buf = calloc(1, total + 1);
    size_t off = 0;
    for (int i = 0; i < f->n; i++) {
        off = (off + f->align[i] - 1) / f->align[i] * f->align[i];
        memcpy(buf + off, args[i], f->size[i]);
        off += f->size[i];
    }
    flush_printf();   /* the GPU writes earlier kernels' printf at the start of a launch */
    int code = rpc_blob(buf, total, "%s %s %u %u %u %u %u %u %zu %p", how, f->name, g.x, g.y, g.z,
                        b.x, b.y, b.z, shmem, (void *)stream);
    free(buf);
    size_t text = strlen(RB);
    if (text) {
        pending = realloc(pending, npending + text);
        memcpy(pending + npending, RB, text);
        npending += text;
    }
    if (text + 1 < RBN) {   /* the emulator's explanation of a fault */
        flush_printf();
        fprintf(stderr, "%s\n", RB + text + 1);
    }
    return ret(code);
}

cudaError_t __cudaLaunchKernel(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch("launch", (const void *)kernel, g, b, args, shmem, s);
}

cudaError_t __cudaLaunchKernel_ptsz(cudaKernel_t kernel, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch("launch", (const void *)kernel, g, b, args, shmem, s);
}

cudaError_t cudaLaunchKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch("launch", func, g, b, args, shmem, s);
}

cudaError_t cudaLaunchCooperativeKernel(const void *func, dim3 g, dim3 b, void **args, size_t shmem, cudaStream_t s) {
    return launch("launch_cooperative", func, g, b, args, shmem, s);
}

/* ------------------------------------------------------------------ memory */
static cudaError_t alloc(void **p, size_t size, const char *kind) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = rpc("malloc %zu %s", size, kind);
    *p = code ? 0 : (void *)R[1];
    return ret(code);
}

cudaError_t cudaMalloc(void **p, size_t size) { return alloc(p, size, "device"); }
cudaError_t cudaMallocManaged(void **p, size_t size, unsigned int flags) { (void)flags; return alloc(p, size, "managed"); }
cudaError_t cudaMallocHost(void **p, size_t size) { return alloc(p, size, "host"); }
cudaError_t cudaHostAlloc(void **p, size_t size, unsigned int flags) { (void)flags; return alloc(p, size, "host"); }

cudaError_t cudaMallocPitch(void **p, size_t *pitch, size_t width, size_t height) {
    if (!pitch) return ret(cudaErrorInvalidValue);
    *pitch = (width + 511) / 512 * 512;   /* rows start 512-byte aligned, like an A100's */
    return alloc(p, *pitch * height, "device");
}

cudaError_t cudaFree(void *p) { return p ? ret(rpc("free %p device", p)) : cudaSuccess; }
cudaError_t cudaFreeHost(void *p) { return p ? ret(rpc("free %p host", p)) : cudaSuccess; }

cudaError_t cudaHostRegister(void *p, size_t size, unsigned int flags) { return ret(rpc("register %p %zu %u", p, size, flags)); }
cudaError_t cudaHostUnregister(void *p) { return ret(rpc("unregister %p", p)); }

cudaError_t cudaHostGetDevicePointer(void **pDevice, void *pHost, unsigned int flags) {
    (void)flags;
    if (!pDevice || !in_arena(pHost, 1)) return ret(cudaErrorInvalidValue);
    *pDevice = pHost;   /* pinned memory lives in the shared arena: one address for both sides */
    return cudaSuccess;
}

cudaError_t cudaHostGetFlags(unsigned int *flags, void *pHost) {
    if (!flags || !in_arena(pHost, 1)) return ret(cudaErrorInvalidValue);
    *flags = cudaHostAllocMapped;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t *free_, size_t *total) {
    int code = rpc("meminfo");
    if (!code) *free_ = R[1], *total = R[2];
    return ret(code);
}

cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *ptr) {
    int code = rpc("pointer %p", ptr);
    if (code) return ret(code);
    memset(a, 0, sizeof *a);
    a->type = (enum cudaMemoryType)R[1];
    a->device = 0;
    a->devicePointer = a->type == cudaMemoryTypeUnregistered ? 0 : (void *)ptr;
    a->hostPointer = a->type == cudaMemoryTypeDevice ? 0 : (void *)ptr;
    return cudaSuccess;
}

/* Copies: the emulator checks the device side against its allocation table and models the time;
 * the bytes move here, in the shared arena. */
static cudaError_t copy(void *dst, const void *src, size_t n, int kind, cudaStream_t s, int sync) {
    if (!n) return cudaSuccess;
    if (!dst || !src) return ret(cudaErrorInvalidValue);
    int code = rpc("copy %p %p %zu %d %p %d", dst, src, n, kind, (void *)s, sync);
    if (code) return ret(sync ? synced(code) : code);
    memmove(dst, src, n);
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) { return copy(dst, src, n, kind, 0, 1); }
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s) { return copy(dst, src, n, kind, s, 0); }

static cudaError_t copy2d(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                          int kind, cudaStream_t s, int sync) {
    if (!width || !height) return cudaSuccess;
    if (width > dpitch || width > spitch) return ret(cudaErrorInvalidPitchValue);
    int code = rpc("copy2d %p %zu %p %zu %zu %zu %d %p %d", dst, dpitch, src, spitch, width, height, kind, (void *)s, sync);
    if (code) return ret(code);
    for (size_t r = 0; r < height; r++) memmove((char *)dst + r * dpitch, (const char *)src + r * spitch, width);
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemcpy2D(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                         enum cudaMemcpyKind kind) { return copy2d(dst, dpitch, src, spitch, width, height, kind, 0, 1); }
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height,
                              enum cudaMemcpyKind kind, cudaStream_t s) { return copy2d(dst, dpitch, src, spitch, width, height, kind, s, 0); }

static cudaError_t fill(void *dst, int value, size_t n, cudaStream_t s, int sync) {
    if (!n) return cudaSuccess;
    int code = rpc("memset %p %zu %p %d", dst, n, (void *)s, sync);
    if (code) return ret(code);
    memset(dst, value, n);
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemset(void *dst, int value, size_t n) { return fill(dst, value, n, 0, 1); }
cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s) { return fill(dst, value, n, s, 0); }

cudaError_t cudaMemset2D(void *dst, size_t pitch, int value, size_t width, size_t height) {
    for (size_t r = 0; r < height; r++) {
        cudaError_t e = fill((char *)dst + r * pitch, value, width, 0, 1);
        if (e) return e;
    }
    return cudaSuccess;
}

cudaError_t cudaMemPrefetchAsync(const void *p, size_t n, struct cudaMemLocation loc, unsigned int flags, cudaStream_t s) {
    (void)n, (void)loc, (void)flags, (void)s;   /* one memory for host and device: nothing to move */
    return in_arena(p, 1) ? cudaSuccess : ret(cudaErrorInvalidValue);
}

cudaError_t cudaMemAdvise(const void *p, size_t n, enum cudaMemoryAdvise advice, struct cudaMemLocation loc) {
    (void)n, (void)advice, (void)loc;
    return in_arena(p, 1) ? cudaSuccess : ret(cudaErrorInvalidValue);
}

cudaError_t cudaStreamAttachMemAsync(cudaStream_t s, void *p, size_t n, unsigned int flags) {
    (void)s, (void)p, (void)n, (void)flags;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ symbols */
static cudaError_t symbol(const void *sym, size_t n, size_t offset, char **dev) {
    Var *v = find_var(sym);
    if (!v) return ret(cudaErrorInvalidSymbol);
    if (offset > v->size || n > v->size - offset) return ret(cudaErrorInvalidValue);
    *dev = (char *)v->dev + offset;
    return cudaSuccess;
}

cudaError_t cudaMemcpyToSymbol(const void *sym, const void *src, size_t n, size_t offset, enum cudaMemcpyKind kind) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dev, src, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyHostToDevice, 0, 1);
}

cudaError_t cudaMemcpyFromSymbol(void *dst, const void *sym, size_t n, size_t offset, enum cudaMemcpyKind kind) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dst, dev, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyDeviceToHost, 0, 1);
}

cudaError_t cudaMemcpyToSymbolAsync(const void *sym, const void *src, size_t n, size_t offset,
                                    enum cudaMemcpyKind kind, cudaStream_t s) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dev, src, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyHostToDevice, s, 0);
}

cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const void *sym, size_t n, size_t offset,
                                      enum cudaMemcpyKind kind, cudaStream_t s) {
    char *dev;
    cudaError_t e = symbol(sym, n, offset, &dev);
    return e ? e : copy(dst, dev, n, kind == cudaMemcpyDeviceToDevice ? kind : cudaMemcpyDeviceToHost, s, 0);
}

cudaError_t cudaGetSymbolAddress(void **devPtr, const void *sym) {
    char *dev;
    cudaError_t e = symbol(sym, 0, 0, &dev);
    if (!e) *devPtr = dev;
    return e;
}

cudaError_t cudaGetSymbolSize(size_t *size, const void *sym) {
    Var *v = find_var(sym);
    if (!v) return ret(cudaErrorInvalidSymbol);
    *size = v->size;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ streams and events */
cudaError_t cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority) {
    if (!s) return ret(cudaErrorInvalidValue);
    int code = rpc("stream_create %u %d", flags, priority);
    if (!code) *s = (cudaStream_t)R[1];
    return ret(code);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned int flags) { return cudaStreamCreateWithPriority(s, flags, 0); }
cudaError_t cudaStreamCreate(cudaStream_t *s) { return cudaStreamCreateWithPriority(s, 0, 0); }
cudaError_t cudaStreamDestroy(cudaStream_t s) { return ret(rpc("stream_destroy %p", (void *)s)); }
cudaError_t cudaStreamSynchronize(cudaStream_t s) { return ret(synced(rpc("stream_sync %p", (void *)s))); }
cudaError_t cudaStreamQuery(cudaStream_t s) { return ret(rpc("stream_query %p", (void *)s)); }

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags) {
    (void)flags;
    return ret(rpc("stream_wait %p %p", (void *)s, (void *)e));
}

cudaError_t cudaStreamGetPriority(cudaStream_t s, int *priority) {
    int code = rpc("stream_info %p", (void *)s);
    if (!code) *priority = (int)(long long)R[2];
    return ret(code);
}

cudaError_t cudaStreamGetFlags(cudaStream_t s, unsigned int *flags) {
    int code = rpc("stream_info %p", (void *)s);
    if (!code) *flags = (unsigned)R[1];
    return ret(code);
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest) {
    if (least) *least = 0;
    if (greatest) *greatest = -5;
    return cudaSuccess;
}

/* Host functions run when the stream reaches them; the emulator runs each operation as it is
 * issued, so that is now. */
cudaError_t cudaLaunchHostFunc(cudaStream_t s, cudaHostFn_t fn, void *userData) {
    int code = rpc("host_func %p", (void *)s);
    if (code) return ret(code);
    flush_printf();
    fn(userData);
    return cudaSuccess;
}

cudaError_t cudaStreamAddCallback(cudaStream_t s, cudaStreamCallback_t cb, void *userData, unsigned int flags) {
    (void)flags;
    int code = rpc("host_func %p", (void *)s);
    if (code) return ret(code);
    flush_printf();
    cb(s, cudaSuccess, userData);
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags) {
    if (!e) return ret(cudaErrorInvalidValue);
    int code = rpc("event_create %u", flags);
    if (!code) *e = (cudaEvent_t)R[1];
    return ret(code);
}

cudaError_t cudaEventCreate(cudaEvent_t *e) { return cudaEventCreateWithFlags(e, 0); }
cudaError_t cudaEventDestroy(cudaEvent_t e) { return ret(rpc("event_destroy %p", (void *)e)); }
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) { return ret(rpc("event_record %p %p", (void *)e, (void *)s)); }
cudaError_t cudaEventRecordWithFlags(cudaEvent_t e, cudaStream_t s, unsigned int flags) { (void)flags; return cudaEventRecord(e, s); }
cudaError_t cudaEventSynchronize(cudaEvent_t e) { return ret(synced(rpc("event_sync %p", (void *)e))); }
cudaError_t cudaEventQuery(cudaEvent_t e) { return ret(rpc("event_query %p", (void *)e)); }

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
    if (!ms) return ret(cudaErrorInvalidValue);
    int code = rpc("elapsed %p %p", (void *)start, (void *)end);
    if (!code) *ms = (float)((double)R[1] / 1e6);   /* the emulator answers in nanoseconds */
    return ret(code);
}

/* ------------------------------------------------------------------ device */
static struct cudaDeviceProp props;
static int attr_extra[256];   /* attributes with no cudaDeviceProp field (clock rates) */
static int have_props;

static void load_props(void) {
    if (have_props) return;
    rpc("props");
    /* RB: "field=value" lines; arrays as "a,b,c" */
#define INT(f) else if (!strcmp(k, #f)) props.f = (int)strtol(v, 0, 0);
#define SIZE(f) else if (!strcmp(k, #f)) props.f = (size_t)strtoull(v, 0, 0);
#define ARR(f, n) else if (!strcmp(k, #f)) { char *q = v; for (int i = 0; i < n; i++) props.f[i] = (int)strtol(q, &q, 0), q += *q == ','; }
    for (char *line = strtok(RB, "\n"); line; line = strtok(0, "\n")) {
        char *k = line, *v = strchr(line, '=');
        if (!v) continue;
        *v++ = 0;
        if (!strcmp(k, "name")) snprintf(props.name, sizeof props.name, "%s", v);
        else if (!strncmp(k, "attr.", 5)) { int a = atoi(k + 5); if (a >= 0 && a < 256) attr_extra[a] = atoi(v); }
        SIZE(totalGlobalMem) SIZE(sharedMemPerBlock) INT(regsPerBlock) INT(warpSize) SIZE(memPitch)
        INT(maxThreadsPerBlock) ARR(maxThreadsDim, 3) ARR(maxGridSize, 3) SIZE(totalConstMem) INT(major)
        INT(minor) SIZE(textureAlignment) SIZE(texturePitchAlignment) INT(multiProcessorCount)
        INT(integrated) INT(canMapHostMemory) INT(concurrentKernels) INT(ECCEnabled) INT(pciBusID)
        INT(asyncEngineCount) INT(unifiedAddressing) INT(memoryBusWidth) INT(l2CacheSize)
        INT(persistingL2CacheMaxSize) INT(maxThreadsPerMultiProcessor) INT(streamPrioritiesSupported)
        INT(globalL1CacheSupported) INT(localL1CacheSupported) SIZE(sharedMemPerMultiprocessor)
        INT(regsPerMultiprocessor) INT(managedMemory) INT(concurrentManagedAccess) INT(cooperativeLaunch)
        SIZE(sharedMemPerBlockOptin) INT(maxBlocksPerMultiProcessor) SIZE(reservedSharedMemPerBlock)
        INT(hostRegisterSupported) INT(memoryPoolsSupported) INT(computePreemptionSupported)
        INT(directManagedMemAccessFromHost) INT(pageableMemoryAccess)
    }
#undef INT
#undef SIZE
#undef ARR
    have_props = 1;
}

cudaError_t cudaGetDeviceCount(int *count) { *count = 1; return cudaSuccess; }
cudaError_t cudaGetDevice(int *device) { *device = 0; return cudaSuccess; }
cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : ret(cudaErrorInvalidDevice); }
cudaError_t cudaSetDeviceFlags(unsigned int flags) { (void)flags; return cudaSuccess; }
cudaError_t cudaDeviceSetCacheConfig(enum cudaFuncCache c) { (void)c; return cudaSuccess; }
cudaError_t cudaFuncSetCacheConfig(const void *f, enum cudaFuncCache c) { (void)f, (void)c; return cudaSuccess; }
cudaError_t cudaDriverGetVersion(int *v) { *v = 13000; return cudaSuccess; }
cudaError_t cudaRuntimeGetVersion(int *v) { *v = CUDART_VERSION; return cudaSuccess; }

cudaError_t cudaGetDeviceProperties(struct cudaDeviceProp *p, int device) {
    if (device != 0) return ret(cudaErrorInvalidDevice);
    load_props();
    *p = props;
    return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device) {
    if (device != 0) return ret(cudaErrorInvalidDevice);
    load_props();
    switch (attr) {
    case cudaDevAttrMaxThreadsPerBlock: *value = props.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *value = props.maxThreadsDim[0]; break;
    case cudaDevAttrMaxBlockDimY: *value = props.maxThreadsDim[1]; break;
    case cudaDevAttrMaxBlockDimZ: *value = props.maxThreadsDim[2]; break;
    case cudaDevAttrMaxGridDimX: *value = props.maxGridSize[0]; break;
    case cudaDevAttrMaxGridDimY: *value = props.maxGridSize[1]; break;
    case cudaDevAttrMaxGridDimZ: *value = props.maxGridSize[2]; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = (int)props.sharedMemPerBlock; break;
    case cudaDevAttrTotalConstantMemory: *value = (int)props.totalConstMem; break;
    case cudaDevAttrWarpSize: *value = props.warpSize; break;
    case cudaDevAttrMaxRegistersPerBlock: *value = props.regsPerBlock; break;
    case cudaDevAttrMultiProcessorCount: *value = props.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *value = props.major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = props.minor; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = props.maxThreadsPerMultiProcessor; break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = (int)props.sharedMemPerMultiprocessor; break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = props.regsPerMultiprocessor; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = (int)props.sharedMemPerBlockOptin; break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = props.maxBlocksPerMultiProcessor; break;
    case cudaDevAttrL2CacheSize: *value = props.l2CacheSize; break;
    case cudaDevAttrConcurrentKernels: *value = props.concurrentKernels; break;
    case cudaDevAttrAsyncEngineCount: *value = props.asyncEngineCount; break;
    case cudaDevAttrUnifiedAddressing: *value = props.unifiedAddressing; break;
    case cudaDevAttrManagedMemory: *value = props.managedMemory; break;
    case cudaDevAttrConcurrentManagedAccess: *value = props.concurrentManagedAccess; break;
    case cudaDevAttrCooperativeLaunch: *value = props.cooperativeLaunch; break;
    case cudaDevAttrGlobalMemoryBusWidth: *value = props.memoryBusWidth; break;
    case cudaDevAttrCanMapHostMemory: *value = props.canMapHostMemory; break;
    case cudaDevAttrReservedSharedMemoryPerBlock: *value = (int)props.reservedSharedMemPerBlock; break;
    default:
        if ((int)attr >= 0 && (int)attr < 256 && attr_extra[attr]) { *value = attr_extra[attr]; break; }
        *value = 0;
        return ret(cudaErrorInvalidValue);
    }
    return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) { return ret(synced(rpc("device_sync"))); }

cudaError_t cudaDeviceReset(void) {
    flush_printf();
    last_error = cudaSuccess;
    return (cudaError_t)rpc("device_reset");
}

cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *a, const void *func) {
    Func *f = find_func(func);
    if (!f || !a) return ret(cudaErrorInvalidDeviceFunction);
    int code = rpc("func_attrs %s", f->name);
    if (code) return ret(code);
    memset(a, 0, sizeof *a);
    a->sharedSizeBytes = R[1], a->constSizeBytes = R[2], a->localSizeBytes = R[3];
    a->maxThreadsPerBlock = (int)R[4], a->numRegs = (int)R[5], a->ptxVersion = (int)R[6];
    a->binaryVersion = (int)R[7], a->maxDynamicSharedSizeBytes = (int)R[8];
    a->preferredShmemCarveout = -1;
    return cudaSuccess;
}

cudaError_t cudaFuncSetAttribute(const void *func, enum cudaFuncAttribute attr, int value) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    return ret(rpc("func_set %s %d %d", f->name, (int)attr, value));
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, const void *func, int blockSize,
                                                                   size_t dynamicSMemSize, unsigned int flags) {
    (void)flags;
    Func *f = find_func(func);
    if (!f || !n) return ret(cudaErrorInvalidDeviceFunction);
    int code = rpc("occupancy %s %d %zu", f->name, blockSize, dynamicSMemSize);
    if (!code) *n = (int)R[1];
    return ret(code);
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, const void *func, int blockSize, size_t dyn) {
    return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(n, func, blockSize, dyn, 0);
}

#include "textures.c"   /* CUDA arrays, 2D/3D copies, texture and surface objects */
