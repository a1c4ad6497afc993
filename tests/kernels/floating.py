"""float32/float64 arithmetic: IEEE rounding modes, NaN/inf/denormals/-0.0, and the math library."""
import numpy as np

from . import F32_EDGES, F64_EDGES, Corpus, f32_mix, f64_mix

CASES = Corpus("floating")
case = CASES.case


def pairs(edges):
    """Every (a, b) pair of edge values, as two flat arrays."""
    a, b = np.meshgrid(edges, edges, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


P32, P64 = F32_EDGES.size ** 2, F64_EDGES.size ** 2   # pair counts
G32, G64 = -(-P32 // 256), -(-P64 // 256)               # blocks of 256 that cover them


def f32_pair_args(r):
    a, b = pairs(F32_EDGES)
    return [a, b, np.zeros((6, a.size), np.float32), np.int32(a.size)]


case("f32_edge_pairs_arith", r'''
__global__ void arith(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[0 * n + i] = x + y;
  out[1 * n + i] = x - y;
  out[2 * n + i] = x * y;
  out[3 * n + i] = x / y;
  out[4 * n + i] = fminf(x, y);
  out[5 * n + i] = fmaxf(x, y);
}''', "arith", G32, 256, f32_pair_args)

case("f64_edge_pairs_arith", r'''
__global__ void arith64(const double* a, const double* b, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i];
  out[0 * n + i] = x + y;
  out[1 * n + i] = x - y;
  out[2 * n + i] = x * y;
  out[3 * n + i] = x / y;
  out[4 * n + i] = fmin(x, y);
  out[5 * n + i] = fmax(x, y);
}''', "arith64", G64, 256, lambda r: [*pairs(F64_EDGES), np.zeros((6, P64), np.float64),
                                     np.int32(P64)])

case("f32_edge_pairs_compare", r'''
__global__ void compare(const float* a, const float* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[i] = (x < y) | (x <= y) << 1 | (x == y) << 2 | (x != y) << 3 | (x > y) << 4 | (x >= y) << 5 |
           !(x < y) << 6 | (isnan(x) != 0) << 7 | (isinf(x) != 0) << 8 | (isfinite(x) != 0) << 9 |
           (signbit(x) != 0) << 10 | (x != x || y != y) << 11;
}''', "compare", G32, 256, lambda r: [*pairs(F32_EDGES), np.zeros(P32, np.int32),
                                     np.int32(P32)])

case("f32_rounding_mode_intrinsics", r'''
__global__ void rounding(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  float r[20] = {__fadd_rn(x, y), __fadd_rz(x, y), __fadd_rd(x, y), __fadd_ru(x, y),
                 __fmul_rn(x, y), __fmul_rz(x, y), __fmul_rd(x, y), __fmul_ru(x, y),
                 __fmaf_rn(x, y, z), __fmaf_rz(x, y, z), __fmaf_rd(x, y, z), __fmaf_ru(x, y, z),
                 __fdiv_rn(x, y), __fdiv_rz(x, y), __fdiv_rd(x, y), __fdiv_ru(x, y),
                 __frcp_rn(x), __frcp_rz(x), __fsqrt_rd(x), __fsqrt_ru(x)};
  for (int k = 0; k < 20; ++k) out[k * n + i] = r[k];
}''', "rounding", 2, 128, lambda r: [f32_mix(r, 256), f32_mix(r, 256)[::-1].copy(), np.roll(f32_mix(r, 256), 17),
                                      np.zeros((20, 256), np.float32), np.int32(256)])

case("f64_rounding_mode_intrinsics", r'''
__global__ void rounding64(const double* a, const double* b, const double* c, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i], z = c[i];
  double r[20] = {__dadd_rn(x, y), __dadd_rz(x, y), __dadd_rd(x, y), __dadd_ru(x, y),
                  __dmul_rn(x, y), __dmul_rz(x, y), __dmul_rd(x, y), __dmul_ru(x, y),
                  __fma_rn(x, y, z), __fma_rz(x, y, z), __fma_rd(x, y, z), __fma_ru(x, y, z),
                  __ddiv_rn(x, y), __ddiv_rz(x, y), __ddiv_rd(x, y), __ddiv_ru(x, y),
                  __drcp_rn(x), __drcp_rd(x), __dsqrt_rn(x), __dsqrt_rz(x)};
  for (int k = 0; k < 20; ++k) out[k * n + i] = r[k];
}''', "rounding64", 2, 128, lambda r: [f64_mix(r, 256), f64_mix(r, 256)[::-1].copy(), np.roll(f64_mix(r, 256), 17),
                                        np.zeros((20, 256), np.float64), np.int32(256)])

case("f32_denormal_arithmetic", r'''
__global__ void denorm(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  out[0 * n + i] = x * 1e-30f;
  out[1 * n + i] = x * 0.5f * 1e-38f;
  out[2 * n + i] = (x * 1e-40f) * 1e30f;
  out[3 * n + i] = x / 1e38f;
  out[4 * n + i] = sqrtf(x * 1e-41f);
  out[5 * n + i] = fmaf(x, 1e-38f, -x * 1e-38f);
}''', "denorm", 2, 128, lambda r: [f32_mix(r, 256), np.zeros((6, 256), np.float32), np.int32(256)])

case("signed_zero_and_sign_ops", r'''
__global__ void signs(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[0 * n + i] = -x;
  out[1 * n + i] = fabsf(x);
  out[2 * n + i] = copysignf(x, y);
  out[3 * n + i] = x * 0.0f;
  out[4 * n + i] = 0.0f - x;
  out[5 * n + i] = x + -0.0f;
  out[6 * n + i] = fdimf(x, y);
  out[7 * n + i] = x > y ? x : y;
}''', "signs", G32, 256, lambda r: [*pairs(F32_EDGES), np.zeros((8, P32), np.float32),
                                   np.int32(P32)])

case("fma_contraction_vs_separate", r'''
__global__ void contract(const float* a, const float* b, const float* c, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], z = c[i];
  out[0 * n + i] = x * y + z;                       // contracted to fma.rn by default
  out[1 * n + i] = __fadd_rn(__fmul_rn(x, y), z);   // never contracted
  out[2 * n + i] = fmaf(x, y, z);
  out[3 * n + i] = x * y - x * z;
  double dx = x, dy = y, dz = z;
  out[4 * n + i] = (float)(dx * dy + dz);
}''', "contract", 2, 128, lambda r: [(1 + r.random(256) * 1e-3).astype(np.float32), (1 - r.random(256) * 1e-3).astype(np.float32),
                                      (-1 - r.random(256) * 1e-3).astype(np.float32), np.zeros((5, 256), np.float32),
                                      np.int32(256)])

case("f32_rounding_functions", r'''
__global__ void roundf_all(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], ip;
  out[0 * n + i] = truncf(x);
  out[1 * n + i] = roundf(x);
  out[2 * n + i] = rintf(x);
  out[3 * n + i] = floorf(x);
  out[4 * n + i] = ceilf(x);
  out[5 * n + i] = nearbyintf(x);
  out[6 * n + i] = modff(x, &ip);
  out[7 * n + i] = ip;
}''', "roundf_all", 2, 128, lambda r: [np.concatenate([F32_EDGES, (np.arange(-40, 40) * 0.25).astype(np.float32),
                                                        f32_mix(r, 256 - 80 - F32_EDGES.size)]), np.zeros((8, 256), np.float32), np.int32(256)])

case("f32_exact_library_functions", r'''
__global__ void exactlib(const float* a, const float* b, float* out, int* iout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  int e;
  out[0 * n + i] = fmodf(x, y);
  out[1 * n + i] = remainderf(x, y);
  out[2 * n + i] = frexpf(x, &e);
  iout[0 * n + i] = e;
  out[3 * n + i] = ldexpf(x, __float2int_rz(y) % 300);
  out[4 * n + i] = nextafterf(x, y);
  out[5 * n + i] = logbf(x);
  iout[1 * n + i] = ilogbf(x);
  out[6 * n + i] = sqrtf(x);
  out[7 * n + i] = scalbnf(y, -(__float2int_rz(x) % 200));
}''', "exactlib", 2, 128, lambda r: [f32_mix(r, 256), np.roll(f32_mix(r, 256), 101), np.zeros((8, 256), np.float32),
                                      np.zeros((2, 256), np.int32), np.int32(256)])

case("f32_math_library_ulp", r'''
__global__ void mathf(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  float r[16] = {expf(x), logf(x), sinf(x), cosf(x), tanf(x), powf(x, y), tanhf(x), rsqrtf(x),
                 exp2f(x), log2f(x), log10f(x), cbrtf(x), atan2f(x, y), hypotf(x, y), erff(x), sinhf(x)};
  for (int k = 0; k < 16; ++k) out[k * n + i] = r[k];
}''', "mathf", 2, 128, lambda r: [f32_mix(r, 256), (r.standard_normal(256) * 4).astype(np.float32),
                                   np.zeros((16, 256), np.float32), np.int32(256)], ulp=4)

case("f32_math_moderate_range", r'''
__global__ void mathf_range(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], s, c;
  sincosf(x, &s, &c);
  out[0 * n + i] = s;
  out[1 * n + i] = c;
  out[2 * n + i] = expf(x * 0.1f);
  out[3 * n + i] = logf(fabsf(x) + 1e-3f);
  out[4 * n + i] = asinf(x / 20.0f);
  out[5 * n + i] = acosf(x / 20.0f);
  out[6 * n + i] = atanf(x);
  out[7 * n + i] = expm1f(x * 0.01f);
  out[8 * n + i] = log1pf(fabsf(x));
  out[9 * n + i] = sinpif(x * 0.3f);
}''', "mathf_range", 2, 128, lambda r: [np.linspace(-20, 20, 256, dtype=np.float32), np.zeros((10, 256), np.float32),
                                         np.int32(256)], ulp=4)

case("f32_fast_intrinsics", r'''
__global__ void fastf(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  out[0 * n + i] = __sinf(x);
  out[1 * n + i] = __cosf(x);
  out[2 * n + i] = __expf(x * 0.1f);
  out[3 * n + i] = __logf(fabsf(x) + 0.5f);
  out[4 * n + i] = __fdividef(x, y);
  out[5 * n + i] = __powf(fabsf(y) + 0.5f, x * 0.1f);
  out[6 * n + i] = __tanf(x * 0.1f);
  out[7 * n + i] = __exp10f(x * 0.05f);
  out[8 * n + i] = __log2f(fabsf(x) + 0.5f);
  out[9 * n + i] = __saturatef(x * 0.1f);
}''', "fastf", 2, 128, lambda r: [np.linspace(-3.14, 3.14, 256, dtype=np.float32), (r.random(256) * 8 + 0.25).astype(np.float32),
                                   np.zeros((10, 256), np.float32), np.int32(256)], ulp=16, atol=2e-6)

case("f64_math_library", r'''
__global__ void mathd(const double* a, const double* b, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i];
  double r[10] = {exp(x), log(x), sin(x), cos(x), pow(x, y), tanh(x), rsqrt(x), cbrt(x), atan2(x, y), hypot(x, y)};
  for (int k = 0; k < 10; ++k) out[k * n + i] = r[k];
}''', "mathd", 2, 128, lambda r: [f64_mix(r, 256), r.standard_normal(256) * 4, np.zeros((10, 256), np.float64),
                                   np.int32(256)], ulp=2)

case("f64_exact_functions", r'''
__global__ void exactd(const double* a, const double* b, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double x = a[i], y = b[i];
  out[0 * n + i] = sqrt(x);
  out[1 * n + i] = fma(x, y, -x);
  out[2 * n + i] = floor(x);
  out[3 * n + i] = rint(x);
  out[4 * n + i] = fmod(x, y);
  out[5 * n + i] = copysign(fabs(x), y);
  out[6 * n + i] = trunc(x) + round(y);
  out[7 * n + i] = 1.0 / x;
}''', "exactd", 2, 128, lambda r: [f64_mix(r, 256), np.roll(f64_mix(r, 256), 77), np.zeros((8, 256), np.float64),
                                    np.int32(256)])

case("ptx_float_modifiers", r'''
__global__ void modifiers(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], r[8];
  asm("add.ftz.f32 %0, %1, %2;" : "=f"(r[0]) : "f"(x), "f"(y));
  asm("mul.ftz.f32 %0, %1, %2;" : "=f"(r[1]) : "f"(x), "f"(y));
  asm("min.NaN.f32 %0, %1, %2;" : "=f"(r[2]) : "f"(x), "f"(y));
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r[3]) : "f"(x), "f"(y));
  asm("add.sat.f32 %0, %1, %2;" : "=f"(r[4]) : "f"(x), "f"(y));
  asm("cvt.rni.f32.f32 %0, %1;" : "=f"(r[5]) : "f"(x));
  asm("fma.rn.ftz.sat.f32 %0, %1, %2, %1;" : "=f"(r[6]) : "f"(x), "f"(y));
  asm("copysign.f32 %0, %1, %2;" : "=f"(r[7]) : "f"(x), "f"(y));
  for (int k = 0; k < 8; ++k) out[k * n + i] = r[k];
}''', "modifiers", G32, 256, lambda r: [*pairs(F32_EDGES), np.zeros((8, P32), np.float32),
                                       np.int32(P32)])

case("ptx_testp_and_set", r'''
__global__ void testp(const float* a, const float* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  unsigned r;
  asm("{ .reg .pred p, q, s, t; .reg .u32 a, b, c, d;\n\t"
      "testp.normal.f32 p, %1;\n\ttestp.subnormal.f32 q, %1;\n\t"
      "testp.infinite.f32 s, %1;\n\ttestp.notanumber.f32 t, %1;\n\t"
      "selp.u32 a, 1, 0, p;\n\tselp.u32 b, 2, 0, q;\n\tselp.u32 c, 4, 0, s;\n\tselp.u32 d, 8, 0, t;\n\t"
      "add.u32 a, a, b;\n\tadd.u32 c, c, d;\n\tadd.u32 %0, a, c;\n\t}" : "=r"(r) : "f"(x));
  unsigned lt, gtu;
  asm("set.lt.u32.f32 %0, %1, %2;" : "=r"(lt) : "f"(x), "f"(y));
  asm("set.gtu.u32.f32 %0, %1, %2;" : "=r"(gtu) : "f"(x), "f"(y));
  out[3 * i + 0] = r; out[3 * i + 1] = lt; out[3 * i + 2] = gtu;
}''', "testp", G32, 256, lambda r: [*pairs(F32_EDGES), np.zeros(3 * P32, np.uint32),
                                   np.int32(P32)])

case("kahan_vs_naive_sum", r'''
__global__ void sums(const float* x, float* out, int len) {
  int t = threadIdx.x;
  float naive = 0.0f, s = 0.0f, c = 0.0f;
  for (int k = t; k < len; k += blockDim.x) {
    naive += x[k];
    float y = x[k] - c;
    float u = s + y;
    c = (u - s) - y;
    s = u;
  }
  out[2 * t] = naive;
  out[2 * t + 1] = s;
}''', "sums", 1, 32, lambda r: [(r.standard_normal(4096) * 10.0 ** r.integers(-3, 6, 4096)).astype(np.float32),
                                np.zeros(64, np.float32), np.int32(4096)])

case("horner_polynomial_f64", r'''
__global__ void horner(const double* x, const double* coef, double* out, int n, int degree) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double acc = coef[degree];
  for (int k = degree - 1; k >= 0; --k) acc = acc * x[i] + coef[k];
  out[i] = acc;
}''', "horner", 2, 128, lambda r: [np.linspace(-2, 2, 256), r.standard_normal(12), np.zeros(256), np.int32(256), np.int32(11)])

case("newton_sqrt_convergence_loop", r'''
__global__ void newton(const float* x, float* out, int* iters, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i], g = v > 1.0f ? v * 0.5f : 1.0f, prev = 0.0f;
  int k = 0;
  while (g != prev && k < 100) { prev = g; g = 0.5f * (g + v / g); ++k; }
  out[i] = g;
  iters[i] = k;
}''', "newton", 1, 128, lambda r: [np.concatenate([[0.0, 1.0, 2.0, 1e30, 1e-30], r.random(123) * 1e4]).astype(np.float32),
                                   np.zeros(128, np.float32), np.zeros(128, np.int32), np.int32(128)])

case("mixed_precision_promotion", r'''
__global__ void promote(const float* a, const double* b, const int* c, double* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  out[0 * n + i] = x * b[i];
  out[1 * n + i] = x * 0.1;
  out[2 * n + i] = x * 0.1f;
  out[3 * n + i] = c[i] / 3.0;
  out[4 * n + i] = (float)c[i] / 3.0f;
  out[5 * n + i] = x + c[i];
}''', "promote", 2, 128, lambda r: [f32_mix(r, 256), f64_mix(r, 256), r.integers(-2 ** 31, 2 ** 31, 256).astype(np.int32),
                                     np.zeros((6, 256)), np.int32(256)])
