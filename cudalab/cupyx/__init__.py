"""cupyx, with the parts course programs use next to numba.cuda: ``cupyx.profiler``, ``cupyx.jit`` and
the pinned-array constructors (see cudalab.cupy)."""
import numpy as _np

from . import jit, profiler, scipy  # noqa: F401


def empty_pinned(shape, dtype=float, order="C"):
    """A numpy array in page-locked host memory (CuPy's staging buffer for fast, asynchronous copies)."""
    from ..runtime import streams
    n = int(_np.prod(shape, dtype=_np.int64)) if _np.ndim(shape) else int(shape)
    flat = streams.pinned_array(max(n, 1), dtype)[:n]
    return flat.reshape(shape, order=order)


def zeros_pinned(shape, dtype=float, order="C"):
    """``empty_pinned`` filled with zeros."""
    a = empty_pinned(shape, dtype, order)
    a[...] = 0
    return a


def empty_like_pinned(a, dtype=None, order="K", subok=None, shape=None):
    order = "F" if order in ("K", "A") and _np.isfortran(a) else ("C" if order in ("K", "A") else order)
    return empty_pinned(a.shape if shape is None else shape, a.dtype if dtype is None else dtype, order)


def zeros_like_pinned(a, dtype=None, order="K", subok=None, shape=None):
    out = empty_like_pinned(a, dtype, order, subok, shape)
    out[...] = 0
    return out


def scatter_add(a, slices, value):
    """``a[slices] += value`` counting every repeated index, as CuPy's atomic adds do (numpy's ``+=``
    through an index array adds once per distinct index); ``a`` is changed in place."""
    _scatter(_np.add, a, slices, value)


def scatter_max(a, slices, value):
    """``a[slices] = max(a[slices], value)`` over every repeated index, in place."""
    _scatter(_np.maximum, a, slices, value)


def scatter_min(a, slices, value):
    """``a[slices] = min(a[slices], value)`` over every repeated index, in place."""
    _scatter(_np.minimum, a, slices, value)


def _scatter(ufunc, a, slices, value):
    from ..cupy import _host, _host_args, _store, _wrapped
    values = _host(a)
    ufunc.at(values, _wrapped(_host_args(slices), a.shape), _host_args(value))
    _store(a, values)
