"""What a student of the CUDA C++ Programming Guide and the CUDA Math API meets that the other groups
leave out: the special functions (erfinv, gamma, Bessel, norms), -use_fast_math, the rest of cuda_fp16.h
and cuda_bf16.h, 16-bit and float2 atomics, cooperative groups' partitions and collectives, libcu++,
in-kernel malloc, clocks and timers. Every case is bit for bit against the GPU."""
import numpy as np

from . import F32_EDGES, F64_EDGES, Corpus, f32_mix, f64_mix, i32_mix
from .half import bf16s, halves

CASES = Corpus("guide")
case = CASES.case


def unit_interval_f32(r, n):
    """n float32s in [-1, 1] with the ends, zero, tiny numbers and values crowding the ends (erfinv's poles)."""
    ends = np.array([-1.0, 1.0, 0.0, -0.0, 0.5, -0.5, 1e-30, -1e-38, 0.999999, -0.9999999, 0.99, 1.0000001,
                     -1.0000001, 2.0, np.inf, np.nan], np.float32)
    near = 1 - np.exp2(-r.uniform(1, 24, 32)).astype(np.float32)
    return np.concatenate([ends, near, -near, r.uniform(-1, 1, n - ends.size - 64).astype(np.float32)])


def gamma_args_f32(r, n):
    """Arguments for lgamma/tgamma: poles (0, negative integers), halves, the overflow edge, wide randoms."""
    special = np.array([0.0, -0.0, 1.0, 2.0, 0.5, -0.5, -1.0, -2.0, -2.5, -100.5, 3.0, 10.0, 34.5, 35.04, 35.1,
                        171.6, 1e-20, -1e-20, 4e36, np.inf, -np.inf, np.nan, 1e-45, -1e-45], np.float32)
    return np.concatenate([special, r.uniform(-40, 40, n // 2).astype(np.float32),
                           (r.standard_normal(n - special.size - n // 2) * 1e3).astype(np.float32)])


case("f32_special_functions", r'''
__global__ void specialf(const float* u, const float* g, const float* w, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float p = u[i], x = g[i], y = w[i];
  float r[18] = {erfinvf(p), erfcinvf(p + 1.0f), normcdfinvf(0.5f * (p + 1.0f)), erfcf(y), erfcxf(y),
                 normcdff(y), lgammaf(x), tgammaf(x), j0f(y), j1f(y), y0f(y), y1f(y), jnf(3, y), ynf(2, y),
                 cyl_bessel_i0f(y), cyl_bessel_i1f(y), asinhf(y), acoshf(fabsf(y) + 1.0f)};
  for (int k = 0; k < 18; ++k) out[k * n + i] = r[k];
}''', "specialf", 2, 128, lambda r: [unit_interval_f32(r, 256), gamma_args_f32(r, 256), f32_mix(r, 256),
                                     np.zeros((18, 256), np.float32), np.int32(256)])

case("f32_norms_pi_and_remquo", r'''
__global__ void normsf(const float* a, const float* b, const float* c, float* out, int* quo, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i], s, co;
  float four[4] = {x, y, z, 1.0f};
  sincospif(x, &s, &co);
  int q;
  float r[16] = {norm3df(x, y, z), rnorm3df(x, y, z), norm4df(x, y, z, 1.0f), rnorm4df(x, y, z, 1.0f),
                 normf(4, four), rnormf(4, four), rhypotf(x, y), rcbrtf(x), s, co, cospif(y), atanhf(z),
                 coshf(y), exp10f(y), remquof(x, y, &q), fdimf(x, y)};
  for (int k = 0; k < 16; ++k) out[k * n + i] = r[k];
  quo[i] = q;
}''', "normsf", 2, 128, lambda r: [f32_mix(r, 256), (r.standard_normal(256) * 8).astype(np.float32),
                                   r.uniform(-1.1, 1.1, 256).astype(np.float32), np.zeros((16, 256), np.float32),
                                   np.zeros(256, np.int32), np.int32(256)])

case("f32_classify_and_round_to_integer", r'''
__global__ void classify(const float* a, int* out, long long* wide, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  int e;
  float m = frexpf(x, &e);
  out[0 * n + i] = __finitef(x);
  out[1 * n + i] = __isinff(x);
  out[2 * n + i] = __isnanf(x);
  out[3 * n + i] = __signbitf(x);
  out[4 * n + i] = e;
  out[5 * n + i] = __float_as_int(m);
  out[6 * n + i] = ilogbf(x);
  out[7 * n + i] = fabsf(x) < 2e9f ? (int)lrintf(x) : 0;
  out[8 * n + i] = fabsf(x) < 2e9f ? (int)lroundf(x) : 0;
  wide[0 * n + i] = fabsf(x) < 9e18f ? llrintf(x) : 0;
  wide[1 * n + i] = fabsf(x) < 9e18f ? llroundf(x) : 0;
}''', "classify", 2, 128, lambda r: [f32_mix(r, 256), np.zeros((9, 256), np.int32), np.zeros((2, 256), np.int64),
                                     np.int32(256)])


def f64_unit(r, n):
    ends = np.array([-1.0, 1.0, 0.0, -0.0, 0.5, 1e-300, 1 - 2.0 ** -52, -(1 - 2.0 ** -53), 1 + 2.0 ** -52,
                     np.inf, np.nan], np.float64)
    near = 1 - np.exp2(-r.uniform(1, 52, 40))
    return np.concatenate([ends, near, -near, r.uniform(-1, 1, n - ends.size - 80)])


case("f64_special_functions", r'''
__global__ void special(const double* u, const double* g, const double* w, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double p = u[i], x = g[i], y = w[i];
  double r[18] = {erfinv(p), erfcinv(p + 1.0), normcdfinv(0.5 * (p + 1.0)), erfc(y), erfcx(y), normcdf(y),
                  lgamma(x), tgamma(x), j0(y), j1(y), y0(y), y1(y), jn(4, y), yn(3, y), cyl_bessel_i0(y),
                  cyl_bessel_i1(y), asinh(y), atanh(p)};
  for (int k = 0; k < 18; ++k) out[k * n + i] = r[k];
}''', "special", 2, 128, lambda r: [f64_unit(r, 256),
                                    np.concatenate([gamma_args_f32(r, 128).astype(np.float64),
                                                    r.uniform(-180, 180, 128)]),
                                    f64_mix(r, 256), np.zeros((18, 256), np.float64), np.int32(256)])

case("f64_norms_remainders_and_neighbours", r'''
__global__ void rem64(const double* a, const double* b, double* out, int* quo, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i], s, c, whole;
  sincospi(x, &s, &c);
  int q, e;
  double r[16] = {norm3d(x, y, 1.5), rnorm3d(x, y, 1.5), rhypot(x, y), cbrt(x), rcbrt(y), s, c,
                  fmod(x, y), remainder(x, y), remquo(x, y, &q), frexp(x, &e), ldexp(y, e - 3),
                  modf(x, &whole), whole, nextafter(x, y), exp10(y * 0.01)};
  for (int k = 0; k < 16; ++k) out[k * n + i] = r[k];
  quo[2 * i] = q;
  quo[2 * i + 1] = e;
}''', "rem64", 2, 128, lambda r: [f64_mix(r, 256), np.concatenate([F64_EDGES[::-1], r.standard_normal(256) * 30])[:256],
                                  np.zeros((16, 256), np.float64), np.zeros(512, np.int32), np.int32(256)])

case("fast_math_flag", r'''
__global__ void fast(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  float r[14] = {x / y, 1.0f / y, sqrtf(fabsf(x)), rsqrtf(fabsf(y)), expf(y), exp2f(y), exp10f(y * 0.1f),
                 logf(fabsf(x)), log2f(fabsf(x)), log10f(fabsf(x)), powf(fabsf(x), y * 0.25f), x * y + 1.0f,
                 x + y, fmaxf(x, y)};
  for (int k = 0; k < 14; ++k) out[k * n + i] = r[k];
}''', "fast", 2, 128, lambda r: [f32_mix(r, 256), (r.standard_normal(256) * 6).astype(np.float32),
                                 np.zeros((14, 256), np.float32), np.int32(256)], options=("-use_fast_math",))

case("fast_math_flag_trig", r'''
__global__ void fast_trig(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], s, c;
  sincosf(x, &s, &c);
  float r[5] = {sinf(x), cosf(x), tanf(x), s, c};
  for (int k = 0; k < 5; ++k) out[k * n + i] = r[k];
}''', "fast_trig", 2, 128, lambda r: [np.concatenate([np.linspace(-7, 7, 256 - F32_EDGES.size), F32_EDGES]).astype(np.float32),
                                      np.zeros((5, 256), np.float32), np.int32(256)], options=("-use_fast_math",))

case("half_saturating_relu_and_complex", r'''
#include <cuda_fp16.h>
__global__ void hsat(const __half* a, const __half* b, const __half* c, __half* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i], z = c[i];
  __half2 p = __halves2half2(x, y), q = __halves2half2(z, x);
  __half2 cm = __hcmadd(p, q, __halves2half2(y, z));
  __half r[14] = {__hadd_sat(x, y), __hsub_sat(x, y), __hmul_sat(x, y), __hfma_relu(x, y, z),
                  __hmax_nan(x, y), __hmin_nan(x, y), __low2half(cm), __high2half(cm),
                  __low2half(__hfma2_relu(p, q, p)), __high2half(__hmul2_sat(p, q)), __ushort_as_half(__half_as_ushort(x) ^ 0x8000u),
                  __short_as_half((short)(__half_as_short(y) & 0x7fff)), __habs(z), __hneg(z)};
  for (int k = 0; k < 14; ++k) out[k * n + i] = r[k];
}''', "hsat", 2, 128, lambda r: [halves(r, 256), halves(r, 256)[::-1].copy(), halves(r, 256),
                                 np.zeros((14, 256), np.float16), np.int32(256)])

case("half2_math_and_comparisons", r'''
#include <cuda_fp16.h>
__global__ void h2math(const __half2* a, const __half2* b, __half2* out, unsigned* masks, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i], y = b[i];
  __half2 r[10] = {h2sqrt(__habs2(x)), h2rcp(y), h2exp(x), h2log(__habs2(y)), h2sin(x), h2cos(y),
                   __h2div(x, y), __hmax2_nan(x, y), __hmin2(x, y), __hneg2(x)};
  for (int k = 0; k < 10; ++k) out[k * n + i] = r[k];
  unsigned m = __hbeq2(x, y) | __hbne2(x, y) << 1 | __hble2(x, y) << 2 | __hbgt2(x, y) << 3
             | __hbltu2(x, y) << 4 | __hbgeu2(x, y) << 5 | __hbequ2(x, y) << 6 | __hbneu2(x, y) << 7;
  __half2 lt = __hlt2(x, y), gtu = __hgtu2(x, y);
  masks[i] = m | (unsigned)__half_as_ushort(__low2half(lt)) << 8 | (unsigned)__half_as_ushort(__high2half(__hisnan2(x))) << 16;
  masks[n + i] = __hleu2_mask(x, y) ^ __hgt2_mask(x, y) ^ (unsigned)__half_as_ushort(__high2half(gtu));
}''', "h2math", 2, 128, lambda r: [halves(r, 512), halves(r, 512)[::-1].copy(), np.zeros((10, 512), np.float16),
                                   np.zeros(512, np.uint32), np.int32(256)])

case("bfloat16_math_and_conversions", r'''
#include <cuda_bf16.h>
__global__ void bmath(const __nv_bfloat16* a, const __nv_bfloat16* b, const float* f, const double* d,
                      __nv_bfloat16* out, int* ints, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __nv_bfloat16 x = a[i], y = b[i];
  __nv_bfloat16 r[16] = {__hdiv(x, y), hsqrt(__habs(x)), hrcp(y), hexp(x), hlog(__habs(y)), hsin(x),
                         __hfma_relu(x, y, x), __hmax_nan(x, y), __hmin(x, y), __float2bfloat16_rz(f[i]),
                         __float2bfloat16_rd(f[i]), __float2bfloat16_ru(f[i]), __double2bfloat16(d[i]),
                         __int2bfloat16_rn(ints[i]), __uint2bfloat16_rd((unsigned)ints[i]), __ll2bfloat16_ru((long long)ints[i] << 20)};
  for (int k = 0; k < 16; ++k) out[k * n + i] = r[k];
  ints[n + i] = __bfloat162int_rn(x) ^ __bfloat162int_rz(y) * 3;
  ints[2 * n + i] = __heq(x, y) | __hltu(x, y) << 1 | __hgt(x, y) << 2 | __hisnan(x) << 3 | __hisinf(y) << 4;
}''', "bmath", 2, 128, lambda r: [bf16s(r, 256), bf16s(r, 256)[::-1].copy(), f32_mix(r, 256), f64_mix(r, 256),
                                  np.zeros((16, 256), np.uint16),
                                  np.concatenate([i32_mix(r, 256), np.zeros(512, np.int32)]), np.int32(256)], arch="compute_90")

case("half_integer_conversions_every_mode", r'''
#include <cuda_fp16.h>
__global__ void hconv(const __half* h, const int* v, long long* out, __half* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = h[i];
  long long r[8] = {__half2ll_rn(x), __half2ll_rz(x), __half2ll_rd(x), __half2ll_ru(x),
                    __half2uint_rn(x), __half2ushort_rz(x), __half2short_rd(x), __half2int_ru(x)};
  for (int k = 0; k < 8; ++k) out[k * n + i] = r[k];
  int w = v[i];
  __half b[8] = {__int2half_rz(w), __int2half_rd(w), __int2half_ru(w), __uint2half_rn((unsigned)w),
                 __ll2half_rd((long long)w * 3), __ull2half_ru((unsigned long long)(unsigned)w),
                 __short2half_rn((short)w), __ushort2half_rz((unsigned short)w)};
  for (int k = 0; k < 8; ++k) back[k * n + i] = b[k];
}''', "hconv", 2, 128, lambda r: [halves(r, 256), i32_mix(r, 256), np.zeros((8, 256), np.int64),
                                  np.zeros((8, 256), np.float16), np.int32(256)])

case("atomic_cas_16bit_counter_and_exch_float", r'''
__global__ void cas16(unsigned short* counters, float* slots, float* last, unsigned long long* wide) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned short* c = &counters[i & 3];
  unsigned short old = *c, seen;
  do { seen = old; old = atomicCAS(c, seen, (unsigned short)(seen + 1 + (i & 1))); } while (old != seen);
  float mine = (float)i * 0.5f;
  slots[i] = atomicExch(&slots[i], mine) + 1.0f;
  atomicExch(&last[blockIdx.x], -1.0f);
  atomicXor(&wide[0], 1ull << (i & 63));
  atomicAnd(&wide[1], ~(1ull << (i % 61)));
  atomicOr(&wide[2], (unsigned long long)i << 40);
}''', "cas16", 2, 96, lambda r: [np.array([0, 65500, 7, 0xFFFF], np.uint16),
                                 r.standard_normal(192).astype(np.float32), np.zeros(2, np.float32),
                                 np.array([0, 2 ** 64 - 1, 0], np.uint64)])

case("atomic_inc_dec_wrap_limits", r'''
__global__ void incdec(unsigned* v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicInc(&v[0], 9u);
  atomicDec(&v[1], 9u);
  atomicInc(&v[2], 0u);
  atomicDec(&v[3], 0u);
  atomicInc(&v[4], 0xFFFFFFFFu);
  atomicDec(&v[5], 0xFFFFFFFFu);
  atomicInc(&v[6], 100u);
  if (i < 5) atomicDec(&v[7], 3u);
}''', "incdec", 3, 64, lambda r: [np.array([0, 0, 5, 5, 0xFFFFFF00, 3, 250, 7], np.uint32)])

case("float2_float4_atomic_add_sm90", r'''
__global__ void vec_add(const float* x, float2* two, float4* four) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = x[i];
  atomicAdd(&two[i & 3], make_float2(v, -v));
  atomicAdd(&four[i & 1], make_float4(v, 2.0f * v, 1.0f, (float)(i & 7)));
}''', "vec_add", 2, 64, lambda r: [r.integers(-50, 50, 128).astype(np.float32), np.zeros(8, np.float32),
                                  np.zeros(8, np.float32)], arch="compute_90")

case("cg_labeled_and_binary_partitions", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
__global__ void parts(const int* key, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int k = key[i];
  cg::coalesced_group same = cg::labeled_partition(warp, k & 3);
  cg::coalesced_group odd = cg::binary_partition(warp, k & 1);
  out[8 * i + 0] = same.thread_rank();
  out[8 * i + 1] = same.num_threads();
  out[8 * i + 2] = cg::reduce(same, k, cg::plus<int>());
  out[8 * i + 3] = odd.thread_rank();
  out[8 * i + 4] = cg::reduce(odd, k, cg::greater<int>());
  out[8 * i + 5] = cg::reduce(odd, (unsigned)k, cg::bit_xor<unsigned>());
  out[8 * i + 6] = same.shfl(k, same.num_threads() - 1);
  out[8 * i + 7] = cg::exclusive_scan(same, k);
}''', "parts", 2, 64, lambda r: [r.integers(-1000, 1000, 128).astype(np.int32), np.zeros(8 * 128, np.int32)])

case("cg_tiles_meta_groups_and_scans", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>
namespace cg = cooperative_groups;
__global__ void tiles(const int* v, int* out) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
  cg::thread_group t4 = cg::tiled_partition(block, 4);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int x = v[i];
  out[10 * i + 0] = t8.meta_group_rank();
  out[10 * i + 1] = t8.meta_group_size();
  out[10 * i + 2] = cg::inclusive_scan(t8, x);
  out[10 * i + 3] = cg::exclusive_scan(t8, x, cg::bit_or<int>());
  out[10 * i + 4] = cg::reduce(t8, x, cg::less<int>());
  out[10 * i + 5] = cg::inclusive_scan(t8, x, [](int a, int b) { return a > b ? a : b; });
  out[10 * i + 6] = t4.thread_rank() + 10 * t4.size();
  out[10 * i + 7] = (int)block.thread_index().x + 1000 * (int)block.group_index().x;
  out[10 * i + 8] = (int)block.num_threads() + 1000 * (int)block.dim_threads().x;
  out[10 * i + 9] = t8.shfl_down(x, 3) + t8.shfl_xor(x, 5) + t8.any(x > 0) + 2 * t8.all(x > -900)
                  + 4 * __popc(t8.ballot(x & 1));
}''', "tiles", 2, 48, lambda r: [r.integers(-1000, 1000, 96).astype(np.int32), np.zeros(10 * 96, np.int32)])

case("libcudacxx_atomic_ref_array_limits", r'''
#include <cuda/atomic>
#include <cuda/std/array>
#include <cuda/std/limits>
#include <cuda/std/bit>
__global__ void libcu(const int* v, int* counts, unsigned* bits, float* lim, double* dlim) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  cuda::atomic_ref<int, cuda::thread_scope_device> total(counts[0]);
  cuda::atomic_ref<int, cuda::thread_scope_block> biggest(counts[1 + blockIdx.x]);
  total.fetch_add(v[i], cuda::std::memory_order_relaxed);
  biggest.fetch_max(v[i]);
  cuda::std::array<int, 4> a{v[i], v[i] >> 3, v[i] * 7, -v[i]};
  int s = 0;
  for (int x : a) s += x;
  unsigned u = (unsigned)s;
  bits[4 * i + 0] = cuda::std::popcount(u);
  bits[4 * i + 1] = cuda::std::countl_zero(u);
  bits[4 * i + 2] = cuda::std::bit_width(u);
  bits[4 * i + 3] = cuda::std::rotl(u, i & 31) ^ cuda::std::bit_cast<unsigned>((float)s);
  if (i == 0) {
    lim[0] = cuda::std::numeric_limits<float>::min();
    lim[1] = cuda::std::numeric_limits<float>::max();
    lim[2] = cuda::std::numeric_limits<float>::epsilon();
    lim[3] = cuda::std::numeric_limits<float>::denorm_min();
    lim[4] = cuda::std::numeric_limits<float>::lowest();
    lim[5] = cuda::std::numeric_limits<float>::quiet_NaN();
    lim[6] = cuda::std::numeric_limits<float>::infinity();
    lim[7] = cuda::std::numeric_limits<float>::round_error();
    dlim[0] = cuda::std::numeric_limits<double>::min();
    dlim[1] = cuda::std::numeric_limits<double>::epsilon();
    dlim[2] = cuda::std::numeric_limits<double>::denorm_min();
    dlim[3] = (double)cuda::std::numeric_limits<long long>::max();
  }
}''', "libcu", 2, 64, lambda r: [r.integers(-10 ** 6, 10 ** 6, 128).astype(np.int32),
                                np.array([0, -2 ** 31, -2 ** 31], np.int64).astype(np.int32),
                                np.zeros(4 * 128, np.uint32), np.zeros(8, np.float32), np.zeros(4, np.float64)])

case("libcudacxx_complex_arithmetic", r'''
#include <cuda/std/complex>
__global__ void cplx(const float* re, const float* im, float* out, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  using C = cuda::std::complex<float>;
  using D = cuda::std::complex<double>;
  C a(re[i], im[i]), b(im[n - 1 - i], re[n - 1 - i]);
  C r[6] = {a * b, a / b, a + b * C(0.5f, -2.0f), cuda::std::conj(a) * a, C(cuda::std::abs(a), cuda::std::arg(a)),
            C(cuda::std::norm(b), cuda::std::real(cuda::std::sqrt(a)))};
  for (int k = 0; k < 6; ++k) { out[2 * (k * n + i)] = r[k].real(); out[2 * (k * n + i) + 1] = r[k].imag(); }
  D da(re[i], im[i]), db(im[n - 1 - i], re[n - 1 - i]);
  D q = da / db, e = cuda::std::exp(da * 0.01), l = cuda::std::log(db);
  dout[6 * i + 0] = q.real(); dout[6 * i + 1] = q.imag();
  dout[6 * i + 2] = e.real(); dout[6 * i + 3] = e.imag();
  dout[6 * i + 4] = l.real(); dout[6 * i + 5] = l.imag();
}''', "cplx", 2, 128, lambda r: [f32_mix(r, 256), (r.standard_normal(256) * 100).astype(np.float32),
                                 np.zeros(12 * 256, np.float32), np.zeros(6 * 256, np.float64), np.int32(256)],
     options=("-std=c++17",))      # recorded through cudalab's compile on the GPU: the same CCCL headers

case("device_malloc_free_per_thread_lists", r'''
struct Node { int value; Node* next; };
__global__ void lists(const int* v, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int n = (v[i] & 7) + 1;
  Node* head = nullptr;
  for (int k = 0; k < n; ++k) {
    Node* node = (Node*)malloc(sizeof(Node));
    if (!node) { out[2 * i] = -1; return; }
    node->value = v[i] * (k + 1);
    node->next = head;
    head = node;
  }
  int sum = 0, count = 0;
  while (head) { Node* next = head->next; sum += head->value; ++count; free(head); head = next; }
  out[2 * i] = sum;
  out[2 * i + 1] = count;
}''', "lists", 2, 64, lambda r: [r.integers(-1000, 1000, 128).astype(np.int32), np.zeros(256, np.int32)])

case("clock64_globaltimer_and_nanosleep_order", r'''
__global__ void clocks(int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  long long c0 = clock64();
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  __nanosleep(2000);
  long long c1 = clock64();
  unsigned long long t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  unsigned lo0 = clock(), lo1 = clock();
  out[4 * i + 0] = c1 > c0;
  out[4 * i + 1] = t1 >= t0 && t0 > 1000000000ull;
  out[4 * i + 2] = t1 - t0 < 1000000000ull;  // __nanosleep may return at once (PTX: 0 to 2t), so no lower bound
  out[4 * i + 3] = (int)(lo1 - lo0) >= 0;
}''', "clocks", 2, 64, lambda r: [np.zeros(512, np.int32)])

case("simd_in_word_remaining_forms", r'''
__global__ void simd_rest(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  unsigned r[24] = {__vabs2(x), __vabs4(x), __vabsss2(x), __vabsss4(x), __vabsdiffs2(x, y), __vabsdiffs4(x, y),
                    __vabsdiffu2(x, y), __vadd4(x, y), __vaddus2(x, y), __vaddss4(x, y), __vavgs2(x, y),
                    __vavgs4(x, y), __vhaddu2(x, y), __vhaddu4(x, y), __vcmpges4(x, y), __vcmplts2(x, y),
                    __vmaxu2(x, y), __vmins4(x, y), __vneg2(x), __vnegss4(x), __vsadu2(x, y), __vsetne4(x, y),
                    __vsubss2(x, y), __vsetgeu2(x, y)};
  for (int k = 0; k < 24; ++k) out[k * n + i] = r[k];
}''', "simd_rest", 2, 128, lambda r: [i32_mix(r, 256).view(np.uint32), i32_mix(r, 256)[::-1].view(np.uint32).copy(),
                                     np.zeros((24, 256), np.uint32), np.int32(256)])

case("ftz_flag_denormals", r'''
__global__ void ftz(const float* a, const float* b, float* out, double* wide, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  float r[10] = {x + y, x * y, fmaf(x, y, x), x / y, sqrtf(x), fminf(x, y), fabsf(x), -y, x * 0.5f,
                 (float)(double)x};
  for (int k = 0; k < 10; ++k) out[k * n + i] = r[k];
  wide[i] = (double)(x * 1.0f);
}''', "ftz", 2, 128, lambda r: [f32_mix(r, 256), np.concatenate([f32_mix(r, 128), np.exp2(r.uniform(-149, -120, 128))]).astype(np.float32),
                                np.zeros((10, 256), np.float32), np.zeros(256, np.float64), np.int32(256)], options=("-ftz=true",))

case("prec_div_and_sqrt_flags_off", r'''
__global__ void imprecise(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[0 * n + i] = x / y;
  out[1 * n + i] = sqrtf(x);
  out[2 * n + i] = 1.0f / y;
  out[3 * n + i] = 1.0f / sqrtf(y);
}''', "imprecise", 2, 128, lambda r: [f32_mix(r, 256), f32_mix(r, 256)[::-1].copy(), np.zeros((4, 256), np.float32),
                                      np.int32(256)], options=("-prec-div=false", "-prec-sqrt=false"))

case("half2_bfloat162_packing_and_no_contraction", r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void pack(const float* a, const float* b, __half2* h, __nv_bfloat162* bb, float* back, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  __half2 p = __floats2half2_rn(x, y), q = __float2half2_rn(y);
  __nv_bfloat162 u = __floats2bfloat162_rn(x, y), v = __float22bfloat162_rn(make_float2(y, x));
  h[0 * n + i] = __lowhigh2highlow(p);
  h[1 * n + i] = __lows2half2(p, q);
  h[2 * n + i] = __hadd2_rn(__hmul2_rn(p, q), p);
  h[3 * n + i] = __hfma2(p, q, p);
  h[4 * n + i] = __hmul2(p, q) + p;
  bb[0 * n + i] = __highs2bfloat162(u, v);
  bb[1 * n + i] = __hadd2_rn(__hmul2_rn(u, v), u);
  bb[2 * n + i] = __hfma2(u, v, u);
  bb[3 * n + i] = __hmul2(u, v) + u;
  float2 f = __half22float2(p), g = __bfloat1622float2(v);
  back[4 * i + 0] = f.x; back[4 * i + 1] = f.y; back[4 * i + 2] = g.x; back[4 * i + 3] = g.y;
}''', "pack", 2, 128, lambda r: [f32_mix(r, 256), (r.standard_normal(256) * 3).astype(np.float32),
                                 np.zeros((5, 256, 2), np.float16), np.zeros((4, 256, 2), np.uint16),
                                 np.zeros(4 * 256, np.float32), np.int32(256)], arch="compute_90")


def divisors_f32(r, n):
    """Divisors around the edges div.full scales at (2^126, the subnormals) and random ones."""
    edges = np.concatenate([np.float32(2.0 ** 126) * np.array([1, 1.5, 3.99, 0.999999], np.float32),
                            [-np.float32(2.0 ** 127) * np.float32(1.7)], np.array([1e-45, 3e-39, 1.17e-38, -5e-40], np.float32),
                            F32_EDGES])
    return np.concatenate([edges, f32_mix(r, n - edges.size)]).astype(np.float32)


case("ptx_div_full_f32_scaling_edges", r'''
__global__ void divfull(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float q, qf;
  asm("div.full.f32 %0, %1, %2;" : "=f"(q) : "f"(a[i]), "f"(b[i]));
  asm("div.full.ftz.f32 %0, %1, %2;" : "=f"(qf) : "f"(a[i]), "f"(b[i]));
  out[i] = q;
  out[n + i] = qf;
}''', "divfull", 4, 256, lambda r: [f32_mix(r, 1024), divisors_f32(r, 1024), np.zeros(2048, np.float32), np.int32(1024)])


def f64_spread(r, n):
    """float64s with every exponent class: edges, mantissas of [1, 2) scaled widely, subnormals."""
    scaled = (1 + r.random(n // 2)) * np.exp2(r.integers(-1070, 1020, n // 2).astype(np.float64))
    return np.concatenate([F64_EDGES, scaled, f64_mix(r, n - n // 2 - F64_EDGES.size)])[:n]


case("ptx_rcp_rsqrt_approx_f64", r'''
__global__ void approx64(const double* x, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double r, s, sf;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(r) : "d"(x[i]));
  asm("rsqrt.approx.f64 %0, %1;" : "=d"(s) : "d"(x[i]));
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(sf) : "d"(x[i]));
  out[i] = r;
  out[n + i] = s;
  out[2 * n + i] = sf;
}''', "approx64", 8, 256, lambda r: [f64_spread(r, 2048), np.zeros(3 * 2048, np.float64), np.int32(2048)])

case("ptx_sqrt_approx_f32", r'''
__global__ void sqrt_approx(const float* x, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s, sf;
  asm("sqrt.approx.f32 %0, %1;" : "=f"(s) : "f"(x[i]));
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(sf) : "f"(x[i]));
  out[i] = s;
  out[n + i] = sf;
}''', "sqrt_approx", 8, 256, lambda r: [np.abs(f32_mix(r, 2048)), np.zeros(4096, np.float32), np.int32(2048)])

case("fp8_e8m0_scales_and_vector_conversions", r'''
#include <cuda_fp8.h>
#include <cuda_bf16.h>
__global__ void scales(const float* f, const double* d, unsigned char* e8, unsigned short* bf, unsigned* packed, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = f[i];
  e8[0 * n + i] = __nv_cvt_float_to_e8m0(x, __NV_SATFINITE, cudaRoundPosInf);
  e8[1 * n + i] = __nv_cvt_float_to_e8m0(x, __NV_NOSAT, cudaRoundZero);
  e8[2 * n + i] = __nv_cvt_double_to_e8m0(d[i], __NV_SATFINITE, cudaRoundPosInf);
  __nv_bfloat16_raw b = __nv_cvt_e8m0_to_bf16raw((__nv_fp8_storage_t)(i & 255));
  bf[i] = b.x;
  float4 q = make_float4(x, -x, x * 0.5f, (float)i);
  __nv_fp8x4_e4m3 a4(q);
  __nv_fp8x4_e5m2 b4(q);
  packed[3 * i + 0] = a4.__x;
  packed[3 * i + 1] = b4.__x;
  packed[3 * i + 2] = __nv_cvt_float2_to_fp8x2(make_float2(x, x * 3.0f), __NV_NOSAT, __NV_E5M2)
                    | (unsigned)__nv_cvt_float2_to_fp8x2(make_float2(x, x * 3.0f), __NV_SATFINITE, __NV_E4M3) << 16;
}''', "scales", 2, 128, lambda r: [f32_mix(r, 256), f64_mix(r, 256), np.zeros(3 * 256, np.uint8), np.zeros(256, np.uint16),
                                   np.zeros(3 * 256, np.uint32), np.int32(256)], arch="compute_90")

case("shared_memory_atomics_every_type", r'''
#include <cuda_fp16.h>
__global__ void shared_atomics(const int* v, double* dsum, float* fsum, __half2* hsum, unsigned short* counts,
                               unsigned long long* ext, long long* sext, unsigned* wrap) {
  __shared__ double d; __shared__ float f; __shared__ __half2 h; __shared__ unsigned short c[4];
  __shared__ unsigned long long u[2]; __shared__ long long s[2]; __shared__ unsigned w;
  int t = threadIdx.x, x = v[blockIdx.x * blockDim.x + t];
  if (t == 0) { d = 0; f = 0; h = __floats2half2_rn(0.f, 0.f); u[0] = ~0ull; u[1] = 0; s[0] = 1ll << 62; s[1] = -(1ll << 62); w = 0; }
  if (t < 4) c[t] = 0;
  __syncthreads();
  atomicAdd(&d, (double)x * 0.25);
  atomicAdd(&f, (float)(x & 255));
  atomicAdd(&h, __floats2half2_rn((float)(x & 7), -(float)(x & 3)));
  unsigned short* mine = &c[t & 3];
  unsigned short old = *mine, seen;
  do { seen = old; old = atomicCAS(mine, seen, (unsigned short)(seen + (x & 15))); } while (old != seen);
  atomicMin(&u[0], (unsigned long long)(unsigned)x * 3ull);
  atomicMax(&u[1], (unsigned long long)(unsigned)x << 20);
  atomicMin(&s[0], (long long)x * -5);
  atomicMax(&s[1], (long long)x * 7);
  atomicInc(&w, 37u);
  __syncthreads();
  if (t == 0) {
    int b = blockIdx.x;
    dsum[b] = d; fsum[b] = f; hsum[b] = h; ext[2 * b] = u[0]; ext[2 * b + 1] = u[1];
    sext[2 * b] = s[0]; sext[2 * b + 1] = s[1]; wrap[b] = w;
  }
  if (t < 4) counts[4 * blockIdx.x + t] = c[t];
}''', "shared_atomics", 3, 96, lambda r: [i32_mix(r, 288), np.zeros(3), np.zeros(3, np.float32), np.zeros(6, np.float16),
                                          np.zeros(12, np.uint16), np.zeros(6, np.uint64), np.zeros(6, np.int64),
                                          np.zeros(3, np.uint32)])

case("libcudacxx_block_scope_atomics_in_shared", r'''
#include <cuda/atomic>
__global__ void scoped(const int* v, int* out, float* fout) {
  __shared__ int lo, hi, ticket, owner, wins;
  __shared__ float total;
  int t = threadIdx.x, x = v[blockIdx.x * blockDim.x + t];
  if (t == 0) { lo = 1 << 30; hi = -(1 << 30); ticket = 0; owner = -1; total = 0.0f; wins = 0; }
  __syncthreads();
  cuda::atomic_ref<int, cuda::thread_scope_block> a_lo(lo), a_hi(hi), a_ticket(ticket), a_owner(owner);
  cuda::atomic_ref<float, cuda::thread_scope_block> a_total(total);
  a_lo.fetch_min(x);
  a_hi.fetch_max(x);
  int my = a_ticket.fetch_add(1, cuda::std::memory_order_acq_rel);
  int expected = -1;
  bool won = a_owner.compare_exchange_strong(expected, x & 0x7fffffff);
  a_total.fetch_add((float)(x & 1023));
  cuda::atomic_ref<int, cuda::thread_scope_block>(wins).fetch_add(won ? 1 : 0);
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = wins + 10 * (my < (int)blockDim.x);   // one winner, whichever thread it was
  if (t == 0) {
    out[gridDim.x * blockDim.x + 4 * blockIdx.x + 0] = a_lo.load();
    out[gridDim.x * blockDim.x + 4 * blockIdx.x + 1] = a_hi.load();
    out[gridDim.x * blockDim.x + 4 * blockIdx.x + 2] = a_ticket.exchange(0) + (my >= 0);
    out[gridDim.x * blockDim.x + 4 * blockIdx.x + 3] = a_owner.load() >= 0;
    fout[blockIdx.x] = a_total.load();
  }
}''', "scoped", 2, 64, lambda r: [i32_mix(r, 128), np.zeros(128 + 8, np.int32), np.zeros(2, np.float32)],
     options=("-std=c++17",))      # recorded through cudalab's compile on the GPU: the same CCCL headers

case("warp_reductions_signed_unsigned_and_match_all", r'''
__global__ void warp_more(const int* v, int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x & 31;
  int x = v[i];
  unsigned u = (unsigned)x;
  int pred;
  unsigned all = __match_all_sync(0xffffffffu, x & 0xF000, &pred);
  unsigned half = 0x0000ffffu;
  int r[10] = {__reduce_min_sync(0xffffffffu, x), (int)__reduce_min_sync(0xffffffffu, u), __reduce_max_sync(0xffffffffu, x),
               (int)__reduce_max_sync(0xffffffffu, u), (int)__reduce_and_sync(0xffffffffu, u), (int)__reduce_or_sync(0xffffffffu, u),
               (int)__reduce_xor_sync(0xffffffffu, u), (int)all, pred,
               lane < 16 ? (int)__reduce_add_sync(half, u) : 0};
  for (int k = 0; k < 10; ++k) out[10 * i + k] = r[k];
}''', "warp_more", 2, 64, lambda r: [np.concatenate([i32_mix(r, 64), np.full(32, 0x1234, np.int32),
                                                    np.where(np.arange(32) < 31, 0x5000, 0x6000).astype(np.int32)]),
                                    np.zeros(10 * 128, np.int32)], arch="compute_90")

case("cg_small_tiles_and_tile_votes", r'''
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;
__global__ void small_tiles(const unsigned* v, unsigned* out) {
  cg::thread_block block = cg::this_thread_block();
  auto t4 = cg::tiled_partition<4>(block);
  auto t2 = cg::tiled_partition<2>(block);
  auto t16 = cg::tiled_partition<16>(block);
  int i = blockIdx.x * block.size() + block.thread_rank();
  unsigned x = v[i];
  out[8 * i + 0] = cg::reduce(t4, x, cg::bit_and<unsigned>());
  out[8 * i + 1] = cg::reduce(t4, x, cg::less<unsigned>());
  out[8 * i + 2] = cg::reduce(t2, x, cg::plus<unsigned>());
  out[8 * i + 3] = t16.match_any(x & 3);
  out[8 * i + 4] = t16.ballot(x & 1) | (t16.any(x > 0x80000000u) << 20) | (t16.all(x != 7u) << 21);
  out[8 * i + 5] = t16.meta_group_rank() + 100 * t16.meta_group_size() + 10000 * t4.thread_rank();
  out[8 * i + 6] = t16.shfl_up(x, 5);
  int same;
  out[8 * i + 7] = t16.match_all(x >> 28, same) + 2 * same;
}''', "small_tiles", 2, (8, 8), lambda r: [r.integers(0, 2 ** 32, 128, dtype=np.uint64).astype(np.uint32),
                                                 np.zeros(8 * 128, np.uint32)], arch="compute_90")

case("half2_approx_math_sm90", r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void h2approx(const __half2* a, const __nv_bfloat162* b, __half2* out, __nv_bfloat162* bout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = a[i];
  __nv_bfloat162 y = b[i];
  __half2 r[8] = {h2exp2(x), h2exp10(x), h2log2(__habs2(x)), h2log10(__habs2(x)), h2rsqrt(__habs2(x)),
                  h2rint(x), h2trunc(x), h2ceil(x)};
  for (int k = 0; k < 8; ++k) out[k * n + i] = r[k];
  __nv_bfloat162 s[6] = {h2exp2(y), h2log2(__habs2(y)), h2rsqrt(__habs2(y)), h2sqrt(__habs2(y)), h2rcp(y), h2floor(y)};
  for (int k = 0; k < 6; ++k) bout[k * n + i] = s[k];
}''', "h2approx", 2, 128, lambda r: [halves(r, 512), bf16s(r, 512), np.zeros((8, 512), np.float16), np.zeros((6, 512), np.uint16),
                                     np.int32(256)], arch="compute_90")

case("half_and_bfloat16_under_ftz_flag", r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void hftz(const __half* a, const __half* b, const unsigned short* c, const unsigned short* d,
                     __half* out, unsigned short* bout, float* widened, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half x = a[i], y = b[i];
  __nv_bfloat16 p = __ushort_as_bfloat16(c[i]), q = __ushort_as_bfloat16(d[i]);
  __half r[5] = {__hadd(x, y), __hmul(x, y), __hfma(x, y, x), __hsub(x, y), __float2half(__half2float(x) * 0.5f)};
  for (int k = 0; k < 5; ++k) out[k * n + i] = r[k];
  __nv_bfloat16 s[3] = {__hadd(p, q), __hmul(p, q), __hfma(p, q, p)};
  for (int k = 0; k < 3; ++k) bout[k * n + i] = __bfloat16_as_ushort(s[k]);
  widened[2 * i] = __half2float(x);
  widened[2 * i + 1] = __bfloat162float(p);
}''', "hftz", 2, 128, lambda r: [halves(r, 256), halves(r, 256)[::-1].copy(), bf16s(r, 256), bf16s(r, 256)[::-1].copy(),
                                 np.zeros((5, 256), np.float16), np.zeros((3, 256), np.uint16), np.zeros(512, np.float32),
                                 np.int32(256)], options=("-ftz=true",), arch="compute_90")

case("int128_arithmetic", r'''
__global__ void wide128(const unsigned long long* a, const unsigned long long* b, unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned __int128 x = ((unsigned __int128)a[2 * i] << 64) | a[2 * i + 1];
  unsigned __int128 y = ((unsigned __int128)b[2 * i] << 64) | b[2 * i + 1];
  __int128 sx = (__int128)x, sy = (__int128)y;
  unsigned __int128 r[6] = {x * y, y ? x / y : 0, y ? x % y : 0, x >> (a[i] & 127), x << (b[i] & 127),
                            (unsigned __int128)(sy != 0 && !(sy == -1 && sx == ((__int128)1 << 127)) ? sx / sy : 0)};
  for (int k = 0; k < 6; ++k) { out[12 * i + 2 * k] = (unsigned long long)(r[k] >> 64); out[12 * i + 2 * k + 1] = (unsigned long long)r[k]; }
}''', "wide128", 2, 64, lambda r: [r.integers(0, 2 ** 64, 256, dtype=np.uint64),
                                  np.concatenate([r.integers(0, 2 ** 64, 128, dtype=np.uint64),
                                                  r.integers(0, 2 ** 20, 128, dtype=np.uint64)]),
                                  np.zeros(12 * 128, np.uint64), np.int32(128)], options=("--device-int128",))

case("device_malloc_heap_exhaustion", r'''
__global__ void heap(unsigned long long* out) {
  if (threadIdx.x != 0) return;
  char* big = (char*)malloc(16u << 20);           // past the default 8 MiB heap
  char* four = (char*)malloc(4u << 20);
  char* five = (char*)malloc(5u << 20);           // 4 + 5 MiB: past it too
  out[0] = big != nullptr; out[1] = four != nullptr; out[2] = five != nullptr;
  free(four);
  char* again = (char*)malloc(5u << 20);
  out[3] = again != nullptr;
  if (again) { again[0] = 1; again[(5u << 20) - 1] = 2; out[4] = again[0] + again[(5u << 20) - 1]; }
  out[5] = malloc(0) == nullptr;
  free(again); free(big); free(five);
}''', "heap", 1, 32, lambda r: [np.zeros(6, np.uint64)])
