"""cupyx.scipy.fft on cudalab: SciPy's FFT names over device arrays, computed by numpy's FFT (as the stand-in's
``cupy.fft`` is), and ``get_fft_plan``, whose plan is a context manager the transforms inside it run under.

SciPy's extra keywords (``overwrite_x``, ``workers``, ``plan``) change how cuFFT works, not what it answers;
they are accepted and set aside. numpy computes a complex64 transform in complex128: the result is cast
back to the input's precision, as cuFFT's single-precision plans give it."""
import numpy as _np

_NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
          "hfft", "ihfft", "fftshift", "ifftshift", "fftfreq", "rfftfreq")
_SCIPY_ONLY = ("overwrite_x", "workers", "plan")
_SINGLE = {_np.dtype(_np.complex64): _np.complex64, _np.dtype(_np.float32): _np.float32}


def _transform(name):
    def transform(x, *args, **kwargs):
        from ...cupy import _on_host, ndarray
        kwargs = {k: v for k, v in kwargs.items() if k not in _SCIPY_ONLY}
        out = _on_host(getattr(_np.fft, name), (x, *args), kwargs, name=f"fft.{name}")
        single = _SINGLE.get(_np.dtype(getattr(x, "dtype", _np.float64)))
        if single is not None and isinstance(out, ndarray) and out.dtype.itemsize > _np.dtype(single).itemsize:
            kind = _np.complex64 if out.dtype.kind == "c" else _np.float32
            out = out.astype(kind)
        return out
    transform.__name__ = name
    transform.__doc__ = f"scipy.fft.{name} over a device array (numpy's FFT; cudalab's CuPy stand-in)."
    return transform


for _name in _NAMES:
    globals()[_name] = _transform(_name)


class _Plan:
    """What ``get_fft_plan`` returns: cuFFT's plan, which the transforms in its ``with`` block use. The
    stand-in's transforms are numpy's, which need none; the plan keeps what it was made for."""

    def __init__(self, shape, axes, value_type):
        self.shape, self.axes, self.value_type = shape, axes, value_type

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __repr__(self):
        return f"<cuFFT plan (cudalab stand-in) shape={self.shape} axes={self.axes} {self.value_type}>"


def get_fft_plan(a, shape=None, axes=None, value_type="C2C"):
    """A plan for transforms of ``a`` over ``axes`` (all of them by default), as a context manager."""
    if value_type not in ("C2C", "R2C", "C2R"):
        raise ValueError(f"value_type must be 'C2C', 'R2C' or 'C2R', not {value_type!r}")
    axes = tuple(range(a.ndim)) if axes is None else tuple(_np.atleast_1d(axes).tolist())
    return _Plan(tuple(a.shape) if shape is None else tuple(shape), axes, value_type)
