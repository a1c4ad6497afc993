/* cudalab's libcudart, continued: the driver API's older calls and its PTX linker (included by driver.c).
 *
 * Programs written for CUDA 3 to 11 still reach these through libcuda.so.1's exports (NVIDIA's
 * matrixMulDynlinkJIT dlsyms each by name): the launch API of CUDA 3 (cuFuncSetBlockShape, cuParamSet*,
 * cuLaunchGrid), which keeps a function's block shape and parameter bytes until the launch, and
 * cuCtxCreate_v2's arguments before CUDA 12's create parameters. cuLink* joins PTX modules
 * (programs/ptx/link.py, on the server) into the PTX a module is then loaded from.
 */

/* cuCtxCreate as CUDA 3.2 to 11 declared it (cuda.h now names cuCtxCreate_v4) */
CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev) {
    CUctxCreateParams params = {0};
    return cuCtxCreate(pctx, &params, flags, dev);
}

/* cudaProfiler.h's driver calls: no profiler to start or stop (cudalab profile profiles every launch) */
CUresult CUDAAPI cuProfilerStart(void) { return CUDA_SUCCESS; }
CUresult CUDAAPI cuProfilerStop(void) { return CUDA_SUCCESS; }

/* ------------------------------------------------------------------ CUDA 3's launch API */
typedef struct { const void *f; int bx, by, bz; unsigned shared, size; char params[4096]; } LegacyLaunch;
static LegacyLaunch legacy[64];
static int nlegacy;
static pthread_mutex_t legacy_lock = PTHREAD_MUTEX_INITIALIZER;

static LegacyLaunch *legacy_of(CUfunction f) {
    if (!find_func(f)) return NULL;
    LegacyLaunch *l = NULL;
    pthread_mutex_lock(&legacy_lock);
    for (int i = 0; i < nlegacy && !l; i++)
        if (legacy[i].f == f) l = &legacy[i];
    if (!l && nlegacy < 64) {
        l = &legacy[nlegacy++];
        memset(l, 0, sizeof *l);
        l->f = f, l->bx = l->by = l->bz = 1;
    }
    pthread_mutex_unlock(&legacy_lock);
    return l;
}

CUresult CUDAAPI cuFuncSetBlockShape(CUfunction f, int x, int y, int z) {
    LegacyLaunch *l = legacy_of(f);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (x <= 0 || y <= 0 || z <= 0) return CUDA_ERROR_INVALID_VALUE;
    l->bx = x, l->by = y, l->bz = z;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuFuncSetSharedSize(CUfunction f, unsigned int bytes) {
    LegacyLaunch *l = legacy_of(f);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    l->shared = bytes;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuParamSetSize(CUfunction f, unsigned int n) {
    LegacyLaunch *l = legacy_of(f);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (n > sizeof l->params) return CUDA_ERROR_INVALID_VALUE;
    l->size = n;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuParamSetv(CUfunction f, int offset, void *p, unsigned int n) {
    LegacyLaunch *l = legacy_of(f);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    if (offset < 0 || (size_t)offset + n > sizeof l->params || !p) return CUDA_ERROR_INVALID_VALUE;
    memcpy(l->params + offset, p, n);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuParamSeti(CUfunction f, int offset, unsigned int value) { return cuParamSetv(f, offset, &value, 4); }
CUresult CUDAAPI cuParamSetf(CUfunction f, int offset, float value) { return cuParamSetv(f, offset, &value, 4); }

CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int gw, int gh, CUstream s) {
    LegacyLaunch *l = legacy_of(f);
    if (!l) return CUDA_ERROR_INVALID_HANDLE;
    size_t size = l->size;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, l->params, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    return driver_launch(f, (dim3){(unsigned)gw, (unsigned)gh, 1}, (dim3){(unsigned)l->bx, (unsigned)l->by,
                         (unsigned)l->bz}, l->shared, s, NULL, extra, "");
}

CUresult CUDAAPI cuLaunchGrid(CUfunction f, int gw, int gh) { return cuLaunchGridAsync(f, gw, gh, NULL); }
CUresult CUDAAPI cuLaunch(CUfunction f) { return cuLaunchGridAsync(f, 1, 1, NULL); }

/* ------------------------------------------------------------------ the PTX linker */
struct CUlinkState_st { char *ptx; size_t n; int count; void *out; };

CUresult CUDAAPI cuLinkCreate(unsigned int n, CUjit_option *options, void **values, CUlinkState *state) {
    if (!state || (n && (!options || !values))) return CUDA_ERROR_INVALID_VALUE;
    for (unsigned i = 0; i < n; i++) {             /* no log to give, no time taken */
        if (options[i] == CU_JIT_WALL_TIME) {
            float zero = 0;
            memcpy(&values[i], &zero, sizeof zero);
        } else if ((options[i] == CU_JIT_INFO_LOG_BUFFER || options[i] == CU_JIT_ERROR_LOG_BUFFER) && values[i]) {
            *(char *)values[i] = 0;
        }
    }
    *state = calloc(1, sizeof **state);
    return *state ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* PTX inputs are kept, each ending in its NUL; the device runtime's library (CU_JIT_INPUT_LIBRARY of
 * libcudadevrt) is the emulator's own and is let pass; machine code cannot be linked into PTX */
static CUresult link_add(CUlinkState state, CUjitInputType type, const void *data, size_t size, const char *name) {
    if (!state || !data) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_JIT_INPUT_LIBRARY && name && strstr(name, "cudadevrt")) return CUDA_SUCCESS;
    if (type != CU_JIT_INPUT_PTX) {
        char msg[300];
        snprintf(msg, sizeof msg, "cudalab: cuLinkAddData/File of %s: only PTX can be linked on the emulated GPU "
                 "(cubins, fat binaries and libraries are GPU machine code)", name ? name : "an input");
        say_once(msg);
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    size_t len = strnlen((const char *)data, size);
    char *grown = realloc(state->ptx, state->n + len + 1);
    if (!grown) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(grown + state->n, data, len);
    grown[state->n + len] = 0;
    state->ptx = grown, state->n += len + 1, state->count++;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkAddData(CUlinkState state, CUjitInputType type, void *data, size_t size, const char *name,
                               unsigned int n, CUjit_option *options, void **values) {
    (void)n, (void)options, (void)values;
    return link_add(state, type, data, size, name);
}

CUresult CUDAAPI cuLinkAddFile(CUlinkState state, CUjitInputType type, const char *path, unsigned int n,
                               CUjit_option *options, void **values) {
    (void)n, (void)options, (void)values;
    if (!path) return CUDA_ERROR_INVALID_VALUE;
    if (type == CU_JIT_INPUT_LIBRARY && strstr(path, "cudadevrt")) return CUDA_SUCCESS;
    size_t got;
    char *bytes = read_whole_file(path, &got);
    if (!bytes) return CUDA_ERROR_FILE_NOT_FOUND;
    CUresult r = link_add(state, type, bytes, got, path);
    free(bytes);
    return r;
}

/* The joined PTX: the module image cuModuleLoadData takes, owned by the state until cuLinkDestroy */
CUresult CUDAAPI cuLinkComplete(CUlinkState state, void **out, size_t *size) {
    if (!state || !out || !size || !state->count) return CUDA_ERROR_INVALID_VALUE;
    int code = rpc_blob(state->ptx, state->n, "link %d", state->count);
    if (code) return cu((cudaError_t)code);
    free(state->out);
    state->out = malloc(RBN + 1);
    memcpy(state->out, RB, RBN);
    ((char *)state->out)[RBN] = 0;
    *out = state->out, *size = RBN + 1;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLinkDestroy(CUlinkState state) {
    if (!state) return CUDA_ERROR_INVALID_VALUE;
    free(state->ptx), free(state->out), free(state);
    return CUDA_SUCCESS;
}
