"""Textures and surfaces from Python: CUDA arrays, texture and surface objects, and what kernels see.

The bit-level rules of the texture unit are checked against an H100's recordings in
tests/kernels/textures.py (test_corpus.py); these tests show the API and its errors with cases
whose answers need no GPU: texel centres, halfway points, surface writes read back.
"""
from types import SimpleNamespace

import numpy as np
import pytest

import cudalab
from cudalab.errors import CudaError, KernelError
from cudalab.emulator import texture

FETCH_2D = r'''
__global__ void fetch(cudaTextureObject_t t, const float2* p, float4* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = tex2D<float4>(t, p[i].x, p[i].y);
}'''


def sample(tex, points):
    points = np.asarray(points, np.float32)
    out = np.zeros((len(points), 4), np.float32)
    cudalab.compile(FETCH_2D).get_kernel("fetch")[1, 64](tex, points, out, len(points))
    return out


@pytest.mark.parametrize("shape, channels, layered, cubemap, extent", [
    ((7,), 1, False, False, (7, 0, 0)),
    ((5, 7), 1, False, False, (7, 5, 0)),
    ((3, 5, 7, 4), 4, False, False, (7, 5, 3)),
    ((4, 9), 1, True, False, (9, 0, 4)),
    ((2, 5, 7, 2), 2, True, False, (7, 5, 2)),
    ((6, 8, 8), 1, False, True, (8, 8, 6)),
])
def test_cuda_array_shapes_map_to_cuda_extents(shape, channels, layered, cubemap, extent):
    data = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    arr = cudalab.cuda_array(data, channels=channels, layered=layered, cubemap=cubemap)
    assert arr.extent == extent
    assert arr.shape == shape
    np.testing.assert_array_equal(arr.copy_to_host(), data)


def test_point_sampling_reads_texel_centres_and_clamps_outside():
    image = np.arange(12, dtype=np.float32).reshape(3, 4)           # value = 4 * row + column
    tex = cudalab.texture(cudalab.cuda_array(image))
    out = sample(tex, [(0.5, 0.5), (3.5, 2.5), (2.9, 1.1), (-5, 1.5), (100, -3)])
    assert out[:, 0].tolist() == [0.0, 11.0, 6.0, 4.0, 3.0]
    assert out[:, 1:].tolist() == [[0.0, 0.0, 0.0]] * 5              # a float1 texture: the rest are 0


def test_linear_filtering_halfway_between_texels_and_wrapping():
    image = np.array([[0.0, 8.0, 16.0, 24.0]], np.float32)
    tex = cudalab.texture(cudalab.cuda_array(image), filter="linear", address="wrap", normalized=True)
    # normalized x = 0.25 is texel coordinate 1.0: halfway between texels 0 and 1; x = 0 wraps to 24 and 0
    out = sample(tex, [(0.25, 0.5), (0.375, 0.5), (0.0, 0.5), (1.25, 0.5)])
    assert out[:, 0].tolist() == [4.0, 8.0, 12.0, 4.0]


def test_bytes_read_as_normalized_floats_filter_in_sixteen_bit_fixed_point():
    """The texture unit widens 8-bit texels to 16 bits (t * 257), sums them with the 1.8 weights,
    rounds to a 16-bit integer and divides by 65535 (measured on an H200, tools/texture_probe.py):
    a texel of 255 at weight 1/256 gives 256/65535, a hair more than 1/256."""
    image = np.array([[0, 255, 2, 3]], np.uint8)
    tex = cudalab.texture(cudalab.cuda_array(image), filter="linear", read="normalized")
    out = sample(tex, [(0.5 + 1 / 256, 0.5), (1.5, 0.5), (2.5 + 37 / 256, 0.5)])
    assert out[:, 0].tolist() == [np.float32(256 / 65535), 1.0, np.float32(round((2 * 219 + 3 * 37) * 257 / 256) / 65535)]
    assert out[0, 0] > np.float32(1 / 256)


def test_signed_bytes_filter_as_integers_scaled_to_sixteen_bits():
    """Signed 8-bit texels: S = sum(weight * texel) over the integers, then Q = S + (S + 16 * (S >> 12)
    + 64) >> 7 and Q / 32767 (measured on an H200, tools/texture_probe.py's s8_pairs: all 65,281 sums).
    127 and 0 halfway give 16383/32767, not 0.5; -128 takes part as -128, though alone it reads -1."""
    image = np.array([[0, 127, -128, 127]], np.int8)
    tex = cudalab.texture(cudalab.cuda_array(image), filter="linear", read="normalized")
    out = sample(tex, [(1.0, 0.5), (3.0, 0.5), (2.5, 0.5)])
    assert out[:, 0].tolist() == [np.float32(16383 / 32767), np.float32(-129 / 32767), -1.0]


def test_srgb_texels_filter_at_the_grain_of_the_largest_one():
    """sRGB colour channels: the decoded texels (units of 2**-14) are cut to a grain the largest one
    sets, then summed and rounded to 11 bits (measured on an H200, tools/texture_probe.py's
    srgb_pairs). Code 1 (5 units) next to code 64 (840) counts as 0; code 224 (12224) next to 248
    counts as 12160, so the lookup lands below both texels; alpha filters as a plain byte."""
    image = np.array([[[1, 224, 0, 255], [64, 248, 0, 255]]], np.uint8)
    tex = cudalab.texture(cudalab.cuda_array(image, channels=4), filter="linear", read="normalized", srgb=True)
    out = sample(tex, [(0.5 + 1 / 256, 0.5)])
    assert (out[0, :2] * 2 ** 14).tolist() == [840 / 256, 12176.0]      # 12172.5 rounded to 11 bits
    assert out[0, 3] == 1.0


def test_normalized_reads_of_bytes_and_border_colour():
    rgba = np.array([[[0, 51, 255, 128]]], np.uint8)
    tex = cudalab.texture(cudalab.cuda_array(rgba, channels=4), read="normalized", address="border",
                          border=(1.0, 0.0, 0.0, 1.0))
    out = sample(tex, [(0.5, 0.5), (-1.0, 0.5)])
    np.testing.assert_array_equal(out[0], np.float32([0, 51, 255, 128]) / np.float32(255))
    assert out[1].tolist() == [1.0, 0.0, 0.0, 1.0]


def test_linear_memory_fetches_by_index_and_zero_outside():
    src = r'''
    __global__ void fetch(cudaTextureObject_t t, int* out) {
      int i = threadIdx.x;
      out[i] = tex1Dfetch<int>(t, i - 2);
    }'''
    data = cudalab.to_device(np.array([10, 20, 30, 40], np.int32))
    tex = cudalab.texture(data)
    out = np.zeros(8, np.int32)
    cudalab.compile(src).get_kernel("fetch")[1, 8](tex, out)
    assert out.tolist() == [0, 0, 10, 20, 30, 40, 0, 0]


PITCHED = r'''
__global__ void row_of(cudaTextureObject_t t, int y, float* out) {
  out[threadIdx.x] = tex2D<float>(t, threadIdx.x + 0.5f, y + 0.5f);
}'''


def test_pitched_memory_may_span_past_its_allocation_and_memcheck_names_a_texel_read_there():
    """A GPU accepts a texture over more bytes than its allocation holds (NVIDIA's convolutionFFT2D
    binds such a range and reads only inside; tests/runtime_api/texture_bounds.cu). Rows inside the
    allocation read as usual; a texel past its end is reported, not read from whatever follows."""
    data = cudalab.to_device(np.arange(64, dtype=np.float32))         # four rows of 16 texels
    tex = cudalab.texture(data, width=16, height=8, pitch=64)         # eight rows: 512 bytes over 256
    row_of = cudalab.compile(PITCHED).get_kernel("row_of")
    out = np.zeros(16, np.float32)
    row_of[1, 16](tex, 3, out)
    assert out.tolist() == list(range(48, 64))
    with pytest.raises(KernelError) as e:
        row_of[1, 16](tex, 5, out)
    assert e.value.code == "cudaErrorIllegalAddress"
    assert e.value.findings[0].kind == "memcheck"
    assert "Invalid texture read of size 4 bytes" in str(e.value)
    assert "spans more bytes (512 from" in str(e.value) and "than its allocation holds" in str(e.value)


def test_a_texture_over_memory_no_allocation_holds_is_made_and_a_fetch_from_it_is_a_memcheck_error():
    """An H200 accepted freed, unallocated and host pointers (only null is cudaErrorInvalidValue)
    and faulted when a fetch reached unmapped memory; here every fetch outside a live allocation is
    memcheck's."""
    row_of = cudalab.compile(PITCHED).get_kernel("row_of")
    freed = cudalab.to_device(np.arange(64, dtype=np.float32))
    unallocated = SimpleNamespace(device_ptr=freed.device_ptr + (1 << 24), dtype=np.dtype(np.float32), nbytes=256)
    textures = [cudalab.texture(freed, width=16, height=4, pitch=64),
                cudalab.texture(unallocated, width=16, height=4, pitch=64)]
    freed.free()
    for tex in textures:
        with pytest.raises(KernelError) as e:
            row_of[1, 16](tex, 0, np.zeros(16, np.float32))
        assert e.value.findings[0].kind == "memcheck"
        assert "is not (or no longer) a device allocation" in str(e.value)
    with pytest.raises(CudaError) as e:
        cudalab.texture(SimpleNamespace(device_ptr=0, dtype=np.dtype(np.float32), nbytes=256))
    assert e.value.code == "cudaErrorInvalidValue"


def test_surface_writes_land_in_the_array():
    src = r'''
    __global__ void fill(cudaSurfaceObject_t s, int w) {
      int x = threadIdx.x, y = blockIdx.x;
      surf2Dwrite(make_uchar4(x, y, x + y, 255), s, 4 * x, y);        // x counts bytes: 4 per uchar4
    }'''
    arr = cudalab.cuda_array(shape=(3, 5, 4), dtype=np.uint8, channels=4, surface=True)
    cudalab.compile(src).get_kernel("fill")[3, 5](cudalab.surface(arr), 5)
    img = arr.copy_to_host()
    assert img[2, 4].tolist() == [4, 2, 6, 255]
    assert img[..., 3].min() == 255


def test_surface_read_outside_with_trap_stops_the_kernel():
    src = r'''
    __global__ void peek(cudaSurfaceObject_t s, float* out) { out[0] = surf2Dread<float>(s, 4 * 9, 0); }'''
    arr = cudalab.cuda_array(np.zeros((2, 4), np.float32), surface=True)
    with pytest.raises(KernelError) as e:
        cudalab.compile(src).get_kernel("peek")[1, 1](cudalab.surface(arr), np.zeros(1, np.float32))
    assert e.value.code == "cudaErrorIllegalAddress"
    assert "x is in bytes" in str(e.value)


def test_surface_x_that_is_not_a_whole_texel_is_misaligned():
    src = r'''
    __global__ void peek(cudaSurfaceObject_t s, float* out) {
      out[0] = surf2Dread<float>(s, 2, 0, cudaBoundaryModeZero);
    }'''
    arr = cudalab.cuda_array(np.zeros((2, 4), np.float32), surface=True)
    with pytest.raises(KernelError) as e:
        cudalab.compile(src).get_kernel("peek")[1, 1](cudalab.surface(arr), np.zeros(1, np.float32))
    assert e.value.code == "cudaErrorMisalignedAddress"


def test_a_destroyed_texture_cannot_be_read():
    tex = cudalab.texture(cudalab.cuda_array(np.ones((2, 2), np.float32)))
    tex.destroy()
    with pytest.raises(KernelError, match="not a live texture object"):
        sample(tex, [(0.5, 0.5)])


@pytest.mark.parametrize("make, code", [
    (lambda: cudalab.texture(cudalab.cuda_array(np.ones(4, np.float32)), read="normalized"),
     "cudaErrorInvalidNormSetting"),
    (lambda: cudalab.texture(cudalab.cuda_array(np.ones(4, np.int32)), filter="linear"),
     "cudaErrorInvalidFilterSetting"),
    (lambda: cudalab.cuda_array(np.ones((4, 3), np.float32), channels=3), "cudaErrorInvalidChannelDescriptor"),
    (lambda: cudalab.cuda_array(np.ones(4, np.float64)), "cudaErrorInvalidChannelDescriptor"),
    (lambda: cudalab.cuda_array(np.ones((6, 4, 5), np.float32), cubemap=True), "cudaErrorInvalidValue"),
    (lambda: cudalab.texture(cudalab.cuda_array(np.ones(4, np.float32)), address="repeat"), "cudaErrorInvalidValue"),
])
def test_misuse_answers_cuda_error_codes(make, code):
    with pytest.raises(CudaError) as e:
        make()
    assert e.value.code == code


def test_mipmapped_array_levels_halve_and_lod_picks_a_level():
    levels = [np.full((8 >> k, 8 >> k), 10.0 * k, np.float32) for k in range(4)]
    mm = cudalab.mipmapped_array(levels)
    assert [lv.shape for lv in mm.levels] == [(8, 8), (4, 4), (2, 2), (1, 1)]
    src = r'''
    __global__ void at_lod(cudaTextureObject_t t, const float* lod, float* out) {
      int i = threadIdx.x;
      out[i] = tex2DLod<float>(t, 0.5f, 0.5f, lod[i]);
    }'''
    tex = cudalab.texture(mm, normalized=True)          # point mipmap filter: the nearest level
    out = np.zeros(5, np.float32)
    cudalab.compile(src).get_kernel("at_lod")[1, 5](tex, np.float32([0, 1, 2.2, 3, 9]), out)
    assert out.tolist() == [0.0, 10.0, 20.0, 30.0, 30.0]


@pytest.mark.gpu
def test_the_same_python_calls_run_on_a_real_gpu_with_the_same_bits():
    """cudalab.cuda_array/texture/surface work on cudalab.use("gpu") too (CUDA's runtime through
    cuda.bindings), and a bilinear lookup and a surface write give the emulator's bits."""
    from cudalab.runtime import device as devices
    src = FETCH_2D + r'''
    __global__ void store(cudaSurfaceObject_t s, const float4* v) {
      surf2Dwrite(v[threadIdx.x], s, 16 * threadIdx.x, blockIdx.x);
    }'''
    rng = np.random.default_rng(7)
    image = rng.standard_normal((9, 13, 4)).astype(np.float32)
    points = (rng.random((64, 2)) * 1.5 - 0.25).astype(np.float32)
    values = rng.standard_normal((3 * 5, 4)).astype(np.float32)
    results = {}
    for kind in ("emu", "gpu"):
        devices.use(kind)
        try:
            mod = cudalab.compile(src)
            tex = cudalab.texture(cudalab.cuda_array(image, channels=4), filter="linear", address="mirror",
                                  normalized=True)
            out = np.zeros((64, 4), np.float32)
            mod.get_kernel("fetch")[1, 64](tex, points, out, 64)
            arr = cudalab.cuda_array(shape=(3, 5, 4), channels=4, surface=True)
            mod.get_kernel("store")[3, 5](cudalab.surface(arr), values)
            results[kind] = (out, arr.copy_to_host())
        finally:
            devices.use("emu")
    np.testing.assert_array_equal(results["emu"][0].view(np.uint32), results["gpu"][0].view(np.uint32))
    np.testing.assert_array_equal(results["emu"][1], results["gpu"][1])


def test_a_lookup_at_texel_centres_gives_the_full_filters_bits():
    """Linear lookups at texel centres (fraction 0: one tap of weight 256) skip the filter; every
    bit pattern, NaN, infinities and subnormals included, comes out as the full filter gives it."""
    from types import SimpleNamespace
    from cudalab.emulator import texture as T
    rng = np.random.default_rng(5)
    special = np.array([0, 0x80000000, 1, 0x80000001, 0x7F800000, 0xFF800000, 0x7FC00001, 0x807FFFFF], np.uint32)
    for kind, size, channels in (("float", 4, 1), ("float", 4, 4), ("float", 2, 2), ("unsigned", 1, 4)):
        fmt = SimpleNamespace(kind=kind, channel_bytes=size, channels=channels)
        bits = rng.integers(0, 2 ** 32, (4000, 4), dtype=np.uint64).astype(np.uint32)
        bits[:special.size] = special[:, None]
        if size == 2:                          # half texels reach the filter as float32 values
            bits = bits.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)
        if kind == "unsigned":                 # 8-bit texels read as normalized floats: t / 255
            bits = (rng.integers(0, 256, bits.shape) / 255).astype(np.float32).view(np.uint32)
        bits[:, channels:] = 0
        others = rng.integers(0, 2 ** 32, (4000, 3, 4), dtype=np.uint64).astype(np.uint32)
        words = np.concatenate([bits[:, None], others], 1)
        full = T._filter(words, np.tile([256, 0, 0, 0], (4000, 1)), fmt)
        assert (T._one_texel(bits, fmt) == full).all(), (kind, size, channels)


@pytest.mark.parametrize("channels", [1, 2, 4])
@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_linear_lookups_at_texel_centres_take_the_short_way_to_the_same_words(channels, mode):
    """A linear lookup whose lanes all sit at texel centres reads each lane's texel in a few passes
    (texture._centres); the general filter is the reference: clamped edges, coordinates beyond the
    image, infinities and NaN, subnormal and NaN texels. A lane between texels sends them all the
    general way."""
    from cudalab.emulator import texture as tx
    from cudalab.emulator.memory import GLOBAL_BASE
    rng = np.random.default_rng(channels)
    w, h = 37, 11
    texels = rng.standard_normal((h, w, channels)).astype(np.float32)
    texels.flat[:4] = [np.float32(1e-40), -np.float32(1e-40), np.nan, -0.0]     # subnormals, NaN, -0
    data = np.zeros(1024 + texels.nbytes, np.uint8)
    data[512:512 + texels.nbytes] = texels.view(np.uint8).ravel()
    image = tx.Image(GLOBAL_BASE + 512, tx.Format((32,) * channels + (0,) * (4 - channels), "float"), w, h,
                     pitch=w * 4 * channels, kind="pitch2d")
    smp = tx.Sampler(address=(mode, mode, mode), filter="linear")
    x = (rng.integers(-5, w + 5, 500) + 0.5).astype(np.float32)
    y = (rng.integers(-5, h + 5, 500) + 0.5).astype(np.float32)
    x[:6] = [np.inf, -np.inf, np.nan, 1e30, -0.0, 1e-41]
    fast = tx._centres(data, image, smp, [x, y], smp.address)
    words, fractions = tx._taps(data, image, smp, [x, y], None, True, single=True)
    assert words.shape[1] == 1 and fast is not None
    assert np.array_equal(fast, tx._one_texel(words[:, 0], image.fmt))
    x[7] = 3.25                                         # between texels 2 and 3
    assert tx._centres(data, image, smp, [x, y], smp.address) is None


def test_3d_mipmap_blend_weights_are_the_h100s():
    """Between two mipmap levels of a 3D texture each level's share of 256 (256 - f and f) is split
    over its 2 x 2 x 2 texels, the z slices first, and that split rounds ties *down* (the x and y
    splits round them up). tools/texture_probe.py's tex3d_mip_onehot probes, recorded on an H100
    (tests/texture_probe2_h100.npz), read a mipmap that is zero but for one texel of the footprint, so
    each lookup returns that texel's weight / 256: all 16 x 4,096 weights here are the GPU's (with
    ties rounded up, 61 lookups were 1/256 off)."""
    import os
    import sys
    here = os.path.dirname(__file__)
    sys.path[:0] = [os.path.join(here, "..", "tools"), here]
    import texture_probe
    from test_corpus import run_on_emulator
    recorded = texture_probe.load(os.path.join(here, "texture_probe2_h100.npz"), texture_probe.probes_2)
    probes = [(c, args) for name, (c, args) in recorded.items() if name.startswith("tex3d_mip_onehot")]
    assert len(probes) == 16
    for case, args in probes:
        want = args[-2][1::2, 0].copy()              # the 3D lookup of each pair (the 1D one reads zeros)
        args[-2] = np.zeros_like(args[-2])
        run_on_emulator(case, args)
        np.testing.assert_array_equal(args[-2][1::2, 0] * 256, want * 256, err_msg=case["name"])


def test_level_of_detail_from_gradients_follows_the_h100():
    """tex2DGrad's level of detail (tools/texture_probe.py's grad probes on an H100, a mipmap whose level
    k holds 256 k, so each lookup returns 256 times the level of detail): for one gradient along x at
    1,024 lengths the texture unit's log2 table gives every answer; at 1,024 angles the octagonal length
    estimate all but 12 (each within 2/256); for 4,096 random pairs of gradients the model (the longer
    gradient, or 11/16 of the longer of their sum and difference) 90%, the rest within 2/256."""
    import os
    import sys
    here = os.path.dirname(__file__)
    sys.path[:0] = [os.path.join(here, "..", "tools"), here]
    import texture_probe
    from test_corpus import run_on_emulator
    recorded = texture_probe.load(os.path.join(here, "texture_probe2_h100.npz"), texture_probe.probes_2)
    exact = {}
    for name in ("grad_length", "grad_angle", "grad_pairs"):
        case, args = recorded[name]
        want = args[-2][:, 0].copy()
        args[-2] = np.zeros_like(args[-2])
        run_on_emulator(case, args)
        diff = args[-2][:, 0] - want
        assert np.abs(diff).max() <= 2, name
        exact[name] = int((diff == 0).sum())
    assert exact["grad_length"] == 1024 and exact["grad_angle"] >= 1012 and exact["grad_pairs"] >= 3670, exact


def test_a_fetch_through_texture_object_0_reads_zeros_with_a_warning(tmp_path):
    # CSCS's 2011 stencil binds a 3 x 3 float texture with a 12-byte pitch: the create is refused, the
    # handle stays 0, and on an H200 its tex2D fetches read 0 and the kernel went on ("result: 0..0")
    from cudalab.programs import run_program_source
    r = run_program_source(r"""
#include <cstdio>
__global__ void weigh(cudaTextureObject_t t, float *out) {
    out[threadIdx.x] = 1.0f + tex2D<float>(t, threadIdx.x + 0.5f, 0.5f);
}
int main() {
    float *d, *out, h[3];
    cudaMalloc(&d, 9 * sizeof(float)); cudaMalloc(&out, sizeof h);
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = d; res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    res.res.pitch2D.width = 3; res.res.pitch2D.height = 3; res.res.pitch2D.pitchInBytes = 12;
    cudaTextureDesc desc = {};
    cudaTextureObject_t t = 0;
    cudaError_t made = cudaCreateTextureObject(&t, &res, &desc, NULL);
    weigh<<<1, 3>>>(t, out);
    cudaError_t ran = cudaDeviceSynchronize();
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %llu %d %g %g %g\n", made, (unsigned long long)t, ran, h[0], h[1], h[2]);
}""", filename="null_texture.cu", timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1 0 0 1 1 1\n"                      # cudaErrorInvalidValue, then zeros read
    assert "texture object 0" in r.stderr and "A GPU reads zeros" in r.stderr


def test_a_trilinear_lookup_adds_its_two_slices_with_one_bit_below_the_larger():
    """An H100's 3D linear filter sums each z slice's four texels exactly (aligned to that slice's largest
    texel) and floors the other slice's partial to one bit below the larger one's before the final
    rounding. Lookup 133 of tests/kernels/textures.py's tex3d_linear_random, as the GPU answered it: the
    exact sum of the two partials, rounded, is 1 ulp nearer zero."""
    texels = np.float32([5.12586199e-02, -3.38273716e+00, -2.05068703e+01, 2.70527154e-01,
                         -2.30983365e-03, 2.18091104e-02, -2.07362585e-02, 1.31254904e-02])
    weights = np.array([5, 11, 0, 1, 71, 150, 6, 12])          # 1.8 fixed point, the z slices interleaved
    got = texture.weighted_sum(texels[None], weights[None], 8, 24, [[0, 2, 4, 6], [1, 3, 5, 7]])
    exact = np.float32((texels.astype(np.float64) * weights).sum() / 256)
    assert got[0] == np.float32(-0.13102670013904572)          # the H100's answer
    assert got[0] != exact
