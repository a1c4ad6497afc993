"""``@cudalab.jit``: a Python kernel compiled lazily, once per argument types (as numba.cuda's
dispatcher does), each specialization a runtime Kernel over its own PTX.

A specialization (``PyKernel``) is an ordinary ``runtime.module.Kernel``: the same launch checks,
copies of numpy arrays in and back, LaunchRecord, observers, sanitizers, streams, timeline and GPU
backend. It differs only in how arguments become parameter bytes (numba's flattened array structs,
arguments.py); its resources come from its PTX (``source_language``: device/resources.py assembles
the PTX, there being no C++ to recompile).
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
import numbers
import os
import re

import numpy as np

from ..errors import CudaError, KernelError, LaunchError, UnsupportedError
from ..runtime.module import Kernel, Module
from . import arguments, nrt
from .compiler import compile_kernel, nrt_enabled, target_cc


def python_words(text: str) -> str:
    """A message of the emulator's, with numba.cuda's name for the barrier a Python kernel calls."""
    return text.replace("__syncthreads()", "cuda.syncthreads()")


class ArgumentTypeError(LaunchError, TypeError):
    """Arguments that fit none of the kernel's signatures, or too many or too few, or a launch shape
    that is not whole numbers: numba raises a TypeError for these, so a program's ``except TypeError``
    catches this one as on a GPU."""


class ConfigurationError(LaunchError, ValueError):
    """A launch shape of more than 3 dimensions, or a kernel called without one: numba's ValueError."""


class ResourceQueries:
    """numba's questions to a kernel about what its compiled code uses, asked of a dispatcher (for
    each signature, or one) or of one specialization (``kernel.specialize(args)``); ``_each`` says
    which compiled kernels answer."""

    def get_regs_per_thread(self, signature=None):
        return self._each(lambda k: k.regs_per_thread, signature, specialized_answers_one=True)

    def get_shared_mem_per_block(self, signature=None):
        return self._each(lambda k: k.shared_mem_per_block, signature, specialized_answers_one=True)

    def get_local_mem_per_thread(self, signature=None):
        return self._each(lambda k: k.local_mem_per_thread, signature, specialized_answers_one=True)

    def get_const_mem_size(self, signature=None):
        return self._each(lambda k: k.const_mem_size, signature, specialized_answers_one=True)

    def get_max_threads_per_block(self, signature=None):
        return self._each(lambda k: k.max_threads_per_block, signature, specialized_answers_one=True)


class PyKernel(ResourceQueries, Kernel):
    """One specialization of a Python kernel: numba types -> PTX -> a launchable Kernel."""

    source_language = "python"
    specialized = True      # what numba's ``specialize()`` returns: a kernel of one signature

    def _each(self, what, signature=None, specialized_answers_one=False):
        return what(self)

    def __init__(self, module: Module, name: str, argtypes: tuple, dispatcher=None):
        super().__init__(module, name, module.compiled.lowered[name])
        self.argtypes = argtypes
        self.dispatcher = dispatcher    # the @jit function it specializes (numba's inspect_* go through it)
        self.ctypes = None          # numba's mangled names are not C++ signatures

    def __repr__(self):
        return f"<cudalab Python kernel {self.name}({', '.join(map(str, self.argtypes))})>"

    # numba's _Kernel: what the compiled kernel uses, for the selected device profile
    regs_per_thread = property(lambda self: self.resources().registers)
    shared_mem_per_block = property(lambda self: self.resources().static_shared)
    local_mem_per_thread = property(lambda self: self.resources().local)

    @property
    def const_mem_size(self) -> int:
        """Bytes of the module's ``.const`` arrays (``cuda.const.array_like``); other constants
        numba keeps in the instructions."""
        from ..ptx.parser import parse
        return sum(v.size for v in parse(self.module.ptx).variables.values() if v.space == "const")

    @property
    def max_threads_per_block(self) -> int:
        from ..device import current
        return min(current().max_threads_per_block, self.resources().max_threads or 1024)

    def inspect_sass(self) -> str:
        """numba's SASS listing: this kernel's PTX assembled for the selected profile, shown by NVIDIA's
        nvdisasm through numba's own runner (whose error says how to install nvdisasm if it is missing)."""
        from types import SimpleNamespace
        from numba.cuda.codegen import run_nvdisasm
        from ..device import current
        from ..device.resources import ptx_cubin
        return run_nvdisasm(SimpleNamespace(code=ptx_cubin(self.module.ptx, current().arch)), ["-gi"])

    @property
    def cooperative(self) -> bool:
        """numba launches a kernel that syncs its grid (``cuda.cg.this_grid().sync()``) cooperatively, so
        a grid with more blocks than fit on the device at once is refused instead of hanging."""
        return "cudaCGGetIntrinsicHandle" in self.module.ptx

    def max_cooperative_grid_blocks(self, blockdim, dynsmemsize=0) -> int:
        """The most blocks of ``blockdim`` threads a cooperative launch (grid.sync()) may have: as many
        as are resident on all SMs at once."""
        from ..device import current
        from ..device.occupancy import occupancy
        threads = blockdim if isinstance(blockdim, int) else functools.reduce(lambda x, y: x * y, blockdim)
        return occupancy(self, threads, dynsmemsize, curve=False).active_blocks * (current().sms or 1)

    def inspect_asm(self, cc=None) -> str:
        return self.module.ptx

    def inspect_types(self, file=None):
        self.dispatcher.inspect_types(file)

    def inspect_llvm(self):
        return self.dispatcher.inspect_llvm(self.argtypes)

    def launch(self, grid, block, args=(), **options):
        # a 0-d host array (numba passes it as an array) is copied in and back as its one-element view;
        # a Fortran-ordered one goes to the device in Fortran order (the kernel was typed 'F')
        # a record (numba passes its address) goes in a one-element array the kernel may write
        from .host import to_device
        if self.cooperative:
            self._check_cooperative_grid(grid, block, options.get("shared", 0))
        fortran = {k: to_device(a) for k, a in enumerate(args) if arguments.is_fortran(a)}
        records = {k: np.array([a], a.dtype) for k, a in enumerate(args) if isinstance(a, np.void)}
        launched = tuple(fortran.get(k, records.get(k, a.reshape(1) if isinstance(a, np.ndarray) and a.ndim == 0
                                                    else a)) for k, a in enumerate(args))
        if self.module.compiled.exceptions is not None:
            self._error_word("errcode").copy_to_device(np.zeros(1, np.uint32))
        try:
            record = super().launch(grid, block, launched, **options)
            if self.module.compiled.exceptions is not None:
                self._raise_recorded_exception()
            return record
        finally:
            for k, d in fortran.items():
                if args[k].flags.writeable:
                    d.copy_to_host(args[k])
                d.free()
            for k, held in records.items():          # a record read from an array is a view of it
                for field in held.dtype.names:
                    args[k][field] = held[0][field]

    def _check_cooperative_grid(self, grid, block, shared):
        """numba launches through cuda.core, which refuses a cooperative grid that cannot be resident at
        once with a ValueError (measured on an H200): the same words here, and what to do."""
        from ..runtime.launch import dim3
        g, b = dim3(grid, "grid", self.name), dim3(block, "block", self.name)
        limit = self.max_cooperative_grid_blocks(b, shared)
        if g[0] * g[1] * g[2] > limit:
            raise ConfigurationError(
                f"The specified grid size ({g[0]} * {g[1]} * {g[2]}) exceeds the limit ({limit}): {self.name} syncs "
                "its grid (cuda.cg.this_grid().sync()), so every block must be resident at once. Launch at most "
                f"kernel.max_cooperative_grid_blocks(block) = {limit} blocks and let each thread loop over more "
                "elements.", "cudaErrorCooperativeLaunchTooLarge")

    def _error_word(self, what: str):
        """One of the words a debug kernel of numba's records its first exception in: ``errcode``,
        ``tidx``..``ctaidz`` (module globals named after the kernel)."""
        return self.module.get_global(f"{self.mangled}__{what}__", dtype=np.uint32)

    def _raise_recorded_exception(self):
        """numba's report of an exception a thread raised in a ``debug=True`` kernel: its class and
        arguments, prefixed with where (function, file, line) and which thread (tid, ctaid; z, y, x)."""
        code = int(self._error_word("errcode").copy_to_host()[0])
        if code == 0:
            return
        cls, args, loc = self.module.compiled.exceptions.get(
            code, (SystemError, (f"unknown error {code} in native function",), None))
        tid = [int(self._error_word("tid" + a).copy_to_host()[0]) for a in "zyx"]
        ctaid = [int(self._error_word("ctaid" + a).copy_to_host()[0]) for a in "zyx"]
        where = "" if loc is None else f"In function {loc[0]!r}, file {os.path.abspath(loc[1])}, line {loc[2]}, "
        prefix = f"{where}tid={tid} ctaid={ctaid}"
        args = (f"{prefix}: {args[0]}", *args[1:]) if args else (prefix,)
        exc = cls(*args)
        exc.raised_in_kernel = True     # told at the launch line, as cudalab's own errors are
        raise exc

    def _pack(self, args, pointer_of) -> bytes:
        if len(args) != len(self.argtypes):
            raise LaunchError(f"{self.name} takes {len(self.argtypes)} argument{'s' * (len(self.argtypes) != 1)}, "
                              f"but {len(args)} {'were' if len(args) != 1 else 'was'} given.", "cudaErrorInvalidValue")
        from ..runtime import device as devices
        on_emulator = devices.current().kind == "emu"
        values = []
        for k, (a, t) in enumerate(zip(args, self.argtypes)):
            if on_emulator and arguments.cuda_array_interface(a) is not None and pointer_of(a) is None:
                raise LaunchError(f"argument {k + 1} of {self.name} is an array in a real GPU's memory "
                                  f"({type(a).__name__}); the emulator cannot read it. Pass a numpy array or a "
                                  "cudalab device array (cudalab.numba.install() makes numba.cuda.to_device "
                                  "give those).", "cudaErrorInvalidValue")
            if isinstance(a, arguments.Typed):
                a, t = a.value, a.type
            arguments.flatten(a, t, pointer_of, values)
        return arguments.pack(self.name, self.func.params, values)

    def _run_emu(self, *args, **kwargs):
        try:
            return super()._run_emu(*args, **kwargs)
        except KernelError as e:     # the sanitizers speak C++: say it as numba.cuda does
            findings = [dataclasses.replace(f, message=python_words(f.message)) for f in e.findings]
            raise KernelError(self._quoting_line(python_words(e.args[0])), e.code, findings) from None

    def _worded(self, message: str) -> str:
        return self._quoting_line(python_words(message))

    def _quoting_line(self, message: str) -> str:
        """'at line 7 in kernel add' followed by line 7 itself, as Python's tracebacks quote a line."""
        lines = self.module.compiled.source.splitlines()

        def quoted(m):
            n = int(m.group(1))
            return m.group(0) + (f":  {lines[n - 1].strip()}" if 0 < n <= len(lines) else "")
        return re.sub(r"at line (\d+) in kernel \w+", quoted, message, count=1)

    def _run_gpu(self, dev, gmod, g, b, shared, args, copies, rec, cluster=None, kparams=None):
        # numba's ABI passes each array as a dozen parameters: always the packed buffer
        rec.gpu_time_ms = gmod.launch_packed(self.mangled, g, b, shared, kparams, cluster=cluster)


class Dispatcher(ResourceQueries):
    """A Python kernel: ``kernel[grid, block](*args)``, ``kernel[grid, block, stream, shared](*args)``.

    Each new combination of argument types compiles once (``specialize``); with signatures given
    (``@cudalab.jit("void(float32[:], float32[:])")``) those are compiled at once and launches must
    fit one of them, as in numba."""

    warns_as_numba = True       # numba's performance warnings (NUMBA_WARNINGS); CuPy's Python kernels have none

    def __init__(self, py_func, signatures=(), fastmath=False, link=(), specialized=False, launch_bounds=None,
                 debug=False, opt=None, extensions=None, returns_record=True, cache=False):
        self.py_func = py_func
        # numba's cache=True: compiled PTX kept in __pycache__ between runs (pykernels/caching.py)
        self.cache = bool(cache)
        self._cache = None
        self._cache_hits, self._cache_misses = collections.Counter(), collections.Counter()    # numba's stats
        if self.cache:
            from .caching import cache_for
            self._cache = cache_for(py_func)
        # what a launch returns: cudalab's LaunchRecord (``@cudalab.jit``, whose lessons read it), or
        # None, as numba.cuda's launch does (numba.cuda.jit under install(): a program compares results,
        # a notebook cell ending in a launch shows nothing); cudalab.last_launch() has the record then too
        self.returns_record = bool(returns_record)
        # numba's dispatcher extensions: objects whose prepare_args(ty, val, stream=, retr=) turn a launch's
        # argument into what the kernel gets (a library's object into its device array), last one first
        self.extensions = list(extensions or [])
        self.opt = opt              # numba's opt= (None: numba's default, optimized)
        self._specialized = specialized
        self.launch_bounds = launch_bounds
        self.debug = bool(debug)
        self.fastmath = fastmath
        self.link = tuple(link or ())
        self._kernels: dict = {}
        self._signatures: list = []
        self._as_device = None
        functools.update_wrapper(self, py_func)
        for sig in signatures:
            self._signatures.append(self._compile(_argtypes_of(sig)))

    @property
    def name(self):
        return self.py_func.__name__

    @property
    def _numba_type_(self):
        """What numba types this kernel as where another kernel calls it: numba-cuda compiles any of its
        dispatchers, a kernel's too, as a device function for such a call (``get_call_template``), so
        a helper written with plain ``@cuda.jit`` that returns a value is called as on a GPU."""
        if self._as_device is None:
            self._as_device = _device_function(self.py_func, fastmath=self.fastmath, link=self.link,
                                               debug=self.debug, opt=self.opt)
        return self._as_device._numba_type_

    def __repr__(self):
        return f"<cudalab Python kernel {self.name}>"

    def _compile(self, argtypes: tuple) -> PyKernel:
        key = (argtypes, target_cc())
        k = self._kernels.get(key)
        if k is None:
            module = Module(self._compiled(argtypes, key[1]), name=self.name)
            k = self._kernels[key] = PyKernel(module, self.name, argtypes, self)
        return k

    def _compiled(self, argtypes: tuple, cc: tuple):
        """compile_kernel's result, from the kernel's cache when it has one (``cache=True``); a kernel
        that links foreign code is not kept (the file may change while the Python does not)."""
        magic = ("cudalab", cc, self.fastmath, self.launch_bounds, self.debug, self.opt, nrt_enabled())
        compiled = self._cache.load(argtypes, magic) if self._cache is not None and not self.link else None
        (self._cache_misses if compiled is None else self._cache_hits)[argtypes] += 1
        if compiled is None:
            compiled = compile_kernel(self.py_func, argtypes, self.fastmath, self.link, self.launch_bounds,
                                      self.debug, self.opt)
            if self._cache is not None and not self.link and "linked" not in compiled.options:
                self._cache.save(argtypes, magic, compiled)
        return compiled

    @property
    def stats(self):
        """numba's compile statistics: the cache's folder (None without ``cache=True``) and, per argument
        types, how many compiles the cache answered and how many it did not."""
        from numba.cuda.dispatcher import _CompileStats
        return _CompileStats(cache_path=self._cache.cache_path if self._cache is not None else None,
                             cache_hits=self._cache_hits, cache_misses=self._cache_misses)

    def recompile(self):
        """numba's ``kernel.recompile()``: compile every signature afresh (after the globals it reads
        changed), replacing what the cache keeps."""
        compiled = list(self._kernels)
        explicit = [k.argtypes for k in self._signatures]
        self._kernels.clear()
        if self._cache is not None:
            self._cache.flush()
        self._signatures = [self._compile(t) for t in explicit]
        for argtypes, cc in compiled:
            if cc == target_cc():
                self._compile(argtypes)

    def specialize(self, *args) -> PyKernel:
        """The compiled kernel that runs these arguments (compiling it the first time)."""
        args = tuple(map(_unwrapped, args))
        self._check_count(args)
        types = tuple(arguments.numba_type(a, f"argument {k + 1} of {self.name}", registered=bool(self.extensions))
                      for k, a in enumerate(args))
        if not self._signatures:
            return self._compile(types)
        k = self._best_signature(types)
        if k is not None:
            return k
        # numba launches a kernel of one signature with whatever it is given (numba's `specialized`
        # dispatcher): an int32 array runs a uint32[:] kernel, read bit for bit, and wider integers a
        # strided integer parameter (their low bytes). numba launches an array of another rank or element
        # size too (measured: float64 through uint32[:] on an H100), and the kernel reads wrong values:
        # cudalab refuses those below, naming the signature.
        if len(self._signatures) == 1 and all(map(_reads_as, self._signatures[0].argtypes, types)):
            return self._signatures[0]
        have = "; ".join(f"({', '.join(map(str, k.argtypes))})" for k in self._signatures)
        raise ArgumentTypeError(f"No matching definition for argument type(s) {', '.join(map(str, types))}: "
                                f"{self.name} was compiled for {have}. Pass arguments of those types, or leave "
                                "out the signature to compile for any.", "cudaErrorInvalidValue")

    def _best_signature(self, types):
        """The signature numba's dispatcher picks for these argument types: the one needing the fewest
        and safest conversions (int64 -> float64 before float64 -> float32; none from complex to a real
        number); a tie is numba's TypeError. An address goes to a pointer parameter as it is."""
        from numba.core import typing
        from numba.core.types import void
        from numba.cuda.descriptor import cuda_target
        cases = [typing.signature(void, *k.argtypes) for k in self._signatures]
        try:
            best = cuda_target.typing_context.resolve_overload(self.py_func, cases, types, {},
                                                               allow_ambiguous=False)
        except TypeError as e:      # numba's 'Ambiguous overloading for ...', with the tied signatures
            raise ArgumentTypeError(f"{e}\nConvert the arguments to one signature's types, "
                                    "e.g. np.float32(x).", "cudaErrorInvalidValue") from None
        if best is not None:
            return self._signatures[cases.index(best)]
        return next((k for k in self._signatures
                     if len(k.argtypes) == len(types) and all(map(_accepts, k.argtypes, types))), None)

    @functools.cached_property
    def _parameters(self):
        """The kernel's parameter names (None for ``*args``), read once: a launch checks them."""
        params = inspect.signature(self.py_func).parameters.values()
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return None
        return [p.name for p in params]

    def _check_count(self, args):
        """numba would find a wrong number of arguments deep in its compiler (a TypeError under 30
        frames): say it at the launch, with the kernel's parameters."""
        names = self._parameters
        if names is not None and len(args) != len(names):
            raise ArgumentTypeError(f"{self.name}({', '.join(names)}) takes {len(names)} argument"
                                    f"{'s' * (len(names) != 1)}, but the launch passes {len(args)}.",
                                    "cudaErrorInvalidValue")

    @property
    def overloads(self) -> dict:
        """Argument types -> compiled PyKernel, for every specialization so far."""
        return {types: k for (types, _), k in self._kernels.items()}

    @property
    def signatures(self) -> list:
        """numba's list of the argument types compiled so far."""
        return list(self.overloads)

    def __getitem__(self, config):
        Kernel.__getitem__(self, config)      # the same checks of the launch configuration
        for what, dims in (("griddim", config[0]), ("blockdim", config[1])):
            _check_dims(what, dims)
        if NUMBA_WARNINGS and self.warns_as_numba:
            _warn_low_occupancy(config[0])
        return LaunchConfiguration(self, config)

    def configure(self, griddim, blockdim, stream=0, sharedmem=0):
        return self[griddim, blockdim, stream, sharedmem]

    def compile(self, sig) -> PyKernel:
        """Compile for an explicit signature now (numba's ``kernel.compile(sig)``)."""
        return self._compile(_argtypes_of(sig))

    @property
    def specialized(self) -> bool:
        """numba's flag for a kernel of one signature (``@cuda.jit("void(float32[:])")``): its
        queries (``get_regs_per_thread()``, ...) answer for that one without being given it."""
        return self._specialized

    # numba's per-signature queries: one answer with a signature, else {argument types: answer};
    # numba's resource queries (get_regs_per_thread(), ...) of a specialized kernel answer for its one
    def _each(self, what, signature=None, specialized_answers_one=False):
        if signature is not None:
            args = signature.args if hasattr(signature, "args") else tuple(signature)
            return what(self.overloads[args])
        if specialized_answers_one and self.specialized:
            return what(self._signatures[0])
        return {types: what(k) for types, k in self.overloads.items()}

    def inspect_asm(self, signature=None):
        return self._each(lambda k: k.inspect_asm(), signature)

    def inspect_sass(self, signature=None):
        return self._each(lambda k: k.inspect_sass(), signature)

    def inspect_lto_ptx(self, signature=None):
        """numba's PTX after linking the kernel with the code it calls (``lto=True``: numba's fp16 and
        bf16 operators, ``declare_device`` functions): cudalab's PTX is always the linked module."""
        return self._each(lambda k: k.inspect_asm(), signature)

    def inspect_llvm(self, signature=None):
        """numba's LLVM IR of each specialization (numba compiles it again to show it)."""
        return self._each(lambda k: self._typed(k.argtypes).library.get_llvm_str(), signature)

    def inspect_types(self, file=None, **kwargs):
        """numba's annotated Python source: the type of every variable, per specialization."""
        import sys
        file = file or sys.stdout
        for types, k in self.overloads.items():
            print(f"{self.name} {types}", file=file)
            print("-" * 80, file=file)
            print(self._typed(types).type_annotation, file=file)
            print("=" * 80, file=file)

    def _typed(self, argtypes):
        """numba's compile result for ``argtypes`` (typing, annotations, LLVM IR), made on demand."""
        from numba.cuda.compiler import compile_cuda
        from .compiler import stand_in_device
        with stand_in_device():
            return compile_cuda(self.py_func, None, argtypes, lineinfo=True, fastmath=self.fastmath,
                                cc=target_cc())

    def forall(self, ntasks: int, tpb: int = 0, stream=0, sharedmem: int = 0):
        """numba's ``kernel.forall(n)(args)``: enough blocks of ``tpb`` threads (128 if not given) for
        ``n`` threads."""
        if ntasks < 0:
            raise ValueError(f"Can't create ForAll with negative task count: {ntasks}")
        if ntasks == 0:               # numba launches nothing
            return lambda *args: None
        block = tpb or 128
        return self[-(-int(ntasks) // block), block, stream, sharedmem]

    def launch(self, grid, block, args=(), **options):
        """Kernel.launch after choosing the specialization for ``args`` (profile, widgets, tests)."""
        args = tuple(map(_unwrapped, args))
        return self.specialize(*args).launch(grid, block, args, **options)

    # pickling (numba pickles a kernel as its Python function, by value, and its options: the copy
    # compiles again where it is loaded, e.g. in a multiprocessing worker)
    def _reduce_states(self) -> dict:
        return dict(py_func=self.py_func, signatures=[k.argtypes for k in self._signatures],
                    fastmath=self.fastmath, link=self.link, specialized=self._specialized,
                    launch_bounds=self.launch_bounds, debug=self.debug, opt=self.opt, extensions=self.extensions,
                    returns_record=self.returns_record, cache=self.cache)

    @classmethod
    def _rebuild(cls, py_func, signatures, **options):
        return cls(py_func, signatures, **options)

    def __reduce__(self):
        from numba.cuda import serialize
        return serialize.custom_reduce(type(self), self._reduce_states())

    def __call__(self, *args, **kwargs):
        raise ConfigurationError(f"the launch configuration was not specified: a kernel is launched as "
                                 f"kernel[grid, block](args); write {self.name}[grid, block](...), "
                                 f"e.g. {self.name}[(n + 255) // 256, 256](...).", "cudaErrorInvalidConfiguration")


class LaunchConfiguration:
    """numba's configured launch, what ``kernel[grid, block, stream, shared]`` gives: called with the
    arguments it launches. ``griddim``/``blockdim`` are 3-tuples, as numba has them;
    ``pre_launch_callbacks`` run as ``callback(kernel, launch_config)`` just before the launch, with
    the specialization that runs. It pickles with its kernel (not with callbacks: numba's PicklingError)."""

    def __init__(self, dispatcher, config: tuple):
        self.dispatcher = dispatcher
        self.config = tuple(config)
        self.griddim, self.blockdim = (_three(d) for d in self.config[:2])
        self.stream = self.config[2] if len(self.config) > 2 else 0
        self.sharedmem = self.config[3] if len(self.config) > 3 else 0
        self.pre_launch_callbacks = []

    def __call__(self, *args):
        # the launch itself, in this frame: a program's traceback ends here, below its launch line
        dispatcher = self.dispatcher
        if NUMBA_WARNINGS and dispatcher.warns_as_numba:
            from .host import check_fork
            check_fork()            # numba's driver refuses a child forked after CUDA started
            _warn_host_arrays(args)
        retrieve = []        # numba's write-backs, run after the launch: Out/InOut copies, the extensions' own
        try:
            kernel = dispatcher.specialize(*args)
            prepared = [_prepared(dispatcher.extensions, ty, a, self.stream, retrieve)
                        for ty, a in zip(kernel.argtypes, args)]
            for callback in self.pre_launch_callbacks:
                callback(kernel, self)
            nrt.before_launch(kernel)
            record = kernel[self.config](*prepared)
            for write_back in retrieve:
                write_back()
            return record if dispatcher.returns_record else None
        except Exception as e:
            # the program's mistake (an argument, a typing error, a bad address, an exception a debug
            # kernel raised), told at its launch line: the frames of cudalab and numba in between say
            # nothing about the program. Nor do they keep its arrays: the error is kept (IPython keeps the
            # last one), and memory a notebook frees after a failed launch (``del d_a``) must come back, so
            # this frame lets the arguments go and a context the error hides (``raise ... from None``: the
            # same error as the runtime first raised it, with the runtime's frames) is dropped
            args = prepared = retrieve = None       # noqa: F841
            if isinstance(e, CudaError) or getattr(e, "raised_in_kernel", False):
                if e.__suppress_context__:
                    e.__context__ = None
                raise e.with_traceback(None)
            raise

    def __repr__(self):
        return f"<launch of {self.dispatcher.name}: grid {self.griddim}, block {self.blockdim}>"

    def __getstate__(self):
        import pickle
        if self.pre_launch_callbacks:
            raise pickle.PicklingError("Cannot pickle configured launches with pre-launch callbacks")
        state = dict(self.__dict__)
        if state["stream"] not in (0, None):      # a stream lives in this process: numba keeps its handle
            state["stream"] = int(getattr(state["stream"], "handle", state["stream"]))
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        if self.stream not in (0, None):
            from .host import external_stream
            self.stream = external_stream(self.stream)
            self.config = self.config[:2] + (self.stream,) + self.config[3:]


def _three(dims) -> tuple:
    seq = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    return tuple(int(d) for d in seq) + (1,) * (3 - len(seq))


def _check_dims(what: str, dims):
    """numba's checks of ``kernel[grid, block]``, in numba's words, with what to write instead."""
    seq = list(dims) if isinstance(dims, (tuple, list)) else [dims]
    if len(seq) > 3:
        raise ConfigurationError(f"{what} must be a sequence of 1, 2 or 3 integers, got {seq}.",
                                 "cudaErrorInvalidValue")
    if not all(isinstance(d, numbers.Integral) for d in seq):
        raise ArgumentTypeError(f"{what} must be a sequence of integers, got {seq}. n / 256 is a float in "
                                "Python: write (n + 255) // 256 or math.ceil(n / 256).", "cudaErrorInvalidValue")


def _prepared(extensions, ty, value, stream, retrieve):
    """One launch argument as numba's dispatcher prepares it: the extensions first (the last one first),
    then the copy a host array's hint asks for. ``cuda.In(a)`` is copied to the device and not back,
    ``cuda.Out(a)`` not copied in (the kernel's writes are copied back), ``cuda.InOut(a)`` and a bare
    host array both ways; ``retrieve`` gets the copies back, which run after the launch."""
    from numba.cuda.args import ArgHint, In, Out
    from .host import device_array_like, to_device
    typed = ty
    for extension in reversed(extensions):
        ty, value = extension.prepare_args(ty, value, stream=stream, retr=retrieve)
    if ty != typed:                 # the extension says how to pass it
        return arguments.Typed(ty, _unwrapped(value))
    if not isinstance(value, ArgHint):
        return _unwrapped(value)
    host = value.value
    if not isinstance(host, np.ndarray) or host.ndim == 0:
        return host             # (a scalar or a 0-d array: as the launch passes it, in and back)
    if isinstance(value, Out) and not value.copy_input:         # (numba's InOut is an Out that copies in)
        device = device_array_like(host, stream=stream)
    else:
        device = to_device(np.ascontiguousarray(host), stream=stream)      # (a view's values, gathered)
    if not isinstance(value, In):
        retrieve.append(lambda: device.copy_to_host(host, stream=stream))
    return device


def _unwrapped(a):
    """The value behind numba's ``cuda.In(a)``/``Out(a)``/``InOut(a)`` (for typing: ``_prepared`` makes
    their copies at a launch). Another library's array (``__cuda_array_interface__``) over the
    emulator's memory is launched as a view of it."""
    from numba.cuda.args import ArgHint
    from ..runtime.arrays import DeviceArray
    from .host import from_cuda_array_interface, in_emulator_memory
    if isinstance(a, ArgHint):
        return a.value
    desc = arguments.cuda_array_interface(a)
    if desc is not None and not isinstance(a, DeviceArray) and in_emulator_memory(desc):
        return from_cuda_array_interface(desc, owner=a)
    return a


# numba-cuda's performance warnings, which a program written for numba shows on a GPU: on while
# cudalab.numba.install() stands in for numba (cudalab's own notebooks launch small grids on purpose)
NUMBA_WARNINGS = False


def _warn_low_occupancy(griddim):
    """numba's warning at ``kernel[grid, block]`` for a grid of fewer than 128 blocks (its threshold and
    words: numba.cuda.dispatcher's _LaunchConfiguration), unless numba's config turns it off; it names
    the program's launch line, where numba names its own."""
    from numba.cuda.core import config, errors
    blocks = int(np.prod(griddim))
    if blocks < 128 and config.CUDA_LOW_OCCUPANCY_WARNINGS and not config.DISABLE_PERFORMANCE_WARNINGS:
        import warnings
        warnings.warn(errors.NumbaPerformanceWarning(
            f"Grid size {blocks} will likely result in GPU under-utilization due to low occupancy."), stacklevel=3)


def _warn_host_arrays(args):
    """numba's warning when a launch copies a host array to the device and back (numba's auto_device;
    not for mapped or managed memory, which a GPU reads where it is)."""
    from numba.cuda.core import config, errors
    from .host import is_device_visible
    if any(isinstance(a, np.ndarray) and not is_device_visible(a) for a in args) and config.CUDA_WARN_ON_IMPLICIT_COPY \
            and not config.DISABLE_PERFORMANCE_WARNINGS:
        import warnings
        warnings.warn(errors.NumbaPerformanceWarning(
            "Host array used in CUDA kernel will incur copy overhead to/from device."), stacklevel=3)


def _warn_option_clashes(options):
    """numba's warnings for jit options that do not go together (numba.cuda.decorators.jit, its words;
    cudalab builds a debug kernel unoptimized either way)."""
    import warnings
    from numba.cuda.core import config, errors
    debug = config.CUDA_DEBUGINFO_DEFAULT if options.get("debug") is None else options["debug"]
    opt = config.OPT != 0 if options.get("opt") is None else options["opt"]
    if debug and opt:
        warnings.warn(errors.NumbaInvalidConfigWarning(
            "debug=True with opt=True is not supported by CUDA. This may result in a crash - set debug=False or "
            "opt=False."), stacklevel=3)
    if debug and options.get("lineinfo"):
        warnings.warn(errors.NumbaInvalidConfigWarning(
            "debug and lineinfo are mutually exclusive. Use debug to get full debug info (this disables some "
            "optimizations), or lineinfo for line info only with code generation unaffected."), stacklevel=3)


def _device_function(func_or_sig, **options):
    """numba's own device function (numba inlines it into the kernels that call it). Given a signature,
    numba compiles it at once, asking for the GPU's compute capability: the selected profile answers."""
    from numba.cuda.decorators import jit as numba_jit      # numba's own, even after cudalab.numba.install()
    from .compiler import stand_in_device
    options = {k: v for k, v in options.items() if v or k == "fastmath" or (k == "opt" and v is not None)}
    options["link"] = list(options.get("link", ()))
    if not options["link"]:
        del options["link"]
    if callable(func_or_sig):
        return numba_jit(func_or_sig, device=True, **options)
    decorate = numba_jit(func_or_sig, device=True, **options) if func_or_sig is not None \
        else numba_jit(device=True, **options)

    def compiled(pyfunc):
        with stand_in_device():
            return decorate(pyfunc)
    return compiled


def _argtypes_of(sig) -> tuple:
    from numba.core import sigutils
    args, ret = sigutils.normalize_signature(sig)
    if ret is not None and str(ret) != "none":
        raise UnsupportedError(f"a kernel returns nothing: its signature's result must be void, not {ret}.")
    return tuple(args)


def _reads_as(declared, given) -> bool:
    """An argument the kernel reads bit for bit as the declared type: an array of the same rank and
    element size (a contiguous 1-D array is C and F alike), or what ``_accepts``. numba passes an
    array's own strides in bytes, and a strided (layout 'A') kernel follows them: given wider integers
    (``cuda.to_device`` of a Python list is int64) where it declares ``int32[:, :]``, each element's
    low bytes are read, the same values while they fit, as on a GPU."""
    from numba import types
    if isinstance(declared, types.Array) and isinstance(given, types.Array):
        if declared.ndim != given.ndim:
            return False
        mine, theirs = getattr(declared.dtype, "bitwidth", 0), getattr(given.dtype, "bitwidth", -1)
        if declared.layout == "A" and isinstance(declared.dtype, types.Integer) and \
                isinstance(given.dtype, types.Integer) and theirs > mine:
            return True
        return ((declared.layout in ("A", given.layout) or given.ndim == 1 and given.layout in "CF")
                and mine == theirs)
    return _accepts(declared, given)


def _accepts(declared, given) -> bool:
    """numba's rule for an explicit signature: arrays of the same dtype and rank (layout 'A' takes any),
    numbers converted to the declared type."""
    from numba import types
    if isinstance(declared, types.Array):
        return (isinstance(given, types.Array) and declared.dtype == given.dtype and declared.ndim == given.ndim
                and declared.layout in ("A", given.layout))
    if isinstance(declared, types.CPointer):        # numba passes an address as it is
        return isinstance(given, (types.Integer, types.Array))
    if isinstance(declared, (types.Number, types.Boolean)):      # a complex number has no real one
        return isinstance(given, (types.Number, types.Boolean)) and (
            isinstance(declared, types.Complex) or not isinstance(given, types.Complex))
    return declared == given


def jit(func_or_sig=None, device=False, fastmath=False, link=(), *, returns_record=True, **numba_options):
    """numba.cuda.jit for cudalab: ``@jit``, ``@jit(fastmath=True)``, ``@jit("void(float32[:])")``,
    ``@jit(device=True)``.

    A device function stays numba's own (numba inlines it into the kernels that call it); a kernel
    becomes a Dispatcher. numba.cuda.jit's other options (``cache``, ``lineinfo``, ``debug``, ``opt``)
    change nothing here: line info is always on, and compiled kernels are kept for the session.
    ``returns_record``: a launch returns its LaunchRecord (False: None, as numba.cuda's does)."""
    for old_name in ("argtypes", "restype", "bind"):       # NumbaPro's spellings, which numba refuses so
        if numba_options.get(old_name) is not None:
            from numba.core.errors import DeprecationError
            raise DeprecationError(f"Deprecated keyword argument `{old_name}`. Signatures should be passed as the "
                                   "first positional argument. (NumbaPro's cuda.jit(argtypes=[f8, f8], restype=u4) "
                                   "is written cuda.jit('u4(f8, f8)') in numba.)")
    # options that change how numba builds or caches the code, not what it computes
    unknown = set(numba_options) - {"cache", "lineinfo", "debug", "opt", "inline", "forceinline", "max_registers",
                                    "boundscheck", "lto", "launch_bounds",
                                    "shared_memory_carveout", "extensions"}
    if unknown:
        raise UnsupportedError(f"cudalab.jit does not support the option{'s' * (len(unknown) > 1)} "
                               f"{', '.join(sorted(unknown))}; it takes device=, fastmath= and signatures.")
    link = (link,) if isinstance(link, str) else tuple(link or ())
    if NUMBA_WARNINGS:
        _warn_option_clashes(numba_options)
    if device:
        return _device_function(func_or_sig, fastmath=fastmath, link=link, **numba_options)
    if numba_options.get("shared_memory_carveout") is not None:      # numba's ValueError for a bad one
        from numba.cuda.decorators import _validate_shared_memory_carveout
        _validate_shared_memory_carveout(numba_options["shared_memory_carveout"])
    options = dict(launch_bounds=numba_options.get("launch_bounds"), debug=numba_options.get("debug"),
                   opt=numba_options.get("opt"), extensions=numba_options.get("extensions"),
                   returns_record=returns_record, cache=bool(numba_options.get("cache")))
    if callable(func_or_sig):
        return Dispatcher(func_or_sig, (), fastmath, link, **options)
    # numba's rule: a list is several signatures; a tuple is one (its argument types)
    sigs = () if func_or_sig is None else (func_or_sig if isinstance(func_or_sig, list) else (func_or_sig,))
    one = func_or_sig is not None and not isinstance(func_or_sig, list)
    return lambda f: Dispatcher(f, sigs, fastmath, link, specialized=one, **options)


def numba_jit(func_or_sig=None, device=False, **options):
    """numba.cuda.jit as install() puts it on ``numba.cuda``: cudalab's jit, whose launches return None,
    as numba.cuda's do (``cudalab.last_launch()`` has the record)."""
    return jit(func_or_sig, device=device, returns_record=False, **options)
