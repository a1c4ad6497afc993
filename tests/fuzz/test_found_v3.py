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
