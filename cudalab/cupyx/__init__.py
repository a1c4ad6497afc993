"""cupyx, with the parts course programs use next to numba.cuda: ``cupyx.profiler`` and ``cupyx.jit``
(see cudalab.cupy)."""
from . import jit, profiler  # noqa: F401
