"""A drop-in for numba.cuda: after ``cudalab.numba.install()``, an unmodified numba.cuda program or
notebook runs its kernels on cudalab's emulator (as ``NUMBA_ENABLE_CUDASIM=1`` would, but faithful
and fast) with the profile, the sanitizers and the widgets at hand.

    import cudalab.numba; cudalab.numba.install()     # first, before ``from numba.cuda import jit``
    python -m cudalab.numba program.py args...         # an unmodified script
    CUDALAB_NUMBA=1 (environment) at ``import cudalab`` # the same as install()

Patched on the ``numba.cuda`` module: ``jit`` (kernels become cudalab.jit kernels, device functions
stay numba's), the device arrays (``to_device``, ``device_array``, ``device_array_like``,
``pinned_array``), ``stream``/``default_stream``/``event``, ``synchronize``, ``is_available`` and
``get_current_device`` (the selected device profile). Code that imported a name before install()
keeps numba's. ``uninstall()`` puts numba's own back.
"""
from __future__ import annotations

import runpy
import sys
from dataclasses import dataclass

import numpy as np

_SAVED: dict = {}


@dataclass(frozen=True)
class EmulatedDevice:
    """What ``numba.cuda.get_current_device()`` tells a program: the selected device profile."""

    name: str
    compute_capability: tuple
    id: int = 0

    def __getattr__(self, name: str) -> int:
        """numba's device attributes (``MULTIPROCESSOR_COUNT``, ``MAX_THREADS_PER_BLOCK``, ...): the
        selected profile's cudaDevAttr values, as cudalab.device_attribute and whole programs see them."""
        from .runtime.core.properties import ATTRIBUTE_NAMES
        from .runtime.streams import device_attribute
        key = name.replace("_", "").lower()
        for attr in ATTRIBUTE_NAMES:
            if attr.lower() == key:
                return device_attribute(attr)
        raise AttributeError(f"the emulated device has no attribute {name!r} (numba's names are cudaDevAttr names "
                             "in capitals, like MULTIPROCESSOR_COUNT)")


def _current_device():
    from .device import current
    p = current()
    return EmulatedDevice(p.gpu or p.name, tuple(p.cc))


def _replacements() -> dict:
    from . import pykernels, synchronize
    from .pykernels.compiler import numpy_compat
    from .runtime import arrays, streams
    numpy_compat()
    return {
        "jit": pykernels.jit,
        "to_device": lambda ary, stream=0, copy=True, to=None: arrays.to_device(ary, stream=stream),
        "device_array": lambda shape, dtype=np.float64, strides=None, order="C", stream=0:
            arrays.device_array(shape, dtype, stream=stream),      # numba's default dtype is float64
        "device_array_like": lambda ary, stream=0: arrays.device_array_like(ary, stream=stream),
        "pinned_array": lambda shape, dtype=np.float64, strides=None, order="C": streams.pinned_array(shape, dtype),
        "stream": streams.stream,
        "default_stream": streams.default_stream,
        "event": lambda timing=True: streams.event(timing),
        "synchronize": synchronize,
        "is_available": lambda: True,
        "get_current_device": _current_device,
    }


def install():
    """Make ``numba.cuda`` launch on cudalab (see the module docstring); calling it twice is harmless."""
    from numba import cuda
    for name, new in _replacements().items():
        _SAVED.setdefault(name, getattr(cuda, name))
        setattr(cuda, name, new)


def uninstall():
    """Give ``numba.cuda`` its own functions back."""
    from numba import cuda
    for name, old in _SAVED.items():
        setattr(cuda, name, old)
    _SAVED.clear()


def installed() -> bool:
    return bool(_SAVED)


def main(argv=None):
    """``python -m cudalab.numba program.py args...``: run an unmodified numba.cuda program on cudalab."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write("usage: python -m cudalab.numba program.py [args...]\n")
        return 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
