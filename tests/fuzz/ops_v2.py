"""The generator's version-2 operations: the device features of the Programming Guide's later chapters.

These functions are methods of ``generator.Gen`` (bound there), kept apart so that version 1 stays
readable. What each adds, and why it stays well-defined:

* **tensor cores** (``s_wmma``, ``s_mma``): nvcuda::wmma load/mma/store on one tile per warp (f16,
  bf16, tf32, f64, s8/u8 with f16/f32/f64/s32 accumulators, every layout) in the warp's own slice of
  shared memory; ``mma.sync`` through inline PTX on registers. Only in warp-converged code and only
  when every warp has 32 lanes (a tensor-core operation needs the whole warp). The warp writes its
  tiles, ``__syncwarp()``, multiplies, stores, ``__syncwarp()``, reads, ``__syncwarp()``.
* **asynchronous copies** (``s_cpthread``, ``s_cupipe``: any code; ``s_cpblock``, ``s_cgcopy``,
  ``s_cubarcopy``: block-uniform code): ``__pipeline_memcpy_async`` (4/8/16 bytes, zero-fill),
  ``cp.async.ca/cg`` with a source size, commit/wait groups, ``cuda::memcpy_async`` with a
  thread-scope ``cuda::pipeline`` or a ``cuda::barrier``, ``cooperative_groups::memcpy_async``. A
  thread reads only what it copied (after its own wait) unless a block barrier follows the wait;
  only the bytes a copy wrote are read. Block-wide copies use block-uniform addresses.
* **barriers**: ``cuda::barrier`` (arrive_and_wait, split arrive/wait), ``mbarrier`` through inline
  PTX (token test_wait, parity test_wait / try_wait with a phase counter every thread keeps), named
  barriers (``bar.sync id, count`` per half of the warps; ``bar.arrive`` producers / ``bar.sync``
  consumers). Each is initialised once before the first statement and used only in block-uniform code.
* **warp**: ``elect.sync`` with the mask of the lanes that exist (or took a branch).
* **expressions**: DPX (``__vimax3_s32`` ...), fp8 e4m3/e5m2 conversions both ways (float, float2,
  half, double), half and bf16 arithmetic with the ``_rn`` forms (a plain ``add.f16`` after a
  ``mul.f16`` may be fused by ptxas, as ``add.f32`` may), half/bf16 comparisons and conversions,
  ``cvt.rna.tf32.f32``, ``__fns``, ``bmsk``, ``szext``.
"""
from __future__ import annotations

import re

from .ops_v3 import MMA_V3

PRELUDE_V2 = r'''#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <mma.h>
#include <cuda_pipeline.h>
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
namespace fzcg = cooperative_groups;
#define FZ_SMEM(p) static_cast<unsigned>(__cvta_generic_to_shared(p))
__device__ __forceinline__ unsigned fzl_elect(unsigned m) {
  unsigned r; asm volatile("{ .reg .pred p; elect.sync %0|p, %1; }" : "=r"(r) : "r"(m)); return r; }
__device__ __forceinline__ unsigned fzl_pack_h(float x, float y) {
  return (unsigned)__half_as_ushort(__float2half_rn(x)) | ((unsigned)__half_as_ushort(__float2half_rn(y)) << 16); }
__device__ __forceinline__ unsigned fzl_pack_bf(float x, float y) {
  return (unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(x)) | ((unsigned)__bfloat16_as_ushort(__float2bfloat16_rn(y)) << 16); }
__device__ __forceinline__ __half2 fzl_h2(unsigned u) { return __halves2half2(__ushort_as_half((unsigned short)u), __ushort_as_half((unsigned short)(u >> 16))); }
__device__ __forceinline__ unsigned fzl_u2(__half2 h) { return (unsigned)__half_as_ushort(__low2half(h)) | ((unsigned)__half_as_ushort(__high2half(h)) << 16); }
__device__ __forceinline__ unsigned fzl_bmsk_clamp(unsigned a, unsigned b) { unsigned r; asm("bmsk.clamp.b32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ unsigned fzl_bmsk_wrap(unsigned a, unsigned b) { unsigned r; asm("bmsk.wrap.b32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ unsigned fzl_szext_s(unsigned a, unsigned b) { unsigned r; asm("szext.clamp.s32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ unsigned fzl_szext_u(unsigned a, unsigned b) { unsigned r; asm("szext.wrap.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ unsigned fzl_vibmax_s32(unsigned a, unsigned b) { bool p; int r = __vibmax_s32((int)a, (int)b, &p); return (unsigned)r * 2u + p; }
__device__ __forceinline__ unsigned fzl_vibmin_u32(unsigned a, unsigned b) { bool p; unsigned r = __vibmin_u32(a, b, &p); return r * 2u + p; }
__device__ __forceinline__ unsigned fzl_vibmax_s16x2(unsigned a, unsigned b) { bool p, q; unsigned r = __vibmax_s16x2(a, b, &p, &q); return r ^ ((unsigned)p << 7) ^ ((unsigned)q << 23); }
__device__ __forceinline__ unsigned fzl_h2fp8(unsigned bits, bool sat, bool e5) {
  __half_raw h; h.x = (unsigned short)bits;
  return __nv_cvt_halfraw_to_fp8(h, sat ? __NV_SATFINITE : __NV_NOSAT, e5 ? __NV_E5M2 : __NV_E4M3); }
__device__ __forceinline__ float fzl_fp82f(unsigned code, bool e5) {
  return __half2float(__half(__nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)code, e5 ? __NV_E5M2 : __NV_E4M3))); }
__device__ __forceinline__ void fzl_mbar_init(void* bar, unsigned count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" :: "r"(FZ_SMEM(bar)), "r"(count) : "memory"); }
__device__ __forceinline__ unsigned long long fzl_mbar_arrive(void* bar) {
  unsigned long long st; asm volatile("mbarrier.arrive.shared.b64 %0, [%1];" : "=l"(st) : "r"(FZ_SMEM(bar)) : "memory"); return st; }
__device__ __forceinline__ bool fzl_mbar_test(void* bar, unsigned long long st) {
  unsigned ok; asm volatile("{ .reg .pred p; mbarrier.test_wait.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                            : "=r"(ok) : "r"(FZ_SMEM(bar)), "l"(st) : "memory"); return ok; }
__device__ __forceinline__ bool fzl_mbar_test_parity(void* bar, unsigned parity) {
  unsigned ok; asm volatile("{ .reg .pred p; mbarrier.test_wait.parity.shared.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                            : "=r"(ok) : "r"(FZ_SMEM(bar)), "r"(parity) : "memory"); return ok; }
__device__ __forceinline__ bool fzl_mbar_try_parity(void* bar, unsigned parity) {
  unsigned ok; asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                            : "=r"(ok) : "r"(FZ_SMEM(bar)), "r"(parity) : "memory"); return ok; }
__device__ __forceinline__ void fzl_cp_ca(void* dst, const void* src, int bytes) {
  if (bytes == 4) asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" :: "r"(FZ_SMEM(dst)), "l"(src) : "memory");
  else if (bytes == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" :: "r"(FZ_SMEM(dst)), "l"(src) : "memory");
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 16;" :: "r"(FZ_SMEM(dst)), "l"(src) : "memory"); }
__device__ __forceinline__ void fzl_cp_cg(void* dst, const void* src, unsigned src_size) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(FZ_SMEM(dst)), "l"(src), "r"(src_size) : "memory"); }
__device__ __forceinline__ void fzl_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
__device__ __forceinline__ void fzl_cp_wait0() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ void fzl_cp_wait1() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }
__device__ __forceinline__ void fzl_cp_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }
'''

DPX3_S32 = ["__vimax3_s32", "__vimin3_s32", "__viaddmax_s32", "__viaddmin_s32", "__vimax3_s32_relu",
            "__vimin3_s32_relu", "__viaddmax_s32_relu", "__viaddmin_s32_relu"]
DPX3_U32 = ["__vimax3_u32", "__vimin3_u32", "__viaddmax_u32", "__viaddmin_u32"]
DPX3_16 = ["__vimax3_s16x2", "__vimin3_s16x2", "__vimax3_u16x2", "__vimin3_u16x2", "__viaddmax_s16x2",
           "__viaddmin_u16x2", "__vimin3_s16x2_relu", "__viaddmax_s16x2_relu", "__viaddmin_s16x2_relu",
           "__vimax3_s16x2_relu", "__viaddmax_u16x2"]
DPX2 = ["__vimax_s32_relu", "__vimin_s32_relu", "__vimax_s16x2_relu", "fzl_vibmax_s32", "fzl_vibmin_u32",
        "fzl_vibmax_s16x2"]
SAT = ["__NV_SATFINITE", "__NV_NOSAT"]
FP8 = ["__NV_E4M3", "__NV_E5M2"]
HALF_BIN = ["__hadd_rn", "__hsub_rn", "__hmul_rn", "__hdiv", "__hmin", "__hmax", "__hmin_nan", "__hmax_nan",
            "__hadd_sat", "__hsub_sat", "__hmul_sat"]
HALF_UN = ["__habs", "__hneg", "hceil", "hfloor", "htrunc", "hrint"]
BF_BIN = ["__hadd_rn", "__hsub_rn", "__hmul_rn", "__hdiv", "__hmin", "__hmax", "__hmin_nan", "__hmax_nan"]
HALF2_BIN = ["__hadd2_rn", "__hsub2_rn", "__hmul2_rn", "__hmax2", "__hmin2", "__hmax2_nan", "__hmin2_nan",
             "__h2div", "__hadd2_sat"]


# ------------------------------------------------------------------ expressions

def _half(self, sc, d):
    r = self.r
    k = r.randrange(6)
    if k == 0:
        return f"__ushort_as_half((unsigned short)({self.uexpr(sc, d + 1)}))"
    if k == 1:
        return f"{r.choice(['__float2half_rz', '__float2half_rd', '__float2half_ru'])}({self.fexpr(sc, d + 1)})"
    if k == 2:
        self.feat("half_from_int")
        return r.choice([f"__int2half_rn((int)({self.uexpr(sc, d + 1)}))", f"__uint2half_rz({self.uexpr(sc, d + 1)})",
                         f"__short2half_rn((short)({self.uexpr(sc, d + 1)}))"])
    return f"__float2half_rn({self.fexpr(sc, d + 1)})"


def _bf16(self, sc, d):
    k = self.r.randrange(4)
    if k == 0:
        return f"__ushort_as_bfloat16((unsigned short)({self.uexpr(sc, d + 1)}))"
    if k == 1:
        return f"__float2bfloat16_rz({self.fexpr(sc, d + 1)})"
    return f"__float2bfloat16_rn({self.fexpr(sc, d + 1)})"


def _half_op(self, sc, d):
    """A half-precision result (an __half expression)."""
    r = self.r
    self.feat("half_math")
    k = r.random()
    if k < 0.55:
        return f"{r.choice(HALF_BIN)}({_half(self, sc, d)}, {_half(self, sc, d)})"
    if k < 0.75:
        return f"{r.choice(['__hfma', '__hfma_sat'])}({_half(self, sc, d)}, {_half(self, sc, d)}, {_half(self, sc, d)})"
    return f"{r.choice(HALF_UN)}({_half(self, sc, d)})"


def _bf16_op(self, sc, d):
    r = self.r
    self.feat("bf16_math")
    k = r.random()
    if k < 0.6:
        return f"{r.choice(BF_BIN)}({_bf16(self, sc, d)}, {_bf16(self, sc, d)})"
    if k < 0.8:
        return f"__hfma({_bf16(self, sc, d)}, {_bf16(self, sc, d)}, {_bf16(self, sc, d)})"
    return f"{r.choice(['__habs', '__hneg'])}({_bf16(self, sc, d)})"


def _half2_op(self, sc, d):
    r = self.r
    self.feat("half2_math")
    h2 = lambda: r.choice([f"fzl_h2({self.uexpr(sc, d + 1)})",  # noqa: E731
                           f"__floats2half2_rn({self.fexpr(sc, d + 1)}, {self.fexpr(sc, d + 1)})"])
    if self.p(0.3):
        return f"{r.choice(['__hfma2', '__hfma2_sat', '__hfma2_relu'])}({h2()}, {h2()}, {h2()})"
    return f"{r.choice(HALF2_BIN)}({h2()}, {h2()})"


CONSTANT = r"\(?(0x[0-9a-f]+|[0-9]+)u\)?"      # an integer literal, as uconst writes them


# what a compile-time constant expression never mentions: the thread's values, memory, its indices
RUNTIME = re.compile(r"\b(u[0-3]|f[0-3]|tid|lane|warp|gid|nt|threadIdx|blockIdx|p0|p1)\b|\b(ia|fa)\[")


def _runtime(self, sc, d):
    """An integer expression that is not a compile-time constant (a few tries, then a variable): version
    4's first operand of ``__vibmax_s16x2``, since ptxas swaps its predicates for a constant expression as
    for a literal (cause 17; seed 1447 of version 3: ``__bfloat16_as_ushort(__hneg(19))``)."""
    for _ in range(4):
        e = self.uexpr(sc, d + 1)
        if RUNTIME.search(e):
            return e
    return sc["u"][0]


def _avoiding(self, sc, d, pattern):
    """An integer expression that does not match ``pattern`` (a few tries, then a variable)."""
    import re
    for _ in range(4):
        e = self.uexpr(sc, d + 1)
        if not re.fullmatch(pattern, e):
            return e
    return sc["u"][0]


def uexpr_v2(self, sc, d, c):
    """Version 2's integer expressions (``c`` in 0..7)."""
    r = self.r
    a = lambda: self.uexpr(sc, d + 1)  # noqa: E731
    f = lambda: self.fexpr(sc, d + 1)  # noqa: E731
    if c in (0, 1):
        self.feat("dpx")
        k = r.random()
        if self.v >= 3:      # what ptxas of CUDA 13.0 miscompiles (causes 17, 18) is left out
            a = lambda: _avoiding(self, sc, d, r"\(0u - .*")  # noqa: E731
        if k < 0.35:
            return f"(unsigned){r.choice(DPX3_S32)}((int)({a()}), (int)({a()}), (int)({a()}))"
        if k < 0.5:
            return f"{r.choice(DPX3_U32)}({a()}, {a()}, {a()})"
        if k < 0.8:
            return f"{r.choice(DPX3_16)}({a()}, {a()}, {a()})"
        fn = r.choice(DPX2)
        if fn == "__vimax_s32_relu" or fn == "__vimin_s32_relu":
            return f"(unsigned){fn}((int)({a()}), (int)({a()}))"
        if fn == "fzl_vibmax_s16x2" and self.v >= 4:
            return f"{fn}({_runtime(self, sc, d)}, {a()})"
        if fn == "fzl_vibmax_s16x2" and self.v >= 3:
            return f"{fn}({_avoiding(self, sc, d, CONSTANT)}, {a()})"
        return f"{fn}({a()}, {a()})"
    if c == 2:
        self.feat("fp8_convert")
        k = r.randrange(5)
        if k == 0:
            return f"(unsigned)__nv_cvt_float_to_fp8({f()}, {r.choice(SAT)}, {r.choice(FP8)})"
        if k == 1:
            return f"(unsigned)__nv_cvt_float2_to_fp8x2(make_float2({f()}, {f()}), {r.choice(SAT)}, {r.choice(FP8)})"
        if k == 2:
            return f"fzl_h2fp8({a()}, {r.choice(['true', 'false'])}, {r.choice(['true', 'false'])})"
        if k == 3:
            return f"(unsigned)__nv_cvt_double_to_fp8((double)({f()}) * {r.choice(['1.0', '0.001', '3e-5', '1e5'])}, {r.choice(SAT)}, {r.choice(FP8)})"
        return f"(unsigned)__nv_cvt_halfraw2_to_fp8x2(__half2_raw(fzl_h2({a()})), {r.choice(SAT)}, {r.choice(FP8)})"
    if c == 3:
        return f"(unsigned)__half_as_ushort({_half_op(self, sc, d)})"
    if c == 4:
        k = r.randrange(4)
        if k == 0:
            self.feat("half_compare")
            fn = r.choice(["__heq", "__hne", "__hlt", "__hle", "__hgt", "__hge", "__hequ", "__hltu", "__hgtu", "__hisnan"])
            if fn == "__hisnan":
                return f"(unsigned){fn}({_half(self, sc, d)})"
            return f"(unsigned){fn}({_half(self, sc, d)}, {_half(self, sc, d)})"
        if k == 1:
            self.feat("half_to_int")
            fn = r.choice(["__half2int_rn", "__half2int_rz", "__half2int_rd", "__half2int_ru", "__half2uint_rz",
                           "__half2short_rn", "__half2ll_rz"])
            return f"(unsigned){fn}({_half(self, sc, d)})"
        if k == 2:
            self.feat("bf16_compare")
            fn = r.choice(["__hlt", "__hequ", "__hgt", "__hne"])
            return f"(unsigned){fn}({_bf16(self, sc, d)}, {_bf16(self, sc, d)})"
        self.feat("bf16_to_int")
        return f"(unsigned){r.choice(['__bfloat162int_rn', '__bfloat162int_rz'])}({_bf16(self, sc, d)})"
    if c == 5:
        return f"(unsigned)__bfloat16_as_ushort({_bf16_op(self, sc, d)})"
    if c == 6:
        return f"fzl_u2({_half2_op(self, sc, d)})"
    self.feat("bitfield_sm70")
    k = r.randrange(5)
    if k == 0:
        return f"__fns({a()}, ({a()}) & 31u, (int)(({a()}) % 67u) - 33)"
    if k == 1:
        return f"fzl_bmsk_clamp(({a()}) % 40u, ({a()}) % 37u)"
    if k == 2:
        return f"fzl_bmsk_wrap({a()}, {a()})"
    if k == 3:
        return f"fzl_szext_s({a()}, ({a()}) % 40u)"
    return f"fzl_szext_u({a()}, {a()})"


def fexpr_v2(self, sc, d, c):
    """Version 2's float expressions (``c`` in 0..5)."""
    r = self.r
    if c == 0:
        return f"__half2float({_half_op(self, sc, d)})"
    if c == 1:
        return f"__bfloat162float({_bf16_op(self, sc, d)})"
    if c == 2:
        self.feat("fp8_convert")
        k = r.randrange(3)
        if k == 0:
            return f"(float){r.choice(['__nv_fp8_e4m3', '__nv_fp8_e5m2'])}({self.fexpr(sc, d + 1)})"
        if k == 1:
            return f"fzl_fp82f(({self.uexpr(sc, d + 1)}) & 255u, {r.choice(['true', 'false'])})"
        return f"__half2float(__half({r.choice(['__nv_fp8_e4m3', '__nv_fp8_e5m2'])}(__float2half_rn({self.fexpr(sc, d + 1)}))))"
    if c == 3:
        return f"{r.choice(['__low2float', '__high2float'])}({_half2_op(self, sc, d)})"
    if c == 4:
        self.feat("tf32_convert")
        return f"nvcuda::wmma::__float_to_tf32({self.fexpr(sc, d + 1)})"
    self.feat("half_convert")
    return r.choice([f"__half2float({_half(self, sc, d)})", f"__bfloat162float({_bf16(self, sc, d)})",
                     f"__low2float(__float22half2_rn(make_float2({self.fexpr(sc, d + 1)}, 0.0f)))"])


# ------------------------------------------------------------------ declarations

def v2_declarations(self):
    """Shared objects and their initialisation, for the version-2 statements the kernel uses."""
    n, out = self.name, []
    if "wmma" in self.uses:
        out.append(f"__shared__ __align__(128) unsigned char {n}_wm[8 * 3072];   // per warp: A, B, C tiles")
    if "cp" in self.uses:
        out.append(f"__shared__ __align__(16) unsigned {n}_cp[256 * 8];        // per thread: two 16-byte slots")
    if "cpb" in self.uses:
        out.append(f"__shared__ __align__(16) unsigned {n}_cpb[256];")
    if "lm" in self.uses:
        out.append(f"__shared__ __align__(16) unsigned short {n}_lm[8 * 512];   // per warp: ldmatrix, stmatrix rows")
    if "mb3" in self.uses:
        out.append(f"__shared__ unsigned long long {n}_mb3;")
    init = []
    if "bar" in self.uses:
        out.append(f"__shared__ cuda::barrier<cuda::thread_scope_block> {n}_bar;")
        init.append(f"init(&{n}_bar, nt);")
    if "mbar" in self.uses:
        out += [f"__shared__ unsigned long long {n}_mb;", f"unsigned {n}_ph = 0;   // phases of {n}_mb completed"]
        init.append(f"fzl_mbar_init(&{n}_mb, nt);")
    if init:
        out += [f"if (tid == 0u) {{ {' '.join(init)} }}", "__syncthreads();"]
    return out


# ------------------------------------------------------------------ statements: any code

def s_cpthread(self, sc, depth, ctx):
    """A thread copies into its own slots and reads them after its own wait (no barrier needed)."""
    r = self.r
    self.uses.add("cp")
    n = self.name
    dst = f"&{n}_cp[tid * 8u + {{}}]"
    src = r.choice(["ia", "fa"])
    out, reads = [], []
    for slot in range(r.randint(1, 2)):
        k = r.randrange(4)
        d = dst.format(4 * slot)
        if k == 0:
            self.feat("pipeline_memcpy_async")
            size = r.choice([4, 8, 16])
            zf = r.choice([0, 0, size // 2, size - 4]) if size > 4 else 0
            idx = f"(({self.uexpr(sc)}) & {256 - size // 4}u)"
            out.append(f"__pipeline_memcpy_async({d}, &{src}[{idx}], {size}, {zf});")
            out.append("__pipeline_commit();")
            words = size // 4
        elif k == 1:
            self.feat("cp_async_ca")
            size = r.choice([4, 8, 16])
            out += [f"fzl_cp_ca({d}, &{src}[({self.uexpr(sc)}) & {256 - size // 4}u], {size});", "fzl_cp_commit();"]
            words = size // 4
        else:
            self.feat("cp_async_cg_zfill")
            out += [f"fzl_cp_cg({d}, &{src}[({self.uexpr(sc)}) & 252u], ({self.uexpr(sc)}) % 17u);", "fzl_cp_commit();"]
            words = 4
        reads.append((slot, words))
    if len(reads) == 2 and self.p(0.5):
        self.feat("cp_async_wait_prior")
        s0, w0 = reads[0]
        out += ["__pipeline_wait_prior(1);" if self.p(0.5) else "fzl_cp_wait1();",
                f"{r.choice(sc['uw'])} ^= {n}_cp[tid * 8u + {4 * s0}u + ({self.uexpr(sc)}) % {w0}u];"]
        reads = reads[1:]
    out.append(r.choice(["__pipeline_wait_prior(0);", "fzl_cp_wait0();", "fzl_cp_wait_all();"]))
    for s, w in reads:
        v = f"{n}_cp[tid * 8u + {4 * s}u + ({self.uexpr(sc)}) % {w}u]"
        if self.p(0.4):
            out.append(f"{r.choice(sc['fw'])} += __uint_as_float({v});")
        else:
            out.append(f"{r.choice(sc['uw'])} += {v};")
    return ["{"] + self.block(out) + ["}"]


def s_cupipe(self, sc, depth, ctx):
    """cuda::memcpy_async through a thread-scope cuda::pipeline, two stages."""
    r = self.r
    self.feat("cuda_pipeline")
    self.uses.add("cp")
    n, p = self.name, self.fresh("pipe")
    out = [f"cuda::pipeline<cuda::thread_scope_thread> {p} = cuda::make_pipeline();"]
    stages = r.randint(1, 2)
    for s in range(stages):
        out += [f"{p}.producer_acquire();",
                f"cuda::memcpy_async(&{n}_cp[tid * 8u + {4 * s}u], &ia[({self.uexpr(sc)}) & 255u], sizeof(unsigned), {p});",
                f"{p}.producer_commit();"]
    for s in range(stages):
        out += [f"{p}.consumer_wait();", f"{r.choice(sc['uw'])} ^= {n}_cp[tid * 8u + {4 * s}u];", f"{p}.consumer_release();"]
    return ["{"] + self.block(out) + ["}"]


def _elect(self, sc, mask):
    self.feat("elect_sync")
    dst = self.r.choice(sc["uw"])
    if self.p(0.5):
        return [f"{dst} += fzl_elect({mask}) * {self.r.randint(1, 99)}u;"]
    return [f"if (lane == fzl_elect({mask})) {dst} ^= {self.uexpr(sc)};"]


def s_elect(self, sc, depth, ctx):
    return _elect(self, sc, "FM")


# ------------------------------------------------------------------ statements: warp-converged, full warps

WMMA = {  # kind: (fragment element, memory element, accumulator, shapes)
    "f16f32": ("half", "half", "float", [(16, 16, 16), (32, 8, 16), (8, 32, 16)]),
    "f16f16": ("half", "half", "half", [(16, 16, 16), (32, 8, 16), (8, 32, 16)]),
    "bf16": ("__nv_bfloat16", "__nv_bfloat16", "float", [(16, 16, 16), (32, 8, 16), (8, 32, 16)]),
    "tf32": ("nvcuda::wmma::precision::tf32", "float", "float", [(16, 16, 8)]),
    "f64": ("double", "double", "double", [(8, 8, 4)]),
    "s8": ("signed char", "signed char", "int", [(16, 16, 16), (32, 8, 16), (8, 32, 16)]),
    "u8": ("unsigned char", "unsigned char", "int", [(16, 16, 16), (32, 8, 16), (8, 32, 16)]),
}


def _elem(self, sc, mem):
    """One tile element of memory type ``mem``, from this lane's values and the loop index."""
    r = self.r
    if mem == "half":
        return (f"__ushort_as_half((unsigned short)({self.uexpr(sc)}))" if self.p(0.2)
                else f"__float2half_rn({self.fexpr(sc)})")
    if mem == "__nv_bfloat16":
        return (f"__ushort_as_bfloat16((unsigned short)({self.uexpr(sc)}))" if self.p(0.2)
                else f"__float2bfloat16_rn({self.fexpr(sc)})")
    if mem == "float":
        return f"__uint_as_float({self.uexpr(sc)})" if self.p(0.15) else f"({self.fexpr(sc)})"
    if mem == "double":
        return r.choice([f"(double)({self.fexpr(sc)})", f"(double)({self.fexpr(sc)}) * (double)({self.fexpr(sc)})",
                         f"__longlong_as_double((long long)({self.uexpr(sc)}) << 32 | {self.uexpr(sc)})"])
    if mem == "int":
        return f"(int)({self.uexpr(sc)})"
    return f"({mem})({self.uexpr(sc)})"


def s_wmma(self, sc, depth, ctx):
    """One warp-wide wmma: the warp fills its tiles in shared memory, loads, multiplies, stores, reads."""
    r = self.r
    self.uses.add("wmma")
    kind = r.choice(list(WMMA))
    frag, mem, acc, shapes = WMMA[kind]
    m, nn, k = r.choice(shapes)
    self.feat("wmma")
    self.feat("wmma_" + kind)
    la, lb, lc = (r.choice(["row", "col"]) for _ in range(3))
    lda = k if la == "row" else m
    ldb = nn if lb == "row" else k
    ldc = nn if lc == "row" else m
    base = f"{self.name}_wm + warp * 3072u"
    i = self.fresh("i")
    inner = dict(sc, u=sc["u"] + [i])
    A, B, C = self.fresh("A"), self.fresh("B"), self.fresh("C")
    fa, fb, fc = self.fresh("fa"), self.fresh("fb"), self.fresh("fc")
    W = "nvcuda::wmma"
    out = [f"{mem}* {A} = ({mem}*)({base});", f"{mem}* {B} = ({mem}*)({base} + 1024u);",
           f"{acc}* {C} = ({acc}*)({base} + 2048u);",
           f"for (unsigned {i} = lane; {i} < {m * k}u; {i} += 32u) {A}[{i}] = {_elem(self, inner, mem)};",
           f"for (unsigned {i} = lane; {i} < {k * nn}u; {i} += 32u) {B}[{i}] = {_elem(self, inner, mem)};",
           f"for (unsigned {i} = lane; {i} < {m * nn}u; {i} += 32u) {C}[{i}] = "
           + (f"__float2half_rn({self.fexpr(inner)})" if acc == "half" else _elem(self, inner, acc))
           + ";",
           "__syncwarp();",
           f"{W}::fragment<{W}::matrix_a, {m}, {nn}, {k}, {frag}, {W}::{la}_major> {fa};",
           f"{W}::fragment<{W}::matrix_b, {m}, {nn}, {k}, {frag}, {W}::{lb}_major> {fb};",
           f"{W}::fragment<{W}::accumulator, {m}, {nn}, {k}, {acc}> {fc};",
           f"{W}::load_matrix_sync({fa}, {A}, {lda});", f"{W}::load_matrix_sync({fb}, {B}, {ldb});"]
    if self.p(0.2):
        self.feat("wmma_fill")
        val = "0" if acc == "int" else "__float2half_rn(0.5f)" if acc == "half" else "1.0"
        out.append(f"{W}::fill_fragment({fc}, {val});")
    else:
        out.append(f"{W}::load_matrix_sync({fc}, {C}, {ldc}, {W}::mem_{lc}_major);")
    if kind == "tf32" and self.p(0.6):
        self.feat("tf32_convert")
        out += [f"for (int e = 0; e < {fa}.num_elements; ++e) {fa}.x[e] = {W}::__float_to_tf32({fa}.x[e]);",
                f"for (int e = 0; e < {fb}.num_elements; ++e) {fb}.x[e] = {W}::__float_to_tf32({fb}.x[e]);"]
    sat = ", true" if kind in ("s8", "u8") and self.p(0.3) else ""
    out.append(f"{W}::mma_sync({fc}, {fa}, {fb}, {fc}{sat});")
    if self.p(0.3):   # a fragment element: which lane holds which one is the same on both (PTX fixes it)
        e = r.randrange(2)
        conv = {"float": f"{fc}.x[{e}]", "half": f"__half2float({fc}.x[{e}])", "double": f"(float){fc}.x[{e}]",
                "int": f"__int_as_float({fc}.x[{e}])"}[acc]
        out.append(f"{r.choice(sc['fw'])} += {conv};")
    out += [f"{W}::store_matrix_sync({C}, {fc}, {ldc}, {W}::mem_{lc}_major);", "__syncwarp();"]
    for _ in range(r.randint(1, 2)):
        idx = f"{C}[({self.uexpr(sc)}) % {m * nn}u]"
        if acc == "int":
            out.append(f"{r.choice(sc['uw'])} ^= (unsigned){idx};")
        elif acc == "double":
            out.append(r.choice([f"{r.choice(sc['fw'])} += (float){idx};",
                                 f"{r.choice(sc['uw'])} ^= (unsigned)(__double_as_longlong({idx}) >> {r.randint(0, 32)});"]))
        elif acc == "half":
            out.append(f"{r.choice(sc['uw'])} += __half_as_ushort({idx});")
        else:
            out.append(r.choice([f"{r.choice(sc['fw'])} += {idx};", f"{r.choice(sc['uw'])} ^= __float_as_uint({idx});"]))
    out.append("__syncwarp();")
    return ["{"] + self.block(out) + ["}"]


MMA = {  # kind: (PTX, a regs, b regs, c regs, d regs, register type of a/b, of c, of d)
    "f16f32": ("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 4, 2, 4, 4, "h", "f", "f"),
    "bf16": ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 4, 2, 4, 4, "bf", "f", "f"),
    "f16f16": ("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16", 4, 2, 2, 2, "h", "h", "h"),
    "f16k8": ("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32", 2, 1, 4, 4, "h", "f", "f"),
    "tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 4, 2, 4, 4, "tf", "f", "f"),
    "f64": ("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64", 1, 1, 2, 2, "d", "d", "d"),
    "s8": ("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", 4, 2, 4, 4, "i", "i", "i"),
    "s8sat": ("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32", 4, 2, 4, 4, "i", "i", "i"),
    "u8s8": ("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32", 2, 1, 4, 4, "i", "i", "i"),
}


def _reg(self, sc, typ):
    r = self.r
    if typ == "h":
        return f"({self.uexpr(sc)})" if self.p(0.2) else f"fzl_pack_h({self.fexpr(sc)}, {self.fexpr(sc)})"
    if typ == "bf":
        return f"({self.uexpr(sc)})" if self.p(0.2) else f"fzl_pack_bf({self.fexpr(sc)}, {self.fexpr(sc)})"
    if typ == "tf":
        return r.choice([f"({self.uexpr(sc)})", f"__float_as_uint({self.fexpr(sc)})",
                         f"__float_as_uint(nvcuda::wmma::__float_to_tf32({self.fexpr(sc)}))"])
    if typ == "f":
        return f"({self.fexpr(sc)})"
    if typ == "d":
        return r.choice([f"(double)({self.fexpr(sc)})", f"__longlong_as_double((long long)({self.uexpr(sc)}) << 32 | {self.uexpr(sc)})"])
    return f"({self.uexpr(sc)})"


def s_mma(self, sc, depth, ctx):
    """mma.sync through inline PTX on registers this lane computes."""
    r = self.r
    kinds = MMA if self.v < 3 else {**MMA, **MMA_V3}
    kind = r.choice(list(kinds))
    ptx, na, nb, nc, nd, tab, tc, td = kinds[kind]
    self.feat("mma_sync")
    self.feat("mma_" + kind)
    cty = {"h": "unsigned", "f": "float", "d": "double", "i": "unsigned"}
    con = {"h": "r", "f": "f", "d": "d", "i": "r"}
    abty = "double" if tab == "d" else "unsigned"
    abc = "d" if tab == "d" else "r"
    a, b, c, dd = (self.fresh(x) for x in "abcd")
    out = [f"{abty} {a}[{na}] = {{{', '.join(_reg(self, sc, tab) for _ in range(na))}}};",
           f"{abty} {b}[{nb}] = {{{', '.join(_reg(self, sc, tab) for _ in range(nb))}}};",
           f"{cty[tc]} {c}[{nc}] = {{{', '.join(_reg(self, sc, tc) for _ in range(nc))}}};",
           f"{cty[td]} {dd}[{nd}];"]
    k = 0
    ops = []
    for cnt in (nd, na, nb, nc):
        ops.append("{" + ", ".join(f"%{k + j}" for j in range(cnt)) + "}")
        k += cnt
    outs = ", ".join(f'"={con[td]}"({dd}[{j}])' for j in range(nd))
    ins = ", ".join([f'"{abc}"({a}[{j}])' for j in range(na)] + [f'"{abc}"({b}[{j}])' for j in range(nb)]
                    + [f'"{con[tc]}"({c}[{j}])' for j in range(nc)])
    out.append(f'asm volatile("{ptx} {", ".join(ops)};" : {outs} : {ins});')
    for _ in range(r.randint(1, 2)):
        j = r.randrange(nd)
        if td == "f":
            out.append(r.choice([f"{r.choice(sc['fw'])} += {dd}[{j}];", f"{r.choice(sc['uw'])} ^= __float_as_uint({dd}[{j}]);"]))
        elif td == "d":
            out.append(r.choice([f"{r.choice(sc['fw'])} += (float){dd}[{j}];",
                                 f"{r.choice(sc['uw'])} ^= (unsigned)(__double_as_longlong({dd}[{j}]) >> {r.randint(0, 32)});"]))
        else:
            out.append(f"{r.choice(sc['uw'])} += {dd}[{j}];")
    return ["{"] + self.block(out) + ["}"]


# ------------------------------------------------------------------ statements: block-uniform

def s_cpblock(self, sc, depth, ctx):
    """Every thread copies into its slot, waits, then a block barrier; threads read others' slots."""
    r = self.r
    self.uses.add("cp")
    n = self.name
    size = r.choice([4, 8, 16])
    src = r.choice(["ia", "fa"])
    d = f"&{n}_cp[tid * 8u]"
    if self.p(0.5):
        self.feat("pipeline_memcpy_async")
        zf = r.choice([0, size // 2]) if size > 4 else 0
        cp = [f"__pipeline_memcpy_async({d}, &{src}[({self.uexpr(sc)}) & {256 - size // 4}u], {size}, {zf});",
              "__pipeline_commit();", "__pipeline_wait_prior(0);"]
    else:
        self.feat("cp_async_ca")
        cp = [f"fzl_cp_ca({d}, &{src}[({self.uexpr(sc)}) & {256 - size // 4}u], {size});", "fzl_cp_commit();",
              "fzl_cp_wait0();"]
    self.feat("cp_async_block")
    return cp + ["__syncthreads();",
                 f"{r.choice(sc['uw'])} += {n}_cp[(({self.uexpr(sc)}) % nt) * 8u + ({self.uexpr(sc)}) % {size // 4}u];",
                 "__syncthreads();"]


def _uniform_offset(self, words):
    """A word offset into ia/fa that every thread of the block computes alike."""
    r = self.r
    mask = f"((p0 >> {r.randint(0, 24)}) & {255 - words}u)" if words < 256 else "(p0 & 0u)"
    return r.choice([mask, f"((blockIdx.x * {r.randint(1, 97)}u + p0) % {257 - words}u)",
                     f"{r.randint(0, 256 - words)}u"])


def s_cgcopy(self, sc, depth, ctx):
    """cooperative_groups::memcpy_async of a block-uniform range, then cg::wait."""
    r = self.r
    self.feat("cg_memcpy_async")
    self.uses.add("cpb")
    n = self.name
    two = self.p(0.4)
    words = r.choice([1, 7, 64, 128] if two else [1, 7, 64, 128, 255])
    src = r.choice(["ia", "(const unsigned*)fa"])
    b = self.fresh("blk")
    out = [f"auto {b} = fzcg::this_thread_block();",
           f"fzcg::memcpy_async({b}, {n}_cpb, {src} + {_uniform_offset(self, words)}, sizeof(unsigned) * {words}u);"]
    if two:
        words2 = r.choice([1, 16, 100])
        out += [f"fzcg::memcpy_async({b}, {n}_cpb + {words}u, ia + {_uniform_offset(self, words2)}, sizeof(unsigned) * {words2}u);",
                f"fzcg::wait_prior<1>({b});",
                f"{r.choice(sc['uw'])} ^= {n}_cpb[({self.uexpr(sc)}) % {words}u];"]
        words += words2
    out += [f"fzcg::wait({b});", f"{r.choice(sc['uw'])} += {n}_cpb[({self.uexpr(sc)}) % {words}u];", "__syncthreads();"]
    return ["{"] + self.block(out) + ["}"]


def s_cubar(self, sc, depth, ctx):
    """A shared-memory phase separated by cuda::barrier instead of __syncthreads."""
    r = self.r
    self.feat("cuda_barrier")
    self.uses.add("bar")
    n = self.name
    isf = self.p(0.4)
    arr = f"{n}_shf" if isf else f"{n}_sh"
    val = self.fexpr(sc) if isf else self.uexpr(sc)
    dst = r.choice(sc["fw"] if isf else sc["uw"])
    read = f"{dst} += {arr}[({self.uexpr(sc)}) % nt];"
    if self.p(0.5):
        self.feat("cuda_barrier_split")
        t = self.fresh("tok")
        return ["{", f"    {arr}[tid] = {val};", f"    auto {t} = {n}_bar.arrive();",
                f"    {r.choice(sc['uw'])} += {self.uexpr(sc)};",
                f"    {n}_bar.wait(std::move({t}));", f"    {read}", f"    {n}_bar.arrive_and_wait();", "}"]
    return [f"{arr}[tid] = {val};", f"{n}_bar.arrive_and_wait();", read, f"{n}_bar.arrive_and_wait();"]


def s_cubarcopy(self, sc, depth, ctx):
    """cuda::memcpy_async of a block-uniform range completing on a cuda::barrier."""
    r = self.r
    self.feat("cuda_memcpy_async_barrier")
    self.uses.update(("bar", "cpb"))
    n = self.name
    words = r.choice([4, 32, 64, 256])
    b = self.fresh("blk")
    return ["{", f"    auto {b} = fzcg::this_thread_block();",
            f"    cuda::memcpy_async({b}, {n}_cpb, {r.choice(['ia', '(const unsigned*)fa'])} + {_uniform_offset(self, words)}, sizeof(unsigned) * {words}u, {n}_bar);",
            f"    {n}_bar.arrive_and_wait();",
            f"    {r.choice(sc['uw'])} ^= {n}_cpb[({self.uexpr(sc)}) % {words}u];",
            "    __syncthreads();", "}"]


def s_mbar(self, sc, depth, ctx):
    """A shared-memory phase separated by an mbarrier phase (token or parity wait)."""
    r = self.r
    self.feat("mbarrier")
    self.uses.add("mbar")
    n = self.name
    mb, ph = f"&{n}_mb", f"{n}_ph"
    k = r.randrange(3)
    if k == 0:
        st = self.fresh("st")
        wait = [f"unsigned long long {st} = fzl_mbar_arrive({mb});", f"while (!fzl_mbar_test({mb}, {st})) {{}}"]
    elif k == 1:
        self.feat("mbarrier_parity")
        wait = [f"fzl_mbar_arrive({mb});", f"while (!fzl_mbar_test_parity({mb}, {ph} & 1u)) {{}}"]
    else:
        self.feat("mbarrier_try_wait")
        wait = [f"fzl_mbar_arrive({mb});", f"while (!fzl_mbar_try_parity({mb}, {ph} & 1u)) {{}}"]
    return (["{", f"    {n}_sh[tid] = {self.uexpr(sc)};"] + self.block(wait)
            + [f"    ++{ph};", f"    {r.choice(sc['uw'])} ^= {n}_sh[({self.uexpr(sc)}) % nt];", "    __syncthreads();", "}"])


def s_named(self, sc, depth, ctx):
    """Named barriers: two halves of the warps each sync on their own barrier; or producers
    bar.arrive while consumers bar.sync."""
    r = self.r
    n = self.name
    if self.nt >= 64 and self.p(0.5):
        self.feat("named_barrier_producer_consumer")
        h = self.fresh("h")
        return ["{", f"    const unsigned {h} = (nt >> 5) >> 1;   // warps below {h} produce",
                f"    if (warp < {h}) {{",
                f"        {n}_sh[tid] = {self.uexpr(sc)};",
                '        asm volatile("bar.arrive 3, %0;" :: "r"(nt) : "memory");',
                "    } else {",
                '        asm volatile("bar.sync 3, %0;" :: "r"(nt) : "memory");',
                f"        {r.choice(sc['uw'])} += {n}_sh[({self.uexpr(sc)}) % ({h} * 32u)];",
                "    }", "    __syncthreads();", "}"]
    self.feat("named_barrier_groups")
    g, base, cnt = self.fresh("g"), self.fresh("base"), self.fresh("cnt")
    return ["{", f"    const unsigned {g} = warp < ((nt >> 5) >> 1) ? 1u : 2u;",
            f"    const unsigned {base} = {g} == 1u ? 0u : ((nt >> 5) >> 1) * 32u;",
            f"    const unsigned {cnt} = {g} == 1u ? {base} + ((nt >> 5) >> 1) * 32u : nt - {base};",
            f"    {n}_sh[tid] = {self.uexpr(sc)};",
            f'    asm volatile("bar.sync %0, %1;" :: "r"({g}), "r"({cnt}) : "memory");',
            f"    {r.choice(sc['uw'])} ^= {n}_sh[{base} + ({self.uexpr(sc)}) % {cnt}];",
            f'    asm volatile("bar.sync %0, %1;" :: "r"({g}), "r"({cnt}) : "memory");', "}"]
