"""Conversions between integers and floats: every rounding mode, saturation of out-of-range values, NaN."""
import numpy as np

from . import F32_EDGES, F64_EDGES, Corpus, f32_mix, f64_mix, i32_mix, i64_mix

CASES = Corpus("conversions")
case = CASES.case


def halves_and_edges(r, n):
    """Ties (k + 0.5), their neighbours, the edge values and random floats of every magnitude."""
    ties = np.arange(-8, 8) + 0.5
    near = np.concatenate([np.nextafter(ties, np.inf), np.nextafter(ties, -np.inf)])
    return np.concatenate([ties, near, F64_EDGES, f64_mix(r, n - 48 - F64_EDGES.size)])


case("float_to_int32_all_modes", r'''
__global__ void f2i(const float* x, int* out, unsigned* uout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[0 * n + i] = __float2int_rn(v);
  out[1 * n + i] = __float2int_rz(v);
  out[2 * n + i] = __float2int_rd(v);
  out[3 * n + i] = __float2int_ru(v);
  uout[0 * n + i] = __float2uint_rn(v);
  uout[1 * n + i] = __float2uint_rz(v);
  uout[2 * n + i] = __float2uint_rd(v);
  uout[3 * n + i] = __float2uint_ru(v);
}''', "f2i", 2, 128, lambda r: [halves_and_edges(r, 256).astype(np.float32), np.zeros((4, 256), np.int32),
                                np.zeros((4, 256), np.uint32), np.int32(256)])

case("float_to_int64_all_modes", r'''
__global__ void f2ll(const float* x, long long* out, unsigned long long* uout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  out[0 * n + i] = __float2ll_rn(v);
  out[1 * n + i] = __float2ll_rz(v);
  out[2 * n + i] = __float2ll_rd(v);
  out[3 * n + i] = __float2ll_ru(v);
  uout[0 * n + i] = __float2ull_rn(v);
  uout[1 * n + i] = __float2ull_rz(v);
  uout[2 * n + i] = __float2ull_rd(v);
  uout[3 * n + i] = __float2ull_ru(v);
}''', "f2ll", 2, 128, lambda r: [halves_and_edges(r, 256).astype(np.float32), np.zeros((4, 256), np.int64),
                                 np.zeros((4, 256), np.uint64), np.int32(256)])

case("double_to_integers_all_modes", r'''
__global__ void d2i(const double* x, int* out, long long* lout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[0 * n + i] = __double2int_rn(v);
  out[1 * n + i] = __double2int_rz(v);
  out[2 * n + i] = __double2int_rd(v);
  out[3 * n + i] = __double2int_ru(v);
  out[4 * n + i] = (int)__double2uint_rn(v);
  out[5 * n + i] = (int)__double2uint_rz(v);
  lout[0 * n + i] = __double2ll_rn(v);
  lout[1 * n + i] = __double2ll_rz(v);
  lout[2 * n + i] = (long long)__double2ull_rd(v);
  lout[3 * n + i] = (long long)__double2ull_ru(v);
}''', "d2i", 2, 128, lambda r: [halves_and_edges(r, 256), np.zeros((6, 256), np.int32), np.zeros((4, 256), np.int64),
                                np.int32(256)])

case("int_to_float_all_modes", r'''
__global__ void i2f(const int* a, const long long* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = a[i];
  long long w = b[i];
  float r[16] = {__int2float_rn(v), __int2float_rz(v), __int2float_rd(v), __int2float_ru(v),
                 __uint2float_rn((unsigned)v), __uint2float_rz((unsigned)v), __uint2float_rd((unsigned)v), __uint2float_ru((unsigned)v),
                 __ll2float_rn(w), __ll2float_rz(w), __ll2float_rd(w), __ll2float_ru(w),
                 __ull2float_rn((unsigned long long)w), __ull2float_rz((unsigned long long)w),
                 __ull2float_rd((unsigned long long)w), __ull2float_ru((unsigned long long)w)};
  for (int k = 0; k < 16; ++k) out[k * n + i] = r[k];
}''', "i2f", 2, 128, lambda r: [i32_mix(r, 256), i64_mix(r, 256), np.zeros((16, 256), np.float32), np.int32(256)])

case("int64_to_double_all_modes", r'''
__global__ void ll2d(const long long* a, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long w = a[i];
  unsigned long long u = (unsigned long long)w;
  double r[10] = {__ll2double_rn(w), __ll2double_rz(w), __ll2double_rd(w), __ll2double_ru(w),
                  __ull2double_rn(u), __ull2double_rz(u), __ull2double_rd(u), __ull2double_ru(u),
                  __int2double_rn((int)w), __uint2double_rn((unsigned)w)};
  for (int k = 0; k < 10; ++k) out[k * n + i] = r[k];
}''', "ll2d", 2, 128, lambda r: [i64_mix(r, 256), np.zeros((10, 256)), np.int32(256)])

case("double_to_float_all_modes", r'''
__global__ void d2f(const double* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double v = x[i];
  out[0 * n + i] = __double2float_rn(v);
  out[1 * n + i] = __double2float_rz(v);
  out[2 * n + i] = __double2float_rd(v);
  out[3 * n + i] = __double2float_ru(v);
  out[4 * n + i] = (float)v;
}''', "d2f", 2, 128, lambda r: [np.concatenate([F64_EDGES, F32_EDGES.astype(np.float64), F32_EDGES.astype(np.float64) * (1 + 2.0 ** -30),
                                                (r.standard_normal(256) * np.exp2(r.integers(-160, 140, 256)))])[:256],
                                np.zeros((5, 256), np.float32), np.int32(256)])

case("float_to_double_and_back", r'''
__global__ void f2d(const float* x, double* wide, float* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double d = x[i];
  wide[i] = d;
  back[i] = (float)(d * 3.0);
}''', "f2d", 2, 128, lambda r: [f32_mix(r, 256), np.zeros(256), np.zeros(256, np.float32), np.int32(256)])

case("reinterpret_bits", r'''
__global__ void bitsof(const float* f, const double* d, unsigned* out, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = (unsigned)__float_as_int(f[i]);
  out[4 * i + 1] = __float_as_uint(__int_as_float(__float_as_int(f[i]) ^ 0x80000000));
  out[4 * i + 2] = (unsigned)__double2hiint(d[i]);
  out[4 * i + 3] = (unsigned)__double2loint(d[i]);
  dout[2 * i + 0] = __hiloint2double(__double2loint(d[i]), __double2hiint(d[i]));
  dout[2 * i + 1] = __longlong_as_double(__double_as_longlong(d[i]) + 1);
}''', "bitsof", 2, 128, lambda r: [f32_mix(r, 256), f64_mix(r, 256), np.zeros(1024, np.uint32), np.zeros(512),
                                   np.int32(256)])

case("c_casts_in_range", r'''
__global__ void casts(const float* f, const double* d, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[6 * i + 0] = (int)f[i];
  out[6 * i + 1] = (int)d[i];
  out[6 * i + 2] = (unsigned char)(int)f[i];
  out[6 * i + 3] = (short)(int)d[i];
  out[6 * i + 4] = (int)(long long)(d[i] * 1000.0);
  out[6 * i + 5] = (int)(unsigned)(fabsf(f[i]) * 7.0f);
}''', "casts", 2, 128, lambda r: [(r.standard_normal(256) * 1e5).astype(np.float32), r.standard_normal(256) * 1e5,
                                   np.zeros(1536, np.int32), np.int32(256)])

case("int_to_float_c_casts", r'''
__global__ void tofloat(const int* a, const unsigned long long* b, float* out, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = (float)a[i];
  out[4 * i + 1] = (float)(unsigned)a[i];
  out[4 * i + 2] = (float)b[i];
  out[4 * i + 3] = (float)(long long)b[i];
  dout[2 * i + 0] = (double)b[i];
  dout[2 * i + 1] = (double)(long long)b[i];
}''', "tofloat", 2, 128, lambda r: [i32_mix(r, 256), i64_mix(r, 256).view(np.uint64), np.zeros(1024, np.float32),
                                    np.zeros(512), np.int32(256)])

case("ptx_saturating_cvt", r'''
__global__ void satcvt(const float* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  short s8, u8, s16, u16;
  int s32;
  float sat;
  asm("cvt.rni.sat.s8.f32 %0, %1;" : "=h"(s8) : "f"(v));
  asm("cvt.rzi.sat.u8.f32 %0, %1;" : "=h"(u8) : "f"(v));
  asm("cvt.rmi.sat.s16.f32 %0, %1;" : "=h"(s16) : "f"(v));
  asm("cvt.rpi.sat.u16.f32 %0, %1;" : "=h"(u16) : "f"(v));
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(s32) : "f"(v));
  asm("cvt.sat.f32.f32 %0, %1;" : "=f"(sat) : "f"(v));
  out[6 * i + 0] = s8;  out[6 * i + 1] = u8;  out[6 * i + 2] = s16;
  out[6 * i + 3] = u16; out[6 * i + 4] = s32; out[6 * i + 5] = __float_as_int(sat);
}''', "satcvt", 2, 128, lambda r: [halves_and_edges(r, 256).astype(np.float32),
                                   np.zeros(1536, np.int32), np.int32(256)])

case("ptx_integer_width_cvt", r'''
__global__ void widths(const long long* a, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long v = a[i];
  short h;
  int s;
  long long w[4];
  asm("cvt.s8.s64 %0, %1;" : "=h"(h) : "l"(v));       w[0] = h;
  asm("cvt.sat.s16.s64 %0, %1;" : "=h"(h) : "l"(v));   w[1] = h;
  asm("cvt.sat.u32.s64 %0, %1;" : "=r"(s) : "l"(v));   w[2] = (unsigned)s;
  asm("cvt.sat.s32.u64 %0, %1;" : "=r"(s) : "l"(v));   w[3] = s;
  for (int k = 0; k < 4; ++k) out[4 * i + k] = w[k];
}''', "widths", 2, 128, lambda r: [i64_mix(r, 256), np.zeros(1024, np.int64), np.int32(256)])

case("rint_ties_to_even_f64", r'''
__global__ void ties(const double* x, double* out, long long* lout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[2 * i] = rint(x[i]);
  out[2 * i + 1] = nearbyint(x[i] * 0.5);
  lout[2 * i] = llrint(x[i]);
  lout[2 * i + 1] = llround(x[i]);
}''', "ties", 1, 128, lambda r: [np.concatenate([np.arange(-32, 32) + 0.5, np.arange(-32, 32) * 0.25]),
                                 np.zeros(256), np.zeros(256, np.int64), np.int32(128)])
