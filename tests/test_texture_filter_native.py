"""The linear filter's native code (texture_native.filter_function) against texture.weighted_sum, the rule
measured on an H100, lookup by lookup: the quick float64 path (every texel finite, a sum that is not zero:
sixty round 19) and the general integer code behind it must both give the reference's bits."""
import ctypes

import numpy as np
import pytest
from llvmlite import ir

from cudalab.emulator import texture, texture_native
from cudalab.emulator.compiled import _jit


@pytest.fixture(scope="module")
def native_filter():
    """filter(v0..v3, w0..w3) -> bits, built alone and called through ctypes."""
    module = ir.Module(name="filter_test")
    texture_native.filter_function(module, 4)
    jit = _jit()
    llvm = jit["llvm"]
    mod = llvm.parse_assembly(str(module))
    mod.verify()
    engine = llvm.create_mcjit_compiler(mod, jit["machine"]())
    engine.finalize_object()
    address = engine.get_function_address("cudalab_tex_filter4")
    call = ctypes.CFUNCTYPE(ctypes.c_uint32, *[ctypes.c_uint32] * 4, *[ctypes.c_int64] * 4)(address)
    yield lambda v, w: call(*(int(x) for x in v), *(int(x) for x in w))
    del engine


def weights(rng, n):
    """Bilinear weights as the unit makes them (texture.tap_weights from two 8-bit fractions)."""
    return texture.tap_weights([rng.integers(0, 257, n), rng.integers(0, 257, n)])


def check(native_filter, values, w):
    want = texture.weighted_sum(values, w, texture.FRACTION_BITS).view(np.uint32)
    got = np.array([native_filter(v, ww) for v, ww in zip(values.view(np.uint32), w)], np.uint32)
    bad = np.flatnonzero(got != want)
    assert not len(bad), [(values[k].tolist(), w[k].tolist(), hex(got[k]), hex(want[k])) for k in bad[:3]]


def test_pixels_of_an_image_filter_alike(native_filter):
    """Neighbouring values of an image (0 to 255, and 0 to 1), the usual quick case."""
    rng = np.random.default_rng(191)
    n = 20000
    base = rng.uniform(0, 255, (n, 1))
    values = (base + rng.normal(0, 8, (n, 4))).astype(np.float32)
    check(native_filter, values, weights(rng, n))
    check(native_filter, (values / 255).astype(np.float32), weights(rng, n))


def test_texels_far_apart_are_cut_to_28_bits_below_the_largest(native_filter):
    """Exponents up to 60 apart and either sign: the smaller texels lose their low bits, toward zero."""
    rng = np.random.default_rng(192)
    n = 20000
    values = (rng.choice([-1, 1], (n, 4)) * rng.uniform(1, 2, (n, 4)) * 2.0 ** rng.integers(-30, 30, (n, 4)))
    check(native_filter, values.astype(np.float32), weights(rng, n))


def test_ties_round_away_from_zero(native_filter):
    """Sums exactly halfway between two floats: 2^24 + 1 halves (weights of 128 on odd texels near 2^24)."""
    rng = np.random.default_rng(193)
    n = 4000
    odd = (2.0 ** 24 + 2 * rng.integers(0, 1000, (n, 4)) + 1) * rng.choice([-1, 1], (n, 1))
    w = np.tile([[128, 128, 0, 0]], (n, 1))
    check(native_filter, odd.astype(np.float32) / np.float32(2.0 ** 20), w)
    check(native_filter, (odd / 2.0 ** 3).astype(np.float32), weights(rng, n))


def test_edges_take_the_general_code_with_the_same_bits(native_filter):
    """Zeros of either sign, sums that cancel, subnormals, the smallest normals, huge values that
    overflow, infinities and NaN, weights of zero on any of them."""
    rng = np.random.default_rng(194)
    pool = np.array([0.0, -0.0, 1e-45, -3e-39, 2.0 ** -126, -(2.0 ** -126), 1.5 * 2.0 ** -126, 3.4e38, -3.4e38,
                     np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0 ** -100, 255.0], np.float32)
    n = 20000
    values = pool[rng.integers(0, len(pool), (n, 4))]
    w = weights(rng, n)
    w[rng.random((n, 4)) < 0.2] = 0
    check(native_filter, values, w)
