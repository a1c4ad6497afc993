"""PyCUDA's lower layers, as tutorials use them: a module loaded from PTX (a file nvcc -ptx wrote, or
the bytes pycuda.compiler.compile returns) while a cubin is refused with what to do instead; managed
memory a kernel takes as it is; pitched copies with Memcpy2D; and gpuarray's where/any/all/reverse."""
import numpy as np
import pytest

import cudalab.numba

TWICE = 'extern "C" __global__ void twice(float *x, int n) { int i = threadIdx.x; if (i < n) x[i] *= 2.0f; }'


@pytest.fixture
def drv():
    cudalab.numba.install()
    import pycuda.autoinit  # noqa: F401
    import pycuda.driver
    yield pycuda.driver
    cudalab.numba.uninstall()


def test_a_module_from_ptx_bytes_and_from_a_ptx_file(drv, tmp_path):
    from pycuda.compiler import compile as compile_to_ptx
    ptx = compile_to_ptx(TWICE, no_extern_c=True)
    module = drv.module_from_buffer(ptx, options=[(drv.jit_option.MAX_REGISTERS, 32)])
    x = np.arange(4, dtype=np.float32)
    module.get_function("twice")(drv.InOut(x), np.int32(4), block=(4, 1, 1))
    assert x.tolist() == [0, 2, 4, 6]

    path = tmp_path / "twice.ptx"
    path.write_bytes(ptx)
    from_file = drv.module_from_file(str(path))
    from_file.get_function("twice")(drv.InOut(x), np.int32(2), block=(4, 1, 1))
    assert x.tolist() == [0, 4, 4, 6]


def test_a_cubin_is_refused_with_what_to_load_instead(drv, tmp_path):
    from cudalab.errors import UnsupportedError
    path = tmp_path / "twice.cubin"
    path.write_bytes(b"\x7fELF" + bytes(60))
    with pytest.raises(UnsupportedError, match="machine code for a real GPU.*nvcc -ptx"):
        drv.module_from_file(str(path))
    with pytest.raises(drv.LogicError, match="not PTX"):
        drv.module_from_buffer(b"just some bytes")


def test_a_kernel_doubles_managed_memory_the_host_then_reads(drv):
    from pycuda.compiler import SourceModule
    values = drv.managed_zeros(shape=8, dtype=np.float32, mem_flags=drv.mem_attach_flags.GLOBAL)
    values[:] = np.arange(8)
    SourceModule("__global__ void doublify(float *a) { a[threadIdx.x] *= 2; }").get_function("doublify")(
        values, block=(8, 1, 1), grid=(1, 1))
    drv.Context.synchronize()
    assert values.tolist() == [0, 2, 4, 6, 8, 10, 12, 14]


def test_memcpy2d_moves_rows_into_and_out_of_pitched_memory(drv):
    from pycuda.compiler import SourceModule
    image = np.arange(12, dtype=np.float32).reshape(3, 4)
    device, pitch = drv.mem_alloc_pitch(16, 3, 4)
    up = drv.Memcpy2D()
    up.set_src_host(image)
    up.set_dst_device(device)
    up.width_in_bytes = up.src_pitch = 16
    up.dst_pitch, up.height = pitch, 3
    up()
    SourceModule("""__global__ void add_one(float *a, int pitch) {
        float *row = (float *)((char *)a + threadIdx.y * pitch);
        row[threadIdx.x] += 1.0f;
    }""").get_function("add_one")(device, np.int32(pitch), block=(4, 3, 1))
    back = np.zeros_like(image)
    down = drv.Memcpy2D()
    down.set_src_device(device)
    down.set_dst_host(back)
    down.width_in_bytes = down.dst_pitch = 16
    down.src_pitch, down.height = pitch, 3
    down()
    assert back.tolist() == (image + 1).tolist()
    down.src_pitch = 8
    with pytest.raises(drv.LogicError, match="smaller than width_in_bytes"):
        down()


def test_gpuarray_where_any_all_reverse_and_mul_add(drv):
    from pycuda import gpuarray
    x = gpuarray.to_gpu(np.arange(5, dtype=np.float32))
    assert gpuarray.where(x > 2, x, 0 * x).get().tolist() == [0, 0, 0, 3, 4]
    assert bool(gpuarray.any(x > 3).get()) and bool(gpuarray.all(x >= 0).get())
    assert x.reverse().get().tolist() == [4, 3, 2, 1, 0]
    assert x.mul_add(2, x, 10).get().tolist() == [0, 12, 24, 36, 48]
    assert gpuarray.logical_and(x > 0, x < 3).get().tolist() == [False, True, True, False, False]


def test_a_lessons_missing_semicolon_is_pycudas_compile_error(drv):
    """Lessons show SourceModule catching a typo: ``except drv.CompileError`` must catch it."""
    from pycuda.compiler import SourceModule
    from cudalab.errors import CompileError
    with pytest.raises(drv.CompileError) as info:
        SourceModule("__global__ void doublify(float *a) { int i = threadIdx.x  // no semicolon\n a[i] *= 2; }")
    assert isinstance(info.value, CompileError)
    assert f"{type(info.value).__module__}.{type(info.value).__name__}" == "pycuda.driver.CompileError"
    assert 'expected a ";"' in str(info.value) and 'expected a ";"' in info.value.stderr


def test_the_register_and_shared_memory_limits_by_pycudas_names(drv):
    """The driver gives these numbers two names each (the older SHARED_MEMORY_PER_BLOCK); PyCUDA's
    MAX_ names, which device-query lessons and pycuda.tools.DeviceData read, answer, as the old ones do."""
    import pycuda.tools
    device = drv.Device(0)
    limit = device.get_attribute(drv.device_attribute.MAX_REGISTERS_PER_BLOCK)
    assert limit == device.get_attribute(drv.device_attribute.REGISTERS_PER_BLOCK) == 65536
    shared = drv.device_attribute.SHARED_MEMORY_PER_BLOCK
    assert str(shared) == "MAX_SHARED_MEMORY_PER_BLOCK" and device.get_attribute(shared) == 48 * 1024
    assert pycuda.tools.DeviceData().registers == limit


def test_characterize_measures_sizes_with_the_device_compiler(drv):
    from pycuda import characterize
    assert characterize.platform_bits() == 64 and characterize.has_double_support() and characterize.has_stack()
    assert characterize.sizeof("double") == 8
    assert characterize.sizeof("struct pair", "struct pair { int a; double b; };") == 16   # aligned as C++ lays it out
