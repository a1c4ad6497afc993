"""CuPy's own indexing rules where they differ from numpy's: an integer array's out-of-bounds index wraps
around (a GPU's gather checks nothing), while a plain integer out of range still raises as in numpy.
Lectures show the difference on purpose (index 6 of a six-element array reads element 0)."""
import numpy as np
import pytest

import cudalab.numba


@pytest.fixture
def cp():
    cudalab.numba.install()
    import cupy
    yield cupy
    cudalab.numba.uninstall()


def test_an_index_array_past_the_end_wraps_around(cp):
    a = cp.array([0.0, 1.1, 2.2, 3.3, 4.4, 5.5])
    picked = a[cp.array([2, 3, 5, 6, 7, 8])]
    assert isinstance(picked, cp.ndarray)
    assert picked.get().tolist() == [2.2, 3.3, 5.5, 0.0, 1.1, 2.2]
    assert a[[-1, -7]].get().tolist() == [5.5, 5.5]      # -7 wraps too, as CuPy's modulo does


def test_each_index_array_wraps_by_its_own_axis(cp):
    b = cp.arange(12).reshape(3, 4)
    assert b[[0, 4], [5, -1]].get().tolist() == [1, 7]           # rows modulo 3, columns modulo 4
    assert b[..., [4, 5]].get().tolist() == [[0, 1], [4, 5], [8, 9]]
    assert b[cp.array([True, False, True]), [4]].get().tolist() == [0, 8]   # the mask spans axis 0


def test_a_store_through_an_index_array_wraps_too(cp):
    x = cp.array([0, 1, 2])
    x[[1, 3]] = 10
    assert x.get().tolist() == [10, 10, 2]


def test_a_plain_integer_out_of_range_still_raises(cp):
    a = cp.arange(6)
    with pytest.raises(IndexError):
        a[6]
    with pytest.raises(IndexError):     # numpy's rule where the data lives on the host
        np.arange(6)[np.array([6])]


def test_take_wraps_like_indexing_on_either_axis(cp):
    a = cp.arange(4)
    assert cp.take(a, cp.array([5, -5])).get().tolist() == [1, 3]
    assert a.take([1, 6]).get().tolist() == [1, 2]                 # the method, with a list
    grid = cp.arange(6).reshape(2, 3)
    assert cp.take(grid, [3, 4], axis=1).get().tolist() == [[0, 1], [3, 4]]
    assert cp.take(grid, [7]).get().tolist() == [1]                 # no axis: the flattened array


def test_scatter_add_counts_every_repeated_index(cp):
    import cupyx
    counts = cp.zeros(3)
    cupyx.scatter_add(counts, cp.array([0, 0, 2]), 1.0)
    assert counts.get().tolist() == [2.0, 0.0, 1.0]               # `counts[idx] += 1` would give [1, 0, 1]
    grid = cp.zeros((2, 3))
    cupyx.scatter_add(grid, (slice(None), cp.array([1, 1])), 2.0)
    assert grid.get().tolist() == [[0, 4, 0], [0, 4, 0]]
    best = cp.zeros(3)
    cupyx.scatter_max(best, [0, 0, 1], cp.array([3.0, 5.0, -1.0]))
    cupyx.scatter_min(best, [2], cp.array([-2.0]))
    assert best.get().tolist() == [5.0, 0.0, -2.0]


def test_a_float_cast_to_a_wide_integer_saturates_as_on_the_gpu(cp):
    """The GPU's float-to-integer conversion clamps to the integer's range; numpy's wraps around (-1.5 to
    uint32 is 4294967295 there, 0 in CuPy on a GPU). A float64 NaN to uint32 is 2**31 (measured on an
    H200, pycourses round 17; round 16 had assumed 0)."""
    values = cp.array([-1.5, 2.7, 5e9, float("nan"), float("-inf")])
    assert values.astype(cp.uint32).get().tolist() == [0, 2, 4294967295, 2147483648, 0]
    assert cp.array([3e9, -3e9]).astype(np.int32).get().tolist() == [2147483647, -2147483648]
    assert cp.array([1e30]).astype(cp.int64).get().tolist() == [9223372036854775807]
    assert cp.arange(3).astype(cp.float32).dtype == np.float32      # other casts are numpy's


def test_put_writes_in_place_and_wraps(cp):
    x = cp.zeros(3)
    cp.put(x, [5, 0], cp.array([9.0, 1.0]))              # 5 of three is 2
    assert x.get().tolist() == [1.0, 0.0, 9.0]
    x.put([-1], 7)
    cp.put(x, [10], 4, mode="clip")
    assert x.get().tolist() == [1.0, 0.0, 4.0]
    assert cp.is_available()



def test_narrow_and_nan_float_casts_are_the_gpus(cp):
    # CuPy 14.2.0 on an H200: through a saturating 32-bit conversion, then cut to the width; NaN is the
    # conversion's sign bit from float64 to 32 bits and to 64 bits
    values = cp.array([300.0, -1.5, 1e10, -1e10, float("nan"), 255.5])
    assert values.astype(cp.int8).get().tolist() == [44, -1, -1, 0, 0, -1]
    assert values.astype(cp.uint8).get().tolist() == [44, 0, 255, 0, 0, 255]
    assert values.astype(cp.int16).get().tolist() == [300, -1, -1, 0, 0, 255]
    assert values.astype(cp.int32).get().tolist()[4] == -2147483648
    assert values.astype(cp.float32).astype(cp.int32).get().tolist()[4] == 0
    assert values.astype(cp.int64).get().tolist()[4] == -2**63
    assert values.astype(cp.uint64).get().tolist()[4] == 2**63


def test_astype_agrees_with_a_cast_in_an_elementwise_kernel(cp):
    # the stand-in's astype is numpy's with the GPU's rule; the kernel runs PTX's cvt on the emulator
    values = cp.array([-2.5e9, -129.5, -0.7, 0.0, 65535.9, 3e9, float("inf"), float("-inf"), float("nan")])
    for source in ("float32", "float64"):
        x = values.astype(source)
        for target in ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"):
            cast = cp.ElementwiseKernel(f"{source} x", f"{target} y", "y = x", f"cast_{source}_{target}")
            assert x.astype(target).get().tolist() == cast(x).get().tolist(), (source, target)
