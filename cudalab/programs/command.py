"""An nvcc command line, read the way nvcc reads it: ``-I../Common -rdc=true main.cpp kernel.cu``.

``cudalab run`` takes nvcc's own options so that a build from a Makefile, a CMake log or a course's
instructions can be pasted as it is. ``parse_nvcc(argv)`` sorts them into what cudalab needs to
know (the source files, the output name, the target architectures, relocatable device code) and
the rest, which goes to nvcc unchanged. Options take their value attached (``-I../Common``,
``-std=c++17``, ``-arch=sm_80``) or as the next word (``-I ../Common``, ``-arch sm_80``), as with nvcc.
"""
from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field, replace
from pathlib import Path

SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c++", ".cp", ".c")
LINKED_SUFFIXES = (".o", ".obj", ".a", ".so")

# nvcc options that take a value, by every name nvcc accepts for them -> the canonical name
_VALUED = {}
for names in (
        ("-I", "--include-path"), ("-D", "--define-macro"), ("-U", "--undefine-macro"),
        ("-L", "--library-path"), ("-l", "--library"), ("-o", "--output-file"), ("-O", "--optimize"),
        ("-x", "--x"), ("-std", "--std"), ("-arch", "--gpu-architecture", "--arch"),
        ("-code", "--gpu-code"), ("-gencode", "--generate-code"),
        ("-Xcompiler", "--compiler-options"), ("-Xlinker", "--linker-options"),
        ("-Xptxas", "--ptxas-options"), ("-Xnvlink", "--nvlink-options"), ("-Xarchive", "--archive-options"),
        ("-rdc", "--relocatable-device-code"), ("-ccbin", "--compiler-bindir"), ("-cudart", "--cudart"),
        ("-cudadevrt", "--cudadevrt"), ("-maxrregcount", "--maxrregcount"), ("-ftz", "--ftz"),
        ("-prec-div", "--prec-div"), ("-prec-sqrt", "--prec-sqrt"), ("-fmad", "--fmad"),
        ("-isystem", "--system-include"), ("-include", "--pre-include"), ("-odir", "--output-directory"),
        ("-t", "--threads"), ("-default-stream", "--default-stream"), ("-keep-dir", "--keep-dir"),
        ("-MF", "--dependency-output"), ("-MT", "--dependency-target-name"), ("-Werror", "--Werror"),
        ("-diag-suppress", "--diag-suppress"), ("-diag-warn", "--diag-warn"), ("-diag-error", "--diag-error"),
        ("-split-compile", "--split-compile"), ("-ldir", "--libdevice-directory"), ("-dopt", "--dopt"),
        ("-Xfatbin", "--fatbin-options"), ("-Xcudafe",)):
    for n in names:
        _VALUED[n] = names[0]
_ATTACHED = ("-I", "-D", "-U", "-L", "-l", "-O", "-o")   # "-I../Common", "-O3", "-lm"
_LOOK_ALIKE = ("-lineinfo", "-lto", "-Ofast")           # flags that are not "-l ineinfo" or "-O fast"

_MODES = {"-c": "-c", "--compile": "-c", "-E": "-E", "--preprocess": "-E", "-M": "-M",
          "--generate-dependencies": "-M", "-ptx": "-ptx", "--ptx": "-ptx", "-cubin": "-cubin",
          "--cubin": "-cubin", "-fatbin": "-fatbin", "--fatbin": "-fatbin", "-lib": "-lib", "--lib": "-lib",
          "-dlink": "-dlink", "--device-link": "-dlink", "-dryrun": "-dryrun", "--dryrun": "-dryrun"}
_DEVICE_C = ("-dc", "--device-c", "-dw", "--device-w")
# (-run builds the program and runs it, what ``cudalab run`` does anyway: NVIDIA's accelerated-computing
# course builds with "nvcc -x cu atomic.cpp -o /tmp/a.out -run")
_CUDALAB_OWNS = ("-keep", "--keep", "-keep-dir", "-MD", "-MMD", "--generate-dependencies-with-compile",
                 "--generate-nonsystem-dependencies-with-compile", "-MF", "-MT", "-odir",
                 "-res-usage", "--resource-usage", "-run", "--run")


def host_compiler_here(name: str) -> bool:
    """Whether ``-ccbin NAME`` names a host compiler this machine has (on the PATH, or a file or folder).
    A course's Makefile names the compiler its lab had (``-ccbin g++-4.9``, ``-ccbin icpc``); nvcc
    given one that is not installed stops with "Failed to preprocess host compiler properties",
    which says nothing of the cause. Without it nvcc takes the default host compiler, as a student
    who deletes the word from the Makefile does."""
    return bool(shutil.which(name)) or Path(name).exists()


class NvccUsageError(ValueError):
    """An nvcc command line cudalab cannot build; the message says what to change."""


@dataclass
class NvccCommand:
    """An nvcc command line, sorted into what cudalab needs to know and what it hands on."""

    sources: list = field(default_factory=list)        # .cu/.cpp/.c files, as written
    linked: list = field(default_factory=list)         # .o/.a/.so files given to the link
    compile_options: list = field(default_factory=list)  # every translation unit's (-I, -D, -std, -G ...)
    link_options: list = field(default_factory=list)     # the link's (-l, -L, -Xlinker)
    arch_options: list = field(default_factory=list)     # -arch/-code/-gencode as written
    archs: list = field(default_factory=list)            # architectures asked for: ["80", "90a"]
    rdc: bool = False                                     # -rdc=true / -dc: relocatable device code
    output: str | None = None                             # -o
    cudart: str | None = None                             # -cudart static|shared|none as written
    mode: str | None = None                               # -c, -E, -ptx ... (not a whole build)
    shared: bool = False                                  # -shared: a shared library, not a program

    def all_options(self) -> list:
        """The options as one nvcc command that builds everything (for the real GPU's nvcc)."""
        rdc = ["-rdc=true"] if self.rdc else []
        cudart = [f"-cudart={self.cudart}"] if self.cudart else []
        shared = ["-shared"] if self.shared else []
        return [*self.compile_options, *rdc, *self.arch_options, *cudart, *shared, *self.link_options]

    def without_archs_before(self, oldest: int) -> "NvccCommand":
        """This command less its -arch/-code/-gencode options that name only architectures older than
        ``oldest``: a book's ``-arch=sm_20`` that today's nvcc refuses. A GPU's driver runs such a
        program from its PTX, compiled for the GPU at hand, so the real GPU's build (``--device gpu``)
        builds for the GPU at hand instead, and the program runs as its author saw it run."""
        def current(archs):
            return not archs or any(int(re.match(r"\d+", a).group()) >= oldest for a in archs)
        return replace(self, arch_options=[o for o in self.arch_options if current(_archs_of(o))],
                       archs=[a for a in self.archs if current([a])])

    def executable_name(self) -> str:
        """argv[0] as a shell gives it to the program nvcc builds: ``./a.out``, or ``-o``'s path."""
        out = self.output or "a.out"
        return out if "/" in out else "./" + out


def _archs_of(value: str) -> list:
    """Architectures named by -arch/-code/-gencode: ``sm_80`` -> ["80"], ``sm_90a`` -> ["90a"], ``native`` -> []."""
    return re.findall(r"(?:sm|compute|lto)_(\d+[af]?)", value)


def parse_nvcc(argv) -> NvccCommand:
    """Sort an nvcc command line (without the word ``nvcc``) into an NvccCommand."""
    cmd = NvccCommand()
    words = list(argv)
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        name, eq, value = w.partition("=")
        if not w.startswith("-") or w == "-":
            _file(cmd, w)
        elif name in _VALUED:
            if not eq:
                if i >= len(words):
                    raise NvccUsageError(f"{w} needs a value, as in {w} {_example(_VALUED[name])}")
                value = words[i]
                i += 1
            _take(cmd, _VALUED[name], value)
        elif w in _MODES:
            cmd.mode = _MODES[w]
        elif w in _DEVICE_C:
            cmd.rdc = True
        elif w in ("-shared", "--shared"):
            cmd.shared = True
        elif w not in _LOOK_ALIKE and (a := next((p for p in _ATTACHED if w.startswith(p) and len(w) > 2), None)):
            _take(cmd, a, w[len(a):])
        elif name not in _CUDALAB_OWNS:
            cmd.compile_options.append(w)      # a flag: -G, -lineinfo, --use_fast_math, -w, -m64 ...
    return cmd


def _file(cmd: NvccCommand, w: str):
    suffix = Path(w).suffix.lower()
    if suffix in SOURCE_SUFFIXES:
        cmd.sources.append(w)
    elif suffix in LINKED_SUFFIXES or re.search(r"\.so(\.\d+)*$", w):
        cmd.linked.append(w)
    else:
        raise NvccUsageError(f"don't know what to do with {w!r}: give .cu, .cpp or .c files "
                             "(and .o/.a files to link), and nvcc options")


def _example(option: str) -> str:
    return {"-I": "include", "-D": "NAME=1", "-o": "program", "-arch": "sm_80", "-std": "c++17",
            "-rdc": "true", "-l": "m", "-L": "lib"}.get(option, "VALUE")


def _take(cmd: NvccCommand, option: str, value: str):
    """File one option with its value where it belongs."""
    if option == "-o":
        cmd.output = value
    elif option == "-rdc":
        if value.lower() not in ("true", "false"):
            raise NvccUsageError(f"-rdc={value}: expected -rdc=true or -rdc=false")
        cmd.rdc = value.lower() == "true"
    elif option in ("-arch", "-code", "-gencode"):
        cmd.arch_options.append(f"{option}={value}")
        cmd.archs.extend(a for a in _archs_of(value) if a not in cmd.archs)
    elif option == "-cudart":
        cmd.cudart = value
    elif option in ("-l", "-L"):
        cmd.link_options.append(option + value)
    elif option in ("-Xlinker", "-Xnvlink"):
        cmd.link_options += [option, value]
    elif option == "-Xcompiler":
        cmd.compile_options += [option, value]
        cmd.link_options += [option, value]             # -fopenmp, -pthread matter when linking too
    elif option == "-ccbin":
        if host_compiler_here(value):
            cmd.compile_options += [option, value]
            cmd.link_options += [option, value]
    elif option in ("-I", "-D", "-U", "-O"):
        cmd.compile_options.append(option + value)
    elif option in _CUDALAB_OWNS:
        pass                                            # cudalab keeps its own intermediate files
    else:
        cmd.compile_options += [option, value]
