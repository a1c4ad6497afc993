"""Floating-point results bit for bit as an H100 gives them: rounding modes, NaN bits, .sat/.ftz,
contraction. Every expected bit pattern below was recorded on an H100 (tests/kernels/recorded)."""
import numpy as np
import pytest

import cudalab

C_TYPE = {np.dtype(np.float32): ("float", "f"), np.dtype(np.float64): ("double", "d"),
          np.dtype(np.uint16): ("unsigned short", "h"), np.dtype(np.uint32): ("unsigned", "r"),
          np.dtype(np.int32): ("int", "r"), np.dtype(np.int64): ("long long", "l")}


def ptx(instruction, out_dtype, *inputs):
    """Run one PTX instruction ("add.rz.f32 %0, %1, %2;") on each element of the inputs."""
    n = len(inputs[0])
    params = ", ".join(f"const {C_TYPE[x.dtype][0]}* in{k}" for k, x in enumerate(inputs))
    out_c, out_k = C_TYPE[np.dtype(out_dtype)]
    reads = ", ".join(f'"{C_TYPE[x.dtype][1]}"(in{k}[i])' for k, x in enumerate(inputs))
    src = f'''
    __global__ void one({params}, {out_c}* out) {{
      int i = threadIdx.x;
      {out_c} r;
      asm("{instruction}" : "={out_k}"(r) : {reads});
      out[i] = r;
    }}'''
    out = np.zeros(n, out_dtype)
    cudalab.compile(src).get_kernel("one")[1, n](*inputs, out)
    return out


def f32(*words):
    return np.array(words, np.uint32).view(np.float32)


def f64(*words):
    return np.array(words, np.uint64).view(np.float64)


def bits(x):
    return [hex(int(v)) for v in x.view(f"u{x.itemsize}")]


# ---------------------------------------------------------------- directed rounding

@pytest.mark.parametrize("instruction, a, b, want", [
    ("add.rz.f32 %0, %1, %2;", 0xBF800000, 0x22E28A36, 0xBF7FFFFF),      # -1 + 6e-18 toward zero
    ("add.rp.f32 %0, %1, %2;", 0x3F800000, 0x17618F42, 0x3F800001),      # 1 + 7e-25 up
    ("add.rm.f32 %0, %1, %2;", 0x3EAAAAAB, 0x83106809, 0x3EAAAAAA),      # 1/3 - 4e-37 down
    ("sqrt.rm.f32 %0, %1;", 0x3FC00000, None, 0x3F9CC470),                # sqrt(1.5) down
    ("sqrt.rp.f32 %0, %1;", 0x3F000000, None, 0x3F3504F4),                # sqrt(0.5) up
])
def test_f32_directed_rounding_sees_the_exact_result(instruction, a, b, want):
    inputs = [f32(a)] if b is None else [f32(a), f32(b)]
    assert bits(ptx(instruction, np.float32, *inputs)) == [hex(want)]


def test_f32_fma_rounding_toward_zero_steps_inside_the_nearest_value():
    got = ptx("fma.rz.f32 %0, %1, %2, %3;", np.float32, f32(0x3F800000), f32(0x17618F42), f32(0xD7E32E30))
    assert bits(got) == ["0xd7e32e2f"]


@pytest.mark.parametrize("instruction, inputs, want", [
    ("mul.rm.f64 %0, %1, %2;", (-1e-300, 3.662706012693357e-110), 0x8000000000000001),  # underflow: -min subnormal
    ("fma.rz.f64 %0, %1, %2, %3;", (0.5, 8.652990281499732e-229, -5.358820185820749e112), 0xD756486908747836),
    ("div.rp.f64 %0, %1, %2;", (1.0, 6.973092566653551e-221), 0x6DA4500D505988E7),
    ("div.rz.f64 %0, %1, %2;", (1.5, 6.429231276328047e130), 0x24D08F7518ADF973),
    ("rcp.rm.f64 %0, %1;", (2.5,), 0x3FD9999999999999),
    ("sqrt.rz.f64 %0, %1;", (0.5,), 0x3FE6A09E667F3BCC),
    ("fma.rn.f64 %0, %1, %2, %3;", (1.5, float.fromhex("-0x1.07c961a6863e7p+999"), -1.5), 0xFE68BAE1279C95DB),
])
def test_f64_rounding_from_error_free_transformations(instruction, inputs, want):
    got = ptx(instruction, np.float64, *[np.array([x], np.float64) for x in inputs])
    assert bits(got) == [hex(want)]


def test_directed_rounding_of_an_overflow_stops_at_the_largest_float():
    big = np.array([3e38], np.float32)
    assert ptx("add.rz.f32 %0, %1, %2;", np.float32, big, big)[0] == np.finfo(np.float32).max
    assert np.isinf(ptx("add.rp.f32 %0, %1, %2;", np.float32, big, big)[0])


def test_int_to_half_in_each_rounding_mode():
    x = np.array([65500, 65505], np.int32)
    assert bits(ptx("cvt.rz.f16.s32 %0, %1;", np.uint16, x)) == ["0x7bfe", "0x7bff"]   # 65472, 65504
    assert bits(ptx("cvt.rp.f16.s32 %0, %1;", np.uint16, x)) == ["0x7bff", "0x7c00"]   # 65504, inf


# ---------------------------------------------------------------- NaN bits

def test_f32_sign_ops_and_rounding_give_the_canonical_nan():
    nan = f32(0x7FC00000, 0xFFC00000, 0x7F800001)
    for instruction in ("neg.f32 %0, %1;", "abs.f32 %0, %1;", "cvt.rni.f32.f32 %0, %1;"):
        assert bits(ptx(instruction, np.float32, nan)) == ["0x7fffffff"] * 3


def test_half_to_float_nan_is_canonical():
    assert bits(ptx("cvt.f32.f16 %0, %1;", np.float32, np.array([0x7C01, 0xFE55], np.uint16))) == ["0x7fffffff"] * 2


def test_double_nan_narrows_with_its_sign_and_payload_top_bits():
    nan = f64(0x7FF82468A0000000, 0xFFF8000000000000, 0x7FF0000000000001)
    assert bits(ptx("cvt.rn.f32.f64 %0, %1;", np.float32, nan)) == ["0x7fc12345", "0xffc00000", "0x7fc00000"]
    nan = f64(0x7FF8000012345678, 0xFFF8000000000000, 0x7FF0000000000001)
    assert bits(ptx("cvt.rn.f16.f64 %0, %1;", np.uint16, nan)) == ["0x7e00", "0xfe00", "0x7e00"]


def test_nan_to_integer():
    assert ptx("cvt.rzi.s32.f32 %0, %1;", np.int32, f32(0x7FC00000)).tolist() == [0]
    assert ptx("cvt.rzi.s32.f64 %0, %1;", np.int32, f64(0x7FF8000000000000)).tolist() == [-2 ** 31]
    assert ptx("cvt.rmi.s64.f32 %0, %1;", np.int64, f32(0x7FC00000)).tolist() == [-2 ** 63]


def test_f64_abs_quiets_a_signalling_nan():
    assert bits(ptx("abs.f64 %0, %1;", np.float64, f64(0x7FF0000000000001))) == ["0x7ff8000000000001"]


# ---------------------------------------------------------------- .sat, .ftz, testp

def test_sat_turns_minus_zero_into_plus_zero():
    z = f32(0x80000000)
    assert bits(ptx("add.sat.f32 %0, %1, %2;", np.float32, z, z)) == ["0x0"]
    assert bits(ptx("cvt.sat.f32.f32 %0, %1;", np.float32, z)) == ["0x0"]


def test_ftz_flushes_a_result_that_is_tiny_before_rounding_up():
    tiny, below_one = f32(0x00800000), f32(0x3F7FFFFF)
    assert bits(ptx("mul.ftz.f32 %0, %1, %2;", np.float32, tiny, below_one)) == ["0x0"]
    # tiny * -1e-10 + tiny is below tiny, but rounds to tiny even with 24 bits and no exponent limit
    got = ptx("fma.rn.ftz.f32 %0, %1, %2, %3;", np.float32, tiny, f32(0xAEDBE6FF), tiny)
    assert bits(got) == ["0x800000"]


def test_testp_normal_counts_zero_as_normal():
    x = f32(0x00000000, 0x80000000, 0x3F800000, 0x00000001, 0x7F800000)
    got = ptx("{ .reg .pred p; testp.normal.f32 p, %1; selp.u32 %0, 1, 0, p; }", np.uint32, x)
    assert got.tolist() == [1, 1, 1, 0, 0]


def test_half2_comparison_writes_one_point_zero_per_half():
    a = np.array([0x3C00BC00], np.uint32)        # (high 1.0, low -1.0)
    b = np.array([0x00000000], np.uint32)        # (0.0, 0.0)
    assert bits(ptx("set.lt.f16x2.f16x2 %0, %1, %2;", np.uint32, a, b)) == ["0x3c00"]


def test_integer_remainder_by_zero_is_all_ones():
    a, z = np.array([7, -7], np.int32), np.zeros(2, np.int32)
    assert ptx("rem.s32 %0, %1, %2;", np.int32, a, z).tolist() == [-1, -1]
    assert ptx("rem.u32 %0, %1, %2;", np.int32, a, z).tolist() == [-1, -1]


# ---------------------------------------------------------------- contraction by ptxas

def test_a_single_use_product_is_fused_into_the_add_like_ptxas_does():
    src = r'''
    __global__ void k(const float* a, const float* b, const float* c, float* out) {
      float x = a[0], y = b[0], z = c[0];
      out[0] = x * y + z;        // x*y is used twice (here and below): a separate mul and add
      out[1] = x * y - x * z;    // x*z is used once: fused into fma(-x, z, x*y)
      out[2] = __fadd_rn(__fmul_rn(x, y), -__fmul_rn(x, z));   // .rn: never contracted
    }'''
    out = np.zeros(3, np.float32)
    cudalab.compile(src).get_kernel("k")[1, 1](f32(0x3F80028F), f32(0x3F7FD015), f32(0xBF8020B6), out)
    assert bits(out) == ["0xbad87400", "0x400006ef", "0x400006f0"]


def test_a_fused_subtraction_passes_a_nan_with_its_sign():
    # x*y - z becomes fma(x, y, -z): the minus is an operand modifier of the H100's DFMA, which passes a
    # NaN unchanged (libcu++'s complex division computes b*c - a*d so: its NaN quotients kept their sign
    # on an H100, tests/kernels' libcudacxx_complex_arithmetic)
    nan = f64(0x7FF8000012345678, 0xFFF8000000000001, 0x7FF0000000000001)
    one = np.ones(3)
    got = ptx("{ .reg .f64 p; mul.f64 p, %1, %2; sub.f64 %0, p, %3; }", np.float64, one, one, nan)
    assert bits(got) == ["0x7ff8000012345678", "0xfff8000000000001", "0x7ff8000000000001"]
    got = ptx("{ .reg .f64 p; mul.f64 p, %1, %2; sub.f64 %0, %3, p; }", np.float64, nan, one, one)
    assert bits(got) == ["0x7ff8000012345678", "0xfff8000000000001", "0x7ff8000000000001"]


# ---------------------------------------------------------------- special function unit (MUFU)
# ex2/rcp/rsqrt/sqrt/lg2/sin/cos.approx.f32 run on the H100's special function unit, which is not
# correctly rounded: libdevice's expf, tanhf, rsqrtf, __fdividef, -use_fast_math's sqrtf, logf, sinf...
# inherit its bits. Expected values: the GPU's, from tools/mufu_probe.cu, tools/mufu_sqrt_lg2_probe.cu
# (an H200), tools/mufu_sin_cos_probe.cu (an H100) and the corpus (tests/kernels/recorded); the comment
# gives the nearest float.

@pytest.mark.parametrize("instruction, x, want", [
    ("ex2.approx.ftz.f32 %0, %1;", 0x3FAD31E4, 0x40237E36),   # 2^1.353085: nearest 0x40237e35
    ("ex2.approx.ftz.f32 %0, %1;", 0xBF000000, 0x3F3504F2),   # 2^-0.5: nearest 0x3f3504f3
    ("ex2.approx.ftz.f32 %0, %1;", 0xBEB6D480, 0x3F47DE6D),   # 2^-0.35709: nearest 0x3f47de6f, 2 ulp off
    ("ex2.approx.ftz.f32 %0, %1;", 0xBFF7F9EB, 0x3E85AF2B),   # 2^-1.937314: nearest 0x3e85af2a
    ("ex2.approx.ftz.f32 %0, %1;", 0x33800AC0, 0x3F800000),   # 2^6e-8: the input is truncated to 2^-23 steps
    ("ex2.approx.ftz.f32 %0, %1;", 0xC2FD0000, 0x00000000),   # 2^-126.5 is subnormal: flushed
    ("rcp.approx.ftz.f32 %0, %1;", 0x3FAF7E35, 0x3F3AB83F),   # 1/1.371039: nearest 0x3f3ab83e
    ("rcp.approx.ftz.f32 %0, %1;", 0x3F96A541, 0x3F59846A),   # 1/1.176918: nearest 0x3f59846b
    ("rcp.approx.ftz.f32 %0, %1;", 0x80400000, 0xFF800000),   # 1/-subnormal: flushed input, -inf
    ("rsqrt.approx.f32 %0, %1;", 0x00000001, 0x64B504F2),     # 1/sqrt(2^-149): nearest 0x64b504f3
    ("sqrt.approx.ftz.f32 %0, %1;", 0x2CF18745, 0x362FD413),  # sqrt(6.86465e-12): nearest 0x362fd414
    ("sqrt.approx.ftz.f32 %0, %1;", 0x00400000, 0x00000000),  # sqrt(2^-127): the subnormal is flushed
    ("sqrt.approx.f32 %0, %1;", 0x00400000, 0x1FB504F3),      # without .ftz, scaled by 2^24 first: 2^-63.5
    ("lg2.approx.ftz.f32 %0, %1;", 0x00800000, 0xC2FBFFFF),   # log2(2^-126) is -126; the unit: -125.99999
    ("lg2.approx.ftz.f32 %0, %1;", 0x3F000000, 0xBF7FFFFE),   # log2(0.5) is -1; the unit: -0.99999988
    ("lg2.approx.ftz.f32 %0, %1;", 0x3F7FFFFF, 0xB24B4000),   # log2(1 - 2^-24): nearest 0xb3b8aa3c, 7x bigger
    ("lg2.approx.ftz.f32 %0, %1;", 0x3F8152E4, 0x3C733442),   # log2(1.0103421): nearest 0x3c7333d4
    ("lg2.approx.ftz.f32 %0, %1;", 0x00400000, 0xFF800000),   # a flushed subnormal: log2(0) = -inf
    ("lg2.approx.f32 %0, %1;", 0x00400000, 0xC2FDFFFF),       # log2(2^-127) as log2(2^-103) - 24: -126.99999
    ("sin.approx.ftz.f32 %0, %1;", 0x3F800000, 0x3F576AA3),   # sin(1): nearest 0x3f576aa4
    ("sin.approx.ftz.f32 %0, %1;", 0xBF800000, 0xBF576AA3),   # sin(-1): the same bits, negated
    ("sin.approx.f32 %0, %1;", 0x40C00000, 0xBE8F0F93),       # sin(6): nearest 0xbe8f0f8c, 7 ulp away
    ("sin.approx.f32 %0, %1;", 0x34800000, 0x34491200),       # sin(2^-22): the unit counts 2^-25 turns, one
    ("sin.approx.f32 %0, %1;", 0x34000000, 0x00000000),       # sin(2^-23): less than one step, 0
    ("sin.approx.f32 %0, %1;", 0x80400000, 0x80000000),       # a subnormal, with or without .ftz: -0
    ("sin.approx.f32 %0, %1;", 0x4E800000, 0x00000000),       # sin(2^30): whole turns only once divided
    ("cos.approx.ftz.f32 %0, %1;", 0x3F800000, 0x3F0A5141),   # cos(1): nearest 0x3f0a5140
    ("cos.approx.f32 %0, %1;", 0x3FC00000, 0x3D90DE97),       # cos(1.5): nearest 0x3d90deaa, 19 ulp away
    ("cos.approx.f32 %0, %1;", 0x4E800000, 0x3F800000),       # cos(2^30): 1 (sinf says -0.617)
])
def test_special_function_unit_gives_the_h100s_bits_not_the_nearest_float(instruction, x, want):
    assert bits(ptx(instruction, np.float32, f32(x))) == [hex(want)]


def test_fast_division_multiplies_by_the_special_function_units_reciprocal():
    got = ptx("div.approx.f32 %0, %1, %2;", np.float32, f32(0xC03F80C8, 0xC0379F4D), f32(0x3FC6006A, 0x40B07DA3))
    assert bits(got) == ["0xbff7990e", "0xbf052c11"]              # x/y rounded: 0xbff7990f, 0xbf052c10


@pytest.mark.parametrize("mode", ["rn", "rz", "rm", "rp"])
def test_f64_fma_of_zeros_and_specials_at_once_gives_the_exact_path_bits(mode):
    """Zero products (a sparse matrix) and infinite or NaN operands are decided for all lanes at
    once; each lane must carry the same bits as the exact rational path, zero signs included."""
    from cudalab.emulator.dtypes import _fma_exact, fma_f64
    v = np.array([0.0, -0.0, 1.0, -3.5, np.inf, -np.inf, np.nan, 2.0 ** -1000, -5e-324, 2.0 ** 1000, 1e300])
    a, b, c = (x.ravel() for x in np.meshgrid(v, v, v))
    got = fma_f64(a, b, c, mode)
    want = np.array([_fma_exact(float(x), float(y), float(z), mode) for x, y, z in zip(a, b, c)])
    nan_in = np.isnan(a) | np.isnan(b) | np.isnan(c)          # fma_f64 passes the first NaN operand on
    want = np.where(nan_in, np.where(np.isnan(a), a, np.where(np.isnan(b), b, c)), want)
    same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), list(zip(a[~same], b[~same], c[~same]))


def test_two_nan_doubles_multiplied_give_the_one_the_ptx_computes_later():
    """Of two NaN factors a DMUL passes its second SASS operand's, and ptxas orders the operands
    itself. A polynomial of the unit's 1/x (its NaN is 0x7fffffff00000000) times x * 3 (x's NaN,
    quieted), written in that order: an H100 gives x's NaN (its SASS: DMUL R6(poly), R8(x*3), the
    x * 3 computed early, next to the MUFU), as the PTX's order says, not the deeper polynomial's."""
    src = r'''
    __global__ void deep(const double* y, double* out) {
      double x = y[threadIdx.x], u;
      asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(u) : "d"(x));
      double p = u;
      for (int k = 0; k < 8; ++k) p = fma(p, u, 0.25 * k + 1.0);
      double s = x * 3.0;
      out[threadIdx.x] = p * s;
    }'''
    x = f64(0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001)
    out = np.zeros(3)
    cudalab.compile(src).get_kernel("deep")[1, 3](x, out)
    # 0x7ff0000000000001's high word reads as infinity to the unit: 1/x is 0, only x * 3 is NaN
    assert [hex(v) for v in out.view(np.uint64)] == ["0x7ff8000000000000", "0xfff8000000000000", "0x7ff8000000000001"]
