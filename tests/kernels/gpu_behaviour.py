"""What the hardware does where C++ says "undefined": division by zero, INT_MIN / -1, huge shifts.

Explicitly separate from the rest of the corpus: C++ would let the compiler assume these never
happen, so each one is written in inline PTX, where the instruction itself is executed as is. The
PTX ISA leaves some of these results unspecified; the recorded GPU values are what students see.
"""
import numpy as np

from . import Corpus, F32_EDGES, i32_mix, i64_mix

CASES = Corpus("gpu_behaviour")
case = CASES.case

EDGE_DIVISORS = np.array([0, 0, 0, -1, -1, 1, 2, -2], np.int32)


case("ptx_div_rem_s32_u32_by_zero_and_overflow", r'''
__global__ void div0(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int q, r, uq, ur;
  asm("div.s32 %0, %1, %2;" : "=r"(q) : "r"(a[i]), "r"(b[i]));
  asm("rem.s32 %0, %1, %2;" : "=r"(r) : "r"(a[i]), "r"(b[i]));
  asm("div.u32 %0, %1, %2;" : "=r"(uq) : "r"(a[i]), "r"(b[i]));
  asm("rem.u32 %0, %1, %2;" : "=r"(ur) : "r"(a[i]), "r"(b[i]));
  out[4 * i + 0] = q; out[4 * i + 1] = r; out[4 * i + 2] = uq; out[4 * i + 3] = ur;
}''', "div0", 1, 128, lambda r: [i32_mix(r, 128), np.resize(EDGE_DIVISORS, 128), np.zeros(512, np.int32), np.int32(128)])

case("ptx_div_rem_64bit_by_zero_and_overflow", r'''
__global__ void div0_64(const long long* a, const long long* b, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long q, r, uq, ur;
  asm("div.s64 %0, %1, %2;" : "=l"(q) : "l"(a[i]), "l"(b[i]));
  asm("rem.s64 %0, %1, %2;" : "=l"(r) : "l"(a[i]), "l"(b[i]));
  asm("div.u64 %0, %1, %2;" : "=l"(uq) : "l"(a[i]), "l"(b[i]));
  asm("rem.u64 %0, %1, %2;" : "=l"(ur) : "l"(a[i]), "l"(b[i]));
  out[4 * i + 0] = q; out[4 * i + 1] = r; out[4 * i + 2] = uq; out[4 * i + 3] = ur;
}''', "div0_64", 1, 64, lambda r: [i64_mix(r, 64), np.resize(EDGE_DIVISORS, 64).astype(np.int64), np.zeros(256, np.int64),
                                   np.int32(64)])

case("ptx_abs_neg_int_min", r'''
__global__ void absneg(const int* a, const long long* w, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int ab, ng;
  long long ab64, ng64;
  asm("abs.s32 %0, %1;" : "=r"(ab) : "r"(a[i]));
  asm("neg.s32 %0, %1;" : "=r"(ng) : "r"(a[i]));
  asm("abs.s64 %0, %1;" : "=l"(ab64) : "l"(w[i]));
  asm("neg.s64 %0, %1;" : "=l"(ng64) : "l"(w[i]));
  out[4 * i + 0] = ab; out[4 * i + 1] = ng; out[4 * i + 2] = ab64; out[4 * i + 3] = ng64;
}''', "absneg", 1, 64, lambda r: [i32_mix(r, 64), i64_mix(r, 64), np.zeros(256, np.int64), np.int32(64)])

case("ptx_shift_amounts_past_width", r'''
__global__ void bigshift(const int* a, const unsigned* s, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int l, ra, rl;
  long long l64;
  // PTX ISA: shift amounts larger than the register width are clamped to the width.
  asm("shl.b32 %0, %1, %2;" : "=r"(l) : "r"(a[i]), "r"(s[i]));
  asm("shr.s32 %0, %1, %2;" : "=r"(ra) : "r"(a[i]), "r"(s[i]));
  asm("shr.u32 %0, %1, %2;" : "=r"(rl) : "r"(a[i]), "r"(s[i]));
  asm("shl.b64 %0, %1, %2;" : "=l"(l64) : "l"((long long)a[i]), "r"(s[i]));
  out[5 * i + 0] = l; out[5 * i + 1] = ra; out[5 * i + 2] = rl;
  out[5 * i + 3] = (int)l64; out[5 * i + 4] = (int)(l64 >> 32);
}''', "bigshift", 1, 128, lambda r: [i32_mix(r, 128), np.concatenate([np.arange(0, 70), [255, 256, 257, 2 ** 31, 2 ** 32 - 1],
                                                                       r.integers(0, 2 ** 32, 53, dtype=np.uint64)]).astype(np.uint32),
                                     np.zeros(640, np.int32), np.int32(128)])

case("ptx_float_to_int_cvt_nan_and_overflow", r'''
__global__ void cvtsat(const float* x, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int s, u;
  long long s64;
  asm("cvt.rzi.s32.f32 %0, %1;" : "=r"(s) : "f"(x[i]));
  asm("cvt.rni.u32.f32 %0, %1;" : "=r"(u) : "f"(x[i]));
  asm("cvt.rmi.s64.f32 %0, %1;" : "=l"(s64) : "f"(x[i]));
  out[4 * i + 0] = s; out[4 * i + 1] = u; out[4 * i + 2] = (int)s64; out[4 * i + 3] = (int)(s64 >> 32);
}''', "cvtsat", 1, 64, lambda r: [np.resize(F32_EDGES, 64), np.zeros(256, np.int32), np.int32(64)])
