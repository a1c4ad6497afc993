"""Control flow and whole small algorithms: divergence, loops, recursion, switch, templates, calls."""
import numpy as np

from . import Corpus, f32_mix, i32_mix

CASES = Corpus("control")
case = CASES.case


case("nested_divergence_path_codes", r'''
__global__ void paths(const int* v, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int x = v[i], code = 0;
  if (x > 0) {
    code = 1;
    if (x % 2 == 0) { code = 2; if (x % 4 == 0) code = 3; else code = 4; }
    else if (x % 3 == 0) code = 5;
  } else if (x < -100) {
    code = 6;
    for (int k = 0; k < (-x) % 5; ++k) code += 10;
  } else {
    code = x == 0 ? 7 : 8;
  }
  out[i] = code * 1000 + (x & 255);
}''', "paths", 2, 64, lambda r: [i32_mix(r, 128), np.zeros(128, np.int32), np.int32(128)])

case("collatz_data_dependent_trip_count", r'''
__global__ void collatz(const unsigned* start, int* steps, unsigned long long* peak, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned long long x = start[i], top = x;
  int k = 0;
  while (x > 1 && k < 1000) {
    x = (x & 1) ? 3 * x + 1 : x >> 1;
    if (x > top) top = x;
    ++k;
  }
  steps[i] = k;
  peak[i] = top;
}''', "collatz", 2, 64, lambda r: [np.concatenate([[0, 1, 27, 97, 871, 77031], r.integers(1, 100000, 122)]).astype(np.uint32),
                                   np.zeros(128, np.int32), np.zeros(128, np.uint64), np.int32(128)])

case("early_return_and_continue_break", r'''
__global__ void early(const int* v, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = -1;
  if (v[i] < 0) return;
  int acc = 0;
  for (int k = 0; k < 64; ++k) {
    if (k % 3 == 0) continue;
    if (acc > v[i]) break;
    acc += k * (k & 1 ? 2 : 1);
  }
  if (acc == 0) return;
  out[i] = acc;
}''', "early", 2, 64, lambda r: [r.integers(-50, 400, 128).astype(np.int32), np.zeros(128, np.int32), np.int32(128)])

case("recursive_device_functions", r'''
__device__ __noinline__ unsigned long long fib(int k) { return k < 2 ? k : fib(k - 1) + fib(k - 2); }
__device__ __noinline__ int ackermann(int m, int n) {
  if (m == 0) return n + 1;
  if (n == 0) return ackermann(m - 1, 1);
  return ackermann(m - 1, ackermann(m, n - 1));
}
__device__ __noinline__ int depth_sum(const int* tree, int node, int depth, int size) {
  if (node >= size) return 0;
  return tree[node] * depth + depth_sum(tree, 2 * node + 1, depth + 1, size) + depth_sum(tree, 2 * node + 2, depth + 1, size);
}
__global__ void recurse(const int* tree, unsigned long long* out, int size) {
  int t = threadIdx.x;
  out[3 * t + 0] = fib(t % 14);
  out[3 * t + 1] = ackermann(t % 3, t % 5);
  out[3 * t + 2] = depth_sum(tree, t % 7, 1, size);
}''', "recurse", 1, 64, lambda r: [r.integers(-9, 10, 63).astype(np.int32), np.zeros(192, np.uint64), np.int32(63)])

case("switch_dense_and_sparse", r'''
__device__ int dense(int op, int a, int b) {
  switch (op) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a * b;
    case 3: return a & b;
    case 4: return a | b;
    case 5: return a ^ b;
    case 6: return a << (b & 7);
    case 7: return a >> (b & 7);
    default: return -op;
  }
}
__device__ int sparse(int key) {
  switch (key) {
    case -1000: return 1;
    case 7: return 2;
    case 42: case 43: return 3;
    case 1 << 20: return 4;
    case 999: break;
    default: return 0;
  }
  return 5;
}
__global__ void switches(const int* op, const int* a, const int* b, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[2 * i] = dense(op[i], a[i], b[i]);
  out[2 * i + 1] = sparse(a[i]);
}''', "switches", 2, 64, lambda r: [r.integers(-2, 11, 128).astype(np.int32),
                                    np.concatenate([[-1000, 7, 42, 43, 1 << 20, 999], r.integers(-500, 500, 122)]).astype(np.int32),
                                    r.integers(-500, 500, 128).astype(np.int32), np.zeros(256, np.int32), np.int32(128)])

case("goto_state_machine_word_count", r'''
__global__ void words(const unsigned char* text, const int* starts, int* counts, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned char* p = text + starts[i];
  const unsigned char* end = text + starts[i + 1];
  int count = 0, longest = 0, cur = 0;
space:
  if (p == end) goto done;
  if (*p == ' ' || *p == '\n') { ++p; goto space; }
  ++count; cur = 0;
word:
  if (p == end || *p == ' ' || *p == '\n') { longest = max(longest, cur); goto space; }
  ++cur; ++p;
  goto word;
done:
  counts[2 * i] = count;
  counts[2 * i + 1] = longest;
}''', "words", 1, 32, lambda r: [np.where(r.random(2048) < 0.2, ord(" "), np.where(r.random(2048) < 0.05, ord("\n"), 97 + r.integers(0, 26, 2048))).astype(np.uint8),
                                 np.sort(np.r_[0, r.integers(0, 2048, 31), 2048]).astype(np.int32), np.zeros(64, np.int32), np.int32(32)])

case("template_types_axpy", r'''
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}''', "axpy<double>", 2, 64, lambda r: [np.float64(-0.3), r.standard_normal(128), r.standard_normal(128), np.int32(128)])

case("template_int_param_unroll", r'''
template <int UNROLL>
__global__ void strided_sum(const int* in, int* out, int n) {
  int t = threadIdx.x, acc = 0;
  #pragma unroll
  for (int k = 0; k < UNROLL; ++k) {
    int idx = t + k * blockDim.x;
    if (idx < n) acc += in[idx] * (k + 1);
  }
  out[t] = acc;
}''', "strided_sum<5>", 1, 64, lambda r: [i32_mix(r, 300), np.zeros(64, np.int32), np.int32(300)])

case("template_functor_and_lambda", r'''
struct Square { __device__ float operator()(float v) const { return v * v; } };
struct Clamp { float lo, hi; __device__ float operator()(float v) const { return fminf(hi, fmaxf(lo, v)); } };
template <typename F, typename G>
__device__ float compose(F f, G g, float v) { return g(f(v)); }
template <typename F>
__global__ void transform(const float* x, float* out, F f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  auto twice = [=](float v) { return f(f(v)); };
  out[2 * i] = twice(x[i]);
  out[2 * i + 1] = compose(Square(), [](float v) { return v - 1.0f; }, x[i]);
}''', "transform<Clamp>", 1, 128, lambda r: [f32_mix(r, 128), np.zeros(256, np.float32),
                                            np.array((-2.0, 3.0), np.dtype([("lo", np.float32), ("hi", np.float32)]))[()],
                                            np.int32(128)])

case("template_recursion_constexpr", r'''
template <int N> struct Pow3 { static constexpr long long value = 3 * Pow3<N - 1>::value; };
template <> struct Pow3<0> { static constexpr long long value = 1; };
template <int N> __device__ long long sum_powers(long long x) { return x * Pow3<N>::value + sum_powers<N - 1>(x); }
template <> __device__ long long sum_powers<0>(long long x) { return x; }
template <int N>
__global__ void powers(const long long* x, long long* out) {
  int t = threadIdx.x;
  out[t] = sum_powers<N>(x[t]) ^ Pow3<N>::value;
}''', "powers<20>", 1, 64, lambda r: [r.integers(-10 ** 6, 10 ** 6, 64), np.zeros(64, np.int64)])

case("function_pointers_indirect_calls", r'''
typedef float (*Op)(float, float);
__device__ float op_add(float a, float b) { return a + b; }
__device__ float op_mul(float a, float b) { return a * b; }
__device__ float op_max(float a, float b) { return fmaxf(a, b); }
__device__ float op_hyp(float a, float b) { return sqrtf(a * a + b * b); }
__device__ Op table[4] = {op_add, op_mul, op_max, op_hyp};
__global__ void dispatch(const int* which, const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Op f = table[which[i] & 3];
  out[i] = f(a[i], b[i]);
}''', "dispatch", 2, 64, lambda r: [r.integers(0, 100, 128).astype(np.int32), f32_mix(r, 128), r.standard_normal(128).astype(np.float32),
                                    np.zeros(128, np.float32), np.int32(128)])

case("virtual_functions_in_kernel", r'''
struct Shape { __device__ virtual float area() const = 0; __device__ virtual int sides() const { return 0; } };
struct Square : Shape { float s; __device__ Square(float s) : s(s) {} __device__ float area() const override { return s * s; }
                        __device__ int sides() const override { return 4; } };
struct Circle : Shape { float r; __device__ Circle(float r) : r(r) {} __device__ float area() const override { return 3.14159265f * r * r; } };
struct Tri : Shape { float b, h; __device__ Tri(float b, float h) : b(b), h(h) {} __device__ float area() const override { return 0.5f * b * h; }
                     __device__ int sides() const override { return 3; } };
__device__ __noinline__ float describe(const Shape& s, int* sides) { *sides = s.sides(); return s.area(); }
__global__ void shapes(const float* size, float* area, int* sides, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Square sq(size[i]); Circle c(size[i]); Tri t(size[i], 2.0f);
  const Shape* all[3] = {&sq, &c, &t};
  area[i] = describe(*all[i % 3], &sides[i]);
}''', "shapes", 1, 96, lambda r: [(r.random(96) * 10).astype(np.float32), np.zeros(96, np.float32), np.zeros(96, np.int32),
                                  np.int32(96)])

case("blelloch_scan_shared", r'''
#define N 256
__global__ void prescan(const int* in, int* out, int* total) {
  __shared__ int temp[N];
  int t = threadIdx.x;
  temp[2 * t] = in[2 * t];
  temp[2 * t + 1] = in[2 * t + 1];
  int offset = 1;
  for (int d = N >> 1; d > 0; d >>= 1) {
    __syncthreads();
    if (t < d) { int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1; temp[bi] += temp[ai]; }
    offset *= 2;
  }
  if (t == 0) { *total = temp[N - 1]; temp[N - 1] = 0; }
  for (int d = 1; d < N; d *= 2) {
    offset >>= 1;
    __syncthreads();
    if (t < d) {
      int ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      int v = temp[ai]; temp[ai] = temp[bi]; temp[bi] += v;
    }
  }
  __syncthreads();
  out[2 * t] = temp[2 * t];
  out[2 * t + 1] = temp[2 * t + 1];
}''', "prescan", 1, 128, lambda r: [r.integers(-1000, 1000, 256).astype(np.int32), np.zeros(256, np.int32),
                                    np.zeros(1, np.int32)])

case("bitonic_sort_shared_block", r'''
__global__ void bitonic(float* data) {
  __shared__ float s[512];
  int t = threadIdx.x;
  s[t] = data[t]; s[t + 256] = data[t + 256];
  for (int k = 2; k <= 512; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      __syncthreads();
      for (int i = t; i < 512; i += 256) {
        int p = i ^ j;
        if (p > i) {
          bool up = (i & k) == 0;
          float a = s[i], b = s[p];
          if ((a > b) == up) { s[i] = b; s[p] = a; }
        }
      }
    }
  __syncthreads();
  data[t] = s[t]; data[t + 256] = s[t + 256];
}''', "bitonic", 1, 256, lambda r: [np.concatenate([r.standard_normal(500), [0.0, -0.0, 0.0, -0.0, np.inf, -np.inf, 1e-40,
                                                                          -1e-40, 5, 5, 5, 5]]).astype(np.float32)])

case("tiled_matmul_int_exact", r'''
#define T 16
__global__ void matmul(const int* A, const int* B, int* C, int n) {
  __shared__ int As[T][T], Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x, acc = 0;
  for (int t = 0; t < (n + T - 1) / T; ++t) {
    As[threadIdx.y][threadIdx.x] = row < n && t * T + threadIdx.x < n ? A[row * n + t * T + threadIdx.x] : 0;
    Bs[threadIdx.y][threadIdx.x] = col < n && t * T + threadIdx.y < n ? B[(t * T + threadIdx.y) * n + col] : 0;
    __syncthreads();
    #pragma unroll
    for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}''', "matmul", (3, 3), (16, 16), lambda r: [r.integers(-100, 100, 37 * 37).astype(np.int32),
                                           r.integers(-100, 100, 37 * 37).astype(np.int32), np.zeros(37 * 37, np.int32),
                                           np.int32(37)])

case("mandelbrot_escape_time", r'''
__global__ void mandel(int* iters, float* last, int w, int h, int max_iter) {
  int px = blockIdx.x * blockDim.x + threadIdx.x, py = blockIdx.y * blockDim.y + threadIdx.y;
  if (px >= w || py >= h) return;
  float cx = -2.0f + 2.6f * px / w, cy = -1.2f + 2.4f * py / h, x = 0.0f, y = 0.0f;
  int k = 0;
  while (x * x + y * y <= 4.0f && k < max_iter) {
    float xt = x * x - y * y + cx;
    y = 2.0f * x * y + cy;
    x = xt;
    ++k;
  }
  iters[py * w + px] = k;
  last[py * w + px] = x * x + y * y;
}''', "mandel", (3, 3), (16, 8), lambda r: [np.zeros(40 * 24, np.int32), np.zeros(40 * 24, np.float32), np.int32(40),
                                          np.int32(24), np.int32(200)])

case("n_queens_backtracking_local_stack", r'''
__device__ __noinline__ int queens(int n, int row, unsigned cols, unsigned d1, unsigned d2) {
  if (row == n) return 1;
  int count = 0;
  unsigned free = ~(cols | d1 | d2) & ((1u << n) - 1);
  while (free) {
    unsigned bit = free & -free;
    free ^= bit;
    count += queens(n, row + 1, cols | bit, (d1 | bit) << 1, (d2 | bit) >> 1);
  }
  return count;
}
__global__ void nqueens(int* out) {
  int t = threadIdx.x;
  int n = 4 + t % 5, first = t / 5;     // first-row column chosen per thread
  out[t] = first < n ? queens(n, 1, 1u << first, (1u << first) << 1, (1u << first) >> 1) : -1;
}''', "nqueens", 1, 45, lambda r: [np.zeros(45, np.int32)])

case("binary_search_sorted", r'''
__global__ void lower_bound(const float* sorted, int len, const float* keys, int* pos, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int lo = 0, hi = len;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    if (sorted[mid] < keys[i]) lo = mid + 1; else hi = mid;
  }
  pos[i] = lo;
}''', "lower_bound", 2, 64, lambda r: [np.sort(r.standard_normal(1000)).astype(np.float32), np.int32(1000),
                                       np.concatenate([[np.nan, np.inf, -np.inf, 0.0, -0.0], r.standard_normal(123)]).astype(np.float32),
                                       np.zeros(128, np.int32), np.int32(128)])

case("prime_sieve_trial_division", r'''
__global__ void primes(const unsigned* v, int* is_prime, unsigned* next, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned x = v[i];
  bool p = x >= 2;
  for (unsigned d = 2; p && d * d <= x; ++d) if (x % d == 0) p = false;
  is_prime[i] = p;
  unsigned y = x + 1;
  for (;;) {
    bool q = y >= 2;
    for (unsigned d = 2; q && d * d <= y; ++d) if (y % d == 0) q = false;
    if (q) break;
    ++y;
  }
  next[i] = y;
}''', "primes", 2, 64, lambda r: [np.concatenate([[0, 1, 2, 3, 4, 65521, 65535], r.integers(0, 200000, 121)]).astype(np.uint32),
                                  np.zeros(128, np.int32), np.zeros(128, np.uint32), np.int32(128)])

case("launch_bounds_and_loop_carried_select", r'''
__global__ void __launch_bounds__(128, 4) running(const float* x, float* mx, int* argmx, int len) {
  int t = threadIdx.x;
  float best = __int_as_float(0xff800000);   // -inf
  int at = -1;
  for (int k = t; k < len; k += blockDim.x) {
    float v = x[k];
    bool better = v > best || (v == best && k < at);
    best = better ? v : best;
    at = better ? k : at;
  }
  mx[t] = best;
  argmx[t] = at;
}''', "running", 1, 128, lambda r: [np.concatenate([[np.nan, 3.0, 3.0], r.standard_normal(997)]).astype(np.float32),
                                     np.zeros(128, np.float32), np.zeros(128, np.int32), np.int32(1000)])

case("gcd_lcm_modulo_loops", r'''
__device__ unsigned gcd(unsigned a, unsigned b) { while (b) { unsigned t = a % b; a = b; b = t; } return a; }
__device__ unsigned binary_gcd(unsigned a, unsigned b) {
  if (a == 0) return b;
  if (b == 0) return a;
  int shift = __ffs(a | b) - 1;
  a >>= __ffs(a) - 1;
  do { b >>= __ffs(b) - 1; if (a > b) { unsigned t = a; a = b; b = t; } b -= a; } while (b);
  return a << shift;
}
__global__ void gcds(const unsigned* a, const unsigned* b, unsigned* out, unsigned long long* lcm, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned g = gcd(a[i], b[i]);
  out[2 * i] = g;
  out[2 * i + 1] = binary_gcd(a[i], b[i]);
  lcm[i] = g ? (unsigned long long)a[i] / g * b[i] : 0;
}''', "gcds", 2, 64, lambda r: [np.concatenate([[0, 0, 5, 1 << 31], r.integers(0, 2 ** 32, 124, dtype=np.uint64)]).astype(np.uint32),
                                np.concatenate([[0, 7, 0, 1 << 30], r.integers(0, 2 ** 20, 124) * 6]).astype(np.uint32),
                                np.zeros(256, np.uint32), np.zeros(128, np.uint64), np.int32(128)])
