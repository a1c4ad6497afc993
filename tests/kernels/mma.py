"""Warp matrix operations: wmma (load, mma, store) for every type and shape of CUDA's mma.h,
mma.sync through inline PTX (f16, bf16, tf32, f64, s8/u8, s4/u4 with f16/f32/s32/f64 accumulators),
ldmatrix, stmatrix (sm_90) and cvt.rna.tf32.f32.

Inputs are random numbers of several magnitudes and edge values (inf, NaN, denormals, products that
overflow, sums that cancel): the tensor cores' accumulation order and rounding decide the low bits,
so every case is exact. mma.sync kernels take plain matrices (A row-major M x K, B transposed N x K,
C row-major M x N, raw element bits packed in 32-bit words) and build each lane's registers with the
fragment layouts of the PTX ISA ("Matrix fragments for mma.m16n8k16" and its neighbours): a layout
mistake in the emulator shows as a wrong result here. Every case compiles with -arch=compute_90 and
is recorded through cudalab's GPU backend.
"""
import numpy as np

from . import Corpus, F32_EDGES, bits_f32

CASES = Corpus("mma")
SM90 = "compute_90"

BITS = dict(f16=16, bf16=16, tf32=32, f64=64, s8=8, u8=8, s4=4, u4=4, e4m3=8, e5m2=8, f32=32, s32=32)


def case(*a, **k):
    CASES.case(*a, arch=SM90, **k)


# ---------------------------------------------------------------- mma.sync through inline PTX

def mma_sync_source(name, shape, dtype, atype, ctype, btype=None, sat=False):
    """A kernel ``name(const A* a, const A* bt, const C* c, C* d)``: one warp per 32-thread block,
    block b multiplies tile b. Words: 32-bit (64-bit for f64) packs of raw element bits."""
    btype = btype or atype
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    eb = BITS[atype]
    epr = max(1, 32 // eb)                               # elements per register (f64: one 64-bit register)
    na, nb = m * k // (32 * epr), k * n // (32 * epr)
    nc = m * n // 32                                     # accumulator elements per lane
    half_acc = {"c": ctype == "f16", "d": dtype == "f16"}
    wt = "double" if eb == 64 else "unsigned"
    ct = {"f32": "float", "s32": "int", "f64": "double", "f16": "unsigned"}
    cons = {"f32": "f", "s32": "r", "f64": "d", "f16": "r"}
    lines = [f"__global__ void {name}(const {wt}* a, const {wt}* bt, const {ct[ctype]}* c, {ct[dtype]}* d) {{",
             "  int g = threadIdx.x >> 2, t = threadIdx.x & 3;",
             f"  a += blockIdx.x * {m * k // epr}; bt += blockIdx.x * {n * k // epr};",
             f"  c += blockIdx.x * {m * n // (2 if half_acc['c'] else 1)}; "
             f"d += blockIdx.x * {m * n // (2 if half_acc['d'] else 1)};",
             f"  {wt} ra[{na}], rb[{nb}];"]
    for j in range(na):
        row = "g + 8" if m == 16 and j & 1 else "g"
        col = f"t * {epr} + {(j >> 1 if m == 16 else j) * 4 * epr}"
        lines.append(f"  ra[{j}] = a[(({row}) * {k} + {col}) / {epr}];")
    for j in range(nb):
        lines.append(f"  rb[{j}] = bt[(g * {k} + t * {epr} + {j * 4 * epr}) / {epr}];")

    def acc_regs(which, typ):
        if half_acc[which]:
            return [f"(((g + {8 * j}) * {n} + 2 * t) / 2)" for j in range(nc // 2)]
        return [f"((g + {8 * (i >> 1)}) * {n} + 2 * t + {i & 1})" for i in range(nc)]
    cw, dw = acc_regs("c", ctype), acc_regs("d", dtype)
    lines.append(f"  {ct[ctype]} rc[{len(cw)}]; {ct[dtype]} rd[{len(dw)}];")
    lines += [f"  rc[{i}] = c[{w}];" for i, w in enumerate(cw)]
    ops, at = [], 0

    def group(count):
        nonlocal at
        s = "{" + ", ".join(f"%{at + i}" for i in range(count)) + "}"
        at += count
        return s
    dg, ag, bg, cg = group(len(dw)), group(na), group(nb), group(len(cw))
    mods = f"mma.sync.aligned.{shape}.row.col{'.satfinite' if sat else ''}.{dtype}.{atype}.{btype}.{ctype}"
    ab = "d" if eb == 64 else "r"
    ops = ", ".join([f'"={cons[dtype]}"(rd[{i}])' for i in range(len(dw))])
    ins = ", ".join([f'"{ab}"(ra[{i}])' for i in range(na)] + [f'"{ab}"(rb[{i}])' for i in range(nb)]
                    + [f'"{cons[ctype]}"(rc[{i}])' for i in range(len(cw))])
    lines.append(f'  asm volatile("{mods} {dg}, {ag}, {bg}, {cg};" : {ops} : {ins});')
    lines += [f"  d[{w}] = rd[{i}];" for i, w in enumerate(dw)]
    lines.append("}")
    return "\n".join(lines)


def words(x):
    """Raw element bits as the kernels take them: 32-bit words (f64 stays float64)."""
    x = np.ascontiguousarray(x)
    return x if x.dtype == np.float64 else x.view(np.uint32)


def f16_mix(r, n, spread=6):
    v = r.standard_normal(n) * np.exp2(r.integers(-spread, spread + 1, n))
    return v.astype(np.float16)


def bf16_from_f32(x):
    """float32 -> bf16 bits (round to nearest even), as uint16."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_mix(r, n, spread=20):
    return bf16_from_f32((r.standard_normal(n) * np.exp2(r.integers(-spread, spread + 1, n))).astype(np.float32))


def f32_wide(r, n, spread=20):
    return (r.standard_normal(n) * np.exp2(r.integers(-spread, spread + 1, n))).astype(np.float32)


def with_edges(x, r, edges, frac=0.05):
    """Put edge values (inf, NaN, denormals, huge) at random places of x."""
    x = x.copy()
    at = r.choice(x.size, max(1, int(x.size * frac)), replace=False)
    x.flat[at] = r.choice(edges, at.size)
    return x


F16_EDGES = np.array([np.inf, -np.inf, np.nan, 65504, -65504, 6e-8, -6e-8, 6.1e-5, 1e-7, 0.0, -0.0, 2048, 4097],
                     np.float16)
BF16_EDGES = bf16_from_f32(np.array([np.inf, -np.inf, np.nan, 3e38, -3e38, 1e-40, -1e-39, 1e-38, 0.0, -0.0],
                                    np.float32))


def operands(r, atype, ctype, shape, tiles, style="random"):
    """(A, B^T, C) for ``tiles`` tiles of an mma.sync shape, each as the kernels take them."""
    m, n, k = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())
    na, nb, nc = tiles * m * k, tiles * n * k, tiles * m * n
    edges = style == "edges"
    if atype == "f16":
        a, b = f16_mix(r, na), f16_mix(r, nb)
        if edges:
            a, b = with_edges(a, r, F16_EDGES), with_edges(b, r, F16_EDGES)
    elif atype == "bf16":
        a, b = bf16_mix(r, na), bf16_mix(r, nb)
        if edges:
            a, b = with_edges(a, r, BF16_EDGES), with_edges(b, r, BF16_EDGES)
    elif atype == "tf32":
        a, b = f32_wide(r, na), f32_wide(r, nb)       # full float32 bits: what the tensor core keeps of them shows
        if edges:
            a, b = with_edges(a, r, F32_EDGES), with_edges(b, r, F32_EDGES)
    elif atype == "f64":
        a = r.standard_normal(na) * np.exp2(r.integers(-60, 60, na))
        b = r.standard_normal(nb) * np.exp2(r.integers(-60, 60, nb))
        if edges:
            ed = np.array([np.inf, -np.inf, np.nan, 1e308, -1e308, 5e-324, 2.2e-308, 0.0, -0.0])
            a, b = with_edges(a, r, ed), with_edges(b, r, ed)
    elif atype in ("s8", "u8"):
        dt = np.int8 if atype == "s8" else np.uint8
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        a, b = (r.integers(lo, hi + 1, x).astype(dt) for x in (na, nb))
        if edges:
            a[: na // 2], b[: nb // 2] = hi if atype == "u8" else lo, hi if atype == "u8" else lo
    elif atype in ("s4", "u4"):
        a, b = (r.integers(0, 256, x // 2).astype(np.uint8) for x in (na, nb))
    if ctype == "f32":
        c = f32_wide(r, nc, 8)
        if edges:
            c = with_edges(c, r, F32_EDGES)
    elif ctype == "f16":
        c = f16_mix(r, nc)
    elif ctype == "f64":
        c = r.standard_normal(nc)
    else:
        c = r.integers(-2 ** 31, 2 ** 31, nc).astype(np.int32)
        if edges:
            c[: nc // 4] = 2 ** 31 - 5
    return words(a), words(b), c if ctype != "f16" else words(c)


def mma_case(shape, dtype, atype, ctype, tiles=4, style="random", sat=False, btype=None):
    name = (f"mma_sync_{shape}_{dtype}_{atype}{btype or ''}_{ctype}{'_sat' if sat else ''}"
            f"{'_edges' if style == 'edges' else ''}")
    src = mma_sync_source("mma_tile", shape, dtype, atype, ctype, btype, sat)
    m, n, _ = (int(x) for x in shape[1:].replace("n", " ").replace("k", " ").split())

    def make(r):
        a, bt, c = operands(r, atype, ctype, shape, tiles, style)
        dn = tiles * m * n // (2 if dtype == "f16" else 1)
        d = np.zeros(dn, {"f32": np.float32, "s32": np.int32, "f64": np.float64, "f16": np.uint32}[dtype])
        return [a, bt, c, d]
    case(name, src, "mma_tile", tiles, 32, make)


for shape, at in (("m16n8k16", "f16"), ("m16n8k8", "f16")):
    for dt, ct in (("f32", "f32"), ("f16", "f16")):      # mixed f16/f32 accumulators are m8n8k4's only
        mma_case(shape, dt, at, ct)
mma_case("m16n8k16", "f32", "f16", "f32", style="edges")
mma_case("m16n8k16", "f16", "f16", "f16", style="edges")
mma_case("m16n8k4", "f32", "tf32", "f32", style="edges")
mma_case("m16n8k16", "f32", "bf16", "f32")
mma_case("m16n8k16", "f32", "bf16", "f32", style="edges")
mma_case("m16n8k8", "f32", "bf16", "f32")
mma_case("m16n8k4", "f32", "tf32", "f32")
mma_case("m16n8k8", "f32", "tf32", "f32")
mma_case("m16n8k8", "f32", "tf32", "f32", style="edges")
mma_case("m8n8k4", "f64", "f64", "f64")
mma_case("m8n8k4", "f64", "f64", "f64", style="edges")
for shape in ("m16n8k4", "m16n8k8", "m16n8k16"):          # sm_90's double-precision shapes
    mma_case(shape, "f64", "f64", "f64")
for shape in ("m8n8k16", "m16n8k16", "m16n8k32"):
    mma_case(shape, "s32", "s8", "s32")
    mma_case(shape, "s32", "u8", "s32")
mma_case("m16n8k32", "s32", "s8", "s32", style="edges")
mma_case("m16n8k32", "s32", "s8", "s32", style="edges", sat=True)
mma_case("m16n8k32", "s32", "u8", "s32", btype="s8")
for shape in ("m8n8k32", "m16n8k32", "m16n8k64"):
    mma_case(shape, "s32", "s4", "s32")
mma_case("m16n8k64", "s32", "u4", "s32")


# ---------------------------------------------------------------- wmma (CUDA's mma.h)

WMMA = r'''
#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;

// C = A * B + C for an mdim x ndim result, one warp per M x N tile, stepping k by K. Each operand is
// row- or column-major with its own leading dimension (padding shows the stride is honoured).
template <typename FA, typename TA, typename TC, int M, int N, int K, typename LA, typename LB, bool AR, bool BR, bool CVT, bool INT>
__device__ void gemm(const TA* a, const TA* b, const TC* c, TC* d, int ndim, int kdim, int lda, int ldb, int ldc,
                     bool c_row, bool sat) {
  int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  int tiles_n = ndim / N;
  int tm = warp / tiles_n * M, tn = warp % tiles_n * N;
  wmma::fragment<wmma::matrix_a, M, N, K, FA, LA> fa;
  wmma::fragment<wmma::matrix_b, M, N, K, FA, LB> fb;
  wmma::fragment<wmma::accumulator, M, N, K, TC> fc;
  wmma::layout_t lc = c_row ? wmma::mem_row_major : wmma::mem_col_major;
  wmma::load_matrix_sync(fc, c + (c_row ? tm * ldc + tn : tn * ldc + tm), ldc, lc);
  for (int k = 0; k < kdim; k += K) {
    wmma::load_matrix_sync(fa, a + (AR ? tm * lda + k : k * lda + tm), lda);
    wmma::load_matrix_sync(fb, b + (BR ? k * ldb + tn : tn * ldb + k), ldb);
    if (CVT) {
      for (int i = 0; i < fa.num_elements; ++i) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
      for (int i = 0; i < fb.num_elements; ++i) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
    }
    if constexpr (INT) wmma::mma_sync(fc, fa, fb, fc, sat);
    else wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(d + (c_row ? tm * ldc + tn : tn * ldc + tm), fc, ldc, lc);
}
'''

WMMA_TYPES = {  # name: (fragment type, memory type, numpy maker)
    "f16": ("half", "half"), "bf16": ("__nv_bfloat16", "__nv_bfloat16"), "tf32": ("wmma::precision::tf32", "float"),
    "f64": ("double", "double"), "s8": ("signed char", "signed char"), "u8": ("unsigned char", "unsigned char")}
ACC = {"f32": "float", "f16": "half", "s32": "int", "f64": "double"}
NP_ACC = {"f32": np.float32, "f16": np.float16, "s32": np.int32, "f64": np.float64}


def wmma_elements(r, typ, n, style):
    if typ == "f16":
        x = f16_mix(r, n, 4)
        return with_edges(x, r, F16_EDGES, 0.02) if style == "edges" else x
    if typ == "bf16":
        x = bf16_mix(r, n, 12)
        return with_edges(x, r, BF16_EDGES, 0.02) if style == "edges" else x
    if typ == "tf32":
        x = f32_wide(r, n, 10)
        return with_edges(x, r, F32_EDGES, 0.02) if style == "edges" else x
    if typ == "f64":
        return r.standard_normal(n) * np.exp2(r.integers(-30, 30, n))
    dt = np.int8 if typ == "s8" else np.uint8
    return r.integers(np.iinfo(dt).min, np.iinfo(dt).max + 1, n).astype(dt)


def wmma_case(typ, acc, shape, la="row", lb="col", lc="row", dims=(32, 32, 64), pad=0, style="random",
              cvt=False, sat=False, name=None):
    """A wmma GEMM of mdim x ndim x kdim, operands in the given layouts with ``pad`` extra elements per
    leading dimension."""
    m, n, k = shape
    md, nd, kd = dims
    fa, ta = WMMA_TYPES[typ]
    name = name or (f"wmma_{typ}_{acc}_m{m}n{n}k{k}_{la}_{lb}_{lc}" + (f"_pad{pad}" if pad else "")
                    + ("_edges" if style == "edges" else "") + ("_sat" if sat else ""))
    lda = (kd if la == "row" else md) + pad
    ldb = (nd if lb == "row" else kd) + pad
    ldc = (nd if lc == "row" else md) + pad
    src = WMMA + (f"__global__ void tile_gemm(const {ta}* a, const {ta}* b, const {ACC[acc]}* c, {ACC[acc]}* d) {{\n"
                  f"  gemm<{fa}, {ta}, {ACC[acc]}, {m}, {n}, {k}, wmma::{la}_major, wmma::{lb}_major, "
                  f"{str(la == 'row').lower()}, {str(lb == 'row').lower()}, {str(cvt).lower()}, "
                  f"{str(acc == 's32').lower()}>"
                  f"(a, b, c, d, {nd}, {kd}, {lda}, {ldb}, {ldc}, {str(lc == 'row').lower()}, {str(sat).lower()});\n}}")
    warps = (md // m) * (nd // n)

    def make(r):
        a = wmma_elements(r, typ, lda * (md if la == "row" else kd), style)
        b = wmma_elements(r, typ, ldb * (kd if lb == "row" else nd), style)
        cn = ldc * (md if lc == "row" else nd)
        if acc == "s32":
            c = r.integers(-1000, 1000, cn).astype(np.int32)
            if sat:
                c[::3] = 2 ** 31 - 100
        elif acc == "f64":
            c = r.standard_normal(cn)
        else:
            c = (r.standard_normal(cn) * 4).astype(NP_ACC[acc])
        return [a, b, c, np.zeros_like(c)]
    case(name, src, "tile_gemm", max(1, warps // 4), 32 * min(4, warps), make)


for shape in ((16, 16, 16), (32, 8, 16), (8, 32, 16)):
    wmma_case("f16", "f32", shape)
    wmma_case("bf16", "f32", shape, la="col", lb="row")
    wmma_case("s8", "s32", shape)
wmma_case("f16", "f16", (16, 16, 16), la="col", lb="col", lc="col")
wmma_case("f16", "f32", (16, 16, 16), la="row", lb="row", lc="col", pad=8)
wmma_case("f16", "f32", (16, 16, 16), style="edges")
wmma_case("f16", "f16", (32, 8, 16), la="row", lb="row", style="edges")
wmma_case("bf16", "f32", (16, 16, 16), style="edges")
wmma_case("tf32", "f32", (16, 16, 8), cvt=True)
wmma_case("tf32", "f32", (16, 16, 8), la="col", lb="row", name="wmma_tf32_f32_unconverted_bits")
wmma_case("tf32", "f32", (16, 16, 8), cvt=True, style="edges")
wmma_case("f64", "f64", (8, 8, 4), dims=(16, 16, 32))
wmma_case("f64", "f64", (8, 8, 4), la="col", lb="row", lc="col", dims=(16, 16, 32), pad=2)
wmma_case("u8", "s32", (16, 16, 16), la="col", lb="row", pad=16)
wmma_case("s8", "s32", (16, 16, 16), sat=True, name="wmma_s8_s32_satfinite")


case("wmma_fragment_elements_per_lane", WMMA + r'''
// which lane holds which element: every fragment element of every lane written out in register order
template <typename F> __device__ void dump(const F& f, float* out) {
  for (int i = 0; i < f.num_elements; ++i) out[threadIdx.x * f.num_elements + i] = static_cast<float>(f.x[i]);
}
__global__ void lanes(const half* h, const float* f, const double* dd, const signed char* s, float* out) {
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_row;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::col_major> a_col;
  wmma::fragment<wmma::matrix_b, 32, 8, 16, half, wmma::row_major> b_row;
  wmma::fragment<wmma::matrix_b, 8, 32, 16, half, wmma::col_major> b_col;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> t_a;
  wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> d_b;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::col_major> s_a;
  wmma::load_matrix_sync(a_row, h, 16); dump(a_row, out);
  wmma::load_matrix_sync(a_col, h, 16); dump(a_col, out + 512);
  wmma::load_matrix_sync(b_row, h, 8); dump(b_row, out + 1024);
  wmma::load_matrix_sync(b_col, h, 16); dump(b_col, out + 1536);
  wmma::load_matrix_sync(acc, f, 16, wmma::mem_col_major); dump(acc, out + 2048);
  wmma::load_matrix_sync(t_a, f, 8); dump(t_a, out + 2304);
  wmma::load_matrix_sync(d_b, dd, 4); dump(d_b, out + 2432);
  wmma::load_matrix_sync(s_a, s, 16); dump(s_a, out + 2464);
}''', "lanes", 1, 32, lambda r: [np.arange(512).astype(np.float16), np.arange(256, dtype=np.float32),
                                 np.arange(32, dtype=np.float64), (np.arange(256) - 128).astype(np.int8),
                                 np.zeros(2464 + 256, np.float32)])

case("wmma_shared_memory_tiles_elementwise_epilogue", WMMA + r'''
// the cudaTensorCoreGemm pattern: operands staged in padded shared memory, alpha/beta applied to the
// accumulator's elements, the result stored to shared memory and copied out
__global__ void staged(const half* a, const half* b, const float* c, float* d, float alpha, float beta) {
  __shared__ half sa[16][16 + 8], sb[16][16 + 8];
  __shared__ float sc[16][16 + 4];
  int t = threadIdx.x;
  for (int i = t; i < 256; i += 32) { sa[i / 16][i % 16] = a[i]; sb[i / 16][i % 16] = b[i]; }
  __syncwarp();
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc, fc;
  wmma::fill_fragment(acc, 0.0f);
  wmma::load_matrix_sync(fa, &sa[0][0], 24);
  wmma::load_matrix_sync(fb, &sb[0][0], 24);
  wmma::mma_sync(acc, fa, fb, acc);
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  for (int i = 0; i < fc.num_elements; ++i) fc.x[i] = alpha * acc.x[i] + beta * fc.x[i];
  wmma::store_matrix_sync(&sc[0][0], fc, 20, wmma::mem_row_major);
  __syncwarp();
  for (int i = t; i < 256; i += 32) d[i] = sc[i / 16][i % 16];
}''', "staged", 1, 32, lambda r: [f16_mix(r, 256, 3), f16_mix(r, 256, 3), f32_wide(r, 256, 4), np.zeros(256, np.float32),
                                  np.float32(1.5), np.float32(-0.75)])


# ---------------------------------------------------------------- ldmatrix / stmatrix / cvt.rna.tf32

LDMATRIX = r'''
#define SMEM(p) static_cast<unsigned>(__cvta_generic_to_shared(p))
// 32 rows of 8 b16 values in shared memory; lane l's row address picks row perm[l]
__global__ void ld(const unsigned short* in, const int* perm, unsigned* out) {
  __shared__ __align__(16) unsigned short s[32 * 8];
  int l = threadIdx.x;
  for (int i = l; i < 256; i += 32) s[i] = in[i];
  __syncwarp();
  unsigned p = SMEM(&s[8 * perm[l]]);
  unsigned r[4];
  OPS
}'''

LD_OPS = {
    "x1": 'asm volatile("ldmatrix.sync.aligned.m8n8.x1{T}.shared.b16 {{%0}}, [%1];" : "=r"(r[0]) : "r"(p));\n'
          '  out[l] = r[0];',
    "x2": 'asm volatile("ldmatrix.sync.aligned.m8n8.x2{T}.shared.b16 {{%0, %1}}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(p));\n'
          '  out[l] = r[0]; out[32 + l] = r[1];',
    "x4": 'asm volatile("ldmatrix.sync.aligned.m8n8.x4{T}.shared.b16 {{%0, %1, %2, %3}}, [%4];" '
          ': "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(p));\n'
          '  for (int k = 0; k < 4; ++k) out[32 * k + l] = r[k];',
}
for num, ops in LD_OPS.items():
    for trans in ("", ".trans"):
        src = LDMATRIX.replace("OPS", ops.replace("{T}", trans).replace("{{", "{").replace("}}", "}"))
        case(f"ldmatrix_{num}{trans.replace('.', '_')}", src, "ld", 1, 32,
             lambda r: [r.integers(0, 2 ** 16, 256).astype(np.uint16), r.permutation(32).astype(np.int32),
                        np.zeros(128, np.uint32)])

case("stmatrix_x1_x2_x4_trans", r'''
#define SMEM(p) static_cast<unsigned>(__cvta_generic_to_shared(p))
__global__ void st(const unsigned* in, const int* perm, unsigned short* out) {
  __shared__ __align__(16) unsigned short s[6][32 * 8];
  int l = threadIdx.x;
  for (int i = l; i < 6 * 256; i += 32) s[i / 256][i % 256] = 0xdead;
  __syncwarp();
  const unsigned* v = in + 4 * l;
  unsigned row = 8 * perm[l];
  asm volatile("stmatrix.sync.aligned.m8n8.x1.shared.b16 [%0], {%1};" :: "r"(SMEM(&s[0][row])), "r"(v[0]));
  asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" :: "r"(SMEM(&s[1][row])), "r"(v[0]), "r"(v[1]));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(SMEM(&s[2][row])), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]));
  asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [%0], {%1};" :: "r"(SMEM(&s[3][row])), "r"(v[0]));
  asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" :: "r"(SMEM(&s[4][row])), "r"(v[0]), "r"(v[1]));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};"
               :: "r"(SMEM(&s[5][row])), "r"(v[0]), "r"(v[1]), "r"(v[2]), "r"(v[3]));
  __syncwarp();
  for (int i = l; i < 6 * 256; i += 32) out[i] = s[i / 256][i % 256];
}''', "st", 1, 32, lambda r: [r.integers(0, 2 ** 32, 128, dtype=np.uint64).astype(np.uint32),
                              r.permutation(32).astype(np.int32), np.zeros(6 * 256, np.uint16)])

case("ldmatrix_feeds_mma_m16n8k16", r'''
#define SMEM(p) static_cast<unsigned>(__cvta_generic_to_shared(p))
// the usual tensor-core tile: A (16x16, row-major) with ldmatrix.x4, B (16x8, stored k-major) with
// ldmatrix.x2.trans, one mma.sync.m16n8k16, C written back by each lane's fragment rows
__global__ void tile(const unsigned short* a, const unsigned short* b, float* c) {
  __shared__ __align__(16) unsigned short sa[16 * 16], sb[16 * 8];
  int l = threadIdx.x;
  for (int i = l; i < 256; i += 32) sa[i] = a[i];
  for (int i = l; i < 128; i += 32) sb[i] = b[i];
  __syncwarp();
  unsigned ra[4], rb[2];
  unsigned pa = SMEM(&sa[(l % 16) * 16 + (l / 16) * 8]);
  unsigned pb = SMEM(&sb[(l % 16) * 8]);
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(ra[0]), "=r"(ra[1]), "=r"(ra[2]), "=r"(ra[3]) : "r"(pa));
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];" : "=r"(rb[0]), "=r"(rb[1]) : "r"(pb));
  float d[4] = {0, 0, 0, 0};
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};" : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]));
  int g = l >> 2, t = l & 3;
  c[g * 8 + 2 * t] = d[0]; c[g * 8 + 2 * t + 1] = d[1];
  c[(g + 8) * 8 + 2 * t] = d[2]; c[(g + 8) * 8 + 2 * t + 1] = d[3];
}''', "tile", 1, 32, lambda r: [f16_mix(r, 256, 3).view(np.uint16), f16_mix(r, 128, 3).view(np.uint16),
                                np.zeros(128, np.float32)])

case("cvt_rna_tf32_f32", r'''
#include <mma.h>
__global__ void tf32(const float* in, unsigned* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(in[i]));
  out[i] = r;
  out[1024 + i] = __float_as_uint(nvcuda::wmma::__float_to_tf32(in[i]));
}''', "tf32", 4, 256, lambda r: [np.concatenate([F32_EDGES, bits_f32(0x3F801000, 0x3F803000, 0xBF801000, 0x7F7FF000,
                                                                     0x7F7FFFFF, 0x00001000, 0x00000FFF),
                                                   f32_wide(r, 1024 - len(F32_EDGES) - 7)]).astype(np.float32),
                                   np.zeros(2048, np.uint32)])
