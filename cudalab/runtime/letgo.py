"""A failed launch lets its arguments go.

A notebook keeps the last error (IPython's ``sys.last_value``) and goes on. The error's traceback keeps
every frame it passed through, and the stand-ins' launch frames (CuPy's ``RawKernel.__call__``, PyCUDA's
``Function.__call__``, the runtime's ``Kernel.launch``) hold the kernel's arguments: arrays that a later
cell's ``del`` could then not free, where real CuPy and PyCUDA launch from compiled code that keeps
nothing. ``lets_arguments_go`` wraps such an entry point: on a CudaError its own arguments are dropped, the
frames of cudalab's below it (finished by then) are cleared of their variables, and a context the error
hides (``raise ... from None``: the runtime's first raise, with its frames) is dropped. The traceback still
names every file and line.
"""
from __future__ import annotations

import functools

from ..errors import CudaError


def release(error: BaseException, below=None):
    """Clear the variables of cudalab's frames in ``error``'s traceback after ``below`` (a traceback
    entry, or None for all of them), and drop the contexts the error chain suppresses."""
    tb = error.__traceback__ if below is None else below.tb_next
    while tb is not None:
        frame = tb.tb_frame
        if str(frame.f_globals.get("__name__", "")).startswith("cudalab."):
            try:
                frame.clear()
            except RuntimeError:        # a frame still running (a generator, this call's callers)
                pass
        tb = tb.tb_next
    e = error
    while e is not None and e.__suppress_context__:
        e.__context__, e = None, e.__cause__


def lets_arguments_go(function):
    """``function`` (a launch entry point) raising CudaError without holding its arguments."""
    @functools.wraps(function)
    def launch(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except CudaError as e:
            args = kwargs = None        # noqa: F841
            release(e, below=e.__traceback__)
            raise
    return launch
