"""DLPack between CuPy and other libraries, as lessons hand a CuPy array to PyTorch or JAX and back:
``toDlpack``/``fromDlpack``, ``__dlpack__``/``from_dlpack``. The capsule views the same device memory
(no copy), is read once, and numpy refuses it as it refuses a GPU's; CuPy refuses a numpy array's,
as CuPy 14.2.0 did on an H200. Also CuPy's ``Stream.launch_host_func``."""
import gc
import weakref

import numpy as np
import pytest


def test_a_capsule_is_a_view_of_the_same_device_memory(cp):
    a = cp.arange(6, dtype=cp.float32).reshape(2, 3)
    capsule = a.toDlpack()
    assert type(capsule).__name__ == "PyCapsule" and '"dltensor"' in repr(capsule)
    b = cp.fromDlpack(capsule)
    assert b.shape == (2, 3) and b.dtype == cp.float32
    b[1, 2] = 50                     # written through the view, read in the original
    assert a.get().tolist() == [[0, 1, 2], [3, 4, 50]]
    with pytest.raises(ValueError, match="cannot be consumed multiple times"):
        cp.fromDlpack(capsule)          # CuPy 14.2.0's ValueError (an H200), for a non-capsule too
    with pytest.raises(ValueError, match="not a DLPack capsule"):
        cp.fromDlpack(np.ones(3))


def test_from_dlpack_takes_strided_views_and_scalars(cp):
    a = cp.arange(12, dtype=cp.int64).reshape(3, 4)
    columns = cp.from_dlpack(a[:, 1::2])
    assert columns.get().tolist() == [[1, 3], [5, 7], [9, 11]]
    assert columns.strides == (32, 16)
    assert a.__dlpack_device__() == (2, 0)           # kDLCUDA, device 0
    assert float(cp.from_dlpack(cp.asarray(np.float64(2.5)))) == 2.5


def test_numpy_and_cupy_refuse_each_others_capsules_as_on_a_gpu(cp):
    # what CuPy 14.2.0 and numpy answered on an H200: a host array is not imported, a device one not exported
    with pytest.raises(TypeError, match=r"CPU arrays cannot be directly imported to CuPy. Use `cupy.array\(numpy"):
        cp.from_dlpack(np.arange(6, dtype=np.int16))
    with pytest.raises((BufferError, RuntimeError), match="Unsupported device"):
        np.from_dlpack(cp.ones(3))           # (numpy 2.5's BufferError; older numpy's RuntimeError)


def test_an_exported_array_lives_as_long_as_its_capsule_or_views(cp):
    unused, viewed = cp.ones(4), cp.zeros(4)
    refs = weakref.ref(unused), weakref.ref(viewed)
    capsule = unused.toDlpack()
    view = cp.fromDlpack(viewed.toDlpack())
    del unused, viewed
    gc.collect()
    assert all(r() is not None for r in refs)        # the capsule and the view keep them
    del capsule, view
    gc.collect()
    cp.ones(1).toDlpack()            # the next DLPack call lets them go
    gc.collect()
    assert all(r() is None for r in refs)


def test_launch_host_func_runs_in_stream_order(cp):
    stream = cp.cuda.Stream()
    seen = []
    add_one = cp.RawKernel(r'extern "C" __global__ void add_one(float *a) { a[threadIdx.x] += 1.0f; }', "add_one")
    a = cp.zeros(8, cp.float32)
    with stream:
        add_one((1,), (8,), (a,))
        stream.launch_host_func(lambda arg: seen.append(("host func", arg)), "after the kernel")
        stream.add_callback(lambda s, status, arg: seen.append(("callback", status, arg)), 3)
    stream.synchronize()
    assert seen == [("host func", "after the kernel"), ("callback", 0, 3)]
    assert a.get().tolist() == [1.0] * 8


def test_a_host_func_may_not_use_cuda(cp):
    stream = cp.cuda.Stream()
    with pytest.raises(Exception, match="cudaErrorNotPermitted"):
        stream.launch_host_func(lambda arg: cp.zeros(2), None)
