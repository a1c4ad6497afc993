"""The parts of PyCUDA that its own test suite found missing from cudalab's stand-in: the memory pool's
bins and reuse, the cuRAND generator classes, record types named for generated kernels, the real and
imaginary parts and conjugate of complex arrays as PyCUDA lays them out, and modules linked from
several sources (a kernel in one launching a kernel of another)."""
import numpy as np
import pytest

import cudalab.numba


@pytest.fixture
def pycuda():
    cudalab.numba.install()
    import pycuda
    import pycuda.autoinit  # noqa: F401
    yield pycuda
    cudalab.numba.uninstall()


def test_bitlog2_is_the_position_of_the_highest_set_bit(pycuda):
    from pycuda.tools import bitlog2
    assert [bitlog2(n) for n in (0, 1, 2, 3, 1024, 1025, 2 ** 40 + 7)] == [0, 0, 1, 1, 10, 10, 40]


def test_a_pool_bin_holds_every_size_with_the_same_leading_bits(pycuda):
    from pycuda.tools import DeviceMemoryPool
    pool = DeviceMemoryPool()
    # 1000 = 0b1111101000: exponent 9, next four bits 1111 -> bin 9 * 16 + 15; its blocks have 1023 bytes
    assert pool.bin_number(1000) == 9 * 16 + 15
    assert pool.alloc_size(pool.bin_number(1000)) == 1023
    for size in (0, 1, 17, 4096, 4097, 123_456_789):
        bin_nr = pool.bin_number(size)
        block = pool.alloc_size(bin_nr)
        assert size <= block <= size + size // 16 + 1 and pool.bin_number(block) == bin_nr


def test_a_freed_block_is_held_and_handed_out_again(pycuda):
    from pycuda import gpuarray
    from pycuda.tools import DeviceMemoryPool
    pool = DeviceMemoryPool()
    first = pool.allocate(1000)
    address = int(first)
    assert (pool.active_blocks, pool.held_blocks, pool.active_bytes, pool.managed_bytes) == (1, 0, 1000, 1023)
    del first                                   # the last reference: back to its bin, not to the driver
    assert (pool.active_blocks, pool.held_blocks) == (0, 1)
    again = gpuarray.GPUArray((250,), np.float32, gpudata=pool.allocate(1010))    # same bin, same block
    assert again.ptr == address and pool.held_blocks == 0
    again.fill(2.5)
    assert again.get().sum() == 625.0
    pool.stop_holding()
    del again
    assert pool.held_blocks == 0 and pool.managed_bytes == 0


def test_out_of_device_memory_is_pycudas_memory_error(pycuda):
    import pycuda.driver as drv
    free, total = drv.mem_get_info()
    with pytest.raises(drv.MemoryError, match="cuMemAlloc failed: out of memory"):
        drv.mem_alloc(2 * total)


def test_curand_generators_draw_in_curands_ranges_and_types(pycuda):
    from pycuda import curandom, gpuarray
    assert curandom.get_curand_version() >= (10, 0, 0)       # the cuRAND headers kernels compile with
    for kind in (curandom.XORWOWRandomNumberGenerator, curandom.MRG32k3aRandomNumberGenerator,
                 curandom.Sobol32RandomNumberGenerator, curandom.ScrambledSobol64RandomNumberGenerator):
        gen = kind()
        u = gen.gen_uniform(10_000, np.float64).get()
        assert 0 < u.min() and u.max() <= 1                  # curand_uniform: (0, 1]
        assert gen.gen_uniform(100, np.uint32).dtype == np.uint32
        assert abs(gen.gen_normal(10_000, np.float32).get().mean()) < 0.1
        assert gen.gen_log_normal(100, np.float32, 0.0, 1.0).get().min() > 0
        counts = gpuarray.to_gpu(np.full(10_000, 10, np.float32))
        gen.fill_poisson(counts)                             # each element's value is its own lambda
        assert 9 < counts.get().mean() < 11
        with pytest.raises(NotImplementedError):
            gen.gen_normal(10, np.int32)                     # PyCUDA has no such kernel either
    with pytest.raises(NotImplementedError):
        curandom.XORWOWRandomNumberGenerator().gen_uniform(10, np.int64)      # 64-bit words: Sobol64 only
    assert curandom.Sobol64RandomNumberGenerator().gen_uniform(10, np.uint64).dtype == np.uint64


def test_a_seed_getter_that_gives_fixed_seeds_repeats_the_numbers(pycuda):
    from pycuda import curandom, gpuarray

    def fixed(n):
        return gpuarray.to_gpu(np.full(n, 42, np.int32))
    a = curandom.XORWOWRandomNumberGenerator(fixed).gen_uniform(5, np.float32).get()
    b = curandom.XORWOWRandomNumberGenerator(fixed).gen_uniform(5, np.float32).get()
    assert np.array_equal(a, b)


def test_a_reduction_folds_a_struct_the_preamble_defines(pycuda):
    from pycuda import gpuarray
    from pycuda.reduction import ReductionKernel
    from pycuda.tools import dtype_to_ctype, register_dtype
    span = np.dtype([("low", np.float32), ("high", np.float32)])
    register_dtype(span, "span_t")
    assert dtype_to_ctype(span) == "span_t"
    preamble = """
    struct span_t { float low, high; };
    __device__ span_t make_span(float lo, float hi) { span_t s; s.low = lo; s.high = hi; return s; }
    __device__ span_t widen(span_t a, span_t b) { return make_span(fminf(a.low, b.low), fmaxf(a.high, b.high)); }
    """
    fold = ReductionKernel(span, neutral="make_span(1e30f, -1e30f)", reduce_expr="widen(a, b)",
                           map_expr="make_span(x[i], x[i])", arguments="const float *x", preamble=preamble)
    values = np.random.default_rng(3).standard_normal(5000).astype(np.float32)
    result = fold(gpuarray.to_gpu(values)).get()
    assert result["low"] == values.min() and result["high"] == values.max()
    with pytest.raises(RuntimeError, match="already registered as 'span_t'"):
        register_dtype(span, "other_name")


def test_real_imag_and_conj_are_new_arrays_in_the_same_order(pycuda):
    from pycuda import gpuarray
    z = (np.arange(6).reshape(2, 3) + 1j * np.arange(6, 12).reshape(2, 3)).astype(np.complex64)
    for order in ("C", "F"):
        zd = gpuarray.to_gpu(np.asarray(z, order=order))
        flag = "c_contiguous" if order == "C" else "f_contiguous"
        for part, expected in ((zd.real, z.real), (zd.imag, z.imag), (zd.conj(), z.conj())):
            assert getattr(part.flags, flag)        # numpy's .real of a complex array is a strided view
            assert np.array_equal(part.get(), expected)
        assert zd.real.dtype == np.float32
    zd = gpuarray.to_gpu(z)
    out = gpuarray.empty((2, 3), np.complex128)
    assert zd.conj(out=out) is out and np.array_equal(out.get(), z.conj())
    x = gpuarray.to_gpu(np.ones(3, np.float32))
    assert x.conj() is x and x.real is x and not x.imag.get().any()      # a real array's parts


def test_a_linked_module_launches_a_kernel_defined_in_another_source(pycuda, capfd):
    from pycuda import gpuarray
    from pycuda.compiler import DynamicModule
    parent = """
    __global__ void fill_rows(float *rows, int n) {
        extern __global__ void fill_row(float *row, int n);     // declared where it is launched
        fill_row<<<1, n>>>(rows + blockIdx.x * n, n);
    }"""
    child = """
    __global__ void fill_row(float *row, int n) { row[threadIdx.x] = threadIdx.x + 0.5f; }"""
    module = DynamicModule()
    module.add_source(parent, nvcc_options=["-rdc=true", "-lcudadevrt"])
    module.add_source(child, nvcc_options=["-rdc=true", "-lcudadevrt"])
    module.add_stdlib("cudadevrt")
    module.link()
    rows = gpuarray.zeros((3, 4), np.float32)
    module.get_function("fill_rows")(rows, np.int32(4), grid=(3, 1), block=(1, 1, 1))
    assert np.array_equal(rows.get(), np.tile(np.arange(4) + 0.5, (3, 1)))


def test_gpuarrays_made_with_a_pools_allocator_reuse_its_blocks(pycuda):
    import gc
    from pycuda import gpuarray
    from pycuda.tools import DeviceMemoryPool
    pool = DeviceMemoryPool()
    a = gpuarray.to_gpu(np.arange(1000, dtype=np.float32), allocator=pool.allocate)
    assert pool.active_blocks == 1 and a.get()[999] == 999
    address = a.ptr
    del a
    gc.collect()
    assert (pool.active_blocks, pool.held_blocks) == (0, 1)         # the array's block went back to the pool
    b = gpuarray.zeros(1000, np.float32, allocator=pool.allocate)  # the same size: the held block again
    assert b.ptr == address and not b.get().any()


def test_pytools_comes_with_the_pycuda_stand_in_as_with_pycuda(pycuda):
    """PyCUDA depends on pytools and pip installs it with PyCUDA; cudalab, whose PyCUDA stand-in takes
    PyCUDA's place, depends on it too, so a program's ``from pytools import ...`` (PyCUDA's own tests:
    the real type of a complex precision) finds it."""
    from pytools import match_precision
    import pycuda.gpuarray as gpuarray
    real = match_precision(np.dtype(np.float64), np.dtype(np.complex64))
    assert real == np.float32
    z = gpuarray.to_gpu(np.array([1 + 2j, 3 - 4j], np.complex64))
    assert z.real.dtype == real and z.real.get().tolist() == [1, 3] and z.imag.get().tolist() == [2, -4]
