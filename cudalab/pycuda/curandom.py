"""pycuda.curandom on cudalab: random GPUArrays drawn from numpy's generator.

PyCUDA's ``rand`` runs an MD5 kernel and its generator classes run cuRAND's device API
(``curand_init`` for every generator, then ``curand_uniform``/``curand_normal`` loops). Here the
numbers come from numpy's PCG64 and are stored into the device array: the same distributions and the
same ranges as cuRAND's (``curand_uniform`` gives (0, 1], the integer forms raw 32-bit words, Poisson
counts as unsigned ints), the same classes, methods and type rules (a dtype PyCUDA has no kernel for is
its NotImplementedError), not cuRAND's sequence: a program that prints its random numbers sees other
values than on a GPU, as it would with another seed. The quasi-random (Sobol) generators draw from
the same pseudo-random source, so their numbers are not low-discrepancy. ``get_curand_version()`` is
the version of the cuRAND headers kernels compile against (the nvidia wheel's ``curand.h``).
"""
from __future__ import annotations

import functools
import os
import re

import numpy as np

from .gpuarray import GPUArray, to_gpu

_GENERATOR = np.random.default_rng()


@functools.lru_cache(maxsize=1)
def get_curand_version():
    """(major, minor, patch) of the cuRAND headers cudalab compiles with; None where there are none."""
    from ..frontend.nvrtc import include_dirs
    for folder in include_dirs():
        header = os.path.join(folder, "curand.h")
        if os.path.isfile(header):
            with open(header, encoding="utf-8", errors="replace") as f:
                text = f.read()
            parts = [re.search(rf"#define\s+CURAND_VER_{p}\s+(\d+)", text) for p in ("MAJOR", "MINOR", "PATCH")]
            if all(parts):
                return tuple(int(m.group(1)) for m in parts)
    return None


def _uniform(rng, shape, dtype, wide=False):
    """cuRAND's uniform numbers of ``dtype``: floats in (0, 1]; 32-bit integer types their raw bits
    (64-bit ones only from a 64-bit generator)."""
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.float64):
        return (1.0 - rng.random(shape, dtype=np.float64)).astype(dtype)
    if dtype in (np.int32, np.uint32) or (wide and dtype in (np.int64, np.uint64)):
        bits = 64 if dtype.itemsize == 8 else 32
        return rng.integers(0, 2 ** bits, size=shape, dtype=np.uint64 if bits == 64 else np.uint32).view(dtype)
    raise NotImplementedError(f"curandom has no uniform kernel for {dtype.name}: float32, float64, int32 and "
                              f"uint32{' (int64 and uint64 from a 64-bit generator)' if not wide else ', int64, uint64'}")


def rand(shape, dtype=np.float32, stream=None):
    """PyCUDA's ``rand``: float32/float64 uniform in [0, 1), int32/uint32 random 32-bit words."""
    dtype = np.dtype(dtype)
    if dtype in (np.float32, np.float64):
        return to_gpu(_GENERATOR.random(shape).astype(dtype))
    if dtype in (np.int32, np.uint32):
        return to_gpu(_GENERATOR.integers(0, 2 ** 32, size=shape, dtype=np.uint32).view(dtype))
    raise NotImplementedError(f"curandom.rand makes float32, float64, int32 and uint32 arrays, not {dtype.name}")


def _floats(data, what):
    if data.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"curandom's {what} kernels write float32 and float64 arrays, not {data.dtype.name}")


class _RandomNumberGenerator:
    """What every PyCUDA generator offers: fill_* writes into a GPUArray, gen_* makes a new one."""

    generator_bits = 32

    def __init__(self, seed=None, offset=0):
        self._rng = np.random.Generator(np.random.PCG64(seed))
        if offset:
            self._rng.bit_generator.advance(int(offset))

    def _store(self, data, values):
        data.set(np.asarray(values, dtype=data.dtype).reshape(data.shape))

    def fill_uniform(self, data, stream=None):
        self._store(data, _uniform(self._rng, data.shape, data.dtype, wide=self.generator_bits >= 64))

    def fill_normal(self, data, stream=None):
        _floats(data, "normal")
        self._store(data, self._rng.standard_normal(data.shape))

    def fill_log_normal(self, data, mean, stddev, stream=None):
        _floats(data, "log-normal")
        self._store(data, self._rng.lognormal(mean, stddev, data.shape))

    def fill_poisson(self, data, lambda_value=None, stream=None):
        """Poisson counts: with ``lambda_value``, into a uint32 array; without, each element's own value
        is its lambda and is replaced by a count (float32, float64 or uint32), as PyCUDA's in-place kernel does."""
        if lambda_value is None:
            if data.dtype not in (np.float32, np.float64, np.uint32):
                raise NotImplementedError(f"curandom's in-place Poisson kernel takes float32, float64 and uint32 "
                                          f"arrays, not {data.dtype.name}")
            self._store(data, self._rng.poisson(data.get().astype(np.float64)))
        else:
            if data.dtype != np.uint32:
                raise NotImplementedError(f"curandom's Poisson kernel writes uint32 arrays, not {data.dtype.name}")
            self._store(data, self._rng.poisson(float(lambda_value), data.shape))

    def _gen(self, fill, shape, dtype, *args):
        out = GPUArray(shape, dtype)
        fill(out, *args)
        return out

    def gen_uniform(self, shape, dtype, stream=None):
        return self._gen(self.fill_uniform, shape, dtype)

    def gen_normal(self, shape, dtype, stream=None):
        return self._gen(self.fill_normal, shape, dtype)

    def gen_log_normal(self, shape, dtype, mean, stddev, stream=None):
        return self._gen(self.fill_log_normal, shape, dtype, mean, stddev)

    def gen_poisson(self, shape, dtype, lambda_value, stream=None):
        return self._gen(self.fill_poisson, shape, dtype, lambda_value)

    def call_skip_ahead(self, i, stream=None):
        """Skip ``i`` numbers ahead (numpy's generator advanced by ``i`` draws)."""
        self._rng.bit_generator.advance(int(i))


class _PseudoRandomNumberGenerator(_RandomNumberGenerator):
    def __init__(self, seed_getter=None, offset=0):
        """``seed_getter(n)`` gives a GPUArray of int32 seeds (PyCUDA's one per generator): its values
        seed numpy's generator, so a fixed seed getter repeats its numbers from run to run."""
        seeds = None if seed_getter is None else np.asarray(seed_getter(1).get()).ravel().tolist()
        super().__init__(seeds, offset)


class XORWOWRandomNumberGenerator(_PseudoRandomNumberGenerator):
    pass


class MRG32k3aRandomNumberGenerator(_PseudoRandomNumberGenerator):
    pass


class _QuasiRandomNumberGenerator(_RandomNumberGenerator):
    def __init__(self, dir_vector=None, offset=0):
        super().__init__(None, offset)


class Sobol32RandomNumberGenerator(_QuasiRandomNumberGenerator):
    pass


class Sobol64RandomNumberGenerator(_QuasiRandomNumberGenerator):
    generator_bits = 64


class ScrambledSobol32RandomNumberGenerator(_QuasiRandomNumberGenerator):
    def __init__(self, dir_vector=None, scramble_vector=None, offset=0):
        super().__init__(dir_vector, offset)


class ScrambledSobol64RandomNumberGenerator(ScrambledSobol32RandomNumberGenerator):
    generator_bits = 64


RandomNumberGenerator = XORWOWRandomNumberGenerator      # (the stand-in's earlier name, kept for old programs)


def seed_getter_uniform(n):
    """``n`` copies of one random int32 seed, as a GPUArray (PyCUDA's)."""
    return to_gpu(np.full(int(n), _GENERATOR.integers(0, 2 ** 31 - 1), dtype=np.int32))


def seed_getter_unique(n):
    """``n`` random int32 seeds, as a GPUArray (PyCUDA's)."""
    return to_gpu(_GENERATOR.integers(0, 2 ** 31 - 1, size=int(n)).astype(np.int32))
