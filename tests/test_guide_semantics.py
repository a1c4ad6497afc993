"""Device functions of the Programming Guide and the Math API that tests/kernels/guide.py found the
emulator getting wrong, one readable example each (the corpus cases hold the GPU's recorded bits)."""
import numpy as np

import cudalab


def test_float2_and_float4_atomic_add_are_elementwise_atomics():
    """sm_90's atomicAdd(float2*, float2) is atom.global.add.v2.f32: each element is its own atomic
    add, and the instruction returns the old pair."""
    src = r'''
    __global__ void add_pairs(const float* x, float2* pair, float4* quad, float2* old) {
      int i = threadIdx.x;
      old[i] = atomicAdd(&pair[i & 1], make_float2(x[i], 2.0f * x[i]));
      atomicAdd(quad, make_float4(1.0f, x[i], -x[i], (float)i));
    }'''
    x = np.arange(64, dtype=np.float32)
    pair, quad, old = np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(128, np.float32)
    cudalab.compile(src, options=["-arch=compute_90"]).get_kernel("add_pairs")[1, 64](x, pair, quad, old)
    even, odd = x[0::2].sum(), x[1::2].sum()
    assert pair.tolist() == [even, 2 * even, odd, 2 * odd]
    assert quad.tolist() == [64.0, x.sum(), -x.sum(), x.sum()]
    firsts = old.reshape(64, 2)[:, 0]           # every thread saw a distinct running sum of its slot
    assert sorted(firsts[0::2].tolist()) == sorted(np.concatenate(([0], np.cumsum(x[0::2])[:-1])).tolist())


def _bf16_round(x):
    """float64 -> nearest bfloat16 (8 significant bits, ties to even), for normal values."""
    m, e = np.frexp(x)
    return np.ldexp(np.rint(m * 256) / 256, e)


def _bf16_bits(x):
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def test_bfloat162_multiply_then_add_is_one_fma_on_sm90():
    """On sm_90 __hmul2 and + on __nv_bfloat162 are mul.bf16x2 and add.bf16x2, which ptxas fuses into
    one fma as it fuses float ones: rounded once. The _rn forms forbid that and round twice."""
    src = r'''
    #include <cuda_bf16.h>
    __global__ void muladd(const __nv_bfloat162* a, const __nv_bfloat162* b, const __nv_bfloat162* c,
                           __nv_bfloat162* fused, __nv_bfloat162* twice) {
      int i = threadIdx.x;
      fused[i] = __hmul2(a[i], b[i]) + c[i];
      twice[i] = __hadd2_rn(__hmul2_rn(a[i], b[i]), c[i]);
    }'''
    rng = np.random.default_rng(3)
    a, b, c = (_bf16_round(rng.uniform(1, 2, 256)) for _ in range(3))
    fused, twice = np.zeros(256, np.uint16), np.zeros(256, np.uint16)
    k = cudalab.compile(src, options=["-arch=compute_90"]).get_kernel("muladd")
    k[1, 128](_bf16_bits(a), _bf16_bits(b), _bf16_bits(c), fused, twice)
    once, two_roundings = _bf16_bits(_bf16_round(a * b + c)), _bf16_bits(_bf16_round(_bf16_round(a * b) + c))
    assert (once != two_roundings).sum() > 20
    assert fused.tolist() == once.tolist()
    assert twice.tolist() == two_roundings.tolist()


def test_ftz_widening_gives_float32s_canonical_nan():
    """Under -ftz=true, (double)x is cvt.ftz.f64.f32: the GPU widens float32's canonical NaN
    (0x7fffffff) whatever NaN came in; without the flag the payload and sign survive."""
    src = r'''
    __global__ void widen(const float* x, double* out) { out[threadIdx.x] = (double)x[threadIdx.x]; }'''
    x = np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC12345, 0x3F800000, 0x00000001], np.uint32).view(np.float32)
    flushed, kept = np.zeros(6, np.float64), np.zeros(6, np.float64)
    cudalab.compile(src, options=["-ftz=true"]).get_kernel("widen")[1, 6](x, flushed)
    cudalab.compile(src).get_kernel("widen")[1, 6](x, kept)
    assert [hex(v) for v in flushed.view(np.uint64)] == ["0x7fffffffe0000000"] * 4 + ["0x3ff0000000000000", "0x0"]
    assert [hex(v) for v in kept.view(np.uint64)[:4]] == ["0x7ff8000000000000", "0xfff8000000000000",
                                                         "0x7ff8000020000000", "0x7ff82468a0000000"]


def _asm_f64(instruction, x):
    src = f'''
    __global__ void one(const double* x, double* out) {{
      double r;
      asm("{instruction} %0, %1;" : "=d"(r) : "d"(x[threadIdx.x]));
      out[threadIdx.x] = r;
    }}'''
    out = np.zeros(len(x), np.float64)
    cudalab.compile(src).get_kernel("one")[1, len(x)](x, out)
    return [hex(v) for v in out.view(np.uint64)]


def test_float64_reciprocal_approximations_keep_only_the_high_word():
    """rcp.approx.ftz.f64 and rsqrt.approx.ftz.f64 are MUFU.RCP64H/RSQ64H: the unit answers in the
    high word only (the float32 table cut to 20 fraction bits), so 1/1.5 is 0.66666650772..., not
    2/3; rsqrt.approx.f64 without .ftz is that answer refined once by ptxas. Bits from an H200."""
    x = np.array([1.5, 2.5, -2.5, 0.0, np.inf, np.nan])
    assert _asm_f64("rcp.approx.ftz.f64", x) == ["0x3fe5555500000000", "0x3fd9999900000000", "0xbfd9999900000000",
                                                 "0x7ff0000000000000", "0x0", "0x7fffffff00000000"]
    assert _asm_f64("rsqrt.approx.ftz.f64", x) == ["0x3fea20bd00000000", "0x3fe43d1300000000", "0x7fffffff00000000",
                                                   "0x7ff0000000000000", "0x0", "0x7fffffff00000000"]
    assert _asm_f64("rsqrt.approx.f64", x) == ["0x3fea20bd700c2c3e", "0x3fe43d136248490f", "0xfff8000000000000",
                                               "0x7ff0000000000000", "0x0", "0x7ff8000000000000"]


def test_div_full_is_a_times_the_units_reciprocal():
    """-prec-div=false makes x / y div.full.f32: x times MUFU.RCP's 1/y (1 ulp from x / y rounded in
    57 of 256 recorded quotients), with both scaled by 1/4 when |y| >= 2^126 so 1/y stays normal."""
    src = r'''
    __global__ void quotient(const float* a, const float* b, float* out) {
      int i = threadIdx.x;
      out[i] = a[i] / b[i];
    }'''
    from cudalab.emulator import mufu
    a = np.array([86.16949462890625 * 3.0, 1.0, 7.0, -7.1886029e+17, 3.0], np.float32)
    b = np.array([3.0, 3.0, 10.0, 3.4028235e+38, 2.0 ** 127], np.float32)
    out = np.zeros(5, np.float32)
    cudalab.compile(src, options=["-prec-div=false"]).get_kernel("quotient")[1, 5](a, b, out)
    quarter = np.abs(b) >= 2.0 ** 126
    s = np.where(quarter, np.float32(0.25), np.float32(1))
    assert out.tolist() == ((a * s) * mufu.rcp_ftz(b * s)).tolist()
    assert out[3] != 0 and out[4] != 0          # no flush to zero at the top of the range


def test_bfloat16_rounding_to_integers_stays_bfloat16_on_sm90():
    """On sm_90 hfloor/hceil/htrunc/hrint of __nv_bfloat16 are cvt.rmi/rpi/rzi/rni.bf16.bf16: the
    integral value comes back as bfloat16 bits (1.0 is 0x3f80), with -0.0 and NaN kept as such."""
    src = r'''
    #include <cuda_bf16.h>
    __global__ void round_all(const __nv_bfloat16* x, __nv_bfloat16* out, int n) {
      int i = threadIdx.x;
      out[i] = hfloor(x[i]); out[n + i] = hceil(x[i]); out[2 * n + i] = htrunc(x[i]); out[3 * n + i] = hrint(x[i]);
    }'''
    values = np.array([1.5, -1.5, 2.5, -0.5, 0.25, -0.0, 100.5, -3.0], np.float32)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)          # all exact in bfloat16
    out = np.zeros(4 * len(bits), np.uint16)
    cudalab.compile(src, options=["-arch=compute_90"]).get_kernel("round_all")[1, len(bits)](bits, out, np.int32(len(bits)))
    back = (out.astype(np.uint32) << 16).view(np.float32).reshape(4, -1)
    for row, fn in zip(back, (np.floor, np.ceil, np.trunc, np.rint)):
        assert row.view(np.uint32).tolist() == fn(values).view(np.uint32).tolist()


def test_a_subtractions_carry_flag_means_no_borrow():
    """After sub.cc, CC.CF is the adder's carry (1 when nothing was borrowed): addc d, 0, 0 reads it.
    NVVM's unsigned __int128 division tests its remainder's sign that way; read as the borrow, the
    quotient of (2^127 + r) / (2^64 + s) came out one too big."""
    src = r'''
    __global__ void flags(const unsigned* a, const unsigned* b, unsigned* carry, unsigned long long* q,
                          const unsigned long long* x) {
      int i = threadIdx.x;
      unsigned c, d;
      asm("sub.cc.u32 %0, %2, %3;\n\taddc.u32 %1, 0, 0;" : "=r"(d), "=r"(c) : "r"(a[i]), "r"(b[i]));
      carry[i] = c;
      unsigned __int128 num = ((unsigned __int128)x[0] << 64) | x[1], den = ((unsigned __int128)x[2] << 64) | x[3];
      unsigned __int128 quotient = num / den;
      q[0] = (unsigned long long)(quotient >> 64); q[1] = (unsigned long long)quotient;
    }'''
    a = np.array([5, 5, 0, 0xFFFFFFFF], np.uint32)
    b = np.array([3, 7, 0, 0], np.uint32)
    carry, q = np.zeros(4, np.uint32), np.zeros(2, np.uint64)
    x = np.array([2 ** 63, 0x38AC1FEC541BAA45, 1, 0x772B934E130A88FA], np.uint64)
    cudalab.compile(src, options=["--device-int128"]).get_kernel("flags")[1, 4](a, b, carry, q, x)
    assert carry.tolist() == [1, 0, 1, 1]
    num, den = (2 ** 127 << 0) | 0x38AC1FEC541BAA45, (1 << 64) | 0x772B934E130A88FA
    assert (int(q[0]) << 64) | int(q[1]) == num // den


def test_device_malloc_returns_null_once_the_heap_is_used_up():
    """In-kernel malloc() draws on a heap of cudaLimitMallocHeapSize bytes (8 MiB by default): past it,
    malloc returns NULL, which is why the Programming Guide checks the pointer and raises the limit
    with cudaDeviceSetLimit before the launch."""
    src = r'''
    __global__ void grab(unsigned long long* out) {
      char* big = (char*)malloc(16u << 20);
      char* four = (char*)malloc(4u << 20);
      char* five = (char*)malloc(5u << 20);
      out[0] = big != nullptr; out[1] = four != nullptr; out[2] = five != nullptr;
      free(four);
      char* again = (char*)malloc(5u << 20);
      out[3] = again != nullptr;
      free(again); free(big); free(five);
    }'''
    kernel = cudalab.compile(src).get_kernel("grab")
    out = np.zeros(4, np.uint64)
    kernel[1, 1](out)
    assert out.tolist() == [0, 1, 0, 1]                 # 16 MiB > 8; 4 + 5 MiB > 8; 5 after freeing 4
    before = cudalab.device_limit("MallocHeapSize")
    try:
        cudalab.set_device_limit("MallocHeapSize", 64 << 20)
        kernel[1, 1](out)
        assert out.tolist() == [1, 1, 1, 1]
    finally:
        cudalab.set_device_limit("MallocHeapSize", before)


def test_double_to_bfloat16_keeps_a_nans_sign_and_top_payload_on_sm90():
    """On sm_90 __double2bfloat16 is one instruction, cvt.rn.bf16.f64: a NaN keeps its sign and the
    top 7 bits of its payload, quieted (an H100 gave these bits). For older targets cuda_bf16.h builds
    it from double -> float -> bfloat16, and that last cvt.rn.bf16.f32 gives 0x7fff for any NaN."""
    src = r'''
    #include <cuda_bf16.h>
    __global__ void narrow(const double* d, __nv_bfloat16* out) {
      out[threadIdx.x] = __double2bfloat16(d[threadIdx.x]);
    }'''
    d = np.array([0x7FF8000000000000, 0xFFF8000000000000, 0x7FF0000000000001, 0x7FF4000000000000,
                  0x7FFFFFFFFFFFFFFF, 0x3FF0100000000001, 0x47EFFFFFE0000000], np.uint64).view(np.float64)
    out = np.zeros(d.size, np.uint16)
    cudalab.compile(src, options=["-arch=compute_90"]).get_kernel("narrow")[1, d.size](d, out)
    assert [hex(v) for v in out] == ["0x7fc0", "0xffc0", "0x7fc0", "0x7fe0", "0x7fff",
                                     "0x3f81", "0x7f80"]      # 1 + 2^-8 + tiny rounds up; overflow: inf
    cudalab.compile(src).get_kernel("narrow")[1, d.size](d, out)
    assert [hex(v) for v in out[:5]] == ["0x7fff"] * 5


def test_fabs_of_a_nan_double_keeps_its_sign_through_the_math_library():
    """ptxas folds abs.f64 (fabs) into the next instruction as an operand modifier, and a NaN passes
    through a modifier unchanged, as through neg's: norm3d, rhypot and cyl_bessel_i0 of -NaN, which
    take |y| first, give -NaN on an H100 and an H200 (tests/kernels/guide.py), not +NaN."""
    src = r'''
    __global__ void norms(const double* y, double* out) {
      double v = y[threadIdx.x];
      out[3 * threadIdx.x] = norm3d(-1.0, v, 1.5);
      out[3 * threadIdx.x + 1] = rhypot(-1.0, v);
      out[3 * threadIdx.x + 2] = cyl_bessel_i0(v);
    }'''
    y = np.array([0xFFF8000000000000, 0x7FF8000012345678], np.uint64).view(np.float64)
    out = np.zeros(6)
    cudalab.compile(src).get_kernel("norms")[1, 2](y, out)
    assert [hex(v) for v in out.view(np.uint64)] == ["0xfff8000000000000"] * 3 + ["0x7ff8000012345678"] * 3
