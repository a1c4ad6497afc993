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


def test_tensor_core_aligns_a_subnormal_factor_at_the_smallest_normal_exponent():
    """tf32 mma.sync (seed 688, two lanes one ulp off): a product with a subnormal factor, 2**-135 x
    -1.2 * 2**102, counts as exponent -126 + 102 when the tensor core aligns the terms, so the
    product 1.5 * 2**-134 x 2**121 sets the top at -126 + 121 and the first product falls below the
    cut. With the normalized exponent (-135) the emulator kept it and its D was one ulp lower than
    the H100's (the value the H100's outputs imply; the exact sum truncated gives the lower one)."""
    from cudalab.emulator.mma import multiply
    h = float.fromhex
    a = np.array([[[h("0x1.1p4"), h("0x1.14p4"), h("0x1.18p4"), h("0x1.1cp4"), 0.0, 0.0, 2.0 ** -135, 1.5 * 2.0 ** -134]]])
    b = np.array([h("0x1.774p-15")] * 4 + [h("0x1.c34p91"), h("0x1.848p117"), h("-0x1.34cp102"), h("0x1.164p121")])
    b = b.reshape(1, 8, 1)
    d = multiply(a, b, np.array([[[-0.0]]]), "tf32", "f32", "f32", False)
    assert hex(d.view(np.uint32)[0, 0, 0]) == "0x3b58cac0"
    exact = np.float32(float((a[0, 0] * b[0, :, 0]).sum()))    # all products are exact in float64
    assert hex(exact.view(np.uint32)) == "0x3b58cabf"


def test_double_fma_returns_b_s_nan_then_c_s_then_a_s_and_a_negated_nan_keeps_its_sign():
    """fma.rn.f64 with several NaN operands (found.py's f64_fma row: the H100 takes b's, else c's, else
    a's), and neg.f64 of a NaN keeps its sign: ptxas folds the negation into the fma as an operand
    modifier, so fma(x, y, -x) of a NaN x gives x's bits (tests/kernels/floating.py's exactd).
    With a-first and a sign-flipping neg, 14 of the run's programs differed (seeds 138 889 2688 ...)."""
    src = r'''
extern "C" __global__ void k(const double* a, const double* b, const double* c, double* out) {
  int t = threadIdx.x;
  out[2 * t] = fma(a[t], b[t], c[t]);
  out[2 * t + 1] = fma(a[t], b[t], -a[t]);
}'''
    def nan(payload, sign=0):
        return np.array([(sign << 63) | 0x7FF8000000000000 | payload], np.uint64).view(np.float64)[0]
    a = np.array([nan(1), nan(1), nan(1, 1), 2.0])
    b = np.array([nan(2, 1), 3.0, nan(2), 3.0])
    c = np.array([nan(3), nan(3, 1), 1.0, nan(3)])
    out = np.zeros(8, np.float64)
    run(src, "k", a, b, c, out, n=4)
    got = [hex(x) for x in out.view(np.uint64)]
    want_fma = [b[0], c[1], b[2], c[3]]                  # b's NaN first, then c's, then a's
    want_neg = [b[0], a[1], b[2], 4.0]                   # fma(x, y, -x): b's, else x's own bits
    assert got[0::2] == [hex(np.float64(x).view(np.uint64)) for x in want_fma]
    assert got[1::2] == [hex(np.float64(x).view(np.uint64)) for x in want_neg]


# the elements whose bits the emulator does not give yet (docs/fuzz_report.md): none since a zero C
# counts as 2**-133 (seed 1908's three bf16 elements, test below)
OPEN_REPLAYS = {}


def test_tensor_core_replays_of_the_programs_own_operands_give_the_gpus_bits():
    """Every mma.sync / wmma.mma the 69 differing programs executed, replayed alone on the register
    words the emulator gave it (tools/fuzz_locate.py; the H200's D in mma_replays_v2.npz, 737 warps of
    37 instruction forms): the tensor cores were not what made those programs differ, except seed
    1908's bf16 tile, whose subnormal accumulators fixed the rule that a subnormal C counts as 2**-126
    when the sum is aligned and that an underflowing sum is +0 (8 warps differed before), and whose
    last three elements the rule for a zero C fixed."""
    import json
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    from fuzz_locate import emu_launch, replay_module
    saved = np.load(os.path.join(os.path.dirname(__file__), "mma_replays_v2.npz"))
    differ = {}
    for key in sorted(k for k in saved.files if k.startswith("text_")):
        i = key[5:]
        form = json.loads(str(saved[key]))
        inp, gpu = saved[f"in_{i}"].astype(np.uint64), saved[f"gpu_{i}"].astype(np.uint64)
        out = np.zeros_like(gpu)
        got = emu_launch(2)(replay_module(form["text"], form["counts"], form["wide"]), "replay",
                            (inp.shape[0],), (32,), 0, [inp, out])[1]
        if not form["wide"]["d"]:
            got = got & np.uint64(0xFFFFFFFF)
        n = int((got != gpu).sum())
        if n:
            differ[form["text"]] = n
    assert len(saved.files) == 3 * 37
    assert differ == OPEN_REPLAYS


VIBMAX_SRC = r'''
__device__ __forceinline__ unsigned vib(unsigned a, unsigned b) {
  bool p, q; unsigned r = __vibmax_s16x2(a, b, &p, &q); return r ^ ((unsigned)p << 7) ^ ((unsigned)q << 23); }
extern "C" __global__ void vib_const(const unsigned* a, const unsigned* b, unsigned* out) {
  int t = threadIdx.x;
  out[6 * t + 0] = vib(0x0adc8f05u, b[t]);
  out[6 * t + 1] = vib(78u, b[t]);
  out[6 * t + 2] = vib(0x80000000u, b[t]);
  out[6 * t + 3] = vib(b[t], 0x0adc8f05u);
  out[6 * t + 4] = vib(a[t], b[t]);
  out[6 * t + 5] = vib(0x7fff0001u, 0x00058000u);
}'''


def _vibmax(a, b, swapped=False):
    """__vibmax_s16x2 as the fuzz helper packs it: the per-half max, pred_hi at bit 7, pred_lo at bit 23."""
    a, b = np.broadcast_arrays(np.asarray(a, np.uint32), np.asarray(b, np.uint32))
    halves = [(x.astype(np.uint32) >> np.uint32(s) & np.uint32(0xFFFF)).astype(np.uint16).view(np.int16).astype(np.int64)
              for s in (0, 16) for x in (a, b)]
    lo_a, lo_b, hi_a, hi_b = halves
    r = (np.maximum(lo_a, lo_b) & 0xFFFF) | ((np.maximum(hi_a, hi_b) & 0xFFFF) << 16)
    p, q = (hi_b >= hi_a, lo_b >= lo_a) if swapped else (hi_a >= hi_b, lo_a >= lo_b)
    return (r ^ (p.astype(np.int64) << 7) ^ (q.astype(np.int64) << 23)).astype(np.uint32)


def test_vibmax_s16x2_with_a_constant_first_operand_is_ptxas_s_not_the_emulators():
    """Seeds 1017 1170 1729 4283 and 14 more (docs/fuzz_report.md): ``__vibmax_s16x2(K, b, &hi, &lo)``
    with a compile-time constant K. The PTX (cuda's header: ``max.s16x2 d, a, b; setp.eq.s16 p, d.hi,
    a.hi``) says hi = (a.hi >= b.hi); ptxas (CUDA 13.0, the driver's JIT too) folds it into ``VIMNMX.S16x2
    d, P0, P1, b, K`` with the immediate moved second, so the H200's predicates say b >= a. The
    emulator keeps the PTX's meaning; the recorded bytes show the GPU's (tests/fuzz/vibmax_constant_h200.npz)."""
    import os
    z = np.load(os.path.join(os.path.dirname(__file__), "vibmax_constant_h200.npz"))
    a, b, gpu = z["a"], z["b"], z["gpu"]
    out = np.zeros(6 * len(a), np.uint32)
    run(VIBMAX_SRC, "vib_const", a, b, out, n=len(a))
    emu = out.reshape(-1, 6)
    operands = [(0x0ADC8F05, b), (78, b), (0x80000000, b), (b, 0x0ADC8F05), (a, b), (0x7FFF0001, 0x00058000)]
    for col, (x, y) in enumerate(operands):
        assert (emu[:, col] == _vibmax(x, y)).all()
        constant_first = col in (0, 1, 2, 5)
        assert (gpu[:, col] == _vibmax(x, y, swapped=constant_first)).all()
        assert ((emu[:, col] ^ gpu[:, col]) & ~np.uint32((1 << 7) | (1 << 23)) == 0).all()   # only the predicates


DPX_NEG_SRC = r'''
extern "C" __global__ void dpx_neg(const unsigned* a, const unsigned* y, const unsigned* c, unsigned* out) {
  int t = threadIdx.x;
  int ai = (int)a[t], ny = (int)(0u - y[t]), ci = (int)c[t];
  out[6 * t + 0] = (unsigned)__vimin3_s32(ai, ny, ci);
  out[6 * t + 1] = (unsigned)__vimax3_s32(ai, ny, ci);
  out[6 * t + 2] = (unsigned)__vimax_s32_relu(ai, ny);
  out[6 * t + 3] = (unsigned)__vimin3_s32_relu(ai, ny, ci);
  out[6 * t + 4] = (unsigned)__vimax3_s32_relu(ai, ny, ci);
  out[6 * t + 5] = (unsigned)__vimin_s32_relu(ny, ai);
}'''


def _dpx(a, b, c):
    """The six columns of DPX_NEG_SRC for int64 operands (b already negated or not)."""
    relu = lambda x: np.maximum(x, 0)   # noqa: E731
    return np.stack([np.minimum(np.minimum(a, b), c), np.maximum(np.maximum(a, b), c), relu(np.maximum(a, b)),
                     relu(np.minimum(relu(np.minimum(a, b)), c)), relu(np.maximum(relu(np.maximum(a, b)), c)),
                     relu(np.minimum(b, a))], axis=1).astype(np.uint32)


def test_a_negation_ptxas_folds_into_a_three_input_dpx_min_max_is_lost_on_the_gpu():
    """Seeds 3536 1053 3061 1115 3285 3809 4748 1700 2357 (docs/fuzz_report.md): ``__vimin3_s32(a,
    (int)(0u - y), c)`` and the other three-input DPX forms. ptxas (CUDA 13.0) folds the ``neg.s32``
    into ``VIMNMX3 R, a, y, c`` and drops the minus, so the H200 computes with y; the two-input
    ``VIMNMX.RELU`` keeps it. The emulator follows the PTX; the GPU's bytes are in dpx_neg_h200.npz."""
    import os
    z = np.load(os.path.join(os.path.dirname(__file__), "dpx_neg_h200.npz"))
    a, y, c, gpu = z["a"], z["y"], z["c"], z["gpu"]
    out = np.zeros(6 * len(a), np.uint32)
    run(DPX_NEG_SRC, "dpx_neg", a, y, c, out, n=len(a))
    s = lambda x: x.astype(np.int32).astype(np.int64)   # noqa: E731
    ny = s((np.uint32(0) - y).astype(np.uint32))
    assert (out.reshape(-1, 6) == _dpx(s(a), ny, s(c))).all()                 # the PTX's meaning
    lost = _dpx(s(a), s(y), s(c))                                             # the minus dropped
    assert (gpu[:, [0, 1, 3, 4]] == lost[:, [0, 1, 3, 4]]).all()
    assert (gpu[:, [2, 5]] == _dpx(s(a), ny, s(c))[:, [2, 5]]).all()          # two inputs: kept


BYTE_SRC = r'''
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void byte_store(const unsigned short* a, const float* b, unsigned char* out) {
  __shared__ unsigned char s[512];
  int t = threadIdx.x;
  s[t] = (unsigned char)__bfloat16_as_ushort(__hadd_rn(__ushort_as_bfloat16(a[t]), __float2bfloat16_rz(b[t])));
  s[256 + t] = (unsigned char)__half_as_ushort(__hadd_rn(__ushort_as_half(a[t]), __float2half_rn(b[t])));
  __syncthreads();
  out[t] = s[t];
  out[256 + t] = s[256 + t];
  out[512 + t] = (signed char)__bfloat16_as_ushort(__hmul_rn(__ushort_as_bfloat16(a[t]), __float2bfloat16_rn(b[t])));
}
extern "C" __global__ void bits16(const unsigned short* a, const float* b, unsigned short* out) {
  int t = threadIdx.x;
  out[t] = __bfloat16_as_ushort(__hadd_rn(__ushort_as_bfloat16(a[t]), __float2bfloat16_rz(b[t])));
  out[256 + t] = __half_as_ushort(__hadd_rn(__ushort_as_half(a[t]), __float2half_rn(b[t])));
  out[512 + t] = __bfloat16_as_ushort(__hmul_rn(__ushort_as_bfloat16(a[t]), __float2bfloat16_rn(b[t])));
}'''


def test_a_half_results_low_byte_stored_by_ptxas_is_the_number_converted_not_the_bits():
    """Seeds 272 4931 and more (docs/fuzz_report.md): ``(unsigned char)__bfloat16_as_ushort(x)``
    stores the low byte of x's bits (PTX: ``add.rn.bf16 %rs, ...; st.u8 [..], %rs``), but ptxas (CUDA
    13.0) emits ``F2I.U8.BF16.TRUNC.NTZ`` (``.F16`` for halves): the value truncated and clamped to
    [0, 255], NaN 0. So 9.2e18 (0x5f00) stores 0xff on the H200 where its bits give 0x00. The emulator
    stores the bits, as the PTX says; the H200's bytes are in byte_store_h200.npz."""
    import os
    z = np.load(os.path.join(os.path.dirname(__file__), "byte_store_h200.npz"))
    a, b, gpu = z["a"], z["b"], z["gpu"].reshape(3, 256).astype(np.int64)
    out, bits = np.zeros(768, np.uint8), np.zeros(768, np.uint16)
    run(BYTE_SRC, "byte_store", a, b, out, n=256)
    run(BYTE_SRC, "bits16", a, b, bits, n=256)
    out, bits = out.reshape(3, 256).astype(np.int64), bits.reshape(3, 256)
    assert (out == (bits & 0xFF)).all()                                      # the PTX: the bits' low byte
    values = np.stack([(bits[0].astype(np.uint32) << 16).view(np.float32), bits[1].view(np.float16).astype(np.float32),
                       (bits[2].astype(np.uint32) << 16).view(np.float32)])
    number = np.clip(np.trunc(np.nan_to_num(values.astype(np.float64), nan=0.0)), 0, 255)
    assert (gpu == number).all()                                             # ptxas: F2I.U8 of the number
    assert (gpu != out).sum() > 200


OWN_TILE_SRC = r'''
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void own_tile(double* out) {
  __shared__ __align__(128) double tile[64];
  for (int i = threadIdx.x; i < 64; i += 32) tile[i] = blockIdx.x * 100 + i;
  __syncwarp();
  if (blockIdx.x == 1) {          // block 1 alone: 32 lanes x 2 fragment elements, as many as both blocks' lanes
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> c;
    wmma::load_matrix_sync(c, tile, 8, wmma::mem_row_major);
    wmma::store_matrix_sync(tile, c, 8, wmma::mem_col_major);     // back into its own tile, transposed
    __syncwarp();
    for (int i = threadIdx.x; i < 64; i += 32) out[i] = tile[i];
  }
}'''


def test_a_wmma_load_reads_its_own_blocks_shared_memory():
    """Seeds 1108 1602 3254 3357 4880: a wmma.load/store in one block of a batch read (and wrote) another
    block's shared memory when its lanes' fragment elements happened to number as many as the batch's
    lanes (here block 1's 32 lanes x 2 doubles = 64 = both blocks' lanes): the address lookup took that
    for "every lane in order" and gave the first half of the elements block 0's shared memory."""
    out = np.zeros(64, np.float64)
    before = current()
    set_device("H100")
    try:
        cudalab.compile(OWN_TILE_SRC, options=["-arch=compute_90"]).get_kernel("own_tile").launch(2, 32, (out,))
    finally:
        set_device(before)
    rows, cols = np.divmod(np.arange(64), 8)
    assert out.tolist() == (100 + cols * 8 + rows).tolist()     # block 1's own values, transposed


def test_a_zero_accumulator_counts_as_two_to_the_minus_133_when_the_tensor_core_aligns():
    """Seed 1908's last three bf16 elements: with C = 0 the tensor core keeps products down to
    2**-158, as if C's exponent were -133 (25 bits below it are kept); a subnormal C counts as -126.
    Fifteen products of -2**-149 and one of +2**-158 give -14 * 2**-149 (the small one kept, so the
    truncated sum is one unit nearer zero), +2**-159 gives -15 * 2**-149 (cut); on C = 2**-149 the cut
    is at 2**-151. Every configuration of tools/bf16_probe.py (1,186 warps, an H200's D) matches."""
    import os
    import sys
    from cudalab.emulator.mma import dot_float
    tiny = 2.0 ** -149

    def d(small, c):
        a = np.full((1, 1, 16), 2.0 ** -126)
        b = np.array([-2.0 ** -23] * 15 + [small * 2.0 ** 126])[None, :, None]
        return float(dot_float(a, b, np.array([[[c]]]))[0, 0, 0]) / tiny
    assert [d(2.0 ** -158, 0.0), d(2.0 ** -159, 0.0), d(2.0 ** -159, -0.0)] == [-14, -15, -15]
    assert [d(2.0 ** -151, tiny), d(2.0 ** -152, tiny)] == [-13, -14]
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
    import bf16_probe
    assert bf16_probe.check() == {}


def test_a_zero_tensor_core_sum_is_plus_zero_even_of_negative_zeros():
    """Seeds 153 and 3082 (wmma f16 accumulators): with C = -0 and every product -0 the emulator gave
    -0, as IEEE addition would; the H100 and the H200 give +0: the tensor core adds integers."""
    from cudalab.emulator.mma import dot_float, to_f16
    a = np.array([[[-0.0, 0.0, -1e-30, 2.0]]])
    b = np.array([[[1.0], [-3.0], [0.0], [-0.0]]])
    d = dot_float(a, b, np.array([[[-0.0]]]), emin=-14)
    assert not np.signbit(d[0, 0, 0]) and not np.signbit(to_f16(d)[0, 0, 0])
