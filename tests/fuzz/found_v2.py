"""Every version-2 operation of the fuzz generator over edge and random inputs, one output row per
operation (the format of found.py): what the H100 gives is in found_v2.npz (tools/fuzz_gpu.py --found
with this module), tests/fuzz/test_found.py replays each row on the emulator. Written to cut the
differences of the version-2 run (2026-11-26) down to single operations.

All cases compile for compute_90 (``options``) and run on the emulator's H100 profile.
"""
import random

import numpy as np

ARCH = ("-arch=compute_90",)
N = 1024          # inputs per case: one thread each


def _u16_halves(r, n, bf=False):
    """Half or bf16 bit patterns: zeros, infinities, NaNs (quiet, signalling, both signs, payloads),
    subnormals, the largest finite values, small integers and ties, then random bits."""
    if bf:
        edges = [0x0000, 0x8000, 0x7F80, 0xFF80, 0x7FC0, 0xFFC0, 0x7FC1, 0x7F81, 0xFFFF, 0x7FFF, 0x0001, 0x8001,
                 0x007F, 0x0080, 0x7F7F, 0xFF7F, 0x3F80, 0xBF80, 0x3F00, 0x4040, 0x3FC0, 0x4B00, 0x4F00, 0xCF00]
    else:
        edges = [0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7E01, 0x7C01, 0xFFFF, 0x7FFF, 0x0001, 0x8001,
                 0x03FF, 0x0400, 0x7BFF, 0xFBFF, 0x3C00, 0xBC00, 0x3800, 0x4200, 0x3E00, 0x6400, 0x77FF, 0x5BFF,
                 0x3C01, 0xB801, 0x1400]
    out = [r.choice(edges) if r.random() < 0.3 else
           (r.getrandbits(16) if r.random() < 0.5 else
            (r.getrandbits(1) << 15) | ((r.randint(-4, 4) + (127 if bf else 15)) << (7 if bf else 10)) | r.getrandbits(7 if bf else 10))
           for _ in range(n)]
    return np.array(out, np.uint32)


def _words(r, n):
    edges = [0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0x80000001, 0x7FFF8000, 0x80007FFF, 0xFFFF0000, 0x0000FFFF,
             0x00010001, 0x7FFF7FFF, 0x80008000, 31, 32, 33]
    return np.array([r.choice(edges) if r.random() < 0.2 else r.getrandbits(r.choice((4, 8, 16, 31, 32)))
                     for _ in range(n)], np.uint32)


def _floats(r, n):
    edges = [0x00000000, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7FC00001, 0x7F800001,
             0xFFFFFFFF, 0x7FFFFFFF, 0x00000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0x3F800000, 0xBF800000,
             0x43E00000, 0x43E80000, 0x43F00000, 0x47600000, 0x47700000, 0x477FE000, 0x3B000000, 0x3A800000,
             0x38800000, 0x37800000, 0x33800000, 0x3F801000, 0x3F802000, 0x3F803000, 0x477FF000, 0x477FEFFF]
    out = []
    for _ in range(n):
        k = r.random()
        if k < 0.25:
            out.append(r.choice(edges))
        elif k < 0.4:
            out.append(r.getrandbits(32))
        else:
            e = r.randint(-30, 20)
            x = np.float32(r.uniform(1, 2) * 2.0 ** e * r.choice((1, -1)))
            out.append(int(x.view(np.uint32)))
    return np.array(out, np.uint32)


HALF_BIN = ["__hadd_rn", "__hsub_rn", "__hmul_rn", "__hdiv", "__hmin", "__hmax", "__hmin_nan", "__hmax_nan",
            "__hadd_sat", "__hsub_sat", "__hmul_sat"]
HALF_UN = ["__habs", "__hneg", "hceil", "hfloor", "htrunc", "hrint"]
HALF_CMP = ["__heq", "__hne", "__hlt", "__hle", "__hgt", "__hge", "__hequ", "__hltu", "__hgtu"]
HALF_INT = ["__half2int_rn", "__half2int_rz", "__half2int_rd", "__half2int_ru", "__half2uint_rz", "__half2short_rn",
            "__half2ll_rz"]


def _half_src(bf):
    T, mk, bits = ("__nv_bfloat16", "__ushort_as_bfloat16", "__bfloat16_as_ushort") if bf else \
        ("__half", "__ushort_as_half", "__half_as_ushort")
    bins = BF_BIN if bf else HALF_BIN
    uns = ["__habs", "__hneg"] if bf else HALF_UN
    cmps = ["__hlt", "__hequ", "__hgt", "__hne"] if bf else HALF_CMP
    ints = ["__bfloat162int_rn", "__bfloat162int_rz"] if bf else HALF_INT
    rows = [f"{bits}({f}(x, y))" for f in bins] + [f"{bits}(__hfma(x, y, z))"]
    if not bf:
        rows += [f"{bits}(__hfma_sat(x, y, z))", f"{bits}(__hfma_relu(x, y, z))"]
    rows += [f"{bits}({f}(x))" for f in uns]
    rows.append(" | ".join(f"((unsigned){f}(x, y) << {k})" for k, f in enumerate(cmps)))
    rows.append("(unsigned)__hisnan(x)")
    rows += [f"(unsigned){f}(x)" for f in ints]
    rows += ["__float_as_uint(" + ("__bfloat162float" if bf else "__half2float") + "(x))"]
    body = ", ".join(rows)
    name = "bf16_ops" if bf else "half_ops"
    return len(rows), rf'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void {name}(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o, int n) {{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  {T} x = {mk}((unsigned short)a[i]), y = {mk}((unsigned short)b[i]), z = {mk}((unsigned short)c[i]);
  unsigned r[] = {{{body}}};
  for (int k = 0; k < {len(rows)}; ++k) o[k * n + i] = r[k];
}}'''


BF_BIN = ["__hadd_rn", "__hsub_rn", "__hmul_rn", "__hdiv", "__hmin", "__hmax", "__hmin_nan", "__hmax_nan"]
NH, HALF_SRC = _half_src(False)
NB, BF_SRC = _half_src(True)
HALF_ROW_NAMES = HALF_BIN + ["__hfma", "__hfma_sat", "__hfma_relu"] + HALF_UN + ["cmp_bits", "__hisnan"] + HALF_INT + ["to_float"]
BF_ROW_NAMES = BF_BIN + ["__hfma", "__habs", "__hneg", "cmp_bits", "__hisnan", "__bfloat162int_rn", "__bfloat162int_rz",
                         "to_float"]
assert len(HALF_ROW_NAMES) == NH and len(BF_ROW_NAMES) == NB

HALF2 = ["__hadd2_rn", "__hsub2_rn", "__hmul2_rn", "__hmax2", "__hmin2", "__hmax2_nan", "__hmin2_nan", "__h2div",
         "__hadd2_sat"]
HALF2_ROWS = HALF2 + ["__hfma2", "__hfma2_sat", "__hfma2_relu", "low2float", "high2float"]
HALF2_SRC = r'''
#include <cuda_fp16.h>
__device__ __forceinline__ __half2 h2(unsigned u) { return __halves2half2(__ushort_as_half((unsigned short)u), __ushort_as_half((unsigned short)(u >> 16))); }
__device__ __forceinline__ unsigned u2(__half2 h) { return (unsigned)__half_as_ushort(__low2half(h)) | ((unsigned)__half_as_ushort(__high2half(h)) << 16); }
extern "C" __global__ void half2_ops(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2 x = h2(a[i]), y = h2(b[i]), z = h2(c[i]);
  unsigned r[] = {''' + ", ".join(f"u2({f}(x, y))" for f in HALF2) + r''', u2(__hfma2(x, y, z)), u2(__hfma2_sat(x, y, z)),
                  u2(__hfma2_relu(x, y, z)), __float_as_uint(__low2float(x)), __float_as_uint(__high2float(x))};
  for (int k = 0; k < ''' + str(len(HALF2_ROWS)) + r'''; ++k) o[k * n + i] = r[k];
}'''

CONV_ROWS = ["f2h_rn", "f2h_rz", "f2h_rd", "f2h_ru", "f2bf_rn", "f2bf_rz", "i2h_rn", "u2h_rz", "s2h_rn", "tf32",
             "f2e4_sat", "f2e4_nosat", "f2e5_sat", "f2e5_nosat", "f2x2_e4_sat", "f2x2_e5_nosat", "h2e4_sat",
             "h2e4_nosat", "h2e5_sat", "h2e5_nosat", "d2e4_sat", "d2e5_nosat", "d2e4_small", "h2x2_e4_sat",
             "e4_to_f", "e5_to_f", "e4_ctor_f", "e5_ctor_f", "e4_ctor_h", "f_to_h2_low"]
CONV_SRC = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <mma.h>
__device__ __forceinline__ __half2 h2(unsigned u) { return __halves2half2(__ushort_as_half((unsigned short)u), __ushort_as_half((unsigned short)(u >> 16))); }
__device__ __forceinline__ unsigned hraw8(unsigned bits, __nv_saturation_t s, __nv_fp8_interpretation_t k) {
  __half_raw h; h.x = (unsigned short)bits; return __nv_cvt_halfraw_to_fp8(h, s, k); }
__device__ __forceinline__ float f8(unsigned code, __nv_fp8_interpretation_t k) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, k))); }
extern "C" __global__ void conversions(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = __uint_as_float(a[i]), y = __uint_as_float(b[i]);
  unsigned w = c[i];
  unsigned r[] = {__half_as_ushort(__float2half_rn(x)), __half_as_ushort(__float2half_rz(x)),
    __half_as_ushort(__float2half_rd(x)), __half_as_ushort(__float2half_ru(x)),
    __bfloat16_as_ushort(__float2bfloat16_rn(x)), __bfloat16_as_ushort(__float2bfloat16_rz(x)),
    __half_as_ushort(__int2half_rn((int)w)), __half_as_ushort(__uint2half_rz(w)), __half_as_ushort(__short2half_rn((short)w)),
    __float_as_uint(nvcuda::wmma::__float_to_tf32(x)),
    __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3), __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E4M3),
    __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E5M2), __nv_cvt_float_to_fp8(x, __NV_NOSAT, __NV_E5M2),
    __nv_cvt_float2_to_fp8x2(make_float2(x, y), __NV_SATFINITE, __NV_E4M3),
    __nv_cvt_float2_to_fp8x2(make_float2(x, y), __NV_NOSAT, __NV_E5M2),
    hraw8(w, __NV_SATFINITE, __NV_E4M3), hraw8(w, __NV_NOSAT, __NV_E4M3), hraw8(w, __NV_SATFINITE, __NV_E5M2),
    hraw8(w, __NV_NOSAT, __NV_E5M2),
    __nv_cvt_double_to_fp8((double)x * 1.0, __NV_SATFINITE, __NV_E4M3),
    __nv_cvt_double_to_fp8((double)x * 0.001, __NV_NOSAT, __NV_E5M2),
    __nv_cvt_double_to_fp8((double)x * 3e-5, __NV_SATFINITE, __NV_E4M3),
    __nv_cvt_halfraw2_to_fp8x2(__half2_raw(h2(w)), __NV_SATFINITE, __NV_E4M3),
    __float_as_uint(f8(w & 255u, __NV_E4M3)), __float_as_uint(f8(w & 255u, __NV_E5M2)),
    __float_as_uint((float)__nv_fp8_e4m3(x)), __float_as_uint((float)__nv_fp8_e5m2(x)),
    __float_as_uint(__half2float(__half(__nv_fp8_e4m3(__float2half_rn(x))))),
    __float_as_uint(__low2float(__float22half2_rn(make_float2(x, 0.0f))))};
  for (int k = 0; k < ''' + str(len(CONV_ROWS)) + r'''; ++k) o[k * n + i] = r[k];
}'''

DPX = ["__vimax3_s32", "__vimin3_s32", "__viaddmax_s32", "__viaddmin_s32", "__vimax3_s32_relu", "__vimin3_s32_relu",
       "__viaddmax_s32_relu", "__viaddmin_s32_relu"]
DPXU = ["__vimax3_u32", "__vimin3_u32", "__viaddmax_u32", "__viaddmin_u32"]
DPX16 = ["__vimax3_s16x2", "__vimin3_s16x2", "__vimax3_u16x2", "__vimin3_u16x2", "__viaddmax_s16x2", "__viaddmin_u16x2",
         "__vimin3_s16x2_relu", "__viaddmax_s16x2_relu", "__viaddmin_s16x2_relu", "__vimax3_s16x2_relu", "__viaddmax_u16x2"]
INT_ROWS = DPX + DPXU + DPX16 + ["__vimax_s32_relu", "__vimin_s32_relu", "__vimax_s16x2_relu", "vibmax_s32", "vibmin_u32",
                                 "vibmax_s16x2", "fns", "bmsk_clamp", "bmsk_wrap", "szext_s", "szext_u"]
INT_SRC = r'''
extern "C" __global__ void int_ops(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* o, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], z = c[i];
  bool p, q;
  unsigned bm = 0, bw = 0, ss = 0, su = 0;
  asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(bm) : "r"(x % 40u), "r"(y % 37u));
  asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(bw) : "r"(x), "r"(y));
  asm("szext.clamp.s32 %0, %1, %2;" : "=r"(ss) : "r"(x), "r"(y % 40u));
  asm("szext.wrap.u32 %0, %1, %2;" : "=r"(su) : "r"(x), "r"(y));
  unsigned r[] = {''' + ", ".join(f"(unsigned){f}((int)x, (int)y, (int)z)" for f in DPX) + ", " \
    + ", ".join(f"{f}(x, y, z)" for f in DPXU + DPX16) + r''',
    (unsigned)__vimax_s32_relu((int)x, (int)y), (unsigned)__vimin_s32_relu((int)x, (int)y), __vimax_s16x2_relu(x, y),
    (unsigned)__vibmax_s32((int)x, (int)y, &p) * 2u + p, __vibmin_u32(x, y, &q) * 2u + q, 0u,
    __fns(x, y & 31u, (int)(z % 67u) - 33), bm, bw, ss, su};
  r[''' + str(len(DPX) + len(DPXU) + len(DPX16) + 5) + r'''] = __vibmax_s16x2(x, y, &p, &q) ^ ((unsigned)p << 7) ^ ((unsigned)q << 23);
  for (int k = 0; k < ''' + str(len(DPX) + len(DPXU) + len(DPX16) + 11) + r'''; ++k) o[k * n + i] = r[k];
}'''

# mma.sync on raw register bits (NaN payloads, infinities, subnormals): one warp per 32 threads, each
# lane's registers are consecutive input words; D goes out per lane.
MMA = {  # name: (PTX, a, b, c, d registers, a/b type, c/d type)
    "f16f32": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, 4, "r", "f"),
    "bf16": ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4, "r", "f"),
    "f16f16": ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, 2, "r", "r"),
    "f16k8": ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, 4, "r", "f"),
    "tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, 4, "r", "f"),
    "f64": ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, 2, "d", "d"),
    "s8sat": ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", 4, 2, 4, 4, "r", "r"),
    "u8s8": ("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32", 2, 1, 4, 4, "r", "r"),
}


def _mma_src(name):
    ptx, na, nb, nc, nd, tab, tc = MMA[name]
    ty = {"r": "unsigned", "f": "float", "d": "double"}
    wa, wc = (2 if tab == "d" else 1), (2 if tc == "d" else 1)   # 32-bit input words per register
    per = na * wa + nb * wa + nc * wc
    lines = [f'extern "C" __global__ void mma_{name}(const unsigned* w, unsigned* o) {{',
             f"  unsigned t = blockIdx.x * blockDim.x + threadIdx.x; const unsigned* q = w + t * {per};"]

    def val(t, k):
        if t == "d":
            return f"__longlong_as_double((long long)q[{k + 1}] << 32 | q[{k}])"
        return f"__uint_as_float(q[{k}])" if t == "f" else f"q[{k}]"
    k = 0
    for nm, cnt, t in (("a", na, tab), ("b", nb, tab), ("c", nc, tc)):
        vs = []
        for _ in range(cnt):
            vs.append(val(t, k))
            k += 2 if t == "d" else 1
        lines.append(f"  {ty[t]} {nm}[{cnt}] = {{{', '.join(vs)}}};")
    lines.append(f"  {ty[tc]} d[{nd}];")
    j, ops = 0, []
    for cnt in (nd, na, nb, nc):
        ops.append("{" + ", ".join(f"%{j + i}" for i in range(cnt)) + "}")
        j += cnt
    outs = ", ".join(f'"={tc}"(d[{i}])' for i in range(nd))
    ins = ", ".join([f'"{tab}"(a[{i}])' for i in range(na)] + [f'"{tab}"(b[{i}])' for i in range(nb)]
                    + [f'"{tc}"(c[{i}])' for i in range(nc)])
    lines.append(f'  asm volatile("{ptx} {", ".join(ops)};" : {outs} : {ins});')
    if tc == "d":
        lines.append(f"  for (int i = 0; i < {nd}; ++i) {{ o[t * {2 * nd} + 2 * i] = (unsigned)__double_as_longlong(d[i]); "
                     f"o[t * {2 * nd} + 2 * i + 1] = (unsigned)(__double_as_longlong(d[i]) >> 32); }}")
    elif tc == "f":
        lines.append(f"  for (int i = 0; i < {nd}; ++i) o[t * {nd} + i] = __float_as_uint(d[i]);")
    else:
        lines.append(f"  for (int i = 0; i < {nd}; ++i) o[t * {nd} + i] = d[i];")
    lines.append("}")
    return per, nd * (2 if tc == "d" else 1), "\n".join(lines)


def _mma_words(name, per, warps):
    """Inputs of the generator's kind: floats from its mix (as halves/bf16 pairs or f32/f64 bits),
    edge values and raw bits."""
    r = random.Random("mma_" + name)
    tab = MMA[name][5]
    n = per * 32 * warps
    fl = _floats(r, n)
    raw = np.array([r.getrandbits(32) for _ in range(n)], np.uint32)
    if name in ("f16f32", "f16f16", "f16k8"):
        h = _u16_halves(r, 2 * n)
        packed = h[0::2] | (h[1::2] << 16)
    elif name == "bf16":
        h = _u16_halves(r, 2 * n, bf=True)
        packed = h[0::2] | (h[1::2] << 16)
    elif tab == "d":
        d = np.array([r.choice([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 2.0 ** -1060, 1e308]) if r.random() < 0.2
                      else r.uniform(-4, 4) * 2.0 ** r.randint(-40, 40) for _ in range(n // 2)], np.float64)
        packed = d.view(np.uint32)
    else:
        packed = fl
    pick = np.array([r.random() for _ in range(n)])
    return np.where(pick < 0.2, raw, np.where(pick < 0.3, fl, packed)).astype(np.uint32)


def _std(name, src, kernel, rows, make):
    return {"name": name, "src": src, "kernel": kernel, "grid": (N // 128,), "block": (128,), "make": make,
            "rows": {3: rows}, "options": ARCH}


def _mk(kind, nrows):
    def make():
        r = random.Random(kind)
        if kind in ("half", "half2"):
            a, b, c = (_u16_halves(r, N) | (_u16_halves(r, N) << 16) for _ in range(3))
        elif kind == "bf16":
            a, b, c = (_u16_halves(r, N, bf=True) for _ in range(3))
        elif kind == "conv":
            a, b, c = _floats(r, N), _floats(r, N), _u16_halves(r, N) | (_u16_halves(r, N) << 16)
        else:
            a, b, c = _words(r, N), _words(r, N), _words(r, N)
        return [a, b, c, np.zeros(nrows * N, np.uint32), np.int32(N)]
    return make


CASES = [
    _std("half_ops", HALF_SRC, "half_ops", HALF_ROW_NAMES, _mk("half", NH)),
    _std("bf16_ops", BF_SRC, "bf16_ops", BF_ROW_NAMES, _mk("bf16", NB)),
    _std("half2_ops", HALF2_SRC, "half2_ops", HALF2_ROWS, _mk("half2", len(HALF2_ROWS))),
    _std("conversions", CONV_SRC, "conversions", CONV_ROWS, _mk("conv", len(CONV_ROWS))),
    _std("int_ops", INT_SRC, "int_ops", INT_ROWS, _mk("int", len(INT_ROWS))),
]
for _name in MMA:
    _per, _nout, _src = _mma_src(_name)

    def _make(_name=_name, _per=_per, _nout=_nout):
        return [_mma_words(_name, _per, 8), np.zeros(32 * 8 * _nout, np.uint32)]
    CASES.append({"name": f"mma_{_name}", "src": _src, "kernel": f"mma_{_name}", "grid": (8,), "block": (32,),
                  "make": _make, "rows": {1: ["d"]}, "options": ARCH})

OPEN: dict = {}
