"""cuRAND's host API generators: the same numbers cuRAND gives, computed with numpy.

cuRAND's host API fills an array by running many generator threads at once, and the order in
which their numbers land in the array is part of what a program sees. Recorded on an H200
(cuRAND 10.4, seed 1234, 16 to 70,000 values, two calls in a row):

- CURAND_RNG_PSEUDO_XORWOW (and DEFAULT): 4096 threads, thread t on subsequence t of XORWOW
  (curand_init(seed, t, 0): 2^67 steps apart, jumped with the matrices of cuRAND's own
  curand_precalc.h); value p of the generator's stream (p counts from the first call on, plus the
  offset) is the (p // 4096)-th number of thread p % 4096. A float takes one number, a normal pair
  or a double two, a normal double pair four, each from one thread.
- CURAND_RNG_PSEUDO_PHILOX4_32_10: group g of four numbers is Philox4x32-10 of the counter
  (0, 0, g, 0) under the key (seed low, seed high) (subsequence g, its first counter); for doubles,
  subsequence g gives eight numbers, its counters 0 and 1.

Uniform floats are x * 2^-32 + 2^-33, doubles take 53 bits of two numbers, normals are cuRAND's
Box-Muller (curand_normal.h): the integers and uniforms match cuRAND bit for bit, normals within
float rounding (the GPU's sine and logarithm are approximations of their own). Poisson numbers and the
other generator types (MRG32k3a, MTGP32, MT19937) come from numpy with the same distribution but
not cuRAND's sequence.

- CURAND_RNG_QUASI_SOBOL32 (and QUASI_DEFAULT): point i of dimension d is the XOR of the direction
  vectors of dimension d picked by the bits of i's Gray code (i ^ i >> 1); a call for n values with D
  dimensions (curandSetQuasiRandomGeneratorDimensions) writes n / D points of dimension 0, then of
  dimension 1, ..., from the generator's offset (in points) on. The direction vectors are cuRAND's own
  (CURAND_DIRECTION_VECTORS_32_JOEKUO6), read from the nvidia-curand wheel's library, which hands them
  out without a GPU. Checked on an H200 (cuRAND 10.4): integers, floats and doubles bit for bit,
  normals within float rounding (quasi()).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .operands import LibraryError, Operands, on_timeline

# curandStatus_t (curand.h)
SUCCESS, NOT_INITIALIZED, TYPE_ERROR, OUT_OF_RANGE, LENGTH_NOT_MULTIPLE, LAUNCH_FAILURE = 0, 101, 103, 104, 105, 201
XORWOW, DEFAULT, MRG32K3A, MTGP32, MT19937, PHILOX = 101, 100, 121, 141, 142, 161
QUASI_DEFAULT, SOBOL32 = 200, 201
QUASI = {QUASI_DEFAULT: "Sobol32", SOBOL32: "Sobol32"}
DIRECTIONS_32, SCRAMBLED_DIRECTIONS_32 = 101, 102        # curandDirectionVectorSet_t
SOBOL_DIMENSIONS = 20000
PSEUDO = {DEFAULT: "XORWOW", XORWOW: "XORWOW", MRG32K3A: "MRG32k3a", MTGP32: "MTGP32", MT19937: "MT19937",
          PHILOX: "Philox4x32-10"}
XORWOW_THREADS = 4096
MASK = 0xFFFFFFFF
# what one output takes from the stream: (numbers per output, outputs made together)
TAKES = {"bits": (1, 1), "uniform": (1, 1), "uniform_double": (2, 1), "normal": (2, 2), "normal_double": (4, 2),
         "poisson": (1, 1)}
DTYPES = {"bits": np.uint32, "uniform": np.float32, "uniform_double": np.float64, "normal": np.float32,
          "normal_double": np.float64, "lognormal": np.float32, "lognormal_double": np.float64, "poisson": np.uint32}


def xorwow_states(seed: int, threads: int = XORWOW_THREADS):
    """(v, d) of curand_init(seed, t, 0) for t < threads: curand_kernel.h's salted seeding, then the
    skip-ahead by t subsequences that device code's curand_init gets too (emulator/xorwow_jump.py)."""
    from ...emulator import xorwow_jump
    s0, s1 = (seed ^ 0xAAD26B49) & MASK, ((seed >> 32) ^ 0xF7DCEFDD) & MASK
    t0, t1 = (1099087573 * s0) & MASK, (2591861531 * s1) & MASK
    v = np.tile(np.array([(123456789 + t0) & MASK, 362436069 ^ t0, (521288629 + t1) & MASK, 88675123 ^ t1,
                          (5783321 + t0) & MASK], np.uint32), (threads, 1))
    v = xorwow_jump.jump(v, np.arange(threads, dtype=np.uint64), 0)
    return v, np.full(threads, (6615241 + t1 + t0) & MASK, np.uint32)


def philox(counter: np.ndarray, seed: int) -> np.ndarray:
    """Philox4x32-10 of each counter (rows of 4 uint32) under the key (seed low, seed high)."""
    c = [counter[:, i].astype(np.uint64) for i in range(4)]
    k0, k1, m = seed & MASK, (seed >> 32) & MASK, np.uint64(MASK)
    for _ in range(10):
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ np.uint64(k0), p1 & m, (p0 >> np.uint64(32)) ^ c[3] ^ np.uint64(k1), p0 & m]
        k0, k1 = (k0 + 0x9E3779B9) & MASK, (k1 + 0xBB67AE85) & MASK
    return np.stack(c, 1).astype(np.uint32)


def direction_vectors(vector_set: int = DIRECTIONS_32) -> np.ndarray:
    """cuRAND's 32-bit direction vectors (20,000 dimensions of 32), as curandGetDirectionVectors32 gives
    them: read from the installed nvidia-curand wheel's library (a host function; no GPU needed), not
    copied into cudalab."""
    if vector_set not in (DIRECTIONS_32, SCRAMBLED_DIRECTIONS_32):
        raise LibraryError(f"curandGetDirectionVectors32: {vector_set} is not a 32-bit direction vector set "
                           "(CURAND_DIRECTION_VECTORS_32_JOEKUO6 or its scrambled set).", OUT_OF_RANGE)
    cached = _DIRECTIONS.get(vector_set)
    if cached is None:
        import ctypes
        import glob
        import os

        import nvidia
        found = [f for d in nvidia.__path__ for f in glob.glob(os.path.join(d, "*", "lib", "libcurand.so*"))]
        if not found:
            raise LibraryError("cuRAND's Sobol direction vectors come from the nvidia-curand wheel's library, which "
                               "is not installed: pip install 'cudalab[curand]'.", NOT_INITIALIZED)
        pointer = ctypes.c_void_p()
        status = ctypes.CDLL(found[0]).curandGetDirectionVectors32(ctypes.byref(pointer), vector_set)
        if status:
            raise LibraryError(f"curandGetDirectionVectors32 of the installed cuRAND answered {status}.", status)
        table = np.ctypeslib.as_array(ctypes.cast(pointer, ctypes.POINTER(ctypes.c_uint32)),
                                      shape=(SOBOL_DIMENSIONS, 32))
        cached = _DIRECTIONS[vector_set] = table.copy()
    return cached


_DIRECTIONS: dict = {}


def sobol32(first: int, count: int, dims: range) -> np.ndarray:
    """Points first..first+count-1 of the Sobol sequence in dimensions ``dims``, as (len(dims), count)
    uint32: each the XOR of the direction vectors its index's Gray code picks."""
    v = direction_vectors()[dims.start:dims.stop]
    index = np.arange(first, first + count, dtype=np.uint64)
    gray = index ^ (index >> np.uint64(1))
    out = np.zeros((len(v), count), np.uint32)
    for bit in range(int(gray.max()).bit_length() if count else 0):
        picked = ((gray >> np.uint64(bit)) & np.uint64(1)).astype(bool)
        out[:, picked] ^= v[:, bit:bit + 1]
    return out


@dataclass
class Generator:
    """One curandGenerator_t: its type, seed, offset (numbers used so far), stream and where it writes."""

    rng_type: int
    host: bool = False                   # curandCreateGeneratorHost: results go to host memory
    seed: int = 0
    offset: int = 0
    stream: int = 0
    dims: int = 1                        # a quasi-random generator's dimensions
    _xorwow: tuple = field(default=None, repr=False)    # (seed, v, d, rows done, last row)

    def _xorwow_rows(self, first: int, last: int) -> np.ndarray:
        """Rows first..last (inclusive) of the 4096 threads' numbers: row r is each thread's r-th number."""
        if self._xorwow is None or self._xorwow[0] != self.seed or first < self._xorwow[3] - 1:
            self._xorwow = (self.seed, *xorwow_states(self.seed), 0, None)
        seed, v, d, done, row = self._xorwow
        rows = []
        for r in range(first, last + 1):
            while done <= r:
                t = v[:, 0] ^ (v[:, 0] >> np.uint32(2))
                v = np.concatenate([v[:, 1:], (v[:, 4] ^ (v[:, 4] << np.uint32(4)) ^ t ^ (t << np.uint32(1)))[:, None]], 1)
                d = d + np.uint32(362437)
                row, done = v[:, 4] + d, done + 1
            rows.append(row)
        self._xorwow = (seed, v, d, done, row)
        return np.stack(rows)

    def numbers(self, slots: int, take: int, doubles: bool = False) -> np.ndarray:
        """``slots`` rows of ``take`` consecutive numbers of one thread (one Philox group for take <= 4),
        from the generator's position on; the position moves past them."""
        if self.rng_type == PHILOX:
            # a float output's thread takes one counter of its subsequence (four numbers), a double
            # output's thread two (counters 0 and 1 of its subsequence: eight numbers, four doubles)
            width = 8 if doubles else 4
            start, stop = self.offset, self.offset + slots * take
            g = np.repeat(np.arange(start // width, -(-stop // width), dtype=np.uint64), width // 4)
            counter = np.zeros((len(g), 4), np.uint64)
            counter[:, 0] = np.tile(np.arange(width // 4, dtype=np.uint64), len(g) // (width // 4))
            counter[:, 2], counter[:, 3] = g & np.uint64(MASK), g >> np.uint64(32)
            self.offset = stop
            first = start % width
            return philox(counter, self.seed).reshape(-1)[first:first + slots * take].reshape(slots, take)
        if PSEUDO.get(self.rng_type) == "XORWOW":
            start = self.offset // take                   # in slots of `take` numbers
            threads = XORWOW_THREADS
            first_row, last_row = start // threads, (start + slots - 1) // threads
            rows = self._xorwow_rows(first_row * take, last_row * take + take - 1)     # (rows, threads)
            rows = rows.reshape(last_row - first_row + 1, take, threads).transpose(0, 2, 1).reshape(-1, take)
            self.offset += slots * take
            return rows[start - first_row * threads:start - first_row * threads + slots]
        rng = np.random.Generator(np.random.Philox(key=self.seed, counter=self.offset))
        self.offset += slots * take
        return rng.integers(0, 1 << 32, (slots, take), dtype=np.uint64).astype(np.uint32)


def _uniform(x: np.ndarray) -> np.ndarray:
    """curand_uniform: x * 2^-32 + 2^-33 in one rounding (a fused multiply-add), never 0, at most 1."""
    return (x.astype(np.float32).astype(np.float64) * 2.0 ** -32 + 2.0 ** -33).astype(np.float32)


def _uniform_double(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """curand_uniform_double's 53 bits from two numbers."""
    z = lo.astype(np.uint64) ^ (hi.astype(np.uint64) << np.uint64(21))
    return (z & np.uint64((1 << 53) - 1)).astype(np.float64) * 2.0 ** -53 + 2.0 ** -54


def _box_muller(pairs: np.ndarray) -> np.ndarray:
    """curand_normal.h's _curand_box_muller on each (x, y): (s sin v, s cos v)."""
    u = _uniform(pairs[:, 0]).astype(np.float64)
    v = pairs[:, 1].astype(np.float32).astype(np.float64) * np.float32(2.0 ** -32 * 6.2831855) \
        + np.float32(2.0 ** -32 * 6.2831855) / 2
    s = np.sqrt(-2.0 * np.log(u))
    return np.stack([s * np.sin(v), s * np.cos(v)], 1).reshape(-1)


def _box_muller_double(quads: np.ndarray) -> np.ndarray:
    u = _uniform_double(quads[:, 0], quads[:, 1])
    z = (quads[:, 2].astype(np.uint64) ^ (quads[:, 3].astype(np.uint64) << np.uint64(21))) & np.uint64((1 << 53) - 1)
    v = z.astype(np.float64) * 2.0 ** -52 + 2.0 ** -53
    s = np.sqrt(-2.0 * np.log(u))
    return np.stack([s * np.sin(np.pi * v), s * np.cos(np.pi * v)], 1).reshape(-1)


def used(kind: str, n: int, gen: Generator | None = None) -> int:
    """How far a call for ``n`` values of ``kind`` moves the generator's offset (``generate``); a
    length cuRAND refuses is refused here too. A Sobol generator's offset counts points (n / dims)."""
    if gen is not None and gen.rng_type in QUASI:
        quasi_check(gen, kind, n)
        return n // gen.dims
    base = kind.replace("log", "")
    per, together = TAKES[base]
    if n % together:
        raise LibraryError(f"curandGenerate{kind.title().replace('_', '')}: n = {n} is odd; cuRAND makes normal "
                           "numbers in pairs (Box-Muller), so n must be even (CURAND_STATUS_LENGTH_NOT_MULTIPLE).",
                           LENGTH_NOT_MULTIPLE)
    return n if base == "poisson" else n // together * per


def replay_shift(gen: Generator, kind: str, n: int) -> int:
    """How much further in the sequence each later launch of a captured call starts (an H200's
    answer for XORWOW): cuRAND keeps each of XORWOW's 4096 threads' state in device memory, and the
    captured kernel moves the states it used on, so the next launch starts at the same threads,
    as many rows further as the call took. Philox is counter-based and numpy's stand-ins keep no
    device state: their launches start where the capture did."""
    if PSEUDO.get(gen.rng_type) != "XORWOW" or kind.replace("log", "") == "poisson":
        return 0
    per, together = TAKES[kind.replace("log", "")]
    return -(-(n // together) // XORWOW_THREADS) * XORWOW_THREADS * per


def quasi_check(gen: Generator, kind: str, n: int) -> None:
    """A Sobol32 call cuRAND refuses is refused here too."""
    name = "curandGenerate" + {"bits": ""}.get(kind, kind.title().replace("_", ""))
    if n % gen.dims:
        raise LibraryError(f"{name}: n = {n} is not a multiple of the generator's {gen.dims} dimensions "
                           "(CURAND_STATUS_LENGTH_NOT_MULTIPLE).", LENGTH_NOT_MULTIPLE)
    if kind == "poisson":
        raise LibraryError(f"{name} from a quasi-random (Sobol) generator is not modeled by cudalab; its integers, "
                           "uniform, normal and log-normal numbers are.", TYPE_ERROR)


def quasi(kind: str, first: int, count: int, dims: range, mean: float = 0.0, stddev: float = 1.0) -> np.ndarray:
    """Points first..first+count-1 of dimensions ``dims`` as ``kind``, one dimension after another. A
    double is x 2^-32 + 2^-32 (an H200's answer, where a float is x 2^-32 + 2^-33); a normal is the
    inverse of the normal distribution at the point's uniform (cuRAND's _curand_normal_icdf, whose
    erfcinv is the GPU's own approximation: equal within float rounding, not bit for bit)."""
    points = sobol32(first, count, dims).reshape(-1)
    if kind == "bits":
        return points
    if kind == "uniform":
        return _uniform(points)
    if kind == "uniform_double":
        return points.astype(np.float64) * 2.0 ** -32 + 2.0 ** -32
    from statistics import NormalDist
    u = points.astype(np.float64) * 2.0 ** -32 + (2.0 ** -32 if kind.endswith("double") else 2.0 ** -33)
    z = mean + stddev * np.frompyfunc(NormalDist().inv_cdf, 1, 1)(u).astype(np.float64)
    return (np.exp(z) if kind.startswith("log") else z).astype(DTYPES[kind])


def generate(gen: Generator, kind: str, n: int, mean: float = 0.0, stddev: float = 1.0) -> np.ndarray:
    """n values of ``kind`` (bits, uniform, uniform_double, normal, normal_double, lognormal,
    lognormal_double, poisson) from the generator, as cuRAND's curandGenerate* would write them."""
    if gen.rng_type in QUASI:
        first, per = gen.offset, used(kind, n, gen)
        gen.offset += per
        return quasi(kind, first, per, range(gen.dims), mean, stddev)
    base = kind.replace("log", "")
    per, together = TAKES[base]
    used(kind, n)
    if base == "poisson":
        rng = np.random.Generator(np.random.Philox(key=gen.seed ^ 0x9E3779B9, counter=gen.offset))
        gen.offset += n
        return rng.poisson(mean, n).astype(np.uint32)
    numbers = gen.numbers(n // together, per, base.endswith("double"))
    if base == "bits":
        values = numbers.reshape(-1)
    elif base == "uniform":
        values = _uniform(numbers.reshape(-1))
    elif base == "uniform_double":
        values = _uniform_double(numbers[:, 0], numbers[:, 1])
    else:
        z = _box_muller(numbers) if base == "normal" else _box_muller_double(numbers)
        values = mean + stddev * z
        if kind.startswith("log"):
            values = np.exp(values)
    return np.asarray(values[:n]).astype(DTYPES[kind])


CHUNK = 1 << 22      # values made at a time: a GPU-sized request does not hold all of them in host memory


def fill(ctx, gen: Generator, kind: str, n: int, address: int, mean: float = 0.0, stddev: float = 1.0):
    """A device generator's call: the values written to device memory at ``address`` (checked whole
    first), and the call's row on the generator's stream."""
    name = "curandGenerate" + {"bits": "", "poisson": "Poisson"}.get(kind, kind.title().replace("_", ""))
    memory = Operands(ctx, name, LAUNCH_FAILURE)
    out = memory.array("outputPtr", address, n, DTYPES[kind])
    if gen.rng_type in QUASI:                           # each dimension's points, CHUNK at a time
        per, first = used(kind, n, gen), gen.offset
        gen.offset += per
        for d in range(gen.dims):
            for start in range(0, per, CHUNK):
                count = min(CHUNK, per - start)
                memory.store(out[d * per + start:d * per + start + count],
                             quasi(kind, first + start, count, range(d, d + 1), mean, stddev))
        on_timeline(ctx, gen.stream, name, 20 * n, out.nbytes)
        return
    if n % TAKES[kind.replace("log", "")][1]:
        generate(gen, kind, n, mean, stddev)            # refused: n must be even
    for start in range(0, n, CHUNK):
        memory.store(out[start:start + CHUNK], generate(gen, kind, min(CHUNK, n - start), mean, stddev))
    on_timeline(ctx, gen.stream, name, 20 * n, out.nbytes)

