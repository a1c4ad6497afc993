"""A small PyCUDA for programs written for it, run on cudalab's emulator.

Courses and books that teach CUDA from Python (*Hands-On GPU Programming with Python and CUDA*,
PyCUDA's own examples, workshops' notebooks) write their kernels in CUDA C++ and launch them with
PyCUDA: ``SourceModule`` compiles them, ``gpuarray.to_gpu`` moves data, ``ElementwiseKernel`` and
``ReductionKernel`` generate kernels around a line of C. ``python -m cudalab.numba program.py`` (and
``CUDALAB_NUMBA=1``, or ``cudalab.numba.install()`` in a notebook) puts this package in PyCUDA's place
when PyCUDA is not installed, so such a program runs unchanged: its kernels, the generated ones too,
are compiled by cudalab and emulated; ``GPUArray`` is the CuPy stand-in's array (cudalab/cupy), so
what PyCUDA computes itself (``a * 2``, ``gpuarray.sum``) is numpy's answer over device memory.

Modules: ``pycuda.autoinit`` (the context), ``driver``, ``compiler``, ``gpuarray``, ``elementwise``,
``reduction``, ``scan``, ``cumath`` (numpy's functions), ``curandom`` (numpy's generator: the same
distributions, not cuRAND's sequence), ``tools``, ``characterize``. ``driver.module_from_file``/``module_from_buffer`` load
PTX (a cubin is machine code for a real GPU: refused, saying so). Not provided: OpenGL interop
(``pycuda.gl``), texture references (removed in CUDA 12) and ``pycuda.sparse``.
"""
from __future__ import annotations

import importlib
import sys
import types

import numpy as np

VERSION = (2025, 1, 2)
VERSION_STATUS = ""
VERSION_TEXT = "2025.1.2+cudalab"


def _module(name, doc, **names) -> types.ModuleType:
    m = types.ModuleType(name, doc)
    m.__dict__.update(names)
    return m


def _cumath():
    from ..runtime.arrays import DeviceArray
    from .gpuarray import _numpy

    def unary(function):
        """PyCUDA's ``cumath.f(array, stream_or_out=None, out=None, stream=None)``: the second
        positional argument is a Stream or the array to write into."""
        run = _numpy(function)

        def f(array, stream_or_out=None, **kwargs):
            out = kwargs.pop("out", None)
            if isinstance(stream_or_out, DeviceArray):
                out = stream_or_out
            return run(array) if out is None else run(array, out=out)
        f.__name__ = run.__name__
        return f

    names = {}
    for f in "fabs sqrt exp exp10 log log10 sin cos tan arcsin arccos arctan sinh cosh tanh floor ceil".split():
        names[f] = unary((lambda a, **k: np.power(10, a, **k)) if f == "exp10" else getattr(np, f))
    names["fmod"] = _numpy(np.fmod)
    names["modf"] = _numpy(np.modf)
    names["frexp"] = _numpy(np.frexp)
    # PyCUDA's kernel calls C's ldexp(x, e) with e converted to int, as C converts a float argument
    names["ldexp"] = _numpy(lambda x, e, **k: np.ldexp(x, np.trunc(e).astype(np.int32), **k))
    names.update(asin=names["arcsin"], acos=names["arccos"], atan=names["arctan"])
    return _module("pycuda.cumath", "numpy's functions over GPUArrays (cudalab's PyCUDA stand-in).", **names)


def _tools(driver):

    class DeviceData:
        """What PyCUDA's launch-shape helpers read of the device."""

        def __init__(self, dev=None):
            d = driver.Device(0)
            self.max_threads = d.get_attribute(driver.device_attribute.MAX_THREADS_PER_BLOCK)
            self.warp_size = d.get_attribute(driver.device_attribute.WARP_SIZE)
            self.thread_blocks_per_mp = 16
            self.warps_per_mp = d.get_attribute(driver.device_attribute.MAX_THREADS_PER_MULTIPROCESSOR) // 32
            self.registers = d.get_attribute(driver.device_attribute.MAX_REGISTERS_PER_BLOCK)
            self.shared_memory = d.get_attribute(driver.device_attribute.MAX_SHARED_MEMORY_PER_BLOCK)
            self.smem_granularity = 16
            self.smem_alloc_granularity = 128

        def align(self, nbytes, word_size=4):
            return (nbytes + self.smem_granularity * word_size - 1) // (self.smem_granularity * word_size) * \
                self.smem_granularity * word_size

    class OccupancyRecord:
        """PyCUDA's occupancy of one SM for a block of ``threads`` threads using ``shared_mem`` bytes of
        shared memory and ``registers`` registers per thread (0: not counted): ``tb_per_mp`` blocks,
        ``warps_per_mp`` warps, ``occupancy`` (their share of the SM's warps) and ``limited_by`` ("device",
        "warps", "regs" or "smem"). The numbers are cudalab's occupancy calculator's for the emulated
        device (its allocation units), where PyCUDA's tools use older GPUs' rules."""

        def __init__(self, devdata, threads, shared_mem=0, registers=0):
            from ..device.occupancy import occupancy
            o = occupancy((int(registers), int(shared_mem)), int(threads), curve=False)
            if o.active_blocks == 0:
                raise ValueError(f"a block of {threads} threads cannot run: {o.reason}")
            self.tb_per_mp, self.warps_per_mp, self.occupancy = o.active_blocks, o.active_warps, o.occupancy
            self.limited_by = {"blocks": "device", "warps": "warps", "registers": "regs",
                               "shared memory": "smem"}[o.limiter]
            named = {"blocks": "device", "warps": "warps", "registers": "regs", "shared memory": "smem"}
            counted = ({"blocks", "warps"} | ({"registers"} if registers else set())
                       | ({"shared memory"} if shared_mem else set()))
            self.tb_per_mp_limits = [(n, named[k]) for k, n in o.block_limits.items() if k in counted]

    kernels = importlib.import_module(f"{__name__}.kernels")
    mempool = importlib.import_module(f"{__name__}.mempool")

    def dtype_to_ctype(dtype, with_fp_tex_hack=False):
        return kernels.c_type(dtype)

    def make_default_context(ctx_maker=None):
        return driver.Device(0).make_context()

    def context_dependent_memoize(f):
        import functools
        return functools.lru_cache(maxsize=None)(f)

    def init_cuda_context_fixture():
        """PyCUDA's pytest fixture body (``yield from init_cuda_context_fixture()``): a context for the
        test, popped after it, as the test suites of PyCUDA and the packages built on it use it."""
        driver.init()
        context = make_default_context()
        try:
            yield
        finally:
            context.pop()

    def mark_cuda_test(test):
        """PyCUDA's older decorator for a test that needs a context: one made for the call, popped after."""
        import functools

        @functools.wraps(test)
        def with_context(*args, **kwargs):
            driver.init()
            context = make_default_context()
            try:
                return test(*args, **kwargs)
            finally:
                context.pop()
        return with_context

    return _module("pycuda.tools", "PyCUDA's helpers (cudalab's PyCUDA stand-in).", DeviceData=DeviceData,
                   OccupancyRecord=OccupancyRecord,
                   dtype_to_ctype=dtype_to_ctype, make_default_context=make_default_context,
                   clear_context_caches=lambda: None, context_dependent_memoize=context_dependent_memoize,
                   init_cuda_context_fixture=init_cuda_context_fixture, mark_cuda_test=mark_cuda_test,
                   DeviceMemoryPool=mempool.DeviceMemoryPool, PageLockedMemoryPool=mempool.PageLockedMemoryPool,
                   bitlog2=mempool.bitlog2, register_dtype=kernels.register_dtype,
                   get_or_register_dtype=kernels.get_or_register_dtype,
                   VectorArg=kernels.VectorArg, ScalarArg=kernels.ScalarArg)


def _characterize(driver):
    """pycuda.characterize: what the device and the compiler make of types, asked of the emulated device."""
    import functools
    import sys as _sys

    def platform_bits():
        return 64 if _sys.maxsize > 2 ** 32 else 32

    def has_stack():
        return driver.Context.get_device().compute_capability() >= (2, 0)

    def has_double_support():
        return driver.Context.get_device().compute_capability() >= (1, 3)

    @functools.lru_cache(maxsize=None)
    def sizeof(type_name, preamble=""):
        """The device compiler's ``sizeof(type_name)`` (after ``preamble``), measured by a one-thread kernel."""
        from .compiler import SourceModule
        from .gpuarray import empty
        kernel = SourceModule(f"{preamble}\nextern \"C\" __global__ void size_of(size_t *out) "
                              f"{{ *out = sizeof({type_name}); }}", no_extern_c=True).get_function("size_of")
        out = empty((), np.uintp)
        kernel(out, block=(1, 1, 1), grid=(1, 1))
        return int(out.get())

    return _module("pycuda.characterize", _characterize.__doc__, platform_bits=platform_bits, has_stack=has_stack,
                   has_double_support=has_double_support, sizeof=sizeof)


def modules() -> dict:
    """The names under which Python finds this stand-in once cudalab.numba.install() puts it in place."""
    driver = importlib.import_module(f"{__name__}.driver")
    compiler = importlib.import_module(f"{__name__}.compiler")
    gpuarray = importlib.import_module(f"{__name__}.gpuarray")
    kernels = importlib.import_module(f"{__name__}.kernels")
    elementwise = _module("pycuda.elementwise", kernels.__doc__, ElementwiseKernel=kernels.ElementwiseKernel,
                          VectorArg=kernels.VectorArg, ScalarArg=kernels.ScalarArg)
    reduction = _module("pycuda.reduction", kernels.__doc__, ReductionKernel=kernels.ReductionKernel)
    scan = _module("pycuda.scan", kernels.__doc__, InclusiveScanKernel=kernels.InclusiveScanKernel,
                   ExclusiveScanKernel=kernels.ExclusiveScanKernel)
    package = sys.modules[__name__]
    # pycuda.autoinit is a module of this package (autoinit.py), run when a program imports it
    found = {"pycuda": package, "pycuda.driver": driver, "pycuda.compiler": compiler,
             "pycuda.gpuarray": gpuarray, "pycuda.elementwise": elementwise, "pycuda.reduction": reduction,
             "pycuda.scan": scan, "pycuda.cumath": _cumath(),
             "pycuda.curandom": importlib.import_module(f"{__name__}.curandom"),
             "pycuda.tools": _tools(driver), "pycuda.characterize": _characterize(driver)}
    for name, module in found.items():          # ``import pycuda.driver as drv``, ``from pycuda import gpuarray``
        if name != "pycuda":
            setattr(package, name.split(".", 1)[1], module)
    return found
