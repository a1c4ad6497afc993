"""numba.cuda programs written for a GPU run unchanged after cudalab.numba.install(): what they do with
device arrays on the host (slices, element reads, views passed to kernels), numba's host API
(mapped memory, streams, events, the device), explicit signatures, foreign CUDA C++ functions and the
kernel attributes numba's documentation reads."""
import numpy as np
import pytest

import cudalab.numba


@pytest.fixture
def cuda():
    cudalab.numba.install()
    from numba import cuda
    yield cuda
    cudalab.numba.uninstall()


def test_slices_are_views_that_kernels_write_through(cuda):
    @cuda.jit
    def add_100(x):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            x[i, j] += 100

    d = cuda.to_device(np.arange(12.0).reshape(3, 4))
    add_100[(1, 1), (8, 8)](d[1:, ::2])           # rows 1-2, columns 0 and 2
    expected = np.arange(12.0).reshape(3, 4)
    expected[1:, ::2] += 100
    np.testing.assert_array_equal(d.copy_to_host(), expected)
    assert d[2, 2] == 110.0 and d[-1, -1] == 11.0
    np.testing.assert_array_equal(d[:, 1].copy_to_host(), [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(d.T.copy_to_host(), expected.T)
    assert list(d.reshape(12)[:3]) == [0.0, 1.0, 2.0]


def test_host_writes_into_a_slice_and_device_to_device_copies(cuda):
    d = cuda.to_device(np.zeros((2, 3), np.int32))
    d[0, :] = 7
    d[1, 1:] = np.array([8, 9])
    other = cuda.device_array(6, np.int32)
    other.copy_to_device(d.reshape(6))
    np.testing.assert_array_equal(other.copy_to_host(), [7, 7, 7, 0, 8, 9])
    with pytest.raises(IndexError, match="out of bounds"):
        d[2, 0]


def test_numbas_own_reduce_runs_on_slices_of_device_arrays(cuda):
    total = cuda.reduce(lambda a, b: a + b)
    assert total(np.arange(1000, dtype=np.float64)) == 499500.0
    assert total(cuda.to_device(np.arange(300, dtype=np.int64)), size=200) == 19900


def test_a_tuple_signature_and_a_raw_pointer_argument(cuda):
    from numba.cuda import int32, types

    @cuda.jit((int32[:, ::1],))
    def fill(m):
        i, j = cuda.grid(2)
        if i < m.shape[0] and j < m.shape[1]:
            m[i, j] = i * 10 + j

    m = np.zeros((3, 4), np.int32)
    fill[(1, 1), (4, 4)](m)
    np.testing.assert_array_equal(m, np.add.outer(np.arange(3) * 10, np.arange(4)))

    @cuda.jit(types.void(types.CPointer(types.uint8), types.uint32))
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1

    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    add_one[1, 32](x.__cuda_array_interface__["data"][0], len(x))
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(1, 11))


def test_a_kernel_reads_a_global_device_array_by_pointer(cuda):
    prices = cuda.to_device(np.array([10.0, 25.0], np.float32))

    @cuda.jit
    def totals(q, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = q[i] * prices[i]

    out = np.zeros(2, np.float32)
    prices.copy_to_device(np.array([20.0, 50.0], np.float32))      # the kernel sees what is there at launch
    totals[1, 32](np.ones(2, np.float32), out)
    np.testing.assert_array_equal(out, [20.0, 50.0])


def test_a_foreign_cuda_cpp_function_is_linked(cuda, tmp_path):
    cu = tmp_path / "mul.cu"
    cu.write_text('extern "C" __device__ int mul(float *ret, float x, float y) { *ret = x * y; return 0; }\n')
    mul = cuda.declare_device("mul", "float32(float32, float32)", link=str(cu))

    @cuda.jit
    def multiply(r, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = mul(x[i], y[i])

    x, y, r = np.arange(8, dtype=np.float32), np.full(8, 1.5, np.float32), np.zeros(8, np.float32)
    multiply[1, 32](r, x, y)
    np.testing.assert_array_equal(r, x * y)


def test_kernel_attributes_numbas_documentation_reads(cuda):
    from numba.cuda import float32

    @cuda.jit((float32[::1],))
    def scale(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    sig = (float32[::1],)
    assert scale.overloads[sig].max_cooperative_grid_blocks(32) == 32 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    regs = scale.get_regs_per_thread()
    assert list(regs) == [sig] and 0 < regs[sig] <= 255
    assert ".entry" in scale.inspect_asm(sig)


def test_mapped_memory_streams_events_and_argument_hints(cuda):
    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    a = cuda.mapped_array(64, np.float32)
    a[:] = 1
    s = cuda.stream()
    start, end = cuda.event(), cuda.event()
    with s.auto_synchronize():
        start.record(s)
        double[1, 64, s](a)
        double[1, 64, s](cuda.InOut(a))
        end.record(s)
    np.testing.assert_array_equal(a, 4)
    assert cuda.event_elapsed_time(start, end) > 0
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    assert cuda.detect() is True


def test_uninstall_gives_numba_its_functions_back():
    from numba import cuda
    own = cuda.to_device, cuda.mapped_array
    cudalab.numba.install()
    assert cuda.to_device is not own[0]
    cudalab.numba.uninstall()
    assert (cuda.to_device, cuda.mapped_array) == own


def test_cuda_ufuncs_from_vectorize_and_guvectorize(cuda):
    from numba import guvectorize, vectorize

    @vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    def hypot2(x, y):
        return x * x + y * y

    a = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(hypot2(a, a), 2 * a * a)
    d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(hypot2(d, 1.0).copy_to_host(), np.arange(6.0).reshape(2, 3) ** 2 + 1)

    @vectorize(["int64(int64, int64)"], target="cuda")
    def add(x, y):
        return x + y

    assert add.reduce(np.arange(101, dtype=np.int64)) == 5050        # numba halves the array on the device

    @guvectorize(["void(float32[:], float32, float32[:])"], "(n),()->(n)", target="cuda")
    def scale(x, s, out):
        for i in range(x.shape[0]):
            out[i] = x[i] * s

    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(scale(m, np.float32(2)), 2 * m)


def test_device_function_with_a_signature_compiles_without_a_gpu(cuda):
    @cuda.jit("float32(float32, float32)", device=True)
    def mul(x, y):
        return x * y

    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = mul(a[i], 2)

    a = np.arange(4, dtype=np.float32)
    double[1, 32](a)
    np.testing.assert_array_equal(a, [0, 2, 4, 6])


def test_inspect_types_and_llvm_show_numbas_typing(cuda):
    import io

    @cuda.jit
    def add_two(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 2.0

    add_two[1, 32](np.zeros(4, np.float32))
    shown = io.StringIO()
    add_two.inspect_types(file=shown)
    assert "a[i] += 2.0" in shown.getvalue() and ":: float64" in shown.getvalue()
    (llvm,) = add_two.inspect_llvm().values()
    assert 'target triple = "nvptx64-nvidia-cuda"' in llvm
