"""Half precision through cuda_fp16.h and bfloat16 through cuda_bf16.h: conversions, arithmetic, half2."""
import numpy as np

from . import F32_EDGES, F64_EDGES, Corpus, f32_mix

CASES = Corpus("half")
case = CASES.case

EVERY_16BIT_WORD = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16)


def halves(r, n):
    """n float16s: every special class, then random bit patterns (so NaN payloads and denormals too)."""
    special = np.array([0, 0x8000, 0x3C00, 0xBC00, 0x3800, 0x3E00, 0x4100, 0x7BFF, 0xFBFF, 0x0001, 0x8001,
                        0x03FF, 0x0400, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7C01, 0x7E55, 0x3555, 0x5BFF, 0x6800],
                       np.uint16)
    return np.concatenate([special, r.integers(0, 2 ** 16, n - special.size).astype(np.uint16)]).view(np.float16)


def bf16s(r, n):
    """n bfloat16 words (stored as uint16), with the same classes as halves()."""
    special = np.array([0, 0x8000, 0x3F80, 0xBF80, 0x3F00, 0x3FC0, 0x7F7F, 0xFF7F, 0x0001, 0x807F, 0x0080,
                        0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7F81, 0x3EAB, 0x4049, 0x4B80, 0x4F00], np.uint16)
    return np.concatenate([special, r.integers(0, 2 ** 16, n - special.size).astype(np.uint16)])


def floats_near_half_grid(r, n):
    """Floats exactly halfway between neighbouring halves (ties), their neighbours, and edge values."""
    h = np.arange(0x0000, 0x7C00, 251, dtype=np.uint16).view(np.float16).astype(np.float32)
    nxt = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float32)
    mid = ((h.astype(np.float64) + nxt) / 2).astype(np.float32)
    vals = np.concatenate([mid, -mid, np.nextafter(mid, np.float32(np.inf)), F32_EDGES, f32_mix(r, 128)])
    return vals[:n].copy()


case("half_to_float_every_word", r'''
#include <cuda_fp16.h>
__global__ void h2f(const __half* h, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __half2float(h[i]);
}''', "h2f", 256, 256, lambda r: [EVERY_16BIT_WORD.view(np.float16), np.zeros(2 ** 16, np.float32)])

case("bfloat16_to_float_every_word", r'''
#include <cuda_bf16.h>
__global__ void b2f(const __nv_bfloat16* b, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = __bfloat162float(b[i]);
}''', "b2f", 256, 256, lambda r: [EVERY_16BIT_WORD, np.zeros(2 ** 16, np.float32)])

case("float_to_half_all_modes", r'''
#include <cuda_fp16.h>
__global__ void f2h(const float* x, const double* d, __half* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[0 * n + i] = __float2half_rn(x[i]);
  out[1 * n + i] = __float2half_rz(x[i]);
  out[2 * n + i] = __float2half_rd(x[i]);
  out[3 * n + i] = __float2half_ru(x[i]);
  out[4 * n + i] = __float2half(x[i]);
  out[5 * n + i] = __double2half(d[i]);
}''', "f2h", 2, 256, lambda r: [floats_near_half_grid(r, 512),
                                np.concatenate([F64_EDGES, r.standard_normal(476) * np.exp2(r.integers(-30, 20, 476))]),
                                np.zeros((6, 512), np.float16), np.int32(512)])

case("float_to_bfloat16_all_modes", r'''
#include <cuda_bf16.h>
__global__ void f2b(const float* x, const double* d, __nv_bfloat16* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[0 * n + i] = __float2bfloat16_rn(x[i]);
  out[1 * n + i] = __float2bfloat16_rz(x[i]);
  out[2 * n + i] = __float2bfloat16_rd(x[i]);
  out[3 * n + i] = __float2bfloat16_ru(x[i]);
  out[4 * n + i] = __double2bfloat16(d[i]);
}''', "f2b", 2, 256, lambda r: [np.concatenate([f32_mix(r, 256), (bf16s(r, 128).astype(np.uint32) << 16 | 0x8000).view(np.float32),
                                                (r.integers(0, 2 ** 32, 128, dtype=np.uint64).astype(np.uint32) | 0x7FFF).view(np.float32)]),
                                np.concatenate([F64_EDGES, r.standard_normal(476) * np.exp2(r.integers(-140, 130, 476))]),
                                np.zeros((5, 512), np.uint16), np.int32(512)], arch="compute_90")

case("half_arithmetic_ieee", r'''
#include <cuda_fp16.h>
__global__ void harith(const __half* a, const __half* b, const __half* c, __half* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i], z = c[i];
  __half r[12] = {__hadd(x, y), __hsub(x, y), __hmul(x, y), __hdiv(x, y), __hfma(x, y, z), __hneg(x),
                  __habs(x), __hadd_sat(x, y), __hfma_sat(x, y, z), x * y + z, __hmin(x, y), __hmax_nan(x, y)};
  for (int k = 0; k < 12; ++k) out[k * n + i] = r[k];
}''', "harith", 2, 256, lambda r: [halves(r, 512), np.roll(halves(r, 512), 23), np.roll(halves(r, 512), 301),
                                   np.zeros((12, 512), np.float16), np.int32(512)])

case("half_comparisons", r'''
#include <cuda_fp16.h>
__global__ void hcmp(const __half* a, const __half* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i];
  out[i] = __heq(x, y) | __hne(x, y) << 1 | __hlt(x, y) << 2 | __hle(x, y) << 3 | __hgt(x, y) << 4 |
           __hge(x, y) << 5 | __hequ(x, y) << 6 | __hltu(x, y) << 7 | __hisnan(x) << 8 | (__hisinf(x) != 0) << 9 |
           (x < y) << 10;
}''', "hcmp", 2, 256, lambda r: [halves(r, 512), np.roll(halves(r, 512), 7), np.zeros(512, np.int32), np.int32(512)])

case("half_integer_conversions", r'''
#include <cuda_fp16.h>
__global__ void hint(const __half* h, const int* v, int* out, __half* hout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = h[i];
  out[0 * n + i] = __half2int_rn(x);
  out[1 * n + i] = __half2int_rz(x);
  out[2 * n + i] = __half2int_rd(x);
  out[3 * n + i] = __half2int_ru(x);
  out[4 * n + i] = (int)__half2uint_rz(x);
  out[5 * n + i] = __half2short_rn(x);
  out[6 * n + i] = (int)__half2ll_rz(x);
  out[7 * n + i] = __half_as_ushort(x);
  hout[0 * n + i] = __int2half_rn(v[i]);
  hout[1 * n + i] = __int2half_rz(v[i]);
  hout[2 * n + i] = __int2half_rd(v[i]);
  hout[3 * n + i] = __int2half_ru(v[i]);
  hout[4 * n + i] = __uint2half_rn((unsigned)v[i]);
  hout[5 * n + i] = __short2half_rn((short)v[i]);
  hout[6 * n + i] = __ll2half_rn((long long)v[i] * 1048576);
}''', "hint", 2, 256, lambda r: [halves(r, 512),
                                 np.concatenate([np.arange(65500, 65540), -np.arange(65500, 65540), np.arange(2040, 2060),
                                                 r.integers(-2 ** 31, 2 ** 31, 412)]).astype(np.int32),
                                 np.zeros((8, 512), np.int32), np.zeros((7, 512), np.float16), np.int32(512)])

case("half_rounding_functions", r'''
#include <cuda_fp16.h>
__global__ void hround(const __half* h, __half* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[0 * n + i] = hceil(h[i]);
  out[1 * n + i] = hfloor(h[i]);
  out[2 * n + i] = htrunc(h[i]);
  out[3 * n + i] = hrint(h[i]);
  out[4 * n + i] = hsqrt(h[i]);
}''', "hround", 2, 256, lambda r: [halves(r, 512), np.zeros((5, 512), np.float16), np.int32(512)])

case("half_math_approx", r'''
#include <cuda_fp16.h>
__global__ void hmath(const __half* h, __half* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = h[i];
  out[0 * n + i] = hrsqrt(x);
  out[1 * n + i] = hrcp(x);
  out[2 * n + i] = hexp(x);
  out[3 * n + i] = hexp2(x);
  out[4 * n + i] = hlog(x);
  out[5 * n + i] = hlog2(x);
  out[6 * n + i] = hsin(x);
  out[7 * n + i] = hcos(x);
}''', "hmath", 2, 256, lambda r: [halves(r, 512), np.zeros((8, 512), np.float16), np.int32(512)], ulp=2)

case("half2_vector_ops", r'''
#include <cuda_fp16.h>
__global__ void h2ops(const __half2* a, const __half2* b, __half2* out, float2* fout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i], y = b[i];
  out[0 * n + i] = __hadd2(x, y);
  out[1 * n + i] = __hmul2(x, y);
  out[2 * n + i] = __hfma2(x, y, x);
  out[3 * n + i] = __h2div(x, y);
  out[4 * n + i] = __lowhigh2highlow(x);
  out[5 * n + i] = __halves2half2(__high2half(x), __low2half(y));
  out[6 * n + i] = __hmax2(x, y);
  out[7 * n + i] = __hlt2(x, y);
  out[8 * n + i] = __habs2(__hneg2(x));
  fout[i] = __half22float2(x);
}''', "h2ops", 1, 256, lambda r: [halves(r, 512), np.roll(halves(r, 512), 33), np.zeros((9, 512), np.float16),
                                  np.zeros(512, np.float32), np.int32(256)])

case("half2_axpy_and_dot", r'''
#include <cuda_fp16.h>
__global__ void h2dot(const __half2* x, __half2* y, float* dot, __half a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  __half2 acc = __float2half2_rn(0.0f);
  if (i < n) {
    y[i] = __hfma2(__half2half2(a), x[i], y[i]);
    acc = __hmul2(x[i], y[i]);
  }
  for (int off = 16; off > 0; off >>= 1) acc = __hadd2(acc, __shfl_down_sync(0xffffffffu, acc, off));
  if ((threadIdx.x & 31) == 0) dot[i / 32] = __low2float(acc) + __high2float(acc);
}''', "h2dot", 2, 128, lambda r: [(r.standard_normal(512) * 0.5).astype(np.float16), (r.standard_normal(512) * 0.5).astype(np.float16),
                                   np.zeros(8, np.float32), np.float16(0.75), np.int32(256)])

case("bfloat16_arithmetic", r'''
#include <cuda_bf16.h>
__global__ void barith(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* out, int* iout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 x = a[i], y = b[i];
  __nv_bfloat16 r[9] = {__hadd(x, y), __hsub(x, y), __hmul(x, y), __hdiv(x, y), __hfma(x, y, x), __hneg(x),
                        __habs(x), __hmax(x, y), __hmin_nan(x, y)};
  for (int k = 0; k < 9; ++k) out[k * n + i] = r[k];
  iout[0 * n + i] = __bfloat162int_rn(x);
  iout[1 * n + i] = __bfloat162int_rz(x);
  iout[2 * n + i] = __hlt(x, y) | __hequ(x, y) << 1 | __hisnan(x) << 2;
}''', "barith", 2, 256, lambda r: [bf16s(r, 512), np.roll(bf16s(r, 512), 19), np.zeros((9, 512), np.uint16),
                                   np.zeros((3, 512), np.int32), np.int32(512)])

case("bfloat162_and_float2_packing", r'''
#include <cuda_bf16.h>
#include <cuda_fp16.h>
__global__ void pack(const float2* f, __nv_bfloat162* bout, __half2* hout, float2* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat162 b = __float22bfloat162_rn(f[i]);
  bout[2 * i] = b;
  bout[2 * i + 1] = __hfma2(b, b, __floats2bfloat162_rn(1.0f, -1.0f));
  hout[i] = __float22half2_rn(f[i]);
  back[i] = __bfloat1622float2(b);
}''', "pack", 1, 256, lambda r: [f32_mix(r, 512), np.zeros(1024, np.uint16), np.zeros(512, np.float16),
                                 np.zeros(512, np.float32), np.int32(256)])
