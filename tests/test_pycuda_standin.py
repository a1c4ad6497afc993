"""Programs written for PyCUDA (a book's listings, PyCUDA's own examples) run unchanged after
cudalab.numba.install(), which puts cudalab's PyCUDA stand-in in PyCUDA's place: SourceModule's
kernels and the generated ones (elementwise, reduction, scan) are compiled and emulated, GPUArrays
live in emulated device memory, and arguments go as PyCUDA packs them."""
import numpy as np
import pytest

import cudalab.numba

SCALE = """
__global__ void scale(float *values, float factor, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) values[i] *= factor;
}
"""


@pytest.fixture
def pycuda():
    cudalab.numba.install()
    import pycuda
    import pycuda.autoinit  # noqa: F401  (what every PyCUDA program imports first)
    yield pycuda
    cudalab.numba.uninstall()


def test_a_source_module_kernel_scales_a_gpuarray(pycuda):
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    scale = SourceModule(SCALE).get_function("scale")      # extern "C": found by its C name
    a = gpuarray.to_gpu(np.arange(6, dtype=np.float32))
    scale(a, np.float32(2.5), np.int32(6), block=(32, 1, 1), grid=(1, 1))
    assert a.get().tolist() == [0.0, 2.5, 5.0, 7.5, 10.0, 12.5]
    scale(a.gpudata, np.float32(2), np.int32(6), block=(32, 1, 1))      # its address: a pointer too
    assert a.get().tolist() == [0.0, 5.0, 10.0, 15.0, 20.0, 25.0]
    twice = a * 2                                            # PyCUDA's own operators answer GPUArrays
    assert type(twice).__name__ == "GPUArray" and twice.get()[1] == 10.0
    assert float(pycuda.gpuarray.sum(a).get()) == 75.0


def test_a_python_int_argument_is_pycudas_type_error_and_prepare_takes_it(pycuda):
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    scale = SourceModule(SCALE).get_function("scale")
    a = gpuarray.to_gpu(np.ones(4, dtype=np.float32))
    with pytest.raises(TypeError, match=r"invalid type on parameter #2 \(0-based\).*np.int32\(4\)"):
        scale(a, np.float32(3), 4, block=(4, 1, 1))
    scale.prepare("Pfi")                                     # the types given once: plain numbers are fine
    scale.prepared_call((1, 1), (4, 1, 1), a.gpudata, 3, 4)
    assert a.get().tolist() == [3.0] * 4


def test_in_out_and_inout_copy_host_arrays_as_pycuda_does(pycuda):
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    copy = SourceModule("""
    __global__ void copy_plus_one(const float *src, float *dst) { dst[threadIdx.x] = src[threadIdx.x] + 1.0f; }
    """).get_function("copy_plus_one")
    src, dst = np.arange(8, dtype=np.float32), np.zeros(8, dtype=np.float32)
    copy(drv.In(src), drv.Out(dst), block=(8, 1, 1))
    assert dst.tolist() == [float(v) + 1 for v in range(8)]
    both = np.full(8, 5, dtype=np.float32)
    copy(drv.InOut(both), drv.InOut(both), block=(8, 1, 1))
    assert both.tolist() == [6.0] * 8


def test_mem_alloc_and_memcpy_move_bytes_to_and_from_a_kernel(pycuda):
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    scale = SourceModule(SCALE).get_function("scale")
    values = np.arange(5, dtype=np.float32)
    memory = drv.mem_alloc(values.nbytes)
    drv.memcpy_htod(memory, values)
    scale(memory, np.float32(-1), np.int32(5), block=(8, 1, 1))
    back = np.empty_like(values)
    drv.memcpy_dtoh(back, memory)
    assert back.tolist() == [0.0, -1.0, -2.0, -3.0, -4.0]


def test_generated_kernels_run_the_programs_c_expressions(pycuda):
    from pycuda import gpuarray
    from pycuda.elementwise import ElementwiseKernel
    from pycuda.reduction import ReductionKernel
    from pycuda.scan import ExclusiveScanKernel, InclusiveScanKernel
    x = gpuarray.to_gpu(np.arange(1, 1001, dtype=np.float32))
    halve = ElementwiseKernel("float *x, float *y, float c", "y[i] = c * x[i]", "halve")
    y = gpuarray.empty_like(x)
    halve(x, y, 0.5)
    assert y.get()[-1] == 500.0
    dot = ReductionKernel(np.float32, neutral="0", reduce_expr="a+b", map_expr="x[i]*y[i]",
                          arguments="float *x, float *y")
    assert float(dot(x, y).get()) == pytest.approx(float(np.dot(x.get(), y.get())), rel=1e-6)
    counts = gpuarray.to_gpu(np.arange(1, 1001, dtype=np.int32))
    assert InclusiveScanKernel(np.int32, "a+b")(counts).get().tolist() == np.cumsum(np.arange(1, 1001)).tolist()
    peaks = gpuarray.to_gpu(np.array([1, 5, 2, 7, 3, 0], dtype=np.int32))
    assert InclusiveScanKernel(np.int32, "a > b ? a : b")(peaks).get().tolist() == [1, 5, 5, 7, 7, 7]
    before = gpuarray.to_gpu(np.arange(1, 6, dtype=np.int32))
    assert ExclusiveScanKernel(np.int32, "a+b", 0)(before).get().tolist() == [0, 1, 3, 6, 10]


def test_events_and_time_kernel_time_a_launch_on_the_timeline(pycuda):
    import pycuda.driver as drv
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    scale = SourceModule(SCALE).get_function("scale")
    a = gpuarray.to_gpu(np.ones(1 << 16, dtype=np.float32))
    start, end, stream = drv.Event(), drv.Event(), drv.Stream()
    start.record(stream)
    scale(a, np.float32(2), np.int32(a.size), block=(256, 1, 1), grid=(a.size // 256, 1), stream=stream)
    end.record(stream)
    end.synchronize()
    assert end.time_since(start) > 0
    seconds = scale(a, np.float32(2), np.int32(a.size), block=(256, 1, 1), grid=(a.size // 256, 1), time_kernel=True)
    assert 0 < seconds < 0.01
    assert a.get()[0] == 4.0


def test_the_device_answers_in_pycudas_names(pycuda):
    import pycuda.driver as drv
    drv.init()
    device = drv.Device(0)
    attributes = {str(k): v for k, v in device.get_attributes().items()}      # a book's deviceQuery
    assert attributes["WARP_SIZE"] == 32
    assert attributes["MULTIPROCESSOR_COUNT"] == device.MULTIPROCESSOR_COUNT > 0
    assert drv.Device.count() == 1 and len(device.compute_capability()) == 2
    context = device.make_context()
    context.set_limit(drv.limit.MALLOC_HEAP_SIZE, 32 << 20)     # the device heap in-kernel malloc takes from
    assert drv.Context.get_limit(drv.limit.MALLOC_HEAP_SIZE) == 32 << 20
    context.set_limit(drv.limit.MALLOC_HEAP_SIZE, 8 << 20)
    context.pop()


def test_an_elementwise_kernel_over_pycuda_complex_values(pycuda):
    from pycuda import gpuarray
    from pycuda.elementwise import ElementwiseKernel
    # a book's Mandelbrot kernel declares pycuda::complex<float> arguments: PyCUDA's header is included
    square_plus = ElementwiseKernel("pycuda::complex<float> *z, float *size",
                                    "pycuda::complex<float> w = z[i] * z[i] + z[i]; size[i] = abs(w);",
                                    "square_plus")
    z = gpuarray.to_gpu(np.array([1 + 1j, 2j, -1], dtype=np.complex64))
    size = gpuarray.empty(3, np.float32)
    square_plus(z, size)
    expected = np.abs(z.get() * z.get() + z.get())
    assert np.allclose(size.get(), expected, rtol=1e-6)


def test_copies_between_gpuarrays_and_device_to_device_memcpy(pycuda):
    from pycuda import gpuarray
    a = gpuarray.to_gpu(np.arange(4, dtype=np.int32))
    b = a.copy()                     # a device-to-device copy: the new array is independent
    a.fill(7)
    assert b.get().tolist() == [0, 1, 2, 3] and a.get().tolist() == [7] * 4


def test_device_work_without_a_context_is_pycudas_logic_error():
    """A program that forgets ``import pycuda.autoinit`` (or a thread that makes no context of its
    own) fails on a GPU at its first allocation; so it does here, saying what to write."""
    import threading
    cudalab.numba.install()
    try:
        import pycuda.driver as drv
        from pycuda import gpuarray
        while drv.Context.get_current() is not None:    # earlier tests imported pycuda.autoinit
            drv.Context.pop()
        with pytest.raises(drv.LogicError, match="no currently active context.*import pycuda.autoinit"):
            gpuarray.to_gpu(np.zeros(4))
        context = drv.Device(0).make_context()
        assert gpuarray.to_gpu(np.ones(2)).get().tolist() == [1.0, 1.0]
        seen = []
        worker = threading.Thread(target=lambda: seen.append(drv.Context.get_current()))
        worker.start()
        worker.join()
        assert seen == [None]                  # contexts are current per thread, as in PyCUDA
        context.pop()
    finally:
        cudalab.numba.uninstall()


def test_a_numba_kernel_doubles_a_gpuarray_under_the_primary_context():
    """PyCUDA's own example of sharing memory with numba: autoprimaryctx, then a numba kernel given
    a GPUArray (through __cuda_array_interface__)."""
    cudalab.numba.install()
    try:
        from numba import cuda
        import pycuda.autoprimaryctx  # noqa: F401
        from pycuda import gpuarray

        @cuda.jit
        def double(x):
            i = cuda.grid(1)
            if i < x.size:
                x[i] *= 2
        a = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
        double[1, 32](a)
        assert a.get().tolist() == [0.0, 2.0, 4.0, 6.0]
    finally:
        cudalab.numba.uninstall()


def test_pycudas_complex_header_compiles_inside_the_extern_c_wrapper(pycuda):
    """SourceModule wraps a program's source, its #include lines too, in extern "C" { }: PyCUDA's
    header declares C++ linkage itself, and so does cudalab's."""
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    module = SourceModule("""
    #include <pycuda-complex.hpp>
    typedef pycuda::complex<double> cplx;
    __global__ void modulus_of_square(double *out) { cplx z(1, 2); out[0] = abs(z * z); }
    """)
    out = np.zeros(1)
    module.get_function("modulus_of_square")(drv.Out(out), block=(1, 1, 1))
    assert out[0] == pytest.approx(5.0)


def test_a_cu_file_that_is_also_a_c_program_loads_as_nvcc_builds_it(pycuda):
    """A course's .cu file serves nvcc (a main that times the kernel with <chrono>) and PyCUDA
    (SourceModule of the same file): nvcc compiles the host code and PyCUDA keeps the kernels."""
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    source = """
    #include <stdio.h>
    #include <chrono>
    extern "C" __global__ void add_one(float *x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] += 1.0f;
    }
    int main() {
        auto start = std::chrono::high_resolution_clock::now();
        printf("host code, which PyCUDA never runs\\n");
        return (int)(std::chrono::high_resolution_clock::now() - start).count() < 0;
    }
    """
    add_one = SourceModule(source, no_extern_c=True).get_function("add_one")
    x = np.zeros(5, dtype=np.float32)
    add_one(drv.InOut(x), np.int32(5), block=(32, 1, 1))
    assert x.tolist() == [1.0] * 5


def test_glibcs_short_unsigned_names_compile_as_under_nvcc(pycuda):
    """PyCUDA builds with nvcc, whose host headers declare glibc's uint, ushort and ulong in every .cu
    file on Linux: PyCUDA's tiled matrix product writes ``const uint tx = threadIdx.x;`` with no
    include. A module that declares them itself still compiles."""
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    mix = SourceModule("__global__ void mix(unsigned *out) { const uint t = threadIdx.x; ushort two = 2; "
                       "ulong three = 3; out[t] = t * two + three; }").get_function("mix")
    out = np.zeros(4, dtype=np.uint32)
    mix(drv.Out(out), block=(4, 1, 1))
    assert out.tolist() == [3, 5, 7, 9]
    SourceModule("typedef unsigned int uint;\n__global__ void own(uint *o) { o[0] = 1; }").get_function("own")


def test_threads_that_each_make_a_context_launch_and_copy_get_their_own_answers(pycuda):
    """The book's multi-kernel_multi-thread: ten threads, each with its own context, module, array of
    a million floats (the emulated memory grows as they go), a launch of one block that loops over it
    and a copy back, all at the same time. Without the stand-in's lock a launch in one thread lost its
    writes while another grew the memory (the book's assertion failed in 2 runs of 4, this test in 1 of
    3, while growing moved the memory: a race, so it failed only sometimes)."""
    import threading
    import pycuda.driver as drv
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    loop = """
    __global__ void triple_in_turns(float *values, int n)
    {
        for (int i = threadIdx.x; i < n; i += blockDim.x) values[i] *= 3.0f;
    }
    """
    results, n = {}, 1 << 20

    def work(k):
        context = drv.Device(0).make_context()
        triple = SourceModule(loop).get_function("triple_in_turns")
        values = gpuarray.to_gpu(np.full(n, k, dtype=np.float32))
        triple(values, np.int32(n), block=(64, 1, 1), grid=(1, 1, 1))
        results[k] = values.get()
        context.pop()
    threads = [threading.Thread(target=work, args=(k,)) for k in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [k for k in range(10) if not (results[k] == 3 * k).all()] == []


def test_mapped_host_memory_is_read_and_written_by_a_kernel_where_it_is(pycuda):
    """Zero-copy memory, as the eScience course's pnpoly allocates it: a page-locked array mapped into
    the device's address space; the kernel's writes are in the host array with no copy."""
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    flags = drv.host_alloc_flags.PORTABLE | drv.host_alloc_flags.DEVICEMAP
    mapped = drv.pagelocked_zeros(8, np.float32, order="C", mem_flags=flags)
    mapped[:] = np.arange(8)
    scale = SourceModule(SCALE).get_function("scale")
    scale(np.intp(mapped.base.get_device_pointer()), np.float32(2), np.int32(8), block=(8, 1, 1))
    drv.Context.synchronize()
    assert mapped.tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0]


def test_in_of_a_numpy_scalar_copies_its_bytes_in_and_gpuarray_flags_read_as_pycudas(pycuda):
    # Columbia's E4750 solution passes cuda.In(b) where b may be a single np.float32: PyCUDA copies
    # its four bytes to the device and the kernel reads b[0]
    import pycuda.driver as drv
    from pycuda import gpuarray
    from pycuda.compiler import SourceModule
    add = SourceModule("""
    __global__ void add_first(const float *a, const float *b, float *c) { c[threadIdx.x] = a[threadIdx.x] + b[0]; }
    """).get_function("add_first")
    a, c = np.arange(4, dtype=np.float32), np.zeros(4, dtype=np.float32)
    add(drv.In(a), drv.In(np.float32(10)), drv.Out(c), block=(4, 1, 1))
    assert c.tolist() == [10.0, 11.0, 12.0, 13.0]
    x = gpuarray.to_gpu(np.ones((2, 3), np.float32))
    assert x.flags.c_contiguous and not x.flags.f_contiguous and x.flags["C_CONTIGUOUS"]
    assert gpuarray.zeros_like(x).get().tolist() == [[0.0] * 3] * 2


def test_timing_an_event_the_gpu_has_not_reached_is_pycudas_device_not_ready(pycuda):
    # Columbia's E4750 recitation times a launch with start.time_till(end) right after end.record()
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    scale = SourceModule(SCALE).get_function("scale")
    a = drv.mem_alloc(4 * 1024)
    start, end = drv.Event(), drv.Event()
    start.record()
    scale(a, np.float32(2), np.int32(1024), block=(256, 1, 1), grid=(4, 1))
    end.record()
    with pytest.raises(drv.LogicError, match=r"cuEventElapsedTime failed: device not ready.*end.synchronize\(\)"):
        start.time_till(end)
    end.synchronize()
    assert start.time_till(end) > 0 and end.time_since(start) == start.time_till(end)


def test_namespace_const_floats_folded_into_a_kernel_as_nvcc_does(pycuda):
    # a heat-equation homework keeps its constants as const floats, one computed from the others;
    # nvcc folds them, NVRTC alone takes dt for a __device__ variable initialized at run time
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    step = SourceModule("""
    const float D = 4.0;
    const float dx2 = 0.01;
    const float dt = dx2 * dx2 / (2 * D * (dx2 + dx2));
    __global__ void factor(float *u) { u[threadIdx.x] = D * dt / dx2; }
    """).get_function("factor")
    u = np.zeros(4, dtype=np.float32)
    step(drv.InOut(u), block=(4, 1, 1))
    assert u.tolist() == [0.25] * 4


def test_from_device_like_takes_pycudas_keyword_names(pycuda):
    import pycuda.driver as drv
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    a_gpu = drv.to_device(a)
    back = drv.from_device_like(devptr=a_gpu, other_ary=a)      # a hello-GPU lesson's spelling
    assert back.shape == (2, 3) and back.tolist() == a.tolist()
    assert drv.from_device(a_gpu, (6,), np.float32).tolist() == a.ravel().tolist()


# pycourses round 18
def test_a_device_query_reads_attributes_by_their_lower_case_names(pycuda):
    # PyCUDA upper-cases an attribute's name: dev.clock_rate is dev.get_attribute(CLOCK_RATE)
    import pycuda.driver as drv
    dev = drv.Device(0)
    assert dev.clock_rate == dev.get_attribute(drv.device_attribute.CLOCK_RATE) > 0
    assert dev.multiprocessor_count == dev.MULTIPROCESSOR_COUNT
    assert dev.max_threads_per_block == 1024
    with pytest.raises(AttributeError, match="no attribute 'warp_speed'"):
        dev.warp_speed
