"""cupyx.scipy in cudalab's CuPy stand-in: only ``cupyx.scipy.fft`` (lessons time a planned FFT with
``get_fft_plan``); the other SciPy-like modules (ndimage, signal, sparse, special) are not stood in for."""
from . import fft  # noqa: F401


def __getattr__(name):
    raise AttributeError(f"cudalab's CuPy stand-in has no cupyx.scipy.{name}: it has cupyx.scipy.fft only. For "
                         "more, install the real CuPy on a GPU.")
