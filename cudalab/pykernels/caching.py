"""``@cuda.jit(cache=True)``: a kernel's compiled PTX kept on disk, where numba keeps its cache.

numba-cuda writes a kernel compiled with ``cache=True`` to ``__pycache__`` beside the program (an index
``<module>.<function>-<line>.py311.nbi`` and one ``.nbc`` data file per signature), and a later run
loads it instead of compiling again. cudalab does the same with its own compile result (the PTX, the
name of its entry, numba's exception table for ``debug=True``), through numba's own cache machinery:
the same folders (``NUMBA_CACHE_DIR`` included), file names, and invalidation (the source file's time
stamp and size, the function's bytecode and closure, numba-cuda's version). The key adds the target's
compute capability and the options that change the PTX, so a cache made for another profile or with
other options is not used. A cache that cannot be written (a read-only folder) or read is no error:
the kernel compiles, as numba's does.
"""
from __future__ import annotations

import dataclasses
import pickle

from numba.cuda.core.caching import Cache, CacheImpl

from .compiler import CompiledKernel, python_source


class _Target:
    """What numba's index key asks of a code generator: a tuple naming the code the cache holds."""

    def __init__(self, magic: tuple):
        self._magic = magic

    def magic_tuple(self) -> tuple:
        return self._magic


class _PtxCacheImpl(CacheImpl):
    """A CompiledKernel to and from the data numba's cache files pickle (its source text is not kept:
    it is read again from the file the PTX's line numbers count in)."""

    def reduce(self, compiled: CompiledKernel) -> dict:
        data = dataclasses.asdict(compiled)
        data.pop("source")
        return data

    def rebuild(self, target_context, data: dict) -> CompiledKernel:
        return CompiledKernel(source=python_source(data["filename"]), **data)

    def check_cachable(self, compiled) -> bool:
        return True


class KernelCache(Cache):
    """One Python kernel's cache: ``load(argtypes, magic)`` gives the CompiledKernel kept for those
    numba argument types and that target (None if there is none), ``save`` keeps one."""

    _impl_class = _PtxCacheImpl

    def load(self, argtypes: tuple, magic: tuple):
        with self._guard_against_spurious_io_errors():
            if self._enabled:
                data = self._cache_file.load(self._index_key(argtypes, _Target(magic)))
                return None if data is None else self._impl.rebuild(None, data)
        return None

    def save(self, argtypes: tuple, magic: tuple, compiled: CompiledKernel):
        try:
            self.save_overload(argtypes, _Saved(compiled, _Target(magic)))
        except (OSError, pickle.PicklingError, TypeError, AttributeError):
            pass                # a folder that cannot be written, an exception argument that does not
            #                     pickle: the kernel ran compiled, and the next run compiles again

    def _save_overload(self, sig, data):
        if not self._enabled:
            return
        self._impl.locator.ensure_cache_path()
        self._cache_file.save(self._index_key(sig, data.codegen), self._impl.reduce(data.compiled))


@dataclasses.dataclass
class _Saved:
    compiled: CompiledKernel
    codegen: _Target


def cache_for(py_func):
    """The KernelCache of a Python function, or None where numba finds no place to keep one (a
    function typed at an interactive prompt): numba raises there, at the decorator; cudalab compiles
    without a cache."""
    try:
        return KernelCache(py_func)
    except RuntimeError:
        return None
