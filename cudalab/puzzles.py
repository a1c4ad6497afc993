"""GPU-puzzles-style exercises for Python kernels (notebook 15), checked like the C++ ones:
``check("15-map", kernel=map_add10)`` launches your kernel on test inputs under racecheck, compares
with numpy, and says what is wrong and what to try, in numba.cuda's words.

The launch shape is the check's (as a course's puzzle fixes it); the kernel may be ``@cudalab.jit``
or a plain Python function (it is compiled for you).
"""
from __future__ import annotations

import re

import numpy as np

from .exercise import _Fail, _launch, _rng, _wrong, exercise

_CXX_WORDS = (("__shared__ array", "cuda.shared.array"),
              ("(if (col < width && row < height) ...)", "(if col < width and row < height: ...)"))


def _run(kernel, grid, block, args, bounds_hint):
    """Launch as the C++ exercises do, with their hints said in Python."""
    from .pykernels import Dispatcher, jit
    from .pykernels.dispatcher import python_words
    if callable(kernel) and not hasattr(kernel, "launch"):
        kernel = jit(kernel)
    if not isinstance(kernel, Dispatcher):
        raise _Fail(f"expected a Python kernel (a function using numba.cuda), got {type(kernel).__name__}.",
                    "Define it with def, decorate it with @cudalab.jit, and pass it: check(..., kernel=my_kernel).")
    from .analysis.metrics import MetricsObserver
    try:
        return _launch(kernel, grid, block, args, observers=[MetricsObserver()], bounds_hint=bounds_hint)
    except _Fail as f:
        message, hint = python_words(f.message), python_words(f.hint)
        for cxx, py in _CXX_WORDS:
            message, hint = message.replace(cxx, py), hint.replace(cxx, py)
        same = re.search(r"between line (\d+) and line \1\b", message)
        if same:        # one statement reads and writes shared memory: s[t] += s[t - offset]
            hint = (f"Line {same.group(1)} reads one element of shared memory and writes another that other threads "
                    "read in the same step. Read into a local variable first, cuda.syncthreads(), then write.")
        raise _Fail(message, hint) from None


def _expect(got, want, name, hint, **tol):
    bad = _wrong(got, want, name, **tol)
    if bad:
        raise _Fail(bad, hint)


GUARD = "There are more threads than elements: skip the work when the index is past the end (if i < out.size:)."


@exercise("15-map", "kernel=map_add10, with map_add10(a, out): out[i] = a[i] + 10, one thread per element")
def _map(kernel):
    a = np.arange(1024, dtype=np.float32)
    out = np.zeros_like(a)
    _run(kernel, 4, 256, (a, out), GUARD)
    _expect(out, a + 10, "out", "Thread i = cuda.grid(1) (blockIdx.x * blockDim.x + threadIdx.x) writes out[i].")
    return "out = a + 10 with 1024 threads."


@exercise("15-zip", "kernel=zip_add, with zip_add(a, b, out): out[i] = a[i] + b[i]")
def _zip(kernel):
    rng = _rng()
    a, b = rng.random(1024, np.float32), rng.random(1024, np.float32)
    out = np.zeros_like(a)
    _run(kernel, 4, 256, (a, b, out), GUARD)
    _expect(out, a + b, "out", "Each thread adds one pair: out[i] = a[i] + b[i] with i = cuda.grid(1).")
    return "out = a + b."


@exercise("15-guards", "kernel=guarded_add10, with guarded_add10(a, out): out[i] = a[i] + 10 for 1000 elements "
                       "on 4 blocks of 256 threads")
def _guards(kernel):
    a = np.arange(1000, dtype=np.float32)
    out = np.zeros_like(a)
    _run(kernel, 4, 256, (a, out), GUARD)
    _expect(out, a + 10, "out", GUARD)
    return "out = a + 10, and the 24 spare threads of the last block touched nothing."


@exercise("15-2d-blocks", "kernel=add10_2d, with add10_2d(a, out): out[r, c] = a[r, c] + 10 for a 50 x 37 array, "
                          "blocks of 16 x 16 threads")
def _blocks_2d(kernel):
    a = _rng().random((50, 37), np.float32)
    out = np.full_like(a, np.nan)
    _run(kernel, (4, 3), (16, 16), (a, out), "The grid is 64 x 48 threads for a 50 x 37 array: guard both "
         "indices (if r < out.shape[0] and c < out.shape[1]:).")
    if np.isnan(out).any():
        r, c = np.argwhere(np.isnan(out))[0]
        raise _Fail(f"{int(np.isnan(out).sum())} elements of out were never written, e.g. out[{r}, {c}].",
                    "r, c = cuda.grid(2) gives every thread its own (row, column): the launch's x axis runs along "
                    "rows here (grid (4, 3) covers 64 rows and 48 columns).")
    _expect(out, a + 10, "out", "out[r, c] = a[r, c] + 10, with r, c = cuda.grid(2).")
    return "out = a + 10 over a 2D grid of 2D blocks."


@exercise("15-shared", "kernel=reverse_blocks, with reverse_blocks(a, out): each block of 256 threads writes its "
                       "256 elements of a to out in reverse order, through cuda.shared.array")
def _shared(kernel):
    a = np.arange(4 * 256, dtype=np.float32)
    out = np.zeros_like(a)
    rec = _run(kernel, 4, 256, (a, out), GUARD)
    _expect(out, a.reshape(4, 256)[:, ::-1].reshape(-1), "out",
            "Thread t stores a[i] in s[t]; after cuda.syncthreads() it writes s[255 - t] to out[i].")
    if not rec.metrics.get("smsp__sass_inst_executed_op_shared_ld.sum", 0):
        raise _Fail("out is right, but the kernel never reads shared memory.",
                    "Stage the block's elements in s = cuda.shared.array(256, float32).")
    return "each block reversed its elements through shared memory, with no race."


@exercise("15-pooling", "kernel=pool3, with pool3(a, out): out[i] = a[i - 2] + a[i - 1] + a[i] (missing terms are "
                        "0), 1000 elements, blocks of 256 threads")
def _pooling(kernel):
    a = _rng().random(1000, np.float32)
    out = np.zeros_like(a)
    _run(kernel, 4, 256, (a, out), "A thread read before the start or past the end: only add a[i - 1] when "
         "i >= 1 and a[i - 2] when i >= 2, and skip i >= a.size.")
    want = a + np.concatenate(([0], a[:-1])) + np.concatenate(([0, 0], a[:-2]))
    _expect(out, want, "out", "The first two elements of every block need the last two of the block before: "
            "read them from a (global memory), not from this block's shared array.")
    return "a sliding sum of 3, block edges included."


@exercise("15-dot", "kernel=dot, with dot(a, b, out): out[0] = the sum of a * b for 4096 elements, 16 blocks of 256 "
                    "threads (each block reduces in shared memory, then one cuda.atomic.add)")
def _dot(kernel):
    rng = _rng()
    a, b = rng.random(4096, np.float32), rng.random(4096, np.float32)
    out = np.zeros(1, np.float32)
    _run(kernel, 16, 256, (a, b, out), GUARD)
    _expect(out, np.array([np.dot(a.astype(np.float64), b)], np.float32), "out",
            "Several blocks add into out[0]: out[0] += ... from many threads loses updates; use "
            "cuda.atomic.add(out, 0, block_sum) once per block.", rtol=1e-4, atol=1e-3)
    return "a . b, reduced per block and combined with one atomic add per block."


@exercise("15-conv1d", "kernel=conv1d, with conv1d(a, w, out): out[i] = sum over k < w.size of a[i + k] * w[k] "
                       "(terms past the end of a are 0), 1000 elements, blocks of 256")
def _conv1d(kernel):
    rng = _rng()
    a, w = rng.random(1000, np.float32), rng.random(5, np.float32)
    out = np.zeros_like(a)
    _run(kernel, 4, 256, (a, w, out), "The window runs past the end of a for the last elements: add a[i + k] * w[k] "
         "only when i + k < a.size.")
    want = np.array([np.dot(a[i:i + 5], w[:len(a[i:i + 5])]) for i in range(a.size)], np.float32)
    _expect(out, want, "out", "out[i] = a[i] * w[0] + a[i + 1] * w[1] + ... + a[i + 4] * w[4].")
    return "a 1D convolution with a window of 5."


@exercise("15-prefix-sum", "kernel=block_scan, with block_scan(a, out): out[i] = a[b*256] + ... + a[i] within each "
                           "block b of 256 threads (an inclusive scan per block)")
def _prefix_sum(kernel):
    a = _rng().integers(0, 10, 4 * 256).astype(np.float32)
    out = np.zeros_like(a)
    _run(kernel, 4, 256, (a, out), GUARD)
    _expect(out, np.cumsum(a.reshape(4, 256), axis=1).reshape(-1), "out",
            "Hillis-Steele: for offset 1, 2, 4, ... 128, every thread t >= offset adds s[t - offset] to s[t]; read "
            "into a register, cuda.syncthreads(), then write, cuda.syncthreads() again.")
    return "an inclusive scan of each block's 256 elements."


@exercise("15-axis-sum", "kernel=row_sums, with row_sums(a, out): out[r] = a[r, :].sum() for a 6 x 256 array, one "
                         "block of 256 threads per row")
def _axis_sum(kernel):
    a = _rng().integers(0, 10, (6, 256)).astype(np.float32)
    out = np.zeros(6, np.float32)
    _run(kernel, 6, 256, (a, out), GUARD)
    _expect(out, a.sum(axis=1), "out", "Block r reduces row r (a[cuda.blockIdx.x, cuda.threadIdx.x]) in shared "
            "memory and thread 0 writes out[cuda.blockIdx.x].")
    return "the sum of each row, one block per row."


@exercise("15-matmul", "kernel=matmul, with matmul(A, B, C): C = A @ B for 48 x 48 float32 matrices, blocks of "
                       "16 x 16 threads, tiles of A and B in cuda.shared.array")
def _matmul(kernel):
    rng = _rng()
    A, B = rng.random((48, 48), np.float32), rng.random((48, 48), np.float32)
    C = np.zeros_like(A)
    rec = _run(kernel, (3, 3), (16, 16), (A, B, C), "A tile starts at column t * 16 of A and row t * 16 of B.")
    _expect(C, A.astype(np.float64) @ B, "C", "Each step loads one 16 x 16 tile of A and of B, cuda.syncthreads(), "
            "adds 16 products, cuda.syncthreads() again before the next tiles overwrite them.", rtol=1e-4, atol=1e-4)
    if not rec.metrics.get("smsp__sass_inst_executed_op_shared_ld.sum", 0):
        raise _Fail("C is right, but the kernel never reads shared memory.",
                    "Stage tiles in sA = cuda.shared.array((16, 16), float32) and sB, as the notebook shows.")
    return "C = A @ B with tiles in shared memory."
