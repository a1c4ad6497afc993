"""Integer arithmetic, shifts, bit intrinsics and SIMD-in-a-word intrinsics on edge-case words."""
import numpy as np

from . import Corpus, i32_mix, i64_mix

CASES = Corpus("integer")
case = CASES.case


def u32(rng, n):
    return i32_mix(rng, n).view(np.uint32)


def nonzero_divisors(b):
    """Divisors that keep C++ defined: no zero, and no -1 (INT_MIN / -1 overflows)."""
    return np.where((b == 0) | (b == -1), 3, b).astype(b.dtype)


case("wrapping_add_sub_mul", r'''
__global__ void wrap(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  out[0 * n + i] = x + y;
  out[1 * n + i] = x - y;
  out[2 * n + i] = x * y;
  out[3 * n + i] = (unsigned)(((int)x >> 1) + 12345);
  out[4 * n + i] = -x;
  out[5 * n + i] = x * 3u + y * 5u - 7u;
}''', "wrap", 2, 64, lambda r: [u32(r, 128), u32(r, 128)[::-1].copy(), np.zeros((6, 128), np.uint32), np.int32(128)])

case("signed_div_mod", r'''
__global__ void divmod(const int* a, const int* b, int* q, int* m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { q[i] = a[i] / b[i]; m[i] = a[i] % b[i]; }
}''', "divmod", 4, 64, lambda r: [i32_mix(r, 256), nonzero_divisors(i32_mix(r, 256)), np.zeros(256, np.int32),
                                   np.zeros(256, np.int32), np.int32(256)])

case("unsigned_div_mod", r'''
__global__ void udivmod(const unsigned* a, const unsigned* b, unsigned* q, unsigned* m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { q[i] = a[i] / b[i]; m[i] = a[i] % b[i]; }
}''', "udivmod", 4, 64, lambda r: [u32(r, 256), np.maximum(u32(r, 256) >> r.integers(0, 32, 256).astype(np.uint32), 1),
                                    np.zeros(256, np.uint32), np.zeros(256, np.uint32), np.int32(256)])

case("int64_div_mod", r'''
__global__ void divmod64(const long long* a, const long long* b, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = a[i] / b[i];
  out[4 * i + 1] = a[i] % b[i];
  unsigned long long ua = a[i], ub = b[i];
  out[4 * i + 2] = (long long)(ua / ub);
  out[4 * i + 3] = (long long)(ua % ub);
}''', "divmod64", 2, 64, lambda r: [i64_mix(r, 128), nonzero_divisors(i64_mix(r, 128) >> r.integers(0, 60, 128)),
                                     np.zeros(512, np.int64), np.int32(128)])

case("division_by_constants", r'''
__global__ void byconst(const int* a, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  unsigned u = (unsigned)x;
  out[8 * i + 0] = x / 7;   out[8 * i + 1] = x % 7;
  out[8 * i + 2] = x / -3;  out[8 * i + 3] = x / 16;
  out[8 * i + 4] = x % 16;  out[8 * i + 5] = (int)(u / 10u);
  out[8 * i + 6] = (int)(u % 1000000007u);
  out[8 * i + 7] = (int)((long long)x * 1000003 % 998244353);
}''', "byconst", 2, 64, lambda r: [i32_mix(r, 128), np.zeros(1024, np.int32), np.int32(128)])

case("shifts_32_and_64", r'''
__global__ void shifts(const int* a, const int* s, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], k = s[i] & 31, k64 = s[i] & 63;
  unsigned u = (unsigned)x;
  long long w = ((long long)x << 32) ^ (long long)(u * 2654435761u);
  out[6 * i + 0] = (int)(u << k);
  out[6 * i + 1] = x >> k;
  out[6 * i + 2] = u >> k;
  out[6 * i + 3] = (long long)((unsigned long long)w << k64);
  out[6 * i + 4] = w >> k64;
  out[6 * i + 5] = (long long)((unsigned long long)w >> k64);
}''', "shifts", 2, 64, lambda r: [i32_mix(r, 128), r.integers(0, 64, 128).astype(np.int32), np.zeros(768, np.int64),
                                  np.int32(128)])

case("rotate_idiom_and_bitwise", r'''
__device__ unsigned rotl(unsigned x, int r) { return (x << r) | (x >> (32 - r)); }
__global__ void rot(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  int r = 1 + (int)(y % 31u);
  out[6 * i + 0] = rotl(x, r);
  out[6 * i + 1] = x & ~y;
  out[6 * i + 2] = (x | y) ^ (x & y);
  out[6 * i + 3] = ~(x ^ y) & (x | 0xF0F0F0F0u);
  out[6 * i + 4] = (x & y) | (~x & 0x12345678u) | (y ^ 0xDEADBEEFu);
  out[6 * i + 5] = x & (x - 1);
}''', "rot", 2, 64, lambda r: [u32(r, 128), u32(r, 128), np.zeros(768, np.uint32), np.int32(128)])

case("popc_clz_ffs_brev", r'''
__global__ void bitcount(const unsigned* a, const unsigned long long* w, int* out, unsigned long long* out64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i];
  unsigned long long y = w[i];
  out[8 * i + 0] = __popc(x);   out[8 * i + 1] = __clz(x);
  out[8 * i + 2] = __ffs(x);    out[8 * i + 3] = (int)__brev(x);
  out[8 * i + 4] = __popcll(y); out[8 * i + 5] = __clzll(y);
  out[8 * i + 6] = __ffsll(y);  out[8 * i + 7] = 31 - __clz(x | 1);
  out64[i] = __brevll(y);
}''', "bitcount", 2, 64, lambda r: [u32(r, 128), i64_mix(r, 128).view(np.uint64), np.zeros(1024, np.int32),
                                     np.zeros(128, np.uint64), np.int32(128)])

case("byte_perm_selectors", r'''
__global__ void perm(const unsigned* a, const unsigned* b, const unsigned* sel, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = __byte_perm(a[i], b[i], sel[i]);
  out[4 * i + 1] = __byte_perm(a[i], b[i], 0x0123);
  out[4 * i + 2] = __byte_perm(a[i], 0, 0x3210 | 0x8888);
  out[4 * i + 3] = __byte_perm(a[i], b[i], 0x7531);
}''', "perm", 1, 96, lambda r: [u32(r, 96), u32(r, 96), r.integers(0, 2 ** 32, 96, dtype=np.uint64).astype(np.uint32),
                                np.zeros(384, np.uint32), np.int32(96)])

case("funnelshift_all_forms", r'''
__global__ void funnel(const unsigned* lo, const unsigned* hi, const int* s, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = __funnelshift_l(lo[i], hi[i], s[i]);
  out[4 * i + 1] = __funnelshift_lc(lo[i], hi[i], s[i]);
  out[4 * i + 2] = __funnelshift_r(lo[i], hi[i], s[i]);
  out[4 * i + 3] = __funnelshift_rc(lo[i], hi[i], s[i]);
}''', "funnel", 1, 128, lambda r: [u32(r, 128), u32(r, 128), np.concatenate([np.arange(70), r.integers(-5, 200, 58)]).astype(np.int32),
                                   np.zeros(512, np.uint32), np.int32(128)])

case("sad_mul24_halving_add", r'''
__global__ void misc(const int* a, const int* b, const int* c, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i], z = c[i];
  out[8 * i + 0] = __sad(x, y, (unsigned)z);
  out[8 * i + 1] = (int)__usad((unsigned)x, (unsigned)y, (unsigned)z);
  out[8 * i + 2] = __mul24(x, y);
  out[8 * i + 3] = (int)__umul24((unsigned)x, (unsigned)y);
  out[8 * i + 4] = __hadd(x, y);
  out[8 * i + 5] = __rhadd(x, y);
  out[8 * i + 6] = (int)__uhadd((unsigned)x, (unsigned)y);
  out[8 * i + 7] = (int)__urhadd((unsigned)x, (unsigned)y);
}''', "misc", 2, 64, lambda r: [i32_mix(r, 128), i32_mix(r, 128)[::-1].copy(), r.integers(0, 1000, 128).astype(np.int32),
                                np.zeros(1024, np.int32), np.int32(128)])

case("mulhi_all_widths", r'''
__global__ void mulhi(const long long* a, const long long* b, long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long x = a[i], y = b[i];
  out[6 * i + 0] = __mulhi((int)x, (int)y);
  out[6 * i + 1] = __umulhi((unsigned)x, (unsigned)y);
  out[6 * i + 2] = __mul64hi(x, y);
  out[6 * i + 3] = (long long)__umul64hi((unsigned long long)x, (unsigned long long)y);
  out[6 * i + 4] = (long long)(int)x * (long long)(int)y;
  out[6 * i + 5] = (long long)((unsigned long long)(unsigned)x * (unsigned)y);
}''', "mulhi", 2, 64, lambda r: [i64_mix(r, 128), i64_mix(r, 128)[::-1].copy(), np.zeros(768, np.int64), np.int32(128)])

case("min_max_abs_integer", r'''
__global__ void minmax(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  out[6 * i + 0] = min(x, y);
  out[6 * i + 1] = max(x, y);
  out[6 * i + 2] = (int)umin((unsigned)x, (unsigned)y);
  out[6 * i + 3] = (int)umax((unsigned)x, (unsigned)y);
  out[6 * i + 4] = x == (-2147483647 - 1) ? 0 : abs(x);
  out[6 * i + 5] = (int)(llmax((long long)x * 3, (long long)y * -5) >> 1);
}''', "minmax", 2, 64, lambda r: [i32_mix(r, 128), i32_mix(r, 128)[::-1].copy(), np.zeros(768, np.int32), np.int32(128)])

case("narrow_types_char_short", r'''
__global__ void narrow(const int* a, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i];
  signed char c = (signed char)x;
  unsigned char uc = (unsigned char)x;
  short s = (short)x;
  unsigned short us = (unsigned short)x;
  out[6 * i + 0] = c;
  out[6 * i + 1] = uc;
  out[6 * i + 2] = s;
  out[6 * i + 3] = us;
  out[6 * i + 4] = (signed char)(c * 3 + uc);
  out[6 * i + 5] = (short)(s * s) + (unsigned short)(us + 40000);
}''', "narrow", 2, 64, lambda r: [i32_mix(r, 128), np.zeros(768, np.int32), np.int32(128)])

case("signed_unsigned_compare", r'''
__global__ void cmp(const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = a[i], y = b[i];
  unsigned ux = x, uy = y;
  long long lx = x;
  out[i] = (x < y) | (ux < uy) << 1 | (x <= y) << 2 | (ux >= uy) << 3 | (x == y) << 4 |
           (lx * 2 > (long long)y) << 5 | ((x > 0) != (ux > 0u)) << 6 | (x < 0 ? 1 : 0) << 7;
}''', "cmp", 2, 64, lambda r: [i32_mix(r, 128), np.roll(i32_mix(r, 128), 5), np.zeros(128, np.int32), np.int32(128)])

case("dp4a_dp2a", r'''
__global__ void dots(const int* a, const int* b, const int* c, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[4 * i + 0] = __dp4a(a[i], b[i], c[i]);
  out[4 * i + 1] = (int)__dp4a((unsigned)a[i], (unsigned)b[i], (unsigned)c[i]);
  out[4 * i + 2] = __dp2a_lo(a[i], b[i], c[i]);
  out[4 * i + 3] = __dp2a_hi(a[i], b[i], c[i]);
}''', "dots", 2, 64, lambda r: [i32_mix(r, 128), i32_mix(r, 128)[::-1].copy(), i32_mix(r, 128), np.zeros(512, np.int32),
                                np.int32(128)])

case("simd_video_intrinsics", r'''
__global__ void simd(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i];
  out[10 * i + 0] = __vadd2(x, y);      out[10 * i + 1] = __vsub4(x, y);
  out[10 * i + 2] = __vabsdiffu4(x, y); out[10 * i + 3] = __vcmpgtu4(x, y);
  out[10 * i + 4] = __vaddss2(x, y);    out[10 * i + 5] = __vsubus4(x, y);
  out[10 * i + 6] = __vmaxs2(x, y);     out[10 * i + 7] = __vminu4(x, y);
  out[10 * i + 8] = __vavgu4(x, y);     out[10 * i + 9] = __vsads2(x, y);
}''', "simd", 1, 96, lambda r: [u32(r, 96), u32(r, 96)[::-1].copy(), np.zeros(960, np.uint32), np.int32(96)])

case("bitfield_extract_insert_ptx", r'''
__global__ void bitfield(const unsigned* a, const unsigned* b, const int* pos, const int* len, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned u, s, ins;
  unsigned long long w;
  // PTX ISA: bfe/bfi take pos and len mod 256, and clamp them to the operand width.
  asm("bfe.u32 %0, %1, %2, %3;" : "=r"(u) : "r"(a[i]), "r"(pos[i]), "r"(len[i]));
  asm("bfe.s32 %0, %1, %2, %3;" : "=r"(s) : "r"(a[i]), "r"(pos[i]), "r"(len[i]));
  asm("bfi.b32 %0, %1, %2, %3, %4;" : "=r"(ins) : "r"(a[i]), "r"(b[i]), "r"(pos[i]), "r"(len[i]));
  asm("bfe.u64 %0, %1, %2, %3;" : "=l"(w) : "l"(((unsigned long long)b[i] << 32) | a[i]), "r"(pos[i]), "r"(len[i]));
  out[5 * i + 0] = u; out[5 * i + 1] = s; out[5 * i + 2] = ins;
  out[5 * i + 3] = (unsigned)w; out[5 * i + 4] = (unsigned)(w >> 32);
}''', "bitfield", 2, 64, lambda r: [u32(r, 128), u32(r, 128), r.integers(0, 80, 128).astype(np.int32),
                                    r.integers(0, 80, 128).astype(np.int32), np.zeros(640, np.uint32), np.int32(128)])

case("carry_chain_128bit_add_mul", r'''
__global__ void wide(const unsigned long long* a, const unsigned long long* b, unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long x = a[i], y = b[i];
  unsigned r0, r1, r2, r3;
  // 128-bit a:b + b:a with the carry flag (add.cc / addc.cc / addc)
  asm("add.cc.u32 %0, %4, %8;\n\taddc.cc.u32 %1, %5, %9;\n\taddc.cc.u32 %2, %6, %10;\n\taddc.u32 %3, %7, %11;"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"((unsigned)x), "r"((unsigned)(x >> 32)), "r"((unsigned)y), "r"((unsigned)(y >> 32)),
        "r"((unsigned)y), "r"((unsigned)(y >> 32)), "r"((unsigned)x), "r"((unsigned)(x >> 32)));
  out[4 * i + 0] = ((unsigned long long)r1 << 32) | r0;
  out[4 * i + 1] = ((unsigned long long)r3 << 32) | r2;
  out[4 * i + 2] = x * y;
  out[4 * i + 3] = __umul64hi(x, y) - (x - y);
}''', "wide", 2, 64, lambda r: [i64_mix(r, 128).view(np.uint64), i64_mix(r, 128)[::-1].view(np.uint64).copy(),
                                np.zeros(512, np.uint64), np.int32(128)])

case("hash_mixers", r'''
__device__ unsigned murmur_fmix32(unsigned h) {
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16; return h;
}
__device__ unsigned long long splitmix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
__global__ void hashes(const unsigned* a, unsigned* h32, unsigned long long* h64, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned h = a[i];
  for (int k = 0; k < 4; ++k) h = murmur_fmix32(h + k);
  h32[i] = h;
  h64[i] = splitmix64(((unsigned long long)a[i] << 17) ^ i);
}''', "hashes", 2, 64, lambda r: [u32(r, 128), np.zeros(128, np.uint32), np.zeros(128, np.uint64), np.int32(128)])

case("bfind_and_prmt_modes_ptx", r'''
__global__ void bfind(const unsigned* a, const unsigned* b, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = a[i], y = b[i], r[8];
  asm("bfind.u32 %0, %1;" : "=r"(r[0]) : "r"(x));
  asm("bfind.s32 %0, %1;" : "=r"(r[1]) : "r"(x));
  asm("bfind.shiftamt.u32 %0, %1;" : "=r"(r[2]) : "r"(x));
  asm("prmt.b32.f4e %0, %1, %2, %3;" : "=r"(r[3]) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.b4e %0, %1, %2, %3;" : "=r"(r[4]) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.rc8 %0, %1, %2, %3;" : "=r"(r[5]) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.ecl %0, %1, %2, %3;" : "=r"(r[6]) : "r"(x), "r"(y), "r"(i));
  asm("prmt.b32.rc16 %0, %1, %2, %3;" : "=r"(r[7]) : "r"(x), "r"(y), "r"(i));
  for (int k = 0; k < 8; ++k) out[8 * i + k] = r[k];
}''', "bfind", 1, 64, lambda r: [u32(r, 64), u32(r, 64), np.zeros(512, np.uint32), np.int32(64)])
