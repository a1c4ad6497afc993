"""Emulator bugs the version-3 fuzz run found (2026-11-26, 1,000 programs on an H200), as small kernels.

Each was first seen as whole programs that differed from the GPU and gave the GPU's bits once fixed
(docs/fuzz_report.md, "Version 3").
"""
import numpy as np

import cudalab
from cudalab.device import current, set_device

XORSIGN = r'''
extern "C" __global__ void k(const float* a, const float* b, float* out) {
  int i = threadIdx.x;
  float lo, hi;
  asm("min.xorsign.abs.f32 %0, %1, %2;" : "=f"(lo) : "f"(a[i]), "f"(b[i]));
  asm("max.xorsign.abs.f32 %0, %1, %2;" : "=f"(hi) : "f"(a[i]), "f"(b[i]));
  out[2 * i] = lo;
  out[2 * i + 1] = hi;
}'''

SAT_FROM_DOUBLE = r'''
extern "C" __global__ void k(const double* x, float* out) {
  int i = threadIdx.x;
  float r;
  asm("cvt.rn.sat.f32.f64 %0, %1;" : "=f"(r) : "d"(x[i]));
  out[i] = r;
}'''


def run_on_h100(src, *args, threads):
    before = current()
    set_device("H100")          # xorsign needs sm_86 or later
    try:
        cudalab.compile(src, options=["-arch=compute_90"]).get_kernel("k")[1, threads](*args)
    finally:
        set_device(before)


def test_min_and_max_xorsign_abs_take_the_magnitude_of_one_and_the_sign_of_both():
    """min.xorsign.abs: the smaller |a|, |b| with the sign a's sign XOR b's (the emulator used to
    drop .xorsign.abs and return the plain min/max; seeds 335, 682, 750 of version 3)."""
    a = np.array([-3.0, -3.0, 3.0, 0.5], np.float32)
    b = np.array([2.0, -2.0, -7.0, 0.25], np.float32)
    out = np.zeros(8, np.float32)
    run_on_h100(XORSIGN, a, b, out, threads=4)
    assert out.tolist() == [-2.0, -3.0, 2.0, 3.0, -3.0, -7.0, 0.25, 0.5]


def test_a_saturating_conversion_from_double_makes_nan_plus_zero():
    """cvt.rn.sat.f32.f64: .sat clamps to [0, 1] and makes NaN +0 (PTX ISA cvt); the emulator gave
    back the NaN, narrowed, after saturating."""
    x = np.array([np.nan, -np.nan, 2.5, -1.0, 0.25], np.float64)
    out = np.full(5, 7.0, np.float32)
    run_on_h100(SAT_FROM_DOUBLE, x, out, threads=5)
    assert out.view(np.uint32).tolist() == [0, 0, 0x3F800000, 0, 0x3E800000]


VAVRG = r'''
extern "C" __global__ void k(const unsigned* a, const unsigned* b, unsigned* out) {
  int i = threadIdx.x;
  unsigned s, u;
  asm("vavrg2.s32.s32.s32 %0, %1, %2, %3;" : "=r"(s) : "r"(a[i]), "r"(b[i]), "r"(0u));
  asm("vavrg4.u32.u32.u32 %0, %1, %2, %3;" : "=r"(u) : "r"(a[i]), "r"(b[i]), "r"(0u));
  out[2 * i] = s;
  out[2 * i + 1] = u;
}'''


def test_a_signed_simd_average_rounds_half_away_from_zero():
    """vavrg2.s32: each half's (a + b) / 2 rounded half away from zero: -3 / 2 is -2 (the emulator
    rounded half up, to -1; seeds 269, 372, 582 of version 3 give the GPU's bits only so). Unsigned
    averages round half up, as before."""
    a = np.array([0x0000FFFD, 0x00030005, 0xFFFF0001], np.uint32)        # halves (lo, hi): (-3, 0), (5, 3), (1, -1)
    b = np.array([0x00000000, 0x00000000, 0x00000000], np.uint32)
    out = np.zeros(6, np.uint32)
    run_on_h100(VAVRG, a, b, out, threads=3)
    assert out[0::2].tolist() == [0x0000FFFE, 0x00020003, 0xFFFF0001]    # (-2, 0), (3, 2), (1, -1)
    assert out[1::2].tolist() == [0x0000807F, 0x00020003, 0x80800001]       # bytes (a + b + 1) >> 1


def test_a_relu_minimum_compared_with_its_second_operand_is_ptxas_s_fold_on_seed_560():
    """Seed 560 (docs/fuzz_report.md, Version 3): ``if (__vimin3_s32_relu(0xffff, x, u1) == u1) return;``.
    The PTX (cuda's header: ``min.s32.relu t1, 0xffff, x; min.s32.relu d, t1, u1``, then ``setp.eq d, u1``)
    asks whether the clamped minimum is u1; ptxas 13.0 makes the pair ``VIMNMX.RELU RZ, P0, P0, t1, u1``,
    whose predicate on the H200 says whether it is t1. Each of the program's 192 threads returned early
    (its f1 stored as loaded) exactly when d == t1; by the PTX's test 166 of them would have gone the other way.
    tools/fuzz_locate.py's ``relu-eq`` fold writes the GPU's test into the PTX (the emulator then gives
    the GPU's bits for the whole program)."""
    import os
    import sys
    from tests.fuzz.generator import generate
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    from fuzz_locate import fold_relu_eq

    with np.load(os.path.join(os.path.dirname(__file__), "differing_gpu_v3.npz")) as z:
        oi, of = z["s560_oi"].astype(np.uint32), z["s560_of"].astype(np.uint32)
    ia, fa = generate(560, version=3).make_args()[:2]
    gid = np.arange(len(of) // 4)
    u1 = oi[gid * 4 + 1].view(np.int32).astype(np.int64)
    u2 = oi[gid * 4 + 2]
    x = ia.view(np.int32)[u2 & 255].astype(np.int64) >> (gid & 31)        # tid == gid: one block
    t1 = np.maximum(np.minimum(0xFFFF, x), 0)
    d = np.maximum(np.minimum(t1, u1), 0)
    f1 = fa.view(np.uint32)[(gid * 5 + 1) & 255]
    added = (fa[(gid * 5 + 1) & 255] + fa[np.maximum(u2.view(np.int32), 17) & 255]).view(np.uint32)
    returned = of[gid * 4 + 1] == f1
    assert (returned == (d == t1))[of[gid * 4 + 1] != added].all()         # where the two paths' bits differ
    assert ((d == t1) != (d == u1)).sum() == 166                            # the PTX says otherwise there

    ptx = ("\t{.reg .s32 t1; \n\tmin.s32.relu t1, %r172, %r173; \n\tmin.s32.relu %r171, t1, %r174;}\n\t\n"
           "\t// end inline asm\n\tsetp.eq.s32 \t%p12, %r171, %r174;\n")
    assert "setp.eq.s32 %p12, %r171, t1;}" in fold_relu_eq(ptx)
    assert "setp.eq.s32 \t%p12, %r171, %r174;" not in fold_relu_eq(ptx)


VMAD = r'''
extern "C" __global__ void k(const unsigned* a, const unsigned* b, const unsigned* c, unsigned* out) {
  int i = threadIdx.x;
  unsigned r, s;
  asm("vmad.u32.u32.u32.shr15 %0, %1.h1, %2.h0, %3;" : "=r"(r) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
  asm("vmad.u32.u32.u32.shr15 %0, %1, %2, %3;" : "=r"(s) : "r"(a[i]), "r"(b[i]), "r"(c[i]));
  out[2 * i] = r;
  out[2 * i + 1] = s;
}'''


def test_vmad_reads_whole_unsigned_words_as_signed_as_the_h200_does():
    """vmad.u32.u32.u32.shr15: ptxas 13.0 lowers it to ``IMAD.WIDE`` (signed) of the selected operands
    plus c sign-extended (``SHF.R.S32.HI``), then ``SHF.R.U64`` by 15; sm_90 has no video unit, so that
    is the GPU's vmad. The PTX ISA calls u32 * u32 + u32 unsigned; the emulator follows the GPU (seeds
    156 and 542 of version 3: 0x8000 * 1 + 0x80000000 gave 0x00010001, the H200 0xffff0001)."""
    a = np.array([0x80000000, 0x00020000, 0x80000000], np.uint32)
    b = np.array([0x00000001, 0x00000003, 0x00000002], np.uint32)
    c = np.array([0x80000000, 0x00000000, 0x00000000], np.uint32)
    out = np.zeros(6, np.uint32)
    run_on_h100(VMAD, a, b, c, out, threads=3)
    # halves: 0x8000 * 1 + (-2^31) = -2^31 + 2^15 -> >> 15 = -65535; 2 * 3 = 6 -> 0; 0x8000 * 2 -> 2
    assert out[0::2].tolist() == [0xFFFF0001, 0x00000000, 0x00000002]
    # whole words: (-2^31) * 1 + (-2^31) = -2^32 -> >> 15 = -131072; 0x20000 * 3 -> 12; (-2^31) * 2 -> -131072
    assert out[1::2].tolist() == [0xFFFE0000, 0x0000000C, 0xFFFE0000]


def test_a_0_or_1_converted_from_bf16_bits_to_an_integer_is_ptxas_s_fold_on_seed_945():
    """Seed 945: ``u2 += __bfloat162int_rz(__ushort_as_bfloat16((unsigned short)__hequ(x, y)))``. The PTX
    converts the bf16 with bits 0 or 1 (1 is 2^-133) toward zero, so it adds 0; on the H200 it added 1
    wherever the halves were equal (one word in ten differs by exactly one): ptxas compiles the
    ``selp.u16 1, 0`` read by ``cvt.rzi.s32.bf16`` as the bf16 1.0, as cause 19 does for halves. The
    ``selp-half`` fold of tools/fuzz_locate.py writes it so (the whole program then gives the GPU's bits);
    the emulator keeps the PTX's meaning."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    from fuzz_locate import fold_selp_half

    ptx = ("\tsetp.ne.s16 \t%p53, %rs86, 0;\n\tselp.u16 \t%rs89, 1, 0, %p53;\n"
           "\t{  cvt.rzi.s32.bf16 %r394, %rs89;}\n\tselp.u16 \t%rs90, 1, 0, %p54;\n")
    folded = fold_selp_half(ptx)
    assert "selp.u16 \t%rs89, 16256, 0, %p53;" in folded          # 0x3f80, the bf16 1.0
    assert "selp.u16 \t%rs90, 1, 0, %p54;" in folded              # not read as a bf16: unchanged


BF16_FMA = r'''
#include <cuda_bf16.h>
extern "C" __global__ void k(const unsigned short* a, const unsigned short* b, const unsigned short* c,
                             unsigned short* out) {
  int i = threadIdx.x;
  out[i] = __bfloat16_as_ushort(__hfma(__ushort_as_bfloat16(a[i]), __ushort_as_bfloat16(b[i]),
                                       __ushort_as_bfloat16(c[i])));
}'''


def test_a_bf16_fma_on_a_tie_minus_a_tiny_addend_rounds_down():
    """fma.rn.bf16(30, 0x4d48, 0xb542): the product is exactly halfway between 0x4fbb and 0x4fbc and the
    addend (-7.2e-7) takes it below, so 0x4fbb (the H200's, seed 17 of version 3). The float64 sum
    rounds past the exact value onto the neighbour below; the emulator's step 'toward the exact value'
    moved it back onto the tie, and the tie went to even, 0x4fbc. Cause 12's case stays right."""
    a = np.array([0x41F0, 0xC401], np.uint16)
    b = np.array([0x4D48, 0x4040], np.uint16)
    c = np.array([0xB542, 0x0001], np.uint16)
    out = np.zeros(2, np.uint16)
    run_on_h100(BF16_FMA, a, b, c, out, threads=2)
    assert out.tolist() == [0x4FBB, 0xC4C1]


SHARED_WRAP = r'''
extern "C" __global__ void k(unsigned* out) {
  __shared__ unsigned char s[64];
  unsigned t = threadIdx.x, r;
  unsigned base = (unsigned)__cvta_generic_to_shared(s) + t - 1203317526u;   // far below the array
  asm volatile("st.shared.u8 [%0+1203317526], %1;" :: "r"(base), "r"(t + 7u) : "memory");
  __syncthreads();
  asm volatile("ld.shared.u8 %0, [%1+1203317526];" : "=r"(r) : "r"(base));
  out[t] = r + s[t];
}'''


def test_a_32_bit_shared_address_plus_its_offset_wraps_in_both_tiers(monkeypatch):
    """``st.shared.u8 [%r+K]`` with a 32-bit register: the GPU adds K in 32 bits, so a register counted
    from below zero (NVRTC's loop pointers: seed 645 of version 3, ``[%r212+1203317526]``) reaches the
    array. The emulator used to add in 64 bits and stopped with an out-of-bounds write at 0x100000000."""
    outs = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        out = np.zeros(32, np.uint32)
        run_on_h100(SHARED_WRAP, out, threads=32)
        outs[tier] = out.tolist()
    want = [2 * (t + 7) for t in range(32)]
    assert outs["interp"] == outs["compiled"] == want


NAN_ORDER = r'''
extern "C" __global__ void k(const double* x, const double* y, const double* z, double* out) {
  int i = threadIdx.x;
  double a, b, c, r[5];
  asm volatile("ld.global.f64 %0, [%1];" : "=d"(c) : "l"(z + i));     // computed first: c, b, a
  asm volatile("ld.global.f64 %0, [%1];" : "=d"(b) : "l"(y + i));
  asm volatile("ld.global.f64 %0, [%1];" : "=d"(a) : "l"(x + i));
  asm("mul.rn.f64 %0, %1, %2;" : "=d"(r[0]) : "d"(a), "d"(b));
  asm("mul.rn.f64 %0, %1, %2;" : "=d"(r[1]) : "d"(b), "d"(a));
  asm("add.rn.f64 %0, %1, %2;" : "=d"(r[2]) : "d"(b), "d"(a));
  asm("sub.rn.f64 %0, %1, %2;" : "=d"(r[3]) : "d"(b), "d"(a));
  asm("fma.rn.f64 %0, %1, %2, %3;" : "=d"(r[4]) : "d"(b), "d"(a), "d"(c));
  for (int k = 0; k < 5; ++k) out[5 * i + k] = r[k];
}'''


def test_of_two_double_nans_the_one_computed_later_comes_out_in_both_tiers(monkeypatch):
    """DMUL/DADD return their second SASS operand's NaN, and ptxas mostly puts the value it computed
    earlier first whatever the PTX's order (decode.later_operand): of two NaN factors the later one's
    comes out, in either PTX order. The emulator used to return PTX's first, which gave the H200's bits
    for tests/kernels' x * y (y loaded first) but not for seeds 464 and 778 of version 3 or 976, 2255,
    2850 of version 2; a fma's later multiplicand's NaN wins, then the addend's (60, 939 of version 3,
    680 of version 2)."""
    nan = lambda bits: np.array([bits], np.uint64).view(np.float64)[0]      # noqa: E731
    na, nb, nc = nan(0x7FF0000000000A00), nan(0x7FF00000000000B0), nan(0xFFF000000000000C)
    x = np.array([na, 2.0], np.float64)           # thread 1: a is a number, so b and c decide the fma
    y = np.array([nb, nb], np.float64)
    z = np.array([nc, nc], np.float64)
    outs = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        out = np.zeros(10, np.float64)
        run_on_h100(NAN_ORDER, x, y, z, out, threads=2)
        outs[tier] = out.view(np.uint64).tolist()
    qa, qb, qc = 0x7FF8000000000A00, 0x7FF80000000000B0, 0xFFF800000000000C
    assert outs["interp"] == outs["compiled"] == [qa, qa, qa, qa, qa, qb, qb, qb, qb, qc]


MINMAX_NAN_ORDER = r'''
extern "C" __global__ void k(const double* x, const double* y, double* out) {
  double b, a;
  asm volatile("ld.global.f64 %0, [%1];" : "=d"(b) : "l"(y));     // b first, so a is computed later
  asm volatile("ld.global.f64 %0, [%1];" : "=d"(a) : "l"(x));
  asm("max.f64 %0, %1, %2;" : "=d"(out[0]) : "d"(a), "d"(b));
  asm("max.f64 %0, %1, %2;" : "=d"(out[1]) : "d"(b), "d"(a));
  asm("min.f64 %0, %1, %2;" : "=d"(out[2]) : "d"(b), "d"(a));
}'''


def test_of_two_double_nans_min_and_max_give_the_one_computed_later():
    """Seed 2108 of version 3: ``max.f64`` of two NaNs (floats widened: 0x7fffffff's, then
    0x7fc00001's) gave the H100 the second, later-converted one, quieted; the emulator gave the first.
    ptxas writes a double min/max as DSETP.MAX/MIN and SELs that take the second source's NaN, with
    the sources in its own order: the rule of DADD/DMUL (decode.later_operand) gives the GPU's bits."""
    nan = lambda bits: np.array([bits], np.uint64).view(np.float64)  # noqa: E731
    out = np.zeros(3, np.float64)
    run_on_h100(MINMAX_NAN_ORDER, nan(0x7FF0000000000A00), nan(0xFFF00000000000B0), out, threads=1)
    assert out.view(np.uint64).tolist() == [0x7FF8000000000A00] * 3


def test_ptxas_s_folds_of_the_fuzz5_round_are_written_as_the_gpu_computed_them():
    """Four programs that differed were ptxas's, not the emulator's (docs/fuzz_report.md, fuzz5): each
    gives the GPU's bits once tools/fuzz_locate.py writes ptxas's rewrite into the PTX. Seed 2659 of
    version 3: ``fabsf(__int_as_float(0x7fc00000))`` is folded at compile time and keeps the payload (the
    instruction gives the canonical 0x7fffffff). Seed 2857: ``__vibmax_s16x2``'s first operand
    ``__float2uint_ru(__int_as_float(0x4f800000))`` is a constant for ptxas though NVRTC left a ``cvt``
    (cause 17). Seeds 4800 and 4952 of version 4: a 0/1 read as bf16 bits and negated, or unpacked
    from a half2 into two registers and converted (cause 19's forms)."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    from fuzz_locate import fold_nan_const_abs, fold_selp_half, fold_vibmax

    assert fold_nan_const_abs("\tmov.f32 \t%f33, 0f7FC00000;\n\tabs.f32 \t%f34, %f33;\n\tabs.f32 \t%f36, %f35;\n") == \
        "\tmov.f32 \t%f33, 0f7FC00000;\n\tmov.b32 %f34, 0f7FC00000;\n\tabs.f32 \t%f36, %f35;\n"
    vib = ("\tmov.f32 \t%f144, 0f4F800000;\n\tcvt.rpi.u32.f32 \t%r175, %f144;\n\t{.reg .pred pu, pv; \n"
           "\t.reg .s16 rs0, rs1, rs2, rs3; \n\tmax.s16x2 %r172, %r175, %r245; \n\tmov.b32 {rs0, rs1}, %r172; \n"
           "\tmov.b32 {rs2, rs3}, %r175; \n\tsetp.eq.s16 pv, rs0, rs2; \n\tsetp.eq.s16 pu, rs1, rs3; \n")
    assert "mov.b32 {rs2, rs3}, %r245;" in fold_vibmax(vib)
    neg = "\tselp.u16 \t%rs93, 1, 0, %p37;\n\t{neg.bf16 %rs92,%rs93;\n}\n\t{neg.bf16 %rs17,%rs16;\n}\n"
    assert fold_selp_half(neg) == neg.replace("neg.bf16 %rs92", "neg.s16 %rs92")
    unpacked = ("\tselp.u16 \t%rs175, 1, 0, %p61;\n\tmov.u16 \t%rs176, 0;\n\t{  mov.b32 %r315, {%rs175,%rs176};}\n"
                "\tmov.b32 \t{%rs177, %rs20}, %r315;\n\t{cvt.f32.f16 %f308, %rs177;}\n")
    assert "selp.u16 \t%rs175, 15360, 0, %p61;" in fold_selp_half(unpacked)    # 0x3c00, the half 1.0
