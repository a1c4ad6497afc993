"""The parameter buffer a launch sends: numbers packed the way numpy would convert them to the
parameter's C++ type, byte for byte, whether they take the quick path (struct, kept per kernel)
or the careful one (out of range, NaN, huge values, numpy scalars)."""
import math

import numpy as np
import pytest

import cudalab
from cudalab.errors import LaunchError
from cudalab.runtime.launch import marshal

SOURCE = r"""
__global__ void numbers(float f, double d, int i, unsigned u, long long ll, unsigned long long ull,
                        short s, unsigned char c, float* out) {
    if (threadIdx.x == 0) out[0] = f + d + i + u + ll + ull + s + c;
}
"""
TYPES = (np.float32, np.float64, np.int32, np.uint32, np.int64, np.uint64, np.int16, np.uint8)


@pytest.fixture(scope="module")
def kernel():
    return cudalab.compile(SOURCE).get_kernel("numbers")


def packed(kernel, *args):
    return marshal(kernel.name, kernel.func.params, kernel.ctypes, (*args, None), lambda a: None)


def by_numpy(kernel, *values):
    """The same buffer built by hand: each value converted by numpy, at its parameter's offset."""
    buf = bytearray()
    for p, v, t in zip(kernel.func.params, values, TYPES):
        buf += bytes(-len(buf) % p.align) + np.array(v, t).tobytes()
    return bytes(buf + bytes(-len(buf) % 8) + bytes(8))


@pytest.mark.parametrize("values", [
    (1.5, 2.25, -3, 4, -5, 6, -7, 8),
    (0.1, 0.1, 2**31 - 1, 2**32 - 1, -2**63, 2**64 - 1, 32767, 255),
    (-0.0, -0.0, -2**31, 0, 2**63 - 1, 0, -32768, 0),
    (math.inf, -math.inf, 7, 7, 7, 7, 7, 7),
    (3.4e38, 1e300, 0, 0, 0, 0, 0, 0),
    (16777217, 2**53 + 1, 0, 0, 0, 0, 0, 0),          # ints into floats: rounded as numpy rounds them
    (np.float32(0.3), np.float64(0.3), np.int32(-9), np.uint32(9), np.int64(-9), np.uint64(9), np.int16(-9),
     np.uint8(9)),
])
def test_numbers_pack_as_numpy_converts_them(kernel, values):
    assert packed(kernel, *values) == by_numpy(kernel, *values)


def test_nan_keeps_its_bits(kernel):
    got = packed(kernel, math.nan, -math.nan, 0, 0, 0, 0, 0, 0)
    assert got[:4] == np.array(math.nan, np.float32).tobytes()
    assert got[8:16] == np.array(-math.nan, np.float64).tobytes()


def test_a_float_too_big_for_float_becomes_infinity_as_in_numpy(kernel):
    with np.errstate(over="ignore"):
        assert packed(kernel, 1e300, 0.0, 0, 0, 0, 0, 0, 0)[:4] == np.array(np.inf, np.float32).tobytes()
        assert packed(kernel, 2**200, 0.0, 0, 0, 0, 0, 0, 0)[:4] == np.array(np.inf, np.float32).tobytes()


def test_the_second_launch_packs_as_the_first(kernel):
    """The kernel's layout is kept after its first launch: the same bytes again, other values too."""
    first = packed(kernel, 1.0, 2.0, 3, 4, 5, 6, 7, 8)
    assert packed(kernel, 1.0, 2.0, 3, 4, 5, 6, 7, 8) == first
    assert packed(kernel, 8.0, 7.0, 6, 5, 4, 3, 2, 1) == by_numpy(kernel, 8.0, 7.0, 6, 5, 4, 3, 2, 1)


@pytest.mark.parametrize("k, value, words", [
    (2, 2**31, "argument 3 of numbers (int) is int: the value 2,147,483,648 does not fit"),
    (3, -1, "argument 4 of numbers (unsigned int) is unsigned int: the value -1 does not fit"),
    (7, 256, "argument 8 of numbers (unsigned char) is unsigned char: the value 256 does not fit"),
    (2, 1.5, "argument 3 of numbers (int) is an integer, but you passed 1.5"),
    (0, "x", "argument 1 of numbers (float) is a number, but you passed str 'x'"),
])
def test_a_value_that_does_not_fit_is_named_by_its_argument(kernel, k, value, words):
    args = [0.0, 0.0, 0, 0, 0, 0, 0, 0]
    args[k] = value
    with pytest.raises(LaunchError, match=words.replace("(", r"\(").replace(")", r"\)")):
        packed(kernel, *args)


def test_a_launch_with_numbers_computes_with_them(kernel):
    out = cudalab.to_device(np.zeros(1, np.float32))
    kernel[1, 32](0.5, 0.25, -1, 2, 3, 4, -5, 6, out)
    assert out.copy_to_host()[0] == np.float32(0.5 + 0.25 - 1 + 2 + 3 + 4 - 5 + 6)
