/* Texture and surface references (CUDA 2 to 11), which CUDA 12 removed, over texture and surface objects.
 *
 * Courses written before 2020 teach texture memory with a file-scope `texture<float, 2> tex;`, set its
 * filter and address modes from the host, bind it to memory (cudaBindTexture, cudaBindTexture2D,
 * cudaBindTextureToArray) and read it in kernels with tex1Dfetch(tex, i) or tex2D(tex, x, y); surfaces
 * the same way (`surface<void, 2>`, cudaBindSurfaceToArray, surf2Dwrite). nvcc 13 no longer knows any
 * of it. cudalab's build gives this header to a file that declares such a reference (build.py); each
 * reference becomes a __managed__ variable that both the host and the kernels see, holding the
 * reference's settings and the texture (or surface) object that binding makes from them, and each
 * fetch reads through that object: the same texture unit that texture objects use.
 */
#pragma once
#include <limits.h>        /* (C headers: a build that gives this header to every unit gives it to gcc's C files too) */
#include <string.h>
#include <cuda_runtime_api.h>
#include <channel_descriptor.h>     /* cudaCreateChannelDesc<T>(): nvcc's forced cuda_runtime.h brings it to a .cu
                                       file, but a program's .cpp files, built with the same -include, get none */
#include <texture_indirect_functions.h>
#include <surface_indirect_functions.h>

#ifdef __cplusplus
/* The settings of a texture reference (CUDA 11's textureReference), and the object bound to it */
struct textureReference {
    int normalized;
    enum cudaTextureFilterMode filterMode;
    enum cudaTextureAddressMode addressMode[3];
    struct cudaChannelFormatDesc channelDesc;
    int sRGB;
    unsigned int maxAnisotropy;
    enum cudaTextureFilterMode mipmapFilterMode;
    float mipmapLevelBias, minMipmapLevelClamp, maxMipmapLevelClamp;
    int disableTrilinearOptimization;
    enum cudaTextureReadMode cudalab_readMode;       /* the template's read mode, for the C calls */
    cudaTextureObject_t cudalab_object;              /* 0 while unbound */
};

/* The channel format CUDA 11's texture<T> constructor stored (cudaCreateChannelDesc<T>()), at compile
 * time: courses pass it on, `cudaMallocArray(&a, &tex.channelDesc, n)`, and a zero format made the array
 * (and with it every fetch) fail */
template <class T> constexpr struct cudaChannelFormatDesc cudalab_channel_of() {
    return {0, 0, 0, 0, cudaChannelFormatKindNone};
}
#define CUDALAB_CHANNEL(T, bits, n, kind)                                                               \
    template <> constexpr struct cudaChannelFormatDesc cudalab_channel_of<T>() {                        \
        return {bits, n > 1 ? bits : 0, n > 2 ? bits : 0, n > 3 ? bits : 0, kind};                     \
    }
#define CUDALAB_CHANNELS(S, V, bits, kind) \
    CUDALAB_CHANNEL(S, bits, 1, kind) CUDALAB_CHANNEL(V##1, bits, 1, kind) CUDALAB_CHANNEL(V##2, bits, 2, kind) \
    CUDALAB_CHANNEL(V##4, bits, 4, kind)
#if defined(_CHAR_UNSIGNED) || defined(__CHAR_UNSIGNED__)
CUDALAB_CHANNEL(char, 8, 1, cudaChannelFormatKindUnsigned)
#else
CUDALAB_CHANNEL(char, 8, 1, cudaChannelFormatKindSigned)
#endif
CUDALAB_CHANNELS(signed char, char, 8, cudaChannelFormatKindSigned)
CUDALAB_CHANNELS(unsigned char, uchar, 8, cudaChannelFormatKindUnsigned)
CUDALAB_CHANNELS(short, short, 16, cudaChannelFormatKindSigned)
CUDALAB_CHANNELS(unsigned short, ushort, 16, cudaChannelFormatKindUnsigned)
CUDALAB_CHANNELS(int, int, 32, cudaChannelFormatKindSigned)
CUDALAB_CHANNELS(unsigned int, uint, 32, cudaChannelFormatKindUnsigned)
CUDALAB_CHANNELS(float, float, 32, cudaChannelFormatKindFloat)
#undef CUDALAB_CHANNELS
#undef CUDALAB_CHANNEL

template <class T, int dim = cudaTextureType1D, enum cudaTextureReadMode mode = cudaReadModeElementType>
struct cudalab_texture : textureReference {
    /* constant initialization, which a __managed__ variable needs: point sampling, clamped, unnormalized */
    constexpr cudalab_texture()
        : textureReference{0, cudaFilterModePoint, {cudaAddressModeClamp, cudaAddressModeClamp, cudaAddressModeClamp},
                           cudalab_channel_of<T>(), 0, 0, cudaFilterModePoint, 0.f, 0.f, 0.f, 0,
                           mode, 0} {}
};

struct surfaceReference {
    struct cudaChannelFormatDesc channelDesc;
    cudaSurfaceObject_t cudalab_object;
};

template <class T, int dim = cudaSurfaceType1D>
struct cudalab_surface : surfaceReference {
    constexpr cudalab_surface() : surfaceReference{{0, 0, 0, 0, cudaChannelFormatKindNone}, 0} {}
};

#define texture __managed__ cudalab_texture
#define surface __managed__ cudalab_surface

/* ---------------------------------------------------------------- binding (host) */
static inline cudaError_t cudalab_bind_texture(const struct textureReference *ref, struct cudaResourceDesc *res) {
    struct textureReference *t = const_cast<struct textureReference *>(ref);
    if (!t) return cudaErrorInvalidValue;
    if (t->cudalab_object) cudaDestroyTextureObject(t->cudalab_object), t->cudalab_object = 0;
    struct cudaTextureDesc desc = {};
    for (int i = 0; i < 3; i++) desc.addressMode[i] = t->addressMode[i];
    desc.filterMode = t->filterMode;
    desc.readMode = t->cudalab_readMode;
    desc.sRGB = t->sRGB;
    desc.normalizedCoords = t->normalized;
    desc.maxAnisotropy = t->maxAnisotropy;
    desc.mipmapFilterMode = t->mipmapFilterMode;
    desc.mipmapLevelBias = t->mipmapLevelBias;
    desc.minMipmapLevelClamp = t->minMipmapLevelClamp;
    desc.maxMipmapLevelClamp = t->maxMipmapLevelClamp;
    return cudaCreateTextureObject(&t->cudalab_object, res, &desc, 0);
}

/* cudaBindTexture's size defaulted to UINT_MAX, "the rest of the allocation"; a texture object holds at
 * most the device's largest linear 1D texture, which is where a GPU's reads stopped too */
static inline size_t cudalab_linear_bytes(size_t size, const struct cudaChannelFormatDesc *desc) {
    int device = 0, width = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&width, cudaDevAttrMaxTexture1DLinearWidth, device);
    size_t texel = (size_t)(desc->x + desc->y + desc->z + desc->w) / 8, most = (size_t)width * (texel ? texel : 1);
    return size < most ? size : most;
}

static inline cudaError_t cudaBindTexture(size_t *offset, const struct textureReference *texref, const void *devPtr,
                                          const struct cudaChannelFormatDesc *desc, size_t size = UINT_MAX) {
    if (!desc) return cudaErrorInvalidValue;
    if (offset) *offset = 0;
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = const_cast<void *>(devPtr);
    res.res.linear.desc = *desc;
    res.res.linear.sizeInBytes = cudalab_linear_bytes(size, desc);
    const_cast<struct textureReference *>(texref)->channelDesc = *desc;
    return cudalab_bind_texture(texref, &res);
}

static inline cudaError_t cudaBindTexture2D(size_t *offset, const struct textureReference *texref, const void *devPtr,
                                            const struct cudaChannelFormatDesc *desc, size_t width, size_t height,
                                            size_t pitch) {
    if (!desc) return cudaErrorInvalidValue;
    if (offset) *offset = 0;
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = const_cast<void *>(devPtr);
    res.res.pitch2D.desc = *desc;
    res.res.pitch2D.width = width, res.res.pitch2D.height = height, res.res.pitch2D.pitchInBytes = pitch;
    const_cast<struct textureReference *>(texref)->channelDesc = *desc;
    return cudalab_bind_texture(texref, &res);
}

static inline cudaError_t cudaBindTextureToArray(const struct textureReference *texref, cudaArray_const_t array,
                                                 const struct cudaChannelFormatDesc *desc) {
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = const_cast<cudaArray_t>(array);
    if (desc) const_cast<struct textureReference *>(texref)->channelDesc = *desc;
    return cudalab_bind_texture(texref, &res);
}

static inline cudaError_t cudaBindTextureToMipmappedArray(const struct textureReference *texref,
                                                          cudaMipmappedArray_const_t array,
                                                          const struct cudaChannelFormatDesc *desc) {
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = const_cast<cudaMipmappedArray_t>(array);
    if (desc) const_cast<struct textureReference *>(texref)->channelDesc = *desc;
    return cudalab_bind_texture(texref, &res);
}

static inline cudaError_t cudaUnbindTexture(const struct textureReference *texref) {
    struct textureReference *t = const_cast<struct textureReference *>(texref);
    if (!t) return cudaErrorInvalidValue;
    cudaError_t e = t->cudalab_object ? cudaDestroyTextureObject(t->cudalab_object) : cudaSuccess;
    t->cudalab_object = 0;
    return e;
}

static inline cudaError_t cudaGetTextureAlignmentOffset(size_t *offset, const struct textureReference *texref) {
    (void)texref;
    if (!offset) return cudaErrorInvalidValue;
    *offset = 0;                    /* cudaBindTexture takes the pointer as it is: no offset to add */
    return cudaSuccess;
}

/* the C++ forms: the reference itself, and the channel format from its texel type where none is given */
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture(size_t *offset, const struct cudalab_texture<T, dim, mode> &tex,
                                          const void *devPtr, const struct cudaChannelFormatDesc &desc,
                                          size_t size = UINT_MAX) {
    return cudaBindTexture(offset, &tex, devPtr, &desc, size);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture(size_t *offset, const struct cudalab_texture<T, dim, mode> &tex,
                                          const void *devPtr, size_t size = UINT_MAX) {
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc<T>();
    return cudaBindTexture(offset, &tex, devPtr, &desc, size);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture2D(size_t *offset, const struct cudalab_texture<T, dim, mode> &tex,
                                            const void *devPtr, const struct cudaChannelFormatDesc &desc,
                                            size_t width, size_t height, size_t pitch) {
    return cudaBindTexture2D(offset, &tex, devPtr, &desc, width, height, pitch);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTexture2D(size_t *offset, const struct cudalab_texture<T, dim, mode> &tex,
                                            const void *devPtr, size_t width, size_t height, size_t pitch) {
    struct cudaChannelFormatDesc desc = cudaCreateChannelDesc<T>();
    return cudaBindTexture2D(offset, &tex, devPtr, &desc, width, height, pitch);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTextureToArray(const struct cudalab_texture<T, dim, mode> &tex,
                                                 cudaArray_const_t array, const struct cudaChannelFormatDesc &desc) {
    return cudaBindTextureToArray(&tex, array, &desc);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaBindTextureToArray(const struct cudalab_texture<T, dim, mode> &tex,
                                                 cudaArray_const_t array) {
    struct cudaChannelFormatDesc desc;
    cudaError_t e = cudaGetChannelDesc(&desc, array);
    return e ? e : cudaBindTextureToArray(&tex, array, &desc);
}
template <class T, int dim, enum cudaTextureReadMode mode>
static inline cudaError_t cudaUnbindTexture(const struct cudalab_texture<T, dim, mode> &tex) {
    return cudaUnbindTexture(&tex);
}

static inline cudaError_t cudaBindSurfaceToArray(const struct surfaceReference *surfref, cudaArray_const_t array,
                                                 const struct cudaChannelFormatDesc *desc) {
    struct surfaceReference *s = const_cast<struct surfaceReference *>(surfref);
    if (!s) return cudaErrorInvalidValue;
    if (s->cudalab_object) cudaDestroySurfaceObject(s->cudalab_object), s->cudalab_object = 0;
    if (desc) s->channelDesc = *desc;
    struct cudaResourceDesc res = {};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = const_cast<cudaArray_t>(array);
    return cudaCreateSurfaceObject(&s->cudalab_object, &res);
}
template <class T, int dim>
static inline cudaError_t cudaBindSurfaceToArray(const struct cudalab_surface<T, dim> &surf, cudaArray_const_t array,
                                                 const struct cudaChannelFormatDesc &desc) {
    return cudaBindSurfaceToArray(&surf, array, &desc);
}
template <class T, int dim>
static inline cudaError_t cudaBindSurfaceToArray(const struct cudalab_surface<T, dim> &surf, cudaArray_const_t array) {
    return cudaBindSurfaceToArray(&surf, array, (const struct cudaChannelFormatDesc *)0);
}

/* ---------------------------------------------------------------- fetching (device) */
/* what a fetch returns: the texel type, or with cudaReadModeNormalizedFloat its float form */
template <class T, enum cudaTextureReadMode mode> struct cudalab_texel { typedef T type; };
#define CUDALAB_NORMALIZED(T, F) \
    template <> struct cudalab_texel<T, cudaReadModeNormalizedFloat> { typedef F type; };
#define CUDALAB_NORMALIZED_VECTORS(B) CUDALAB_NORMALIZED(B##1, float1) CUDALAB_NORMALIZED(B##2, float2) \
    CUDALAB_NORMALIZED(B##4, float4)
CUDALAB_NORMALIZED(char, float) CUDALAB_NORMALIZED(signed char, float) CUDALAB_NORMALIZED(unsigned char, float)
CUDALAB_NORMALIZED(short, float) CUDALAB_NORMALIZED(unsigned short, float)
CUDALAB_NORMALIZED_VECTORS(char) CUDALAB_NORMALIZED_VECTORS(uchar)
CUDALAB_NORMALIZED_VECTORS(short) CUDALAB_NORMALIZED_VECTORS(ushort)
#undef CUDALAB_NORMALIZED_VECTORS
#undef CUDALAB_NORMALIZED

#define CUDALAB_TEXEL typename cudalab_texel<T, mode>::type
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex1Dfetch(const cudalab_texture<T, dim, mode> &t, int x)
{ return tex1Dfetch<CUDALAB_TEXEL>(t.cudalab_object, x); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex1D(const cudalab_texture<T, dim, mode> &t, float x)
{ return tex1D<CUDALAB_TEXEL>(t.cudalab_object, x); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex2D(const cudalab_texture<T, dim, mode> &t, float x, float y)
{ return tex2D<CUDALAB_TEXEL>(t.cudalab_object, x, y); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex3D(const cudalab_texture<T, dim, mode> &t, float x, float y, float z)
{ return tex3D<CUDALAB_TEXEL>(t.cudalab_object, x, y, z); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex1DLayered(const cudalab_texture<T, dim, mode> &t, float x, int layer)
{ return tex1DLayered<CUDALAB_TEXEL>(t.cudalab_object, x, layer); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex2DLayered(const cudalab_texture<T, dim, mode> &t, float x, float y, int layer)
{ return tex2DLayered<CUDALAB_TEXEL>(t.cudalab_object, x, y, layer); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex1DLod(const cudalab_texture<T, dim, mode> &t, float x, float level)
{ return tex1DLod<CUDALAB_TEXEL>(t.cudalab_object, x, level); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_TEXEL tex2DLod(const cudalab_texture<T, dim, mode> &t, float x, float y, float level)
{ return tex2DLod<CUDALAB_TEXEL>(t.cudalab_object, x, y, level); }
#undef CUDALAB_TEXEL

/* surface reads and writes through the bound object (x in bytes, as with surface objects). A reference's
 * functions took any type and moved sizeof(T) bytes (CUDA 11's surface_functions.h dispatched on the size:
 * a course's heat solver keeps doubles in a surface); the object's functions take only the types of
 * __nv_isurf_trait (no double, no struct), so each access goes through the unsigned word of T's size, the
 * same bytes (a surface stores raw bytes: sust.b) */
template <int bytes> struct cudalab_surface_word;
template <> struct cudalab_surface_word<1> { typedef unsigned char type; };
template <> struct cudalab_surface_word<2> { typedef unsigned short type; };
template <> struct cudalab_surface_word<4> { typedef unsigned int type; };
template <> struct cudalab_surface_word<8> { typedef unsigned long long type; };
template <> struct cudalab_surface_word<16> { typedef ulonglong2 type; };
#define CUDALAB_WORD typename cudalab_surface_word<sizeof(T)>::type
template <class T>
static __device__ inline CUDALAB_WORD cudalab_as_word(const T &value)
{ CUDALAB_WORD w; memcpy(&w, &value, sizeof(T)); return w; }
template <class T, class W>
static __device__ inline T cudalab_from_word(const W &w)
{ T value; memcpy(&value, &w, sizeof(T)); return value; }

template <class T, class S, int dim>
static __device__ inline void surf1Dwrite(T value, const cudalab_surface<S, dim> &s, int x,
                                          enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ surf1Dwrite<CUDALAB_WORD>(cudalab_as_word(value), s.cudalab_object, x, mode); }
template <class T, class S, int dim>
static __device__ inline void surf2Dwrite(T value, const cudalab_surface<S, dim> &s, int x, int y,
                                          enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ surf2Dwrite<CUDALAB_WORD>(cudalab_as_word(value), s.cudalab_object, x, y, mode); }
template <class T, class S, int dim>
static __device__ inline void surf3Dwrite(T value, const cudalab_surface<S, dim> &s, int x, int y, int z,
                                          enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ surf3Dwrite<CUDALAB_WORD>(cudalab_as_word(value), s.cudalab_object, x, y, z, mode); }
template <class T, class S, int dim>
static __device__ inline T surf1Dread(const cudalab_surface<S, dim> &s, int x,
                                      enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ return cudalab_from_word<T>(surf1Dread<CUDALAB_WORD>(s.cudalab_object, x, mode)); }
template <class T, class S, int dim>
static __device__ inline T surf2Dread(const cudalab_surface<S, dim> &s, int x, int y,
                                      enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ return cudalab_from_word<T>(surf2Dread<CUDALAB_WORD>(s.cudalab_object, x, y, mode)); }
template <class T, class S, int dim>
static __device__ inline T surf3Dread(const cudalab_surface<S, dim> &s, int x, int y, int z,
                                      enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ return cudalab_from_word<T>(surf3Dread<CUDALAB_WORD>(s.cudalab_object, x, y, z, mode)); }
template <class T, class S, int dim>
static __device__ inline void surf1Dread(T *value, const cudalab_surface<S, dim> &s, int x,
                                         enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ *value = surf1Dread<T>(s, x, mode); }
template <class T, class S, int dim>
static __device__ inline void surf2Dread(T *value, const cudalab_surface<S, dim> &s, int x, int y,
                                         enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ *value = surf2Dread<T>(s, x, y, mode); }
template <class T, class S, int dim>
static __device__ inline void surf3Dread(T *value, const cudalab_surface<S, dim> &s, int x, int y, int z,
                                         enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ *value = surf3Dread<T>(s, x, y, z, mode); }
/* layered surfaces (PyCUDA's np_to_array(..., allowSurfaceBind=True) makes a 2D array a layered one) */
template <class T, class S, int dim>
static __device__ inline void surf1DLayeredwrite(T value, const cudalab_surface<S, dim> &s, int x, int layer,
                                                 enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ surf1DLayeredwrite<CUDALAB_WORD>(cudalab_as_word(value), s.cudalab_object, x, layer, mode); }
template <class T, class S, int dim>
static __device__ inline void surf2DLayeredwrite(T value, const cudalab_surface<S, dim> &s, int x, int y, int layer,
                                                 enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ surf2DLayeredwrite<CUDALAB_WORD>(cudalab_as_word(value), s.cudalab_object, x, y, layer, mode); }
template <class T, class S, int dim>
static __device__ inline T surf1DLayeredread(const cudalab_surface<S, dim> &s, int x, int layer,
                                             enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ return cudalab_from_word<T>(surf1DLayeredread<CUDALAB_WORD>(s.cudalab_object, x, layer, mode)); }
template <class T, class S, int dim>
static __device__ inline T surf2DLayeredread(const cudalab_surface<S, dim> &s, int x, int y, int layer,
                                             enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ return cudalab_from_word<T>(surf2DLayeredread<CUDALAB_WORD>(s.cudalab_object, x, y, layer, mode)); }
template <class T, class S, int dim>
static __device__ inline void surf1DLayeredread(T *value, const cudalab_surface<S, dim> &s, int x, int layer,
                                                enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ *value = surf1DLayeredread<T>(s, x, layer, mode); }
template <class T, class S, int dim>
static __device__ inline void surf2DLayeredread(T *value, const cudalab_surface<S, dim> &s, int x, int y, int layer,
                                                enum cudaSurfaceBoundaryMode mode = cudaBoundaryModeTrap)
{ *value = surf2DLayeredread<T>(s, x, y, layer, mode); }
#undef CUDALAB_WORD
#endif
