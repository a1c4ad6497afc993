"""The C library's headers in device code, where PyCUDA puts them: ``SourceModule`` wraps the whole
source in ``extern "C" { ... }``, its ``#include <cstdint>`` too. A GPU's nvcc reads the host's
headers there, which compile in C linkage; NVRTC has none, and cudalab's stand-ins for them include
libcu++, whose templates may not have C linkage, so a course's first kernel with ``#include <cstdint>``
stopped at a compile error on cudalab that nvcc does not give."""
import numpy as np
import pytest

import cudalab
import cudalab.numba

KERNEL = """
#include <cstdint>
#include <stdint.h>
#include <climits>
#include <cfloat>
#include <cstddef>
__global__ void limits(std::uint32_t *words, float *big, int n)
{
    std::size_t i = threadIdx.x;
    uint64_t wide = (uint64_t)INT_MAX + 1;
    if (i < (std::size_t)n) { words[i] = (std::uint32_t)(wide >> 16) + i; big[i] = FLT_MAX; }
}
"""


@pytest.mark.parametrize("wrapped", [False, True])
def test_c_headers_compile_with_and_without_c_linkage(wrapped):
    source = 'extern "C" {\n' + KERNEL + "}\n" if wrapped else KERNEL
    kernel = cudalab.compile(source).get_kernel("limits")
    words, big = cudalab.device_array((4,), np.uint32), cudalab.device_array((4,), np.float32)
    kernel[1, 4](words, big, np.int32(4))
    assert list(words.copy_to_host()) == [32768, 32769, 32770, 32771]
    assert big.copy_to_host()[0] == np.finfo(np.float32).max


def test_a_pycuda_source_module_that_includes_cstdint():
    cudalab.numba.install()
    try:
        import pycuda.autoinit  # noqa: F401
        from pycuda import gpuarray
        from pycuda.compiler import SourceModule
        module = SourceModule("""
        #include <cstdint>
        __global__ void scale(float *values, uint32_t n)
        {
            const uint32_t i = threadIdx.x + blockIdx.x * blockDim.x;
            if (i < n) values[i] *= 2;
        }""")                                  # PyCUDA's extern "C" around it, the #include too
        values = gpuarray.to_gpu(np.arange(5, dtype=np.float32))
        module.get_function("scale")(values, np.uint32(5), block=(8, 1, 1), grid=(1, 1))
        assert list(values.get()) == [0, 2, 4, 6, 8]
    finally:
        cudalab.numba.uninstall()


def test_a_texture_reference_is_explained_as_removed_in_cuda_12():
    """Books written for CUDA 10 declare ``texture<int, 1, cudaReadModeElementType> tex;`` (a texture
    reference): nvcc 12 and 13 refuse it as NVRTC does, with 'texture is not a template', which does not
    say why; the message says it and names the texture object that replaced it."""
    source = ("texture<int, 1, cudaReadModeElementType> table;\n"
              "__global__ void lookup(int *out) { out[threadIdx.x] = tex1Dfetch(table, threadIdx.x); }\n")
    with pytest.raises(cudalab.CompileError, match=r"(?s)texture is not a template.*CUDA 12 removed.*"
                                                   r"cudaCreateTextureObject"):
        cudalab.compile(source)
