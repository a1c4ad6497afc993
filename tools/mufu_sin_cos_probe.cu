// The H100's special function unit behind sin.approx.f32 and cos.approx.f32 (SASS: FMUL.RZ by
// 1/(2 pi), then MUFU.SIN / MUFU.COS), measured for cudalab/emulator/mufu.py.
//   nvcc -arch=sm_90 -O2 -o probe tools/mufu_sin_cos_probe.cu && ./probe
// Writes, in the current folder:
//   raw_tgrid_<op>_<k>.u32  the result for every float t of the binade [2^-k, 2^(1-k)) (k = 0: [1, 2))
//                           as the unit's input: sin.approx.ftz / cos.approx.ftz of an x with
//                           fmul_rz(x, 1/(2 pi)) == t, or 0xffffffff where no float x gives that t
//   raw_windows.u32         [exponent field 0..254][sign][start, middle of the binade][op][1024]:
//                           the four ops (sin.ftz, sin, cos.ftz, cos) of consecutive x
//   raw_sample.u32          2^18 hashed inputs, then the four ops of each
// tools/mufu_sin_cos_pack.py and tools/mufu_sin_cos_tables.py make the quarter-turn table from them.
// Then `./probe check quarter.u32` (that table as raw uint32, e.g. from mufu_h100.npz) checks the model
// of cudalab/emulator/mufu.py (sin, cos) against the GPU for all 2^32 inputs, NaNs included, and prints
// the mismatch counts (sin.ftz, sin, cos.ftz, cos) with up to 8 samples each (input, GPU, model).
// On an H100 (driver 580.159.04, CUDA 13.0): [0, 0, 0, 0]. sin.approx and cos.approx, .ftz or not,
// compile to the same two instructions: FMUL.RZ R, x, 0.15915493667125701904; MUFU.SIN (or COS) R, R.
#include <cstdio>
#include <cstdint>
#include <string>
#include <vector>
typedef unsigned long long u64;
#define INV_2PI 0.15915493667125701904f
__device__ __forceinline__ float snf(float x){float r; asm("sin.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float snn(float x){float r; asm("sin.approx.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float csf(float x){float r; asm("cos.approx.ftz.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float csn(float x){float r; asm("cos.approx.f32 %0,%1;":"=f"(r):"f"(x)); return r;}
__device__ __forceinline__ float op4(int op, float x) {
  return op == 0 ? snf(x) : op == 1 ? snn(x) : op == 2 ? csf(x) : csn(x);
}

__global__ void tgrid(int op, uint32_t tbase, uint32_t* out, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  uint32_t tb = tbase + k;
  float t = __uint_as_float(tb);
  uint32_t x0 = __float_as_uint(__fdiv_rn(t, INV_2PI)), r = 0xffffffffu;
  for (int d = -4; d <= 4; d++) {
    float x = __uint_as_float(x0 + d);
    if (__float_as_uint(__fmul_rz(x, INV_2PI)) == tb) { r = __float_as_uint(op4(op, x)); break; }
  }
  out[k] = r;
}

__global__ void windows(uint32_t* out) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;          // 255 * 2 * 2 * 1024
  if (k >= 255u * 4 * 1024) return;
  uint32_t i = k & 1023, w = (k >> 10) & 1, s = (k >> 11) & 1, e = k >> 12;
  uint32_t bits = (s << 31) | (e << 23) | (w << 22) | i;
  float x = __uint_as_float(bits);
  for (int op = 0; op < 4; op++) out[(((e * 2 + s) * 2 + w) * 4 + op) * 1024 + i] = __float_as_uint(op4(op, x));
}

__global__ void sample(uint32_t* in, uint32_t* out, uint32_t n) {
  uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  uint32_t h = k * 0x9e3779b9u + 0x7f4a7c15u; h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;
  float x = __uint_as_float(h);
  in[k] = h;
  for (int op = 0; op < 4; op++) out[4 * k + op] = __float_as_uint(op4(op, x));
}

// mufu.py's model: |x| / (2 pi) toward zero, 25 fraction bits of a turn, a quarter turn's table
__device__ uint32_t unit_model(uint32_t bits, bool cosine, const uint32_t* T) {
  const uint32_t Q = 1u << 23;
  if (((bits >> 23) & 255) == 255) return 0x7fffffffu;              // infinities and NaN
  uint32_t tb = __float_as_uint(__fmul_rz(__uint_as_float(bits & 0x7fffffffu), INV_2PI));
  int te = tb >> 23, sh = te - 125;                                  // |t| 2^25 = mant 2^sh
  u64 mant = (tb & 0x7fffffu) | 0x800000u;
  uint32_t r = te == 0 ? 0 : (uint32_t)((sh >= 0 ? (sh > 40 ? 0 : mant << sh) : mant >> -sh) & (4 * Q - 1));
  if (cosine) r = (r + Q) & (4 * Q - 1);
  uint32_t q = r >> 23, j = r & (Q - 1);
  uint32_t v = T[(q & 1) ? Q - 1 - j : j] ^ (q >= 2 ? 0x80000000u : 0u);
  return cosine ? v : v ^ (bits & 0x80000000u);
}

__global__ void check(u64 start, const uint32_t* T, u64* counts, uint32_t* samples) {
  uint32_t bits = (uint32_t)(start + blockIdx.x * (u64)blockDim.x + threadIdx.x);
  float x = __uint_as_float(bits);
  for (int op = 0; op < 4; op++) {
    uint32_t g = __float_as_uint(op4(op, x)), m = unit_model(bits, op >= 2, T);
    if (g != m) {
      u64 k = atomicAdd(&counts[op], 1ull);
      if (k < 8) { uint32_t* s = samples + (op * 8 + k) * 3; s[0] = bits; s[1] = g; s[2] = m; }
    }
  }
}

static int run_check(const char* path) {
  const uint32_t Q = 1u << 23;
  std::vector<uint32_t> h(Q);
  FILE* f = fopen(path, "rb");
  if (!f || fread(h.data(), 4, Q, f) != Q) { printf("cannot read %s\n", path); return 1; }
  fclose(f);
  uint32_t *T, *samples; u64* counts;
  cudaMalloc(&T, Q * 4); cudaMemcpy(T, h.data(), Q * 4, cudaMemcpyHostToDevice);
  cudaMalloc(&counts, 4 * 8); cudaMemset(counts, 0, 4 * 8);
  cudaMalloc(&samples, 4 * 8 * 3 * 4); cudaMemset(samples, 0, 4 * 8 * 3 * 4);
  const u64 chunk = 1ull << 28;
  for (u64 s = 0; s < (1ull << 32); s += chunk) check<<<chunk / 256, 256>>>(s, T, counts, samples);
  cudaError_t err = cudaDeviceSynchronize();
  u64 hc[4]; uint32_t hs[96];
  cudaMemcpy(hc, counts, sizeof hc, cudaMemcpyDeviceToHost); cudaMemcpy(hs, samples, sizeof hs, cudaMemcpyDeviceToHost);
  printf("{\"cuda\": \"%s\", \"counts\": [%llu, %llu, %llu, %llu], \"samples\": [", cudaGetErrorString(err), hc[0], hc[1], hc[2], hc[3]);
  for (int c = 0; c < 96; c++) printf("%u%s", hs[c], c < 95 ? ", " : "]}\n");
  return 0;
}

static void dump(const char* name, const uint32_t* d, size_t n) {
  std::vector<uint32_t> h(n);
  cudaMemcpy(h.data(), d, n * 4, cudaMemcpyDeviceToHost);
  FILE* f = fopen(name, "wb"); fwrite(h.data(), 4, n, f); fclose(f);
}

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "check") return run_check(argv[2]);
  const uint32_t N = 1u << 23;
  uint32_t* d; cudaMalloc(&d, 8 * N * 4);
  for (int op = 0; op <= 2; op += 2)
    for (int k = 0; k <= 8; k++) {
      tgrid<<<N / 256, 256>>>(op, (uint32_t)(127 - k) << 23, d, N);
      char fn[64]; snprintf(fn, 64, "raw_tgrid_%s_%d.u32", op ? "cos" : "sin", k);
      dump(fn, d, N);
    }
  windows<<<255 * 4 * 1024 / 256, 256>>>(d);
  dump("raw_windows.u32", d, 255u * 16 * 1024);
  const uint32_t NS = 1u << 18;
  sample<<<NS / 256, 256>>>(d, d + NS, NS);
  dump("raw_sample.u32", d, NS * 5);
  printf("{\"cuda\": \"%s\"}\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
