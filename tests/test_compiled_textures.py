"""Texture lookups in the compiled tier (emulator/texture_native.py).

A kernel that reads through tex1Dfetch or tex2D ran every lookup in the interpreter, and a lookup in a
loop kept the whole loop there: a tex2D matrix product took three times as long as its shared-memory
version. Native code now does the texture unit's arithmetic itself for the common lookups (and raw
surface loads and stores). It must give
the bytes an H100 gave (the recorded texture corpus, tests/kernels/textures.py, run with the compiled
tier forced), leave to the interpreter what it does not take, and still let memcheck report a texel
read past the memory a texture is bound to.
"""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import texture
from kernels import TexArg, cases
from test_corpus import DROPPED, KNOWN_GAPS, RECORDINGS, as_argument, assert_same_as_gpu, output, run_on_emulator

TEXTURE_CASES = [c for c in cases(("textures",)) if c["name"] in RECORDINGS and c["name"] not in DROPPED]


@pytest.fixture
def compiled(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))      # built here, not loaded from an older build


@pytest.fixture
def interpreted_lookups(monkeypatch):
    """How many lanes' lookups the interpreter's texture unit answered (texture.sample)."""
    count = [0]
    sample = texture.sample

    def counted(data, tex, geom, coords, *a, **k):
        count[0] += len(coords[0])
        return sample(data, tex, geom, coords, *a, **k)
    monkeypatch.setattr(texture, "sample", counted)
    offsets = texture.surface_offsets            # (the interpreter's suld and sust)

    def surface_counted(ex, inst, s, geom, coords, *a, **k):
        count[0] += len(coords[0])
        return offsets(ex, inst, s, geom, coords, *a, **k)
    monkeypatch.setattr(texture, "surface_offsets", surface_counted)
    gather = texture.gather                      # (the interpreter's tld4)

    def gather_counted(data, tex, geom, coords, comp):
        count[0] += len(coords[0])
        return gather(data, tex, geom, coords, comp)
    monkeypatch.setattr(texture, "gather", gather_counted)
    return count


@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"], marks=[pytest.mark.xfail(reason=KNOWN_GAPS[c["name"]],
                                                                                        strict=False)]
                                               if c["name"] in KNOWN_GAPS else []) for c in TEXTURE_CASES])
def test_the_compiled_tier_gives_the_recorded_gpu_bytes_for_every_texture_kernel(case, compiled):
    rec = RECORDINGS[case["name"]]
    args = [TexArg.from_stored(rec["tex"][k], rec["in"][k]) if k in rec["tex"] else as_argument(rec["in"][k])
            for k in range(len(rec["in"]))]
    run_on_emulator(case, args)
    for k, want in rec["out"].items():
        assert_same_as_gpu(case, k, output(args[k]), want)


PRODUCT = r"""
__global__ void product(cudaTextureObject_t a, cudaTextureObject_t b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float sum = 0;
    for (int k = 0; k < n; k++)                 // a lookup in a loop: the loop runs natively too
        sum += tex2D<float>(a, k + 0.5f, row + 0.5f) * tex2D<float>(b, col + 0.5f, k + 0.5f);
    c[row * n + col] = sum;
}
__global__ void gather(cudaTextureObject_t t, const int *at, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(t, at[i]);      // outside the texture: 0
}
__global__ void sampled(cudaTextureObject_t t, const float2 *p, float4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2D<float4>(t, p[i].x, p[i].y);
}
__global__ void layered(cudaTextureObject_t t, const float2 *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(t, p[i].x, p[i].y, i % 5 - 1);   // layer -1: the last one
}
__global__ void volume(cudaTextureObject_t t, const float4 *p, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex3D<float>(t, p[i].x, p[i].y, p[i].z);
}
__global__ void gathered(cudaTextureObject_t t, const float2 *p, float4 *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2Dgather<float4>(t, p[i].x, p[i].y, 2);      // tld4.b: the four texels' z
}
__global__ void doubled(cudaSurfaceObject_t in, cudaSurfaceObject_t out, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    float v = surf2Dread<float>(in, x * 4, y, cudaBoundaryModeClamp);    // past the right edge: the last texel
    if (y < h) surf2Dwrite(2 * v + x, out, x * 4, y, cudaBoundaryModeZero);   // past it: dropped
}
__global__ void peek(cudaSurfaceObject_t s, const int *x, float *out) {
    out[threadIdx.x] = surf2Dread<float>(s, x[threadIdx.x], 0);           // .trap: outside stops the kernel
}
"""


def _launch_all(seed=0):
    """The three kernels on random data; their outputs."""
    rng = np.random.default_rng(seed)
    mod = cudalab.compile(PRODUCT)
    n = 24
    a, b = rng.standard_normal((n, n), np.float32), rng.standard_normal((n, n), np.float32)
    ta = cudalab.texture(cudalab.cuda_array(a))
    tb = cudalab.texture(cudalab.cuda_array(b))
    c = np.zeros((n, n), np.float32)
    mod.get_kernel("product")[(3, 3), (8, 8)](ta, tb, c, np.int32(n))
    values = cudalab.to_device(rng.standard_normal(300).astype(np.float32))
    linear = cudalab.texture(values)
    at = rng.integers(-20, 320, 256).astype(np.int32)
    fetched = np.zeros(256, np.float32)
    mod.get_kernel("gather")[2, 128](linear, at, fetched, np.int32(256))
    image = rng.standard_normal((9, 13, 4)).astype(np.float32)
    image[0, 0] = [np.nan, np.inf, -np.inf, -0.0]
    p = np.stack([rng.uniform(-3, 16, 512), rng.uniform(-3, 12, 512)], 1).astype(np.float32)
    outs = []
    for view in (dict(filter="linear", address="border", border=(1, 2, 3, 4)), dict(filter="point", address="clamp"),
                 dict(filter="linear", address="wrap", normalized=True), dict(filter="point", address="mirror",
                                                                               normalized=True)):
        t = cudalab.texture(cudalab.cuda_array(image, channels=4), **view)
        q = p / np.float32([13, 9]) if view.get("normalized") else p
        out = np.zeros((512, 4), np.float32)
        mod.get_kernel("sampled")[4, 128](t, q, out, np.int32(512))
        outs.append(out)
    for dtype in (np.uint8, np.int8, np.uint16, np.int16):      # 8/16-bit texels read as normalized floats
        info = np.iinfo(dtype)
        texels = rng.integers(info.min, info.max + 1, (9, 13, 4)).astype(dtype)
        t = cudalab.texture(cudalab.cuda_array(texels, channels=4), filter="linear", read="normalized",
                            address="border", border=(0.5, -2.0, 1.0, 0.25))
        out = np.zeros((512, 4), np.float32)
        mod.get_kernel("sampled")[4, 128](t, p, out, np.int32(512))
        outs.append(out)
    for address in ("border", "wrap"):
        t = cudalab.texture(cudalab.cuda_array(image, channels=4, gather=True), filter="point", address=address,
                            normalized=address == "wrap", border=(5, 6, 7, 8))
        out = np.zeros((512, 4), np.float32)
        mod.get_kernel("gathered")[4, 128](t, p / np.float32([13, 9]) if address == "wrap" else p, out, np.int32(512))
        outs.append(out)
    image[1, 1] = [1e-40, -1e-40, np.nan, 2.0]                  # subnormals and a NaN, read at texel centres
    centres = (rng.integers(-2, 15, (512, 2)) + 0.5).astype(np.float32)
    for address in ("border", "clamp"):
        t = cudalab.texture(cudalab.cuda_array(image, channels=4), filter="linear", address=address, border=(5, 6, 7, 8))
        out = np.zeros((512, 4), np.float32)
        mod.get_kernel("sampled")[4, 128](t, centres, out, np.int32(512))
        outs.append(out)
    stack = cudalab.cuda_array(rng.standard_normal((3, 9, 13)).astype(np.float32), layered=True)
    for filt in ("point", "linear"):
        out = np.zeros(512, np.float32)
        mod.get_kernel("layered")[4, 128](cudalab.texture(stack, filter=filt), p, out, np.int32(512))
        outs.append(out)
    q = rng.uniform(-2, 9, (512, 4)).astype(np.float32)
    for texels, read in (((rng.standard_normal((5, 6, 7)) * np.exp2(rng.integers(-12, 13, (5, 6, 7)))).astype(np.float32),
                          "element"), (rng.integers(0, 256, (5, 6, 7)).astype(np.uint8), "normalized")):
        out = np.zeros(512, np.float32)       # trilinear: the two z slices' sums as texture._slices_sum adds them
        t = cudalab.texture(cudalab.cuda_array(texels), filter="linear", read=read, address=("clamp", "border", "clamp"))
        mod.get_kernel("volume")[4, 128](t, q, out, np.int32(512))
        outs.append(out)
    src = cudalab.cuda_array(rng.standard_normal((5, 37)).astype(np.float32), surface=True)
    dst = cudalab.cuda_array(np.zeros((5, 37), np.float32), surface=True)
    mod.get_kernel("doubled")[(2, 5), 32](cudalab.surface(src), cudalab.surface(dst), np.int32(5))
    return [c, fetched] + outs + [dst.copy_to_host()]


def test_native_lookups_give_the_interpreters_bytes(compiled, interpreted_lookups, monkeypatch):
    native = _launch_all()
    assert interpreted_lookups[0] == 0, "every lookup here is one native code takes"
    monkeypatch.setenv("CUDALAB_TIER", "interp")
    for got, want in zip(native, _launch_all()):
        assert got.tobytes() == want.tobytes()


def test_a_texel_past_the_bound_allocation_is_still_memchecks_to_report(compiled, interpreted_lookups):
    # pitched memory may be bound over more bytes than its allocation holds (a GPU accepts it); a
    # texel read past the allocation is memcheck's "Invalid texture read", native code or not
    data = cudalab.to_device(np.arange(64, dtype=np.float32))          # four rows of 16 texels
    tex = cudalab.texture(data, width=16, height=8, pitch=64)          # eight rows: 512 bytes over 256
    p = np.stack([np.arange(16) + 0.5, np.full(16, 3.5)], 1).astype(np.float32)
    out = np.zeros((16, 4), np.float32)
    sampled = cudalab.compile(PRODUCT).get_kernel("sampled")
    sampled[1, 16](tex, p, out, np.int32(16))
    assert out[:, 0].tolist() == list(range(48, 64)) and interpreted_lookups[0] == 0
    p[:, 1] = 5.5
    with pytest.raises(cudalab.KernelError) as e:
        sampled[1, 16](tex, p, out, np.int32(16))
    assert e.value.findings[0].kind == "memcheck"
    assert "Invalid texture read of size 4 bytes" in str(e.value)


def test_a_surface_read_outside_the_array_still_stops_the_kernel(compiled, interpreted_lookups):
    arr = cudalab.cuda_array(np.arange(8, dtype=np.float32).reshape(1, 8), surface=True)
    peek = cudalab.compile(PRODUCT).get_kernel("peek")
    out = np.zeros(8, np.float32)
    peek[1, 8](cudalab.surface(arr), 4 * np.arange(8, dtype=np.int32), out)
    assert out.tolist() == list(range(8)) and interpreted_lookups[0] == 0
    with pytest.raises(cudalab.KernelError) as e:
        peek[1, 8](cudalab.surface(arr), 4 * np.arange(1, 9, dtype=np.int32), out)
    assert e.value.code == "cudaErrorIllegalAddress" and "x is in bytes" in str(e.value)
