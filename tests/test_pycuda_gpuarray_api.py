"""GPUArray, cumath and the tools as PyCUDA 2025.1 defines them, where the stand-in had numpy's
meaning or no answer. PyCUDA's own test suite (test_gpuarray, test_cumath, test_driver) was run
against the stand-in to find these; each case here is one of its lessons, in our words."""
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


def test_a_fortran_ordered_array_is_copied_and_made_alike_in_its_own_layout(pycuda):
    from pycuda import gpuarray
    a = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    d = gpuarray.to_gpu(a)
    twin = d.copy()                      # the bytes copied as they lie: the copy must read them as F too
    assert twin.strides == a.strides and np.array_equal(twin.get(), a)
    assert gpuarray.zeros_like(d).flags.f_contiguous and gpuarray.empty_like(d, order="C").flags.c_contiguous
    assert gpuarray.empty(np.array([2, 3]), np.float32).shape == (2, 3)     # a shape given as numpy values


def test_reshape_is_a_view_of_the_same_bytes_in_the_order_asked(pycuda):
    from pycuda import gpuarray
    d = gpuarray.to_gpu(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert d.reshape(3, -1).shape == (3, 2)
    by_columns = d.reshape((2, 3), order="F")          # PyCUDA relabels the bytes, it does not move them
    assert by_columns.flags.f_contiguous and by_columns.get().tolist() == [[0, 2, 4], [1, 3, 5]]
    with pytest.raises(ValueError, match="one unknown dimension"):
        d.reshape(-1, -1)
    with pytest.raises(RuntimeError, match="only contiguous arrays"):
        d[:, :2].reshape(4)
    assert d.view().dtype == np.float32 and d.view(np.int16).shape == (2, 6)
    assert d.transpose(axes=(1, 0)).shape == (3, 2)


def test_an_elementwise_kernel_over_a_slice_with_a_step(pycuda):
    from pycuda import gpuarray
    from pycuda.elementwise import ElementwiseKernel
    mark = ElementwiseKernel("float *z", "z[i] = 7", "mark")
    for part in (slice(2, 20, 3), slice(15, 3, -4), slice(5, -1)):
        d = gpuarray.zeros(20, np.float32)
        mark(d, slice=part)
        expected = np.zeros(20, np.float32)
        expected[part] = 7
        assert d.get().tolist() == expected.tolist(), part


def test_cumath_takes_its_output_second_and_ldexp_a_float_exponent(pycuda):
    from pycuda import cumath, gpuarray
    d = gpuarray.to_gpu(np.array([0.0, 1.0], np.float32))
    out = gpuarray.empty_like(d)
    assert cumath.exp(d, out) is out and np.allclose(out.get(), np.exp([0.0, 1.0]))
    scaled = cumath.ldexp(gpuarray.to_gpu(np.array([3.0], np.float32)), gpuarray.to_gpu(np.array([2.9], np.float32)))
    assert scaled.get().tolist() == [12.0]           # C's ldexp(3, (int)2.9)
    ones = gpuarray.to_gpu(np.ones(3))
    result = gpuarray.empty_like(ones)
    assert ones.mul_add(2, ones, 3, out=result) is result and result.get().tolist() == [5.0] * 3


def test_reductions_use_the_programs_allocator_and_strides_are_given(pycuda):
    import pycuda.tools
    from pycuda import gpuarray
    pool, uses = pycuda.tools.DeviceMemoryPool(), []

    def allocator(nbytes):
        uses.append(nbytes)
        return pool.allocate(nbytes)
    d = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
    assert gpuarray.sum(d, allocator=allocator).get() == 6.0 and uses == [4]
    assert d.__cuda_array_interface__["strides"] == (4,)     # PyCUDA writes them even for C order


def test_pycudas_test_helpers_and_pointer_holders():
    cudalab.numba.install()
    try:
        import pycuda.driver as drv
        from pycuda import gpuarray
        from pycuda.tools import init_cuda_context_fixture, mark_cuda_test
        while drv.Context.get_current() is not None:
            drv.Context.pop()

        @mark_cuda_test
        def uses_the_device():
            return gpuarray.to_gpu(np.ones(2)).get().tolist()
        assert uses_the_device() == [1.0, 1.0]
        assert drv.Context.get_current() is None          # the decorator's context is gone after the call

        fixture = init_cuda_context_fixture()
        next(fixture)
        allocation = drv.mem_alloc(8)

        class Holder(drv.PointerHolderBase):
            def get_pointer(self):
                return int(allocation)
        drv.memcpy_htod(Holder(), np.array([2.5], np.float64))
        assert gpuarray.GPUArray((1,), np.float64, gpudata=Holder()).get().tolist() == [2.5]
        fixture.close()
        assert drv.Context.get_current() is None
    finally:
        cudalab.numba.uninstall()
