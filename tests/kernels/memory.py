"""Memory: load/store widths and vectors, __ldg and cache hints, structs, shared/local/generic pointers."""
import numpy as np

from . import Corpus, f32_mix, i32_mix

CASES = Corpus("memory")
case = CASES.case

PARAMS = np.dtype([("scale", np.float32), ("bias", np.int32), ("offset", np.int64), ("flags", np.uint8),
                   ("tag", np.int16)], align=True)


def params(**fields):
    """A Params struct as a numpy scalar, padding bytes zeroed (they travel to the GPU too)."""
    p = np.zeros((), PARAMS)
    for k, v in fields.items():
        p[k] = v
    return p[()]


case("float4_swizzle", r'''
__global__ void swizzle(const float4* in, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v = in[i];
  out[i] = make_float4(v.w, v.z + 1.0f, v.y * 2.0f, v.x);
}''', "swizzle", 2, 64, lambda r: [f32_mix(r, 512), np.zeros(512, np.float32), np.int32(128)])

case("float2_and_double2_loads", r'''
__global__ void pairs(const float2* a, const double2* b, float2* fa, double2* fb, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float2 p = a[i];
  double2 q = b[i];
  fa[i] = make_float2(p.x + p.y, p.x - p.y);
  fb[n - 1 - i] = make_double2(q.y, q.x * (double)p.x);
}''', "pairs", 2, 64, lambda r: [f32_mix(r, 256), r.standard_normal(256), np.zeros(256, np.float32), np.zeros(256),
                                 np.int32(128)])

case("int4_and_longlong2_vectors", r'''
__global__ void ivec(const int4* a, const longlong2* b, int4* out, longlong2* lout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int4 v = a[i];
  longlong2 w = b[i];
  out[i] = make_int4(v.x ^ v.y, v.y & v.z, v.z | v.w, v.w + v.x);
  lout[i] = make_longlong2(w.x + v.x, w.y ^ (long long)v.w);
}''', "ivec", 2, 64, lambda r: [i32_mix(r, 512), r.integers(-2 ** 62, 2 ** 62, 256), np.zeros(512, np.int32),
                                np.zeros(256, np.int64), np.int32(128)])

case("uchar4_saturating_pixels", r'''
__global__ void brighten(const uchar4* px, uchar4* out, int n, int delta) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uchar4 p = px[i];
  int r = min(255, max(0, p.x + delta)), g = min(255, max(0, p.y + delta)), b = min(255, max(0, p.z + delta));
  out[i] = make_uchar4(r, g, b, p.w);
}''', "brighten", 2, 128, lambda r: [r.integers(0, 256, 1024).astype(np.uint8), np.zeros(1024, np.uint8),
                                     np.int32(256), np.int32(-37)])

case("byte_and_short_stores", r'''
__global__ void narrow_stores(const int* in, signed char* c, unsigned char* uc, short* s, unsigned short* us, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  c[i] = (signed char)(v >> 3);
  uc[n - 1 - i] = (unsigned char)v;
  s[i] = (short)(v * 7);
  us[i ^ 1] = (unsigned short)(v >> 9);
}''', "narrow_stores", 3, 64, lambda r: [i32_mix(r, 192), np.zeros(192, np.int8), np.zeros(192, np.uint8),
                                         np.zeros(192, np.int16), np.zeros(192, np.uint16), np.int32(192)])

case("byte_loads_sign_extension", r'''
__global__ void narrow_loads(const signed char* c, const unsigned char* uc, const short* s, const unsigned short* us,
                             int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = c[i] * 1000000 + uc[i] * 1000 + (s[i] >> 4) + (int)us[i] * 3;
}''', "narrow_loads", 2, 128, lambda r: [r.integers(-128, 128, 256).astype(np.int8), r.integers(0, 256, 256).astype(np.uint8),
                                          r.integers(-2 ** 15, 2 ** 15, 256).astype(np.int16),
                                          r.integers(0, 2 ** 16, 256).astype(np.uint16), np.zeros(256, np.int32), np.int32(256)])

case("ldg_and_cache_hint_loads", r'''
__global__ void hints(const float* __restrict__ a, const int4* __restrict__ b, const double* c, float* out,
                      int4* iout, double* dout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = __ldg(a + i) + __ldcs(a + (i + 1) % n) + __ldca(a + (i + 2) % n) + __ldlu(a + (i + 3) % n);
  int4 v = __ldg(b + i);
  __stcs(out + i, x);
  __stwt(iout + i, make_int4(v.w, v.z, v.y, v.x));
  __stcg(dout + i, __ldcv(c + i) * 2.0 + __ldg(c + (n - 1 - i)));
}''', "hints", 2, 64, lambda r: [r.standard_normal(128).astype(np.float32), i32_mix(r, 512), r.standard_normal(128),
                                 np.zeros(128, np.float32), np.zeros(512, np.int32), np.zeros(128), np.int32(128)])

case("struct_by_value_param", r'''
struct Params { float scale; int bias; long long offset; unsigned char flags; short tag; };
__global__ void apply(const float* x, long long* out, Params p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  long long v = (long long)(x[i] * p.scale) + p.bias + p.offset;
  if (p.flags & 1) v = -v;
  out[i] = v * p.tag;
}''', "apply", 1, 128, lambda r: [(r.standard_normal(128) * 100).astype(np.float32), np.zeros(128, np.int64),
                                  params(scale=2.5, bias=-17, offset=1 << 40, flags=3, tag=-3), np.int32(128)])

case("array_of_structs_from_bytes", r'''
struct Particle { float x, y, z; int id; };
struct Out { double energy; int id; short bucket, pad; };
__global__ void energies(const unsigned char* raw, Out* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const Particle* ps = reinterpret_cast<const Particle*>(raw);
  Particle p = ps[i];
  Out o;
  o.energy = 0.5 * ((double)p.x * p.x + (double)p.y * p.y + (double)p.z * p.z);
  o.id = p.id;
  o.bucket = (short)(o.energy > 1.0) + (short)(o.energy > 4.0);
  o.pad = -1;
  out[i] = o;
}''', "energies", 1, 128, lambda r: [np.concatenate([r.standard_normal((128, 3)).astype(np.float32).view(np.int32),
                                                     np.arange(128, dtype=np.int32)[:, None] * 7], 1).ravel().view(np.uint8).copy(),
                                     np.zeros(128 * 16, np.uint8), np.int32(128)])

case("struct_by_value_device_functions", r'''
struct Vec3 { float x, y, z; };
struct Ray { Vec3 o, d; };
__device__ __noinline__ Vec3 add(Vec3 a, Vec3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
__device__ __noinline__ Vec3 scale(Vec3 a, float s) { return {a.x * s, a.y * s, a.z * s}; }
__device__ __noinline__ float dot(Vec3 a, Vec3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
__device__ __noinline__ Ray reflect(Ray r, Vec3 n) {
  Ray out = {add(r.o, r.d), add(r.d, scale(n, -2.0f * dot(r.d, n)))};
  return out;
}
__global__ void bounce(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Ray r = {{in[6 * i], in[6 * i + 1], in[6 * i + 2]}, {in[6 * i + 3], in[6 * i + 4], in[6 * i + 5]}};
  Vec3 up = {0.0f, 1.0f, 0.0f};
  for (int k = 0; k < 3; ++k) r = reflect(r, up);
  out[6 * i + 0] = r.o.x; out[6 * i + 1] = r.o.y; out[6 * i + 2] = r.o.z;
  out[6 * i + 3] = r.d.x; out[6 * i + 4] = r.d.y; out[6 * i + 5] = r.d.z;
}''', "bounce", 1, 64, lambda r: [r.standard_normal(384).astype(np.float32), np.zeros(384, np.float32), np.int32(64)])

case("generic_pointers_to_every_space", r'''
__device__ __noinline__ float sum3(const float* p) { return p[0] + p[1] + p[2]; }
__device__ __noinline__ void bump(int* p, int by) { *p += by; }
__global__ void generic(const float* g, float* out, int* counters) {
  __shared__ float s[3 * 128];
  __shared__ int shared_count;
  float local[3];
  int t = threadIdx.x;
  if (t == 0) shared_count = 0;
  for (int k = 0; k < 3; ++k) { s[3 * t + k] = g[3 * t + k] * 2.0f; local[k] = g[3 * t + k] - 1.0f; }
  __syncthreads();
  out[3 * t + 0] = sum3(g + 3 * t);
  out[3 * t + 1] = sum3(s + 3 * ((t + 1) % 128));
  out[3 * t + 2] = sum3(local);
  int mine = t;
  bump(&mine, 5);
  if (t % 32 == 0) atomicAdd(&shared_count, mine);
  __syncthreads();
  if (t == 0) bump(&counters[0], shared_count);
  counters[1 + t] = mine;
}''', "generic", 1, 128, lambda r: [r.standard_normal(384).astype(np.float32), np.zeros(384, np.float32),
                                   np.zeros(129, np.int32)])

case("address_space_predicates", r'''
__device__ int global_word;
__device__ __noinline__ int where(const void* p) {
  return __isGlobal(p) | __isShared(p) << 1 | __isLocal(p) << 2 | __isConstant(p) << 3;
}
__constant__ int table[4] = {1, 2, 3, 4};
__global__ void spaces(int* out) {
  __shared__ int s[32];
  int local[4];
  int t = threadIdx.x;
  local[t % 4] = t;
  s[t] = t;
  const void* ptrs[5] = {out, s + t, local + (t % 4), table + (t % 4), &global_word};
  out[t] = where(ptrs[t % 5]) + 16 * (int)(__cvta_generic_to_shared(s + t) - __cvta_generic_to_shared(s));
}''', "spaces", 1, 32, lambda r: [np.zeros(32, np.int32)])

case("local_array_dynamic_index", r'''
__global__ void insertion_sort(const int* in, int* out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int buf[16];
  for (int k = 0; k < 16; ++k) buf[k] = in[16 * t + k];
  for (int k = 1; k < 16; ++k) {
    int v = buf[k], j = k - 1;
    while (j >= 0 && buf[j] > v) { buf[j + 1] = buf[j]; --j; }
    buf[j + 1] = v;
  }
  int pick = in[16 * t] & 15;
  for (int k = 0; k < 16; ++k) out[17 * t + k] = buf[k];
  out[17 * t + 16] = buf[pick];
}''', "insertion_sort", 2, 32, lambda r: [i32_mix(r, 1024), np.zeros(17 * 64, np.int32), np.int32(64)])

case("dynamic_shared_typed_views", r'''
extern __shared__ unsigned char smem[];
__global__ void views(const double* d, const int* i32, double* out, int* iout) {
  double* sd = reinterpret_cast<double*>(smem);
  int* si = reinterpret_cast<int*>(smem + blockDim.x * sizeof(double));
  short* ss = reinterpret_cast<short*>(si + blockDim.x);
  int t = threadIdx.x, b = blockIdx.x * blockDim.x;
  sd[t] = d[b + t];
  si[t] = i32[b + t];
  ss[t] = (short)(i32[b + t] >> 8);
  __syncthreads();
  int u = blockDim.x - 1 - t;
  out[b + t] = sd[u] + (double)si[(t + 1) % blockDim.x];
  iout[b + t] = ss[u] * 3 + si[u];
}''', "views", 2, 96, lambda r: [r.standard_normal(192), i32_mix(r, 192), np.zeros(192), np.zeros(192, np.int32)],
     shared=96 * 14)

case("transpose_shared_padded", r'''
#define TILE 32
#define ROWS 8
__global__ void transpose(const float* in, float* out, int width, int height) {
  __shared__ float tile[TILE][TILE + 1];
  int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
  __syncthreads();
  x = blockIdx.y * TILE + threadIdx.x;
  y = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS)
    if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}''', "transpose", (3, 2), (32, 8), lambda r: [f32_mix(r, 70 * 50), np.zeros(70 * 50, np.float32), np.int32(70),
                                             np.int32(50)])

case("stencil_1d_halo", r'''
#define RADIUS 3
#define BLOCK 128
__global__ void stencil(const float* in, float* out, int n) {
  __shared__ float temp[BLOCK + 2 * RADIUS];
  int g = blockIdx.x * blockDim.x + threadIdx.x, l = threadIdx.x + RADIUS;
  temp[l] = g < n ? in[g] : 0.0f;
  if (threadIdx.x < RADIUS) {
    temp[l - RADIUS] = g >= RADIUS ? in[g - RADIUS] : 0.0f;
    temp[l + BLOCK] = g + BLOCK < n ? in[g + BLOCK] : 0.0f;
  }
  __syncthreads();
  float result = 0.0f;
  for (int off = -RADIUS; off <= RADIUS; ++off) result += temp[l + off] * (1.0f + off * 0.25f);
  if (g < n) out[g] = result;
}''', "stencil", 3, 128, lambda r: [r.standard_normal(300).astype(np.float32), np.zeros(300, np.float32), np.int32(300)])

case("thread_indexing_3d", r'''
__global__ void where_am_i(int* out) {
  int bx = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  int tx = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  int g = bx * blockDim.x * blockDim.y * blockDim.z + tx;
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  out[g] = threadIdx.x | threadIdx.y << 4 | threadIdx.z << 8 | blockIdx.x << 12 | blockIdx.y << 16 |
           blockIdx.z << 20 | (int)lane << 24 | (warpSize == 32) << 30;
}''', "where_am_i", (2, 3, 2), (5, 3, 4), lambda r: [np.zeros(12 * 60, np.int32)])

case("constant_and_device_globals", r'''
__constant__ float coef[5] = {0.5f, -1.25f, 2.0f, 0.0625f, -0.0f};
__constant__ int lut[8] = {3, 1, 4, 1, 5, 9, 2, 6};
__device__ int bias = 1000;
__device__ double scales[2] = {1.5, -2.0};
__global__ void lookup(const float* x, float* out, int* iout, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0.0f;
  for (int k = 0; k < 5; ++k) acc = acc * x[i] + coef[k];
  out[i] = acc * (float)scales[i & 1];
  iout[i] = lut[i & 7] * bias + lut[(i * 3) & 7];
}''', "lookup", 1, 128, lambda r: [r.standard_normal(128).astype(np.float32), np.zeros(128, np.float32),
                                   np.zeros(128, np.int32), np.int32(128)])

case("volatile_shared_warp_reduce", r'''
__device__ void warp_reduce(volatile int* s, int t) {
  for (int off = 32; off > 0; off >>= 1) {
    int v = s[t + off];
    __syncwarp();
    s[t] += v;
    __syncwarp();
  }
}
__global__ void reduce6(const int* in, int* out) {
  __shared__ int s[128];
  int t = threadIdx.x;
  s[t] = in[blockIdx.x * 256 + t] + in[blockIdx.x * 256 + t + 128];
  __syncthreads();
  if (t < 64) s[t] += s[t + 64];
  __syncthreads();
  if (t < 32) warp_reduce(s, t);
  if (t == 0) out[blockIdx.x] = s[0];
}''', "reduce6", 4, 128, lambda r: [i32_mix(r, 1024), np.zeros(4, np.int32)])

case("local_struct_copy_and_memcpy", r'''
struct Record { int key; float vals[5]; double weight; char name[12]; int tail; };  // no padding bytes
__device__ __noinline__ Record make_record(int k, const float* v) {
  Record r;
  r.key = k;
  for (int j = 0; j < 5; ++j) r.vals[j] = v[j] * (float)k;
  r.weight = k * 0.125;
  r.tail = -k;
  for (int j = 0; j < 12; ++j) r.name[j] = (char)('a' + (k + j) % 26);
  return r;
}
__global__ void records(const float* v, unsigned char* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Record r = make_record(i, v + 5 * i), copy;
  memcpy(&copy, &r, sizeof(Record));
  copy.vals[i % 5] = -copy.vals[i % 5];
  memcpy(out + i * sizeof(Record), &copy, sizeof(Record));
}''', "records", 1, 64, lambda r: [r.standard_normal(320).astype(np.float32), np.zeros(64 * 48, np.uint8), np.int32(64)])
