"""CUDA's error codes for whole programs: the runtime core's table (``cudalab.runtime.core.errors``)."""
from ..runtime.core.errors import CODE, ERRORS, STICKY, c_table, code_of  # noqa: F401
