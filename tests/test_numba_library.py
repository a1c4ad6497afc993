"""Pieces of numba.cuda's library that programs lean on, after cudalab.numba.install(): kernels and
CUDA ufuncs that pickle (for multiprocessing, dask, a cache of one's own), configured launches as
numba has them (``kernel[grid, block]`` with its ``griddim``, ``blockdim`` and pre-launch callbacks),
and numba's ready-made transpose kernel."""
import pickle
import warnings

import numpy as np
import pytest

import cudalab.numba


@pytest.fixture
def cuda():
    cudalab.numba.install()
    from numba import cuda
    yield cuda
    cudalab.numba.uninstall()


def make_kernels(cuda):
    """Defined inside a function, as in a notebook's helper: pickle must carry them by value."""
    @cuda.jit(device=True)
    def plus_one(a):
        return a + 1

    @cuda.jit("void(intp[:])")
    def bump_first(arr):
        arr[0] = plus_one(arr[0])

    @cuda.jit
    def bump_all(arr):
        i = cuda.grid(1)
        if i < arr.size:
            arr[i] = plus_one(arr[i])
    return bump_first, bump_all


def test_a_kernel_pickles_by_value_and_the_copy_compiles_again(cuda):
    bump_first, bump_all = make_kernels(cuda)
    copy = pickle.loads(pickle.dumps(pickle.loads(pickle.dumps(bump_first))))   # twice, as numba's test does
    assert copy.specialized and copy.name == "bump_first"
    d = cuda.to_device(np.array([100]))
    bump_first[1, 1](d)
    copy[1, 1](d)
    assert d.copy_to_host()[0] == 102
    lazy = pickle.loads(pickle.dumps(bump_all))
    d = cuda.to_device(np.arange(5))
    lazy[1, 32](d)
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(1, 6))


def test_a_configured_launch_has_numbas_shape_callbacks_and_pickles(cuda):
    _, bump_all = make_kernels(cuda)
    launch = bump_all[5, (8, 2)]
    assert (launch.griddim, launch.blockdim, launch.sharedmem) == ((5, 1, 1), (8, 2, 1), 0)
    again = pickle.loads(pickle.dumps(launch))
    assert (again.griddim, again.blockdim) == ((5, 1, 1), (8, 2, 1))
    seen = []
    launch.pre_launch_callbacks.append(lambda kernel, config: seen.append((kernel.name, config.griddim)))
    d = cuda.to_device(np.zeros(4, np.int64))
    launch(d)
    assert seen == [("bump_all", (5, 1, 1))]
    np.testing.assert_array_equal(d.copy_to_host(), 1)
    with pytest.raises(pickle.PicklingError, match="Cannot pickle configured launches with pre-launch callbacks"):
        pickle.dumps(launch)


def test_a_cuda_ufunc_pickles_and_compiles_without_numbas_line_info_warning(cuda):
    from numba import vectorize
    from numba.cuda.core.errors import NumbaDebugInfoWarning
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")

        @vectorize(["int64(int64)", "float64(float64)"], target="cuda")
        def twice(x):
            return x * 2
        # numba builds the generated kernel without line info; cudalab's own line info must not
        # make numba say that the generated function has no source
        np.testing.assert_array_equal(twice(np.arange(5)), [0, 2, 4, 6, 8])
    assert not [w for w in seen if issubclass(w.category, NumbaDebugInfoWarning)]
    copy = pickle.loads(pickle.dumps(twice))
    np.testing.assert_array_equal(copy(np.array([1.5, -2.0])), [3.0, -4.0])


def test_the_host_array_warning_names_the_launch_line(cuda):
    from numba.cuda.core.errors import NumbaPerformanceWarning
    _, bump_all = make_kernels(cuda)
    with pytest.warns(NumbaPerformanceWarning) as seen:
        bump_all[1, 32](np.zeros(3, np.int64))
    assert {w.filename for w in seen} == {__file__}


def test_numbas_transpose_kernel_runs_on_the_emulator(cuda):
    from numba.cuda.kernels.transpose import transpose
    x = np.arange(1025 * 512, dtype=np.float64).reshape(512, 1025)     # not a multiple of the 32x32 tile
    dy = cuda.device_array((1025, 512))
    assert transpose(cuda.to_device(x), dy) is dy
    np.testing.assert_array_equal(dy.copy_to_host(), x.T)
    # without an output it makes one; records (with an array field) and bools move whole
    rec = np.dtype([("i", np.int32), ("j", np.float32, (3, 2))])
    r = np.zeros((3, 5), rec)
    r["i"] = np.arange(15).reshape(3, 5)
    r["j"] = np.arange(15 * 6, dtype=np.float32).reshape(3, 5, 3, 2)
    out = transpose(cuda.to_device(r)).copy_to_host()
    assert out.shape == (5, 3)
    np.testing.assert_array_equal(out["i"], r["i"].T)
    np.testing.assert_array_equal(out["j"], r["j"].transpose(1, 0, 2, 3))
    flags = np.random.default_rng(1).integers(0, 2, (17, 16)).astype(bool)
    np.testing.assert_array_equal(transpose(cuda.to_device(flags)).copy_to_host(), flags.T)
    with pytest.raises(ValueError, match="must have shape"):
        transpose(cuda.to_device(x), cuda.device_array((512, 1025)))


def test_the_linked_ptx_of_a_half_precision_kernel_shows_the_f16_instruction(cuda):
    from numba.cuda.types import f2

    def add_halves(r, x, y):
        r[0] = x + y                 # numba's fp16 operator is a function linked into the kernel
    kernel = cuda.jit("void(f2[:], f2, f2)", lto=True)(add_halves)
    ptx = kernel.inspect_lto_ptx((f2[:], f2, f2))
    assert "add.f16" in ptx and ".entry" in ptx
    r = cuda.device_array(1, np.float16)
    kernel[1, 1](r, np.float16(1.5), np.float16(2.25))
    assert r.copy_to_host()[0] == np.float16(3.75)


def test_numbas_device_array_module_functions_make_cudalab_arrays(cuda):
    # numba's own code, its tests and older programs allocate through numba.cuda.cudadrv.devicearray
    from numba.cuda.cudadrv import devicearray
    out = devicearray.from_array_like(np.zeros((3, 4), order="F"))
    assert out.shape == (3, 4) and out.is_f_contiguous()
    rec = np.zeros(1, np.dtype([("x", np.float32), ("n", np.int32)]))[0]
    on_device = devicearray.from_record_like(rec)
    on_device["n"] = 7
    assert on_device["n"] == 7
    d, new = devicearray.auto_device(np.arange(4.0))
    assert new and d.copy_to_host().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert devicearray.auto_device(d) == (d, False)
    with pytest.raises(ValueError, match="non-contiguous buffer"):
        devicearray.auto_device(np.arange(10.0)[::2])
