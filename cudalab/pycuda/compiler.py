"""pycuda.compiler on cudalab: ``SourceModule`` compiles CUDA C++ with cudalab's NVRTC.

As PyCUDA does, the source is put inside ``extern "C" { ... }`` (its kernels keep their C names, so
``get_function("mult_ker")`` finds them) unless ``no_extern_c=True``; ``options`` are nvcc's, of which
the ones that choose code (``-use_fast_math``, ``-D``, ``-I``, ``-std``, ``-G``, ``-lineinfo``) are
kept and the ones about nvcc's own files and targets (``--keep``, ``-arch``, ``-code``, ``-Xptxas``)
mean nothing to an emulated device.

PyCUDA builds with nvcc, which compiles a file's host code too and keeps only the kernels: a course's
``.cu`` file that is also a C program (a ``main`` timing the kernel with ``<chrono>``) loads in PyCUDA.
cudalab's NVRTC refuses host code, so such a module is built with the toolkit wheel's nvcc (``-ptx``)
instead, as PyCUDA itself would build it.
"""
from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

from . import driver

# PyCUDA's own headers (<pycuda-complex.hpp>) in cudalab's versions, and the CuPy stand-in's they build on
INCLUDE = os.path.join(os.path.dirname(__file__), "include")
CUPY_INCLUDE = os.path.join(os.path.dirname(os.path.dirname(__file__)), "cupy", "include")
_OLD_STANDARD = re.compile(r"^--?std=c\+\+(03|11|14)$")

# nvcc options that choose what a kernel computes, as NVRTC spells them
_SPELLINGS = {"-use_fast_math": "--use_fast_math", "--use_fast_math": "--use_fast_math", "-G": "-G",
              "-lineinfo": "-lineinfo", "--ftz=true": "--ftz=true", "--ftz=false": "--ftz=false",
              "--prec-div=false": "--prec-div=false", "--prec-sqrt=false": "--prec-sqrt=false",
              "-rdc=true": "-rdc=true", "--relocatable-device-code=true": "-rdc=true"}


def _options(options, include_dirs, arch) -> list:
    out = []
    for option in options or ():
        o = str(option)
        if o in _SPELLINGS:
            out.append(_SPELLINGS[o])
        elif o.startswith(("-D", "-I", "-std=", "--std=", "-U")):
            out.append(o)
    out += [f"-I{d}" for d in include_dirs or ()]
    # glibc's uint/ushort/ulong, which nvcc's host headers declare in every .cu file (include/cudalab_host_types.h)
    return out + [f"-I{INCLUDE}", f"-I{CUPY_INCLUDE}", "--pre-include=cudalab_host_types.h"]


def _standard(source, options) -> list:
    """C++17 for a module that includes <pycuda-complex.hpp>: cudalab's is libcu++'s complex, which needs it."""
    if "pycuda-complex.hpp" not in source and "pycuda-helpers.hpp" not in source:
        return options
    return [o for o in options if not _OLD_STANDARD.match(o) and not o.startswith(("-std=", "--std="))] + ["-std=c++17"]


# PyCUDA's default nvcc options (from $PYCUDA_DEFAULT_NVCC_FLAGS): what SourceModule compiles with when
# it is given no ``options`` (a program may change the list), read as ``options`` is
DEFAULT_NVCC_FLAGS = [f for f in os.environ.get("PYCUDA_DEFAULT_NVCC_FLAGS", "").split() if f]


class SourceModule(driver.Module):
    """CUDA C++ compiled now; ``get_function(name)`` gives a launchable ``Function``."""

    def __init__(self, source, nvcc="nvcc", options=None, keep=False, no_extern_c=False, arch=None, code=None,
                 cache_dir=None, include_dirs=()):
        from ..runtime.module import compile as compile_cuda
        driver._need_context("cuModuleLoadDataEx")
        if not no_extern_c:
            source = 'extern "C" {\n' + source + '\n}\n'
        self.source = source
        options = tuple(_standard(source, _options(DEFAULT_NVCC_FLAGS if options is None else options,
                                                   include_dirs, arch)))
        from ..errors import CompileError
        legacy = options + (f"--pre-include={LEGACY_TEXTURES}",)
        try:
            if _LEGACY_REFERENCE.search(source):          # texture<float, 2> tex: nvcc with cudalab's header
                module = _nvcc_module(source, legacy, None)
            else:
                module = None
            try:
                module = module or compile_cuda(source, options=options)
            except CompileError as e:
                if _LEGACY_IN_LOG.search(str(e)):       # a reference in an #included file
                    module = _nvcc_module(source, legacy, e)
                elif _HOST_CODE.search(e.log or str(e)):
                    module = _nvcc_module(source, options, e)
                else:
                    raise
        except CompileError as e:           # as PyCUDA raises it: ``except drv.CompileError`` catches it
            raise driver.CompileError(e.args[0], stderr=e.log) from None
        super().__init__(module)


# a texture or surface reference (CUDA 11's ``texture<float, 2> tex;``), built over texture objects by
# cudalab's header for whole programs (texrefs.py binds them)
_LEGACY_REFERENCE = re.compile(r"^\s*(texture|surface)\s*<[^;]*>\s*\w+\s*;", re.M)
LEGACY_TEXTURES = Path(__file__).resolve().parent.parent / "programs" / "shim" / "legacy_textures.h"
# NVRTC's complaint (with cudalab's hint) when the reference is declared in a file the source includes
_LEGACY_IN_LOG = re.compile(r"declares a texture reference|(texture|surface) is not a template")

# NVRTC's words for host code, which nvcc compiles and PyCUDA's build then leaves out; and for a
# namespace-scope ``const float dt = dx2 * dy2 / (2 * D * (dx2 + dy2));`` over other const floats,
# which nvcc folds to a constant the kernels use (a host variable "initialized with a constant
# expression") where NVRTC takes it for a __device__ variable initialized at run time
_HOST_CODE = re.compile(r"host (functions|variables) are not allowed in JIT mode|cannot open source file|"
                        r"dynamic initialization is not supported for a __device__ variable")


def _nvcc_module(source, options, nvrtc_error):
    """The module as nvcc builds it (host code compiled and dropped): its PTX for the emulated device."""
    from ..device import current
    from ..frontend.nvrtc import CompiledSource
    from ..programs.build import nvcc
    from ..runtime.module import Module as CudaModule
    major, minor = current().cc
    with tempfile.TemporaryDirectory() as folder:
        source_file, ptx_file = Path(folder) / "kernel.cu", Path(folder) / "kernel.ptx"
        source_file.write_text(source)
        # (nvcc's host headers have cudalab_host_types.h's names; the legacy references' header stays)
        options = [o for o in options if not o.startswith("--pre-include=") or o.endswith("legacy_textures.h")]
        done = subprocess.run([nvcc(), "-ptx", f"-arch=compute_{major}{minor}", "-lineinfo", *options,
                               str(source_file), "-o", str(ptx_file)], capture_output=True, text=True, errors="replace")
        if done.returncode:             # nvcc refuses it too: NVRTC's message, with the program's lines
            from ..errors import CompileError
            raise nvrtc_error or CompileError("Your CUDA C++ did not compile (nvcc):\n" + done.stderr.strip(),
                                              log=done.stderr)
        ptx = ptx_file.read_text()
    return CudaModule(CompiledSource(source=source, ptx=ptx, options=tuple(options), log=done.stderr,
                                     filename="kernel.cu"))


class DynamicModule(driver.Module):
    """PyCUDA's module of several sources (and PTX) linked together: ``add_source`` compiles each to
    relocatable PTX, ``add_stdlib("cudadevrt")`` names the device runtime (the emulator's own), ``link()``
    joins them (``driver.Linker``); then ``get_function`` as on a SourceModule. A kernel in one source
    may launch a kernel or call a device function defined in another."""

    def __init__(self, nvcc="nvcc", link_options=None, keep=False, no_extern_c=False, arch=None, code=None,
                 cache_dir=None, include_dirs=None, message_handler=None, log_verbose=False, cuda_libdir=None):
        self.linker = driver.Linker(message_handler, link_options, log_verbose)
        self.no_extern_c, self.include_dirs = no_extern_c, list(include_dirs or ())
        self.module = None

    def add_source(self, source, nvcc_options=None, name="kernel.ptx"):
        ptx = compile(source, options=nvcc_options, no_extern_c=self.no_extern_c, include_dirs=self.include_dirs)
        self.linker.add_data(ptx, driver.jit_input_type.PTX, name)
        return self

    def add_data(self, data, input_type, name="unknown"):
        self.linker.add_data(data, input_type, name)
        return self

    def add_file(self, filename, input_type):
        self.linker.add_file(filename, input_type)
        return self

    def add_stdlib(self, libname):
        if libname != "cudadevrt":
            from ..errors import UnsupportedError
            raise UnsupportedError(f"add_stdlib({libname!r}): the CUDA library lib{libname}.a is machine code; "
                                   "cudalab links only the device runtime (cudadevrt), which its emulator provides")
        self.linker.add_file(f"lib{libname}.a", driver.jit_input_type.LIBRARY)
        return self

    def link(self):
        self.module = self.linker.link_module()
        self.linker = None
        driver.Module.__init__(self, self.module._module)
        return self

    def get_function(self, name):
        if self.module is None:
            raise driver.LogicError(f"get_function({name!r}): the module is not linked yet; call link() first")
        return super().get_function(name)


class DynamicSourceModule(SourceModule):
    """A module whose kernels launch kernels (dynamic parallelism): built with ``-rdc=true``."""

    def __init__(self, source, nvcc="nvcc", options=None, keep=False, no_extern_c=False, arch=None, code=None,
                 cache_dir=None, include_dirs=(), cuda_libdir=None):
        super().__init__(source, nvcc, [*(options or ()), "-rdc=true"], keep, no_extern_c, arch, code, cache_dir,
                         include_dirs)


def compile(source, nvcc="nvcc", options=None, keep=False, no_extern_c=False, arch=None, code=None,  # noqa: A001
            cache_dir=None, include_dirs=(), target="cubin"):
    """PyCUDA returns a cubin's bytes; cudalab's emulated device runs PTX, which this returns."""
    return SourceModule(source, nvcc, options, keep, no_extern_c, arch, code, cache_dir, include_dirs)._module.ptx.encode()
