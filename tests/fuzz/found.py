"""Small kernels for the differences the fuzzer found between the emulator and an H100 (corpus style).

The fuzzer's programs mix hundreds of operations, so each difference was cut down to the operations
it involves (directed rounding, NaN payloads, signed zeros, conversions): each case below runs every
one of a family of operations over edge values, one output row per operation, and the GPU's rows are
in found.npz (tools/fuzz_gpu.py --found). tests/fuzz/test_found.py checks each row on the emulator;
``OPEN`` names the rows that still differ and why (they are expected failures until fixed).
"""
import random
import struct

import numpy as np


def _bits(xs):
    return np.array(xs, np.uint32)


def _f(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


# edge values: zeros, infinities, NaNs with payloads (quiet and signalling, both signs), denormals,
# the largest/smallest normals, halves (rounding ties), values near the int32/uint32/int64 limits
EDGES = _bits([0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001,
               0xFFC00001, 0x7F800001, 0xFFA00000, 0x7FFFFFFF, 0xFFFFFFFF, 0x00000001, 0x80000001,
               0x007FFFFF, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x3F800000, 0xBF800000,
               0x3F000000, 0xBF000000, 0x3FC00000, 0xBFC00000, 0x40200000, 0xC0200000, 0x3E99999A,
               0xBE99999A, 0x4F000000, 0xCF000000, 0x4EFFFFFF, 0x4F800000, 0xCF000001, 0x5F000000,
               0xDF000000, 0x5F800000, 0x4B000001, 0x4B7FFFFF, 0x34000000, 0x0C000000, 0x8C000000])
SMALL = EDGES[[0, 1, 2, 3, 4, 6, 8, 9, 11, 12, 13, 16, 17, 19, 20, 23, 28, 34, 40, 41]]   # for pairs


def _pairs(vals):
    a, b = np.meshgrid(vals, vals, indexing="ij")
    return a.ravel().copy(), b.ravel().copy()


UNARY_F = ["fabsf", "neg", "sqrtf", "__fsqrt_rz", "__frcp_rn", "truncf", "floorf", "ceilf", "rintf", "roundf",
           "__saturatef", "f32_f64_f32", "mul_one", "add_zero", "add_negzero", "copysign_neg", "fmaxf_self",
           "fdimf_zero", "__fadd_rz_zero", "__fmul_rd_one", "sel_lt"]
UNARY_I = ["__float2int_rn", "__float2int_rz", "__float2int_rd", "__float2int_ru", "__float2uint_rn",
           "__float2uint_rz", "__float2uint_rd", "__float2uint_ru", "__float2ll_rz_lo", "__float2ll_rz_hi",
           "__float2ll_rn_hi", "__float2ull_rd_lo", "__float2ull_rd_hi", "__double2int_rz_x3", "int_cast_clamped",
           "isnan", "isinf", "signbit"]

UNARY_SRC = r'''
extern "C" __global__ void unary_ops(const float* a, const float* one, float* of, unsigned* oi, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], o = one[i], z = o - o;      // 1 and +0 from memory: nothing folds
  float r[] = {fabsf(x), -x, sqrtf(x), __fsqrt_rz(x), __frcp_rn(x), truncf(x), floorf(x), ceilf(x), rintf(x),
               roundf(x), __saturatef(x), (float)(double)x, x * o, x + z, x + (-z), copysignf(x, -o),
               fmaxf(x, x), fdimf(x, z), __fadd_rz(x, z), __fmul_rd(x, o), x < o ? x : o};
  for (int k = 0; k < 21; ++k) of[k * n + i] = r[k];
  unsigned s[] = {(unsigned)__float2int_rn(x), (unsigned)__float2int_rz(x), (unsigned)__float2int_rd(x),
                  (unsigned)__float2int_ru(x), __float2uint_rn(x), __float2uint_rz(x), __float2uint_rd(x),
                  __float2uint_ru(x), (unsigned)__float2ll_rz(x), (unsigned)(__float2ll_rz(x) >> 32),
                  (unsigned)(__float2ll_rn(x) >> 32), (unsigned)__float2ull_rd(x),
                  (unsigned)(__float2ull_rd(x) >> 32), (unsigned)__double2int_rz((double)x * 3.0),
                  (unsigned)(int)fminf(fmaxf(x, -2e9f), 2e9f), (unsigned)(isnan(x) != 0),
                  (unsigned)(isinf(x) != 0), (unsigned)(signbit(x) != 0)};
  for (int k = 0; k < 18; ++k) oi[k * n + i] = s[k];
}'''

BINARY_F = ["add", "sub", "mul", "div", "fminf", "fmaxf", "copysignf", "fdimf", "__fadd_rz", "__fadd_rd",
            "__fadd_ru", "__fsub_rz", "__fmul_rz", "__fmul_rd", "__fmul_ru", "__fdiv_rz", "__fdiv_ru",
            "f64_add", "f64_mul", "f64_div", "f64_sub", "sel_lt", "sel_ge"]

BINARY_SRC = r'''
extern "C" __global__ void binary_ops(const float* a, const float* b, float* of, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i];
  float r[] = {x + y, x - y, x * y, x / y, fminf(x, y), fmaxf(x, y), copysignf(x, y), fdimf(x, y),
               __fadd_rz(x, y), __fadd_rd(x, y), __fadd_ru(x, y), __fsub_rz(x, y), __fmul_rz(x, y),
               __fmul_rd(x, y), __fmul_ru(x, y), __fdiv_rz(x, y), __fdiv_ru(x, y),
               (float)((double)x + (double)y), (float)((double)x * (double)y), (float)((double)x / (double)y),
               (float)((double)x - (double)y), x < y ? x : y, x >= y ? x : y};
  for (int k = 0; k < 23; ++k) of[k * n + i] = r[k];
}'''

FMA_F = ["fmaf", "__fmaf_rn", "__fmaf_rz", "__fmaf_rd", "__fmaf_ru", "f64_fma"]

FMA_SRC = r'''
extern "C" __global__ void fma_ops(const float* a, const float* b, const float* c, float* of, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], y = b[i], w = c[i];
  float r[] = {fmaf(x, y, w), __fmaf_rn(x, y, w), __fmaf_rz(x, y, w), __fmaf_rd(x, y, w), __fmaf_ru(x, y, w),
               (float)fma((double)x, (double)y, (double)w)};
  for (int k = 0; k < 6; ++k) of[k * n + i] = r[k];
}'''

I2F = ["__uint2float_rn", "__uint2float_rz", "__uint2float_rd", "__uint2float_ru", "__int2float_rn",
       "__int2float_rz", "__int2float_rd", "__int2float_ru", "float_of_unsigned", "float_of_int",
       "__ll2float_rn_scaled", "__ll2float_rz", "__ull2float_rd", "float_of_double_of_product"]

I2F_SRC = r'''
extern "C" __global__ void int_to_float(const unsigned* a, float* of, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned u = a[i]; int s = (int)u;
  float r[] = {__uint2float_rn(u), __uint2float_rz(u), __uint2float_rd(u), __uint2float_ru(u),
               __int2float_rn(s), __int2float_rz(s), __int2float_rd(s), __int2float_ru(s), (float)u, (float)s,
               __ll2float_rn((long long)s * 1048577ll), __ll2float_rz((long long)s * 3000000017ll),
               __ull2float_rd((unsigned long long)u * 4294967311ull), (float)((double)u * (double)s)};
  for (int k = 0; k < 14; ++k) of[k * n + i] = r[k];
}'''


def _unary_args():
    n = EDGES.size
    return [EDGES.view(np.float32).copy(), np.ones(n, np.float32), np.zeros(len(UNARY_F) * n, np.float32),
            np.zeros(len(UNARY_I) * n, np.uint32), np.int32(n)]


def _binary_args():
    a, b = _pairs(EDGES)
    return [a.view(np.float32), b.view(np.float32), np.zeros(len(BINARY_F) * a.size, np.float32), np.int32(a.size)]


def _random_floats(r, n):
    out = []
    for _ in range(n):
        k = r.random()
        if k < 0.2:
            out.append(r.getrandbits(23) | r.getrandbits(1) << 31)                  # denormal
        else:
            e = r.randint(1, 254) if k < 0.5 else r.randint(100, 150)
            out.append(r.getrandbits(23) | e << 23 | r.getrandbits(1) << 31)
    return _bits(out)


def _fma_args():
    r = random.Random(5)
    n = 2048
    a, b, c = (_random_floats(r, n) for _ in range(3))
    b[::4] = a[::4] ^ 0x80000000                     # products near cancellation
    sa, sb = _pairs(SMALL)                             # and the edge pairs against a few addends
    m = sa.size
    a[:m], b[:m] = sa, sb
    c[:m] = np.resize(_bits([0x00000000, 0x80000000, 0x7FC00001, 0x3F800000, 0x00000001, 0xFF800000]), m)
    return [a.view(np.float32), b.view(np.float32), c.view(np.float32), np.zeros(len(FMA_F) * n, np.float32),
            np.int32(n)]


def _random_pairs_args():
    """Random finite pairs where directed rounding of a sum matters (a tiny addend)."""
    r = random.Random(7)
    n = 2048
    a, b = _random_floats(r, n), _random_floats(r, n)
    b[::4] = a[::4] ^ 0x80000000 ^ _bits([r.getrandbits(3) for _ in range(a[::4].size)])
    return [a.view(np.float32), b.view(np.float32), np.zeros(len(BINARY_F) * n, np.float32), np.int32(n)]


def _i2f_args():
    r = random.Random(9)
    vals = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x01000001, 0x01000003, 0xFFFFFF01, 0x80000081]
    vals += [r.getrandbits(r.choice((25, 28, 31, 32))) for _ in range(256 - len(vals))]
    a = _bits(vals)
    return [a, np.zeros(len(I2F) * a.size, np.float32), np.int32(a.size)]


def _grid(n):
    return (-(-n // 128),)


CASES = [
    {"name": "unary_edges", "src": UNARY_SRC, "kernel": "unary_ops", "grid": _grid(EDGES.size), "block": (128,),
     "make": _unary_args, "rows": {2: UNARY_F, 3: UNARY_I}},
    {"name": "binary_edge_pairs", "src": BINARY_SRC, "kernel": "binary_ops", "grid": _grid(EDGES.size ** 2),
     "block": (128,), "make": _binary_args, "rows": {2: BINARY_F}},
    {"name": "binary_random", "src": BINARY_SRC, "kernel": "binary_ops", "grid": _grid(2048), "block": (128,),
     "make": _random_pairs_args, "rows": {2: BINARY_F}},
    {"name": "fma_mixed", "src": FMA_SRC, "kernel": "fma_ops", "grid": _grid(2048), "block": (128,),
     "make": _fma_args, "rows": {3: FMA_F}},
    {"name": "int_to_float", "src": I2F_SRC, "kernel": "int_to_float", "grid": _grid(256), "block": (128,),
     "make": _i2f_args, "rows": {1: I2F}},
]

# Rows that still differ on the emulator: "case/arg/op" -> cause. At commit 12b55ea (the emulator the
# 5,000-program run used) 24 rows differed; see docs/fuzz_report.md. Fixed since: directed rounding of
# add/sub/fma (.rz/.rm/.rp, incl. the sign of an exact zero under .rm), sqrt.rz, NaN results of
# abs/neg/cvt.rzi|rmi|rpi|rni.f32.f32 (canonical on the GPU), cvt.sat of -0, float->64-bit integer and
# f64->s32 conversions of NaN (0x8000...0 on the GPU).
OPEN: dict = {}     # fma_mixed/3/f64_fma (fma.rn.f64's NaN choice: b, c, a) fixed 2026-11-26 with
# neg.f64 keeping a NaN's sign (ptxas folds the negation into the fma; docs/fuzz_report.md)
