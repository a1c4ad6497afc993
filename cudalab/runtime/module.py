"""Modules and kernels: ``compile(source)``, ``mod.get_kernel(name)``, ``kernel[grid, block](*args)``.

A Module holds one compiled source (PTX) and builds, per device, what runs it: a decoded
``emulator.Program`` (with its globals in emulated memory) or a loaded ``gpu.backend.GpuModule``.
Launching checks the configuration and arguments first (``launch.py``), copies numpy arrays in and
back like numba.cuda does, and returns a LaunchRecord.
"""
from __future__ import annotations

import re
import sys
import time

import numpy as np

from ..errors import CompileError, CudaError, KernelError, LaunchError
from ..frontend.nvrtc import compile_to_ptx
from ..errors import UnsupportedError
from ..emulator import slack
from ..ptx import PtxSyntaxError, parse
from . import device as devices
from . import streams
from .arrays import DeviceArray, release_dropped
from .core import Function
from .launch import check_config, marshal
from .mangle import param_types
from .progress import Bar
from .record import LaunchRecord, set_last


def compile(source: str, options=(), name: str | None = None, name_expressions=(), line_offset: int = 0):
    """Compile CUDA C++ with NVRTC; returns a Module. Cached: an unchanged source compiles once.

    ``options`` are NVRTC/nvcc-style flags (``("-DN=64", "-use_fast_math")`` or one string)."""
    if not isinstance(source, str):
        raise CudaError(f"compile() needs the CUDA C++ source as a string (str), not {type(source).__name__}.",
                        "cudaErrorInvalidValue")
    if isinstance(options, str):
        import shlex
        options = shlex.split(options)
    # NVRTC always optimizes and knows no -O flag; nvcc users type one anyway: -O0 means debug code
    options = ["-G" if o == "-O0" else o for o in options if not re.fullmatch(r"-O[1-3s]?", o)]
    if isinstance(name_expressions, str):
        name_expressions = (name_expressions,)
    cs = compile_to_ptx(source, tuple(options), tuple(name_expressions), line_offset=line_offset)
    return Module(cs, name=name)


_PARSED: dict = {}


def _parse_cached(ptx: str):
    """Parsed PTX is plain data that nothing changes, so an unchanged cell reuses it (and the
    functions decoded from it): re-running a cell costs a dictionary lookup, not a parse."""
    m = _PARSED.get(ptx)
    if m is None:
        if len(_PARSED) > 64:
            _PARSED.pop(next(iter(_PARSED)))
        m = _PARSED[ptx] = parse(ptx)
    return m



def _emulator():
    """The emulator's engine, imported at the first launch (``import cudalab`` stays light) and kept:
    an import statement in a function costs 1 to 3 us at every call, and a launch made three."""
    engine = _emulator.engine
    if engine is None:
        from ..analysis.sanitizer import observers_for
        from ..emulator import engine
        _emulator.engine, _emulator.observers_for = engine, observers_for
    return engine


_emulator.engine = _emulator.observers_for = None

def _unreadable_ptx(ptx: str, e: PtxSyntaxError) -> CudaError:
    """PTX the emulator cannot read: the text of an asm() statement that is no PTX (the student's to fix:
    ptxas refuses it on a GPU too), else a feature cudalab does not read yet."""
    from ..programs.asm_errors import ADVICE, asm_statement, ptxas_refuses
    m = re.search(r"PTX line (\d+)", str(e))
    found = asm_statement(ptx, int(m.group(1))) if m else None
    refused = ptxas_refuses(ptx) if found is not None else None
    if refused is not None:
        where, line = found
        return CompileError(f"The asm() statement{where} is not PTX that ptxas can read: \"{line}\". {ADVICE}; "
                            f"nvcc stops there too (ptxas: {refused}).")
    return UnsupportedError(f"The emulator cannot read the PTX that NVRTC made from this code ({e}). "
                            "This C++ feature is not supported by cudalab yet; a real GPU can run it.")


class Module:
    def __init__(self, compiled, name=None):
        self.compiled = compiled
        self.name = name or "module"
        try:
            self.ptx_module = _parse_cached(compiled.ptx)
        except PtxSyntaxError as e:
            raise _unreadable_ptx(compiled.ptx, e) from None
        self._programs: dict = {}
        self._kernels: dict = {}
        self.watchdog = None        # seconds its kernels may run (%%cuda --timeout); None: cudalab.set_watchdog's

    @property
    def ptx(self) -> str:
        return self.compiled.ptx

    @property
    def source(self) -> str:
        return self.compiled.source

    @property
    def kernels(self) -> list:
        """C++ names of the module's kernels (template instances as compiled, e.g. 'scale<3>'); a kernel
        only declared here (``.extern .entry``: an -rdc=true module launching another file's) is not one."""
        entries = {f.name for f in self.ptx_module.entries if not f.extern}
        names = [n for n, m in self.compiled.lowered.items() if m in entries]
        lowered = set(self.compiled.lowered.values())
        names += [e for e in sorted(entries) if e not in lowered]
        return names

    def _mangled(self, name):
        entries = {f.name for f in self.ptx_module.entries}
        m = self.compiled.lowered.get(name)
        if m in entries:
            return m
        if name in entries:
            return name
        return None

    def get_kernel(self, name: str) -> "Kernel":
        if not isinstance(name, str):
            raise CudaError(f"kernel names are strings, like 'vecAdd' or 'mm<16>'; got {name!r}.",
                            "cudaErrorInvalidDeviceFunction")
        k = self._kernels.get(name)
        if k is not None:
            return k
        mangled = self._mangled(name)
        if mangled is None and "<" in name:
            # a template instance not compiled yet: recompile with it as a name expression
            try:
                cs = compile_to_ptx(self.compiled.source, self.compiled.options,
                                    tuple(self.compiled.lowered) + (name,))
            except CompileError as e:
                raise CompileError(f"cannot instantiate the template kernel {name!r}: check that the template "
                                   f"arguments match its parameters (a type for `typename T`, a number for `int N`)."
                                   f"\n{_strip_name_map(str(e))}", log=e.log) from None
            self.__init__(cs, self.name)
            mangled = self._mangled(name)
        if mangled is None:
            known = ", ".join(self.kernels) or "none"
            raise KernelNotFound(f"there is no kernel called {name!r} in this module (its kernels: {known}). "
                                 "Kernels need __global__; templates are named with their arguments, like 'mm<16>'.",
                                 "cudaErrorInvalidDeviceFunction")
        k = self._kernels[name] = Kernel(self, name, mangled)
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.get_kernel(name)
        except KernelNotFound:
            raise

    def program(self, dev):
        """The emulator Program or GPU module of this source on device ``dev`` (built once)."""
        p = self._programs.get(id(dev))
        if p is None:
            if dev.kind == "emu":
                from ..emulator.engine import Program
                p = Program(self.ptx_module, dev.memory)
            else:
                p = dev.backend.GpuModule(self.compiled.ptx)
            self._programs[id(dev)] = p
        return p

    def get_global(self, name: str, dtype=None) -> DeviceArray:
        """A DeviceArray over a ``__constant__`` or ``__device__`` variable (by its C++ name).

        PTX keeps arrays as raw bytes (``.b8 coef[16]``); pass ``dtype`` to see them as numbers."""
        dev = devices.current()
        prog = self.program(dev)
        var = self.ptx_module.variables.get(name)
        if var is None:
            cands = [v for v in self.ptx_module.variables.values() if v.space in ("global", "const")
                     and (v.name == name or f"{len(name)}{name}" in v.name)]
            if not cands:
                known = ", ".join(v.name for v in self.ptx_module.variables.values()
                                  if v.space in ("global", "const") and not v.name.startswith(("$", "__unnamed")))
                raise CudaError(f"there is no __constant__ or __device__ variable {name!r} in this module "
                                f"(it has: {known or 'none'}).", "cudaErrorInvalidSymbol")
            var = cands[0]
        from ..emulator.dtypes import DTYPE
        dt = np.dtype(DTYPE.get(var.type, np.uint8))
        if dtype is not None:
            dt = np.dtype(dtype)
        count = max(var.size // dt.itemsize, 1)
        if dev.kind == "emu":
            ptr = prog.globals[var.name]
        else:
            buf = prog.global_buffer(var.name)
            dev.adopt(buf)            # so copies to and from the DeviceArray find its buffer
            ptr = buf.ptr
        arr = DeviceArray((count,), dt, device=dev, ptr=ptr, owned=False)
        arr._program = prog          # the variable lives as long as its program: keep it while the array is used
        return arr


def specialized(kernel, args):
    """The Kernel that runs ``args``: a Python kernel (cudalab.jit) compiles one per argument types;
    a C++ kernel is its own. For the tools that read a kernel's module before launching it."""
    specialize = getattr(kernel, "specialize", None)
    return specialize(*args) if specialize is not None else kernel


class KernelNotFound(CudaError, AttributeError):
    """No kernel of that name (also an AttributeError, so ``mod.name`` lookups behave)."""

    code = "cudaErrorInvalidDeviceFunction"


def _strip_name_map(msg: str) -> str:
    """NVRTC's name-expression errors mention its internal __nv_name_map; keep the useful lines."""
    return "\n".join(line for line in msg.splitlines() if "__nv_name_map" not in line and "lowered name" not in line)


class Kernel:
    """A kernel ready to launch: ``kernel[grid, block](*args)`` or ``kernel[grid, block, stream, shared](*args)``."""

    cooperative = False     # launched as cudaLaunchCooperativeKernel: every block resident at once

    def __init__(self, module: Module, name: str, mangled: str):
        self.module, self.name, self.mangled = module, name, mangled
        self.func = module.ptx_module.functions[mangled]
        self._resources = None
        # the kernel as the runtime core knows it (launch checks, cudaFuncSetAttribute values), as a
        # program's kernels are known; its ``program`` is the emulator program that runs it
        self.function = Function(None, mangled, name, [(p.size, p.align) for p in self.func.params])
        self.ctypes = param_types(mangled)
        if self.ctypes is not None and len(self.ctypes) != len(self.func.params):
            self.ctypes = None

    def __repr__(self):
        sig = ", ".join(t.name for t in self.ctypes) if self.ctypes else ", ".join(p.type for p in self.func.params)
        return f"<cudalab kernel {self.name}({sig})>"

    @property
    def non_portable_cluster_size_allowed(self) -> bool:
        """cudaFuncAttributeNonPortableClusterSizeAllowed: clusters of up to 16 blocks (H100) instead of 8."""
        return bool(self.function.attributes.get(14))

    @non_portable_cluster_size_allowed.setter
    def non_portable_cluster_size_allowed(self, allowed: bool):
        self.function.attributes[14] = int(bool(allowed))

    def set_attribute(self, attr, value: int):
        """``cudaFuncSetAttribute`` on the emulator, with a program's checks: ``attr`` is a
        cudaFuncAttribute number or name, e.g. ``k.set_attribute("MaxDynamicSharedMemorySize", 100 * 1024)``
        lets launches ask for more than 48 KiB of dynamic shared memory, up to the device's opt-in limit."""
        from .core.properties import FUNC_ATTRIBUTE_NAMES
        number = FUNC_ATTRIBUTE_NAMES.get(str(attr).removeprefix("cudaFuncAttribute"), attr)
        if not isinstance(number, (int, np.integer)) or isinstance(number, bool):
            raise CudaError(f"{attr!r} is not a cudaFuncAttribute (a number from 8 to 15 or a name: "
                            f"{', '.join(FUNC_ATTRIBUTE_NAMES)}).", "cudaErrorInvalidValue")
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
            raise CudaError(f"the value of {attr} must be a whole number, not {value!r}.", "cudaErrorInvalidValue")
        fn = self._function_on(self.module.program(devices.get("emu")))
        streams.context().func_set_attribute(fn, int(number), int(value))

    def _function_on(self, prog):
        """``self.function`` on the emulator program ``prog`` (its static shared memory is the program's)."""
        self.function.program = prog
        return self.function

    def resources(self):
        """Registers, static shared and local memory per thread from the real compiler (cached)."""
        if self._resources is None:
            from ..device import current
            from ..device.resources import kernel_resources
            self._resources = kernel_resources(self, current().arch)
        return self._resources

    def __call__(self, *args, **kwargs):
        raise LaunchError(f"a kernel is launched as kernel[grid, block](args): write {self.name}[grid, block](...), "
                          f"e.g. {self.name}[(n + 255) // 256, 256](...).", "cudaErrorInvalidConfiguration")

    def __getitem__(self, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise LaunchError(f"launch {self.name} as kernel[grid, block](...) or kernel[grid, block, stream, "
                              f"shared_bytes](...); got kernel[{config!r}].", "cudaErrorInvalidValue")
        grid, block = config[0], config[1]
        stream = config[2] if len(config) > 2 else 0
        shared = config[3] if len(config) > 3 else 0
        if devices.comparing():
            return lambda *args: self.compare(grid, block, args, shared=shared)
        return lambda *args: self.launch(grid, block, args, shared=shared, stream=stream)

    def compare(self, grid, block, args=(), shared: int = 0):
        """Run on the emulator and on the GPU; print and return where the outputs differ."""
        from .compare import compare
        result = compare(self, grid, block, args, shared)
        if not result.same:
            sys.stderr.write(repr(result) + "\n")
        return result

    def launch(self, grid, block, args=(), shared: int = 0, stream=0, observers=(), device=None, checks=(),
               cluster=None):
        """Launch on the current device. ``cluster=(x, y, z)`` launches thread block clusters (what
        cudaLaunchKernelEx's cudaLaunchAttributeClusterDimension does; compute capability 9.0):
        ``grid`` still counts blocks and must be a multiple of the cluster in each dimension."""
        dev = device or devices.current()
        release_dropped(keep_pages=True)     # arrays the program dropped are freed before the kernel runs
        prog = self.module.program(dev)
        if not isinstance(shared, (int, np.integer)) or isinstance(shared, bool):
            raise LaunchError(f"{self.name}: the dynamic shared memory size must be a number of bytes, not {shared!r}.",
                              "cudaErrorInvalidValue")
        if dev.kind == "emu":           # the runtime core's checks, as for a program's launch
            g, b = streams.context().checked_shape(self._function_on(prog), grid, block, int(shared), self.cooperative,
                                                   cluster=cluster)
        else:
            g, b = check_config(self.name, grid, block, int(shared), 0)
        observers = streams.before_launch(stream, dev, observers)
        copies = []

        def pointer_of(a):
            if isinstance(a, DeviceArray):
                if a.device is not dev:
                    raise LaunchError(f"an array given to {self.name} lives on the {a.device.kind} device, but the "
                                      f"launch runs on {dev.kind}. Copy it with copy_to_host() first.",
                                      "cudaErrorInvalidValue")
                return a.device_ptr
            if isinstance(a, np.ndarray) and a.ndim > 0:
                d = DeviceArray(a.shape, a.dtype, device=dev, scratch=True)
                d.copy_to_device(np.ascontiguousarray(a), stream=stream)
                copies.append((a, d))
                return d.device_ptr
            return None

        t0 = time.perf_counter()
        kparams = self._pack(args, pointer_of)
        rec = LaunchRecord(self.name, g, b, int(shared), dev.kind, resources=self.resources)
        try:
            if dev.kind == "emu":
                rec.static_shared = _emulator().static_shared(prog, prog.function(self.mangled))
                self._run_emu(prog, g, b, int(shared), kparams, observers, rec, checks, cluster)
            else:
                self._run_gpu(dev, prog, g, b, int(shared), args, copies, rec, cluster, kparams)
            streams.launched(rec, stream)
        finally:
            for host, d in copies:
                if host.flags.writeable:
                    d.copy_to_host(host, stream=stream)
                d.free()
            rec.wall_time = time.perf_counter() - t0
            set_last(rec)
        return rec

    def _pack(self, args, pointer_of) -> bytes:
        """The launch's parameter buffer, C++'s way (types from the mangled name; pykernels packs numba's)."""
        return marshal(self.name, self.func.params, self.ctypes, args, pointer_of)

    def _run_emu(self, prog, g, b, shared, kparams, observers, rec, checks, cluster=None):
        engine = _emulator()
        observers = tuple(observers) + tuple(_emulator.observers_for(prog))   # cudalab.check(...): racecheck, initcheck
        streams.context().bind(prog)      # the selected profile's SMs, clock, attributes and limits
        stats = None
        bar = Bar(self.name)
        try:
            stats = engine.launch(prog, self.mangled, g, b, shared, kparams, observers=observers,
                                  timeout=self.module.watchdog or devices.WATCHDOG_SECONDS, kernel_name=self.name,
                                  checks=checks, cluster=cluster,
                                  non_portable_cluster=self.non_portable_cluster_size_allowed, progress=bar)
        except KernelError as e:
            rec.findings.extend(e.findings)
            printed = getattr(e, "printed", [])
            if printed:          # device printf output from before the fault, as a GPU would flush it
                sys.stdout.write("".join(printed))
                sys.stdout.flush()
            raise
        finally:
            bar.close()
        rec.counted(stats, observers)
        if stats.printed:
            sys.stdout.write("".join(stats.printed))
            sys.stdout.flush()
        # out-of-bounds accesses a GPU runs: told once per line of the program (emulator/slack.py)
        slack.say(stats.findings, prog.__dict__.setdefault("_warned", set()), self._worded)

    def _worded(self, message: str) -> str:
        """A memcheck message as this kernel's language says it (C++ here; pykernels: Python)."""
        return message

    def _run_gpu(self, dev, gmod, g, b, shared, args, copies, rec, cluster=None, kparams=None):
        if kparams is not None and any(isinstance(a, (np.void, bytes, bytearray)) and len(bytes(a)) > 8 for a in args):
            # a struct bigger than 8 bytes by value: the packed parameter buffer (marshal() already
            # put each array's GPU address in it)
            rec.gpu_time_ms = gmod.launch_packed(self.mangled, g, b, shared, kparams, cluster=cluster)
            return
        host_to_dev = {id(h): d for h, d in copies}
        gargs = []
        for a in args:
            if isinstance(a, DeviceArray):
                gargs.append(dev.buffer(a.device_ptr))
            elif id(a) in host_to_dev:
                gargs.append(dev.buffer(host_to_dev[id(a)].device_ptr))
            else:
                gargs.append(a)
        extra = {"cluster": cluster} if cluster is not None else {}
        rec.gpu_time_ms = gmod.launch(self.mangled, g, b, shared, tuple(gargs), **extra)
