"""Course programs that make their arrays with CuPy and run numba.cuda kernels on them work unchanged
after cudalab.numba.install(): cupy's arrays are cudalab device arrays, a kernel writes into them, a
numba array seen through cupy.asarray is the same memory, and CuPy's checks and timings answer."""
import sys
import warnings

import numpy as np
import pytest

import cudalab.numba
from cudalab.errors import CudaError


@pytest.fixture
def cuda():
    cudalab.numba.install()
    from numba import cuda
    yield cuda
    cudalab.numba.uninstall()


@pytest.fixture
def cp(cuda):
    import cupy
    return cupy


def test_a_kernel_adds_two_cupy_arrays(cuda, cp):
    @cuda.jit
    def add(x, y, out):
        start, stride = cuda.grid(1), cuda.gridsize(1)
        for i in range(start, x.shape[0], stride):
            out[i] = x[i] + y[i]

    a = cp.arange(10)
    b = a * 2
    out = cp.zeros_like(a)
    add[1, 32](a, b, out)
    assert str(out) == "[ 0  3  6  9 12 15 18 21 24 27]"
    assert repr(a + b) == "array([ 0,  3,  6,  9, 12, 15, 18, 21, 24, 27])"
    assert str(type(out)) == "<class 'cupy.ndarray'>" and cp.get_array_module(out) is cp
    cp.testing.assert_array_equal(out, a + b)


def test_cupy_asarray_of_a_numba_array_shares_its_memory(cuda, cp):
    x_numba = cuda.to_device(np.arange(10))
    x_cupy = cp.asarray(x_numba)
    assert float(x_cupy.mean()) == 4.5

    @cuda.jit
    def add_one(x):
        i = cuda.grid(1)
        if i < len(x):
            x[i] += 1
    add_one[1, 32](x_numba)
    assert float(x_cupy.mean()) == 5.5          # the kernel wrote the memory both arrays view
    assert cuda.as_cuda_array(x_cupy).copy_to_host()[0] == 1


def test_reductions_give_0d_arrays_and_python_numbers(cp):
    a = cp.arange(1, 5, dtype=cp.float32)
    total = a.sum()
    assert isinstance(total, cp.ndarray) and total.shape == ()
    assert f"{total:.1f}" == "10.0" and int(total) == 10 and bool(total > 9)
    assert float(cp.sqrt(a)[3]) == 2.0
    np.testing.assert_array_equal(cp.asnumpy(cp.where(a > 2, a, 0)), [0, 0, 3, 4])
    assert a[:, cp.newaxis].shape == (4, 1) and cp.pi == np.pi
    assert abs(float(cp.linalg.norm(cp.array([3.0, 4.0]))) - 5.0) < 1e-12


def test_views_masks_and_in_place_changes_reach_device_memory(cp):
    d = cp.zeros((4, 4), dtype=cp.float32)
    d[1:3, ::2] = 5
    assert d.T.shape == (4, 4) and d.T[0, 1] == 5 and not d.T.flags.c_contiguous     # a view, as in CuPy
    d[d > 1] += 1
    c = d.copy()
    c.sort(axis=0)
    np.testing.assert_array_equal(d.get()[1], [6, 0, 6, 0])
    np.testing.assert_array_equal(c.get()[:, 0], [0, 0, 6, 6])
    d += 1
    assert float(d.sum()) == 4 * 7 + 12 * 1
    c.fill(2)
    assert float(c.sum()) == 32 and float(d.sum()) == 40


def test_random_arrays_live_on_the_device_and_shuffle_in_place(cp):
    cp.random.seed(1)
    a = cp.arange(10)
    cp.random.shuffle(a)
    assert sorted(a.get().tolist()) == list(range(10)) and a.get().tolist() != list(range(10))
    with pytest.raises(CudaError, match="out of device memory"):      # refused before numpy draws 8 GB
        cp.random.random((1, 100_000, 10_000))
    draws = cp.random.RandomState(3).random_sample((2, 3))
    assert isinstance(draws, cp.ndarray) and draws.shape == (2, 3) and 0 <= float(draws.min()) < 1


def test_implicit_conversion_to_numpy_is_refused_as_in_cupy(cp):
    with pytest.raises(TypeError, match=r"use `\.get\(\)`"):
        np.asarray(cp.arange(3))


def test_cupy_streams_events_and_the_runtime(cuda, cp):
    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2

    x = cp.ones(256, dtype=cp.int32)
    s = cp.cuda.Stream()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    with s:
        start.record()
        double[1, 256, cuda.external_stream(s.ptr)](x)
        end.record()
    end.synchronize()
    assert cp.cuda.get_elapsed_time(start, end) > 0
    assert int(x.sum()) == 512
    cp.cuda.runtime.memset(x.data.ptr, 0, x.nbytes)
    assert int(x.sum()) == 0
    assert cp.cuda.runtime.getDeviceProperties(0)["name"] == cuda.get_current_device().name.encode()


def test_the_devices_attributes_by_cupys_names(cuda, cp):
    attributes = cp.cuda.Device().attributes
    device = cuda.get_current_device()
    assert attributes["MultiProcessorCount"] == device.MULTIPROCESSOR_COUNT == 108     # the A100 profile
    assert attributes["MaxThreadsPerBlock"] == 1024 and attributes["WarpSize"] == 32
    assert (attributes["ComputeCapabilityMajor"], attributes["ComputeCapabilityMinor"]) == device.compute_capability


def test_benchmark_times_a_kernel_on_the_modeled_timeline(cuda, cp):
    import cupyx

    @cuda.jit
    def copy(src, dst):
        i = cuda.grid(1)
        dst[i] = src[i]
    src = cp.arange(4096)
    dst = cp.empty_like(src)
    result = cupyx.profiler.benchmark(copy[16, 256], (src, dst), n_repeat=3, n_warmup=1)
    assert result.gpu_times.shape == (1, 3) and (result.gpu_times > 0).all()
    np.testing.assert_allclose(result.gpu_times, result.gpu_times[0, 0], rtol=1e-9)   # the model's time, each run
    cp.testing.assert_array_equal(src, dst)


def test_a_reduction_kernel_maps_combines_and_post_maps_along_an_axis(cp):
    l2norm = cp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = cp.arange(10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_allclose(l2norm(x, axis=1).get(), np.linalg.norm(x.get(), axis=1), rtol=1e-6)
    np.testing.assert_allclose(float(l2norm(x)), np.linalg.norm(x.get()), rtol=1e-6)
    assert l2norm(x, axis=0, keepdims=True).shape == (1, 5)
    largest = cp.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", "-1e30", "largest")
    r = cp.random.random((300, 7)).astype(cp.float32)
    np.testing.assert_array_equal(largest(r, axis=0).get(), r.get().max(axis=0))


def test_uninstall_takes_the_stand_in_away():
    cudalab.numba.install()
    import cupy
    import nvtx
    assert cupy.__name__ == "cupy" and cupy.__file__.endswith("cudalab/cupy/__init__.py")
    assert sys.modules["cupy.cuda.nvtx"].RangePush("x") is None

    @nvtx.annotate("phase", color="blue")
    def phase(x):
        with nvtx.annotate("inner"):
            return x + 1
    assert phase(1) == 2 and nvtx.annotate(phase)(2) == 3
    cudalab.numba.uninstall()
    assert not {"cupy", "cupyx.profiler", "nvtx"} & set(sys.modules)


def test_numpy_functions_given_cupy_arrays_answer_with_cupy_arrays(cp):
    u, s, v = np.linalg.svd(cp.eye(3) * 2)
    assert isinstance(s, cp.ndarray) and float(s.sum()) == 6.0
    out = cp.zeros(3)
    np.add(cp.ones(3), 1, out=out)
    assert out.get().tolist() == [2.0, 2.0, 2.0]


def test_a_raw_kernel_is_cuda_cpp_run_on_the_emulator(cp):
    add = cp.RawKernel(r'''
    extern "C" __global__ void my_add(const float* x1, const float* x2, float* y, int n) {
        int tid = blockDim.x * blockIdx.x + threadIdx.x;
        if (tid < n) y[tid] = x1[tid] + x2[tid];
    }''', "my_add")
    x = cp.arange(25, dtype=cp.float32).reshape(5, 5)
    y = cp.zeros((5, 5), dtype=cp.float32)
    add((4,), (8,), (x, x, y, cp.int32(25)))
    cp.testing.assert_array_equal(y, 2 * x)
    fill = cp.RawModule(code='extern "C" __global__ void fill(int* a, int v) { a[threadIdx.x] = v; }').get_function("fill")
    z = cp.zeros(8, dtype=cp.int32)
    fill((1,), (8,), (z, 7))
    assert z.get().tolist() == [7] * 8


def test_an_elementwise_kernel_broadcasts_binds_types_and_indexes_raw_arrays(cp):
    squared_diff = cp.ElementwiseKernel("float32 x, float32 y", "float32 z", "z = (x - y) * (x - y)", "squared_diff")
    x = cp.arange(10, dtype=np.float32).reshape(2, 5)
    np.testing.assert_array_equal(squared_diff(x, cp.arange(5, dtype=np.float32)).get(), [[0] * 5, [25] * 5])
    np.testing.assert_array_equal(squared_diff(x, 5).get()[0], [25, 16, 9, 4, 1])
    generic = cp.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff_generic")
    result = generic(cp.arange(4), cp.arange(4) * 3)
    assert result.dtype == np.int64 and result.get().tolist() == [0, 4, 16, 36]
    add_reverse = cp.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse")
    assert add_reverse(cp.arange(5.0), cp.arange(5.0)).get().tolist() == [4.0] * 5


def test_a_program_that_imports_cupy_before_numba_gets_the_stand_in(tmp_path):
    # what CUDALAB_NUMBA=1 does at start-up (cudalab-numba.pth), then a program's own imports
    import subprocess
    program = tmp_path / "cupy_first.py"
    program.write_text("import cudalab.numba\ncudalab.numba.install_on_import()\nimport cupy as cp\n"
                       "from numba import cuda\n\n@cuda.jit\ndef inc(x):\n    x[cuda.grid(1)] += 1\n\n"
                       "a = cp.zeros(4)\ninc[1, 4](a)\nprint(cp.__name__, a)\n")
    run = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "cupy [1. 1. 1. 1.]", run.stderr


def test_a_cupyx_jit_kernel_is_numbas_dialect_launched_as_cupy_launches(cp):
    from cupyx import jit

    @jit.rawkernel()
    def elementwise_copy(x, y, size):
        tid = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        for i in range(tid, size, jit.gridDim.x * jit.blockDim.x):
            y[i] = 2 * x[i]

    x = cp.random.normal(size=(5000,), dtype=cp.float32)
    y = cp.empty_like(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # numba's small-grid warning is numba's, not CuPy's
        elementwise_copy((4,), (128,), (x, y, cp.uint32(x.size)))
        cp.testing.assert_array_equal(y, 2 * x)
        elementwise_copy[2, 64](y, x, cp.uint32(x.size))
    cp.testing.assert_array_equal(x, 2 * y)


def _between_events(cp, work):
    """Milliseconds between two events around ``work()`` on the current stream, as CuPy lessons time."""
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    work()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end)


def test_cupys_own_operations_take_the_time_a_gpu_would(cuda, cp):
    """A CuPy lesson times ``x_gpu @ y_gpu`` between two events against numpy's ``x @ y``; numpy computes
    the stand-in's values, and the timeline gave the operation no time at all: 0.0 ms, a speed-up no GPU
    gives. Each operation is now a row of the roofline model: a matrix product is arithmetic-bound
    (twice the size, eight times the flops), an addition memory-bound (bytes at DRAM bandwidth)."""
    from cudalab.cupy import model
    from cudalab.device.timing import LAUNCH_OVERHEAD_US as launch
    rng = np.random.default_rng(0)
    small = [cp.array(rng.random((512, 512))) for _ in range(2)]
    large = [cp.array(rng.random((1024, 1024))) for _ in range(2)]
    product = _between_events(cp, lambda: small[0] @ small[1])
    assert product > 0
    bigger = _between_events(cp, lambda: large[0] @ large[1])
    assert (bigger * 1e3 - launch) / (product * 1e3 - launch) == pytest.approx(8)
    # at the A100's 9.7 FP64 TFLOP/s: 2 * 1024**3 flops, plus the launch
    flops_per_us = model.peak_flops_per_us(np.float64)
    assert bigger * 1e3 == pytest.approx(2 * 1024 ** 3 / flops_per_us + launch, rel=1e-6)
    assert flops_per_us == pytest.approx(model.peak_flops_per_us(np.float32) / 2)      # the A100's FP64 is half its FP32
    added = _between_events(cp, lambda: large[0] + large[1])          # reads two arrays, writes one
    from cudalab.device import profiles
    bandwidth = profiles.get("A100").memory_bandwidth_gbs * 1e3       # 1555 GB/s: bytes per microsecond
    assert added * 1e3 == pytest.approx(3 * large[0].nbytes / bandwidth + launch, rel=1e-6)
    assert 0 < _between_events(cp, lambda: cp.linalg.solve(large[0], large[1][:, 0])) < bigger   # 2n^3/3 < 2n^3


def test_copies_between_host_and_cupy_arrays_are_on_the_timeline(cuda, cp):
    import cudalab
    host = np.ones((256, 1024), np.float32)
    with cudalab.record_timeline() as recording:
        x = cp.asarray(host)
        (x * 2).sum()
        back = x.get()
    kinds = [(row["kind"], row["name"]) for row in recording.rows()]
    assert kinds[0] == ("H2D", "H2D 1,048,576 B (CuPy)") and kinds[-1] == ("D2H", "D2H 1,048,576 B (CuPy)")
    assert [name for kind, name in kinds if kind == "kernel"] == ["cupy mul", "cupy sum"]
    assert (back == host).all()


def test_a_cupyx_jit_kernel_shows_the_code_it_compiled(cp):
    from cupyx import jit

    @jit.rawkernel()
    def fill(y, v):
        y[jit.threadIdx.x] = v

    with pytest.raises(RuntimeError, match="compilation is deferred until the first function call"):
        fill.cached_code                        # CuPy compiles at the first launch
    y = cp.zeros(32, dtype=cp.float32)
    fill((1,), (32,), (y, cp.float32(3)))
    code = fill.cached_code                     # numba's PTX here, where CuPy shows its CUDA C++
    assert code.startswith("// cudalab compiles cupyx.jit kernels with numba-cuda") and ".entry" in code
    assert len(fill.cached_codes) == 1 and (y == 3).all()


def test_a_raw_kernel_takes_a_one_element_numpy_array_by_value_as_cupy_does(cp):
    # a struct parameter is given as a one-element structured array (a float2 here), a number as a
    # one-element array; both are copied into the parameter buffer, as CuPy passes them
    shift = cp.RawKernel(r'''
    extern "C" __global__ void shift(const float2* points, float2 by, int scale, float2* out) {
        int i = threadIdx.x;
        out[i] = make_float2(points[i].x + scale * by.x, points[i].y + scale * by.y);
    }''', "shift")
    float2 = np.dtype({"names": ["x", "y"], "formats": [np.float32] * 2})
    points = cp.arange(8, dtype=cp.float32).reshape(4, 2)
    out = cp.zeros_like(points)
    by = np.array([0.5, -1.0], np.float32).view(float2)
    shift((1,), (4,), (points, by, np.array([2], np.int32), out))
    np.testing.assert_array_equal(out.get(), points.get() + [1.0, -2.0])
    with pytest.raises(TypeError, match=r"numpy.ndarray of shape \(4, 2\).*cupy.ndarray"):
        shift((1,), (4,), (points.get(), by, 2, out))


def test_a_cupyx_jit_kernel_uses_cupys_shared_memory_and_atomics(cp):
    from cupyx import jit

    @jit.rawkernel()
    def block_sums(x, total, largest, n):
        tid = jit.threadIdx.x
        tile = jit.shared_memory(cp.float32, 64)        # CuPy's order: dtype, then size
        i = jit.blockIdx.x * jit.blockDim.x + tid
        for _ in range(1):                              # Python's range
            jit.syncthreads()
        tile[tid] = x[i] if i < n else cp.float32(0)
        jit.syncthreads()
        if tid == 0 and jit.laneid() == 0:             # CuPy calls laneid; numba reads it
            s = cp.float32(0)
            for k in jit.range(jit.blockDim.x):         # CuPy's range beside Python's (above)
                s += tile[k]
            jit.atomic_add(total, 0, s)
            jit.atomic_max(largest, 0, s)

    x = cp.arange(200, dtype=cp.float32)
    total, largest = cp.zeros(1, dtype=cp.float32), cp.zeros(1, dtype=cp.float32)
    block_sums((4,), (64,), (x, total, largest, cp.int32(200)))
    assert total.get()[0] == 19900.0
    assert largest.get()[0] == sum(range(128, 192))      # the third block's 64 elements sum the most


def test_cupys_stream_module_and_memory_pools_answer(cp):
    # CuPy's own examples spell the classes cupy.cuda.stream.Stream and .Event, set a pool as the
    # allocator and stage copies through pinned memory from cupy.cuda.alloc_pinned_memory
    pool = cp.cuda.MemoryPool()
    cp.cuda.set_allocator(pool.malloc)
    cp.cuda.set_pinned_memory_allocator(cp.cuda.PinnedMemoryPool().malloc)
    x = cp.arange(1 << 18, dtype=cp.float32)
    assert pool.used_bytes() >= x.nbytes and pool.total_bytes() == pool.used_bytes()
    pool.free_all_blocks()

    mem = cp.cuda.alloc_pinned_memory(x.nbytes)
    staged = np.frombuffer(mem, np.float32, x.size)
    pageable = np.empty(x.size, np.float32)
    stream = cp.cuda.stream.Stream()
    with stream:
        pinned_ms = _between_events(cp, lambda: x.get(out=staged))
        pageable_ms = _between_events(cp, lambda: x.get(out=pageable))
    assert (staged == np.arange(1 << 18)).all() and (pageable == staged).all()
    assert 0 < pinned_ms < pageable_ms            # page-locked memory copies at the faster rate
    assert isinstance(cp.cuda.stream.get_current_stream(), cp.cuda.Stream)


def test_fortran_ordered_arrays_keep_their_layout_in_device_memory(cp):
    # a raw kernel reads the bytes: CuPy's MAGMA-style sgemm example hands cp.asfortranarray(A) to a
    # kernel that indexes A[row + col * lda], and read a C-ordered copy as the transpose before
    first_column_then_second = cp.RawKernel(r'''
    extern "C" __global__ void flat(const float* a, float* out) { out[threadIdx.x] = a[threadIdx.x]; }''', "flat")
    a = cp.arange(6, dtype=cp.float32).reshape(2, 3)
    f = cp.asfortranarray(a)
    assert f.flags.f_contiguous and not f.flags.c_contiguous and f.strides == (4, 8)
    out = cp.zeros(6, dtype=cp.float32)
    first_column_then_second((1,), (6,), (f, out))
    assert out.get().tolist() == [0, 3, 1, 4, 2, 5]
    assert (f.get() == a.get()).all()                           # the same values, laid out by column
    assert cp.empty_like(f).strides == (4, 8) and cp.zeros_like(f).strides == (4, 8)
    assert cp.empty_like(f, order="C").strides == (12, 4) and cp.asarray(a).strides == (12, 4)
    # a view of a view (the transpose of a reshaped array) keeps the first array as its base
    first_column_then_second((1,), (6,), (cp.arange(6, dtype=cp.float32).reshape(2, 3).T, out))
    assert out.get().tolist() == [0, 1, 2, 3, 4, 5]            # the kernel gets the data pointer, as CuPy's


def test_kernels_compute_with_cupys_complex_type(cp):
    # CuPy's user guide: a raw kernel includes <cupy/complex.cuh> and writes complex<float>; elementwise
    # and reduction kernels over complex arrays use the same type without including anything
    axpy = cp.RawKernel(r'''
    #include <cupy/complex.cuh>
    extern "C" __global__ void axpy(const complex<float>* x, const complex<float>* y, complex<float>* out, float a) {
        int i = blockDim.x * blockIdx.x + threadIdx.x;
        out[i] = a * x[i] + y[i] + 0.5 * conj(x[i]);      // float and double scalars with complex<float>
    }''', "axpy", options=("-std=c++11",))             # CuPy's header allows C++11; cudalab's needs 17
    x = cp.asarray((np.arange(8) + 1j * np.arange(8)[::-1]).astype(np.complex64))
    y = cp.asarray(np.full(8, 1j, np.complex64))
    out = cp.zeros(8, dtype=cp.complex64)
    axpy((1,), (8,), (x, y, out, cp.float32(2.0)))
    xs = x.get()
    np.testing.assert_allclose(out.get(), 2 * xs + 1j + 0.5 * np.conj(xs), rtol=1e-6)
    turn = cp.RawKernel(r'''
    #include <cupy/complex.cuh>
    extern "C" __global__ void turn(complex<double>* z, complex<double> by) { z[threadIdx.x] *= by; }''', "turn")
    z = cp.asarray(np.array([1, 2j]))
    turn((1,), (2,), (z, 1j))                           # a Python complex, as CuPy passes it
    assert z.get().tolist() == [1j, -2]

    rotate = cp.ElementwiseKernel("T z, float64 angle", "T w", "w = z * turn(angle)", "rotate",
                                  preamble="__device__ complex<double> turn(double a) { return exp(complex<double>(0, a)); }")
    w = rotate(cp.asarray(np.array([1 + 0j, 1j])), np.pi / 2)
    np.testing.assert_allclose(w.get(), [1j, -1], atol=1e-15)
    total = cp.ReductionKernel("T z", "T s", "z", "a + b", "s = a", "0", "complex_sum")
    assert complex(total(x).get()) == complex(xs.sum())


def test_a_raw_kernel_answers_cupys_attribute_names_and_memory_pointers_wrap_addresses(cp):
    tiled = cp.RawModule(code=r'''
    extern "C" __global__ void tiled(const float* x, float* y) {
        __shared__ float tile[64];
        tile[threadIdx.x] = x[threadIdx.x];
        y[threadIdx.x] = tile[63 - threadIdx.x];
    }''')
    tiled.compile()                                  # CuPy compiles here; cudalab already has
    k = tiled.get_function("tiled")
    assert k.shared_size_bytes == 256 and k.attributes["shared_size_bytes"] == 256
    assert k.max_threads_per_block == 1024 and k.attributes["preferred_shared_memory_carveout"] == -1
    k.max_dynamic_shared_size_bytes = 50000          # opting in, as cudaFuncSetAttribute
    assert k.max_dynamic_shared_size_bytes == 50000
    with pytest.raises(Exception, match="at most"):
        k.max_dynamic_shared_size_bytes = 10 ** 7

    x = cp.arange(64, dtype=cp.float32)
    assert x.data.mem.size == x.nbytes and int(x.data) == x.data.ptr
    # a view through CuPy's memory classes: the second half of x, by address
    half = cp.ndarray((32,), cp.float32, memptr=cp.cuda.MemoryPointer(
        cp.cuda.UnownedMemory(x.data.ptr, x.nbytes, owner=x), offset=32 * 4))
    assert half.get().tolist() == list(range(32, 64))
    version, handle = cp.cuda.Stream().__cuda_stream__()
    assert version == 0 and handle != 0


def test_the_gpu_timeit_magic_times_a_statement_with_benchmark(cp, capsys):
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    assert shell.run_cell("%load_ext cupyx.profiler").success
    shell.user_ns["cp"] = cp
    assert shell.run_cell("%gpu_timeit -n 4 -w 1 cp.arange(1000).sum()").success
    assert shell.run_cell("%%gpu_timeit -n 2 -w 0\nx = cp.ones((64, 64))\ny = x @ x.T\n").success
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("run")]
    assert len(lines) == 2 and all("GPU-0:" in line for line in lines)


def test_a_cupyx_jit_kernel_calls_cupys_math_functions(cp):
    from cupyx import jit

    @jit.rawkernel()
    def polar(x, y, radius, angle, n):
        i = jit.blockIdx.x * jit.blockDim.x + jit.threadIdx.x
        if i < n:
            radius[i] = cp.sqrt(x[i] * x[i] + y[i] * y[i])
            angle[i] = cp.arctan2(y[i], x[i]) * cp.float32(180 / cp.pi)

    x, y = cp.asarray(np.array([3, 0, -1], np.float32)), cp.asarray(np.array([4, 2, 0], np.float32))
    radius, angle = cp.zeros(3, dtype=cp.float32), cp.zeros(3, dtype=cp.float32)
    polar((1,), (32,), (x, y, radius, angle, cp.int32(3)))
    np.testing.assert_allclose(radius.get(), [5, 2, 1])
    np.testing.assert_allclose(angle.get(), [53.130102, 90, 180], rtol=1e-6)


def test_pinned_constructors_profiler_and_config_answer(cp, capsys):
    import cupyx
    from cudalab.runtime import streams
    staged = cupyx.zeros_pinned((4, 3), dtype=np.float32)
    assert staged.shape == (4, 3) and not staged.any() and streams.is_pinned(staged)
    like = cupyx.empty_like_pinned(np.asfortranarray(np.ones((2, 5))))
    assert like.flags.f_contiguous and streams.is_pinned(like)
    x = cp.arange(12, dtype=cp.float32).reshape(4, 3)
    x.get(out=staged)
    assert staged[3, 2] == 11
    assert cp.cuda.is_available()
    cp.cuda.profiler.start()            # cudaProfilerStart/Stop: nothing to switch on in cudalab
    cp.cuda.profiler.stop()
    cp.show_config()
    assert "CuPy Version" in capsys.readouterr().out


def test_cupys_temporaries_reuse_device_memory_instead_of_growing_the_arena(cp):
    # every CuPy operation makes a result array; in a loop they come and go, and CuPy's pool hands
    # the same blocks out again. The emulator keeps a program's freed cudaMalloc memory aside (for
    # memcheck), which made a k-means loop over 16 MB arrays grow the arena to the device's 4 GiB
    from cudalab.runtime import device
    x = cp.ones(1 << 21)                                       # 16 MiB of float64
    memory = device.current().memory
    start = memory.top
    for _ in range(40):
        y = x * 2 + 1                                          # two 16 MiB results a turn
        doubled = cp.ElementwiseKernel("float64 a", "float64 b", "b = a * 2", "twice")(y)
    assert float(doubled[0].get()) == 6.0
    assert memory.top - start < 200 << 20                      # not 40 x 48 MiB


def test_a_generator_over_a_bit_generator_as_cupys_newer_random_api(cp):
    # cp.random.Generator(cp.random.XORWOW(seed)): the same distributions, reproducible for a seed
    # (numpy's PCG64 underneath, not cuRAND's numbers)
    draws = cp.random.Generator(cp.random.XORWOW(1234)).random(1000, dtype=cp.float32)
    assert isinstance(draws, cp.ndarray) and draws.dtype == cp.float32 and draws.shape == (1000,)
    values = draws.get()
    assert 0.0 <= values.min() and values.max() < 1.0 and 0.4 < values.mean() < 0.6
    again = cp.random.Generator(cp.random.XORWOW(1234)).random(1000, dtype=cp.float32).get()
    assert (again == values).all()
    assert cp.random.Generator(cp.random.Philox4x3210(7)).integers(0, 3, 50).get().max() <= 2
    assert cp.random.Generator(1234).random(3).shape == (3,)      # a seed, as CuPy 14.2.0 took it


def test_pinned_memory_pointer_allocators_and_memoize_as_cupy_has_them(cp):
    mem = cp.cuda.alloc_pinned_memory(64)
    assert mem.size() == 64 and mem.size == 64 and mem.ptr != 0       # CuPy's size() method, numpy's size
    host = np.frombuffer(mem, np.float32, 16)
    host[:] = np.arange(16)
    assert cp.asarray(host).get()[15] == 15.0
    assert cp.cuda.get_device_id() == 0
    with cp.cuda.using_allocator(cp.cuda.MemoryPool().malloc):
        assert cp.ones(2).sum() == 2
    assert cp.cuda.MemoryAsyncPool().used_bytes() >= 0
    calls = []

    @cp.memoize(for_each_device=True)
    def table(n):
        calls.append(n)
        return n * n
    assert table(3) + table(3) == 18 and calls == [3]
    cp.clear_memo()
    table(3)
    assert calls == [3, 3]


# pycourses round 18
def test_ogrid_and_mgrid_make_device_arrays_a_device_mask_can_index(cp):
    # a fractal lesson's grid of complex points, then masks from its iterations
    x, y = cp.ogrid[-1.5j:1.5j:3j, -2:2:5j]
    c = x + y
    assert isinstance(x, cp.ndarray) and isinstance(c, cp.ndarray) and type(cp.ogrid[0:2, 0:3]) is list
    assert c.shape == (3, 5) and c.dtype == np.complex128 and cp.get_array_module(c) is cp
    iterations = cp.zeros(c.shape, dtype=cp.int32)
    inside = cp.abs(c) < 2
    iterations[inside] = 7
    assert iterations.get().tolist() == [[0, 7, 7, 7, 0]] * 3        # |-1 - 1.5j| = 1.8, |-2| = 2
    rows, columns = cp.mgrid[0:2, 0:3]
    assert isinstance(rows, cp.ndarray) and columns.get().tolist() == [[0, 1, 2], [0, 1, 2]]
    assert cp.r_[cp.arange(2), 5].get().tolist() == [0, 1, 5]


def test_an_elementwise_kernel_given_no_cupy_array_says_its_loop_size_is_undecided(cp):
    double = cp.ElementwiseKernel("float64 x", "float64 y", "y = 2 * x", "double_it")
    with pytest.raises(ValueError, match="Loop size is undecided"):
        double(np.float64(3.0))
    assert double(np.float64(3.0), size=2).get().tolist() == [6.0, 6.0]


def test_cupys_generated_kernels_know_m_pi_and_refuse_numpy_arrays(cp):
    # CuPy 14.2 on an H200: carray.cuh defines M_PI for Elementwise and Reduction kernels, not RawKernels
    times_pi = cp.ElementwiseKernel("float64 x", "float64 y", "y = x * M_PI", "times_pi")
    assert times_pi(cp.ones(2)).get().tolist() == [np.pi, np.pi]
    total = cp.ReductionKernel("T x", "T y", "x * M_PI", "a + b", "y = a", "0", "sum_pi")
    assert abs(float(total(cp.ones(3))) - 3 * np.pi) < 1e-12
    with pytest.raises(TypeError, match=r"Unsupported type <class 'numpy.ndarray'>.*cp.asarray"):
        times_pi(np.ones(2))


def test_using_a_device_the_machine_lacks_is_cupys_invalid_device_error(cp):
    # a lesson written for a four-GPU node asks for device 3; the emulator is one GPU
    with cp.cuda.Device(0):
        assert cp.arange(3).sum() == 3
    with pytest.raises(cp.cuda.runtime.CUDARuntimeError, match="cudaErrorInvalidDevice: invalid device ordinal"):
        with cp.cuda.Device(3):
            pass


def test_a_planned_fft_from_cupyx_scipy_fft(cp):
    # a lesson makes cuFFT's plan once and runs its transforms inside it
    import cupyx.scipy.fft
    from cupyx.scipy import fft as scipy_fft
    assert scipy_fft is cupyx.scipy.fft
    rows = cp.arange(8, dtype=cp.complex64).reshape(2, 4)
    plan = cupyx.scipy.fft.get_fft_plan(rows, axes=(1,))
    with plan:
        spectrum = cupyx.scipy.fft.fftn(rows, axes=(1,), overwrite_x=False)
    assert isinstance(spectrum, cp.ndarray) and spectrum.dtype == cp.complex64
    assert np.allclose(spectrum.get(), np.fft.fft(np.arange(8).reshape(2, 4), axis=1))
    assert np.allclose(cupyx.scipy.fft.ifft(spectrum).get(), rows.get(), atol=1e-6)
    with pytest.raises(AttributeError, match="cupyx.scipy.fft only"):
        cupyx.scipy.ndimage
