"""The GPU backend runs NVRTC's PTX on a real NVIDIA GPU; numpy gives the expected numbers.

Tests marked ``gpu`` are skipped where no GPU is found (tests/conftest.py); the rest check the PTX
handling that needs no GPU.
"""
import re

import numpy as np
import pytest

from cudalab.errors import LaunchError, NoGpuError
from cudalab.frontend.nvrtc import compile_to_ptx
from cudalab.gpu.backend import (GpuBuffer, GpuModule, available, device_info, kernel_arg,
                                 lower_ptx_version, max_ptx_isa, param_types)

gpu = pytest.mark.gpu


def load(source, name):
    """(GpuModule, mangled name) for the kernel ``name`` (a C++ name, templates as "scale<3>")."""
    out = compile_to_ptx(source, name_expressions=(name,))
    return GpuModule(out.ptx), out.lowered[name]


VECTOR_ADD = r'''
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}'''


@gpu
@pytest.mark.parametrize("n", [1, 1000, 1 << 20])
def test_vector_add(n):
    mod, name = load(VECTOR_ADD, "vecAdd")
    a, b = np.random.default_rng(n).random((2, n), dtype=np.float32)
    da, db, dc = GpuBuffer.from_host(a), GpuBuffer.from_host(b), GpuBuffer(a.nbytes)
    ms = mod.launch(name, (n + 255) // 256, 256, 0, [da, db, dc, n])
    np.testing.assert_array_equal(dc.copy_to_host(np.empty_like(a)), a + b)
    assert ms > 0


@gpu
@pytest.mark.parametrize("n, shared", [(100, 400), (1024, 4096)])
def test_dynamic_shared_memory_reverses_each_block(n, shared):
    mod, name = load(r'''
__global__ void reverse(int* d, int n) {
  extern __shared__ int s[];
  int t = threadIdx.x;
  s[t] = d[blockIdx.x * n + t];
  __syncthreads();
  d[blockIdx.x * n + t] = s[n - t - 1];
}''', "reverse")
    d = np.arange(3 * n, dtype=np.int32)
    buf = GpuBuffer.from_host(d)
    mod.launch(name, 3, n, shared, [buf, np.int32(n)])
    np.testing.assert_array_equal(buf.copy_to_host(np.empty_like(d)), d.reshape(3, n)[:, ::-1].ravel())


@gpu
def test_constant_memory_polynomial():
    mod, name = load(r'''
__constant__ float coef[4];
__global__ void poly(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = x[i]; y[i] = ((coef[3] * v + coef[2]) * v + coef[1]) * v + coef[0]; }
}''', "poly")
    coef = np.array([1.0, -0.5, 0.25, 0.125], np.float32)
    assert mod.globals == ["coef"] and mod.global_ptr("coef")[1] == coef.nbytes
    mod.global_buffer("coef").copy_from_host(coef)
    np.testing.assert_array_equal(mod.global_buffer("coef").copy_to_host(np.empty_like(coef)), coef)
    x = np.linspace(-2, 2, 100, dtype=np.float32)
    y = GpuBuffer(x.nbytes)
    mod.launch(name, 2, 64, 0, [GpuBuffer.from_host(x), y, 100])
    np.testing.assert_allclose(y.copy_to_host(np.empty_like(x)),
                               ((coef[3] * x.astype(np.float64) + coef[2]) * x + coef[1]) * x + coef[0],
                               rtol=1e-6)


SCALE = r'''
template <typename T, int K> __global__ void scale(T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * a + T(K);
}'''


@gpu
@pytest.mark.parametrize("ctype, dtype, k", [("float", np.float32, 3), ("double", np.float64, 5),
                                             ("int", np.int32, -7), ("unsigned long long", np.uint64, 2)])
def test_template_kernel(ctype, dtype, k):
    mod, name = load(SCALE, f"scale<{ctype}, {k}>")
    x = np.arange(-50, 150).astype(dtype)
    buf = GpuBuffer.from_host(x)
    mod.launch(name, 1, 256, 0, [buf, 3, x.size])   # a Python 3 becomes the parameter's T
    np.testing.assert_array_equal(buf.copy_to_host(np.empty_like(x)), x * dtype(3) + dtype(k))


@gpu
def test_struct_and_half_by_value():
    mod, name = load(r'''
#include <cuda_fp16.h>
__global__ void byvalue(float2 p, __half h, bool flag, float* out) {
  out[0] = p.x; out[1] = p.y; out[2] = __half2float(h); out[3] = flag;
}''', "byvalue")
    out = GpuBuffer(16)
    p = np.array((1.5, -2.0), dtype=[("x", "f4"), ("y", "f4")])[()]
    mod.launch(name, 1, 1, 0, [p, np.float16(0.25), True, out])
    np.testing.assert_array_equal(out.copy_to_host(np.empty(4, np.float32)), [1.5, -2.0, 0.25, 1.0])


@gpu
def test_ptx_newer_than_the_driver_runs_with_its_version_lowered():
    ptx = compile_to_ptx(VECTOR_ADD).ptx
    newer = re.sub(r"\.version \d+\.\d+", ".version 99.9", ptx, count=1)
    mod = GpuModule(newer)
    assert mod.lowered_from == "99.9"
    assert mod.ptx == lower_ptx_version(newer, device_info().max_ptx_isa)[0]
    a = np.arange(64, dtype=np.float32)
    c = GpuBuffer(a.nbytes)
    mod.launch("_Z6vecAddPKfS0_Pfi", 1, 64, 0, [GpuBuffer.from_host(a), GpuBuffer.from_host(a), c, 64])
    np.testing.assert_array_equal(c.copy_to_host(np.empty_like(a)), 2 * a)


@gpu
def test_device_info_describes_the_gpu():
    info = device_info()
    assert info.arch == "sm_{}{}".format(*info.compute_capability)
    assert info.max_ptx_isa == max_ptx_isa(info.driver_version[0] * 1000 + info.driver_version[1] * 10)
    assert info.multiprocessors > 0


@gpu
@pytest.mark.parametrize("name, args, message", [
    ("vecAdd", [0, 0, 0, 1], "no kernel named 'vecAdd'"),
    ("_Z6vecAddPKfS0_Pfi", [0, 0, 0], "takes 4 arguments"),
    ("_Z6vecAddPKfS0_Pfi", [0, 0, 0, 1.5], "floating-point"),
    ("_Z6vecAddPKfS0_Pfi", [0, 0, 0, 1 << 40], "does not fit"),
])
def test_launch_mistakes_are_launch_errors(name, args, message):
    mod = GpuModule(compile_to_ptx(VECTOR_ADD).ptx)
    with pytest.raises(LaunchError, match=message):
        mod.launch(name, 1, 32, 0, args)


@gpu
def test_too_many_threads_per_block_is_a_launch_error():
    mod, name = load(VECTOR_ADD, "vecAdd")
    buf = GpuBuffer(4)
    with pytest.raises(LaunchError, match="1024 threads"):
        mod.launch(name, 1, 2048, 0, [buf, buf, buf, 1])


# ---------------------------------------------------------------- no GPU needed

@pytest.mark.skipif(available(), reason="checks the machine without a GPU")
def test_without_a_gpu_the_error_says_what_to_do():
    with pytest.raises(NoGpuError, match=r"cudalab.use\('emu'\)"):
        GpuBuffer(16)


@pytest.mark.parametrize("cuda, isa", [(13050, (9, 5)), (13000, (9, 0)), (12090, (8, 8)),
                                       (12080, (8, 7)), (12060, (8, 5)), (12040, (8, 4)), (11080, (7, 8))])
def test_newest_ptx_isa_of_a_driver(cuda, isa):
    assert max_ptx_isa(cuda) == isa


def test_the_gpus_sticky_errors_are_the_emulated_runtimes():
    from cudalab.gpu.backend import _STICKY, _runtime_name
    from cudalab.runtime.core.errors import STICKY
    assert {_runtime_name(n) for n in _STICKY} == STICKY


def test_only_a_newer_ptx_version_is_lowered():
    ptx = "//\n.version 9.5\n.target sm_80\n.address_size 64\n"
    assert lower_ptx_version(ptx, (9, 0)) == (ptx.replace("9.5", "9.0"), "9.5")
    assert lower_ptx_version(ptx, (9, 5)) == (ptx, None)


def test_parameter_types_come_from_the_ptx():
    out = compile_to_ptx(r'''
#include <cuda_fp16.h>
struct P { float x, y, z; };
__global__ void k(const float* a, int n, double d, P p, __half h, bool b) {}''')
    assert param_types(out.ptx, out.lowered["k"]) == ["u64", "u32", "f64", "b8[12]", "b8[2]", "u8"]
    with pytest.raises(LaunchError, match="no kernel named 'k'"):
        param_types(out.ptx, "k")


@pytest.mark.parametrize("value, ptx_type, expected", [
    (5, "u32", np.uint32(5)), (-1, "u32", np.uint32(0xFFFFFFFF)), (np.int64(7), "u32", np.uint32(7)),
    (True, "u8", np.uint8(1)), (np.float16(1.0), "b8[2]", np.uint16(0x3C00)),
    # floats travel as their bits, so a signalling NaN is not quieted on the way
    (2, "f32", np.float32(2).view(np.uint32)), (np.float64(0.1), "f32", np.float32(0.1).view(np.uint32)),
    (np.uint32(0x7F800001).view(np.float32), "f32", np.uint32(0x7F800001)),
    (1.5, "f64", np.float64(1.5).view(np.uint64)),
])
def test_arguments_become_the_parameter_type(value, ptx_type, expected):
    got = kernel_arg(value, ptx_type, "argument 0")
    assert got.dtype == expected.dtype and got == expected
