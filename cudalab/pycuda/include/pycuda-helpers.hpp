// PyCUDA's <pycuda-helpers.hpp> as cudalab's PyCUDA stand-in gives it, in our own words: textures and
// surfaces of doubles and complex values. A texture holds at most 32-bit channels, so PyCUDA keeps a
// double as an int2 (fp_tex_double), a complex<float> as a uint2 and a complex<double> as an int4, and
// fp_tex*() put the value back together; fp_surf*() move a value of any type by its index (x in
// elements, not bytes). Built over cudalab's texture and surface references (legacy_textures.h, which
// a SourceModule that declares one is compiled with); without them only the type names are defined.
#pragma once
#include <pycuda-complex.hpp>
extern "C++" {
typedef float fp_tex_float;
typedef int2 fp_tex_double;
typedef uint2 fp_tex_cfloat;
typedef int4 fp_tex_cdouble;

#ifdef surface
// what a texel of type T stands for, and how to read it back
template <class T> struct cudalab_fp_texel {
    typedef T value;
    static __device__ value of(T t) { return t; }
};
template <> struct cudalab_fp_texel<int2> {
    typedef double value;
    static __device__ value of(int2 t) { return __hiloint2double(t.y, t.x); }
};
template <> struct cudalab_fp_texel<uint2> {
    typedef pycuda::complex<float> value;
    static __device__ value of(uint2 t) { return value(__int_as_float(t.x), __int_as_float(t.y)); }
};
template <> struct cudalab_fp_texel<int4> {
    typedef pycuda::complex<double> value;
    static __device__ value of(int4 t) { return value(__hiloint2double(t.y, t.x), __hiloint2double(t.w, t.z)); }
};
#define CUDALAB_FP(T) typename cudalab_fp_texel<T>::value

template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_FP(T) fp_tex1Dfetch(const cudalab_texture<T, dim, mode> &t, int i)
{ return cudalab_fp_texel<T>::of(tex1Dfetch(t, i)); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_FP(T) fp_tex2D(const cudalab_texture<T, dim, mode> &t, float x, float y)
{ return cudalab_fp_texel<T>::of(tex2D(t, x, y)); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_FP(T) fp_tex3D(const cudalab_texture<T, dim, mode> &t, float x, float y, float z)
{ return cudalab_fp_texel<T>::of(tex3D(t, x, y, z)); }
template <class T, int dim, enum cudaTextureReadMode mode>
static __device__ inline CUDALAB_FP(T) fp_tex2DLayered(const cudalab_texture<T, dim, mode> &t, float x, float y,
                                                       int layer)
{ return cudalab_fp_texel<T>::of(tex2DLayered(t, x, y, layer)); }
#undef CUDALAB_FP

template <class T, class S, int dim>
static __device__ inline void fp_surf2Dwrite(T value, const cudalab_surface<S, dim> &s, int i, int j,
                                             enum cudaSurfaceBoundaryMode mode)
{ surf2Dwrite(value, s, i * (int)sizeof(T), j, mode); }
template <class T, class S, int dim>
static __device__ inline void fp_surf2Dread(T *value, const cudalab_surface<S, dim> &s, int i, int j,
                                            enum cudaSurfaceBoundaryMode mode)
{ surf2Dread(value, s, i * (int)sizeof(T), j, mode); }
template <class T, class S, int dim>
static __device__ inline void fp_surf3Dwrite(T value, const cudalab_surface<S, dim> &s, int i, int j, int k,
                                             enum cudaSurfaceBoundaryMode mode)
{ surf3Dwrite(value, s, i * (int)sizeof(T), j, k, mode); }
template <class T, class S, int dim>
static __device__ inline void fp_surf3Dread(T *value, const cudalab_surface<S, dim> &s, int i, int j, int k,
                                            enum cudaSurfaceBoundaryMode mode)
{ surf3Dread(value, s, i * (int)sizeof(T), j, k, mode); }
template <class T, class S, int dim>
static __device__ inline void fp_surf2DLayeredwrite(T value, const cudalab_surface<S, dim> &s, int i, int j, int layer,
                                                    enum cudaSurfaceBoundaryMode mode)
{ surf2DLayeredwrite(value, s, i * (int)sizeof(T), j, layer, mode); }
template <class T, class S, int dim>
static __device__ inline void fp_surf2DLayeredread(T *value, const cudalab_surface<S, dim> &s, int i, int j, int layer,
                                                   enum cudaSurfaceBoundaryMode mode)
{ surf2DLayeredread(value, s, i * (int)sizeof(T), j, layer, mode); }
#endif
}  // extern "C++"
