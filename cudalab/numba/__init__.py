"""A drop-in for numba.cuda: after ``cudalab.numba.install()``, an unmodified numba.cuda program or
notebook runs its kernels on cudalab's emulator (as ``NUMBA_ENABLE_CUDASIM=1`` would, but faithful
and fast) with the profile, the sanitizers and the widgets at hand.

    import cudalab.numba; cudalab.numba.install()     # first, before ``from numba.cuda import jit``
    python -m cudalab.numba program.py args...         # an unmodified script
    CUDALAB_NUMBA=1 python program.py                  # the same, for a program that imports numba only

Patched on the ``numba.cuda`` module: ``jit`` (kernels become cudalab.jit kernels, device functions
stay numba's) and numba's host API (pykernels/host.py): the device arrays (``to_device``,
``device_array``..., numba's DeviceNDArray with slicing and views: pykernels/devicearray.py),
pinned, mapped and managed host arrays, streams and events, ``synchronize``, ``detect``,
``get_current_device``/``current_context`` (the selected device profile). Code that imported a
name before install() keeps numba's. Launches warn as numba's do (a grid under 128 blocks, a host array
copied in and out). ``uninstall()`` puts numba's own back. CuPy, unless a program
imported it already, is cudalab's stand-in (cudalab/cupy): its arrays live in the emulator's memory;
PyCUDA, where it is not installed, is cudalab's stand-in too (cudalab/pycuda: SourceModule and the
generated kernels emulated, GPUArray the CuPy stand-in's array);
the ``nvtx`` package's annotations, where it is not installed, mark nothing (cudalab/nvtx.py).

The environment variable reaches a program that never imports cudalab through ``cudalab-numba.pth``,
which pip puts into site-packages (setup.py says how): Python runs a ``.pth`` file's import lines at
every start, and that line imports cudalab when CUDALAB_NUMBA=1 (otherwise it costs nothing). numba
itself has no hook early enough: its ``numba_extensions`` entry points run at a kernel's first
compile, after ``@cuda.jit`` has already made numba's own dispatcher.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import runpy
import sys

_SAVED: dict = {}

# numba.cuda's host functions that cudalab answers (cudalab/pykernels/host.py has them under numba's names)
_HOST_NAMES = ("to_device", "device_array", "device_array_like", "pinned_array", "pinned_array_like",
               "mapped_array", "mapped_array_like", "managed_array", "pinned", "mapped", "stream", "default_stream",
               "external_stream", "event", "event_elapsed_time", "synchronize", "get_current_device",
               "list_devices", "select_device", "current_context", "close", "detect", "defer_cleanup",
               "profile_start", "profile_stop", "profiling", "require_context", "is_cuda_array", "as_cuda_array",
               "from_cuda_array_interface", "gpus", "compile_ptx", "compile_all", "compile_ptx_for_current_device",
               "compile_for_current_device", "is_float16_supported", "is_bfloat16_supported")

# A program run unmodified was written for a GPU, where its kernels take what they take: install()
# gives each kernel this long on the emulator (the numba documentation's largest examples need
# 20-37 s) instead of the 10 s that stops a runaway kernel in a notebook; a minute still answers a
# `while True` in a notebook cell in reasonable time. ``python -m cudalab.numba`` runs a whole script,
# where nobody waits at a cell, and gives its kernels SCRIPT_WATCHDOG_SECONDS.
WATCHDOG_SECONDS = 60.0
SCRIPT_WATCHDOG_SECONDS = 600.0


def _replacements() -> dict:
    from ..pykernels import dispatcher, host
    from ..pykernels.compiler import numpy_compat
    numpy_compat()
    # functions are wrapped; ``gpus`` is numba's device list (``len(cuda.gpus)``, ``cuda.gpus[0]``,
    # ``cuda.gpus.current``), an object that a wrapper function would hide
    out = {name: host.fork_checked(getattr(host, name), name) if inspect.isfunction(getattr(host, name))
           else getattr(host, name) for name in _HOST_NAMES}
    out.update(jit=dispatcher.numba_jit, compile=host.compile_code, is_available=lambda: True,
               legacy_default_stream=host.default_stream, per_thread_default_stream=host.default_stream)
    return out


def _method_patches() -> list:
    """(class or module, name, replacement): numba's CUDA ufuncs broadcast their inputs by wrapping the
    memory in numba's own device array; over cudalab's memory they take cudalab's views. numba's
    driver object answers its version and availability for the emulated driver. numba.cuda.compiler and
    numba's dispatchers (device functions) compile for the selected profile, as numba.cuda's names do."""
    import numba.cuda.compiler as compiler
    import numba.cuda.dispatcher as dispatcher
    from numba.cuda.codegen import CUDACodeLibrary
    from numba.cuda.cudadrv import devicearray
    from numba.cuda.cudadrv import driver as numba_driver
    from numba.cuda.cudadrv.driver import Driver
    from numba.cuda.kernels import transpose
    from numba.cuda.vectorizers import CUDAGeneralizedUFunc, CUDAUFuncMechanism
    from ..pykernels import host, kernels, nrt     # nrt: numba's device runtime's statistics on cudalab
    return [(CUDAUFuncMechanism, "broadcast_device", host.ufunc_broadcast_device),
            (CUDAGeneralizedUFunc, "_broadcast_scalar_input", host.gufunc_broadcast_scalar_input),
            (CUDAGeneralizedUFunc, "_broadcast_add_axis", host.gufunc_broadcast_add_axis),
            # a program's set-up cell prints the driver's version: the emulated driver's, no libcuda asked
            (Driver, "get_version", host.driver_version),
            (Driver, "is_available", property(lambda driver: True)),
            (numba_driver, "Device", host.DriverDevice),        # cuda.cudadrv.driver.Device(0).name
            # numba's compiler module (*_for_current_device, compile_ptx without cc) and its dispatchers
            # (device functions: compile_device, inspect_asm) ask the profile for the GPU
            (compiler, "get_current_device", host.get_current_device),
            (dispatcher, "get_current_device", host.get_current_device),
            (CUDACodeLibrary, "_ensure_cc", host.code_library_cc),       # compile_ptx without cc
            # numba's ready-made transpose asks numba's driver for the GPU and allocates numba's arrays
            (transpose, "transpose", kernels.transpose),
            # numba's device-array module functions allocate through numba's driver
            (devicearray, "from_array_like", host.from_array_like),
            (devicearray, "from_record_like", host.from_record_like),
            (devicearray, "auto_device", host.auto_device)] + nrt.patches()


def install(watchdog: float | None = WATCHDOG_SECONDS):
    """Make ``numba.cuda`` launch on cudalab (see the module docstring); calling it twice is harmless.
    ``watchdog``: seconds a kernel may run before the emulator stops it (None: leave it as it is)."""
    from numba import cuda
    from ..runtime import device
    for name, new in _replacements().items():
        _SAVED.setdefault(name, getattr(cuda, name, None))
        setattr(cuda, name, new)
    for cls, name, new in _method_patches():
        _SAVED.setdefault((cls, name), cls.__dict__[name])
        setattr(cls, name, new)
    from ..pykernels import dispatcher          # numba's performance warnings, as numba shows them
    _SAVED.setdefault((dispatcher, "NUMBA_WARNINGS"), dispatcher.NUMBA_WARNINGS)
    dispatcher.NUMBA_WARNINGS = True
    stand_ins = {}
    if "cupy" not in sys.modules:       # CuPy's arrays must live in the emulator's memory too (cudalab/cupy)
        from .. import cupy
        stand_ins.update(cupy.modules())
    if "pycuda" not in sys.modules and not _findable("pycuda"):     # PyCUDA programs (cudalab/pycuda)
        from .. import pycuda
        stand_ins.update(pycuda.modules())
        for name in ("pycuda.autoinit", "pycuda.autoprimaryctx"):          # imported (and run) by the program
            _SAVED.setdefault(("modules", name), None)
    if "nvtx" not in sys.modules and importlib.util.find_spec("nvtx") is None:     # NVIDIA courses' annotations
        from .. import nvtx
        stand_ins["nvtx"] = nvtx
    for name, module in stand_ins.items():
        _SAVED.setdefault(("modules", name), None)
        sys.modules[name] = module
    if watchdog is not None:
        _SAVED.setdefault("watchdog", device.WATCHDOG_SECONDS)
        device.set_watchdog(max(watchdog, device.WATCHDOG_SECONDS))


def _findable(name) -> bool:
    """Whether a top-level package is installed (asked of the import system's finders but ours, which
    would run install() again)."""
    for finder in sys.meta_path:
        if not isinstance(finder, _InstallAfterImport) and hasattr(finder, "find_spec") \
                and finder.find_spec(name, None) is not None:
            return True
    return False


class _InstallAfterImport:
    """A meta path finder that finds nothing itself: when ``numba.cuda`` is about to load, it lets the
    other finders find it (numba-cuda's redirector among them) and runs install() once the module has
    executed. The loader itself is kept, so ``importlib.resources`` on numba.cuda still works. A
    program that imports CuPy first gets install() at once, and with it cudalab's CuPy stand-in."""

    def find_spec(self, name, path=None, target=None):
        if name in ("cupy", "cupyx", "pycuda"):
            install()
            return importlib.util.spec_from_loader(name, _Loaded(sys.modules[name])) if name in sys.modules else None
        if name != "numba.cuda":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return None
        exec_module = spec.loader.exec_module

        def exec_then_install(module):
            exec_module(module)
            install()
        spec.loader.exec_module = exec_then_install
        return spec


class _Loaded:
    """A loader that hands the import system a module that is loaded already (the CuPy stand-in)."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


def install_on_import():
    """install() now if numba.cuda is loaded, else as soon as a program imports it: what
    CUDALAB_NUMBA=1 does at ``import cudalab``, so that importing cudalab alone never loads numba."""
    if "numba.cuda" in sys.modules:
        install()
    elif not any(isinstance(f, _InstallAfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _InstallAfterImport())


def uninstall():
    """Give ``numba.cuda`` its own functions back."""
    from numba import cuda
    from ..runtime import device
    if "watchdog" in _SAVED:
        device.set_watchdog(_SAVED.pop("watchdog"))
    for name, old in _SAVED.items():
        if name[0] == "modules":
            sys.modules.pop(name[1], None)
            continue
        owner, name = name if isinstance(name, tuple) else (cuda, name)
        if old is None:
            delattr(owner, name)
        else:
            setattr(owner, name, old)
    _SAVED.clear()
    from numba.cuda.memory_management.nrt import rtsys
    rtsys.close()           # its statistics' module and structure were cudalab's


def installed() -> bool:
    return bool(_SAVED)


def main(argv=None):
    """``python -m cudalab.numba program.py args...``: run an unmodified numba.cuda program on cudalab."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        sys.stderr.write("usage: python -m cudalab.numba program.py [args...]\n")
        return 2
    install(watchdog=SCRIPT_WATCHDOG_SECONDS)
    sys.argv = list(argv)
    # as ``python program.py`` does: the program's folder comes first on the import path, so it
    # imports the modules next to it (a course's lib.py) from wherever it is started
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except Exception as e:
        # as ``python program.py`` shows it: the traceback starts at the program, not in runpy
        tb, program = e.__traceback__, os.path.abspath(argv[0])
        while tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename) != program:
            tb = tb.tb_next
        if tb is None:
            raise
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        return 1
    return 0

