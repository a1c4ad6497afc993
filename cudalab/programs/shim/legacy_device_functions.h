/* The device functions without underscores of CUDA 1 to 11 (mul24, umul24, mulhi, float_as_int, saturate,
 * float2int, ...), for programs written then.
 *
 * Up to CUDA 11, crt/device_functions.hpp gave each of the intrinsics __mul24, __umul24, __mulhi, __umulhi,
 * __mul64hi, __umul64hi, __float_as_int, __int_as_float, __float_as_uint, __uint_as_float and __saturatef a
 * plain name, and float2int/float2uint/int2float/uint2float took the rounding mode as an argument. CUDA 12
 * dropped them, so nvcc 13 stops at 'identifier "mul24" is undefined' where the CUDA 2 SDK's quad-float
 * Mandelbrot, which a 2010 workshop teaches from, indexes its output with mul24(iy, tileSizeX).
 *
 * cudalab's build gives this header to a unit only when nvcc named one of them undefined (build.py), and
 * keeps the rebuild only if it compiles: a program that defines a saturate() of its own is left as it was.
 * Each name is the intrinsic it stood for, so the PTX (mul24.lo, mul.hi, cvt.rni, ...) is what CUDA 11 made.
 */
#pragma once
#if defined(__CUDACC__) && defined(__cplusplus)
#include <cuda_runtime.h>

static __device__ __forceinline__ int mul24(int a, int b) { return __mul24(a, b); }
static __device__ __forceinline__ unsigned int umul24(unsigned int a, unsigned int b) { return __umul24(a, b); }

static __device__ __forceinline__ int mulhi(int a, int b) { return __mulhi(a, b); }
static __device__ __forceinline__ unsigned int mulhi(unsigned int a, unsigned int b) { return __umulhi(a, b); }
static __device__ __forceinline__ unsigned int mulhi(int a, unsigned int b) { return __umulhi((unsigned int)a, b); }
static __device__ __forceinline__ unsigned int mulhi(unsigned int a, int b) { return __umulhi(a, (unsigned int)b); }

static __device__ __forceinline__ long long int mul64hi(long long int a, long long int b) { return __mul64hi(a, b); }
static __device__ __forceinline__ unsigned long long int mul64hi(unsigned long long int a, unsigned long long int b)
{ return __umul64hi(a, b); }
static __device__ __forceinline__ unsigned long long int mul64hi(long long int a, unsigned long long int b)
{ return __umul64hi((unsigned long long int)a, b); }
static __device__ __forceinline__ unsigned long long int mul64hi(unsigned long long int a, long long int b)
{ return __umul64hi(a, (unsigned long long int)b); }

static __device__ __forceinline__ int float_as_int(float a) { return __float_as_int(a); }
static __device__ __forceinline__ float int_as_float(int a) { return __int_as_float(a); }
static __device__ __forceinline__ unsigned int float_as_uint(float a) { return __float_as_uint(a); }
static __device__ __forceinline__ float uint_as_float(unsigned int a) { return __uint_as_float(a); }
static __device__ __forceinline__ float saturate(float a) { return __saturatef(a); }

/* (the conversions round toward zero from float and to nearest into float unless told otherwise, as then) */
static __device__ __forceinline__ int float2int(float a, enum cudaRoundMode mode = cudaRoundZero)
{
  return mode == cudaRoundNearest ? __float2int_rn(a) : mode == cudaRoundPosInf ? __float2int_ru(a)
       : mode == cudaRoundMinInf ? __float2int_rd(a) : __float2int_rz(a);
}
static __device__ __forceinline__ unsigned int float2uint(float a, enum cudaRoundMode mode = cudaRoundZero)
{
  return mode == cudaRoundNearest ? __float2uint_rn(a) : mode == cudaRoundPosInf ? __float2uint_ru(a)
       : mode == cudaRoundMinInf ? __float2uint_rd(a) : __float2uint_rz(a);
}
static __device__ __forceinline__ float int2float(int a, enum cudaRoundMode mode = cudaRoundNearest)
{
  return mode == cudaRoundZero ? __int2float_rz(a) : mode == cudaRoundPosInf ? __int2float_ru(a)
       : mode == cudaRoundMinInf ? __int2float_rd(a) : __int2float_rn(a);
}
static __device__ __forceinline__ float uint2float(unsigned int a, enum cudaRoundMode mode = cudaRoundNearest)
{
  return mode == cudaRoundZero ? __uint2float_rz(a) : mode == cudaRoundPosInf ? __uint2float_ru(a)
       : mode == cudaRoundMinInf ? __uint2float_rd(a) : __uint2float_rn(a);
}
#endif
