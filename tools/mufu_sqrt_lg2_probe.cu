// The H100's special function unit behind sqrt.approx.f32 (MUFU.SQRT) and lg2.approx.f32 (MUFU.LG2),
// measured for cudalab/emulator/mufu.py. Writes raw_<name>.u32, the result bits for every float of
// [1, 4) (sqrt_ftz), [1, 2) (lg2_ftz) and [0.5, 1) (lg2_half), and raw_sample.u32 (2^18 hashed inputs,
// then sqrt.approx.ftz, sqrt.approx, lg2.approx.ftz and lg2.approx of each); then checks the table
// models over all 2^32 inputs, NaNs apart, and prints the mismatch counts (with up to 8 samples:
// input, GPU, model) as JSON: 0 sqrt.approx.ftz, 1 sqrt.approx, 2 lg2.approx.ftz, 3 lg2.approx.
// On an H200 (driver 580.159.04, CUDA 13.0): [0, 0, 0, 0]. Then tools/mufu_sqrt_lg2_tables.py packs
// the tables for cudalab/emulator/mufu_h100.npz.
//   nvcc -arch=sm_90 -O2 -o probe tools/mufu_sqrt_lg2_probe.cu && ./probe
#include <cstdio>
#include <cstdint>
#include <vector>
typedef unsigned long long u64;
__device__ __forceinline__ float sqf(float x){float r; asm("sqrt.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float sqn(float x){float r; asm("sqrt.approx.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float lgf(float x){float r; asm("lg2.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float lgn(float x){float r; asm("lg2.approx.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float snf(float x){float r; asm("sin.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float csf(float x){float r; asm("cos.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}

__global__ void table(int op, uint32_t base, uint32_t* out, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  float x = __uint_as_float(base + k);
  float r = op == 0 ? sqf(x) : op == 1 ? sqn(x) : op == 2 ? lgf(x) : op == 3 ? lgn(x) : op == 4 ? snf(x) : csf(x);
  out[k] = __float_as_uint(r);
}

__device__ uint32_t sqrt_model(uint32_t bits, const uint32_t* S) {
  int e = (bits >> 23) & 255; uint32_t sign = bits & 0x80000000u;
  if (e == 0) return sign;                              // +-0 and subnormals (ftz): +-0
  if (sign) return 0x7fffffffu;
  if (e == 255) return 0x7f800000u;                      // NaN excluded by caller
  int u = e - 127;
  uint32_t t = S[(bits & 0x7fffff) | ((u & 1) << 23)];
  int n = u >> 1;                                        // floor
  return (t & 0x807fffffu) | ((uint32_t)(((t >> 23) & 255) + n) << 23);
}

// L: lg2.approx.ftz of [1, 2), M: of [0.5, 1) (that binade has its own bits: the unit's fixed-point
// log loses them when the result is below 1 in magnitude)
__device__ uint32_t lg2_model(uint32_t bits, const uint32_t* L, const uint32_t* M) {
  int e = (bits >> 23) & 255; uint32_t sign = bits & 0x80000000u, j = bits & 0x7fffff;
  if (e == 0) return 0xff800000u;                        // +-0, subnormals (ftz): -inf
  if (sign) return 0x7fffffffu;
  if (e == 255) return 0x7f800000u;                      // NaN excluded by caller
  int u = e - 127;
  float l = __uint_as_float(L[j]);
  if (u == 0) return L[j];
  if (u == -1) return M[j];
  if (u > 0) return __float_as_uint(__fadd_rz((float)u, l));
  float r = __fsub_rz((float)-u, l);                     // -(|u| - l), one ulp nearer zero when exact
  return (__float_as_uint(r) - (__fsub_ru((float)-u, l) == r ? 1u : 0u)) | 0x80000000u;
}

__device__ void note(u64* counts, uint32_t* samples, int c, uint32_t x, uint32_t g, uint32_t m) {
  u64 k = atomicAdd(&counts[c], 1ull);
  if (k < 8) { uint32_t* s = samples + (c * 8 + k) * 3; s[0] = x; s[1] = g; s[2] = m; }
}

__global__ void check(u64 start, const uint32_t* S, const uint32_t* L, const uint32_t* M, u64* counts, uint32_t* samples) {
  u64 i = start + blockIdx.x * (u64)blockDim.x + threadIdx.x;
  uint32_t bits = (uint32_t)i;
  int e = (bits >> 23) & 255;
  if (e == 255 && (bits & 0x7fffff)) return;             // NaN
  float x = __uint_as_float(bits);
  bool sub = e == 0 && (bits & 0x7fffff);
  uint32_t xs = __float_as_uint(x * 16777216.0f), g, m;
  g = __float_as_uint(sqf(x)); m = sqrt_model(bits, S); if (g != m) note(counts, samples, 0, bits, g, m);
  if (sub) m = __float_as_uint(__fmul_rn(__uint_as_float(sqrt_model(xs, S)), 1.0f / 4096.0f));
  g = __float_as_uint(sqn(x)); if (g != m) note(counts, samples, 1, bits, g, m);
  g = __float_as_uint(lgf(x)); m = lg2_model(bits, L, M); if (g != m) note(counts, samples, 2, bits, g, m);
  if (sub) m = __float_as_uint(__fadd_rn(__uint_as_float(lg2_model(xs, L, M)), -24.0f));
  g = __float_as_uint(lgn(x)); if (g != m) note(counts, samples, 3, bits, g, m);
}

__global__ void sample(uint32_t* in, uint32_t* out, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  uint32_t h = k * 0x9e3779b9u + 0x7f4a7c15u; h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  float x = __uint_as_float(h);
  in[k] = h;
  out[4 * k] = __float_as_uint(sqf(x)); out[4 * k + 1] = __float_as_uint(sqn(x));
  out[4 * k + 2] = __float_as_uint(lgf(x)); out[4 * k + 3] = __float_as_uint(lgn(x));
}

int main() {
  const uint32_t N = 1u << 23;
  struct { int op; uint32_t base, n; const char* name; } tabs[] = {
    {0, 0x3f800000u, 2 * N, "sqrt_ftz"}, {2, 0x3f800000u, N, "lg2_ftz"}, {2, 0x3f000000u, N, "lg2_half"}};
  uint32_t *d_out, *S, *L, *M; cudaMalloc(&d_out, 2 * N * 4); cudaMalloc(&S, 2 * N * 4); cudaMalloc(&L, N * 4); cudaMalloc(&M, N * 4);
  std::vector<uint32_t> h(2 * N);
  for (auto& t : tabs) {
    table<<<(t.n + 255) / 256, 256>>>(t.op, t.base, d_out, t.n);
    cudaMemcpy(h.data(), d_out, t.n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(t.op == 0 ? S : t.base == 0x3f800000u ? L : M, d_out, t.n * 4, cudaMemcpyDeviceToDevice);
    char fn[64]; snprintf(fn, 64, "raw_%s.u32", t.name);
    FILE* f = fopen(fn, "wb"); fwrite(h.data(), 4, t.n, f); fclose(f);
  }
  const uint32_t NS = 1u << 18;
  sample<<<NS / 256, 256>>>(d_out, d_out + NS, NS);
  cudaMemcpy(h.data(), d_out, NS * 5 * 4, cudaMemcpyDeviceToHost);
  FILE* f = fopen("raw_sample.u32", "wb"); fwrite(h.data(), 4, NS * 5, f); fclose(f);
  const int C = 4;
  u64* counts; uint32_t* samples;
  cudaMalloc(&counts, C * 8); cudaMemset(counts, 0, C * 8);
  cudaMalloc(&samples, C * 8 * 3 * 4); cudaMemset(samples, 0, C * 8 * 3 * 4);
  const u64 chunk = 1ull << 28;
  for (u64 s = 0; s < (1ull << 32); s += chunk) check<<<chunk / 256, 256>>>(s, S, L, M, counts, samples);
  cudaError_t err = cudaDeviceSynchronize();
  u64 hc[C]; uint32_t hs[C * 24];
  cudaMemcpy(hc, counts, sizeof hc, cudaMemcpyDeviceToHost); cudaMemcpy(hs, samples, sizeof hs, cudaMemcpyDeviceToHost);
  printf("{\"cuda\": \"%s\", \"counts\": [", cudaGetErrorString(err));
  for (int c = 0; c < C; c++) printf("%llu%s", hc[c], c < C - 1 ? ", " : "], \"samples\": [");
  for (int c = 0; c < C * 24; c++) printf("%u%s", hs[c], c < C * 24 - 1 ? ", " : "]}\n");
  return 0;
}
