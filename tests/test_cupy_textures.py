"""cupy.cuda.texture, as image-processing lessons written with CuPy use it: a CUDA array filled from
numpy, a texture object a RawKernel samples (point and linear filtering, clamped edges), a surface a
kernel writes, linear memory read with tex1Dfetch, and CUDA's error for a format no array can hold."""
import numpy as np
import pytest


SAMPLE = r'''
extern "C" __global__ void sample(cudaTextureObject_t t, float *out, int w, int h, float dx) {
    int x = threadIdx.x, y = threadIdx.y;
    if (x < w && y < h) out[y * w + x] = tex2D<float>(t, x + 0.5f + dx, y + 0.5f);
}'''


def _texture_over(cp, image, filter_mode):
    from cupy.cuda import runtime
    from cupy.cuda.texture import (ChannelFormatDescriptor, CUDAarray, ResourceDescriptor, TextureDescriptor,
                                   TextureObject)
    height, width = image.shape
    array = CUDAarray(ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat), width, height)
    array.copy_from(image)
    clamp = runtime.cudaAddressModeClamp
    return array, TextureObject(ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=array),
                                TextureDescriptor((clamp, clamp), filter_mode, runtime.cudaReadModeElementType))


def test_a_raw_kernel_samples_a_texture_point_and_linear(cp):
    from cupy.cuda import runtime
    image = np.arange(12, dtype=np.float32).reshape(3, 4)
    kernel = cp.RawKernel(SAMPLE, "sample")
    out = cp.zeros(image.shape, cp.float32)

    _, point = _texture_over(cp, image, runtime.cudaFilterModePoint)
    kernel((1,), (8, 8), (point, out, np.int32(4), np.int32(3), np.float32(0.0)))
    assert out.get().tolist() == image.tolist()                 # texel centres: the texels themselves

    array, linear = _texture_over(cp, image, runtime.cudaFilterModeLinear)
    kernel((1,), (8, 8), (linear, out, np.int32(4), np.int32(3), np.float32(0.5)))
    halfway = (image + np.concatenate([image[:, 1:], image[:, -1:]], axis=1)) / 2     # the last column clamps
    assert out.get().tolist() == halfway.tolist()

    back = np.zeros_like(image)
    array.copy_to(back)
    assert back.tolist() == image.tolist()


def test_a_kernel_writes_a_surface_and_reads_linear_memory(cp):
    from cupy.cuda import runtime
    from cupy.cuda.texture import (ChannelFormatDescriptor, CUDAarray, ResourceDescriptor, SurfaceObject,
                                   TextureDescriptor, TextureObject)
    fmt = ChannelFormatDescriptor(32, 0, 0, 0, runtime.cudaChannelFormatKindFloat)
    target = CUDAarray(fmt, 4, 2, 0, runtime.cudaArraySurfaceLoadStore)
    surface = SurfaceObject(ResourceDescriptor(runtime.cudaResourceTypeArray, cuArr=target))
    cp.RawKernel(r'''
    extern "C" __global__ void fill(cudaSurfaceObject_t s) {
        surf2Dwrite(float(10 * threadIdx.y + threadIdx.x), s, threadIdx.x * sizeof(float), threadIdx.y);
    }''', "fill")((1,), (4, 2), (surface,))
    written = cp.zeros((2, 4), cp.float32)
    target.copy_to(written)
    assert written.get().tolist() == [[0, 1, 2, 3], [10, 11, 12, 13]]

    values = cp.arange(8, dtype=cp.float32)
    linear = TextureObject(ResourceDescriptor(runtime.cudaResourceTypeLinear, arr=values, chDesc=fmt,
                                              sizeInBytes=values.nbytes), TextureDescriptor())
    doubled = cp.zeros(8, cp.float32)
    cp.RawKernel(r'''
    extern "C" __global__ void twice(cudaTextureObject_t t, float *out) {
        out[threadIdx.x] = 2 * tex1Dfetch<float>(t, threadIdx.x);
    }''', "twice")((1,), (8,), (linear, doubled))
    assert doubled.get().tolist() == [0, 2, 4, 6, 8, 10, 12, 14]


def test_an_array_of_8_bit_floats_is_cudas_invalid_channel_descriptor(cp):
    from cupy.cuda import runtime
    from cupy.cuda.texture import ChannelFormatDescriptor, CUDAarray
    with pytest.raises(runtime.CUDARuntimeError) as info:
        CUDAarray(ChannelFormatDescriptor(8, 0, 0, 0, runtime.cudaChannelFormatKindFloat), 16)
    assert info.value.status == 20 and "cudaErrorInvalidChannelDescriptor" in str(info.value)
