// The H100's special function unit (MUFU) behind ex2/rcp/rsqrt/lg2.approx.f32, measured for
// cudalab/emulator/mufu.py. Writes raw_<name>.u32: the result bits for every float of one binade
// ([1, 2); [1, 4) for rsqrt; [-2, -1) for ex2_neg), then checks the table model of
// ex2.approx.ftz.f32 (input truncated to 7.23 fixed point, a negative fraction one's-complemented)
// and of rcp.approx.ftz.f32 against the GPU over all 2^32 inputs, NaNs apart, and prints the
// mismatch counts as JSON: counts[(rounding*2 + negation)*2 + sign] for ex2 (rounding 0 nearest
// even, 1 truncate, 2 nearest away; negation 0 one's, 1 two's complement), counts[12 + sign] for
// rcp. On an H100: only truncate + one's complement and rcp gave 0 and 0.
//   nvcc -arch=sm_90 -O2 -o mufu_probe tools/mufu_probe.cu && ./mufu_probe
// cudalab/emulator/mufu_h100.npz holds ex2 ([1, 2)), rcp and rsqrt as {name}_first (the first
// result's bits) and {name}_delta (differences of consecutive bit patterns, int8).
#include <cstdio>
#include <cstdint>
#include <vector>
typedef unsigned long long u64;
__device__ __forceinline__ float ex2f(float x){float r; asm("ex2.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float rcpf(float x){float r; asm("rcp.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float rsqf(float x){float r; asm("rsqrt.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float lg2f(float x){float r; asm("lg2.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float ex2n(float x){float r; asm("ex2.approx.f32 %0,%1;":"=f"(r):"f"(x)); return r;}

__global__ void table(int op, uint32_t base, uint32_t* out, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  float x = __uint_as_float(base + k);
  float r = op == 0 ? ex2f(x) : op == 1 ? rcpf(x) : op == 2 ? rsqf(x) : op == 3 ? lg2f(x) : ex2n(x);
  out[k] = __float_as_uint(r);
}

// fixed point 7.23 magnitude of a finite normal float with exponent field e < 134; rounding rv
__device__ uint32_t fixed23(uint32_t bits, int rv) {
  int e = (bits >> 23) & 255;
  uint32_t mant = (bits & 0x7fffff) | 0x800000;
  int shift = e - 127;
  if (shift >= 0) return mant << shift;
  int y = -shift;
  if (y > 31) return 0;
  uint32_t q = mant >> y, rem = mant & ((1u << y) - 1), half = 1u << (y - 1);
  if (rv == 0) { if (rem > half || (rem == half && (q & 1))) q++; }   // nearest even
  else if (rv == 2) { if (rem >= half) q++; }                          // nearest, ties away
  return q;                                                            // rv 1: truncate
}

__device__ uint32_t scale(uint32_t t, int n) {   // t: a positive normal float's bits; times 2^n, ftz
  int e = (int)((t >> 23) & 255) + n;
  if (e <= 0) return 0;
  if (e >= 255) return 0x7f800000;
  return (t & 0x7fffff) | ((uint32_t)e << 23);
}

__device__ uint32_t ex2_model(uint32_t bits, const uint32_t* T, int rv, int nv) {
  int e = (bits >> 23) & 255; uint32_t sign = bits >> 31;
  if (e == 0) return 0x3f800000;
  if (e == 255) return sign ? 0 : 0x7f800000;     // NaN excluded by caller
  if (e - 127 >= 7) return sign ? 0 : 0x7f800000;
  uint32_t q = fixed23(bits, rv);
  int n = q >> 23; uint32_t j = q & 0x7fffff;
  if (!sign) return scale(T[j], n - 1);            // T[j] = ex2(1 + j 2^-23)
  if (j == 0) return scale(0x3f800000, -n);
  uint32_t jj = nv == 0 ? 0x7fffff - j : 0x800000 - j;
  return scale(T[jj], -n - 2);
}

__device__ uint32_t rcp_model(uint32_t bits, const uint32_t* R) {
  int e = (bits >> 23) & 255; uint32_t sign = bits & 0x80000000u;
  if (e == 0) return sign | 0x7f800000;
  if (e == 255) return sign;                       // NaN excluded by caller
  return sign | scale(R[bits & 0x7fffff], 127 - e); // R[j] = rcp(1 + j 2^-23)
}

__global__ void check(u64 start, const uint32_t* T, const uint32_t* R, u64* counts, uint32_t* samples) {
  u64 i = start + blockIdx.x * (u64)blockDim.x + threadIdx.x;
  uint32_t bits = (uint32_t)i;
  if (((bits >> 23) & 255) == 255 && (bits & 0x7fffff)) return;     // NaN
  uint32_t sign = bits >> 31;
  uint32_t hw = __float_as_uint(ex2f(__uint_as_float(bits)));
  for (int rv = 0; rv < 3; rv++)
    for (int nv = 0; nv < 2; nv++) {
      int c = (rv * 2 + nv) * 2 + sign;
      if (ex2_model(bits, T, rv, nv) != hw) {
        u64 k = atomicAdd(&counts[c], 1ull);
        if (k < 16) { samples[(c * 16 + k) * 2] = bits; samples[(c * 16 + k) * 2 + 1] = hw; }
      }
    }
  uint32_t hr = __float_as_uint(rcpf(__uint_as_float(bits)));
  if (rcp_model(bits, R) != hr) {
    int c = 12 + sign;
    u64 k = atomicAdd(&counts[c], 1ull);
    if (k < 16) { samples[(c * 16 + k) * 2] = bits; samples[(c * 16 + k) * 2 + 1] = hr; }
  }
}

int main() {
  const uint32_t N = 1u << 23;
  struct { int op; uint32_t base, n; const char* name; } tabs[] = {
    {0, 0x3f800000u, N, "ex2_pos"}, {0, 0xbf800000u, N, "ex2_neg"}, {1, 0x3f800000u, N, "rcp"},
    {2, 0x3f800000u, 2 * N, "rsqrt"}, {3, 0x3f800000u, N, "lg2"}, {4, 0x3f800000u, N, "ex2_noftz_pos"}};
  uint32_t *d_out, *T, *R; cudaMalloc(&d_out, 2 * N * 4); cudaMalloc(&T, N * 4); cudaMalloc(&R, N * 4);
  std::vector<uint32_t> h(2 * N);
  for (auto& t : tabs) {
    table<<<(t.n + 255) / 256, 256>>>(t.op, t.base, d_out, t.n);
    cudaMemcpy(h.data(), d_out, t.n * 4, cudaMemcpyDeviceToHost);
    if (t.op == 0 && t.base == 0x3f800000u) cudaMemcpy(T, d_out, N * 4, cudaMemcpyDeviceToDevice);
    if (t.op == 1) cudaMemcpy(R, d_out, N * 4, cudaMemcpyDeviceToDevice);
    char fn[64]; snprintf(fn, 64, "raw_%s.u32", t.name);
    FILE* f = fopen(fn, "wb"); fwrite(h.data(), 4, t.n, f); fclose(f);
  }
  u64* counts; uint32_t* samples;
  cudaMalloc(&counts, 14 * 8); cudaMemset(counts, 0, 14 * 8);
  cudaMalloc(&samples, 14 * 16 * 2 * 4); cudaMemset(samples, 0, 14 * 16 * 2 * 4);
  const u64 chunk = 1ull << 28;
  for (u64 s = 0; s < (1ull << 32); s += chunk) check<<<chunk / 256, 256>>>(s, T, R, counts, samples);
  cudaError_t err = cudaDeviceSynchronize();
  u64 hc[14]; uint32_t hs[14 * 32];
  cudaMemcpy(hc, counts, sizeof hc, cudaMemcpyDeviceToHost); cudaMemcpy(hs, samples, sizeof hs, cudaMemcpyDeviceToHost);
  printf("{\"cuda\": \"%s\", \"counts\": [", cudaGetErrorString(err));
  for (int c = 0; c < 14; c++) printf("%llu%s", hc[c], c < 13 ? ", " : "], \"samples\": [");
  for (int c = 0; c < 14 * 32; c++) printf("%u%s", hs[c], c < 14 * 32 - 1 ? ", " : "]}\n");
  return 0;
}
