"""The generator's version-3 operations: PTX instructions the emulator runs that versions 1 and 2 never drew.

Methods of ``generator.Gen`` (bound there), as ``ops_v2.py``'s are. Most are pure functions of their
operands written as inline PTX (``PRELUDE_V3``), so each instruction form is reached exactly as the
ISA spells it, whatever NVRTC would have chosen:

* **integer**: ``prmt`` in its six modes (f4e, b4e, rc8, ecl, ecr, rc16), ``bfind`` (.u32, .s32,
  .shiftamt, .u64), ``brev.b64``, ``popc/clz.b64``, ``bfe``/``bfi`` with any position and length,
  ``lop3`` with any truth table, ``shf`` (wrap/clamp), ``dp4a``/``dp2a`` (every signedness, lo/hi),
  carry chains (``add.cc``/``addc``/``sub.cc``/``subc``/``mad.lo.cc``/``madc.hi``), ``mul24.hi``,
  ``mad24.hi``, ``mul.hi``/``mad.hi``, ``sad.s32``, ``cnot``, ``cvt.pack.sat``, 16x2 ``add/min/max``
  (with ``.relu``), ``testp`` of floats and doubles;
* **video instructions**: scalar ``vadd``/``vsub``/``vabsdiff``/``vmin``/``vmax`` with byte and half
  selectors, ``.sat`` and a secondary operation, ``vshl``/``vshr`` (clamp/wrap), ``vmad`` (``.shr7``,
  ``.shr15``), ``vset``; the 2- and 4-way SIMD forms with accumulation;
* **fp8 and packed conversions** by PTX: ``cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2}``,
  ``cvt.rn.f16x2.{e4m3x2,e5m2x2}``, ``cvt.rn(.relu).{f16x2,bf16x2}.f32``;
* **float**: ``min/max`` with ``.NaN`` and ``.xorsign.abs``, ``copysign``, ``.sat`` arithmetic, ``cvt``'s
  integer roundings of floats, ``cvt.f32.f64`` in every rounding, f64 ``min/max``;
* **warp**: ``match.all.sync``, ``redux.sync`` min/max/and/or/xor (signed and unsigned), ``ldmatrix``
  and ``stmatrix`` (x1, x2, x4, with and without ``.trans``) and ``movmatrix`` on the warp's own slice
  of shared memory (converged code, whole warps), more ``mma.sync`` shapes (m16n8k8 bf16, m16n8k4
  tf32, m16n8k16 s8, m8n8k16 s8, 4-bit m16n8k32/m16n8k64/m8n8k32);
* **asynchronous**: an mbarrier with ``expect_tx``/``complete_tx`` (as the TMA's byte counting does)
  and ``cp.async.mbarrier.arrive.noinc`` completing a phase over the block's own copies.

Also, from the version-2 run's causes 17-21 (docs/fuzz_report.md: ptxas of CUDA 13.0 miscompiles
them, so they only blur a comparison): version 3 never gives ``__vibmax_s16x2`` a constant first
operand, never negates a three-input DPX operand, never reads a 0/1 value as a half's or float's
bits, and stores no byte of a half/bf16 result (``ops_v2.py`` checks ``self.v`` for these).
"""
from __future__ import annotations

PRELUDE_V3 = r'''
#define FZ3_U1(name, ptx) __device__ __forceinline__ unsigned name(unsigned a) { unsigned r; asm(ptx : "=r"(r) : "r"(a)); return r; }
#define FZ3_U2(name, ptx) __device__ __forceinline__ unsigned name(unsigned a, unsigned b) { unsigned r; asm(ptx : "=r"(r) : "r"(a), "r"(b)); return r; }
#define FZ3_U3(name, ptx) __device__ __forceinline__ unsigned name(unsigned a, unsigned b, unsigned c) { unsigned r; asm(ptx : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
#define FZ3_F2(name, ptx) __device__ __forceinline__ float name(float a, float b) { float r; asm(ptx : "=f"(r) : "f"(a), "f"(b)); return r; }
FZ3_U3(fz3_prmt_f4e, "prmt.b32.f4e %0, %1, %2, %3;")
FZ3_U3(fz3_prmt_b4e, "prmt.b32.b4e %0, %1, %2, %3;")
FZ3_U3(fz3_prmt_rc8, "prmt.b32.rc8 %0, %1, %2, %3;")
FZ3_U3(fz3_prmt_ecl, "prmt.b32.ecl %0, %1, %2, %3;")
FZ3_U3(fz3_prmt_ecr, "prmt.b32.ecr %0, %1, %2, %3;")
FZ3_U3(fz3_prmt_rc16, "prmt.b32.rc16 %0, %1, %2, %3;")
FZ3_U1(fz3_bfind_u, "bfind.u32 %0, %1;")
FZ3_U1(fz3_bfind_s, "bfind.s32 %0, %1;")
FZ3_U1(fz3_bfind_sa, "bfind.shiftamt.u32 %0, %1;")
FZ3_U1(fz3_bfind_ssa, "bfind.shiftamt.s32 %0, %1;")
FZ3_U1(fz3_cnot, "cnot.b32 %0, %1;")
FZ3_U3(fz3_bfe_u, "bfe.u32 %0, %1, %2, %3;")
FZ3_U3(fz3_bfe_s, "bfe.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_shf_lw, "shf.l.wrap.b32 %0, %1, %2, %3;")
FZ3_U3(fz3_shf_rc, "shf.r.clamp.b32 %0, %1, %2, %3;")
FZ3_U3(fz3_dp4a_uu, "dp4a.u32.u32 %0, %1, %2, %3;")
FZ3_U3(fz3_dp4a_ss, "dp4a.s32.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_dp4a_su, "dp4a.s32.u32 %0, %1, %2, %3;")
FZ3_U3(fz3_dp2a_lo, "dp2a.lo.u32.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_dp2a_hi, "dp2a.hi.s32.u32 %0, %1, %2, %3;")
FZ3_U2(fz3_mul24hi_s, "mul24.hi.s32 %0, %1, %2;")
FZ3_U2(fz3_mul24hi_u, "mul24.hi.u32 %0, %1, %2;")
FZ3_U3(fz3_mad24hi, "mad24.hi.u32 %0, %1, %2, %3;")
FZ3_U3(fz3_madhi_s, "mad.hi.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_sad_s, "sad.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_pack_u8, "cvt.pack.sat.u8.s32.b32 %0, %1, %2, %3;")
FZ3_U3(fz3_pack_s8, "cvt.pack.sat.s8.s32.b32 %0, %1, %2, %3;")
FZ3_U2(fz3_pack_u16, "cvt.pack.sat.u16.s32 %0, %1, %2;")
FZ3_U2(fz3_pack_s16, "cvt.pack.sat.s16.s32 %0, %1, %2;")
FZ3_U2(fz3_add_u16x2, "add.u16x2 %0, %1, %2;")
FZ3_U2(fz3_add_s16x2, "add.s16x2 %0, %1, %2;")
FZ3_U2(fz3_min_s16x2_relu, "min.relu.s16x2 %0, %1, %2;")
FZ3_U2(fz3_max_u16x2, "max.u16x2 %0, %1, %2;")
FZ3_U2(fz3_max_s32_relu, "max.relu.s32 %0, %1, %2;")
FZ3_U3(fz3_vadd_b, "vadd.s32.u32.s32.sat.add %0, %1.b1, %2.b3, %3;")
FZ3_U3(fz3_vsub_h, "vsub.s32.s32.u32.sat.add %0, %1.h1, %2.h0, %3;")
FZ3_U3(fz3_vabsdiff_b, "vabsdiff.u32.u32.u32.min %0, %1.b2, %2.b0, %3;")
FZ3_U3(fz3_vmin_h, "vmin.s32.s32.s32.max %0, %1.h0, %2.h1, %3;")
FZ3_U3(fz3_vmax, "vmax.u32.u32.s32.sat %0, %1, %2;")
FZ3_U3(fz3_vshl, "vshl.u32.u32.u32.clamp.add %0, %1, %2, %3;")
FZ3_U3(fz3_vshr, "vshr.s32.s32.u32.wrap %0, %1, %2;")
FZ3_U3(fz3_vmad7, "vmad.s32.u32.s32.sat.shr7 %0, %1.h0, %2.b1, %3;")
FZ3_U3(fz3_vmad15, "vmad.u32.u32.u32.shr15 %0, %1.h1, %2.h0, %3;")
FZ3_U3(fz3_vset, "vset.s32.u32.lt.add %0, %1.b0, %2.b2, %3;")
FZ3_U3(fz3_vadd2, "vadd2.s32.s32.s32.sat %0, %1, %2, %3;")
FZ3_U3(fz3_vsub2_add, "vsub2.u32.u32.u32.add %0, %1, %2, %3;")
FZ3_U3(fz3_vavrg2, "vavrg2.s32.s32.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_vabsdiff2, "vabsdiff2.s32.s32.s32.add %0, %1, %2, %3;")
FZ3_U3(fz3_vmin2, "vmin2.u32.u32.u32 %0, %1, %2, %3;")
FZ3_U3(fz3_vset2, "vset2.s32.s32.ge %0, %1, %2, %3;")
FZ3_U3(fz3_vadd4, "vadd4.u32.u32.u32.sat %0, %1, %2, %3;")
FZ3_U3(fz3_vsub4_add, "vsub4.s32.s32.s32.add %0, %1, %2, %3;")
FZ3_U3(fz3_vavrg4, "vavrg4.u32.u32.u32 %0, %1, %2, %3;")
FZ3_U3(fz3_vabsdiff4, "vabsdiff4.u32.u32.u32.add %0, %1, %2, %3;")
FZ3_U3(fz3_vmax4, "vmax4.s32.s32.s32 %0, %1, %2, %3;")
FZ3_U3(fz3_vset4, "vset4.u32.u32.ne %0, %1, %2, %3;")
FZ3_F2(fz3_min_nan, "min.NaN.f32 %0, %1, %2;")
FZ3_F2(fz3_max_nan, "max.NaN.f32 %0, %1, %2;")
FZ3_F2(fz3_min_xs, "min.xorsign.abs.f32 %0, %1, %2;")
FZ3_F2(fz3_max_xs, "max.xorsign.abs.f32 %0, %1, %2;")
FZ3_F2(fz3_copysign, "copysign.f32 %0, %1, %2;")
FZ3_F2(fz3_add_sat, "add.rn.sat.f32 %0, %1, %2;")
FZ3_F2(fz3_mul_sat, "mul.rz.sat.f32 %0, %1, %2;")
__device__ __forceinline__ unsigned fz3_bfi(unsigned a, unsigned b, unsigned c, unsigned d) {
  unsigned r; asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(r) : "r"(a), "r"(b), "r"(c), "r"(d)); return r; }
__device__ __forceinline__ unsigned fz3_bfind64(unsigned a, unsigned b) {
  unsigned r; asm("bfind.u64 %0, %1;" : "=r"(r) : "l"((unsigned long long)a << 32 | b)); return r; }
__device__ __forceinline__ unsigned fz3_brev64(unsigned a, unsigned b) {
  unsigned long long r; asm("brev.b64 %0, %1;" : "=l"(r) : "l"((unsigned long long)a << 32 | b)); return (unsigned)(r ^ (r >> 32)); }
__device__ __forceinline__ unsigned fz3_popc64(unsigned a, unsigned b) {
  unsigned r; asm("popc.b64 %0, %1;" : "=r"(r) : "l"((unsigned long long)a << 32 | b)); return r; }
__device__ __forceinline__ unsigned fz3_clz64(unsigned a, unsigned b) {
  unsigned r; asm("clz.b64 %0, %1;" : "=r"(r) : "l"((unsigned long long)a << 32 | b)); return r; }
__device__ __forceinline__ unsigned fz3_addc(unsigned a, unsigned b, unsigned c, unsigned d) {
  unsigned lo, hi; asm("add.cc.u32 %0, %2, %3; addc.cc.u32 %1, %4, %5;" : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"(c), "r"(d));
  unsigned x; asm("addc.u32 %0, 0, 0;" : "=r"(x)); return lo ^ hi ^ (x << 31); }
__device__ __forceinline__ unsigned fz3_subc(unsigned a, unsigned b, unsigned c, unsigned d) {
  unsigned lo, hi; asm("sub.cc.u32 %0, %2, %3; subc.u32 %1, %4, %5;" : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"(c), "r"(d)); return lo + hi * 3u; }
__device__ __forceinline__ unsigned fz3_madc(unsigned a, unsigned b, unsigned c, unsigned d) {
  unsigned lo, hi; asm("mad.lo.cc.u32 %0, %2, %3, %4; madc.hi.u32 %1, %2, %3, %5;" : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"(c), "r"(d)); return lo ^ (hi * 5u); }
__device__ __forceinline__ unsigned fz3_lop3(unsigned a, unsigned b, unsigned c, unsigned k) {
  unsigned r;
  switch (k & 3u) {
    case 0u: asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); break;
    case 1u: asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); break;
    case 2u: asm("lop3.b32 %0, %1, %2, %3, 0x1b;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); break;
    default: asm("lop3.b32 %0, %1, %2, %3, 0x6c;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); break;
  }
  return r; }
__device__ __forceinline__ unsigned fz3_testp(float f, unsigned k) {
  unsigned r;
  switch (k % 6u) {
    case 0u: asm("{ .reg .pred p; testp.finite.f32 p, %1; selp.u32 %0, 1, 0, p; }" : "=r"(r) : "f"(f)); break;
    case 1u: asm("{ .reg .pred p; testp.infinite.f32 p, %1; selp.u32 %0, 2, 0, p; }" : "=r"(r) : "f"(f)); break;
    case 2u: asm("{ .reg .pred p; testp.number.f32 p, %1; selp.u32 %0, 4, 0, p; }" : "=r"(r) : "f"(f)); break;
    case 3u: asm("{ .reg .pred p; testp.notanumber.f32 p, %1; selp.u32 %0, 8, 0, p; }" : "=r"(r) : "f"(f)); break;
    case 4u: asm("{ .reg .pred p; testp.normal.f32 p, %1; selp.u32 %0, 16, 0, p; }" : "=r"(r) : "f"(f)); break;
    default: asm("{ .reg .pred p; testp.subnormal.f64 p, %1; selp.u32 %0, 32, 0, p; }" : "=r"(r) : "d"((double)f * 1e-300)); break;
  }
  return r; }
__device__ __forceinline__ unsigned fz3_e4m3x2(float a, float b) {
  unsigned short r; asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ unsigned fz3_e5m2x2(float a, float b) {
  unsigned short r; asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ unsigned fz3_e4m3x2_h(unsigned h) {
  unsigned short r; asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;" : "=h"(r) : "r"(h)); return r; }
__device__ __forceinline__ unsigned fz3_e5m2x2_h(unsigned h) {
  unsigned short r; asm("cvt.rn.satfinite.e5m2x2.f16x2 %0, %1;" : "=h"(r) : "r"(h)); return r; }
__device__ __forceinline__ unsigned fz3_h2_e4m3(unsigned c) {
  unsigned r; asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(r) : "h"((unsigned short)c)); return r; }
__device__ __forceinline__ unsigned fz3_h2_e5m2(unsigned c) {
  unsigned r; asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(r) : "h"((unsigned short)c)); return r; }
__device__ __forceinline__ unsigned fz3_h2_relu(float a, float b) {
  unsigned r; asm("cvt.rn.relu.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ unsigned fz3_bf2_relu(float a, float b) {
  unsigned r; asm("cvt.rn.relu.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(a), "f"(b)); return r; }
__device__ __forceinline__ unsigned fz3_f2i(float f, unsigned k) {
  int r;
  switch (k & 3u) {
    case 0u: asm("cvt.rni.sat.s32.f32 %0, %1;" : "=r"(r) : "f"(f)); break;
    case 1u: asm("cvt.rmi.s32.f32 %0, %1;" : "=r"(r) : "f"(f)); break;
    case 2u: asm("cvt.rpi.sat.u32.f32 %0, %1;" : "=r"(r) : "f"(f)); break;
    default: asm("cvt.rni.u32.f32 %0, %1;" : "=r"(r) : "f"(f)); break;
  }
  return (unsigned)r; }
__device__ __forceinline__ float fz3_d2f(float a, float b, unsigned k) {
  double d = (double)a * (double)b; float r;
  switch (k & 3u) {
    case 0u: asm("cvt.rz.f32.f64 %0, %1;" : "=f"(r) : "d"(d)); break;
    case 1u: asm("cvt.rm.f32.f64 %0, %1;" : "=f"(r) : "d"(d)); break;
    case 2u: asm("cvt.rp.f32.f64 %0, %1;" : "=f"(r) : "d"(d)); break;
    default: asm("cvt.rn.sat.f32.f64 %0, %1;" : "=f"(r) : "d"(d)); break;
  }
  return r; }
__device__ __forceinline__ float fz3_fround(float f, unsigned k) {
  float r;
  switch (k & 3u) {
    case 0u: asm("cvt.rni.f32.f32 %0, %1;" : "=f"(r) : "f"(f)); break;
    case 1u: asm("cvt.rzi.sat.f32.f32 %0, %1;" : "=f"(r) : "f"(f)); break;
    case 2u: asm("cvt.rmi.ftz.f32.f32 %0, %1;" : "=f"(r) : "f"(f)); break;
    default: asm("cvt.rpi.f32.f32 %0, %1;" : "=f"(r) : "f"(f)); break;
  }
  return r; }
__device__ __forceinline__ float fz3_dminmax(float a, float b, unsigned k) {
  double r;
  if (k & 1u) asm("min.f64 %0, %1, %2;" : "=d"(r) : "d"((double)a), "d"((double)b));
  else asm("max.f64 %0, %1, %2;" : "=d"(r) : "d"((double)a), "d"((double)b));
  return (float)r; }
__device__ __forceinline__ unsigned fz3_match_all(unsigned m, unsigned v) {
  unsigned r; asm volatile("{ .reg .pred p; match.all.sync.b32 %0|p, %1, %2; @!p mov.b32 %0, 12345; }" : "=r"(r) : "r"(v), "r"(m)); return r; }
__device__ __forceinline__ void fz3_mbar_expect(void* bar, unsigned tx) {
  asm volatile("{ .reg .b64 st; mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1; }" :: "r"(FZ_SMEM(bar)), "r"(tx) : "memory"); }
__device__ __forceinline__ void fz3_mbar_complete(void* bar, unsigned tx) {
  asm volatile("mbarrier.complete_tx.shared::cta.b64 [%0], %1;" :: "r"(FZ_SMEM(bar)), "r"(tx) : "memory"); }
__device__ __forceinline__ void fz3_cp_arrive(void* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" :: "r"(FZ_SMEM(bar)) : "memory"); }
'''

PRMT = ["fz3_prmt_f4e", "fz3_prmt_b4e", "fz3_prmt_rc8", "fz3_prmt_ecl", "fz3_prmt_ecr", "fz3_prmt_rc16"]
UN = ["fz3_bfind_u", "fz3_bfind_s", "fz3_bfind_sa", "fz3_bfind_ssa", "fz3_cnot"]
BIN = ["fz3_mul24hi_s", "fz3_mul24hi_u", "fz3_pack_u16", "fz3_pack_s16", "fz3_add_u16x2", "fz3_add_s16x2",
       "fz3_min_s16x2_relu", "fz3_max_u16x2", "fz3_max_s32_relu", "fz3_bfind64", "fz3_brev64", "fz3_popc64",
       "fz3_clz64"]
TRI = ["fz3_bfe_u", "fz3_bfe_s", "fz3_shf_lw", "fz3_shf_rc", "fz3_dp4a_uu", "fz3_dp4a_ss", "fz3_dp4a_su",
       "fz3_dp2a_lo", "fz3_dp2a_hi", "fz3_mad24hi", "fz3_madhi_s", "fz3_sad_s", "fz3_pack_u8", "fz3_pack_s8"]
VIDEO = ["fz3_vadd_b", "fz3_vsub_h", "fz3_vabsdiff_b", "fz3_vmin_h", "fz3_vmax", "fz3_vshl", "fz3_vmad7",
         "fz3_vmad15", "fz3_vset", "fz3_vadd2", "fz3_vsub2_add", "fz3_vavrg2", "fz3_vabsdiff2", "fz3_vmin2",
         "fz3_vset2", "fz3_vadd4", "fz3_vsub4_add", "fz3_vavrg4", "fz3_vabsdiff4", "fz3_vmax4", "fz3_vset4"]
QUAD = ["fz3_bfi", "fz3_addc", "fz3_subc", "fz3_madc", "fz3_lop3"]
FBIN = ["fz3_min_nan", "fz3_max_nan", "fz3_min_xs", "fz3_max_xs", "fz3_copysign", "fz3_add_sat", "fz3_mul_sat"]


# version 4: the carry chain's last carry read inside the same asm statement as the chain
PRELUDE_V4 = r'''
__device__ __forceinline__ unsigned fz4_addc(unsigned a, unsigned b, unsigned c, unsigned d) {
  unsigned lo, hi, x;
  asm("add.cc.u32 %0, %3, %4; addc.cc.u32 %1, %5, %6; addc.u32 %2, 0, 0;" : "=r"(lo), "=r"(hi), "=r"(x) : "r"(a), "r"(b), "r"(c), "r"(d));
  return lo ^ hi ^ (x << 31); }
'''


def uexpr_v3(self, sc, d, c):
    """Version 3's integer expressions (``c`` in 0..5)."""
    r = self.r
    a = lambda: self.uexpr(sc, d + 1)  # noqa: E731
    f = lambda: self.fexpr(sc, d + 1)  # noqa: E731
    if c == 0:
        self.feat("prmt_modes")
        return f"{r.choice(PRMT)}({a()}, {a()}, {a()})"
    if c == 1:
        fn = r.choice(UN + BIN + TRI + QUAD)
        if fn == "fz3_addc" and self.v >= 4:
            fn = "fz4_addc"
        self.feat("int_ptx")
        self.feat("ptx_" + fn[4:])
        n = 1 if fn in UN else 2 if fn in BIN else 3 if fn in TRI else 4
        args = [a() for _ in range(n)]
        if fn == "fz3_shf_lw" or fn == "fz3_shf_rc":
            args[2] = f"({args[2]}) % 40u"
        if fn in ("fz3_bfe_u", "fz3_bfe_s"):
            args[1:] = [f"({x}) % 300u" for x in args[1:]]
        if fn == "fz3_bfi":
            args[2:] = [f"({x}) % 300u" for x in args[2:]]
        return f"{fn}({', '.join(args)})"
    if c == 2:
        self.feat("video")
        fn = r.choice(VIDEO)
        self.feat("ptx_" + fn[4:])
        return f"{fn}({a()}, {a()}, {a()})"
    if c == 3:
        self.feat("fp8_ptx")
        k = r.randrange(7)
        if k == 0:
            return f"fz3_e4m3x2({f()}, {f()})"
        if k == 1:
            return f"fz3_e5m2x2({f()}, {f()})"
        if k == 2:
            return f"fz3_e4m3x2_h({a()})"
        if k == 3:
            return f"fz3_e5m2x2_h({a()})"
        if k == 4:
            return f"{r.choice(['fz3_h2_e4m3', 'fz3_h2_e5m2'])}({a()})"
        return f"{r.choice(['fz3_h2_relu', 'fz3_bf2_relu'])}({f()}, {f()})"
    if c == 4:
        self.feat("testp")
        return f"fz3_testp({f()}, {a()})"
    self.feat("cvt_f2i_ptx")
    return f"fz3_f2i({f()}, {a()})"


def fexpr_v3(self, sc, d, c):
    """Version 3's float expressions (``c`` in 0..2)."""
    r = self.r
    a = lambda: self.fexpr(sc, d + 1)  # noqa: E731
    if c == 0:
        fn = r.choice(FBIN)
        self.feat("float_ptx")
        self.feat("ptx_" + fn[4:])
        return f"{fn}({a()}, {a()})"
    if c == 1:
        self.feat("cvt_f64_f32_rounding")
        return f"fz3_d2f({a()}, {a()}, {self.uexpr(sc, d + 1)})"
    k = r.randrange(2)
    if k == 0:
        self.feat("cvt_f32_round")
        return f"fz3_fround({a()}, {self.uexpr(sc, d + 1)})"
    self.feat("f64_minmax")
    return f"fz3_dminmax({a()}, {a()}, {self.uexpr(sc, d + 1)})"


# ------------------------------------------------------------------ statements

def s_warp3(self, sc, depth, ctx):
    """match.all.sync and redux.sync's other operations, over the lanes that exist."""
    r = self.r
    dst = r.choice(sc["uw"])
    if self.p(0.5):
        self.feat("match_all")
        v = r.choice([f"({self.uexpr(sc)}) & 1u", "warp", f"({self.uexpr(sc)})"])
        return [f"{dst} ^= fz3_match_all(FM, {v});"]
    self.feat("redux_more")
    op = r.choice(["__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync"])
    cast = "(int)" if op in ("__reduce_min_sync", "__reduce_max_sync") and self.p(0.5) else ""
    return [f"{dst} += (unsigned){op}(FM, {cast}({self.uexpr(sc)}));"]


LDMATRIX = [(1, False), (2, False), (4, False), (1, True), (2, True), (4, True)]


def s_ldmatrix(self, sc, depth, ctx):
    """ldmatrix / stmatrix / movmatrix on the warp's own 1 KB of shared memory: each lane writes its
    16 bytes, __syncwarp, the warp loads 8x8 b16 matrices (lanes 8i..8i+7 give matrix i's row
    addresses); or stores its registers as matrices and reads back rows other lanes' registers made."""
    r = self.r
    self.uses.add("lm")
    n = self.name
    base = f"({n}_lm + warp * 512u)"
    x, trans = r.choice(LDMATRIX)
    tr = ".trans" if trans else ""
    regs = [self.fresh("m") for _ in range(x)]
    outs = ", ".join(f'"=r"({m})' for m in regs)
    ops = "{" + ", ".join(f"%{i}" for i in range(x)) + "}"
    k = r.randrange(3)
    out = [f"unsigned {', '.join(regs)};"]
    if k == 0:
        self.feat("ldmatrix")
        out += [f"for (unsigned j = 0u; j < 8u; ++j) {base}[lane * 8u + j] = (unsigned short)(({self.uexpr(sc)}) * (j + 1u));",
                "__syncwarp();",
                f'asm volatile("ldmatrix.sync.aligned.m8n8.x{x}{tr}.shared.b16 {ops}, [%{x}];" : {outs} : '
                f'"r"(FZ_SMEM({base} + (lane & {8 * x - 1}u) * 8u)) : "memory");',
                "__syncwarp();"]
    elif k == 1:
        self.feat("stmatrix")
        ins = ", ".join(f'"r"({m})' for m in regs)
        ops = "{" + ", ".join(f"%{i + 1}" for i in range(x)) + "}"
        out += [f"{m} = {self.uexpr(sc)};" for m in regs]
        out += [f'asm volatile("stmatrix.sync.aligned.m8n8.x{x}{tr}.shared.b16 [%0], {ops};" :: '
                f'"r"(FZ_SMEM({base} + 256u + (lane & {8 * x - 1}u) * 8u)), {ins} : "memory");',
                "__syncwarp();"]
        out += [f"{m} = {base}[256u + (({self.uexpr(sc)}) % {64 * x}u)];" for m in regs]
        out.append("__syncwarp();")
    else:
        self.feat("movmatrix")
        regs = regs[:1]
        out = [f"unsigned {regs[0]};",
               f'asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"({regs[0]}) : "r"({self.uexpr(sc)}));']
    for m in regs:
        out.append(f"{r.choice(sc['uw'])} ^= {m};")
    return ["{"] + self.block(out) + ["}"]


def s_mbartx(self, sc, depth, ctx):
    """An mbarrier phase that waits for bytes as well as arrivals (expect_tx / complete_tx, as the
    TMA counts them), or for the block's own cp.async copies (cp.async.mbarrier.arrive.noinc); each
    statement initialises its own barrier and invalidates it after the block's last wait."""
    r = self.r
    self.uses.update(("mb3", "cp"))
    n = self.name
    mb = f"&{n}_mb3"
    out = [f"if (tid == 0u) fzl_mbar_init({mb}, nt);", "__syncthreads();"]
    if self.p(0.5):
        self.feat("mbarrier_expect_tx")
        tx = self.fresh("tx")
        out += [f"const unsigned {tx} = (({self.uexpr(sc)}) & 15u) * 4u;",
                f"{n}_sh[tid] = {self.uexpr(sc)};",
                f"fz3_mbar_expect({mb}, {tx});", f"fz3_mbar_complete({mb}, {tx});"]
        read = f"{n}_sh[({self.uexpr(sc)}) % nt]"
    else:
        self.feat("cp_async_mbarrier_arrive")
        out += [f"fzl_cp_ca(&{n}_cp[tid * 8u], &ia[({self.uexpr(sc)}) & 255u], 4);", f"fz3_cp_arrive({mb});"]
        read = f"{n}_cp[tid * 8u]"
    out += [f"while (!fzl_mbar_try_parity({mb}, 0u)) {{}}",
            f"{r.choice(sc['uw'])} ^= {read};",
            "__syncthreads();",
            f'if (tid == 0u) asm volatile("mbarrier.inval.shared::cta.b64 [%0];" :: "r"(FZ_SMEM({mb})) : "memory");',
            "__syncthreads();"]
    return ["{"] + self.block(out) + ["}"]


MMA_V3 = {  # as ops_v2.MMA
    "bf16k8": ("mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32", 2, 1, 4, 4, "bf", "f", "f"),
    "tf32k4": ("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32", 2, 1, 4, 4, "tf", "f", "f"),
    "s8k16": ("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32", 2, 1, 4, 4, "i", "i", "i"),
    "m8s8": ("mma.sync.aligned.m8n8k16.row.col.s32.s8.u8.s32", 1, 1, 2, 2, "i", "i", "i"),
    "s4k32": ("mma.sync.aligned.m16n8k32.row.col.s32.s4.s4.s32", 2, 1, 4, 4, "i", "i", "i"),
    "u4k64": ("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32", 4, 2, 4, 4, "i", "i", "i"),
    "m8s4": ("mma.sync.aligned.m8n8k32.row.col.s32.u4.u4.s32", 1, 1, 2, 2, "i", "i", "i"),
}
