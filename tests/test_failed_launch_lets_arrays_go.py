"""A notebook keeps the last error and goes on; a later cell that deletes the arrays a failed CuPy or
PyCUDA launch was given must get their memory back, as after a launch that worked (real CuPy and PyCUDA
launch from compiled code, whose frames keep nothing)."""
import gc
import weakref

import numpy as np
import pytest

import cudalab.numba
from cudalab.errors import KernelError

FAR_PAST_THE_END = "a[threadIdx.x * 100000000] = 1;"


@pytest.fixture
def stand_ins():
    cudalab.numba.install()
    yield
    cudalab.numba.uninstall()


def _gone_after_del(make, launch):
    """``launch(cell)`` reads the array from ``cell`` as a notebook cell reads its globals."""
    cell = {"a": make()}
    alive = weakref.ref(cell["a"])
    with pytest.raises(KernelError) as caught:
        launch(cell)
    kept = caught.value                 # what IPython keeps as the last error
    del cell["a"]                       # the next cell's `del a`
    gc.collect()
    return alive() is None and kept is not None


def test_a_cupy_raw_kernel_that_failed_lets_its_array_go(stand_ins):
    import cupy as cp
    kernel = cp.RawKernel('extern "C" __global__ void scatter(float* a) { %s }' % FAR_PAST_THE_END, "scatter")
    assert _gone_after_del(lambda: cp.zeros(1 << 20, cp.float32), lambda cell: kernel((1,), (32,), (cell["a"],)))


def test_a_pycuda_function_that_failed_lets_its_array_go(stand_ins):
    import pycuda.autoinit  # noqa: F401
    import pycuda.gpuarray as gpuarray
    from pycuda.compiler import SourceModule
    scatter = SourceModule("__global__ void scatter(float* a) { %s }" % FAR_PAST_THE_END).get_function("scatter")
    assert _gone_after_del(lambda: gpuarray.zeros(1 << 20, np.float32), lambda cell: scatter(cell["a"], block=(32, 1, 1)))


def test_the_kept_error_still_names_the_launch_line(stand_ins):
    import traceback
    import cupy as cp
    kernel = cp.RawKernel('extern "C" __global__ void scatter(float* a) { %s }' % FAR_PAST_THE_END, "scatter")
    with pytest.raises(KernelError) as caught:
        kernel((1,), (32,), (cp.zeros(8, cp.float32),))
    lines = [f.line for f in traceback.extract_tb(caught.value.__traceback__)]
    assert any("kernel((1,), (32,)" in (line or "") for line in lines)
    assert "scatter" in str(caught.value)
