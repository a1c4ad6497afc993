"""PyCUDA's reductions and generated kernels as PyCUDA defines them, not as numpy's functions of the
same names: a book computes the 'dot product' of two 10x10 matrices with ``gpuarray.dot`` and checks
it against ``numpy.sum(a * b)``; PyCUDA's answer is that sum, where numpy's ``dot`` is a matrix
product. An ElementwiseKernel can be made before any context exists, as PyCUDA compiles it only when
it is first called."""
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


def test_dot_of_two_matrices_is_the_sum_of_their_elementwise_products(pycuda):
    from pycuda import gpuarray
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = np.full((3, 4), 2, dtype=np.float32)
    product = gpuarray.dot(gpuarray.to_gpu(a), gpuarray.to_gpu(b))
    assert product.shape == () and product.dtype == np.float32
    assert product.get() == np.sum(a * b) == 132.0            # the book's check: equal, not an array
    mixed = gpuarray.dot(gpuarray.to_gpu(np.arange(3, dtype=np.int32)), gpuarray.to_gpu(np.ones(3)))
    assert mixed.dtype == np.float64 and mixed.get() == 3.0  # the arrays' common type
    with pytest.raises(ValueError, match="12 and 3 elements"):
        gpuarray.dot(gpuarray.to_gpu(a), gpuarray.to_gpu(np.ones(3, np.float32)))


def test_sum_takes_its_type_second_and_keeps_the_elements_type_by_default(pycuda):
    from pycuda import gpuarray
    counts = gpuarray.to_gpu(np.arange(1, 5, dtype=np.int32).reshape(2, 2))
    total = gpuarray.sum(counts)
    assert total.dtype == np.int32 and total.get() == 10    # numpy's sum would widen to int64
    assert gpuarray.sum(counts, np.float64).dtype == np.float64    # PyCUDA's second parameter
    assert gpuarray.max(counts).get() == 4 and gpuarray.min(counts).get() == 1
    picks = gpuarray.to_gpu(np.array([0, 3], dtype=np.int32))       # indices into the flat array
    assert gpuarray.subset_sum(picks, counts).get() == 5
    assert gpuarray.subset_dot(picks, counts, counts).get() == 17


def test_an_elementwise_kernel_is_compiled_at_its_first_call():
    cudalab.numba.install()
    try:
        import pycuda.driver as drv
        from pycuda import gpuarray
        from pycuda.elementwise import ElementwiseKernel
        while drv.Context.get_current() is not None:        # earlier tests imported pycuda.autoinit
            drv.Context.pop()
        add = ElementwiseKernel("float *a, float *b, float *c", "c[i] = a[i] + b[i]", "add")  # no context yet
        context = drv.Device(0).make_context()
        a = gpuarray.to_gpu(np.arange(4, dtype=np.float32))
        c = gpuarray.empty_like(a)
        add(a, a, c)
        assert c.get().tolist() == [0.0, 2.0, 4.0, 6.0]
        context.pop()
        with pytest.raises(drv.LogicError, match="no currently active context"):
            ElementwiseKernel("float *a", "a[i] = 0", "clear")(a)   # its first call, with no context
    finally:
        cudalab.numba.uninstall()
