"""Textures and surfaces: every geometry, filter, address mode, read mode and format, and the
surface instructions, with the coordinates where a texture unit's fixed-point arithmetic shows.

Most cases read a texture at many coordinates and write what came back (four 32-bit words per
sample), so the recorded outputs pin down the hardware's rules: where point sampling switches
texels, the linear filter's 1.8 fixed-point weights, how wrap/mirror/border treat edges, what
normalized reads of 8/16-bit texels and sRGB give, which cube face a direction picks.
"""
import numpy as np

from . import Corpus, TexArg, f32_mix

CASES = Corpus("textures")
BLOCK = 128


def case(name, src, kernel, n, make, **kw):
    CASES.case(name, src, kernel, (n + BLOCK - 1) // BLOCK, BLOCK, make, **kw)


def floats(r, n):
    """n float32s: the corpus's edge values first, then normal numbers and random bit patterns."""
    return f32_mix(r, max(n, 64))[:n]


def f32(*v):
    return np.array(v, np.float32)


# ---------------------------------------------------------------- coordinates
DELTAS = np.array([0.0] + [s * 2.0 ** -k for k in (1, 2, 3, 6, 7, 8, 9, 10, 12, 16, 20, 23, 24) for s in (1, -1)])
SPECIAL = f32(np.nan, np.inf, -np.inf, 1e30, -1e30, 3e9, -3e9, 2.0 ** 31, 16777217.0, 1e-40, -1e-40, -0.0, 0.0)


def near_integers(lo, hi, scale=1.0):
    """k * scale + each of DELTAS (as float32, rounded where the delta is too small), k in [lo, hi]."""
    k = np.arange(lo, hi + 1, dtype=np.float64)[:, None]
    return (k * scale + DELTAS[None, :] * max(scale, 2.0 ** -24)).astype(np.float32).ravel()


def ulps_around(values, n=3):
    """Each float32 value and its n neighbours on either side."""
    v = np.asarray(values, np.float32)
    out = [v]
    up, down = v.copy(), v.copy()
    for _ in range(n):
        up, down = np.nextafter(up, np.float32(np.inf)), np.nextafter(down, np.float32(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def points(*parts):
    return np.concatenate([np.asarray(p, np.float32).ravel() for p in parts])


def grid2(xs, ys):
    x, y = np.meshgrid(np.asarray(xs, np.float32), np.asarray(ys, np.float32))
    return np.stack([x.ravel(), y.ravel()], 1).astype(np.float32)


def texel_values(rng, shape, kind="varied"):
    """float32 texels: small integers (exact sums) or values of varied sign and magnitude."""
    if kind == "ints":
        return rng.integers(-50, 50, shape).astype(np.float32)
    return (rng.standard_normal(shape) * np.exp2(rng.integers(-6, 7, shape))).astype(np.float32)


def out4(n, dtype=np.float32):
    return np.zeros((n, 4), dtype)


# ---------------------------------------------------------------- kernels
TEX_1D = r'''
template <class T>
__global__ void tex_1d(cudaTextureObject_t t, const float* x, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1D<T>(t, x[i]);
}'''

TEX_2D = r'''
template <class T>
__global__ void tex_2d(cudaTextureObject_t t, const float2* p, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<T>(t, p[i].x, p[i].y);
}'''

TEX_3D = r'''
template <class T>
__global__ void tex_3d(cudaTextureObject_t t, const float4* p, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex3D<T>(t, p[i].x, p[i].y, p[i].z);
}'''

TEX_1D_LAYERED = r'''
template <class T>
__global__ void tex_1d_layered(cudaTextureObject_t t, const float* x, const int* layer, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1DLayered<T>(t, x[i], layer[i]);
}'''

TEX_2D_LAYERED = r'''
template <class T>
__global__ void tex_2d_layered(cudaTextureObject_t t, const float2* p, const int* layer, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLayered<T>(t, p[i].x, p[i].y, layer[i]);
}'''

TEX_CUBE = r'''
template <class T>
__global__ void tex_cube(cudaTextureObject_t t, const float4* p, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemap<T>(t, p[i].x, p[i].y, p[i].z);
}'''

TEX_CUBE_LAYERED = r'''
template <class T>
__global__ void tex_cube_layered(cudaTextureObject_t t, const float4* p, const int* layer, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = texCubemapLayered<T>(t, p[i].x, p[i].y, p[i].z, layer[i]);
}'''

FETCH_1D = r'''
template <class T>
__global__ void fetch_1d(cudaTextureObject_t t, const int* x, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex1Dfetch<T>(t, x[i]);
}'''

TEX_2D_LOD = r'''
template <class T>
__global__ void tex_2d_lod(cudaTextureObject_t t, const float4* p, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DLod<T>(t, p[i].x, p[i].y, p[i].z);
}'''

TEX_1D_3D_LOD = r'''
__global__ void tex_1d_3d_lod(cudaTextureObject_t t1, cudaTextureObject_t t3, const float4* p, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[2 * i] = tex1DLod<float4>(t1, p[i].x, p[i].w);
    out[2 * i + 1] = tex3DLod<float4>(t3, p[i].x, p[i].y, p[i].z, p[i].w);
  }
}'''

TEX_2D_GRAD = r'''
template <class T>
__global__ void tex_2d_grad(cudaTextureObject_t t, const float2* p, const float4* g, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2DGrad<T>(t, p[i].x, p[i].y, make_float2(g[i].x, g[i].y), make_float2(g[i].z, g[i].w));
}'''

GATHER_2D = r'''
template <class T>
__global__ void gather_2d(cudaTextureObject_t t, const float2* p, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[4 * i + 0] = tex2Dgather<T>(t, p[i].x, p[i].y, 0);
    out[4 * i + 1] = tex2Dgather<T>(t, p[i].x, p[i].y, 1);
    out[4 * i + 2] = tex2Dgather<T>(t, p[i].x, p[i].y, 2);
    out[4 * i + 3] = tex2Dgather<T>(t, p[i].x, p[i].y, 3);
  }
}'''

TEX_2D_INT_COORDS = r'''
__global__ void tex_2d_int_coords(cudaTextureObject_t t, const int2* p, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float4 v;
  asm("tex.2d.v4.f32.s32 {%0, %1, %2, %3}, [%4, {%5, %6}];"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(t), "r"(p[i].x), "r"(p[i].y));
  out[i] = v;
}'''

QUERY_LEVEL = r'''
__global__ void query_level(cudaTextureObject_t t, int* out) {
  int lod = threadIdx.x, w, h, d;
  if (lod >= 6) return;
  asm("txq.level.width.b32 %0, [%1], %2;" : "=r"(w) : "l"(t), "r"(lod));
  asm("txq.level.height.b32 %0, [%1], %2;" : "=r"(h) : "l"(t), "r"(lod));
  asm("txq.level.depth.b32 %0, [%1], %2;" : "=r"(d) : "l"(t), "r"(lod));
  out[3 * lod] = w; out[3 * lod + 1] = h; out[3 * lod + 2] = d;
}'''

SURF_READ_2D = r'''
template <class T, cudaSurfaceBoundaryMode M>
__global__ void surf_read_2d(cudaSurfaceObject_t s, const int2* p, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = surf2Dread<T>(s, p[i].x, p[i].y, M);
}'''

SURF_WRITE_2D = r'''
template <class T, cudaSurfaceBoundaryMode M>
__global__ void surf_write_2d(cudaSurfaceObject_t s, const int2* p, const T* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) surf2Dwrite<T>(v[i], s, p[i].x, p[i].y, M);
}'''

SURF_WRITE_1D_3D = r'''
__global__ void surf_write_1d_3d(cudaSurfaceObject_t s1, cudaSurfaceObject_t s3, const int4* p, const int2* v,
                                 const float4* f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  surf1Dwrite(v[i], s1, i * 8, cudaBoundaryModeZero);
  surf3Dwrite(f[i], s3, p[i].x * 16, p[i].y, p[i].z, cudaBoundaryModeZero);
}'''

SURF_LAYERED_CUBE = r'''
__global__ void surf_layered_cube(cudaSurfaceObject_t from, cudaSurfaceObject_t to, cudaSurfaceObject_t cube,
                                  const int4* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  short2 v = surf2DLayeredread<short2>(from, p[i].x * 4, p[i].y, p[i].z, cudaBoundaryModeZero);
  surf2DLayeredwrite(make_short2(v.y, (short)(v.x + i)), to, p[i].x * 4, p[i].y, p[i].z, cudaBoundaryModeZero);
  surfCubemapwrite((unsigned char)(i * 7 + v.x), cube, i % 3, (i / 3) % 3, i / 9, cudaBoundaryModeZero);
}'''

SURF_READ_WIDTHS = r'''
__global__ void surf_read_widths(cudaSurfaceObject_t s, const int2* p, unsigned long long* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned char b = surf2Dread<unsigned char>(s, p[i].x, p[i].y, cudaBoundaryModeZero);
  unsigned short h = surf2Dread<unsigned short>(s, p[i].x & ~1, p[i].y, cudaBoundaryModeZero);
  unsigned long long q = surf2Dread<unsigned long long>(s, p[i].x & ~7, p[i].y, cudaBoundaryModeZero);
  uint4 w = surf2Dread<uint4>(s, p[i].x & ~15, p[i].y, cudaBoundaryModeClamp);
  out[4 * i] = b; out[4 * i + 1] = h; out[4 * i + 2] = q; out[4 * i + 3] = w.x ^ w.y ^ w.z ^ w.w;
}'''

SURED_ADD = r'''
__global__ void sured_add(cudaSurfaceObject_t s, const int2* p, const unsigned* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) asm volatile("sured.b.add.2d.u32.trap [%0, {%1, %2}], %3;" :: "l"(s), "r"(p[i].x * 4), "r"(p[i].y), "r"(v[i]));
}'''

SURED_MIN_MAX = r'''
__global__ void sured_min_max(cudaSurfaceObject_t smin, cudaSurfaceObject_t smax, const int2* p, const int* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  asm volatile("sured.b.min.2d.s32.zero [%0, {%1, %2}], %3;" :: "l"(smin), "r"(p[i].x * 4), "r"(p[i].y), "r"(v[i]));
  asm volatile("sured.b.max.2d.u32.clamp [%0, {%1, %2}], %3;" :: "l"(smax), "r"(p[i].x * 4), "r"(p[i].y), "r"(v[i]));
}'''

SURED_BITS = r'''
__global__ void sured_bits(cudaSurfaceObject_t sand, cudaSurfaceObject_t sor, const int2* p, const unsigned* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  asm volatile("sured.b.and.2d.b32.trap [%0, {%1, %2}], %3;" :: "l"(sand), "r"(p[i].x * 4), "r"(p[i].y), "r"(v[i]));
  asm volatile("sured.b.or.2d.b32.trap [%0, {%1, %2}], %3;" :: "l"(sor), "r"(p[i].x * 4), "r"(p[i].y), "r"(v[i]));
}'''

SURED_64 = r'''
__global__ void sured_64(cudaSurfaceObject_t sadd, cudaSurfaceObject_t smin, const int* x, const long long* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  asm volatile("sured.b.add.1d.u64.trap [%0, {%1}], %2;" :: "l"(sadd), "r"(x[i] * 8), "l"(v[i]));
  asm volatile("sured.b.min.1d.s64.trap [%0, {%1}], %2;" :: "l"(smin), "r"(x[i] * 8), "l"(v[i]));
}'''

SUST_P = r'''
__global__ void sust_formatted(cudaSurfaceObject_t s, const int2* p, const float4* v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) asm volatile("sust.p.2d.v4.b32.zero [%0, {%1, %2}], {%3, %4, %5, %6};"
                          :: "l"(s), "r"(p[i].x), "r"(p[i].y), "f"(v[i].x), "f"(v[i].y), "f"(v[i].z), "f"(v[i].w));
}'''


# ---------------------------------------------------------------- helpers for cases
def ramp(n, start=1.0):
    return (np.arange(n, dtype=np.float32) + np.float32(start))


def onehot(shape, at, dtype=np.float32, value=1):
    a = np.zeros(shape, dtype)
    a[at] = value
    return a


def with_n(args):
    """Append n (the number of samples: the first axis of the last output) to the arguments."""
    return args + [np.int32(len(args[-1]))]


def tex1d_case(name, data, coords, view, array=None, T="float4", out_dtype=np.float32):
    def make(r):
        d = data(r) if callable(data) else data
        x = coords(r) if callable(coords) else coords
        return with_n([TexArg(d, array=array or {}, view=view), x, out4(len(x), out_dtype)])
    n = len(coords(np.random.default_rng(0)) if callable(coords) else coords)
    case(name, TEX_1D, f"tex_1d<{T}>", n, make)


def tex2d_case(name, data, coords, view, array=None, T="float4", out_dtype=np.float32, kind="array"):
    def make(r):
        d = data(r) if callable(data) else data
        p = coords(r) if callable(coords) else coords
        return with_n([TexArg(d, kind, array or {}, view), p, out4(len(p), out_dtype)])
    n = len(coords(np.random.default_rng(0)) if callable(coords) else coords)
    case(name, TEX_2D, f"tex_2d<{T}>", n, make)


# ---------------------------------------------------------------- 1D: where point sampling switches texels
ONE_D = ramp(16)
tex1d_case("tex1d_point_unnormalized_clamp", ONE_D, points(near_integers(-3, 19), SPECIAL),
           dict(filter="point", address="clamp"))
tex1d_case("tex1d_point_unnormalized_border", ONE_D, points(near_integers(-3, 19), SPECIAL),
           dict(filter="point", address="border", border=(-2.5, 7.0, 0.125, -0.0)))
tex1d_case("tex1d_point_unnormalized_wrap", ONE_D, points(near_integers(-20, 36), SPECIAL),
           dict(filter="point", address="wrap"))
tex1d_case("tex1d_point_unnormalized_mirror", ONE_D, points(near_integers(-20, 36), SPECIAL),
           dict(filter="point", address="mirror"))
THIRTEENTHS = points(ulps_around(np.arange(-30, 45) / np.float32(13), 4), near_integers(-3, 3, 0.5), SPECIAL)
tex1d_case("tex1d_point_normalized_clamp", ramp(13), THIRTEENTHS, dict(filter="point", normalized=True))
tex1d_case("tex1d_point_normalized_wrap", ramp(13), THIRTEENTHS,
           dict(filter="point", normalized=True, address="wrap"))
tex1d_case("tex1d_point_normalized_mirror", ramp(13), THIRTEENTHS,
           dict(filter="point", normalized=True, address="mirror"))
tex1d_case("tex1d_point_normalized_border", ramp(13), THIRTEENTHS,
           dict(filter="point", normalized=True, address="border", border=(100.0, 200.0, 300.0, 400.0)))
tex1d_case("tex1d_point_normalized_pow2_wrap", ramp(16), points(ulps_around(np.arange(-40, 60) / np.float32(16), 3),
                                                                  SPECIAL),
           dict(filter="point", normalized=True, address="wrap"))

# ---------------------------------------------------------------- 1D linear: the filter's weights and arithmetic
DENSE = points(np.arange(2.0 * 2048, 5.0 * 2048 + 1) / 2048, ulps_around(np.arange(4, 20) / np.float32(4), 2))
tex1d_case("tex1d_linear_weights_onehot", onehot(8, 3), DENSE, dict(filter="linear"))
tex1d_case("tex1d_linear_weights_normalized", onehot(8, 3), points(DENSE / 8, ulps_around(np.arange(0, 65) / 64, 2)),
           dict(filter="linear", normalized=True))
tex1d_case("tex1d_linear_weights_normalized_odd", onehot(13, 6),
           points(np.arange(5.0 * 1024, 8.0 * 1024 + 1) / (1024 * 13)), dict(filter="linear", normalized=True))
tex1d_case("tex1d_linear_random_values", lambda r: texel_values(r, 64),
           lambda r: (r.random(4096) * 66 - 1).astype(np.float32), dict(filter="linear"))
tex1d_case("tex1d_linear_exact_halves", lambda r: texel_values(r, 64, "ints"),
           lambda r: (np.floor(r.random(2048) * 64 * 16) / 16).astype(np.float32), dict(filter="linear"))
SPECIAL_TEXELS = f32(1.0, np.inf, 2.0, -np.inf, np.inf, np.nan, 3.0, 3.4e38, 3.4e38, -3.4e38, 1e-45, 1e-40, -1e-40,
                     1.0 + 2 ** -23, 1.0, 16777216.0, 1.0, -0.0, -0.0, 0.0, 5.0, -5.0, 1e20, 1e-20)
tex1d_case("tex1d_linear_special_texels", SPECIAL_TEXELS,
           points(np.arange(0, len(SPECIAL_TEXELS) * 8 + 1) / 8), dict(filter="linear"))
tex1d_case("tex1d_linear_wrap_normalized", lambda r: texel_values(r, 7),
           points(np.arange(-1.5 * 512, 2.5 * 512) / 512), dict(filter="linear", normalized=True, address="wrap"))
tex1d_case("tex1d_linear_mirror_normalized", lambda r: texel_values(r, 7),
           points(np.arange(-1.5 * 512, 2.5 * 512) / 512), dict(filter="linear", normalized=True, address="mirror"))
tex1d_case("tex1d_linear_border_normalized", lambda r: texel_values(r, 7),
           points(np.arange(-0.5 * 512, 1.5 * 512) / 512),
           dict(filter="linear", normalized=True, address="border", border=(8.0, -4.0, 0.5, 1.0)))
tex1d_case("tex1d_linear_clamp_edges", lambda r: texel_values(r, 9), points(near_integers(-2, 11), SPECIAL),
           dict(filter="linear"))
tex1d_case("tex1d_linear_float2_wrap_unnormalized", lambda r: texel_values(r, (10, 2)),
           points(np.arange(-15 * 64, 25 * 64) / 64), dict(filter="linear", address="wrap"), dict(channels=2))

# ---------------------------------------------------------------- 2D
SMALL = np.arange(35, dtype=np.float32).reshape(5, 7) + 1
COORDS_2D = grid2(np.arange(-1.3, 2.3, 0.05), np.arange(-1.3, 2.3, 0.07))
tex2d_case("tex2d_point_wrap_mirror", SMALL, COORDS_2D,
           dict(filter="point", normalized=True, address=("wrap", "mirror")))
tex2d_case("tex2d_point_border_clamp", SMALL, grid2(np.arange(-3, 10, 0.25), np.arange(-3, 8, 0.25)),
           dict(filter="point", address=("border", "clamp"), border=(9.0, -1.0, 0.5, 2.0)))
tex2d_case("tex2d_linear_random", lambda r: texel_values(r, (16, 16)),
           lambda r: (r.random((4096, 2)) * 18 - 1).astype(np.float32), dict(filter="linear"))
tex2d_case("tex2d_linear_onehot_weights", onehot((4, 4), (1, 2)),
           grid2(np.arange(1.5 * 64, 3.5 * 64 + 1) / 64, np.arange(0.5 * 64, 2.5 * 64 + 1) / 64), dict(filter="linear"))
tex2d_case("tex2d_linear_float4_wrap", lambda r: texel_values(r, (9, 11, 4)),
           lambda r: (r.random((4096, 2)) * 3 - 1).astype(np.float32),
           dict(filter="linear", normalized=True, address="wrap"), dict(channels=4))
tex2d_case("tex2d_linear_float2_mirror", lambda r: texel_values(r, (6, 5, 2)),
           lambda r: (r.random((4096, 2)) * 4 - 1.5).astype(np.float32),
           dict(filter="linear", normalized=True, address="mirror"), dict(channels=2))
tex2d_case("tex2d_linear_float4_border", lambda r: texel_values(r, (5, 6, 4)),
           lambda r: (r.random((4096, 2)) * 10 - 2).astype(np.float32),
           dict(filter="linear", address="border", border=(1.5, -2.0, 1e30, np.inf)), dict(channels=4))
tex2d_case("tex2d_linear_integer_texels", lambda r: texel_values(r, (16, 16), "ints"),
           lambda r: (np.floor(r.random((4096, 2)) * 16 * 256) / 256).astype(np.float32), dict(filter="linear"))

# ---------------------------------------------------------------- formats and read modes
U8 = np.arange(256, dtype=np.uint8)
AT_CENTRES = lambda n: (np.arange(n) + np.float32(0.5)).astype(np.float32)   # noqa: E731
tex1d_case("u8_read_normalized_all", U8, AT_CENTRES(256), dict(read="normalized"))
tex1d_case("s8_read_normalized_all", U8.view(np.int8), AT_CENTRES(256), dict(read="normalized"))
tex1d_case("u16_read_normalized_all", np.arange(65536, dtype=np.uint16), AT_CENTRES(65536), dict(read="normalized"))
tex1d_case("s16_read_normalized_all", np.arange(65536, dtype=np.uint16).view(np.int16), AT_CENTRES(65536),
           dict(read="normalized"))
tex1d_case("half_texels_all", np.arange(65536, dtype=np.uint16).view(np.float16), AT_CENTRES(65536), {})
tex1d_case("u8x4_element_read", lambda r: r.integers(0, 256, (64, 4)).astype(np.uint8), AT_CENTRES(64), {},
           dict(channels=4), T="uint4", out_dtype=np.uint32)
tex1d_case("s8x2_element_read_sign_extends", lambda r: r.integers(-128, 128, (64, 2)).astype(np.int8), AT_CENTRES(64), {},
           dict(channels=2), T="int4", out_dtype=np.int32)
tex1d_case("s16_u16_element_read", lambda r: r.integers(-2 ** 15, 2 ** 15, 64).astype(np.int16), AT_CENTRES(64), {},
           T="int4", out_dtype=np.int32)
tex1d_case("s32x4_element_read", lambda r: r.integers(-2 ** 31, 2 ** 31, (32, 4)).astype(np.int32),
           points(AT_CENTRES(32), -3, 40), {}, dict(channels=4), T="int4", out_dtype=np.int32)
tex1d_case("float_texture_read_as_uint", lambda r: floats(r, 64), AT_CENTRES(64), {}, T="uint4", out_dtype=np.uint32)
tex1d_case("u8_element_texture_read_as_float", U8, AT_CENTRES(256), {})
tex1d_case("u8_normalized_linear", U8, lambda r: (r.random(4096) * 258 - 1).astype(np.float32),
           dict(read="normalized", filter="linear"))
tex1d_case("u8_normalized_linear_step", onehot(8, 4, np.uint8, 255), DENSE, dict(read="normalized", filter="linear"))
tex1d_case("s8_normalized_linear", lambda r: r.integers(-128, 128, 64).astype(np.int8),
           lambda r: (r.random(4096) * 66 - 1).astype(np.float32), dict(read="normalized", filter="linear"))
tex1d_case("u16_normalized_linear", lambda r: r.integers(0, 65536, 64).astype(np.uint16),
           lambda r: (r.random(4096) * 66 - 1).astype(np.float32), dict(read="normalized", filter="linear"))
tex1d_case("s16_normalized_linear", lambda r: r.integers(-2 ** 15, 2 ** 15, 64).astype(np.int16),
           lambda r: (r.random(4096) * 66 - 1).astype(np.float32), dict(read="normalized", filter="linear"))
tex1d_case("half_linear", lambda r: texel_values(r, 64).astype(np.float16),
           lambda r: (r.random(4096) * 66 - 1).astype(np.float32), dict(filter="linear"))
tex1d_case("srgb_u8x4_all_values", np.repeat(U8[:, None], 4, 1).copy(), AT_CENTRES(256),
           dict(read="normalized", srgb=True), dict(channels=4))
tex1d_case("srgb_u8x4_linear", lambda r: r.integers(0, 256, (64, 4)).astype(np.uint8),
           lambda r: (r.random(2048) * 66 - 1).astype(np.float32), dict(read="normalized", srgb=True, filter="linear"),
           dict(channels=4))
tex1d_case("u8x4_normalized_border_colour", lambda r: r.integers(0, 256, (8, 4)).astype(np.uint8),
           points(near_integers(-2, 10)), dict(read="normalized", address="border", border=(0.25, 2.0, -1.0, 0.5)),
           dict(channels=4))
tex1d_case("u16x2_element_border_colour", lambda r: r.integers(0, 65536, (8, 2)).astype(np.uint16),
           points(near_integers(-2, 10)), dict(address="border", border=(1.5, -3.0, 7.0, 65537.0)), dict(channels=2),
           T="uint4", out_dtype=np.uint32)

# ---------------------------------------------------------------- linear and pitched memory


def fetch_case(name, data, index, view, channels=1, T="float4", out_dtype=np.float32):
    def make(r):
        d = data(r) if callable(data) else data
        return with_n([TexArg(d, "linear", dict(channels=channels), view), index, out4(len(index), out_dtype)])
    case(name, FETCH_1D, f"fetch_1d<{T}>", len(index), make)


INDEX = np.concatenate([np.arange(-5, 1006), [2 ** 31 - 1, -2 ** 31, 1 << 20, 999999]]).astype(np.int32)
fetch_case("fetch1d_linear_float", lambda r: floats(r, 1000), INDEX, {})
fetch_case("fetch1d_linear_int4", lambda r: r.integers(-2 ** 31, 2 ** 31, (1000, 4)).astype(np.int32), INDEX, {}, 4,
           T="int4", out_dtype=np.int32)
fetch_case("fetch1d_linear_uchar4_normalized", lambda r: r.integers(0, 256, (1000, 4)).astype(np.uint8), INDEX,
           dict(read="normalized"), 4)
fetch_case("fetch1d_linear_filter_and_address_ignored", lambda r: floats(r, 1000), INDEX,
           dict(filter="linear", address="wrap", normalized=True))
tex2d_case("pitch2d_linear_filter", lambda r: texel_values(r, (9, 13)),
           lambda r: (r.random((4096, 2)) * 1.4 - 0.2).astype(np.float32),
           dict(filter="linear", normalized=True), dict(pitch=64), kind="pitch2d")
tex2d_case("pitch2d_u8_wrap", lambda r: r.integers(0, 256, (7, 30)).astype(np.uint8), COORDS_2D,
           dict(read="normalized", normalized=True, address="wrap"), dict(pitch=32), kind="pitch2d")

# ---------------------------------------------------------------- layered, 3D, cubemaps
LAYERS = np.array([-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 100, -100, 2 ** 31 - 1, -2 ** 31], np.int32)


def layered_case(name, src, kernel, data, coords, view, array):
    def make(r):
        d = data(r) if callable(data) else data
        p = coords(r)
        layer = np.resize(LAYERS, len(p))
        return with_n([TexArg(d, array=array, view=view), p, layer, out4(len(p))])
    case(name, src, kernel, len(coords(np.random.default_rng(0))), make)


layered_case("tex2d_layered_point", TEX_2D_LAYERED, "tex_2d_layered<float4>",
             (np.arange(3 * 4 * 5, dtype=np.float32) + 1).reshape(3, 4, 5),
             lambda r: (r.random((1400, 2)) * 7 - 1).astype(np.float32), dict(filter="point"), dict(layered=True))
layered_case("tex2d_layered_linear", TEX_2D_LAYERED, "tex_2d_layered<float4>",
             lambda r: texel_values(r, (4, 6, 5, 4)),
             lambda r: (r.random((1400, 2)) * 1.6 - 0.3).astype(np.float32),
             dict(filter="linear", normalized=True, address="mirror"), dict(layered=True, channels=4))
layered_case("tex1d_layered_linear_wrap", TEX_1D_LAYERED, "tex_1d_layered<float4>",
             lambda r: texel_values(r, (4, 9)), lambda r: (r.random(1400) * 3 - 1).astype(np.float32),
             dict(filter="linear", normalized=True, address="wrap"), dict(layered=True))


def tex3d_case(name, data, coords, view, array=None):
    def make(r):
        d = data(r) if callable(data) else data
        p = coords(r)
        return with_n([TexArg(d, array=array or {}, view=view), p, out4(len(p))])
    case(name, TEX_3D, "tex_3d<float4>", len(coords(np.random.default_rng(0))), make)


def xyz(r, n, lo, hi):
    p = np.zeros((n, 4), np.float32)
    p[:, :3] = r.random((n, 3)) * (hi - lo) + lo
    return p


def grid3(step, lo, hi):
    v = np.arange(lo, hi + step / 2, step, dtype=np.float32)
    x, y, z = np.meshgrid(v, v, v, indexing="ij")
    return np.stack([x.ravel(), y.ravel(), z.ravel(), np.zeros(x.size, np.float32)], 1)


tex3d_case("tex3d_point_normalized_wrap", lambda r: texel_values(r, (3, 4, 5, 4)), lambda r: xyz(r, 4096, -0.5, 1.5),
           dict(normalized=True, address="wrap"), dict(channels=4))
tex3d_case("tex3d_linear_random", lambda r: texel_values(r, (4, 5, 6)), lambda r: xyz(r, 4096, -1, 7),
           dict(filter="linear"))
tex3d_case("tex3d_linear_onehot_weights", onehot((3, 3, 3), (1, 1, 1)), lambda r: grid3(1 / 16, 0.5, 2.5),
           dict(filter="linear"))
tex3d_case("tex3d_linear_border_normalized", lambda r: texel_values(r, (3, 3, 4)), lambda r: xyz(r, 4096, -0.3, 1.3),
           dict(filter="linear", normalized=True, address=("border", "clamp", "wrap"), border=(3.0, 0, 0, 0)))



def wide_values(r, shape):
    """float32 texels whose magnitudes differ by up to 2**24: where a filter's alignment of the texels
    to the largest one (texture.weighted_sum, _slices_sum) cuts the small ones."""
    return (r.standard_normal(shape) * np.exp2(r.integers(-12, 13, shape))).astype(np.float32)


# the two z slices' partial sums added as the unit adds them (texture._slices_sum), on fresh values
tex3d_case("tex3d_linear_wide_exponents", lambda r: wide_values(r, (5, 6, 7)), lambda r: xyz(r, 8192, -1, 8),
           dict(filter="linear"))

CUBE = (np.arange(6 * 4 * 4, dtype=np.float32) + 1).reshape(6, 4, 4)


def directions(r):
    axes = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], np.float32)
    ties = np.array([[1, 1, 0], [1, -1, 0], [-1, 1, 0], [0, 1, 1], [0, -1, -1], [1, 0, 1], [-1, 0, -1], [1, 1, 1],
                     [-1, -1, -1], [1, -1, 1], [0, 0, 0], [np.nan, 0, 1], [np.inf, 1, 0], [1, np.inf, np.inf],
                     [-0.0, -0.0, 1], [1e-40, 0, 0], [0.5, 0.99, 0.2], [3, 2.999999, 1]], np.float32)
    rand = (r.standard_normal((1600, 3)) * np.exp2(r.integers(-3, 4, (1600, 1)))).astype(np.float32)
    near = np.array([[1, np.float32(1) - np.float32(2 ** -k), (k % 5) / 5] for k in range(1, 25)]
                    + [[np.float32(1) - np.float32(2 ** -k), -1, 0.3] for k in range(1, 25)], np.float32)
    d = np.concatenate([axes, ties, rand, near])
    return np.concatenate([d, np.zeros((len(d), 1), np.float32)], 1).astype(np.float32)


def cube_case(name, data, view, array=None, layered=False):
    def make(r):
        d = data(r) if callable(data) else data
        p = directions(r)
        args = [TexArg(d, array=dict(cubemap=True, layered=layered, **(array or {})), view=view), p]
        if layered:
            args.append(np.resize(np.array([0, 1, 2, -1], np.int32), len(p)))
        return with_n(args + [out4(len(p))])
    n = len(directions(np.random.default_rng(0)))
    case(name, TEX_CUBE_LAYERED if layered else TEX_CUBE, "tex_cube_layered<float4>" if layered else "tex_cube<float4>",
         n, make)


cube_case("cube_point", CUBE, dict(filter="point"))
cube_case("cube_linear", lambda r: texel_values(r, (6, 4, 4)), dict(filter="linear"))
cube_case("cube_linear_seamless", lambda r: texel_values(r, (6, 4, 4)), dict(filter="linear", seamless_cubemap=True))
cube_case("cube_layered_point", (np.arange(12 * 3 * 3, dtype=np.float32) + 1).reshape(12, 3, 3), dict(filter="point"),
          layered=True)

# ---------------------------------------------------------------- mipmaps, gather, integer coordinates


def mip_levels(size, channels=1, levels=5):
    """Level k of a size x size mipmap: texel values 1000 * k + y * size + x (every level told apart)."""
    out = []
    for k in range(levels):
        s = max(size >> k, 1)
        v = (np.arange(s * s, dtype=np.float32) + 1000 * k).reshape(s, s)
        out.append(np.repeat(v[..., None], channels, -1) * np.float32([1, -1, 0.5, 2][:channels]) if channels > 1 else v)
    return out


def lod_coords(r, n=4096, lod=(-1.5, 6.5)):
    p = np.zeros((n, 4), np.float32)
    p[:, :2] = r.random((n, 2))
    p[:, 2] = np.round((r.random(n) * (lod[1] - lod[0]) + lod[0]) * 64) / 64
    return p


def lod_case(name, view, lod=(-1.5, 6.5), levels=None):
    def make(r):
        return with_n([TexArg(levels or mip_levels(16), "mipmap", {}, view), lod_coords(r, lod=lod), out4(4096)])
    case(name, TEX_2D_LOD, "tex_2d_lod<float4>", 4096, make)


lod_case("tex2d_lod_point_mipmaps", dict(normalized=True, mipmap_filter="point", max_lod=4.0))
lod_case("tex2d_lod_linear_mipmaps", dict(normalized=True, filter="linear", mipmap_filter="linear", max_lod=4.0))
lod_case("tex2d_lod_bias_and_clamp", dict(normalized=True, filter="linear", mipmap_filter="linear", lod_bias=0.75,
                                          min_lod=1.0, max_lod=2.5))
lod_case("tex2d_lod_default_clamp_zero", dict(normalized=True, mipmap_filter="linear", max_lod=0.0))
# the two levels' partial sums of a linear mipmap blend, the same adder as 3D's slices (_slices_sum)
lod_case("tex2d_lod_linear_wide_exponents", dict(normalized=True, filter="linear", mipmap_filter="linear", max_lod=4.0),
         levels=[wide_values(np.random.default_rng(16 + k), (16 >> k, 16 >> k)) for k in range(5)])
tex2d_case("tex2d_mipmapped_without_lod", mip_levels(16), lambda r: r.random((1024, 2)).astype(np.float32),
           dict(normalized=True, filter="linear", mipmap_filter="linear", lod_bias=1.25, max_lod=4.0), kind="mipmap")


def lod_1d_3d(r):
    p = np.zeros((2048, 4), np.float32)
    p[:, :3] = r.random((2048, 3))
    p[:, 3] = np.round((r.random(2048) * 5 - 1) * 64) / 64
    return p


case("tex1d_tex3d_lod", TEX_1D_3D_LOD, "tex_1d_3d_lod", 2048,
     lambda r: [TexArg([np.arange(32 >> k, dtype=np.float32) + 100 * k for k in range(6)], "mipmap", {},
                       dict(normalized=True, filter="linear", mipmap_filter="linear", max_lod=5.0)),
                TexArg([np.full((8 >> k,) * 3, 10.0 * k, np.float32) + np.arange((8 >> k) ** 3, dtype=np.float32)
                        .reshape((8 >> k,) * 3) for k in range(4)], "mipmap", {},
                       dict(normalized=True, filter="linear", mipmap_filter="linear", max_lod=3.0)),
                lod_1d_3d(r), out4(4096), np.int32(2048)])


def grad_case(name, view, scale):
    def make(r):
        p = r.random((4096, 2)).astype(np.float32)
        g = (r.standard_normal((4096, 4)) * np.exp2(r.integers(-9, 1, (4096, 1))) * scale).astype(np.float32)
        g[:64] = np.float32([[1 / 16, 0, 0, 1 / 16], [0, 0, 0, 0], [1 / 8, 0, 0, 0], [1 / 16, 1 / 16, -1 / 16, 1 / 16]] * 16)
        return with_n([TexArg(mip_levels(32, levels=6), "mipmap", {}, view), p, g, out4(4096)])
    case(name, TEX_2D_GRAD, "tex_2d_grad<float4>", 4096, make)


grad_case("tex2d_grad_point_mipmaps", dict(normalized=True, mipmap_filter="point", max_lod=5.0), 1.0)
grad_case("tex2d_grad_linear_mipmaps", dict(normalized=True, filter="linear", mipmap_filter="linear", max_lod=5.0), 1.0)


def gather_case(name, data, view, array, T="float4", out_dtype=np.float32):
    def make(r):
        d = data(r) if callable(data) else data
        p = (r.random((1024, 2)) * 1.6 - 0.3).astype(np.float32)
        return [TexArg(d, array=dict(gather=True, **array), view=view), p, out4(4096, out_dtype), np.int32(1024)]
    case(name, GATHER_2D, f"gather_2d<{T}>", 1024, make)


gather_case("gather_float4_clamp", lambda r: texel_values(r, (5, 6, 4)), dict(normalized=True), dict(channels=4))
gather_case("gather_float1_wrap_linear", lambda r: texel_values(r, (5, 6)),
            dict(normalized=True, address="wrap", filter="linear"), {})
gather_case("gather_uchar4_normalized_border", lambda r: r.integers(0, 256, (4, 7, 4)).astype(np.uint8),
            dict(normalized=True, read="normalized", address="border", border=(0.5, 0.25, 1.0, 0.0)), dict(channels=4))
gather_case("gather_int2_element", lambda r: r.integers(-1000, 1000, (6, 6, 2)).astype(np.int32),
            dict(normalized=True, address="mirror"), dict(channels=2), T="int4", out_dtype=np.int32)


def int_coords(r):
    p = np.stack(np.meshgrid(np.arange(-3, 9), np.arange(-3, 8)), -1).reshape(-1, 2)
    return np.concatenate([p, [[2 ** 31 - 1, 0], [0, -2 ** 31], [100, 100]]]).astype(np.int32)


for addr in ("clamp", "border", "wrap"):
    case(f"tex2d_integer_coordinates_{addr}", TEX_2D_INT_COORDS, "tex_2d_int_coords", 135,
         lambda r, addr=addr: with_n([TexArg(texel_values(r, (4, 5, 4)), array=dict(channels=4),
                                             view=dict(address=addr, filter="linear" if addr == "wrap" else "point",
                                                       normalized=addr == "wrap", border=(5.0, 6.0, 7.0, 8.0))),
                                      int_coords(r), out4(135)]))

# ---------------------------------------------------------------- texture and surface queries
QUERIED = lambda: [   # noqa: E731
    TexArg(np.zeros(100, np.uint8), view=dict(read="normalized", filter="linear")),
    TexArg(np.zeros((7, 9, 4), np.float32), array=dict(channels=4),
           view=dict(normalized=True, address=("wrap", "mirror", "border"), filter="linear")),
    TexArg(np.zeros((3, 4, 5, 2), np.int16), array=dict(channels=2), view=dict(address=("border", "clamp", "mirror"))),
    TexArg(np.zeros((5, 6, 7), np.float16), array=dict(layered=True), view=dict(normalized=True, address="wrap")),
    TexArg(np.zeros((12, 8, 8, 4), np.uint8), array=dict(cubemap=True, layered=True, channels=4),
           view=dict(read="normalized")),
    TexArg(mip_levels(16, 2, 4), "mipmap", dict(channels=2), dict(normalized=True, mipmap_filter="linear", max_lod=3.0)),
]
case("txq_level_sizes", QUERY_LEVEL, "query_level", 6,
     lambda r: [TexArg(mip_levels(16, 1, 5), "mipmap", {}, dict(normalized=True, max_lod=4.0)), np.full(18, -7, np.int32)])


def query_src(instruction, what, count, kind):
    """A kernel that asks one attribute of `count` objects, one thread each."""
    params = ", ".join(f"{kind} o{k}" for k in range(count))
    objects = ", ".join(f"o{k}" for k in range(count))
    return (f"__global__ void query({params}, int* out) {{\n"
            f"  {kind} o[{count}] = {{{objects}}};\n"
            f"  int j = threadIdx.x, v;\n"
            f"  if (j >= {count}) return;\n"
            f'  asm("{instruction}.{what}.b32 %0, [%1];" : "=r"(v) : "l"(o[j]));\n'
            f"  out[j] = v;\n}}")


QUERIED = lambda: [   # noqa: E731
    TexArg(np.zeros(100, np.uint8), view=dict(read="normalized", filter="linear")),
    TexArg(np.zeros((7, 9, 4), np.float32), array=dict(channels=4),
           view=dict(normalized=True, address=("wrap", "mirror", "border"), filter="linear")),
    TexArg(np.zeros((3, 4, 5, 2), np.int16), array=dict(channels=2), view=dict(address=("border", "clamp", "mirror"))),
    TexArg(np.zeros((5, 6, 7), np.float16), array=dict(layered=True), view=dict(normalized=True, address="wrap")),
    TexArg(np.zeros((12, 8, 8, 4), np.uint8), array=dict(cubemap=True, layered=True, channels=4),
           view=dict(read="normalized")),
    TexArg(mip_levels(16, 2, 4), "mipmap", dict(channels=2), dict(normalized=True, mipmap_filter="linear", max_lod=3.0)),
    TexArg(np.zeros((1000, 4), np.uint8), "linear", dict(channels=4), dict(read="normalized")),
    TexArg(np.zeros((9, 13), np.float32), "pitch2d", dict(pitch=64), dict(normalized=True)),
]
for what in ("width", "height", "depth", "channel_data_type", "channel_order", "normalized_coords", "array_size",
             "num_mipmap_levels", "num_samples", "filter_mode", "addr_mode_0", "addr_mode_1", "addr_mode_2",
             "force_unnormalized_coords"):
    case(f"txq_{what}", query_src("txq", what, 8, "cudaTextureObject_t"), "query", 8,
         lambda r: QUERIED() + [np.full(8, -7, np.int32)])
SURFACES_QUERIED = lambda: [   # noqa: E731
    TexArg(np.zeros((7, 9, 4), np.uint8), array=dict(channels=4, surface=True), view=None),
    TexArg(np.zeros(33, np.float32), array=dict(surface=True), view=None),
    TexArg(np.zeros((3, 4, 5, 2), np.int16), array=dict(channels=2, surface=True), view=None),
    TexArg(np.zeros((12, 8, 8), np.float16), array=dict(cubemap=True, layered=True, surface=True), view=None),
    TexArg(np.zeros((4, 17), np.int32), array=dict(layered=True, surface=True), view=None),
]
for what in ("width", "height", "depth", "channel_data_type", "channel_order", "array_size", "memory_layout"):
    case(f"suq_{what}", query_src("suq", what, 5, "cudaSurfaceObject_t"), "query", 5,
         lambda r: SURFACES_QUERIED() + [np.full(5, -7, np.int32)])

# ---------------------------------------------------------------- surfaces


def surface(data, **array):
    return TexArg(data, array=dict(surface=True, **array), view=None)


def surf_coords(width_bytes, height, step=4):
    xs = np.arange(-2 * step, width_bytes + 3 * step, step)
    return np.stack(np.meshgrid(xs, np.arange(-2, height + 3)), -1).reshape(-1, 2).astype(np.int32)


for mode in ("Zero", "Clamp"):
    case(f"surf2d_read_{mode.lower()}", SURF_READ_2D, f"surf_read_2d<float, cudaBoundaryMode{mode}>",
         len(surf_coords(28, 5)), lambda r: with_n([surface(floats(r, 35).reshape(5, 7)), surf_coords(28, 5),
                                                     np.zeros(len(surf_coords(28, 5)), np.float32)]))
case("surf2d_read_unaligned_x", SURF_READ_2D, "surf_read_2d<float, cudaBoundaryModeZero>", len(surf_coords(28, 2, 1)),
     lambda r: with_n([surface(floats(r, 14).reshape(2, 7)), surf_coords(28, 2, 1),
                       np.zeros(len(surf_coords(28, 2, 1)), np.float32)]))
case("surf2d_read_widths", SURF_READ_WIDTHS, "surf_read_widths", len(surf_coords(32, 3, 1)),
     lambda r: [surface(r.integers(0, 256, (3, 8, 4)).astype(np.uint8), channels=4), surf_coords(32, 3, 1),
                np.zeros(4 * len(surf_coords(32, 3, 1)), np.uint64), np.int32(len(surf_coords(32, 3, 1)))])


def unique_writes(r, width, height, elem, oob):
    """Write positions: every in-bounds texel once (shuffled), plus out-of-bounds ones (byte x)."""
    p = np.stack(np.meshgrid(np.arange(width) * elem, np.arange(height)), -1).reshape(-1, 2)
    p = p[r.permutation(len(p))]
    return np.concatenate([p, np.asarray(oob).reshape(-1, 2)]).astype(np.int32)


OOB = [[-4, 0], [0, -1], [1000, 0], [0, 1000], [-2 ** 31, 5], [2 ** 31 - 4, 2]]
case("surf2d_write_zero_uchar4", SURF_WRITE_2D, "surf_write_2d<uchar4, cudaBoundaryModeZero>", 6 * 5 + 6,
     lambda r: with_n([surface(np.zeros((5, 6, 4), np.uint8), channels=4), unique_writes(r, 6, 5, 4, OOB),
                       r.integers(0, 256, (36, 4)).astype(np.uint8)]))
case("surf2d_write_clamp_float", SURF_WRITE_2D, "surf_write_2d<float, cudaBoundaryModeClamp>", 8,
     lambda r: with_n([surface(np.full((4, 5), -1.0, np.float32)),
                       np.array([[-40, 0], [1000, 0], [-4, 3], [8, -7], [4, 9], [20, 1], [1 << 30, 2], [12, 1 << 30]],
                                np.int32), f32(1, 2, 3, 4, 5, 6, 7, 8)]))
case("surf1d_surf3d_write", SURF_WRITE_1D_3D, "surf_write_1d_3d", 60,
     lambda r: [surface(np.zeros((64, 2), np.int32), channels=2), surface(np.zeros((3, 4, 5, 4), np.float32), channels=4),
                np.concatenate([np.stack(np.meshgrid(np.arange(5), np.arange(4), np.arange(3), indexing="ij"), -1)
                                .reshape(-1, 3)[r.permutation(60)], np.zeros((60, 1), int)], 1).astype(np.int32),
                r.integers(-2 ** 31, 2 ** 31, (60, 2)).astype(np.int32), floats(r, 240).reshape(60, 4), np.int32(60)])


def layered_positions(r):
    p = np.stack(np.meshgrid(np.arange(3), np.arange(3), np.arange(2)), -1).reshape(-1, 3)
    p = np.concatenate([p[r.permutation(len(p))], [[5, 0, 0], [0, 0, 9], [0, 0, -1]]])
    return np.concatenate([p, np.zeros((len(p), 1), int)], 1).astype(np.int32)


case("surf_layered_and_cubemap", SURF_LAYERED_CUBE, "surf_layered_cube", 21,
     lambda r: [surface(r.integers(-2 ** 15, 2 ** 15, (2, 3, 3, 2)).astype(np.int16), channels=2, layered=True),
                surface(np.zeros((2, 3, 3, 2), np.int16), channels=2, layered=True),
                surface(np.zeros((6, 3, 3), np.uint8), cubemap=True), layered_positions(r), np.int32(21)])


def sured_case(name, src, kernel, surfaces, make_rest):
    case(name, src, kernel, 512, lambda r: surfaces(r) + make_rest(r) + [np.int32(512)])


HOT = lambda r: np.concatenate([r.integers(0, 4, (512, 1)), r.integers(0, 3, (512, 1))], 1).astype(np.int32)  # noqa: E731
sured_case("sured_add_u32", SURED_ADD, "sured_add", lambda r: [surface(r.integers(0, 2 ** 32, (3, 4)).astype(np.uint32))],
           lambda r: [HOT(r), r.integers(0, 2 ** 32, 512).astype(np.uint32)])
sured_case("sured_min_s32_max_u32", SURED_MIN_MAX, "sured_min_max",
           lambda r: [surface(r.integers(-2 ** 31, 2 ** 31, (3, 4)).astype(np.int32)),
                      surface(r.integers(0, 2 ** 31, (3, 4)).astype(np.int32))],
           lambda r: [np.concatenate([HOT(r)[:500], [[7, 0], [0, 9], [-1, 1], [4, 3], [9, 9], [-5, -5], [1, 1],
                                                      [2, 2], [3, 2], [0, 0], [1, 0], [3, 1]]]).astype(np.int32),
                      r.integers(-2 ** 31, 2 ** 31, 512).astype(np.int32)])
sured_case("sured_and_or", SURED_BITS, "sured_bits",
           lambda r: [surface(np.full((3, 4), 0xFFFFFFFF, np.uint32)), surface(np.zeros((3, 4), np.uint32))],
           lambda r: [HOT(r), (r.integers(0, 2 ** 32, 512) | r.integers(0, 2 ** 32, 512)).astype(np.uint32)])
sured_case("sured_64bit", SURED_64, "sured_64",
           lambda r: [surface(r.integers(0, 2 ** 31, (5, 2)).astype(np.int32), channels=2),
                      surface(r.integers(-2 ** 31, 2 ** 31, (5, 2)).astype(np.int32), channels=2)],
           lambda r: [r.integers(0, 5, 512).astype(np.int32),
                      r.integers(-2 ** 62, 2 ** 62, 512, dtype=np.int64)])
case("sust_p_formatted_uchar4", SUST_P, "sust_formatted", 20,
     lambda r: with_n([surface(np.zeros((4, 5, 4), np.uint8), channels=4),
                       np.stack(np.meshgrid(np.arange(5), np.arange(4)), -1).reshape(-1, 2).astype(np.int32),
                       np.concatenate([f32(-1, 0, 0.5, 1, 2, np.nan, 1 / 255, 0.5 / 255), floats(r, 72)]).reshape(20, 4)]))

# ---------------------------------------------------------------- level of detail, measured directly
# Every texel of level k holds 256 * k, so a linear mipmap blend returns 256 * (the level of detail
# the GPU used, after its own rounding and clamps).
FLAT_LEVELS = [np.full((32 >> k, 32 >> k), 256.0 * k, np.float32) for k in range(6)]
LOD_VIEW = dict(normalized=True, mipmap_filter="linear", max_lod=5.0)


def lod_scan(r):
    p = np.zeros((7 * 1024, 4), np.float32)
    p[:, :2] = 0.5
    p[:, 2] = np.arange(-1024, 6 * 1024) / np.float32(1024)
    return p


case("lod_scan_level_fraction", TEX_2D_LOD, "tex_2d_lod<float4>", 7 * 1024,
     lambda r: with_n([TexArg(FLAT_LEVELS, "mipmap", {}, LOD_VIEW), lod_scan(r), out4(7 * 1024)]))


def gradient_scan(r):
    """Isotropic, one-axis and random gradients (in normalized units; level 0 is 32 texels wide)."""
    s = np.exp2(np.arange(-3 * 128, 7 * 128) / 128.0) / 32
    iso = np.stack([s, 0 * s, 0 * s, s], 1)
    axis = np.stack([0 * s, s, 0 * s, s / 3], 1)
    rand = r.standard_normal((1024, 4)) * np.exp2(r.integers(-8, 2, (1024, 1)))
    return np.concatenate([iso, axis, rand]).astype(np.float32)


case("grad_scan_level_of_detail", TEX_2D_GRAD, "tex_2d_grad<float4>", 3584,
     lambda r: with_n([TexArg(FLAT_LEVELS, "mipmap", {}, LOD_VIEW), np.full((3584, 2), 0.5, np.float32),
                       gradient_scan(r), out4(3584)]))
