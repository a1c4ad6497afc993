"""cupyx, with the one part course programs use with numba.cuda: ``cupyx.profiler`` (see cudalab.cupy)."""
from . import profiler  # noqa: F401
