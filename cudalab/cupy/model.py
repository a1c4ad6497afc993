"""How long CuPy's own operations would take on the device: their rows on cudalab's timeline.

The stand-in computes what CuPy computes with numpy on the host (cudalab/cupy/__init__.py), so no
emulated kernel runs and, before this module, nothing reached the timeline: a CuPy lesson that times
``x_gpu @ y_gpu`` between two events, or with ``cupyx.profiler.benchmark``, printed 0.0 ms, an infinite
speed-up that no GPU gives. Each operation now adds one kernel row to the current stream, timed by a
roofline of the selected device profile: the bytes the operation reads and writes at the DRAM
bandwidth, or its arithmetic at the profile's peak rate (FP32, or FP64 at the GPU's
single-to-double ratio), whichever takes longer, plus a launch. The arithmetic is the textbook count
for the operations where it dominates (a matrix product's 2mnk, an LU solve's 2n^3/3, an FFT's
5 N log2 N); elsewhere an operation is memory-bound, as CuPy's elementwise kernels and reductions are.
It is a model of a well-tuned library, a lower bound of the time, not a measurement: the rows say so
(``model``). Copies between a host array and a CuPy array are copies on the timeline too.
"""
from __future__ import annotations

import math

import numpy as np

from ..device.timing import LAUNCH_OVERHEAD_US

MODEL = "CuPy stand-in: roofline of the operation's bytes and textbook flop count (numpy computed the values)"


def _square(a) -> int:
    return int(a.shape[-1]) if getattr(a, "ndim", 0) >= 2 else 0


def _batch(a) -> int:
    return int(np.prod(a.shape[:-2])) if getattr(a, "ndim", 0) > 2 else 1


def _matmul(arrays, result) -> float:
    """2mnk for ``a @ b`` (a vector counts as one row or column), times the batch."""
    if len(arrays) < 2 or any(getattr(x, "ndim", 0) == 0 for x in arrays[:2]):
        return 0.0
    a, b = arrays[0], arrays[1]
    k = int(a.shape[-1])
    m = int(a.shape[-2]) if a.ndim >= 2 else 1
    n = int(b.shape[-1]) if b.ndim >= 2 else 1
    return 2.0 * m * n * k * max(_batch(a), _batch(b))


def _solve(arrays, result) -> float:
    n = _square(arrays[0]) if arrays else 0
    rhs = int(np.prod(arrays[1].shape[1:])) if len(arrays) > 1 and arrays[1].ndim > 1 else 1
    return (2.0 / 3.0 * n ** 3 + 2.0 * n * n * rhs) * _batch(arrays[0]) if n else 0.0


def _cubic(factor):
    return lambda arrays, result: factor * _square(arrays[0]) ** 3 * _batch(arrays[0]) if arrays else 0.0


def _fft(arrays, result) -> float:
    size = int(getattr(arrays[0], "size", 0)) if arrays else 0
    return 5.0 * size * math.log2(size) if size > 1 else 0.0


# numpy's name -> flop count from the device arrays it was given and its result
FLOPS = {"matmul": _matmul, "__matmul__": _matmul, "__rmatmul__": lambda a, r: _matmul(a[::-1], r),
         "dot": _matmul, "vdot": _matmul, "inner": _matmul, "tensordot": _matmul, "einsum": None,
         "solve": _solve, "inv": _cubic(2.0), "det": _cubic(2.0 / 3.0), "slogdet": _cubic(2.0 / 3.0),
         "cholesky": _cubic(1.0 / 3.0), "qr": _cubic(4.0 / 3.0), "lstsq": _cubic(4.0 / 3.0),
         "eigh": _cubic(9.0), "eigvalsh": _cubic(4.0 / 3.0), "eig": _cubic(25.0), "eigvals": _cubic(10.0),
         "svd": _cubic(22.0), "pinv": _cubic(24.0), "matrix_power": _cubic(2.0),
         "fft": _fft, "ifft": _fft, "rfft": _fft, "irfft": _fft, "fft2": _fft, "ifft2": _fft, "fftn": _fft,
         "ifftn": _fft, "rfft2": _fft, "irfft2": _fft, "rfftn": _fft, "irfftn": _fft}


def _device_arrays(x, found):
    from ..runtime.arrays import DeviceArray
    if isinstance(x, DeviceArray):
        found.append(x)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _device_arrays(v, found)
    elif isinstance(x, dict):
        for v in x.values():
            _device_arrays(v, found)
    return found


def peak_flops_per_us(dtype) -> float:
    """The selected profile's peak arithmetic rate for ``dtype``, flops per microsecond (an FMA is two)."""
    from ..runtime import streams
    from ..runtime.core.properties import gpu_figures
    p = streams.context().profile.sized()
    fp32 = p.fp32_flops() / 1e6       # flops per microsecond
    if np.dtype(dtype).itemsize >= 8 and np.dtype(dtype).kind in "fc":
        ratio = gpu_figures(p)[2]
        return fp32 / ratio
    return fp32


def operation_us(name: str, arrays: list, result) -> float:
    """Microseconds a GPU would take for CuPy's ``name`` over ``arrays`` giving ``result``."""
    from ..runtime import streams
    outs = _device_arrays(result, [])
    moved = sum(int(a.nbytes) for a in arrays) + sum(int(a.nbytes) for a in outs)
    bandwidth = streams.context().profile.sized().memory_bandwidth_gbs * 1e3       # bytes per microsecond
    count = FLOPS.get(name)
    flops = count(arrays, result) if count is not None and arrays else 0.0
    dtype = np.result_type(*[a.dtype for a in arrays]) if arrays else np.float32
    return LAUNCH_OVERHEAD_US + max(moved / bandwidth, flops / peak_flops_per_us(dtype))


def charge(name: str, args, result):
    """Put CuPy's ``name`` on the timeline of the current CuPy stream (nothing for an operation on no
    device array: ``cp.float32(1)``, or numpy's own work on host values)."""
    arrays = _device_arrays(args, [])
    outs = _device_arrays(result, [])
    if not arrays and not outs:
        return None
    from ..runtime import streams
    from .cuda import get_current_stream
    s = streams._core_stream(get_current_stream())
    row = streams.context().timeline.kernel(f"cupy {name.strip('_')}", operation_us(name, arrays, result), stream=s.handle)
    row["model"] = MODEL
    return row


def copy(nbytes: int, direction: str, host=None, blocking=True):
    """A copy between a host array and a CuPy array (``cp.asarray(host)``, ``.get()``, ``.set()``) on the
    current stream. From or to pageable memory the host waits for it; ``host`` in page-locked memory
    (``cupy.cuda.alloc_pinned_memory``, a pinned array) goes at the pinned rate, and a copy that need not
    block (``a.set(pinned)``) lets the host go on, as CuPy's asynchronous copies do."""
    if nbytes:
        from ..runtime import streams
        from .cuda import get_current_stream
        pinned = host is not None and streams.is_pinned(host)
        streams.context().transfer(int(nbytes), direction, streams._core_stream(get_current_stream()), pinned=pinned,
                                   sync=blocking or not pinned, name=f"{direction} {int(nbytes):,} B (CuPy)")
