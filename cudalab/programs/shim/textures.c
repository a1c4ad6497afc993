/* CUDA arrays, 2D/3D copies, texture and surface objects: the shim's part.
 *
 * Included at the end of cudart.c (it uses rpc, ret, synced, in_arena and R from there). The
 * emulator (programs/server_textures.py, runtime/textures.py) keeps the arrays and objects and
 * checks every call; a CUDA array's texels live in the shared arena, so copies are planned by the
 * emulator (addresses and pitches of both sides) and the bytes are moved here, row by row.
 * Handles (cudaArray_t, cudaTextureObject_t, ...) are the emulator's numbers.
 */

#define ARRAY_SIDE 1
#define POINTER_SIDE 0

/* make_cudaExtent and friends are C++-only in the CUDA headers */
static struct cudaExtent extent3(size_t w, size_t h, size_t d) {
    struct cudaExtent e = {w, h, d};
    return e;
}

static struct cudaPos at(size_t x, size_t y) {
    struct cudaPos p = {x, y, 0};
    return p;
}

struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f) {
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

/* ------------------------------------------------------------------ arrays */
static cudaError_t make_array(cudaArray_t *array, const struct cudaChannelFormatDesc *d, size_t w, size_t h,
                              size_t depth, unsigned int flags, int three_d) {
    if (!array || !d) return ret(cudaErrorInvalidValue);
    int code = rpc("array_malloc %d %d %d %d %d %zu %zu %zu %u %d", d->x, d->y, d->z, d->w, (int)d->f, w, h, depth,
                   flags, three_d);
    *array = code ? 0 : (cudaArray_t)R[1];
    return ret(code);
}

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width, size_t height,
                            unsigned int flags) {
    return make_array(array, desc, width, height, 0, flags, 0);
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, struct cudaExtent e,
                              unsigned int flags) {
    return make_array(array, desc, e.width, e.height, e.depth, flags, 1);
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mm, const struct cudaChannelFormatDesc *d,
                                     struct cudaExtent e, unsigned int levels, unsigned int flags) {
    if (!mm || !d) return ret(cudaErrorInvalidValue);
    int code = rpc("mipmap_malloc %d %d %d %d %d %zu %zu %zu %u %u", d->x, d->y, d->z, d->w, (int)d->f, e.width,
                   e.height, e.depth, levels, flags);
    *mm = code ? 0 : (cudaMipmappedArray_t)R[1];
    return ret(code);
}

cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *level, cudaMipmappedArray_const_t mm, unsigned int n) {
    if (!level) return ret(cudaErrorInvalidValue);
    int code = rpc("mipmap_level %p %u", (const void *)mm, n);
    if (!code) *level = (cudaArray_t)R[1];
    return ret(code);
}

cudaError_t cudaFreeArray(cudaArray_t a) { return ret(rpc("array_free %p 0", (void *)a)); }
cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t m) { return ret(rpc("array_free %p 1", (void *)m)); }

cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent, unsigned int *flags,
                             cudaArray_t a) {
    int code = rpc("array_info %p", (void *)a);
    if (code) return ret(code);
    if (desc) *desc = cudaCreateChannelDesc((int)R[1], (int)R[2], (int)R[3], (int)R[4], (enum cudaChannelFormatKind)R[5]);
    if (extent) *extent = extent3(R[6], R[7], R[8]);
    if (flags) *flags = (unsigned int)R[9];
    return cudaSuccess;
}

cudaError_t cudaGetChannelDesc(struct cudaChannelFormatDesc *desc, cudaArray_const_t a) {
    if (!desc) return ret(cudaErrorInvalidValue);
    return cudaArrayGetInfo(desc, 0, 0, (cudaArray_t)a);
}

/* ------------------------------------------------------------------ copies */
/* Move width x height x depth bytes as the emulator planned (R[1..9]: source address, pitch, slice
 * pitch, the same for the destination, then the width in bytes, the height and the depth). */
static void move_planned(void) {
    char *src = (char *)R[1], *dst = (char *)R[4];
    size_t sp = R[2], ss = R[3], dp = R[5], ds = R[6], w = R[7], h = R[8], d = R[9];
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++) memmove(dst + z * ds + y * dp, src + z * ss + y * sp, w);
    shim_worked();
}

static cudaError_t copy3d(const char *call, int skind, const void *sbase, size_t spitch, size_t sysize,
                          struct cudaPos sp, int dkind, const void *dbase, size_t dpitch, size_t dysize,
                          struct cudaPos dp, struct cudaExtent e, int kind, cudaStream_t s, int sync) {
    int code = rpc("copy3d %s %d %p %zu %zu %zu %zu %zu %d %p %zu %zu %zu %zu %zu %zu %zu %zu %d %p %d", call, skind,
                   sbase, spitch, sysize, sp.x, sp.y, sp.z, dkind, dbase, dpitch, dysize, dp.x, dp.y, dp.z, e.width,
                   e.height, e.depth, kind, (void *)s, sync);
    if (code) return ret(sync ? synced(code) : code);
    move_planned();
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

static cudaError_t copy2d_array(const char *call, cudaArray_t dst, size_t wo, size_t ho, const void *src, size_t spitch,
                                size_t width, size_t height, int kind, cudaStream_t s, int sync) {
    if (!width || !height) return cudaSuccess;
    if (spitch < width) return ret(cudaErrorInvalidPitchValue);
    return copy3d(call, POINTER_SIDE, src, spitch, height, at(0, 0), ARRAY_SIDE, dst, 0, 0, at(wo, ho),
                  extent3(width, height, 1), kind, s, sync);
}

static cudaError_t copy2d_from_array(const char *call, void *dst, size_t dpitch, cudaArray_const_t src, size_t wo,
                                     size_t ho, size_t width, size_t height, int kind, cudaStream_t s, int sync) {
    if (!width || !height) return cudaSuccess;
    if (dpitch < width) return ret(cudaErrorInvalidPitchValue);
    return copy3d(call, ARRAY_SIDE, src, 0, 0, at(wo, ho), POINTER_SIDE, dst, dpitch, height, at(0, 0),
                  extent3(width, height, 1), kind, s, sync);
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wo, size_t ho, const void *src, size_t spitch, size_t width,
                                size_t height, enum cudaMemcpyKind kind) {
    return copy2d_array("cudaMemcpy2DToArray", dst, wo, ho, src, spitch, width, height, kind, 0, 1);
}

cudaError_t cudaMemcpy2DToArrayAsync(cudaArray_t dst, size_t wo, size_t ho, const void *src, size_t spitch,
                                     size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t s) {
    return copy2d_array("cudaMemcpy2DToArrayAsync", dst, wo, ho, src, spitch, width, height, kind, s, 0);
}

cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wo, size_t ho, size_t width,
                                  size_t height, enum cudaMemcpyKind kind) {
    return copy2d_from_array("cudaMemcpy2DFromArray", dst, dpitch, src, wo, ho, width, height, kind, 0, 1);
}

cudaError_t cudaMemcpy2DFromArrayAsync(void *dst, size_t dpitch, cudaArray_const_t src, size_t wo, size_t ho,
                                       size_t width, size_t height, enum cudaMemcpyKind kind, cudaStream_t s) {
    return copy2d_from_array("cudaMemcpy2DFromArrayAsync", dst, dpitch, src, wo, ho, width, height, kind, s, 0);
}

cudaError_t cudaMemcpy2DArrayToArray(cudaArray_t dst, size_t wod, size_t hod, cudaArray_const_t src, size_t wos,
                                     size_t hos, size_t width, size_t height, enum cudaMemcpyKind kind) {
    if (!width || !height) return cudaSuccess;
    return copy3d("cudaMemcpy2DArrayToArray", ARRAY_SIDE, src, 0, 0, at(wos, hos), ARRAY_SIDE, dst, 0, 0, at(wod, hod),
                  extent3(width, height, 1), kind, 0, 1);
}

/* The deprecated 1D calls copy `count` bytes from (wOffset bytes, hOffset) on, row after row. */
static cudaError_t span_copy(const char *call, cudaArray_const_t a, size_t wo, size_t ho, void *host, size_t count,
                             int to_array, cudaStream_t s, int sync) {
    if (!count) return cudaSuccess;
    int code = rpc("array_span %s %p %zu %zu %zu %p %d %p %d", call, (const void *)a, wo, ho, count, host, to_array,
                   (void *)s, sync);
    if (code) return ret(sync ? synced(code) : code);
    size_t fit = R[2];
    int late = (int)R[3];   /* past the end: CUDA still moves the part that fits (measured) */
    if (to_array) memmove((void *)R[1], host, fit);
    else memmove(host, (void *)R[1], fit);
    shim_worked();
    if (late) return ret(late);
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wo, size_t ho, const void *src, size_t count,
                              enum cudaMemcpyKind kind) {
    (void)kind;
    return span_copy("cudaMemcpyToArray", dst, wo, ho, (void *)src, count, 1, 0, 1);
}

cudaError_t cudaMemcpyToArrayAsync(cudaArray_t dst, size_t wo, size_t ho, const void *src, size_t count,
                                   enum cudaMemcpyKind kind, cudaStream_t s) {
    (void)kind;
    return span_copy("cudaMemcpyToArrayAsync", dst, wo, ho, (void *)src, count, 1, s, 0);
}

cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wo, size_t ho, size_t count,
                                enum cudaMemcpyKind kind) {
    (void)kind;
    return span_copy("cudaMemcpyFromArray", src, wo, ho, dst, count, 0, 0, 1);
}

cudaError_t cudaMemcpyFromArrayAsync(void *dst, cudaArray_const_t src, size_t wo, size_t ho, size_t count,
                                     enum cudaMemcpyKind kind, cudaStream_t s) {
    (void)kind;
    return span_copy("cudaMemcpyFromArrayAsync", src, wo, ho, dst, count, 0, s, 0);
}

cudaError_t cudaMemcpyArrayToArray(cudaArray_t dst, size_t wod, size_t hod, cudaArray_const_t src, size_t wos,
                                   size_t hos, size_t count, enum cudaMemcpyKind kind) {
    (void)kind;
    if (!count) return cudaSuccess;
    int code = rpc("array_span cudaMemcpyArrayToArray %p %zu %zu %zu 0 0 0 1", (const void *)src, wos, hos, count);
    if (!code) code = (int)R[3];
    if (code) return ret(code);
    char *from = (char *)R[1];
    return span_copy("cudaMemcpyArrayToArray", dst, wod, hod, from, count, 1, 0, 1);
}

cudaError_t cudaMalloc3D(struct cudaPitchedPtr *p, struct cudaExtent e) {
    if (!p) return ret(cudaErrorInvalidValue);
    size_t pitch;
    void *ptr;
    cudaError_t err = cudaMallocPitch(&ptr, &pitch, e.width, e.height * (e.depth ? e.depth : 1));
    if (!err) p->ptr = ptr, p->pitch = pitch, p->xsize = e.width, p->ysize = e.height;
    return err;
}

static cudaError_t memcpy3d(const struct cudaMemcpy3DParms *p, cudaStream_t s, int sync) {
    const char *call = sync ? "cudaMemcpy3D" : "cudaMemcpy3DAsync";
    if (!p) return ret(cudaErrorInvalidValue);
    if ((p->srcArray && p->srcPtr.ptr) || (p->dstArray && p->dstPtr.ptr)) return ret(cudaErrorInvalidValue);
    struct cudaExtent e = p->extent;
    if (!e.width || !e.height || !e.depth) return cudaSuccess;
    if ((!p->srcArray && !p->srcPtr.ptr) || (!p->dstArray && !p->dstPtr.ptr)) return ret(cudaErrorInvalidValue);
    return copy3d(call, p->srcArray ? ARRAY_SIDE : POINTER_SIDE, p->srcArray ? (void *)p->srcArray : p->srcPtr.ptr,
                  p->srcPtr.pitch, p->srcPtr.ysize, p->srcPos, p->dstArray ? ARRAY_SIDE : POINTER_SIDE,
                  p->dstArray ? (void *)p->dstArray : p->dstPtr.ptr, p->dstPtr.pitch, p->dstPtr.ysize, p->dstPos, e,
                  p->kind, s, sync);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p) { return memcpy3d(p, 0, 1); }
cudaError_t cudaMemcpy3DAsync(const struct cudaMemcpy3DParms *p, cudaStream_t s) { return memcpy3d(p, s, 0); }

static cudaError_t memset3d(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t s, int sync) {
    if (!e.width || !e.height || !e.depth) return cudaSuccess;
    int code = rpc("memset3d %p %zu %zu %zu %zu %zu %p %d", p.ptr, p.pitch, p.ysize, e.width, e.height, e.depth,
                   (void *)s, sync);
    if (code) return ret(code);
    for (size_t z = 0; z < e.depth; z++)
        for (size_t y = 0; y < e.height; y++) memset((char *)p.ptr + (z * p.ysize + y) * p.pitch, value, e.width);
    shim_worked();
    return sync ? (cudaError_t)synced(0) : cudaSuccess;
}

cudaError_t cudaMemset3D(struct cudaPitchedPtr p, int value, struct cudaExtent e) { return memset3d(p, value, e, 0, 1); }
cudaError_t cudaMemset3DAsync(struct cudaPitchedPtr p, int value, struct cudaExtent e, cudaStream_t s) {
    return memset3d(p, value, e, s, 0);
}

/* ------------------------------------------------------------------ texture and surface objects */
static unsigned fbits(float f) {
    unsigned u;
    memcpy(&u, &f, 4);
    return u;
}

static float bitsf(unsigned long long u) {
    unsigned v = (unsigned)u;
    float f;
    memcpy(&f, &v, 4);
    return f;
}

/* The resource description as the request's numbers: type, array, pointer, format (x y z w kind),
 * size, width, height, pitch. */
static void resource_text(char *buf, size_t n, const struct cudaResourceDesc *r) {
    struct cudaChannelFormatDesc d = {0, 0, 0, 0, cudaChannelFormatKindSigned};
    const void *array = r->resType == cudaResourceTypeMipmappedArray ? (const void *)r->res.mipmap.mipmap
                                                                     : (const void *)r->res.array.array;
    const void *ptr = 0;
    size_t size = 0, width = 0, height = 0, pitch = 0;
    if (r->resType == cudaResourceTypeLinear)
        d = r->res.linear.desc, ptr = r->res.linear.devPtr, size = r->res.linear.sizeInBytes;
    else if (r->resType == cudaResourceTypePitch2D)
        d = r->res.pitch2D.desc, ptr = r->res.pitch2D.devPtr, width = r->res.pitch2D.width,
        height = r->res.pitch2D.height, pitch = r->res.pitch2D.pitchInBytes;
    snprintf(buf, n, "%d %p %p %d %d %d %d %d %zu %zu %zu %zu", (int)r->resType, array, ptr, d.x, d.y, d.z, d.w,
             (int)d.f, size, width, height, pitch);
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t *tex, const struct cudaResourceDesc *r,
                                    const struct cudaTextureDesc *t, const struct cudaResourceViewDesc *view) {
    if (!r) return ret(cudaErrorInvalidValue);
    if (!t) return ret(cudaErrorInvalidResourceHandle);   /* what CUDA 13 answers (measured) */
    if (view) {
        fflush(stdout);
        fprintf(stderr, "cudalab: cudaCreateTextureObject with a cudaResourceViewDesc is not supported.\n");
        return ret(cudaErrorNotSupported);
    }
    char res[256];
    resource_text(res, sizeof res, r);
    int code = rpc("tex_create %s %d %d %d %d %d %d %u %u %u %u %d %u %d %u %u %u %d %d", res,
                   (int)t->addressMode[0], (int)t->addressMode[1], (int)t->addressMode[2], (int)t->filterMode,
                   (int)t->readMode, t->sRGB, fbits(t->borderColor[0]), fbits(t->borderColor[1]),
                   fbits(t->borderColor[2]), fbits(t->borderColor[3]), t->normalizedCoords, t->maxAnisotropy,
                   (int)t->mipmapFilterMode, fbits(t->mipmapLevelBias), fbits(t->minMipmapLevelClamp),
                   fbits(t->maxMipmapLevelClamp), t->disableTrilinearOptimization, t->seamlessCubemap);
    if (code) return ret(code);
    if (!tex) {
        rpc("tex_destroy %llu", R[1]);
        return ret(cudaErrorInvalidValue);
    }
    *tex = (cudaTextureObject_t)R[1];
    return cudaSuccess;
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t t) { return ret(rpc("tex_destroy %llu", t)); }

/* R[1..12]: type, array, pointer, x, y, z, w, kind, size, width, height, pitch. */
static void fill_resource(struct cudaResourceDesc *r) {
    memset(r, 0, sizeof *r);
    r->resType = (enum cudaResourceType)R[1];
    struct cudaChannelFormatDesc d = cudaCreateChannelDesc((int)R[4], (int)R[5], (int)R[6], (int)R[7],
                                                           (enum cudaChannelFormatKind)R[8]);
    if (r->resType == cudaResourceTypeArray) r->res.array.array = (cudaArray_t)R[2];
    else if (r->resType == cudaResourceTypeMipmappedArray) r->res.mipmap.mipmap = (cudaMipmappedArray_t)R[2];
    else if (r->resType == cudaResourceTypeLinear) {
        r->res.linear.devPtr = (void *)R[3], r->res.linear.desc = d, r->res.linear.sizeInBytes = R[9];
    } else {
        r->res.pitch2D.devPtr = (void *)R[3], r->res.pitch2D.desc = d;
        r->res.pitch2D.width = R[10], r->res.pitch2D.height = R[11], r->res.pitch2D.pitchInBytes = R[12];
    }
}

cudaError_t cudaGetTextureObjectResourceDesc(struct cudaResourceDesc *r, cudaTextureObject_t t) {
    if (!r) return ret(cudaErrorInvalidValue);
    int code = rpc("tex_resource %llu", t);
    if (code) return ret(code);
    fill_resource(r);
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectTextureDesc(struct cudaTextureDesc *d, cudaTextureObject_t t) {
    if (!d) return ret(cudaErrorInvalidValue);
    int code = rpc("tex_desc %llu", t);
    if (code) return ret(code);
    memset(d, 0, sizeof *d);
    for (int i = 0; i < 3; i++) d->addressMode[i] = (enum cudaTextureAddressMode)R[1 + i];
    d->filterMode = (enum cudaTextureFilterMode)R[4], d->readMode = (enum cudaTextureReadMode)R[5];
    d->sRGB = (int)R[6];
    for (int i = 0; i < 4; i++) d->borderColor[i] = bitsf(R[7 + i]);
    d->normalizedCoords = (int)R[11], d->maxAnisotropy = (unsigned)R[12];
    d->mipmapFilterMode = (enum cudaTextureFilterMode)R[13];
    d->mipmapLevelBias = bitsf(R[14]), d->minMipmapLevelClamp = bitsf(R[15]), d->maxMipmapLevelClamp = bitsf(R[16]);
    d->disableTrilinearOptimization = (int)R[17], d->seamlessCubemap = (int)R[18];
    return cudaSuccess;
}

cudaError_t cudaGetTextureObjectResourceViewDesc(struct cudaResourceViewDesc *v, cudaTextureObject_t t) {
    (void)v, (void)t;
    return ret(cudaErrorNotSupported);
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *surf, const struct cudaResourceDesc *r) {
    if (!r || !surf) return ret(cudaErrorInvalidValue);
    char res[256];
    resource_text(res, sizeof res, r);
    int code = rpc("surf_create %s", res);
    if (!code) *surf = (cudaSurfaceObject_t)R[1];
    return ret(code);
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t s) { return ret(rpc("surf_destroy %llu", s)); }

cudaError_t cudaGetSurfaceObjectResourceDesc(struct cudaResourceDesc *r, cudaSurfaceObject_t s) {
    if (!r) return ret(cudaErrorInvalidValue);
    int code = rpc("surf_resource %llu", s);
    if (code) return ret(code);
    fill_resource(r);
    return cudaSuccess;
}
