"""cupy.random: numpy's generators on the host, the numbers stored in device memory (the same
distributions as CuPy's, not the same numbers)."""
from __future__ import annotations

import numpy as np

from . import _device, _host, _store, ndarray

_STATE = np.random.RandomState()


def seed(seed=None):
    _STATE.seed(seed)


def _shape_asked(name, args, kwargs):
    """The shape a draw asks for, where numpy's signature says it (None: a scalar or unknown)."""
    if "size" in kwargs:
        return kwargs["size"]
    position = {"rand": None, "randn": None, "random_sample": 0, "uniform": 2, "normal": 2, "randint": 2}.get(name, -1)
    if position is None:
        return args
    return args[position] if 0 <= position < len(args) else None


def _drawn(name):
    def draw(*args, dtype=None, **kwargs):
        shape = _shape_asked(name, args, kwargs)
        if shape is not None:       # out of device memory before numpy draws gigabytes on the host
            ndarray(shape, dtype or np.float64).free()
        values = np.asarray(getattr(_STATE, name)(*args, **kwargs))
        return _device(values if dtype is None else values.astype(dtype))
    draw.__name__ = name
    return draw


for _name in ("rand", "randn", "randint", "random_sample", "uniform", "normal", "standard_normal",
              "exponential", "poisson", "binomial", "choice", "permutation"):
    if hasattr(_STATE, _name):
        globals()[_name] = _drawn(_name)
random = ranf = sample = _drawn("random_sample")


def shuffle(a):
    """Shuffle a device array's first axis in place."""
    values = _host(a)
    _STATE.shuffle(values)
    _store(a, values)


def RandomState(seed=None):         # noqa: N802  (CuPy's class name)
    """A generator of its own (numpy's RandomState) whose arrays are device arrays."""
    return _Generator(np.random.RandomState(seed))


def default_rng(seed=None):
    """numpy's Generator whose arrays are device arrays."""
    return _Generator(np.random.default_rng(seed))


class _Generator:
    """numpy's generator whose draws are stored in device memory."""

    def __init__(self, rng):
        self._rng = rng

    def __getattr__(self, name):
        method = getattr(self._rng, name)

        def draw(*args, **kwargs):
            return _device(np.asarray(method(*args, **kwargs)))
        return draw


class BitGenerator:
    """CuPy's bit generators (cuRAND's XORWOW, MRG32k3a, Philox4_32_10), given a seed: here each seeds
    numpy's PCG64, so a program gets the same distributions, reproducible for a seed, not cuRAND's numbers."""

    def __init__(self, seed=None):
        self._seed = seed

    def random_raw(self, size=None, output=True):
        """Raw 32-bit draws, as CuPy's bit generators give them."""
        values = np.random.default_rng(self._seed).integers(0, 2**32, size=size, dtype=np.uint64).astype(np.uint32)
        return _device(np.asarray(values)) if output else None


class XORWOW(BitGenerator):
    pass


class MRG32k3a(BitGenerator):
    pass


class Philox4x3210(BitGenerator):
    pass


class Generator(_Generator):
    """CuPy's ``Generator(bit_generator)`` (``cp.random.Generator(cp.random.XORWOW(1234))``): numpy's
    Generator methods (``random``, ``standard_normal``, ``integers``, ``uniform``... with their
    ``dtype``), the draws stored in device memory."""

    def __init__(self, bit_generator):
        if not isinstance(bit_generator, BitGenerator):        # a seed (CuPy 14.2.0 took Generator(1234) too)
            bit_generator = XORWOW(bit_generator)
        self.bit_generator = bit_generator
        super().__init__(np.random.Generator(np.random.PCG64(bit_generator._seed)))
