"""Emulator differences found by the version-2 fuzz run (2026-11-26, docs/fuzz_report.md), each as the
smallest kernel that shows it. The H100's answers come from the run's programs (``python -m
tests.fuzz.run recheck SEEDS --version 2`` replays them); here each is written as the rule it follows."""
import numpy as np

import cudalab
from cudalab.device import current, set_device


def run(src, kernel, *args, n=1):
    before = current()
    set_device("H100")
    try:
        cudalab.compile(src, options=["-arch=compute_90"]).get_kernel(kernel).launch(1, n, args)
    finally:
        set_device(before)


def test_fma_relu_on_halves_clamps_negative_results_to_plus_zero_and_nan_to_the_canonical_nan():
    """fma.rn.relu.f16x2 / .bf16 (``__hfma2_relu``, ``__hfma_relu``): seeds 0, 20, 39, 55, 82, 83 and 121
    more differed while the emulator ignored ``.relu``."""
    src = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void k(const float* a, const float* b, const float* c, unsigned* out) {
  int t = threadIdx.x;
  __half2 h = __hfma2_relu(__floats2half2_rn(a[t], -a[t]), __floats2half2_rn(b[t], b[t]), __floats2half2_rn(c[t], c[t]));
  out[2 * t] = (unsigned)__half_as_ushort(__low2half(h)) | ((unsigned)__half_as_ushort(__high2half(h)) << 16);
  out[2 * t + 1] = __bfloat16_as_ushort(__hfma_relu(__float2bfloat16_rn(a[t]), __float2bfloat16_rn(b[t]), __float2bfloat16_rn(c[t])));
}'''
    a = np.array([1.5, -2.0, np.nan, 0.0, 3.0], np.float32)
    b = np.array([2.0, 4.0, 1.0, -1.0, np.inf], np.float32)
    c = np.array([0.25, 1.0, 0.0, -0.0, -np.inf], np.float32)
    out = np.zeros(10, np.uint32)
    run(src, "k", a, b, c, out, n=5)
    lo, hi, bf = out[0::2] & 0xFFFF, out[0::2] >> 16, out[1::2]
    assert lo.tolist() == [np.float16(3.25).view(np.uint16), 0, 0x7FFF, 0, 0x7FFF]      # -7 -> +0; -0 -> +0; inf-inf
    assert hi.tolist() == [0, np.float16(8.0 + 1.0).view(np.uint16), 0x7FFF, 0, 0]       # -3 + 0.25, -inf -> +0
    assert bf.tolist() == [0x4050, 0, 0x7FFF, 0, 0x7FFF]                                  # 3.25, -7 -> +0


def test_bf16_to_float_keeps_nan_bits():
    """cvt.f32.bf16 (``__bfloat162float`` for sm_90) only shifts the bits, NaNs too; the emulator gave
    the canonical float NaN 0x7fffffff (seeds 49, 309, 2970, 3139 ...: the GPU's 0x7fff0000, 0xffff0000)."""
    src = r'''
#include <cuda_bf16.h>
extern "C" __global__ void k(const unsigned short* in, unsigned* out) {
  out[threadIdx.x] = __float_as_uint(__bfloat162float(__ushort_as_bfloat16(in[threadIdx.x])));
}'''
    words = np.array([0x7FFF, 0xFFFF, 0x7FC1, 0xFF81, 0x3F80, 0x0001, 0x8000], np.uint16)
    out = np.zeros(len(words), np.uint32)
    run(src, "k", words, out, n=len(words))
    assert out.tolist() == [int(w) << 16 for w in words]
