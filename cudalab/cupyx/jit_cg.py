"""``cupyx.jit.cg`` as a program imports it (``from cupyx.jit import cg``): CuPy's cooperative-group
names. They work inside a ``@jit.rawkernel()`` kernel only, where the kernel reads this module as
numba.cuda.cg and jit_groups answers each name; called on the host each one says so."""
from .jit_groups import memcpy_async, sync, this_grid, this_thread_block, wait, wait_prior  # noqa: F401

__all__ = ["this_grid", "this_thread_block", "sync", "wait", "wait_prior", "memcpy_async"]
