/* cudalab's libcudart, continued: the driver's CUDA arrays, texture objects and virtual memory management
 * (included by driver.c, after textures.c).
 *
 * Arrays and texture objects are the runtime's (textures.c): the driver's descriptors are translated to
 * cudaChannelFormatDesc, cudaResourceDesc and cudaTextureDesc, field for field.
 *
 * Virtual memory management (cuMemCreate, cuMemAddressReserve, cuMemMap, cuMemSetAccess, ...) on one
 * emulated device: a reserved address range is one allocation of the arena, made at cuMemAddressReserve,
 * and a physical allocation (cuMemCreate) becomes the memory of the range it is mapped into. So what
 * programs do with it (reserve, create, map, set access, use, unmap, release, free) works and checks as
 * the driver does; what needs two virtual addresses for one memory (mapping a handle a second time, in
 * another place) answers CUDA_ERROR_NOT_SUPPORTED with a message.
 */

/* ------------------------------------------------------------------ arrays and texture objects */
static int channel_format(CUarray_format f, enum cudaChannelFormatKind *kind, int *bits) {
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: *kind = cudaChannelFormatKindUnsigned, *bits = 8; return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: *kind = cudaChannelFormatKindUnsigned, *bits = 16; return 1;
    case CU_AD_FORMAT_UNSIGNED_INT32: *kind = cudaChannelFormatKindUnsigned, *bits = 32; return 1;
    case CU_AD_FORMAT_SIGNED_INT8: *kind = cudaChannelFormatKindSigned, *bits = 8; return 1;
    case CU_AD_FORMAT_SIGNED_INT16: *kind = cudaChannelFormatKindSigned, *bits = 16; return 1;
    case CU_AD_FORMAT_SIGNED_INT32: *kind = cudaChannelFormatKindSigned, *bits = 32; return 1;
    case CU_AD_FORMAT_HALF: *kind = cudaChannelFormatKindFloat, *bits = 16; return 1;
    case CU_AD_FORMAT_FLOAT: *kind = cudaChannelFormatKindFloat, *bits = 32; return 1;
    default: return 0;
    }
}

static int channel_desc(CUarray_format f, unsigned channels, struct cudaChannelFormatDesc *d) {
    enum cudaChannelFormatKind kind;
    int bits;
    if (!channel_format(f, &kind, &bits) || (channels != 1 && channels != 2 && channels != 4)) return 0;
    *d = cudaCreateChannelDesc(bits, channels > 1 ? bits : 0, channels > 2 ? bits : 0, channels > 2 ? bits : 0, kind);
    return 1;
}

CUresult CUDAAPI cuArrayCreate(CUarray *array, const CUDA_ARRAY_DESCRIPTOR *desc) {
    struct cudaChannelFormatDesc d;
    if (!array || !desc || !channel_desc(desc->Format, desc->NumChannels, &d)) return CUDA_ERROR_INVALID_VALUE;
    return cu(cudaMallocArray((cudaArray_t *)array, &d, desc->Width, desc->Height, 0));
}

CUresult CUDAAPI cuArray3DCreate(CUarray *array, const CUDA_ARRAY3D_DESCRIPTOR *desc) {
    struct cudaChannelFormatDesc d;
    if (!array || !desc || !channel_desc(desc->Format, desc->NumChannels, &d)) return CUDA_ERROR_INVALID_VALUE;
    return cu(cudaMalloc3DArray((cudaArray_t *)array, &d, extent3(desc->Width, desc->Height, desc->Depth), desc->Flags));
}

CUresult CUDAAPI cuArrayDestroy(CUarray array) {
    if (!array) return CUDA_ERROR_INVALID_HANDLE;
    return cu(cudaFreeArray((cudaArray_t)array));
}

static CUarray_format driver_format(const struct cudaChannelFormatDesc *d) {
    int bits = d->x;
    if (d->f == cudaChannelFormatKindFloat) return bits == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
    if (d->f == cudaChannelFormatKindSigned)
        return bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_SIGNED_INT32;
    return bits == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16 : CU_AD_FORMAT_UNSIGNED_INT32;
}

CUresult CUDAAPI cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR *desc, CUarray array) {
    struct cudaChannelFormatDesc d;
    struct cudaExtent e;
    if (!desc) return CUDA_ERROR_INVALID_VALUE;
    cudaError_t r = cudaArrayGetInfo(&d, &e, NULL, (cudaArray_t)array);
    if (r) return cu(r);
    desc->Width = e.width, desc->Height = e.height, desc->Format = driver_format(&d);
    desc->NumChannels = 1 + (d.y > 0) + (d.z > 0) + (d.w > 0);
    return CUDA_SUCCESS;
}

/* A CUDA_MEMCPY2D: each side host, device (or unified) memory, or an array */
static CUresult copy_2d(const CUDA_MEMCPY2D *c, CUstream s, int sync) {
    if (!c) return CUDA_ERROR_INVALID_VALUE;
    int from_array = c->srcMemoryType == CU_MEMORYTYPE_ARRAY, to_array = c->dstMemoryType == CU_MEMORYTYPE_ARRAY;
    const char *src = c->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)c->srcHost : (const char *)PTR(c->srcDevice);
    char *dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)c->dstHost : (char *)PTR(c->dstDevice);
    enum cudaMemcpyKind kind = cudaMemcpyDefault;
    if (from_array && to_array) {
        if (c->srcY || c->dstY || c->srcXInBytes || c->dstXInBytes) return CUDA_ERROR_NOT_SUPPORTED;
        return cu(cudaMemcpy2DArrayToArray((cudaArray_t)c->dstArray, 0, 0, (cudaArray_const_t)c->srcArray, 0, 0,
                                           c->WidthInBytes, c->Height, cudaMemcpyDeviceToDevice));
    }
    if (to_array) {
        src += c->srcY * c->srcPitch + c->srcXInBytes;
        return cu(sync ? cudaMemcpy2DToArray((cudaArray_t)c->dstArray, c->dstXInBytes, c->dstY, src, c->srcPitch,
                                             c->WidthInBytes, c->Height, kind)
                       : cudaMemcpy2DToArrayAsync((cudaArray_t)c->dstArray, c->dstXInBytes, c->dstY, src, c->srcPitch,
                                                  c->WidthInBytes, c->Height, kind, (cudaStream_t)s));
    }
    if (from_array) {
        dst += c->dstY * c->dstPitch + c->dstXInBytes;
        return cu(sync ? cudaMemcpy2DFromArray(dst, c->dstPitch, (cudaArray_const_t)c->srcArray, c->srcXInBytes,
                                               c->srcY, c->WidthInBytes, c->Height, kind)
                       : cudaMemcpy2DFromArrayAsync(dst, c->dstPitch, (cudaArray_const_t)c->srcArray, c->srcXInBytes,
                                                    c->srcY, c->WidthInBytes, c->Height, kind, (cudaStream_t)s));
    }
    src += c->srcY * c->srcPitch + c->srcXInBytes;
    dst += c->dstY * c->dstPitch + c->dstXInBytes;
    return cu(sync ? cudaMemcpy2D(dst, c->dstPitch, src, c->srcPitch, c->WidthInBytes, c->Height, kind)
                   : cudaMemcpy2DAsync(dst, c->dstPitch, src, c->srcPitch, c->WidthInBytes, c->Height, kind,
                                       (cudaStream_t)s));
}

CUresult CUDAAPI cuMemcpy2D(const CUDA_MEMCPY2D *c) { return copy_2d(c, 0, 1); }
CUresult CUDAAPI cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *c) { return copy_2d(c, 0, 1); }
CUresult CUDAAPI cuMemcpy2DAsync(const CUDA_MEMCPY2D *c, CUstream s) { return copy_2d(c, s, 0); }

CUresult CUDAAPI cuMemcpyHtoA(CUarray dst, size_t offset, const void *src, size_t n) {
    return cu(cudaMemcpyToArray((cudaArray_t)dst, offset, 0, src, n, cudaMemcpyHostToDevice));
}

CUresult CUDAAPI cuMemcpyAtoH(void *dst, CUarray src, size_t offset, size_t n) {
    return cu(cudaMemcpyFromArray(dst, (cudaArray_const_t)src, offset, 0, n, cudaMemcpyDeviceToHost));
}

/* CU_TRSF_* flags and the format decide what the runtime's readMode and normalizedCoords say */
CUresult CUDAAPI cuTexObjectCreate(CUtexObject *tex, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
                                   const CUDA_RESOURCE_VIEW_DESC *view) {
    struct cudaResourceDesc rd;
    struct cudaTextureDesc td;
    struct cudaChannelFormatDesc fmt = {0};
    if (!tex || !r || !t) return CUDA_ERROR_INVALID_VALUE;
    if (view) {
        say_once("cudalab: cuTexObjectCreate with a resource view (CUDA_RESOURCE_VIEW_DESC) is not supported.");
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    memset(&rd, 0, sizeof rd);
    memset(&td, 0, sizeof td);
    rd.resType = (enum cudaResourceType)r->resType;
    switch (r->resType) {
    case CU_RESOURCE_TYPE_ARRAY:
        rd.res.array.array = (cudaArray_t)r->res.array.hArray;
        cudaArrayGetInfo(&fmt, NULL, NULL, rd.res.array.array);
        break;
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        rd.res.mipmap.mipmap = (cudaMipmappedArray_t)r->res.mipmap.hMipmappedArray;
        fmt.f = cudaChannelFormatKindFloat;
        break;
    case CU_RESOURCE_TYPE_LINEAR:
        if (!channel_desc(r->res.linear.format, r->res.linear.numChannels, &fmt)) return CUDA_ERROR_INVALID_VALUE;
        rd.res.linear.devPtr = PTR(r->res.linear.devPtr), rd.res.linear.desc = fmt;
        rd.res.linear.sizeInBytes = r->res.linear.sizeInBytes;
        break;
    case CU_RESOURCE_TYPE_PITCH2D:
        if (!channel_desc(r->res.pitch2D.format, r->res.pitch2D.numChannels, &fmt)) return CUDA_ERROR_INVALID_VALUE;
        rd.res.pitch2D.devPtr = PTR(r->res.pitch2D.devPtr), rd.res.pitch2D.desc = fmt;
        rd.res.pitch2D.width = r->res.pitch2D.width, rd.res.pitch2D.height = r->res.pitch2D.height;
        rd.res.pitch2D.pitchInBytes = r->res.pitch2D.pitchInBytes;
        break;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (int i = 0; i < 3; i++) td.addressMode[i] = (enum cudaTextureAddressMode)t->addressMode[i];
    td.filterMode = (enum cudaTextureFilterMode)t->filterMode;
    /* the driver reads 8- and 16-bit integers as normalized floats unless told CU_TRSF_READ_AS_INTEGER */
    td.readMode = (t->flags & CU_TRSF_READ_AS_INTEGER) || fmt.f == cudaChannelFormatKindFloat || fmt.x == 32
                      ? cudaReadModeElementType : cudaReadModeNormalizedFloat;
    td.normalizedCoords = !!(t->flags & CU_TRSF_NORMALIZED_COORDINATES);
    td.sRGB = !!(t->flags & CU_TRSF_SRGB);
    td.disableTrilinearOptimization = !!(t->flags & CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION);
    td.seamlessCubemap = !!(t->flags & CU_TRSF_SEAMLESS_CUBEMAP);
    memcpy(td.borderColor, t->borderColor, sizeof td.borderColor);
    td.maxAnisotropy = t->maxAnisotropy;
    td.mipmapFilterMode = (enum cudaTextureFilterMode)t->mipmapFilterMode;
    td.mipmapLevelBias = t->mipmapLevelBias;
    td.minMipmapLevelClamp = t->minMipmapLevelClamp, td.maxMipmapLevelClamp = t->maxMipmapLevelClamp;
    return cu(cudaCreateTextureObject((cudaTextureObject_t *)tex, &rd, &td, NULL));
}

CUresult CUDAAPI cuTexObjectDestroy(CUtexObject tex) { return cu(cudaDestroyTextureObject((cudaTextureObject_t)tex)); }

/* ------------------------------------------------------------------ virtual memory management */
#define GRANULE ((size_t)2 << 20)        /* an H100's minimum and recommended granularity: 2 MiB */

typedef struct { CUdeviceptr base; size_t size; void *allocation; } Reserved;
typedef struct { size_t size; CUdeviceptr mapped_at; int live, released, mapped, accessible; CUmemAllocationProp prop; } Physical;
static Reserved reserved[256];
static Physical physical[1024];
static int nreserved, nphysical;
static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;

static CUresult vmm_checked_prop(const CUmemAllocationProp *prop) {
    if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED || prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
        return CUDA_ERROR_INVALID_VALUE;
    if (prop->location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                               CUmemAllocationGranularity_flags option) {
    (void)option;
    if (!g) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = vmm_checked_prop(prop);
    if (!r) *g = GRANULE;
    return r;
}

CUresult CUDAAPI cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
                                     unsigned long long flags) {
    (void)addr, (void)flags;             /* a hint the driver may ignore too */
    if (!ptr || !size || size % GRANULE || (alignment & (alignment - 1))) return CUDA_ERROR_INVALID_VALUE;
    if (nreserved == 256) return CUDA_ERROR_OUT_OF_MEMORY;
    if (alignment < GRANULE) alignment = GRANULE;
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, size + alignment);     /* the arena's allocations are 256-byte aligned */
    if (e) return cu(e);
    CUdeviceptr base = ((CUdeviceptr)p + alignment - 1) / alignment * alignment;
    pthread_mutex_lock(&vmm_lock);
    reserved[nreserved++] = (Reserved){base, size, p};
    pthread_mutex_unlock(&vmm_lock);
    *ptr = base;
    return CUDA_SUCCESS;
}

static Reserved *reservation(CUdeviceptr p, size_t size) {
    for (int i = 0; i < nreserved; i++)
        if (p >= reserved[i].base && p + size <= reserved[i].base + reserved[i].size) return &reserved[i];
    return NULL;
}

CUresult CUDAAPI cuMemAddressFree(CUdeviceptr ptr, size_t size) {
    pthread_mutex_lock(&vmm_lock);
    int k = -1;
    void *allocation = NULL;
    for (int i = 0; i < nreserved; i++)
        if (reserved[i].base == ptr && reserved[i].size == size) k = i, allocation = reserved[i].allocation;
    for (int i = 0; i < nphysical && k >= 0; i++)
        if (physical[i].live && physical[i].mapped && physical[i].mapped_at >= ptr && physical[i].mapped_at < ptr + size)
            k = -2;                      /* still mapped: unmap first */
    if (k >= 0) reserved[k] = reserved[--nreserved];
    pthread_mutex_unlock(&vmm_lock);
    if (k < 0) return CUDA_ERROR_INVALID_VALUE;
    return cu(cudaFree(allocation));
}

CUresult CUDAAPI cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
                             unsigned long long flags) {
    if (!handle || flags) return CUDA_ERROR_INVALID_VALUE;
    CUresult r = vmm_checked_prop(prop);
    if (r) return r;
    if (!size || size % GRANULE) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    int k = nphysical < 1024 ? nphysical++ : -1;
    if (k >= 0) physical[k] = (Physical){size, 0, 1, 0, 0, 0, *prop};
    pthread_mutex_unlock(&vmm_lock);
    if (k < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    *handle = (CUmemGenericAllocationHandle)(k + 1);
    return CUDA_SUCCESS;
}

static Physical *physical_of(CUmemGenericAllocationHandle h) {
    return h >= 1 && h <= (CUmemGenericAllocationHandle)nphysical && physical[h - 1].live ? &physical[h - 1] : NULL;
}

/* released while mapped, it lives until unmapped, as the driver keeps it */
static void vmm_drop_if_done(Physical *p) {
    if (p->released && !p->mapped) p->live = 0;
}

CUresult CUDAAPI cuMemRelease(CUmemGenericAllocationHandle h) {
    pthread_mutex_lock(&vmm_lock);
    Physical *p = physical_of(h);
    if (p && !p->released) p->released = 1, vmm_drop_if_done(p);
    pthread_mutex_unlock(&vmm_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                          unsigned long long flags) {
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&vmm_lock);
    Physical *p = physical_of(h);
    if (!p || p->released || flags || offset || size != p->size || ptr % GRANULE || !reservation(ptr, size)) {
        r = CUDA_ERROR_INVALID_VALUE;
    } else if (p->mapped || (p->mapped_at && p->mapped_at != ptr)) {
        say_once("cudalab: mapping one physical allocation (cuMemCreate) at a second virtual address is not emulated: "
                 "cudalab keeps the memory at the address it was first mapped to");
        r = CUDA_ERROR_NOT_SUPPORTED;
    } else {
        for (int i = 0; i < nphysical; i++)      /* the range must be free */
            if (physical[i].live && physical[i].mapped && physical[i].mapped_at < ptr + size &&
                ptr < physical[i].mapped_at + physical[i].size)
                r = CUDA_ERROR_INVALID_VALUE;
        if (!r) p->mapped = 1, p->mapped_at = ptr, p->accessible = 0;
    }
    pthread_mutex_unlock(&vmm_lock);
    return r;
}

CUresult CUDAAPI cuMemUnmap(CUdeviceptr ptr, size_t size) {
    int found = 0;
    pthread_mutex_lock(&vmm_lock);
    if (reservation(ptr, size))
        for (int i = 0; i < nphysical; i++)
            if (physical[i].live && physical[i].mapped && physical[i].mapped_at >= ptr &&
                physical[i].mapped_at + physical[i].size <= ptr + size) {
                physical[i].mapped = 0, physical[i].accessible = 0, found = 1;
                vmm_drop_if_done(&physical[i]);
            }
    pthread_mutex_unlock(&vmm_lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* every byte of the range must be mapped; this device is the only location access can be given to */
CUresult CUDAAPI cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
    if (!desc || !count || !size) return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < count; i++) {
        if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
        if (desc[i].location.id != 0) return CUDA_ERROR_INVALID_DEVICE;
    }
    CUresult r = CUDA_SUCCESS;
    pthread_mutex_lock(&vmm_lock);
    for (CUdeviceptr at_ = ptr; at_ < ptr + size && !r;) {
        Physical *hit = NULL;
        for (int i = 0; i < nphysical; i++)
            if (physical[i].live && physical[i].mapped && physical[i].mapped_at <= at_ &&
                at_ < physical[i].mapped_at + physical[i].size)
                hit = &physical[i];
        if (!hit) r = CUDA_ERROR_INVALID_VALUE;
        else hit->accessible = desc[count - 1].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE, at_ = hit->mapped_at + hit->size;
    }
    pthread_mutex_unlock(&vmm_lock);
    return r;
}

CUresult CUDAAPI cuMemGetAccess(unsigned long long *flags, const CUmemLocation *where, CUdeviceptr ptr) {
    if (!flags || !where) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    int found = 0;
    for (int i = 0; i < nphysical; i++)
        if (physical[i].live && physical[i].mapped && physical[i].mapped_at <= ptr &&
            ptr < physical[i].mapped_at + physical[i].size)
            found = 1, *flags = physical[i].accessible ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE : CU_MEM_ACCESS_FLAGS_PROT_NONE;
    pthread_mutex_unlock(&vmm_lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult CUDAAPI cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h) {
    if (!prop) return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&vmm_lock);
    Physical *p = physical_of(h);
    if (p) *prop = p->prop;
    pthread_mutex_unlock(&vmm_lock);
    return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* the handle of the physical allocation mapped at addr (each retain wants its cuMemRelease) */
CUresult CUDAAPI cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *handle, void *addr) {
    if (!handle) return CUDA_ERROR_INVALID_VALUE;
    CUdeviceptr a = (CUdeviceptr)addr;
    int found = 0;
    pthread_mutex_lock(&vmm_lock);
    for (int i = 0; i < nphysical && !found; i++)
        if (physical[i].live && physical[i].mapped && physical[i].mapped_at <= a && a < physical[i].mapped_at + physical[i].size)
            found = 1, *handle = (CUmemGenericAllocationHandle)(i + 1);
    pthread_mutex_unlock(&vmm_lock);
    return found ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
