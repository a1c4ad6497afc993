"""Run the CUDA C++ programs of public courses through ``cudalab run`` as their authors build them, and write docs/courses.md.

Not part of CI: the programs belong to their authors and stay outside this repository. Give a
checkout and the programs to try (globs, relative to the checkout)::

    python tools/courses_check.py --checkout ~/cuda-training-series 'exercises/hw*/*.cu' \\
        'exercises/hw*/*/*.cu' --json olcf.json
    python tools/courses_check.py --checkout ~/code-samples 'series/cuda-cpp/*/*.cu' --json blog.json
    python tools/courses_check.py --checkout ~/code-samples 'series/cuda-cpp/*/*.cu' --stage-gpu gpu/blog
    python3 gpu/blog/run_gpu.py                     # on a machine with a GPU: writes gpu.json
    python tools/courses_check.py --merge olcf.json blog.json --gpu gpu.json   # docs/courses.md

Each program is built as its course says, in this order:

1. a Makefile in its folder: ``make -B`` runs in a copy of the folder with stand-ins for nvcc and
   the C/C++ compilers that record their command lines; the link that takes the program's source
   (or its object file) gives the sources and options (``-arch``, ``-I``, ``-D``, ``-std``, ``-rdc``,
   ``-x cu``), unless the file's ``#ifndef X / #error`` lines demand a ``-D`` the Makefile does not give and a
   script beside it does (a timing script's ``nvcc -DLEN=$i -DTHREADS=10 ...``, its loop's first turn);
2. an ``nvcc ...`` line naming the file in its own comments (a book's header: "To build use : nvcc x.cu
   -rdc=true -o x"), else in a readme, build script or notebook (``!nvcc ...``) of its folder, up to a
   shell's ``&&`` (``nvcc -o /tmp/a.out x.cpp && /tmp/a.out``), or in a cluster's job script one folder
   down (``scripts/task1.sh``, which ``sbatch`` runs from the program's folder);
3. the same one folder up, as a reader looks next: a Makefile there that builds ``src/NAME.cu``
   (the program then builds and runs in that folder, as ``make`` and ``./NAME`` would; or two folders
   up, ``1_MatrixMul/src/MatrixMul.cu`` from a homework's top Makefile), else an
   ``nvcc`` line in a readme there or further up (a book's ``chapter-10/README.md`` for
   ``chapter-10/code/NAME.cu``; ``task1_solution.cu`` takes ``task1.cu``'s line, and ``solutions/NAME.cu``
   the Makefile above that builds ``NAME.cu``, in the solutions folder); the other files
   that line names are found as the reader finds them, beside the program or from the readme's folder;
4. else the options ``--options GLOB=WORDS`` gives (a course that builds in a helper script), else
   ``nvcc -o NAME NAME.cu``, as the first exercises of most courses say.

The program runs in its folder of a copy of the checkout (programs write files where they run, and
include ``../shared/x.h``), with the arguments ``--args`` gives (a book's table of sizes), else those of the line that runs it in
the readme or job script its build came from (``./task1 1024 64``, or `` `./task1 1024 64` `` quoted in a readme's
text) or in its Makefile's ``run`` target, else the first turn of a job script anywhere in the checkout that
runs it (``GPU_KERNEL=$i $prog $m $n $k`` in a loop: the variables such a line sets are the program's
environment), else the example its own usage message shows ("example: ./grid_min 1000000000 256 256"), else
none, as a student runs it: ``cudalab run`` with the emulator's own watchdog, under a limit on CPU time
(the machine is shared, so wall time says little). It passes when its exit code is 0, no line of
its output says it failed (nor that a launch was refused, for a program that checks no error), and,
where its source prints a success message ("Success!", "PASS", "correct!"), the output has one. One that
prints no verdict at all *ran* where it is an exercise's skeleton (a comment leaves work to the student)
or its numbers differ from its course's solution run beside it (``no_verdict_c18``). A kernel too large for a CPU must stop with the watchdog's
estimate of the time it needs (or, for a grid run in one batch, how far it got): that is cudalab's
correct answer, listed as *GPU-sized*, as is an allocation larger than the emulated device's memory.

Programs that need what cudalab does not emulate (cuBLASLt, cufftXt, cuSPARSE, cuDNN, MPI, NVML,
graphics) are left out with the reason; a build line that avoids MPI (``-DNO_MPI``) is
taken when the course gives one. The helpers (running under a CPU limit, the
first error line, cudalab's own explanation) are tools/samples_check.py's.
"""
from __future__ import annotations

import argparse
import fnmatch
import glob
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from samples_check import (ROOT, WALL_PER_CPU, _BUILD, explanation, failed_line, first_error,  # noqa: E402
                           run_limited)

TIMEOUT = 120
# what course programs print when their check fails, besides what NVIDIA's samples print
# ("Error between device result and host result: 0.000001", a mean difference under 1e-3, reports
# float rounding, as a GPU's contracted fma gives it; it is no failure, nor is "Error not occured")
COURSE_FAILURE = re.compile(r"(?<!\b0 )(?<!\bno )\bmismatch|\b(?:did|do|does)(?:n't| not) match\b|\bincorrect\b|\bnot correct\b|^Error\b(?!s?( sum| count)?\s*(=|:|is)?\s*0(\.0*)?\s*$)(?! not occ?urr?ed)(?!\s*:\s*no error\s*$)"
                            r"(?![^\n]*[=:]\s*(0\.000\d*|\d(\.\d*)?e-0*([4-9]|[1-9]\d))\s*$)|\bErrors? (in|at)\b|"
                            r"\bFound [1-9]\d* errors|\bfailed with [1-9]\d* errors?\b|\*\*\* .* failed|\bCuda failure\b|\bCudaError\b|cuda error:|"
                            r"\?\s*FALSE\s*$",   # NVIDIA DLI's "All elements were doubled? FALSE"
                            re.I | re.M)
# ("error: no error", a lab's check that prints cudaGetErrorString(cudaSuccess) after every launch, is no failure)
# ("Everything is passed into the kernel", a book's note on its arguments, says nothing of a result)
# ("Both options can be passed", a usage line's passive, is no verdict either)
SUCCESS = re.compile(r"\bsuccess(ful(ly)?)?\b|\bsucceeded\b|\bcorrect\b|"
                     r"(?<!\bbe )(?<!\bbeen )(?<!\bYou've )\bPASS(ED)?\b(?!\s+(?:(?:in|into|to|as|by|through|from|on|over|along)\b|\d))", re.I)
# ("You should pass 4 CLI arguments", "You've passed 1 arguments": a usage line's count, no verdict either)
# (a library call too large for the CPU, cuBLAS's 16384-cubed gemm, is refused as "(it is GPU-sized)")
GPU_SIZED = re.compile(r"about [\d.,]+ \w+ on the emulator|between [\d.,]+ \w+ and [\d.,]+ \w+ on the emulator|"
                       r"\(it is GPU-sized\)")
# a kernel of one block cannot be extrapolated from blocks done: the watchdog tells how far it got;
# and an allocation beyond the emulated device's 4 GiB is told as such
WATCHDOG = re.compile(r"^cudalab: The kernel \S+ ran for more than [\d.]+ s and was stopped by the watchdog|"
                      r"(?:^|(?<=\S))cudalab: out of device memory: asked for", re.M)
# (the allocation's message may end a line the program left open: Utah's table prints "1000000000" and
# then calls cudaMalloc for 4 GB twice, so the message follows the size on the same line)
# what a program may use that cudalab does not emulate: (pattern over its sources and command, reason)
_OPENCV_B14 = any(Path(d).is_dir() for d in ("/usr/include/opencv4", "/usr/local/include/opencv4", "/usr/include/opencv2"))
NOT_EMULATED = [
    # a library by its header: a Makefile's LIB := -lcurand -lcublas is often shared by programs that
    # use neither, and helper_cuda.h names every library's status type. cuBLAS (v2 and legacy), cuBLASLt,
    # cuSPARSE's generic API, cuRAND's host API and cuFFT run (programs/server_libraries.py); these do not:
    # (cuBLASXt's handle, device selection, block size, pinning and [SDCZ]gemm run: shim/cublasXt.c)
    (r"\bcublasXt(?!Create|Destroy|DeviceSelect|[SG]etBlockDim|[SG]etPinningMemMode|GetNumBoards|MaxBoards|"
     r"[SDCZ]gemm\b|Handle)\w+\s*\(", "cuBLASXt beyond its gemm"),
    (r"cufftXt", "cuFFT's multi-GPU and callback API (cufftXt)"),
    (r"cusolver\w*\.h", "cuSOLVER"),
    (r"[<\"]cufile\.h[>\"]|-lcufile\b", "cuFile (GPUDirect Storage: reads a file straight into GPU memory)"),
    (r"-lnvidia-ml|nvml\.h", "NVML"), (r"mpicxx|mpicc|-lmpi\b|[<\"]mpi\.h[>\"]", "MPI"),     # (OpenMP host code works)
    # (the driver API and NVRTC run: shim/driver*.c, NVIDIA's NVRTC from its wheel)
    (r"[<\"]npp\w*\.h[>\"]|-lnpp", "NPP"), (r"<GL/|<GLFW/|<EGL/|cuda_gl_interop", "graphics (OpenGL/EGL)"),
    (r"-lQt\w*|[<\"]Q(Image|Application|Widget|Color|Painter)[>\"]|[<\"]Qt\w+/", "Qt (a GUI library, not installed here)"),
    # (a Russian course's bilateral filter, the Coursera CUDA course's image labs; books6 to books12 left such
    # programs out by hand)
    *([(r"[<\"]opencv2?/|-lopencv_|pkg-config[^\n]*\bopencv",
        "OpenCV (a host image library, not installed here)")] if not _OPENCV_B14 else []),
    (r"NvInfer\.h|-lnvinfer", "TensorRT"), (r"cudnn\.h|-lcudnn", "cuDNN"),
    # (a particle-physics course's labs fill ROOT histograms: TROOT.h, TH1F.h, -lCore -lHist)
    (r"[<\"]T(?:ROOT|System|H[123][CSIFD]|Canvas|File|Tree|Application|Random\d?|F1|Graph|Minuit)\.h[>\"]|-lCore\b.*-lHist\b",
     "ROOT (CERN's data-analysis framework, not installed here)"),
    # (NVTX 2, <nvToolsExt.h> with -lnvToolsExt, builds over NVTX 3's headers: legacy_props.NVTX2_HEADERS)
    # (the Coursera CUDA course's image labs read their PNGs with OpenCV (above), its NPP projects with FreeImage)
    (r"[<\"]FreeImage\.h[>\"]|-lfreeimage\b", "FreeImage (a host image library, not installed here)"),
]
COMPILERS = ("nvcc", "g++", "gcc", "c++", "cc", "clang", "clang++", "CC")   # CC: Cray's C++ wrapper (an HPC centre's makefile)
ARCHIVERS = ("ar",)         # recorded too: which static library a Makefile makes (the SDK's libcutil.a)


@dataclass
class Program:
    """One program as its course builds it, or why it is left out."""

    name: str                     # path of its main source in the checkout
    folder: str                   # its folder in the checkout
    sources: list = field(default_factory=list)
    options: list = field(default_factory=list)
    how: str = ""                 # where the build came from: Makefile, a readme, the default
    left_out: str = ""
    arguments: list = field(default_factory=list)   # what its author runs it with (--args)
    environment: dict = field(default_factory=dict)  # the variables its author's run line sets (GPU_KERNEL=0 ./x)
    stdin: str = ""                                 # the file its author feeds it (--stdin: ./x < image.pgm)
    libraries: list = field(default_factory=list)   # nvcc -shared lines that build the CUDA libraries it links
    host_libraries: list = field(default_factory=list)  # folders whose Makefile builds a host library it links


@dataclass
class Result:
    name: str
    status: str                   # pass, ran (no verdict), fail, GPU-sized, time, left out
    detail: str = ""
    cpu_seconds: float = 0.0
    command: str = ""
    how: str = ""


# ---------------------------------------------------------------------------------------- builds
# "nvcc ./src/reader.cu -c" with no -o writes reader.o where it runs, and a McGill lab's Makefile then says
# "mv ./reader.o ./bin": the stand-in makes that file too, else the mv fails, make -k gives up on every
# program that needs reader.o, and the tool built them without their second file
_OBJECTS_WITHOUT_O_C20 = ('case " $* " in *" -o"*) ;; *" -c "*|*" -dc "*) for w in "$@"; do case "$w" in '
                          '-*) ;; *.cu|*.c|*.cpp|*.cc|*.cxx|*.C) b=${w##*/}; touch "${b%.*}.o" 2>/dev/null;; '
                          'esac; done;; esac\n')


def _stand_ins(folder: Path) -> Path:
    """Compilers that log their command line and make the file -o names, for a recorded ``make -B``."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(parents=True)
    for name in ARCHIVERS:     # "ar rucv ../lib/libcutil.a x.o": the archive by its full path (make -C common)
        tool = bin_dir / name
        tool.write_text('#!/bin/sh\n{ basename "$0"; printf "%s\\n" "$1"; case "$2" in /*) echo "$2";; '
                        '*) echo "$PWD/$2";; esac; echo "--end--"; } >> "$COURSES_LOG"\nexit 0\n')
        tool.chmod(0o755)
    for name in COMPILERS:
        tool = bin_dir / name
        tool.write_text('#!/bin/sh\n{ basename "$0"; printf "%s\\n" "$@"; echo "--end--"; } >> "$COURSES_LOG"\n'
                        + _OBJECTS_WITHOUT_O_C20 +
                        'while [ $# -gt 0 ]; do case "$1" in -o) touch "$2" 2>/dev/null;; '
                        '-o?*) touch "${1#-o}" 2>/dev/null;; esac; shift; done\nexit 0\n')
        tool.chmod(0o755)
    # a Makefile that asks nvidia-smi whether there is an NVIDIA GPU (and which compute capability) before
    # it builds the CUDA programs at all, as the GPU machine it was written for answers
    smi = bin_dir / "nvidia-smi"
    smi.write_text('#!/bin/sh\ncase "$*" in\n  *compute_cap*) echo 9.0;;\n  *--query-gpu=name*) echo "NVIDIA H100";;\n'
                   '  *) echo "GPU 0: NVIDIA H100 (UUID: GPU-00000000-0000-0000-0000-000000000000)";;\nesac\nexit 0\n')
    smi.chmod(0o755)
    _windows_shell_stand_ins_b14(bin_dir)
    return bin_dir


def _windows_shell_stand_ins_b14(bin_dir: Path):
    """``powershell``, ``pwsh`` and ``cmd``, which do nothing and succeed: a Makefile written on Windows makes its
    ``build/`` folder with ``@powershell -Command "if (!(Test-Path 'build')) { New-Item ... }"`` before nvcc, and
    make -k, stopped at that command here, built nothing (an SJTU homework's, two folders above its
    programs); on the author's machine the folder is made and nvcc runs."""
    for name in ("powershell", "pwsh", "cmd"):
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\nexit 0\n")
        tool.chmod(0o755)


# NVCC = /usr/local/cuda/bin/nvcc, CC = /usr/bin/g++: a compiler named by its full path
_FULL_PATH_COMPILER = re.compile(r"^\s*(NVCC|CC|CXX)\s*[:?]?=\s*/\S*/(nvcc|g\+\+|gcc|c\+\+|cc|clang|clang\+\+)\s*$", re.M)


_CUDA_HOME_VARIABLES = ("CUDA_HOME", "CUDA_PATH", "CUDA_DIR", "CUDA_ROOT", "CUDA_INSTALL_PATH", "CUDA_TOOLKIT_ROOT_DIR")
# any other variable that holds a CUDA toolkit's folder by its path (NTUA's CUDA_PREFIX = /usr/local/cuda,
# then GPU_CC ?= $(CUDA_PREFIX)/bin/nvcc; a cluster's CUDA = /usr/local/apps/cuda/cuda-10.1): the stand-in
# folder, whose bin/ holds the recording nvcc, else every nvcc line fails and only the C files are seen
_CUDA_FOLDER_VARIABLE = re.compile(r"^\s*(?:export\s+)?(\w+)\s*[:?]?=\s*/\S*/cuda(?:-[\d.]+)?/?\s*$", re.M)


def _cuda_home() -> Path:
    """The toolkit cudalab builds with (its headers: the SDK's cutil.cpp includes builtin_types.h)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from cudalab.programs.build import cuda_home
    return cuda_home()


def make_commands(folder: Path, target: str | None = None, within: Path | None = None, variables=()) -> list:
    """The compiler command lines ``make -B`` (``make -B target``) runs in ``folder`` (each a list of
    words), from a copy. Where ``folder`` lies below ``within`` (the checkout), the copy has its
    neighbours beside it: a book's chapter Makefile builds ``pgm.o`` from ``../common/pgm.cpp``, and
    make builds nothing that needs a prerequisite it cannot find. ``variables`` (``bx=16``) go on make's
    command line, as a readme's ``make -C build bx=16`` puts them."""
    with tempfile.TemporaryDirectory(prefix="courses-make-") as tmp:
        copy = Path(tmp) / "src"
        if within is not None and folder.resolve() != within.resolve() and within.resolve() in folder.resolve().parents:
            copy = _beside_its_neighbours(folder, Path(tmp), within)
        shutil.copytree(folder, copy, symlinks=True)
        _resolve_outside_links(folder, copy)
        home = Path(tmp) / "cuda"
        bin_dir = _stand_ins(home)
        _recipes_with_stand_ins(_makefile(copy), bin_dir)
        log = Path(tmp) / "commands.log"
        log.touch()
        env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", COURSES_LOG=str(log))
        # a Makefile that names a compiler by its full path gets the stand-in all the same
        makefile = _makefile(folder)
        named = _CUDA_FOLDER_VARIABLE.findall(makefile.read_text(errors="replace") if makefile else "")
        homes = [f"{v}={home}" for v in dict.fromkeys([*_CUDA_HOME_VARIABLES, *named])]
        fixed = [f"{var}={bin_dir / tool}" for var, tool in
                 _FULL_PATH_COMPILER.findall(makefile.read_text(errors="replace") if makefile else "")]
        # PATH on make's command line: a Makefile's "export PATH := /usr/local/cuda/bin:$(PATH)" would put
        # the real nvcc before the stand-ins; make takes a command line's value over the Makefile's
        subprocess.run(["make", "-B", "-k", *homes, *fixed, *variables, f"PATH={env['PATH']}",
                        *([target] if target else [])],
                       cwd=copy, env=env, capture_output=True, timeout=120)
        commands = [block.strip("\n").split("\n") for block in log.read_text().split("--end--\n") if block.strip()]
        for c in commands:          # an archive's path as a path of the checkout
            if c[0] in ARCHIVERS and len(c) > 2:
                c[2] = os.path.normpath(folder / os.path.relpath(c[2], copy))
    # the stand-in CUDA folder's include paths mean the toolkit's, which cudalab gives every build
    return [[w for k, w in enumerate(c) if str(home) not in w and not (w == "-I" and str(home) in c[k + 1:k + 2][0:1])]
            for c in commands]


# a compiler named by its full path in a rule's command, not through a variable (a Warsaw lab's
# "\t/usr/local/cuda/bin/nvcc --compiler-options -fno-strict-aliasing -DUNIX -O2 -o $@ -c $<")
_RECIPE_COMPILER = re.compile(r"(?<=[\t ])/(?:[\w.+-]+/)+(nvcc|g\+\+|gcc|c\+\+|clang\+\+|clang)(?=\s)")


def _recipes_with_stand_ins(makefile: Path | None, bin_dir: Path):
    """The copied Makefile's rules calling the stand-in for each compiler they name by a full path: the
    toolkit is not at /usr/local/cuda here, so make failed there and the tool fell back to a default
    build without the rule's options. Only recipe lines (a tab first) change; variables are given on
    make's command line instead."""
    if makefile is None:
        return
    text = makefile.read_text(errors="replace")
    lines = [_RECIPE_COMPILER.sub(lambda m: str(bin_dir / m.group(1)), line) if line.startswith("\t") else line
             for line in text.split("\n")]
    if "\n".join(lines) != text:
        makefile.unlink()               # (a link into the checkout: write the copy's own file)
        makefile.write_text("\n".join(lines))


def _resolve_outside_links(folder: Path, copy: Path):
    """Replace the copy's links to files outside ``folder`` by those files: a workshop whose every
    exercise folder holds ``Makefile -> ../Makefile`` (one Makefile for all, building ``main.cu``),
    which the copy of one folder would leave dangling."""
    for link in [f for f in copy.rglob("*") if f.is_symlink()]:
        original = folder / link.relative_to(copy)
        if not link.exists() and original.is_file():
            link.unlink()
            shutil.copyfile(original, link)


def _beside_its_neighbours(folder: Path, tmp: Path, within: Path | None = None) -> Path:
    """Where to copy ``folder`` in ``tmp`` so that ``../x`` finds its parent's other entries, and
    ``../../x`` its grandparent's, up to three folders up inside ``within`` (the checkout): a tree of
    folders whose files are links to the checkout's (the stand-ins only name them; an output they touch
    lands in the tree's own folders). An SDK-style lab's Makefile says ``include ../../common/common.mk``."""
    folder = folder.resolve()
    top = folder.parent
    for above in list(folder.parents)[1:3]:         # three folders up at most: ../../../shared/inc
        if within is not None and (above == within.resolve() or within.resolve() in above.parents):
            top = above
    path = [top, *reversed([a for a in folder.parents if top in a.parents])]    # top .. folder's parent
    here = tmp / "up" / top.name
    for k, ancestor in enumerate(path):
        step = path[k + 1].name if k + 1 < len(path) else folder.name       # the way down, copied below
        here.mkdir(parents=True, exist_ok=True)
        for entry in ancestor.iterdir():
            if entry.name in (step, ".git"):
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.copytree(entry.resolve(), here / entry.name, symlinks=True, copy_function=os.symlink,
                                ignore=shutil.ignore_patterns(".git"))
            else:
                os.symlink(entry.resolve(), here / entry.name)
        here = here / step
    return here


_NOT_A_BUILD = ("-M", "-MM", "-E", "-ptx", "-cubin", "-fatbin", "-dlink", "--device-link", "--generate-dependencies")
_COMPILE_ONLY = ("-c", "-dc", "--compile", "--device-c")


def from_makefile(folder: Path, source: str, within: Path | None = None) -> list | None:
    """``from_make`` of ``make -B`` in ``folder``, else of ``make -B NAME`` for ``source``'s NAME: a lab's
    Makefile whose first target builds only its first program (the GPU Bootcamp's jacobi_memcpy before
    jacobi_streams, which `make jacobi_streams` builds); else its SDK project variables."""
    return (from_make(make_commands(folder, within=within), source)
            or from_make(make_commands(folder, Path(source).stem, within=within), source)
            or next((found for target in [*help_targets_c18(_makefile(folder)),
                                          *targets_building_c18(_makefile(folder), source)]
                     if (found := from_make(make_commands(folder, target, within=within), source))), None)
            or from_sdk_project(folder, source))


# a help line of a Makefile's first target: '@echo -e "make cuda\t\tcompile all CUDA sources"'
_HELP_LINE_C18 = re.compile(r"^\t@?echo\b[^\n]*?\bmake\s+([A-Za-z_][\w.-]*)", re.M)


# a rule with its prerequisites: "build-broken-mapped: broken_mapped.cu broken_mapped.h"
_RULE_C18 = re.compile(r"^([\w.-]+)\s*:(?!=)([^\n]*)\n((?:\t[^\n]*\n?)+)", re.M)


def targets_building_c18(makefile: Path | None, source: str) -> list:
    """The targets whose rule names ``source`` (as a prerequisite or in its recipe), where neither make's
    first target nor one named after the program builds it: the Coursera CUDA course's Makefiles name
    theirs ``build-broken-mapped-memory-allocation`` for ``broken_mapped_memory_allocation.cu``, and
    ``make`` builds only the first."""
    if makefile is None:
        return []
    name = Path(source).name
    return [target for target, needs, recipe in _RULE_C18.findall(makefile.read_text(errors="replace"))
            if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w.-])", needs + recipe) and not target.startswith(".")]


def help_targets_c18(makefile: Path | None) -> list:
    """The targets a Makefile's first target names in its help (``dummy:`` echoes "make cuda  compile
    all CUDA sources", then "make clean"): a reader types ``make cuda``, so the tool asks make for
    each in turn (CINECA's CUDA course, whose Makefiles build with ``-arch=sm_70 -Xcompiler=-O3``
    only under ``cuda``). Cleaning targets are left out."""
    if makefile is None:
        return []
    text = makefile.read_text(errors="replace")
    first = re.search(r"^([A-Za-z_][\w.-]*)\s*:(?!=)[^\n]*\n((?:\t[^\n]*\n?)+)", text, re.M)
    if not first or not all(re.match(r"\t@?echo\b", line) for line in first.group(2).splitlines() if line.strip()):
        return []
    named = _HELP_LINE_C18.findall(first.group(2))
    return [t for t in dict.fromkeys(named) if not re.match(r"(dist)?clean|help", t)]


_SDK_VARIABLE = re.compile(r"^\s*(EXECUTABLE|CUFILES|CCFILES|CFILES)\s*[:+]?=\s*((?:[^\n]*\\\n)*[^\n]*)", re.M)


def from_sdk_project(folder: Path, source: str) -> list | None:
    """The build an NVIDIA GPU Computing SDK project Makefile (``EXECUTABLE := lab1``, ``CUFILES :=
    matrixmul.cu``, ``CCFILES := matrixmul_gold.cpp``, ``include ../../common/common.mk``) describes when
    make cannot run it: a lab copied out of the SDK's tree without the SDK's common.mk, whose rules
    compile those files into that program (with ``-I`` the SDK's common/inc where the course has it)."""
    makefile = _makefile(folder)
    text = makefile.read_text(errors="replace") if makefile else ""
    found = {}
    for name, value in _SDK_VARIABLE.findall(text):
        found.setdefault(name, []).extend(value.replace("\\\n", " ").split("#")[0].split())
    cu = found.get("CUFILES", [])
    if not any(_same_source(f, source) for f in cu) or not re.search(r"^\s*-?include\s+\S*common\.mk", text, re.M):
        return None
    included = re.search(r"^\s*-?include\s+(\S*)common\.mk", text, re.M).group(1)
    common = [f"-I{included}inc"] if (folder / included / "inc").is_dir() else []
    name = (found.get("EXECUTABLE") or [Path(source).stem])[0]
    return ["-o", name, *common, *cu, *found.get("CCFILES", []), *found.get("CFILES", [])]


def from_make(commands: list, source: str) -> list | None:
    """The ``cudalab run`` words (options, then sources) of the program that ``commands`` (a recorded
    ``make -B``) link from ``source`` or its object file, or None."""
    commands = [(tool, _as_nvcc(tool, args)) for tool, *args in commands
                if tool not in ARCHIVERS and not set(args) & set(_NOT_A_BUILD)]
    # (by normalised path: "g++ -c ../common/pgm.cpp -o ./pgm.o" is the link's "pgm.o")
    compiled = {os.path.normpath(_output(args) or Path(_sources(args)[0]).with_suffix(".o").name): args
                for tool, args in commands if set(args) & set(_COMPILE_ONLY) and _sources(args)}
    for tool, args in commands:
        if set(args) & set(_COMPILE_ONLY):
            continue
        units = [compiled.get(os.path.normpath(f)) or moved_object_c20(compiled, f) or [f] if f.endswith(OBJECTS_C20)
                 else [f]
                 for f in _files(args)]
        sources = [s for unit in units for s in _sources(unit)]
        if not any(_same_source(s, source) for s in sources):
            continue
        words = []
        for unit in units:
            options = [w for w in _without_host_language(unit) if w not in _files(unit) and w not in _COMPILE_ONLY
                       and w != "-o" and w != _output(unit)]
            if options and not _ends_with(words, options):
                words += options
        rdc = any(w in ("-dc", "--device-c") for unit in units for w in unit)
        linking = [w for w in args if w not in _files(args)]
        words = linking if linking[:len(words)] == words else words + linking   # the same flags, once
        return [*words, *(["-rdc=true"] if rdc else []), *sources]
    return None



# object files: ".obj" too, as a Makefile written on Windows names them (AUB's GPU course: "%.obj: %.cu" and
# "$(EXE): main.obj kernel.obj"), which nvcc links as it links ".o" files
OBJECTS_C20 = (".o", ".obj")


def moved_object_c20(compiled: dict, obj: str) -> list | None:
    """The compile line of an object file the link names in another folder than the one it was compiled
    to: a McGill lab's Makefile runs "nvcc ./src/reader.cu -c", then "mv ./reader.o ./bin", and links
    "./bin/reader.o"; the one compile line that made a file of that name, else None."""
    lines = [args for name, args in compiled.items() if Path(name).name == Path(obj).name]
    return lines[0] if len(lines) == 1 else None


def _without_host_language(unit: list) -> list:
    """A unit's words less ``-x c`` / ``--x=c++``: said of one C file (pngwriter.o), they would make
    one nvcc line that builds every file compile the .cu files as C too; nvcc compiles .c and .cpp
    files as host code anyway."""
    words, k = [], 0
    while k < len(unit):
        w = unit[k]
        if re.fullmatch(r"--?x=?(c|c\+\+)", w):
            k += 1
        elif w in ("-x", "--x") and unit[k + 1:k + 2] in (["c"], ["c++"]):
            k += 2
        else:
            words.append(w)
            k += 1
    return words


def _same_source(word: str, source: str) -> bool:
    """Whether a Makefile's ``word`` names ``source``: by its name when ``source`` is a bare name
    (the Makefile of its own folder, which may spell it ``$(SRC)/x.cu``), else by its path."""
    return Path(word).name == source if "/" not in source else os.path.normpath(word) == os.path.normpath(source)


def _ends_with(words: list, tail: list) -> bool:
    return len(words) >= len(tail) and words[len(words) - len(tail):] == tail


def _output(args: list) -> str | None:
    return next((args[k + 1] for k, w in enumerate(args[:-1]) if w == "-o"), None)


def _as_nvcc(tool: str, args: list) -> list:
    """A recorded command's words as nvcc would take them: a C/C++ compiler's own flags (-fPIC,
    -Wall, -export-dynamic) go through -Xcompiler, as they must when nvcc builds the file."""
    if tool == "nvcc":
        return args
    words, k = [], 0
    while k < len(args):
        w = args[k]
        k += 1
        if w in ("-o", "-I", "-D", "-x", "-l", "-L") and k < len(args):
            words += [w, args[k]]
            k += 1
        elif re.fullmatch(r"-std=(c|gnu|iso9899:)\w*", w) and "++" not in w:
            pass    # gcc's -std=c99 for one C file: nvcc knows only C++ standards, and given to every file of
            #         the one command line it would hide POSIX from another (CLOCK_REALTIME); gcc's default
            #         dialect builds C99 code
        elif not w.startswith("-") or re.match(r"-[IDULlco]|-std=|-O", w) or w in _COMPILE_ONLY:
            words.append(w)
        else:
            words += ["-Xcompiler", w]
    return words


def _files(args: list) -> list:
    """The source and object files among an nvcc command's words."""
    values = {k + 1 for k, w in enumerate(args) if w in ("-o", "-x", "-I", "-D", "-l", "-L", "-arch", "-gencode",
                                                          "-Xcompiler", "-ccbin", "--generate-code", "-std")}
    return [w for k, w in enumerate(args) if k not in values and not w.startswith("-")
            and Path(w).suffix in (".cu", ".cpp", ".cc", ".cxx", ".c", *OBJECTS_C20)]


def _sources(args: list) -> list:
    return [f for f in _files(args) if not f.endswith(OBJECTS_C20)]


# "$ nvcc ...", or "#nvcc ..." (a build script's other programs, commented out)
_NVCC_LINE = re.compile(r"^\s*(?:#\s*)?(?:[$>!]\s*)?(?:\S*/)?nvcc\s+(.*?)\s*$", re.M)   # "!nvcc": a notebook's shell line
# ("# $ nvcc -I. exercise.cu -o exercise": a build script's comment quoting a shell, as a GTC workshop's
# SConstruct tells those without scons how to build)
_NVCC_INLINE = re.compile(r"`+\s*(?:\$\s*)?nvcc\s+([^`\n]*?)\s*`+")       # "Build it with ```nvcc -O3 main.cu```"


_SHELL_SEPARATORS = ("&&", "||", ";", "|", "&")      # "nvcc -o /tmp/a.out x.cpp && /tmp/a.out": the build ends there
# ("&" too: a Makefile's test target starts "./solution_producer &" before its consumer; the shell takes the
# "&" as its own, and the program is run with no arguments)


def from_notes(path: Path, checkout: Path, folders: list):
    """(nvcc words, where) for each line of a readme or build script in ``folders`` that builds this
    file; the other files it names are given relative to the program's folder."""
    stem = re.sub(r"_?solution$", "", path.stem, flags=re.I)
    names = {path.name, f"{stem}{path.suffix}"}
    for folder in folders:
        for note in sorted(folder.iterdir()):
            text = _note_text(note)
            for m in [*_NVCC_LINE.finditer(text), *_NVCC_INLINE.finditer(text)]:
                try:
                    words = shlex.split(m.group(1), comments=True)    # "!nvcc x.cu -o a.out # compile"
                except ValueError:
                    continue
                words = _ipython_expanded(words[:next((i for i, w in enumerate(words) if w in _SHELL_SEPARATORS),
                                                     len(words))])
                words = _with_note_variables(words, text[:m.start()])
                if any(Path(w).name in names for w in words):
                    yield ([path.name if Path(w).name in names else _as_read(w, path.parent, folder) for w in words],
                           note.relative_to(checkout).as_posix())


# a cluster's job script (SLURM, PBS) that builds and runs the program: sbatch submits it from the program's
# folder, so its "nvcc task1.cu matmul.cu -o task1" names the sources from there, wherever the script lies
_JOB_SCRIPTS = (".sh", ".slurm", ".sbatch", ".pbs", ".job", ".batch")


def from_job_scripts(path: Path, checkout: Path):
    """(nvcc words, where) for each nvcc line that names this file in a job script one folder below
    the program's (a course's ``HW06/scripts/task1.sh``, which ``make task1`` submits with ``sbatch
    ./scripts/task1.sh`` from ``HW06``): the words as read from the program's folder, where the job runs."""
    names = {path.name}
    for sub in sorted(d for d in path.parent.iterdir() if d.is_dir() and d.name != ".git"):
        for script in sorted(f for f in sub.iterdir() if f.is_file() and f.suffix.lower() in _JOB_SCRIPTS):
            for words in _nvcc_lines(_note_text(script)):
                if any(os.path.normpath(w) in names for w in words):     # "nvcc ./task1.cu": the same file
                    yield [path.name if os.path.normpath(w) in names else w for w in words], \
                        script.relative_to(checkout).as_posix()


def _nvcc_lines(text: str) -> list:
    """The words of each nvcc line of a readme or script, up to a shell's ``&&``."""
    lines = []
    for m in [*_NVCC_LINE.finditer(text), *_NVCC_INLINE.finditer(text)]:
        try:
            words = shlex.split(m.group(1), comments=True)
        except ValueError:
            continue
        lines.append(_with_note_variables(_ipython_expanded(words[:next((i for i, w in enumerate(words)
                                                                        if w in _SHELL_SEPARATORS), len(words))]),
                                          text[:m.start()]))
    return lines


# "./task1 1024 64" in the script or readme the build came from: the sizes its author runs it with
# ("srun -n 1 ./x 2.0": a batch system's launcher and its options, a count among them; "GPU_KERNEL=0
# ./dmm_main 256 256 256": the shell's assignments before it, the program's environment)
_ASSIGNMENTS = r"(?P<env>(?:[A-Za-z_]\w*=[^\s`]*\s+)*)"
_RUN_LINE = re.compile(r"^\s*(?:[$>!]\s*)?" + _ASSIGNMENTS +
                       r"(?:srun\s+(?:-\S+(?:\s+\d+\b)?\s+)*)?\./(?P<prog>\S+)[ \t]*(?P<args>[^\n]*)$", re.M)
# "Run it with `./x 64`": a readme's run line in backticks, as its build line may be
_RUN_INLINE = re.compile(r"`+[ \t]*(?:\$\s*)?" + _ASSIGNMENTS + r"\./(?P<prog>[^\s`]+)[ \t]*(?P<args>[^`\n]*?)\s*`+")


def _run_lines(text: str) -> list:
    """(program, argument text, environment) for each line of a note that runs a program, in the note's
    order: a line of its own or a readme's backquoted command."""
    found = sorted([*_RUN_LINE.finditer(text), *_RUN_INLINE.finditer(text)], key=lambda m: m.start())
    return [(m.group("prog"), m.group("args"), _environment(m.group("env"))) for m in found]


def _environment(assignments: str) -> dict:
    """The variables a command line's leading ``NAME=VALUE`` words set for the program, those whose value
    a shell would not change (a ``$i`` left unexpanded is no value)."""
    env = {}
    for word in assignments.split():
        name, _, value = word.partition("=")
        value = value.strip("\"'")
        if not re.search(r"[$`*?]", value):
            env[name] = value
    return env


_SCRIPT_ASSIGNMENT = re.compile(r"^\s*(?:export\s+)?([A-Za-z_]\w*)=(\"[^\"\n]*\"|'[^'\n]*'|[^\s;]*)\s*$", re.M)
_SCRIPT_FOR = re.compile(r"^\s*for\s+([A-Za-z_]\w*)\s+in\s+([^;\n]+?)\s*(?:;|\n)", re.M)


def _script_expanded(text: str) -> str:
    """A job script as its first run executes it: its simple assignments (``gpu_prog="./dmm_main"``) and
    each ``for i in 0 1 2`` loop's first value (after the assignments: ``for m in $problem_sizes``) put in
    for ``$name`` and ``${name}``, so ``GPU_KERNEL=$i $gpu_prog $m $n $k`` in NTUA's benchmark loops reads
    ``GPU_KERNEL=0 ./dmm_main 256 256 256``. Variables it does not set stay as written."""
    values = {}

    def expand(words: str) -> str:
        return re.sub(r"\$(?:\{(\w+)\}|(\w+))",
                      lambda m: values.get(m.group(1) or m.group(2), m.group(0)), words)
    for name, value in _SCRIPT_ASSIGNMENT.findall(text):
        values.setdefault(name, expand(value.strip("\"'")))
    for name, listed in _SCRIPT_FOR.findall(text):
        words = expand(listed).split()
        if words:
            values.setdefault(name, words[0].strip("\"'"))
    return expand(text)


def job_script_run(output: str, checkout: Path) -> tuple:
    """(arguments, environment) of the first line of a job script anywhere in the checkout that runs
    ``output`` (as its first loop turn runs it: ``_script_expanded``), where its build named no run of its
    own: NTUA's lab keeps its PBS benchmark scripts in ``results/``, apart from the program's folder."""
    if output in ("a.out", "a.exe"):          # (nvcc's default name says nothing of which program a script runs)
        return [], {}
    for script in sorted(checkout.rglob("*")):
        if script.suffix.lower() not in _JOB_SCRIPTS or ".git" in script.parts or not script.is_file():
            continue
        for prog, args, env in _run_lines(_script_expanded(_note_text(script))):
            if Path(prog).name == output:
                words = _plain(args)
                if words or not args.strip():
                    return words, env
    return [], {}


def author_arguments(p: "Program", checkout: Path) -> list:
    """The arguments of the first line of the note that gave ``p``'s build (a readme, a job script) that
    runs the program it builds (``./task1 1024 64``, or ``srun ./task1 1024 64``), where they are plain
    words: none that a shell expands (``$N``), redirects or pipes."""
    return author_run(p, checkout)[0]


def author_run(p: "Program", checkout: Path) -> tuple:
    """(arguments, environment) its author runs ``p`` with: ``author_arguments``'s line, with the variables
    it sets before the program (``GPU_KERNEL=0 ./dmm_main 256 256 256``: the kernel the program reads with
    getenv), else, where neither its Makefile nor a readme runs it, a job script's line (``job_script_run``)."""
    note = checkout / p.how
    output = Path(_output(p.options) or Path(p.name).stem).name
    if p.how.startswith("default"):
        found = _readme_run(checkout / p.name, checkout)
        found = found if found != ([], {}) else job_script_run(output, checkout)
        return found if found != ([], {}) else (usage_example(checkout / p.name), {})
    if not note.is_file() or p.how.startswith("given"):
        return [], {}
    if note.name.lower() in ("makefile", "gnumakefile"):
        # (a Makefile that only builds: the readme beside it says how the program runs, "$ ./blur_filter 4096")
        words = _make_run_arguments(note.read_text(errors="replace"), output) or make_call_run_c18(note, output)
        found = (words, {}) if words else _readme_run(checkout / p.name, checkout, output)
        return found if found != ([], {}) else job_script_run(output, checkout)
    for prog, args, env in _run_lines(_note_text(note)):
        if not _runs_the_output_c16(prog, output, p.options):
            continue
        return _plain(args), env
    return [], {}


def _runs_the_output_c16(prog: str, output: str, options: list) -> bool:
    """Whether a note's ``./PROG`` runs the program its build line makes: the output's name, or the path
    the build wrote it to (a CERN school's notebook builds ``nvcc -arch=sm_80 -o
    matrix_multiplication/matrix_multiply ...`` from the checkout's top and runs
    ``./matrix_multiplication/matrix_multiply 512``; read by name alone, its 512 was never given)."""
    built = _output(options)
    return prog == output or (built is not None and os.path.normpath(prog) == os.path.normpath(built))


# the example a program's own usage message gives: 'std::cout << "example: " << argv[0] << " 1000000000 512"',
# 'printf("Example: %s 1024 16\\n", argv[0])'
_USAGE_EXAMPLE = re.compile(r'"\s*(?:e\.g\.|for )?example:?\s*(?:"\s*<<\s*argv\[0\]\s*<<\s*"|%s|\./\w+)'
                            r'\s+([^"\\%]*?)\s*(?:\\n)?"', re.I)


def usage_example(path: Path) -> list:
    """The arguments of the example run a program's usage message shows (Luxembourg's demos print
    "example: ./grid_min 1000000000 256 256" when run without their three sizes): its author's sizes, where
    no note says how the program runs."""
    try:
        m = _USAGE_EXAMPLE.search(_without_comments(path.read_text(errors="replace")))
    except OSError:
        return []
    return _plain(m.group(1)) if m else []


def _readme_run(path: Path, checkout: Path, output: str = "") -> tuple:
    """For a program built as nvcc's default (its readme names no build line of its own), the arguments (and
    environment) of the line in a readme beside it or one or two folders up that runs a program of its name, with or
    without a suffix: KTH's lab text builds only the first exercise (``nvcc lab01_ex1.cu -o
    lab01_ex1.out``) and then runs the second with ``srun -n 1 ./lab01_ex2.out 2.0``."""
    folders = [f for f in list(path.parents)[:3] if checkout in (f, *f.parents)]
    for folder in folders:
        for note in sorted(folder.iterdir()):
            if not (note.is_file() and re.match(r"readme|notes|instructions", note.name, re.I)):
                continue
            for prog, args, env in _run_lines(_note_text(note)):
                if Path(prog).name.split(".")[0] not in (path.stem, output):
                    continue
                if any(_PLACEHOLDER.fullmatch(w) for w in args.split()):
                    continue                        # "./blur_filter {size}": the usage, the example follows
                return _plain(args), env
    return [], {}


_PLACEHOLDER = re.compile(r"\{[^}]*\}|<[^>]*>|\[[^\]]*\]")

def _plain(text: str) -> list:
    """The words of a command line's arguments up to a shell's ``&&``, or [] if a shell would change them."""
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        return []
    words = words[:next((i for i, w in enumerate(words) if w in _SHELL_SEPARATORS), len(words))]
    return [] if any(re.search(r"[$`<>|*?]", w) for w in words) else words


_MAKE_ASSIGNMENT = re.compile(r"^\s*([A-Za-z_]\w*)\s*[:?]?=\s*(.*?)\s*$", re.M)
_MAKE_RULE = re.compile(r"^([\w.-]+)\s*:(?!=)[^\n]*\n((?:\t[^\n]*\n?)+)", re.M)


def _make_run_arguments(makefile: str, output: str) -> list:
    """The arguments a Makefile's ``run`` target gives the program (JSC's ``run: $(JACOBI_CUDA) 2`` with
    ``JACOBI_CUDA = jacobi_cuda``; a batch system's ``bsub ... ./scale_vector_um``, none), else the first
    other target whose recipe runs it (a lab with a CPU and a GPU version: ``run_gpu: ./$(EXEC_GPU) 2048
    4096 2048``): its variables expanded as make would, for simple assignments."""
    variables = dict(_MAKE_ASSIGNMENT.findall(makefile))
    rules = sorted(_MAKE_RULE.findall(makefile), key=lambda rule: rule[0] != "run")     # `run` first
    for _target, recipe in rules:
        words = _recipe_run(_target, recipe, output, variables)
        if words is not None:
            return words
    return []


# commands that name the program as a file, not run it: a clean target's "rm ./block_queuing", before the
# run target that runs it with its arguments (McGill's lab 3; courses20)
_FILE_COMMANDS_C20 = ("rm", "cp", "mv", "chmod", "ls", "cat", "touch", "ln", "echo", "strip", "file", "size", "tar",
                      "scp", "rsync", "du")


def _recipe_run(target: str, recipe: str, output: str, variables: dict) -> list | None:
    """The arguments ``recipe`` runs ``output`` with (its ``$(NAME)`` from ``variables``), else None."""
    for line in recipe.splitlines():
        for _ in range(5):                   # variables made of variables
            line = re.sub(r"\$[({](\w+)[)}]", lambda m: variables.get(m.group(1), m.group(0)), line)
        words = line.split()
        if words and words[0].lstrip("@-") in _FILE_COMMANDS_C20:
            continue
        # the program run, not built: "./x 2048", "srun ./x", never "nvcc -o x x.cu"
        # (by name: "-o ./block_queuing", and "./block_queuing 35 64 64 ..." in the run target: courses20)
        at = next((k for k, w in enumerate(words) if Path(w).name == Path(output).name and not w.startswith("-")
                   and (w.startswith("./") or target == "run") and words[k - 1:k] != ["-o"]), None)
        if at is not None:
            return _plain(" ".join(words[at + 1:]))
    return None


# a script's call of make with a target and variables: 'make run-memory-copy ARGS="-p IYn5V -n 128 -t 128"'
_MAKE_CALL_C18 = re.compile(r"^\s*make\s+([^\n#]*)", re.M)


def make_call_run_c18(makefile: Path, output: str) -> list:
    """The arguments of the first line of a script beside ``makefile`` that runs ``output`` through one of
    its targets, the variables it gives make put in the recipe (the Coursera CUDA course's ``run.sh``:
    ``make run-broken-paged-pinned-memory-allocation ARGS="-p pOwge -n 128 -t 128"``, whose recipe is
    ``./broken_paged_pinned_memory_allocation.exe $(ARGS)``), else []."""
    text = makefile.read_text(errors="replace")
    rules = {target: recipe for target, recipe in _MAKE_RULE.findall(text)}
    for script in sorted(makefile.parent.iterdir()):
        if script.suffix.lower() not in _JOB_SCRIPTS or not script.is_file():
            continue
        for m in _MAKE_CALL_C18.finditer(_note_text(script)):
            try:
                words = shlex.split(m.group(1))
            except ValueError:
                continue
            given = dict(w.split("=", 1) for w in words if "=" in w and not w.startswith("-"))
            for target in (w for w in words if "=" not in w and not w.startswith("-") and w in rules):
                found = _recipe_run(target, rules[target], output,
                                    {**dict(_MAKE_ASSIGNMENT.findall(text)), **given})
                if found:
                    return found
    return []


# a comment's "To build use  : nvcc quicksort.cu -arch=compute_35 -rdc=true -o quicksort" or "// nvcc -o x x.cu"
_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# ("//nvcc -rdc=true x.cu -o x", with no space after the slashes; "// Build: `nvcc -o x x.cu`", in backticks)
_COMMENT_NVCC = re.compile(r"(?:^|[\s:>$/*`])nvcc\s+([^\n`]*?)\s*(?:`|(?:\*/)?\s*$)", re.M)


def from_own_comment(path: Path):
    """(nvcc words, where) for the build line the program's author wrote in its own comments (a
    book's header block: "To build use : nvcc x.cu -arch=compute_35 -code=sm_35 -rdc=true -o x"),
    if it names the file: the author's word on its options (-rdc=true for dynamic parallelism)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return
    for comment in _COMMENTS.finditer(text):
        for m in _COMMENT_NVCC.finditer(comment.group(0)):
            try:
                words = shlex.split(m.group(1).rstrip("*/ "))
            except ValueError:
                continue
            words = words[:next((i for i, w in enumerate(words) if w in _SHELL_SEPARATORS), len(words))]
            if any(Path(w).name == path.name for w in words):
                yield ([path.name if Path(w).name == path.name else w for w in words], f"{path.name}'s own comment")


_WRITEFILE = re.compile(r"\s*%%(?:writefile|file)\s+(?:-a\s+)?(\S+)[ \t]*\n")


def with_notebook_files(checkout: Path, tmp: Path) -> Path:
    """A copy of ``checkout`` (in ``tmp``) in which every notebook's ``%%writefile NAME`` cells are
    files in a folder named after the notebook, with the notebook beside them for its ``!nvcc``
    lines: a Colab course keeps its programs only as cells (a Korean workshop's 18)."""
    copy = tmp / checkout.name
    shutil.copytree(checkout, copy, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    for nb in sorted(copy.rglob("*.ipynb")):
        try:
            cells = json.loads(nb.read_text(errors="replace")).get("cells", [])
        except (ValueError, AttributeError):
            continue
        folder = nb.parent / nb.stem
        for cell in cells:
            text = "".join(cell.get("source", "")) if isinstance(cell, dict) else ""
            m = _WRITEFILE.match(text)
            if m and "/" not in m.group(1) and Path(m.group(1)).suffix in (".cu", ".cuh", ".h", ".hpp", ".cpp", ".c"):
                folder.mkdir(exist_ok=True)
                (folder / m.group(1)).write_text(text[m.end():])
                shutil.copy(nb, folder / nb.name)
        for name, program in nvcc4jupyter_cells_c20(cells):
            folder.mkdir(exist_ok=True)
            (folder / name).write_text(program)
    return copy


_NVCC4JUPYTER_C20 = re.compile(r"\s*%%cu(?:da)?\b[^\n]*\n")


def nvcc4jupyter_cells_c20(cells: list) -> list:
    """(file name, program) for each cell a notebook runs with nvcc4jupyter's ``%%cu`` (``%%cuda`` in its
    later versions): ``!pip install git+.../nvcc4jupyter.git``, ``%load_ext nvcc_plugin``, then one whole
    program per cell, which the plugin writes to a file, builds with plain ``nvcc`` and runs (a Colab
    course's weekly notebooks, Habib University's 35). The file is named after the cell's place among the
    notebook's code cells (``cell3.cu``), as a reader points at "the third cell"."""
    found, code_cells = [], [c for c in cells if isinstance(c, dict) and c.get("cell_type") == "code"]
    for n, cell in enumerate(code_cells, 1):
        source = cell.get("source", "")
        text = source if isinstance(source, str) else "".join(source)
        m = _NVCC4JUPYTER_C20.match(text)
        if m and re.search(r"\bmain\s*\(", text):
            found.append((f"cell{n}.cu", text[m.end():]))
    return found


def _ipython_expanded(words: list) -> list:
    """A notebook's ``!nvcc -arch=sm_{major}{minor} x.cu``: IPython puts the Python variables in
    braces into the shell line, and a course sets them from the GPU it runs on (numba's
    ``compute_capability``), so the line builds for the GPU at hand, as ``-arch=native`` does."""
    return ["-arch=native" if re.match(r"--?(arch|gpu-architecture)\b", w) and "{" in w else w for w in words]


_NOTE_ASSIGNMENT = re.compile(r"^[ \t]*(?:export[ \t]+)?([A-Za-z_]\w*)=([^\s;&|#]*)", re.M)


def _with_note_variables(words: list, before: str) -> list:
    """An nvcc line's ``$NAME`` and ``${NAME}`` given the value the same note set before it: a Polish
    course's ``%%bash`` cells say ``CUDA_SUFF=70`` and then ``nvcc -gencode
    arch=compute_${CUDA_SUFF},code=sm_${CUDA_SUFF} x.cu``, which the shell expands and nvcc never sees
    unexpanded. Names the note does not set stay as written."""
    values = dict(_NOTE_ASSIGNMENT.findall(before))
    if not values:
        return words
    return [re.sub(r"\$(?:\{(\w+)\}|(\w+))", lambda v: values.get(v.group(1) or v.group(2), v.group(0)), w)
            for w in words]


def from_notes_elsewhere(path: Path, checkout: Path):
    """(nvcc words, where) for each line of a readme, build script or notebook anywhere in the checkout
    that names this file by a path leading to it from the note's folder: a workshop whose notebooks in
    ``material/`` build ``!nvcc -O3 -o ../build/x/prog ../src/x/prog.cu``. The words are given as seen
    from the program's folder, where it runs."""
    target = path.resolve()
    for note in _notes(checkout.resolve()):
        text = _note_text(note)
        for m in [*_NVCC_LINE.finditer(text), *_NVCC_INLINE.finditer(text)]:
            try:
                words = shlex.split(m.group(1), comments=True)
            except ValueError:
                continue
            words = _ipython_expanded(words[:next((i for i, w in enumerate(words) if w in _SHELL_SEPARATORS), len(words))])
            words = _with_note_variables(words, text[:m.start()])
            if not any(not w.startswith("-") and (note.parent / w).resolve() == target for w in words):
                continue
            seen = []
            for k, w in enumerate(words):
                if w.startswith("-") or "$" in w:
                    seen.append(w)
                elif (note.parent / w).resolve() == target:
                    seen.append(path.name)
                elif (Path(w).suffix in (".cu", ".cpp", ".cc", ".cxx", ".c") or words[k - 1:k] == ["-o"]) \
                        and not os.path.isabs(w):
                    seen.append(os.path.relpath(note.parent / w, path.parent))    # another source, the output
                else:
                    seen.append(w)
            yield seen, note.relative_to(checkout.resolve()).as_posix()


_NOTES = {}


def _notes(checkout: Path) -> list:
    """The readmes, build scripts and notebooks of a checkout (read once per checkout)."""
    if checkout not in _NOTES:
        _NOTES[checkout] = sorted(f for f in checkout.rglob("*") if ".git" not in f.parts and f.is_file()
                                  and f.suffix.lower() in ("", ".md", ".txt", ".rst", ".ipynb", *_JOB_SCRIPTS))
    return _NOTES[checkout]


def _note_text(note: Path) -> str:
    """The text of a readme or build script, or of a notebook's cells (a course that builds each
    ``%%writefile``'d source with ``!nvcc ...`` in the cell after it); "" for anything else."""
    if not note.is_file() or note.name.lower() in ("makefile", "gnumakefile"):
        return ""
    if note.suffix.lower() == ".ipynb":
        try:
            cells = json.loads(note.read_text(errors="replace")).get("cells", [])
        except (ValueError, AttributeError):
            return ""
        return "\n".join("".join(c.get("source", "")) for c in cells if isinstance(c, dict))
    if note.suffix.lower() not in ("", ".md", ".txt", ".rst", *_JOB_SCRIPTS) or note.stat().st_size > 200_000:
        return ""
    text = note.read_text(errors="replace")
    # a script's loop over sizes ("for i in 32 64 ...; do nvcc -DLEN=$i -o task2 task2.cu"): its first turn
    return _script_expanded(_without_arguments_b12(_continued_lines_b12(text))) if note.suffix.lower() in _JOB_SCRIPTS else text


def _continued_lines_b12(text: str) -> str:
    """A shell script with each backslash-newline removed, as the shell removes it before it reads a
    command or a quoted value: a Russian course's job script sets ``NVCC_FLAGS="-O3 -lineinfo \\`` on one
    line and its ``-gencode`` options on the next, then runs ``nvcc $NVCC_FLAGS lab1.cu``; read a line at
    a time, the assignment was ``"-O3`` and nvcc was given that quote."""
    return re.sub(r"\\\r?\n", "", text)



def _without_arguments_b12(text: str) -> str:
    """A job script as ``sbatch script`` runs it, with no arguments of its own: each ``${1:-10000000}``
    (a positional parameter's default) is its default, so ``N_ARG=${1:-10000000}`` and ``./lab1 ${N_ARG}``
    run the program with 10000000, as the course's cluster did."""
    return re.sub(r"\$\{[1-9]:?-([^}$\s]*)\}", lambda m: m.group(1), text)

def _as_read(word: str, here: Path, note_folder: Path) -> str:
    """A source file a readme's nvcc line names, as a reader running it beside the program finds it:
    there as written, else from the readme's folder, else by its name beside the program."""
    if word.startswith("-") or Path(word).suffix not in (".cu", ".cpp", ".cc", ".cxx", ".c") or (here / word).exists():
        return word
    for candidate in (note_folder / word, here / Path(word).name):
        if candidate.exists():
            return os.path.relpath(candidate, here)
    return word


_CMAKE_TARGET = re.compile(r"\b(?:cuda_)?add_executable\s*\(\s*(\S+)\s+([^)]*)\)", re.I)
# a quoted CMake argument may hold escaped quotes and continue over lines: "${X} \\<newline> -gencode=...code=\\\"sm_70\\\""
_CMAKE_FLAGS = re.compile(r"\bset\s*\(\s*CMAKE_CUDA_FLAGS\s+\"((?:[^\"\\]|\\[\s\S])*)\"", re.I)
_CMAKE_ARCHS = re.compile(r"\bset\s*\(\s*CMAKE_CUDA_ARCHITECTURES\s+\"?([\w;-]+)", re.I)
_CMAKE_STANDARD = re.compile(r"\bset\s*\(\s*CMAKE_CUDA_STANDARD\s+\"?(\d+)", re.I)
_CMAKE_INCLUDES = re.compile(r"\binclude_directories\s*\(([^)]*)\)", re.I)


def from_cmake(path: Path, checkout: Path):
    """(nvcc words, where, folder) from the ``add_executable(NAME ... FILE ...)`` of a CMakeLists.txt beside
    the program or one folder up (a sample's ``add_executable(09_Streams src/main.cu)``), with the
    ``CMAKE_CUDA_FLAGS``, ``CMAKE_CUDA_STANDARD`` and ``include_directories`` that it and the
    CMakeLists.txt above it (up to the checkout) set, as ``cmake`` would build it; the sources are
    given from that CMakeLists.txt's folder, where the program then runs; else None."""
    for home in [f for f in (path.parent, path.parent.parent) if checkout in (f, *f.parents)]:
        here = home / "CMakeLists.txt"
        if not here.exists():
            continue
        named = path.relative_to(home).as_posix()
        own = _without_cmake_comments(here.read_text(errors="replace"))
        variables = _cmake_variables(own, home)
        own = _cmake_unrolled(own, variables)
        target = next(((m.group(1), words) for m in _CMAKE_TARGET.finditer(own)
                       for words in [_cmake_expanded(m.group(2), variables)]
                       if named in [os.path.normpath(w) for w in words]), None)
        if target:
            break
    else:
        return None
    name, words = target
    options = (_cmake_options(home, checkout, home) + _cmake_build_type_b12(home, checkout)
               + _cmake_compile_options_b12(home, checkout))
    for m in re.finditer(r"\btarget_include_directories\s*\(\s*" + re.escape(name) + r"\s+([^)]*)\)", own, re.I):
        options += [f"-I{os.path.relpath(home / d, home)}" for d in _cmake_expanded(m.group(1), variables)
                    if "$" not in d and d.upper() not in ("SYSTEM", "BEFORE", "AFTER", "PRIVATE", "PUBLIC", "INTERFACE")]
    if re.search(r"\bCUDA_SEPARABLE_COMPILATION\s+ON\b", own, re.I):
        options.append("-rdc=true")
    options += _target_flags(own, name)
    sources = [f for f in words if Path(f).suffix in (".cu", ".cpp", ".cc", ".cxx", ".c")]
    for word in _linked(own, name, variables):
        library = _library_sources(home, word) if re.fullmatch(r"[\w.+-]+", word) and not word.startswith("-") else []
        # (a library the project's top CMakeLists.txt adds beside the programs: a 2010 workshop's
        # add_subdirectory(cutil) and add_subdirectory(src), whose matrixMul links cutil and shrutil)
        for top in ([] if library or word.startswith("-") or "::" in word else
                    [f for f in home.parents if checkout in (f, *f.parents) and (f / "CMakeLists.txt").exists()]):
            library = [os.path.relpath(top / f, home) for f in _library_sources(top, word)]
            if library:
                break
        if library:                      # a library target of the project's own: its sources join the build
            drawn = _draws(home, [*sources, *library]) if not _draws(home, sources) else set()
            # (an object of the same name in a library linked earlier answers its symbols first, as the linker
            # takes a static library's members: cutil's and shrutil's cmd_arg_reader.cpp)
            taken = {Path(f).name for f in sources}
            sources += [f for f in library if f not in sources and f not in drawn and Path(f).name not in taken]
        elif (headers := _interface_library_b12(home, checkout, word)) is not None:
            options += headers           # a header-only INTERFACE library: its include folders
        else:                            # CUDA::cublas, Curses::Curses, m, -lcublas: link options
            options += cmake_linked([word])
    name = _cmake_expanded(name, variables)[0]
    return [*options, "-o", name, *sources], here.relative_to(checkout).as_posix(), home





def _cmake_compile_options_b12(home: Path, checkout: Path) -> list:
    """The nvcc words of ``add_compile_options(...)`` in the CMakeLists.txt of ``home`` and those above it
    (to the checkout): plain words, and the words of ``$<$<COMPILE_LANGUAGE:CUDA>:a;b>``; an expression for
    another language (``$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra>``, which nvcc's host compiler never sees from
    CMake either) or any other condition adds nothing. A PMPP reader's top CMakeLists.txt gives every CUDA
    file ``--expt-relaxed-constexpr`` so; without it, chapter 12's kernels calling ``ceil`` did not compile."""
    words = []
    for folder in reversed([f for f in (home, *home.parents) if checkout in (f, *f.parents)]):
        lists = folder / "CMakeLists.txt"
        if not lists.exists():
            continue
        text = _without_cmake_comments(lists.read_text(errors="replace"))
        for m in re.finditer(r"\badd_compile_options\s*\(((?:[^()]|\([^()]*\))*)\)", text, re.I):
            for word in shlex.split(m.group(1).replace("\n", " ")):
                cuda = re.fullmatch(r"\$<\$<COMPILE_LANGUAGE:CUDA>:(.*)>", word)
                if cuda:
                    words += [w for w in cuda.group(1).split(";") if w]
                elif not word.startswith("$") and "$<" not in word:
                    words.append(word)
    return words

# the flags CMake adds for CUDA and C++ in each build type (its Modules/Compiler/NVIDIA-CUDA.cmake and GNU.cmake)
_BUILD_TYPE_FLAGS_B12 = {"release": ["-O3", "-DNDEBUG"], "relwithdebinfo": ["-O2", "-g", "-DNDEBUG"],
                         "minsizerel": ["-O1", "-DNDEBUG"], "debug": ["-g"]}


def _cmake_build_type_b12(home: Path, checkout: Path) -> list:
    """The flags of the build type a reader of the project configures with: a ``CMakePresets.json`` at its
    top (the preset its README names in ``cmake --preset NAME``, else the first that is not hidden, with
    what it inherits), else ``-DCMAKE_BUILD_TYPE=X`` in the README or a build script there, else
    ``set(CMAKE_BUILD_TYPE X)`` in the top CMakeLists.txt; CMake itself adds nothing without one. A PMPP
    reader's ``cmake --preset linux-release`` builds its 4-billion-step CPU reference at -O3: at nvcc's
    default, -O0, that reference alone outlasted the 120 s the tool gives, and the kernel never ran."""
    tops = [f for f in (home, *home.parents) if checkout in (f, *f.parents) and (f / "CMakeLists.txt").exists()]
    top = tops[-1] if tops else home
    said = " ".join(f.read_text(errors="replace") for f in sorted(top.iterdir())
                    if f.is_file() and (f.suffix.lower() in (".md", ".txt", ".sh", ".rst") or f.name == "Makefile")
                    and f.name != "CMakeLists.txt" and f.stat().st_size < 200_000)
    kind = None
    presets = top / "CMakePresets.json"
    if presets.exists():
        try:
            listed = json.loads(presets.read_text(errors="replace")).get("configurePresets", [])
        except (ValueError, AttributeError):
            listed = []
        by_name = {p.get("name"): p for p in listed if isinstance(p, dict)}
        named = re.search(r"--preset[ =](\S+)", said)
        chosen = by_name.get(named.group(1).strip("\"'`")) if named else None
        chosen = chosen or next((p for p in by_name.values() if not p.get("hidden")), None)
        seen = set()
        while chosen is not None and kind is None and chosen.get("name") not in seen:
            seen.add(chosen.get("name"))
            value = chosen.get("cacheVariables", {}).get("CMAKE_BUILD_TYPE")
            kind = value.get("value") if isinstance(value, dict) else value
            parents = chosen.get("inherits", [])
            chosen = by_name.get(parents if isinstance(parents, str) else (parents or [None])[0])
    if kind is None and (m := re.search(r"-DCMAKE_BUILD_TYPE=[\"']?(\w+)", said)):
        kind = m.group(1)
    if kind is None and (m := re.search(r"\bset\s*\(\s*CMAKE_BUILD_TYPE\s+\"?(\w+)",
                                         _without_cmake_comments((top / "CMakeLists.txt").read_text(errors="replace"))
                                         if (top / "CMakeLists.txt").exists() else "", re.I)):
        kind = m.group(1)
    return list(_BUILD_TYPE_FLAGS_B12.get(str(kind).lower(), []))

def _interface_library_b12(home: Path, checkout: Path, library: str):
    """The ``-I`` options (from ``home``) of ``add_library(LIBRARY INTERFACE)``, a header-only library of
    the project, as ``target_include_directories(LIBRARY INTERFACE dir)`` gives them to every target that
    links it; None when no CMakeLists.txt of the project makes such a library. A PMPP reader's chapters
    each link ``utils``, made so in ``utils/CMakeLists.txt`` beside them: read as a system library,
    ``-lutils``, the build missed ``utils.hpp``."""
    if not re.fullmatch(r"[\w.+-]+", library):
        return None
    tops = [f for f in (home, *home.parents) if checkout in (f, *f.parents) and (f / "CMakeLists.txt").exists()]
    for lists in sorted((tops[-1] if tops else home).rglob("CMakeLists.txt")):
        text = _without_cmake_comments(lists.read_text(errors="replace"))
        if not re.search(r"\badd_library\s*\(\s*" + re.escape(library) + r"\s+INTERFACE\b", text, re.I):
            continue
        folder = lists.parent
        text = text.replace("${CMAKE_CURRENT_SOURCE_DIR}", str(folder)).replace("${CMAKE_CURRENT_LIST_DIR}", str(folder))
        found = []
        for m in re.finditer(r"\btarget_include_directories\s*\(\s*" + re.escape(library) + r"\s+([^)]*)\)", text, re.I):
            found += [f"-I{os.path.relpath(folder / d.strip(chr(34)), home)}" for d in m.group(1).split()
                      if "$" not in d and d.upper() not in ("SYSTEM", "BEFORE", "AFTER", *_SCOPES)]
        return found
    return None


_GRAPHICS = re.compile(r"[<\"](?:GL|GLUT|EGL)/")


def _draws(home: Path, files: list) -> set:
    """Those of ``files`` (from ``home``) that include OpenGL's headers, themselves or through a header of
    their own library (a 2011 workshop's shrutil: rendercheckGL.cpp includes rendercheckGL.h, which includes
    <GL/glew.h>). A program that draws nothing never pulls such an object out of the static library cmake
    makes, so its build leaves those files out; one that draws keeps them, and is left out as graphics."""
    drawn = set()
    for name in files:
        path = home / name
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        own = [h for inc in re.findall(r'#\s*include\s*"([^"]+)"', text)
               for h in (path.parent / inc, path.parent.parent / "inc" / inc, path.parent.parent / "include" / inc)
               if h.is_file()]
        if _GRAPHICS.search(text) or any(_GRAPHICS.search(h.read_text(errors="replace")) for h in own):
            drawn.add(name)
    return drawn


_CMAKE_FOREACH = re.compile(r"\bforeach\s*\(\s*(\w+)\s+([^)]*)\)(.*?)\bendforeach\s*\([^)]*\)", re.I | re.S)


def _cmake_unrolled(text: str, variables: dict) -> str:
    """``text`` with each ``foreach(EXE IN LISTS EXECUTABLES) ... endforeach()`` (or ``IN ITEMS a b``, or
    plain ``foreach(EXE a b)``) written out once per value, ``${EXE}`` replaced: a Spanish-language
    project's matrix products are ten ``add_executable(${EXE} ${EXE}.cu)`` made by one loop over a
    ``set()`` list, with the loop's ``CUDA_SEPARABLE_COMPILATION ON`` for each."""
    def written_out(m):
        name, items, body = m.group(1), m.group(2).split(), m.group(3)
        if [w.upper() for w in items[:2]] == ["IN", "LISTS"]:
            values = [v for listed in items[2:] for v in variables.get(listed, [])]
        else:
            values = _cmake_expanded(" ".join(items[2:] if [w.upper() for w in items[:2]] == ["IN", "ITEMS"]
                                              else items), variables)
        return "\n".join(re.sub(r"\$\{" + name + r"\}", lambda _: value, body) for value in values)
    return _CMAKE_FOREACH.sub(written_out, text)


def _linked(text: str, target: str, variables: dict) -> list:
    """The words of ``target_link_libraries(TARGET ...)`` less its visibility keywords: the names of the
    project's own library targets (whose sources join the build) and what ``cmake_linked`` links."""
    linked = []
    for m in re.finditer(r"\btarget_link_libraries\s*\(\s*" + re.escape(target) + r"\s+([^)]*)\)", text, re.I):
        linked += [w for w in _cmake_expanded(m.group(1), variables) if w.upper() not in _SCOPES]
    return linked


def _library_sources(home: Path, library: str) -> list:
    """The sources of ``add_library(LIBRARY ...)`` in the CMakeLists.txt of ``home`` or of a folder it
    adds (``add_subdirectory(stream_compaction)``), given from ``home``: a course's project that builds
    its kernels as a library and links the test program to it (UPenn CIS 565's projects), which is
    one nvcc build of all the files."""
    lists = home / "CMakeLists.txt"
    text = _without_cmake_comments(lists.read_text(errors="replace")) if lists.exists() else ""
    variables = _cmake_variables(text, home)
    for m in re.finditer(r"\b(?:cuda_)?add_library\s*\(\s*(\S+)\s+([^)]*)\)", text, re.I):
        if _cmake_expanded(m.group(1), variables)[0] == library:
            return [w for w in _cmake_expanded(m.group(2), variables) if Path(w).suffix in (".cu", ".cpp", ".cc", ".cxx", ".c")]
    for m in re.finditer(r"\badd_subdirectory\s*\(\s*([^)\s]+)", text, re.I):
        folder = home / m.group(1).strip('"')
        if folder.is_dir() and folder != home:
            found = _library_sources(folder, library)
            if found:
                return [os.path.relpath(folder / f, home) for f in found]
    return []


_SCOPES = ("PUBLIC", "PRIVATE", "INTERFACE", "BEFORE")


def _target_flags(text: str, name: str) -> list:
    """The nvcc words of a target's ``target_compile_options`` (``-O3``, ``-Xcompiler=-fopenmp``); its
    ``target_link_libraries`` come from ``_linked`` and ``cmake_linked``: a lab that times its GEMM against
    cuBLAS and an OpenMP loop links both, or fails at its link."""
    words = []
    for m in re.finditer(r"\btarget_compile_options\s*\(\s*" + re.escape(name) + r"\s+([^)]*)\)", text, re.I):
        # (a variable of generator expressions, "set(compile_options $<$<CONFIG:Release>: -O3 >)", is CMake's
        # to evaluate: left out, as an unexpanded "${compile_options}" given to nvcc stops the build)
        words += [w for w in shlex.split(m.group(1)) if w.upper() not in _SCOPES and not w.startswith("$<")
                  and "${" not in w]
    return words


# what CMake's imported targets and find_package variables link, as nvcc options (a student workshop's
# game of life links Curses::Curses)
_CMAKE_IMPORTED = {"Curses::Curses": ["-lncurses"], "${CURSES_LIBRARIES}": ["-lncurses"],
                   "${CURSES_LIBRARY}": ["-lncurses"], "Threads::Threads": ["-Xcompiler", "-pthread"],
                   "OpenMP::OpenMP_CXX": ["-Xcompiler", "-fopenmp"], "OpenMP::OpenMP_C": ["-Xcompiler", "-fopenmp"],
                   "CUDA::cudart": [], "CUDA::cudart_static": [], "CUDA::cuda_driver": ["-lcuda"],
                   # the old FindCUDA module's variables (a 2011 workshop's ${CUDA_CUBLAS_LIBRARIES})
                   "${CUDA_CUBLAS_LIBRARIES}": ["-lcublas"], "${CUDA_cublas_LIBRARY}": ["-lcublas"],
                   "${CUDA_CUFFT_LIBRARIES}": ["-lcufft"], "${CUDA_cufft_LIBRARY}": ["-lcufft"],
                   "${CUDA_curand_LIBRARY}": ["-lcurand"], "${CUDA_cusparse_LIBRARY}": ["-lcusparse"],
                   "${CUDA_LIBRARIES}": [], "${CUDA_CUDART_LIBRARY}": [], "${CUDA_CUDA_LIBRARY}": ["-lcuda"]}


def cmake_linked(items: list) -> list:
    """nvcc's link options for a ``target_link_libraries`` list: CMake's imported targets it knows
    (``Curses::Curses``: -lncurses, ``CUDA::cublas``: -lcublas), plain library names (``m``: -lm) and
    ``-lX`` as written; the visibility keywords and targets it does not know (a conan package's
    ``stb::stb``) add nothing."""
    options = []
    for item in items:
        if item in _CMAKE_IMPORTED:
            options += _CMAKE_IMPORTED[item]
        elif m := _CMAKE_LIBRARY.fullmatch(item):
            options.append(f"-l{m.group(1)}")
        elif re.fullmatch(r"-[lL]\S+", item):
            options.append(item)
        elif re.fullmatch(r"[A-Za-z_][\w+.-]*", item) and item.upper() not in ("PRIVATE", "PUBLIC", "INTERFACE",
                                                                               "DEBUG", "OPTIMIZED", "GENERAL"):
            options.append(f"-l{item}")
    return options


def _cmake_options(home: Path, checkout: Path, where: Path) -> list:
    """The ``CMAKE_CUDA_FLAGS``, ``CMAKE_CUDA_STANDARD``, ``CMAKE_CUDA_ARCHITECTURES`` and
    ``include_directories`` that the CMakeLists.txt of ``home`` and those above it set, include folders
    given from ``where``, the folder the build runs in."""
    options = []
    folders = [f for f in reversed([f for f in (home, *home.parents) if checkout in (f, *f.parents)])
               if (f / "CMakeLists.txt").exists()]
    for folder in folders:
        lists = folder / "CMakeLists.txt"
        # the folder variables an include path is written with ("include_directories(${CMAKE_CURRENT_SOURCE_DIR})")
        raw = _without_cmake_comments(lists.read_text(errors="replace"))
        text = raw
        for name, value in _folder_variables_c16(folder, folders[0]):
            text = text.replace("${%s}" % name, str(value))
        if re.search(r"\bset\s*\(\s*CMAKE_CUDA_SEPARABLE_COMPILATION\s+(ON|TRUE|1)\b", text, re.I):
            options.append("-rdc=true")
        for m in _CMAKE_FLAGS.finditer(text):
            options += [w for w in shlex.split(_cmake_unquoted(m.group(1))) if "${" not in w]    # "${CMAKE_CUDA_FLAGS} --extended-lambda"
        options += [f"-std=c++{m.group(1)}" for m in _CMAKE_STANDARD.finditer(text)]
        options += [f"-arch={'native' if a.lower() == 'native' else 'sm_' + a.split('-')[0]}"   # "90", "90-real"
                    for m in _CMAKE_ARCHS.finditer(text) for a in re.split(r"[;\s]+", m.group(1))[:1] if a[:1].isdigit()
                    or a.lower() == "native"]
        for m in _CMAKE_INCLUDES.finditer(raw):
            options += [f"-I{os.path.relpath(folder / d, where)}"
                        for d in _include_folders_c16(m.group(1), folder, folders[0])
                        if "$" not in d and d.upper() not in ("SYSTEM", "BEFORE", "AFTER")]
    return options


def _folder_variables_c16(folder: Path, top: Path) -> tuple:
    """The folder variables a CMakeLists.txt writes paths with, and their values for the one in ``folder``
    (``top``: the project's first CMakeLists.txt)."""
    return (("CMAKE_CURRENT_SOURCE_DIR", folder), ("CMAKE_CURRENT_LIST_DIR", folder),
            ("CMAKE_SOURCE_DIR", top), ("PROJECT_SOURCE_DIR", top))


def _include_folders_c16(argument: str, folder: Path, top: Path) -> list:
    """The folders of an ``include_directories(...)`` argument list, its words split before the folder
    variables are put in: a KTH student's ``Assignment III/CMakeLists.txt`` says
    ``include_directories(${CMAKE_SOURCE_DIR}/ex_2/include)``, and the space in the folder's name cut the
    path in two (``-I../Assignment -IIII/ex_2/include``), so its headers were not found."""
    folders = []
    for word in shlex.split(_cmake_unquoted(argument).replace("\n", " "), posix=True) if argument.strip() else []:
        for name, value in _folder_variables_c16(folder, top):
            word = word.replace("${%s}" % name, str(value))
        folders.append(word)
    return folders


def _cmake_variables(text: str, home: Path) -> dict:
    """The source lists a CMakeLists.txt names before its targets: ``file(GLOB[_RECURSE] SRCS src/*.cu
    src/*.cpp)`` (the files there now, relative to its folder, as cmake finds them when it configures)
    and ``set(INC "${PROJECT_SOURCE_DIR}/inc")``; a student's notes build each lesson so."""
    variables = {v: ["."] for v in ("PROJECT_SOURCE_DIR", "CMAKE_CURRENT_SOURCE_DIR", "CMAKE_SOURCE_DIR",
                                    "CMAKE_CURRENT_LIST_DIR")}
    project = re.search(r"\bproject\s*\(\s*([\w.-]+)", text, re.I)
    if project:      # add_executable(${CMAKE_PROJECT_NAME} ...)
        variables["PROJECT_NAME"] = variables["CMAKE_PROJECT_NAME"] = [project.group(1)]
    for m in re.finditer(r"\b(file\s*\(\s*GLOB(?:_RECURSE)?|set\s*\()\s*(\w+)\s+([^)]*)\)|" + _CMAKE_PATH_B13, text, re.I):
        if m.group(4):
            _cmake_path_b13(m.group(4), m.group(5), variables)
            continue
        words = [w for w in _cmake_expanded(m.group(3), variables)
                 if w.upper() not in ("CONFIGURE_DEPENDS", "CACHE", "PATH", "STRING", "INTERNAL", "FORCE")]
        if m.group(1).lower().startswith("file"):
            recursive = "RECURSE" in m.group(1).upper()
            words = sorted(os.path.relpath(f, home) for w in words
                           for f in glob.glob(str(home / w.replace("*", "**/*", 1) if recursive else home / w),
                                              recursive=recursive) if Path(f).is_file())
        variables[m.group(2)] = list(dict.fromkeys(words))
    return variables


# a folder computed at configure time (a Zhejiang course's labs: the folder above the lab's, for the shared
# CUDA by Example headers): string(REGEX REPLACE "/$" "" HERE ${CMAKE_CURRENT_SOURCE_DIR}), then
# get_filename_component(UP ${HERE} DIRECTORY), then set(COMMON ${UP}/common)
_CMAKE_PATH_B13 = r"\b(get_filename_component|string\s*\(\s*REGEX\s+REPLACE)\s*(?:\(\s*)?([^)]*)\)"


def _cmake_path_b13(command: str, argument: str, variables: dict):
    """Sets the variable of a ``get_filename_component(VAR PATH DIRECTORY)`` (or ``PATH``, ``ABSOLUTE``,
    ``REALPATH``: the folder's own path) or a ``string(REGEX REPLACE RE WITH VAR INPUT)``, paths relative to
    the CMakeLists.txt's folder as ``_cmake_variables`` keeps them; one it cannot tell is left unset."""
    words = _cmake_expanded(argument, variables)
    if command.lower().startswith("string"):
        if len(words) >= 4 and "$" not in "".join(words[3:]):
            try:
                variables[words[2]] = [re.sub(words[0], words[1], "".join(words[3:]))]
            except re.error:
                pass
        return
    if len(words) >= 3 and "$" not in words[1]:
        mode = words[2].upper()
        if mode in ("DIRECTORY", "PATH"):
            variables[words[0]] = [os.path.normpath(os.path.join(words[1], ".."))]
        elif mode in ("ABSOLUTE", "REALPATH"):
            variables[words[0]] = [os.path.normpath(words[1])]


def _cmake_expanded(argument: str, variables: dict) -> list:
    """The words of a CMake argument list with ``${VAR}`` replaced by the variable's words (a list
    variable becomes several words; an unknown one stays as written)."""
    words = []
    for word in shlex.split(_cmake_unquoted(argument).replace("\n", " "), posix=True) if argument.strip() else []:
        m = re.fullmatch(r"\$\{(\w+)\}(/.*)?", word)
        if m and m.group(1) in variables and len(variables[m.group(1)]) != 1:
            words += [os.path.normpath(v + (m.group(2) or "")) for v in variables[m.group(1)]]
        else:       # "${CMAKE_CURRENT_SOURCE_DIR}/${subdir}": each one-word variable in its place
            done = re.sub(r"\$\{(\w+)\}", lambda v: variables[v.group(1)][0] if len(variables.get(v.group(1), ())) == 1
                          else v.group(0), word)
            words.append(os.path.normpath(done) if done != word and "/" in done else done)
    return words


_CMAKE_FUNCTION = re.compile(r"\bfunction\s*\(\s*(\w+)([^)]*)\)(.*?)\bendfunction\s*\([^)]*\)", re.I | re.S)
_CMAKE_LIBRARY = re.compile(r"\bCUDA::(cublas|cublasLt|curand|cufft|cusparse|cusolver|nvToolsExt|cuda_driver)\b")


def from_cmake_function(path: Path, checkout: Path):
    """(nvcc words, where, folder) from an umbrella CMakeLists.txt above the program whose own
    ``function(add_cuda_example subdir)`` makes each example's target (a Russian course's layout):
    the call whose arguments make the function's add_executable name this file, with what the
    function's body sets (``CUDA_SEPARABLE_COMPILATION ON``: -rdc=true; ``CUDA::cublas``: -lcublas;
    ``OUTPUT_NAME``) and the file's flags; the program builds and runs in its own folder."""
    for folder in [f for f in path.parents if checkout in (f, *f.parents)]:
        lists = folder / "CMakeLists.txt"
        if not lists.exists():
            continue
        text = _without_cmake_comments(lists.read_text(errors="replace"))
        for fn in _CMAKE_FUNCTION.finditer(text):
            params, body = fn.group(2).split(), fn.group(3)
            for call in re.finditer(r"(?<![\w$])" + re.escape(fn.group(1)) + r"\s*\(([^)]*)\)", text):
                variables = _cmake_variables("", folder)
                variables.update({p: [a] for p, a in zip(params, _cmake_expanded(call.group(1), {}))})
                sources, target = [], path.stem
                for st in re.finditer(r"\b(set|add_executable)\s*\(\s*(\S+)\s*([^)]*)\)", body, re.I):
                    words = _cmake_expanded(st.group(3), variables)
                    if st.group(1).lower() == "set":
                        variables[st.group(2)] = words
                    else:
                        sources = [w for w in words if Path(w).suffix in (".cu", ".cpp", ".cc", ".cxx", ".c")]
                        named = _cmake_expanded(st.group(2), variables)[0]
                        target = named if "$" not in named else target
                if not any((folder / w).resolve() == path.resolve() for w in sources):
                    continue
                options = _cmake_options(folder, checkout, path.parent)
                archs = re.search(r"\bCUDA_ARCHITECTURES\s+\"?(\d+)", body)     # the target's own: WMMA's sm_70+
                if archs:
                    options = [w for w in options if not w.startswith("-arch=")] + [f"-arch=sm_{archs.group(1)}"]
                if re.search(r"\bCUDA_SEPARABLE_COMPILATION\s+ON\b", body, re.I):
                    options.append("-rdc=true")
                options += [f"-l{'cuda' if lib == 'cuda_driver' else lib}" for lib in _CMAKE_LIBRARY.findall(body)]
                named = re.search(r"\bOUTPUT_NAME\s+(\S+)", body)
                output = _cmake_expanded(named.group(1), variables)[0] if named else target
                here = [os.path.relpath(folder / w, path.parent) for w in sources]
                return [*options, "-o", output, *here], lists.relative_to(checkout).as_posix(), path.parent
    return None


def _cmake_unquoted(argument: str) -> str:
    r"""The text of a quoted CMake argument as CMake reads it (a backslash before a newline continues
    the line, one before another character stands for that character), as the generated build then
    hands it to a shell: ``code=\\\"sm_70\\\"`` in CMakeLists.txt reaches the shell as ``code=\"sm_70\"``."""
    return re.sub(r"\\([\s\S])", lambda m: " " if m.group(1) == "\n" else m.group(1), argument)


def _without_cmake_comments(text: str) -> str:
    return re.sub(r"#[^\n]*", "", text)


def _makefile(folder: Path) -> Path | None:
    return next((folder / m for m in ("Makefile", "makefile", "GNUmakefile") if (folder / m).exists()), None)


_SOLUTIONS = re.compile(r"solutions?|answers?", re.I)
# "#ifndef THREADS\n#error THREADS is not defined": a macro the build must give
_REQUIRED_MACRO = re.compile(r"^\s*#\s*ifndef\s+(\w+)\s*\n\s*#\s*error\b", re.M)


def _defines_what_it_needs(words: list, path: Path) -> bool:
    """Whether nvcc ``words`` define every macro ``path`` stops without (its ``#ifndef X / #error``)."""
    try:
        code = path.read_text(errors="replace")
    except OSError:
        return True
    # (a file that #defines the macro itself, "#define LEN 8192" above its "#ifndef LEN", needs nothing)
    needed = set(_REQUIRED_MACRO.findall(code)) - set(_DEFINE.findall(code))
    given = {re.match(r"-D\s*(\w+)", w).group(1) for w in words if re.match(r"-D\s*\w+", w)}
    given |= {b for a, b in zip(words, words[1:]) if a == "-D"}
    return all(n in given for n in needed)



def find_build(path: Path, checkout: Path) -> tuple:
    """(words, where, folder): how a reader builds ``path`` and the folder the build runs in,
    looking beside it first, then one folder up (module docstring), else the default."""
    up = [f for f in list(path.parents)[1:3] if checkout in (f, *f.parents)]     # one and two folders up
    here = _makefile(path.parent)
    found = from_makefile(path.parent, path.name, checkout) if here else None
    if found and _defines_what_it_needs(found, path):
        return found, here.relative_to(checkout).as_posix(), path.parent
    if found:
        # a Makefile that builds the file without the -D sizes its #error lines demand, beside a script that
        # gives them (Warsaw's lab 4: "nvcc -DLEN=$i -DBLOCKS=2 -DTHREADS=10 -o task2_1 task2_1.cu" in a loop)
        script = next((n for n in [*from_notes(path, checkout, [path.parent]), *from_job_scripts(path, checkout)]
                       if _defines_what_it_needs(n[0], path)), None)
        if script:
            return script[0], script[1], path.parent
        return found, here.relative_to(checkout).as_posix(), path.parent
    sibling = _exercise_build_c16(path, checkout) if here else None
    if sibling:
        return sibling, here.relative_to(checkout).as_posix(), path.parent
    cmake = from_cmake(path, checkout) or from_cmake_function(path, checkout)
    if cmake:
        return cmake
    studio = from_vcxproj(path)
    if studio:
        return studio
    bazel = from_bazel_b15(path, checkout)
    if bazel:
        return bazel
    elsewhere = None if up and _makefile(up[0]) else from_make_c_notes(path, checkout)
    if elsewhere:
        return elsewhere
    notes = [*from_own_comment(path), *from_notes(path, checkout, [path.parent]), *from_job_scripts(path, checkout)]
    above = _makefile(up[0]) if up else None
    found = from_makefile(up[0], path.relative_to(up[0]).as_posix(), checkout) if above and not notes else None
    if found:
        return found, above.relative_to(checkout).as_posix(), up[0]
    if above and not notes and _SOLUTIONS.fullmatch(path.parent.name):
        # a lab's solutions/ folder beside the exercise files, which the Makefile above builds under the
        # same names (the GPU Bootcamp's cuda/solutions/jacobi_memcpy.cu): the exercise's build, run here
        found = from_makefile(up[0], path.name, checkout)
        if found:
            return found, above.relative_to(checkout).as_posix(), path.parent
    found = _makefile_two_up_b14(path, checkout, up) if not notes and not above else None
    if found:
        return found
    notes += list(from_notes(path, checkout, up))
    notes = notes or list(from_notes_elsewhere(path, checkout))
    vscode = None if notes else from_vscode_tasks_b15(path, checkout)
    if vscode:
        return vscode
    usable = [(w, how) for w, how in notes if not _not_emulated(" ".join(w))]
    words, how = (usable or notes or [([path.name, "-o", path.stem], "default (nvcc -o NAME NAME.cu)")])[0]
    return words, how, path.parent


def _makefile_two_up_b14(path: Path, checkout: Path, up: list) -> tuple | None:
    """(words, where, folder) of a Makefile two folders up that builds ``path`` by its path from there
    (an SJTU homework's ``hw2/Makefile``: ``$(NVCC) -O2 -arch=sm_50 -o build/MatrixMul.exe
    1_MatrixMul/src/MatrixMul.cu``, its readme running ``./build/MatrixMul.exe`` in ``hw2``), or None."""
    if len(up) < 2 or not _makefile(up[1]):
        return None
    found = from_makefile(up[1], path.relative_to(up[1]).as_posix(), checkout)
    return (found, _makefile(up[1]).relative_to(checkout).as_posix(), up[1]) if found else None


# the suffixes a lab gives the other versions of an exercise its Makefile builds: jacobi.cu, with
# jacobi_solution.cu and jacobi_orig.cu beside it
_VERSION_SUFFIX_C16 = re.compile(r"(.+?)[_-](?:solution|soln|sol|orig|original|answer|ref|reference|"
                                 r"complete[d]?|final|done)", re.I)


def _exercise_build_c16(path: Path, checkout: Path) -> list | None:
    """The build of the exercise ``path`` is a version of (``jacobi_solution.cu`` of ``jacobi.cu``), when the
    Makefile beside them builds only the exercise: its line with this file in the exercise's place, as a
    student builds the solution (NVIDIA's N-Ways bootcamp: ``nvcc -DHAVE_CUB -Xcompiler -fopenmp -lineinfo
    -DUSE_NVTX -lnvToolsExt ... jacobi.cu -o jacobi``; built as nvcc's default, its solution did not link)."""
    m = _VERSION_SUFFIX_C16.fullmatch(path.stem)
    exercise = path.with_name(m.group(1) + path.suffix) if m else None
    if exercise is None or not exercise.is_file():
        return None
    found = from_makefile(path.parent, exercise.name, checkout)
    return [path.name if _same_source(w, exercise.name) else w for w in found] if found else None


# "make -C build_T4 `cat src_todo_T4/OPTIONS.txt`": a readme that builds in a folder of its own, the
# sources in another (UCSD CSE 260's GEMM assignment: build_K80/, build_T4/, src/); the backquoted cat of
# a file gives that file's words, as the shell does
_MAKE_C_LINE = re.compile(r"^\s*(?:[$>!]\s*)?make\s+(?:[^\n]*\s)?-C\s*(\S+)([^\n]*)$", re.M)
_CAT = re.compile(r"`\s*cat\s+(\S+?)\s*`|\$\(\s*cat\s+(\S+?)\s*\)")


def from_make_c_notes(path: Path, checkout: Path):
    """(words, how, folder) for ``path`` from a readme line ``make -C DIR [VAR=VALUE ...]`` (in the
    program's folder, the one above, or the checkout's top) whose Makefile in DIR links it; the build and
    the run are in DIR, the sources named from there (``../src/mmpy.cu``). None where no such line is."""
    folders = list(dict.fromkeys([path.parent, path.parent.parent, checkout]))
    for folder in folders:
        if checkout not in (folder, *folder.parents) or not folder.is_dir():
            continue
        for note in sorted(f for f in folder.iterdir() if f.is_file()):
            text = _note_text(note)
            for m in _MAKE_C_LINE.finditer(text):
                build = (folder / m.group(1)).resolve()
                if not build.is_dir() or not _makefile(build):
                    continue
                rest = _CAT.sub(lambda c: _cat_words(folder / (c.group(1) or c.group(2))), m.group(2))
                try:
                    words = shlex.split(rest, comments=True)
                except ValueError:
                    continue
                words = words[:next((i for i, w in enumerate(words) if w in _SHELL_SEPARATORS), len(words))]
                variables = [w for w in words if re.fullmatch(r"\w+=\S*", w)]
                relative = os.path.relpath(path, build)
                found = from_make(make_commands(build, within=checkout, variables=variables), relative)
                if found:
                    return found, note.relative_to(checkout).as_posix(), build
    return None


def _cat_words(file: Path) -> str:
    return file.read_text(errors="replace").replace("\n", " ") if file.is_file() else ""


# a Visual Studio CUDA project's settings, as nvcc options: (element, how its text becomes options)
_VCXPROJ_LIBRARIES = {"cublas", "cublasLt", "curand", "cufft", "cusparse", "nvrtc", "cuda"}


def from_vcxproj(path: Path):
    """(words, how, folder) for ``path`` from the Visual Studio project beside it (a Windows student's
    lab: ``cuda-lab6.vcxproj``), else None. The project lists the files it builds (``<CudaCompile
    Include=...>``, ``<ClCompile Include=...>``) and its nvcc settings: relocatable device code
    (``<GenerateRelocatableDeviceCode>``, which a kernel launching kernels needs), extra options
    (``<AdditionalOptions>``: ``--extended-lambda``) and CUDA libraries (``cublas.lib``). A project whose
    files are each a program of their own, all but one excluded from the build, builds ``path`` with the
    files that have no ``main``."""
    import xml.etree.ElementTree as ET
    for project in sorted(path.parent.glob("*.vcxproj")):
        try:
            root = ET.parse(project).getroot()
        except ET.ParseError:
            continue
        items = [(e.tag.rsplit("}", 1)[-1], e) for e in root.iter() if e.get("Include")]
        files = [(e.get("Include").replace("\\", "/"), e) for tag, e in items if tag in ("CudaCompile", "ClCompile")]
        if path.name not in (name for name, _ in files):
            continue
        def text(tag):
            return [e.text or "" for e in root.iter() if e.tag.rsplit("}", 1)[-1] == tag]
        def excluded(e):
            return any((c.text or "").strip().lower() == "true" for c in e
                       if c.tag.rsplit("}", 1)[-1] == "ExcludedFromBuild")
        others = [name for name, e in files if name != path.name and not excluded(e)
                  and (path.parent / name).is_file()
                  and not re.search(r"\bmain\s*\(", _without_comments((path.parent / name).read_text(errors="replace")))]
        options = ["-rdc=true"] if any(t.strip().lower() == "true" for t in text("GenerateRelocatableDeviceCode")) else []
        for extra in text("AdditionalOptions")[:1]:
            options += [w for w in extra.replace("%(AdditionalOptions)", "").split() if w.startswith("-")]
        options += _openmp_support_b13(text("OpenMPSupport"))
        for deps in text("AdditionalDependencies"):
            for lib in deps.split(";"):
                name = lib.strip().removesuffix(".lib")
                if name in _VCXPROJ_LIBRARIES and f"-l{name}" not in options:
                    options.append(f"-l{name}")
        return [*options, path.name, *others, "-o", path.stem], project.name, path.parent
    return None


# Bazel's rules that compile sources: rules_cuda's cuda_library/cuda_binary and the built-in C++ ones
_BAZEL_RULE_B15 = re.compile(r"^(cc_binary|cc_library|cuda_binary|cuda_library|cc_test)\s*\(", re.M)
_BAZEL_MARKERS_B15 = ("WORKSPACE", "WORKSPACE.bazel", "MODULE.bazel")
# what Bazel's --compilation_mode gives a compile (opt: -O2 -DNDEBUG; dbg: -g)
_BAZEL_MODES_B15 = {"opt": ["-O2", "-DNDEBUG"], "dbg": ["-g"], "fastbuild": []}


def _bazel_rules_b15(build: Path) -> dict:
    """{name: (kind, srcs, deps, copts)} of a BUILD file's compiling rules: each rule's keyword lists of
    strings, read without running Starlark (a reader's project writes them out)."""
    text = re.sub(r"#[^\n]*", "", build.read_text(errors="replace"))
    rules = {}
    for m in _BAZEL_RULE_B15.finditer(text):
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        body = text[m.end():k - 1]
        def strings(key):
            found = re.search(rf"\b{key}\s*=\s*\[(.*?)\]", body, re.S)
            return re.findall(r"\"([^\"]*)\"", found.group(1)) if found else []
        name = re.search(r"\bname\s*=\s*\"([^\"]+)\"", body)
        if name:
            rules[name.group(1)] = (m.group(1), strings("srcs"), strings("deps"), strings("copts"))
    return rules


def from_bazel_b15(path: Path, checkout: Path):
    """(words, how, folder) for ``path`` from the Bazel BUILD file beside it (a PMPP reader's chapters, each a
    ``cuda_library`` of kernels and a ``cc_binary`` whose ``main`` calls them), else None. The binary that
    has ``path`` among its sources, or among those of a library it depends on in the same workspace, is built
    from all of them, from the workspace's root (where Bazel's ``#include "chapter_3/x.h"`` resolve, and where
    ``bazel run`` starts it), with the copts of its rules and the ``build --cxxopt``/``--copt``/
    ``--compilation_mode`` lines of the root's .bazelrc."""
    build = next((path.parent / n for n in ("BUILD", "BUILD.bazel") if (path.parent / n).is_file()), None)
    root = next((f for f in path.parents if checkout in (f, *f.parents)
                 and any((f / m).is_file() for m in _BAZEL_MARKERS_B15)), None)
    if build is None or root is None:
        return None
    packages: dict = {}

    def rules_of(package: str) -> dict:
        if package not in packages:
            folder = root / package
            file = next((folder / n for n in ("BUILD", "BUILD.bazel") if (folder / n).is_file()), None)
            packages[package] = _bazel_rules_b15(file) if file else {}
        return packages[package]

    here = path.parent.relative_to(root).as_posix()
    here = "" if here == "." else here

    def closure(package: str, name: str, seen: set) -> list:
        """(package, rule) pairs of ``name`` and the rules it depends on in this workspace."""
        if (package, name) in seen or name not in rules_of(package):
            return []
        seen.add((package, name))
        found = [(package, name)]
        for dep in rules_of(package)[name][2]:
            if dep.startswith("@"):
                continue                # another repository's (rules_cuda's runtime, local_cuda)
            if dep.startswith(":"):
                found += closure(package, dep[1:], seen)
            elif dep.startswith("//"):
                pkg, _, target = dep[2:].partition(":")
                found += closure(pkg, target or pkg.rsplit("/", 1)[-1], seen)
        return found

    for name, (kind, _, _, _) in rules_of(here).items():
        if kind not in ("cc_binary", "cuda_binary", "cc_test"):
            continue
        parts = closure(here, name, set())
        sources, copts = [], []
        for package, rule in parts:
            _, srcs, _, options = rules_of(package)[rule]
            sources += [f"{package}/{s}" if package else s for s in srcs
                        if Path(s).suffix in (".cu", ".cc", ".cpp", ".cxx", ".c")]
            copts += options
        mine = f"{here}/{path.name}" if here else path.name
        if mine not in sources:
            continue
        bazelrc = root / ".bazelrc"
        settings = bazelrc.read_text(errors="replace") if bazelrc.is_file() else ""
        options = [w.strip("'\"") for w in re.findall(r"^build\s+--(?:cxxopt|copt)[= ](\S+)", settings, re.M)]
        mode = re.search(r"^build\s+--compilation_mode[= ](\w+)", settings, re.M)
        options += _BAZEL_MODES_B15.get(mode.group(1) if mode else "fastbuild", [])
        return ([*dict.fromkeys([*options, *copts]), "-I.", *dict.fromkeys(sources), "-o", name],
                build.relative_to(checkout).as_posix(), root)
    return None


def _without_json_comments_b15(text: str) -> str:
    """JSON with comments (VS Code's settings files) as JSON: // and /* */ outside strings removed, and
    trailing commas."""
    out, k, quoted = [], 0, False
    while k < len(text):
        c = text[k]
        if quoted:
            out.append(c)
            if c == "\\":
                out.append(text[k + 1:k + 2])
                k += 1
            elif c == '"':
                quoted = False
        elif c == '"':
            quoted = True
            out.append(c)
        elif text.startswith("//", k):
            k = text.find("\n", k)
            k = len(text) if k < 0 else k
            continue
        elif text.startswith("/*", k):
            k = text.find("*/", k)
            k = len(text) if k < 0 else k + 2
            continue
        else:
            out.append(c)
        k += 1
    return re.sub(r",(\s*[\]}])", r"\1", "".join(out))


def from_vscode_tasks_b15(path: Path, checkout: Path):
    """(words, how, folder) for ``path`` from the VS Code build task of its workspace (``.vscode/tasks.json``
    in the checkout's root or a folder above ``path``: "nvcc build active file", the task a student runs with
    Ctrl+Shift+B on the file open), else None. The default build task whose command is nvcc, else the first
    such, with VS Code's variables (``${file}``, ``${fileDirname}``, ``${fileBasenameNoExtension}``,
    ``${workspaceFolder}``) read for ``path``; the build runs in the task's ``options.cwd``, else the
    workspace's folder. (A Vietnamese learner's CUDA notes build each file so: ``-std=c++17
    --relocatable-device-code=true ${file} -o ${fileDirname}/../bin/NAME.out -lcublas``.)"""
    for workspace in [f for f in path.parents if checkout in (f, *f.parents)]:
        tasks = workspace / ".vscode" / "tasks.json"
        if not tasks.is_file():
            continue
        try:
            listed = json.loads(_without_json_comments_b15(tasks.read_text(errors="replace"))).get("tasks", [])
        except (json.JSONDecodeError, AttributeError):
            return None
        nvcc = [t for t in listed if isinstance(t, dict) and
                re.search(r"(^|[/\\])nvcc(\.exe)?$", str(t.get("command", "")).strip())]
        if not nvcc:
            return None
        def default(t):
            group = t.get("group")
            return isinstance(group, dict) and group.get("isDefault") is True
        task = next((t for t in nvcc if default(t)), nvcc[0])
        cwd_said = str(task.get("options", {}).get("cwd", "${workspaceFolder}"))
        def expanded(word: str, cwd: Path | None) -> str:
            values = {"file": path, "fileDirname": path.parent, "workspaceFolder": workspace,
                      "fileWorkspaceFolder": workspace, "fileBasename": path.name,
                      "fileBasenameNoExtension": path.stem, "fileExtname": path.suffix}
            def value(m):
                v = values.get(m.group(1))
                if v is None:
                    return m.group(0)
                if isinstance(v, Path):
                    return os.path.relpath(v, cwd) if cwd else str(v)
                return v
            return re.sub(r"\$\{(\w+)\}", value, word)
        cwd = Path(expanded(cwd_said, None))
        if not cwd.is_dir() or checkout not in (cwd, *cwd.parents):
            cwd = workspace
        words = [expanded(str(w), cwd) for w in task.get("args", [])]
        return words, tasks.relative_to(checkout).as_posix(), cwd
    return None


def _openmp_support_b13(settings: list) -> list:
    """g++'s words for a Visual Studio project's ``<OpenMPSupport>true</OpenMPSupport>`` (MSVC's /openmp): a
    Russian course's axpy times its GPU against an ``omp parallel for`` and calls omp_get_num_procs, which
    without -fopenmp stops the link."""
    return ["-Xcompiler", "-fopenmp"] if any(s.strip().lower() == "true" for s in settings) else []


def library_builds(words: list, folder: Path, checkout: Path) -> list:
    """The ``nvcc -shared`` lines (words) of the readmes and build scripts in ``folder`` that build a
    library the program's words link (``-lcumessage``: ``nvcc -Xcompiler -fPIC -o libcumessage.so -shared
    cumessage.cu``, Princeton's GPU primer's step before its ``nvcc myapp.cu -L. -lcumessage``)."""
    wanted = {f"lib{w[2:]}.so" for w in words if w.startswith("-l") and len(w) > 2}
    wanted |= {Path(w).name for w in words if w.endswith(".so")}
    found = []
    for note in sorted(folder.iterdir()) if wanted else []:
        text = _note_text(note)
        for m in [*_NVCC_LINE.finditer(text), *_NVCC_INLINE.finditer(text)]:
            try:
                line = shlex.split(m.group(1), comments=True)
            except ValueError:
                continue
            line = line[:next((i for i, w in enumerate(line) if w in _SHELL_SEPARATORS), len(line))]
            if "-shared" in line and Path(_output(line) or "").name in wanted and line not in found:
                found.append(line)
    return found


# what the toolkit, the system and cudalab give a link: never a course's own library
_SYSTEM_LIBRARIES = re.compile(r"cuda(rt|devrt)?(_static)?|cublas\w*|curand|cufft\w*|cusparse|cusolver|nvrtc|nvToolsExt|"
                               r"nvidia-ml|m|c|dl|rt|pthread|stdc\+\+|gomp|omp|z|png|jpeg|tiff|GL\w*|glut|X\w+|ncurses")
_ARCHIVES = {}


def host_library_makefiles(words: list, folder: Path, checkout: Path) -> list:
    """The folders (of the checkout) whose Makefile makes a library the program's link names and its
    ``-L`` folders do not hold yet: an SDK-style course links ``-L../../lib -lcutil_x86_64``, which
    ``labs/common``'s Makefile archives (``ar rucv ../lib/libcutil_x86_64.a ...``) from the sources it
    ships, as a student's ``make`` at the top builds it first. Found by recording each Makefile's
    ``make -B``; run_program builds them for real before the program."""
    wanted = {w[2:] for w in words if w.startswith("-l") and not _SYSTEM_LIBRARIES.fullmatch(w[2:])}
    dirs = {(folder / w[2:]).resolve() for w in words if w.startswith("-L") and len(w) > 2}
    dirs |= {(folder / b).resolve() for a, b in zip(words, words[1:]) if a == "-L"}
    missing = {n for n in wanted if not any((d / f"lib{n}{x}").exists() for d in dirs for x in (".a", ".so"))}
    makers = {}
    for makefile in sorted(checkout.rglob("[Mm]akefile"))[:60] if missing else []:
        if ".git" in makefile.parts or makefile.parent.resolve() == folder.resolve():
            continue
        if makefile not in _ARCHIVES:       # ar OPERATION ARCHIVE (its full path) OBJECTS...
            _ARCHIVES[makefile] = [Path(args[1]).resolve() for tool, *args in
                                   make_commands(makefile.parent, within=checkout) if tool in ARCHIVERS and len(args) > 1]
        for archive in _ARCHIVES[makefile]:
            name = re.fullmatch(r"lib(.+)\.a", archive.name)
            if name and name.group(1) in missing and archive.parent in dirs:
                makers.setdefault(name.group(1), []).append((makefile.parent, archive))
    # the Makefile of the library's own folder (nearest to the archive), not the top one whose `make -C common`
    # makes it with the rest
    chosen = [max(makes, key=lambda m: (len(Path(os.path.commonpath([m[0].resolve(), m[1]])).parts), len(m[0].parts)))[0]
              for makes in makers.values()]
    return list(dict.fromkeys(f.relative_to(checkout).as_posix() for f in chosen))


def read_program(path: Path, checkout: Path) -> Program:
    if _compiled_c18(path):
        return Program(path.relative_to(checkout).as_posix(), path.parent.relative_to(checkout).as_posix(),
                       how="(none)", left_out="no source: a compiled program under a .cu name (its Makefile's "
                                              "rule writes its output there)")
    words, how, folder = find_build(path, checkout)
    p = Program(path.relative_to(checkout).as_posix(), folder.relative_to(checkout).as_posix(), how=how)
    p.libraries = library_builds(words, folder, checkout)
    p.host_libraries = host_library_makefiles(words, folder, checkout)
    p.sources = _sources(words)
    p.options = [w for w in words if w not in p.sources]
    code = " ".join((folder / s).read_text(errors="replace") for s in p.sources if (folder / s).is_file())
    code += " ".join(_local_headers(folder, code))     # a course's header may hold main() (ach.h)
    # its own headers may call what the build needs (a header's cu* calls, its #include <mpi.h>)
    beside = " ".join(f.read_text(errors="replace") for f in sorted(path.parent.iterdir())
                      if f.suffix in (".h", ".cuh", ".hpp") or f.name == "CMakeLists.txt")
    if re.search(r"-D\s*\w*NO_?MPI\b", " ".join(words)):     # the course's build without MPI
        code = re.sub(r"#\s*include\s*[<\"]mpi\.h[>\"]", "", code)
    p.left_out = _not_emulated(" ".join(words) + " " + code + " " + beside)
    raw, code = code, _without_comments(code)
    if not p.left_out and not re.search(_MAIN, code):
        p.left_out = "no main(): a piece of a larger program"
    if not p.left_out and re.search(r"\bFIXME\b", code):
        p.left_out = "an exercise with FIXME blanks for the student (nvcc does not build it either)"
    if not p.left_out and _COMMENT_BLANK.search(raw):
        line = _COMMENT_BLANK.search(raw).group(0).strip()
        p.left_out = f"an exercise with blanks for the student ('{line}'; nvcc does not build it either)"
    if not p.left_out and (re.search(r"\bTODO\b", raw) or _QUESTION_BLANK.search(raw)) and _EMPTY_ASSIGNMENT.search(code):
        line = _EMPTY_ASSIGNMENT.search(code).group(0).strip()
        p.left_out = f"an exercise with blanks for the student ('{line}'; nvcc does not build it either)"
    if not p.left_out and _EMPTY_CALL.search(code):
        line = " ".join(_EMPTY_CALL.search(code).group(0).split())
        p.left_out = f"an exercise with blanks for the student ('{line}'; nvcc does not build it either)"
    if not p.left_out and _blank(code):
        p.left_out = f"an exercise with blanks for the student ('#error {_blank(code)}'; nvcc does not build it either)"
    return p


def _compiled_c18(path: Path) -> bool:
    """Whether ``path`` holds a compiled program rather than source: CINECA's course commits the output
    of ``binary.cu: *.cu`` rules (an ELF executable named ``binary.cu``), whose bytes the not-emulated
    patterns read as a graphics library."""
    with open(path, "rb") as f:
        head = f.read(4096)
    return head.startswith(b"\x7fELF") or b"\0" in head


# "cudaMemcpy( /* FIXME */ );", "__shared__ int temp[/* WHAT SIZE? */];": arguments or a size that are only a
# question for the student (the University of Trieste's copy of NVIDIA's VectorAdd and 1D stencil labs)
_COMMENT_BLANK = re.compile(r"[^\n(\[]*[(\[]\s*/\*[^*\n]*(?:\bFIXME\b|\bTODO\b|\?)[^*\n]*\*/\s*[)\]][^\n]*")
# "int row_in = ;  // TODO: complete here", "gDim.x = ;//?": an expression left out for the student, never C++
_QUESTION_BLANK = re.compile(r"[^=!<>]=[ \t]*;[ \t]*//[^\n]*\?")
# "myCudaCheck(\n\n   );" under "// HANDSON 1.1 Allocate the memory": a call whose lines the student fills in
# (an empty call on one line, "f();", is C++; one spread over blank lines is a gap left open)
_EMPTY_CALL = re.compile(r"\b\w+[ \t]*\([ \t]*\n\s*\)[ \t]*;")
_EMPTY_ASSIGNMENT = re.compile(r"^[^\n\"]*[^=!<>+\-*/%&|^\n\"]=[ \t]*;[^\n]*", re.M)


def _local_headers(folder: Path, code: str) -> list:
    """The text of the headers ``code`` includes with quotes that lie in ``folder``: where a course
    puts main() and the program's source only the kernel the lesson is about."""
    names = dict.fromkeys(re.findall(r'#\s*include\s*"([^"]+)"', code))
    return [(folder / n).read_text(errors="replace") for n in names if (folder / n).is_file()]


def _blank(code: str) -> str:
    """The text of the first ``#error`` that no ``#if`` guards: a course's "#error Add here the
    clean up code", a blank the student fills in (a header's guarded #error is no blank)."""
    depth = 0
    for line in code.splitlines():
        directive = re.match(r"\s*#\s*(if|ifdef|ifndef|endif|error)\b\s*(.*)", line)
        if not directive:
            continue
        word, rest = directive.groups()
        if word == "error" and depth == 0:
            return rest.strip()
        depth += 1 if word.startswith("if") else -1 if word == "endif" else 0
    return ""


_MAIN = r"\b(int|void|auto)\s+main\s*\("      # void: Visual Studio's (cudalab builds it as MSVC does); auto: `auto main() -> int`


def project_companions(p: "Program", checkout: Path) -> list:
    """The sources a Visual Studio project compiles beside a program with no build line of its own: for each
    header it includes with quotes (``"DS_timer.h"``, found beside it or on its ``-I`` folders), the ``.cpp``,
    ``.cu`` or ``.c`` of the same name beside that header, which the project lists with it (a Korean
    textbook's folders each hold ``DS_timer.h`` and ``DS_timer.cpp``; ``nvcc NAME.cu`` alone stops at the
    link, as it would on the author's machine with no project)."""
    if not p.how.startswith(("default", "given")):
        return []
    folder = checkout / p.folder
    code = " ".join((folder / s).read_text(errors="replace") for s in p.sources if (folder / s).is_file())
    places = [folder, *(folder / o[2:] for o in p.options if o.startswith("-I") and len(o) > 2)]
    found = []
    for name in dict.fromkeys(re.findall(r'#\s*include\s*"([^"]+)\.(?:h|hpp|cuh)"', code)):
        for place in places:
            if not (place / f"{name}.h").is_file() and not (place / f"{name}.hpp").is_file() \
                    and not (place / f"{name}.cuh").is_file():
                continue
            for ext in (".cpp", ".cu", ".c"):
                companion = place / f"{name}{ext}"
                if companion.is_file() and not re.search(_MAIN, _without_comments(companion.read_text(errors="replace"))):
                    found.append(os.path.relpath(companion, folder))
                    break
            break
    return [f for f in found if f not in p.sources]


def read_programs(paths: list, checkout: Path) -> list:
    """The programs of ``paths`` (see read_program); files that build the same program (a Makefile's or
    readme's line naming several) run once, as the one with main() of its own, the others say so."""
    programs = [read_program(path, checkout) for path in dict.fromkeys(paths)]
    first = {}
    for p in sorted(programs, key=lambda p: not re.search(_MAIN, _without_comments(
            (checkout / p.name).read_text(errors="replace")))):
        if not p.left_out:
            first.setdefault((p.folder, tuple(p.options), tuple(p.sources)), p)
    for p in programs:
        runs_as = first.get((p.folder, tuple(p.options), tuple(p.sources)), p)
        if not p.left_out and runs_as is not p:
            p.left_out = f"built with {runs_as.name} into one program, run as that"
    return programs


def _without_comments(code: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", code, flags=re.S)


def _not_emulated(text: str) -> str:
    return next((f"uses {why}, which cudalab does not emulate" for pattern, why in NOT_EMULATED
                 if re.search(pattern, text)), "")


# ---------------------------------------------------------------------------------------- running
def run_program(p: Program, checkout: Path, work: Path, timeout: float, logs: Path | None = None,
                outputs: dict | None = None) -> Result:
    """Build and run ``p`` in ``work``, a copy of the checkout (a program may include ``../shared/x.h``
    and write files where it runs; the checkout stays as it was). ``outputs`` gets what it printed, by
    name, for ``judge_without_verdict_c18``."""
    after = ["--", *p.arguments] if p.arguments else []
    shown = "cudalab run " + " ".join(shlex.quote(w) for w in [*p.options, *p.sources, *after])
    shown = "".join(f"{k}={shlex.quote(v)} " for k, v in p.environment.items()) + shown
    shown += f" < {shlex.quote(p.stdin)}" if p.stdin else ""
    if p.left_out:
        return Result(p.name, "left out", p.left_out, command=shown, how=p.how)
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    where = work / p.folder
    for library in p.host_libraries:    # the course's own host libraries (the SDK's libcutil), made as make makes them
        home = f"{_cuda_home()}"
        subprocess.run(["make", *[f"{v}={home}" for v in _CUDA_HOME_VARIABLES]], cwd=work / library,
                       capture_output=True, timeout=600)
    for words in p.libraries:       # the CUDA libraries it links, built first as its readme says (nvcc -shared)
        lib = subprocess.run([sys.executable, "-m", "cudalab.cli", "run", *words], cwd=where, env=env,
                             capture_output=True, text=True, timeout=1800)
        if lib.returncode:
            log = lib.stderr + lib.stdout
            return Result(p.name, "fail", f"build of {_output(words)}: " + first_error(log)[:300], command=shown,
                          how=p.how)
    build = subprocess.run([sys.executable, "-c", _BUILD, *p.options, *p.sources], cwd=where, env=env,
                           capture_output=True, text=True, timeout=1800)
    if build.returncode:
        log = build.stderr + build.stdout
        why = next((l.strip() for l in log.splitlines() if re.search(r"\berror\b|does not|fatal", l)), None)
        return Result(p.name, "fail", "build: " + (why or first_error(log))[:300], command=shown, how=p.how)
    for folder in missing_output_folders(p, checkout):
        (where / folder).mkdir(parents=True, exist_ok=True)
    command = with_input([sys.executable, "-m", "cudalab.cli", "run", *p.options, *p.sources, *after], p.stdin)
    code, out, used = run_limited(command, where, {**env, **p.environment}, timeout, timeout * WALL_PER_CPU)
    if logs is not None:
        (logs / (p.name.replace("/", "__") + ".txt")).write_text(
            f"$ {shown}\n(exit code {code}, {used:.1f} s CPU)\n{out}\n")
    status, detail = judge(code, out, built_text((checkout / p.name).read_text(errors="replace"), p.options),
                           timeout)
    if outputs is not None:
        outputs[p.name] = out
    return Result(p.name, status, detail, round(used, 1), shown, p.how)


# a path a program's source writes under: sprintf(name, "./output/data_%d.dat", ...), fopen("results/x.csv", "w")
_OUTPUT_PATH = re.compile(r'"(?:\./)?([\w-]+)/[^"/]*"')


def missing_output_folders(p: "Program", checkout: Path) -> list:
    """The folders ``p``'s sources name as the start of a file's path that its run folder lacks: git keeps
    no empty folder, so an ``output/`` the author made for the program's files is not in any clone, and a
    student makes it (Caltech CS 179's n-body project stops at 'Cannot find output directory, please make
    it ("mkdir output")'). An input file under such a folder is still missing, and the program says so."""
    home = checkout / p.folder
    names = []
    for source in p.sources:
        path = home / source
        if path.is_file():
            names += _OUTPUT_PATH.findall(_without_comments(path.read_text(errors="replace")))
    return [n for n in dict.fromkeys(names) if not (home / n).exists()]


def with_input(command: list, stdin: str) -> list:
    """``command`` reading ``stdin`` (a file of the program's folder) as its standard input, as a course's
    ``./cuda-edge-detect < BWstop-sign.pgm`` runs; without one, the command as it is (its input is empty)."""
    return ["bash", "-c", 'exec "$@" < "$0"', stdin, *command] if stdin else command


# a kernel stopped by the program's own limit rather than the watchdog (runtime.core's time_limit_message,
# pace's early stop), and the emulator's estimate of that kernel's time
BY_PROGRAM_LIMIT = re.compile(r"The program's (?:CPU-time )?limit \(.*?\) ran out while kernel|"
                              r"far beyond the [\d.]+ \w+ left of the (?:program's time|program's CPU-time|CPU-time) limit")
ESTIMATE = re.compile(r"(?:about|and|more than) ([\d.,]+) (s|minutes|hours|days|years) on the emulator")
SECONDS = {"s": 1, "minutes": 60, "hours": 3600, "days": 86400, "years": 86400 * 365}


def fits_the_limit(out: str, timeout: float) -> bool:
    """Whether the kernel the program's limit stopped would itself have run within that limit: then the
    whole program, not one grid sized for a GPU, is what needs more (the CUDA Handbook's radixSort,
    stopped in its 194th launch of a histogram kernel of about 0.2 s)."""
    if not BY_PROGRAM_LIMIT.search(out):
        return False
    said = ESTIMATE.findall(out)
    return bool(said) and max(float(n.replace(",", "")) * SECONDS[u] for n, u in said) < timeout


_CONDITIONAL = re.compile(r"^\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b\s*(\w*)", re.M)
_DEFINE = re.compile(r"^\s*#\s*define\s+(\w+)", re.M)


def built_text(source: str, options) -> str:
    """``source`` without the lines that ``#ifdef NAME`` (``#ifndef NAME``) leaves out of the build, where
    neither the build's ``-D`` options nor the file itself define NAME. A success message under
    ``#ifdef COMPARE_RESULTS`` is printed only by builds that ask for the comparison (CSCS's 2011
    matmul exercises), so a run of the author's build owes none. Both branches of any other ``#if`` count."""
    words = list(options)
    defined = {w[2:].split("=")[0] for w in words if w.startswith("-D") and len(w) > 2}
    defined |= {b.split("=")[0] for a, b in zip(words, words[1:]) if a == "-D"}
    defined |= set(_DEFINE.findall(source))
    kept, stack = [], []            # whether each open block's current branch is built (None: not known)
    for line in source.splitlines(keepends=True):
        m = _CONDITIONAL.match(line)
        if m:
            word, name = m.groups()
            if word in ("ifdef", "ifndef"):
                stack.append((name in defined) == (word == "ifdef"))
            elif word == "if":
                stack.append(None)
            elif word in ("else", "elif") and stack and stack[-1] is not None:
                stack[-1] = None if word == "elif" else not stack[-1]
            elif word == "endif" and stack:
                stack.pop()
            continue
        if False not in stack:
            kept.append(line)
    return "".join(kept)


# a C string literal, or a comment (skipped: matched only so that a quote inside one starts no literal)
_LITERALS = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)


def judge(code: int, out: str, source: str, timeout: float) -> tuple:
    """(status, reason) of one run: pass, fail, GPU-sized (the watchdog's estimate) or time."""
    if fits_the_limit(out, timeout):
        return "time", f"over {timeout:g} s of CPU time in all, though each kernel fits: {explanation(out)}"
    if GPU_SIZED.search(out) or WATCHDOG.search(out):
        return "GPU-sized", explanation(out)
    if (code in (-signal.SIGXCPU, -signal.SIGKILL) or "stopped by its CPU-time limit" in out   # over the CPU (or wall) limit
            or "used up its CPU-time limit" in out):            # cudalab stopped it at ulimit's soft limit
        return "time", f"still running after {timeout:g} s of CPU time"
    bad = failed_line(out) or next((l.strip() for l in out.splitlines() if COURSE_FAILURE.search(l)
                                    or DIFFERENT_C18.search(l)), None)
    refused = REFUSED_LAUNCH_C18.search(out)
    if code == 0 and not bad and refused:
        return "fail", f"a launch was refused and the program went on without checking: {refused.group(0)[9:]}"
    if code != 0 or bad:
        why, shown = explanation(out), bad or first_error(out)
        return "fail", f"exit code {code}: {shown}" + (f" ({why})" if why and why not in shown else "")
    # a success line the source prints; "Warning ..., timing results still correct" is not one
    # nor is "Sum is not correct.", the message of a failed check, nor "The shape of the correct output
    # image is invalid" (an error message about the reference image)
    # (string literals only: a comment's quoted word, `// get the "correct" results`, is printed by nothing)
    says = [m.group(0) for m in _LITERALS.finditer(source) if m.group(0).startswith('"')
            and _affirms(m.group(0)) and not _a_label(source, m)
            and not re.search(r"\bwarn|\berror|\busage\b|\binvalid\b|\bwrong\b|\bfail",
                                                       m.group(0), re.I)]
    if says and not SUCCESS.search(out):
        return "fail", f"exit code 0 but no success line (its source prints {says[0]})"
    return "pass", ""


# ---------------------------------------------------------------------------------------- courses18: no verdict
# a launch cudalab refused (runtime/launch.py's checks, cudaErrorInvalidValue) in a program that checks no error
# and prints on: SJTU's tiled matmul swaps its grid and block, so 1001-sized matrices ask for blocks of 3,969
# threads, and it prints "Product calculated" of nothing, as it does on a GPU
REFUSED_LAUNCH_C18 = re.compile(r"^cudalab: \S+: (?:a block may have at most [^\n]*|every (?:block|grid) dimension must "
                                r"[^\n]*|(?:blockDim|gridDim)\.[xyz] may be at most [^\n]*|dynamic shared memory cannot "
                                r"[^\n]*|the block needs [\d,]+ bytes of shared memory[^\n]*)", re.M)
# a check's failure said as a difference: "The Results are Different!" (Politecnico di Torino's labs),
# "Output is not the same", "arrays are not equal" ("different block sizes" says nothing of a result)
DIFFERENT_C18 = re.compile(r"\b(?:results?|outputs?|values?|arrays?|matri(?:x|ces)|vectors?|images?|answers?)\s+"
                           r"(?:are|is|were|was)\s+(?:different|not\s+(?:the\s+)?(?:same|equal|identical))\b", re.I)
# a line that says how a check came out, besides SUCCESS's words: "The Results match!", "Test OK",
# "All elements were doubled? TRUE", "Verified" (a failure's line was judged before)
VERDICT_C18 = re.compile(SUCCESS.pattern + r"|\bmatch(es|ed)?\b|\bverified\b|\bOK\b|\?\s*TRUE\s*$|\bidentical\b", re.I | re.M)
# a comment that leaves work to the student: "// TODO: launch the kernel", "/* YOUR CODE HERE */"
_STUDENT_WORK_C18 = re.compile(r"(?://|/\*|^\s*\*)[^\n]*?(?:\bTODO\b|\bFIXME\b|\byour code(?: goes)? here\b|"
                               r"\bfill (?:this |it )?in\b(?!\s+the\b[^\n]*\bwith\b)|\bimplement (?:this|here|me)\b)[^\n]*",
                               re.I | re.M)
# ("// fill in the host memory with data", which CUDA by Example's programs and the courses after it say above
# the loop that does it, describes the code: no work is left; courses20)
# where a course keeps a skeleton's answer: beside it (solution.cu, NAME_solution.cu) or in a tree of its own
# (spoilers.cu: NVIDIA's GTC 2013 Thrust workshop, beside each exercise.cu)
_SOLUTION_NAMES_C18 = ("{stem}_solution{ext}", "{stem}_sol{ext}", "solution_{stem}{ext}", "solution{ext}",
                       "spoilers{ext}", "solutions/{name}", "solution/{name}")
_SKELETON_FOLDERS_C18 = ("exercises", "exercise", "skeleton", "skeletons", "template", "templates", "problems",
                         "start", "starter", "src")
# a line about time or speed: its numbers differ from run to run and between a skeleton and its answer
_TIMING_C18 = re.compile(r"\b(?:ms|msec|us|usec|ns|sec|secs|seconds?|time[ds]?|timing|elapsed|GB/s|MB/s|"
                         r"G?FLOP/?S|bandwidth|throughput|speed-?up|clock)\b|µs", re.I)
_NUMBER_C18 = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b", re.I)


def student_work_c18(code: str) -> str:
    """The first comment of ``code`` that leaves work to the student ('// TODO: sum the block'), else
    '': a skeleton that builds and runs, whose numbers mean nothing until the student fills it in."""
    m = _STUDENT_WORK_C18.search(code)
    return " ".join(m.group(0).split())[:80] if m else ""


def reference_c18(name: str, checkout: Path) -> str:
    """The course's own answer to the exercise ``name`` (a path in ``checkout``), else '': a
    ``solution.cu`` or ``NAME_solution.cu`` beside it, ``solutions/NAME`` below its folder or beside
    one of its folders (``Lab02/solutions/saxpy/main.cpp`` for ``Lab02/saxpy/main.cpp``), or the same
    path with its ``exercises/`` (``skeleton/``, ``template/``) folder named ``solutions/``."""
    path = Path(name)
    if re.search(r"solution|\bsol\b|spoiler", name, re.I):
        return ""
    found = [path.parent / pattern.format(stem=path.stem, ext=path.suffix, name=path.name)
             for pattern in _SOLUTION_NAMES_C18]
    for k in range(1, len(path.parts) - 1):          # Lab02/saxpy/main.cpp: Lab02/solutions/saxpy/main.cpp
        found += [Path(*path.parts[:k], folder, *path.parts[k:]) for folder in ("solutions", "solution")]
    for k, part in enumerate(path.parts[:-1]):      # exercises/hw1/x.cu: solutions/hw1/x.cu
        if part.lower() in _SKELETON_FOLDERS_C18:
            found += [Path(*path.parts[:k], folder, *path.parts[k + 1:]) for folder in ("solutions", "solution")]
    return next((f.as_posix() for f in found if f != path and (checkout / f).is_file()), "")


def result_lines_c18(out: str) -> list:
    """The lines of ``out`` that carry results: those with a number that is not a time, a speed or a
    path, with their numbers (a skeleton's "sum = 1572" against its answer's "sum = 49776")."""
    kept, said = [], False
    for line in out.splitlines():
        said = line.startswith("cudalab") or (said and line.startswith((" ", "\t")))   # cudalab's notes
        if said or _TIMING_C18.search(line) or "0x" in line:
            continue
        numbers = _NUMBER_C18.findall(line)
        if numbers:
            kept.append((line.strip(), tuple(numbers)))
    return kept


def no_verdict_c18(out: str, code: str, reference: str, reference_out: str | None) -> tuple:
    """(status, reason) of a run that exited 0 and printed no failure, where it printed no verdict
    either. A skeleton (a comment leaves work to the student) "ran" with no verdict: it prints numbers
    that mean nothing yet (an unfilled warp reduction's sum of 1572 for 49776), and the tool counted it
    a pass. Where the course's answer ran too, the two outputs' result lines decide: the same numbers
    pass, other numbers say where they part. A program that is no skeleton and has no answer to compare
    passes as before (a hello world has nothing to check)."""
    if VERDICT_C18.search(out):
        return "pass", ""
    work = student_work_c18(code)
    if reference and reference_out is not None:
        mine, theirs = result_lines_c18(out), result_lines_c18(reference_out)
        if [n for _, n in mine] == [n for _, n in theirs]:
            return "pass", f"prints the numbers {reference} prints (no check of its own)"
        where = next(((a, b) for a, b in zip(mine, theirs) if a[1] != b[1]), None)
        said = (f"'{where[0][0][:60]}' where {reference} prints '{where[1][0][:60]}'" if where else
                f"{len(mine)} result lines where {reference} prints {len(theirs)}")
        return "ran", f"ran, no verdict: {said}" + (f" (a skeleton: '{work}')" if work else "")
    if work:
        return "ran", f"ran, no verdict: an exercise's skeleton ('{work}') that checks nothing itself"
    return "pass", ""


def judge_without_verdict_c18(programs: list, results: dict, outputs: dict, checkout: Path, prefix: str = ""):
    """Judge again, once all have run, the passes of ``programs`` that printed no verdict (see
    ``no_verdict_c18``): a skeleton's answer often runs after it (``Lab02/matmul`` sorts before
    ``Lab02/solutions/matmul``), and its output is what the skeleton's numbers are checked against."""
    for p in programs:
        r = results.get(prefix + p.name)
        if not r or r["status"] != "pass" or r["detail"] or p.name not in outputs:
            continue
        folder = checkout / p.folder
        code = " ".join((folder / s).read_text(errors="replace") for s in p.sources if (folder / s).is_file())
        reference = reference_c18(p.name, checkout)
        r["status"], r["detail"] = no_verdict_c18(outputs[p.name], code, reference, outputs.get(reference))


# a call that prints its string arguments (a verdict passed to it is printed)
_PRINTING_CALL = re.compile(r"\b(?:printf|fprintf|sprintf|snprintf|puts|fputs|print|println|wbLog)\s*\([^;]*$")
# the call a literal is a later argument of: `printMatrix(correct, "correct")`
_CALL_ARGUMENT = re.compile(r"\b\w+\s*\([^;()]*,\s*$")


def _a_label(source: str, m: re.Match) -> bool:
    """Whether the literal ``m`` is one lowercase word handed to a function that does not print it as a
    sentence: a matrix's name for a debugging dump (CSU's and NYU's matmult labs call
    ``printMatrix(correct, "correct")`` under ``if (verbose)`` and print nothing when the check passes),
    which is no success line the program owes; ``ok ? "correct" : "wrong"`` in a printf still is."""
    if not re.fullmatch(r'"[a-z_]+"', m.group(0)):
        return False
    before = source[max(0, m.start() - 200):m.start()].rsplit("\n", 1)[-1]
    return bool(_CALL_ARGUMENT.search(before)) and not _PRINTING_CALL.search(before)


def _affirms(text: str) -> bool:
    """Whether ``text`` says that something succeeded: a success word not negated ("not correct")."""
    return any(not re.search(r"\bnot\s+(be\s+)?$", text[:m.start()], re.I) and not _USAGE_C20.match(text, m.end())
               for m in SUCCESS.finditer(text))


# "Correct Format: ./grid_4_4 <number of iterations>": a usage message's "correct" (McGill's lab 2, printed only
# when the arguments are wrong), no success line the program owes (courses20)
_USAGE_C20 = re.compile(r"\s+(?:format|usage|syntax|input|inputs|arguments|command|way to (?:run|call|use))\b", re.I)


# ---------------------------------------------------------------------------------------- a real GPU
_GPU_RUN = """
# Build each program with NVIDIA's nvcc for this GPU and run it; write $OUT/gpu.json (written by
# tools/courses_check.py --stage-gpu; run as: python3 run_gpu.py)
import json, os, re, shutil, subprocess, sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
here = os.path.dirname(os.path.abspath(__file__))
programs = json.load(open(os.path.join(here, "programs.json")))
sys.path.insert(0, here)
from legacy_props import legacy_include

def legacy_props_options():
    # CUDA 12's cudaDeviceProp fields (clockRate, deviceOverlap, ...), as cudalab gives them back: the
    # toolkit's headers with driver_types.h patched, and legacy_gpu.h filling them from device attributes
    bin_dir = Path(shutil.which("nvcc")).resolve().parent
    for include in (bin_dir.parent / "include", bin_dir.parent / "targets" / "x86_64-linux" / "include"):
        if (include / "driver_types.h").exists():
            folder = legacy_include(include, Path(here) / "cache")
            return ["-I", str(folder), "-include", os.path.join(here, "legacy_gpu.h")] if folder else []
    return []

LEGACY_PROPS = legacy_props_options()

def build(p, extra=()):
    for words in p.get("libraries", []):                   # the CUDA libraries it links (nvcc -shared), first
        b = subprocess.run(["nvcc", *words], cwd=os.path.join(here, p["dir"]), capture_output=True, text=True,
                           errors="replace")
        if b.returncode:
            return b.returncode, (b.stdout + b.stderr)[-3000:]
    b = subprocess.run(["nvcc", "-arch=native", "-include", os.path.join(here, "legacy.h"), *extra, *LEGACY_PROPS,
                        *p["options"], *p["sources"], "-o", p["output"]], cwd=os.path.join(here, p["dir"]),
                       capture_output=True, text=True, errors="replace")   # a GBK source: gcc quotes its lines
    return b.returncode, (b.stdout + b.stderr)[-3000:]

def run(p):
    try:
        folder = os.path.join(here, p["dir"])          # (its libraries found there, as its readme's LD_LIBRARY_PATH=.)
        env = dict(os.environ, LD_LIBRARY_PATH=folder + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
        env.update(p.get("environment", {}))                # (its author's GPU_KERNEL=0 ./x)
        given = open(os.path.join(folder, p["input"]), "rb") if p.get("input") else subprocess.DEVNULL
        r = subprocess.run(["./" + p["output"], *p["arguments"]], cwd=folder, capture_output=True, text=True,
                           errors="replace", timeout=10, stdin=given, env=env)
        return {"code": r.returncode, "out": (r.stdout + r.stderr)[-3000:]}
    except subprocess.TimeoutExpired:
        return {"code": "timeout", "out": ""}

def save():                                                # as it goes: a run cut short keeps its results
    json.dump(results, open(os.path.join(os.environ.get("OUT", here), "gpu.json"), "w"), indent=1)

OLD_NAMES = re.compile(r'identifier "(?:u?mul24|mulhi|mul64hi|float_as_u?int|u?int_as_float|saturate|float2u?int|u?int2float)" is undefined')
OLD_CUFFT = re.compile(r'identifier "CUFFT_(?:INCOMPLETE_PARAMETER_LIST|PARSE_ERROR|LICENSE_ERROR)" is undefined')
REFERENCES = re.compile(r'\\b(texture|surface) is not a template|identifier "cuda(Un)?Bind(Texture|Surface)')
THRUST = re.compile(r'namespace "thrust" has no member')
THRUST_HEADERS = json.load(open(os.path.join(here, "thrust_headers.json")))

# headers old toolkits had, and a string literal glued to a macro parameter (C++03's), as cudalab builds them
REMOVED = re.compile(r'fatal error: ([\\w./]+\\.h): No such file')
STRING_MACRO = re.compile(r'user-defined literal operator not found|unable to find string literal operator')

def build_and_run(p):
    extra = []
    code, log = build(p)
    if code and any(".." not in h and os.path.exists(os.path.join(here, "removed", h)) for h in REMOVED.findall(log)):
        extra = ["-I", os.path.join(here, "removed")]
        code, log = build(p, extra)
    if code and STRING_MACRO.search(log):
        p = dict(p, options=["-std=c++03", *[o for o in p["options"] if not re.match(r"-?-std=", o)]])
        code, log = build(p, extra)
    if code and THRUST.search(log):                        # what CUDA 12's Thrust included, as cudalab builds it
        code, log = build(p, extra + THRUST_HEADERS)
    if code and REFERENCES.search(log):                    # CUDA 11's texture references, as cudalab builds them
        code, log = build(p, extra + ["-include", os.path.join(here, "legacy_textures.h")])
    if code and OLD_NAMES.search(log):                     # CUDA 11's mul24, saturate, ..., as cudalab builds them
        code, log = build(p, extra + ["-include", os.path.join(here, "legacy_device_functions.h")])
    if code and OLD_CUFFT.search(log):                     # cufftResult codes CUDA 13 dropped, as cudalab builds them
        code, log = build(p, extra + ["-include", os.path.join(here, "legacy_cufft.h")])
    return run(p) if not code else {"code": "build", "out": log}

# the courses' own host libraries (the SDK's libcutil), made once each before the builds that link them
HOME = str(Path(shutil.which("nvcc")).resolve().parent.parent)
for folder in dict.fromkeys(f for p in programs for f in p.get("host_libraries", [])):
    subprocess.run(["make", *[v + "=" + HOME for v in ("CUDA_HOME", "CUDA_PATH", "CUDA_DIR", "CUDA_ROOT",
                    "CUDA_INSTALL_PATH", "CUDA_TOOLKIT_ROOT_DIR")]], cwd=os.path.join(here, folder), capture_output=True)

results = {}
with ThreadPoolExecutor(os.cpu_count()) as pool:          # each program runs once built: a run cut short
    jobs = {pool.submit(build_and_run, p): p["name"] for p in programs}    # keeps what finished
    for job in as_completed(jobs):
        results[jobs[job]] = job.result()
        save()
print(sum(r["code"] == 0 for r in results.values()), "of", len(results), "exit 0")
"""


# Force-included into the GPU builds, after cudalab's patched driver_types.h: CUDA 13's runtime leaves
# the fields it removed (now in the struct's reserved ints) zero, so a course's `if (!prop.deviceOverlap)`
# would stop on the GPU; they are filled from the attributes that replaced them, as shim/cudart.c does.
_GPU_LEGACY_PROPS = """#include <cuda_runtime_api.h>
#ifdef CUDALAB_LEGACY_DEVICE_PROP
static inline cudaError_t cudalab_legacy_props(struct cudaDeviceProp *p, int device) {
    cudaError_t e = cudaGetDeviceProperties(p, device);
    if (e == cudaSuccess) {
        cudaDeviceGetAttribute(&p->clockRate, cudaDevAttrClockRate, device);
        cudaDeviceGetAttribute(&p->deviceOverlap, cudaDevAttrGpuOverlap, device);
        cudaDeviceGetAttribute(&p->kernelExecTimeoutEnabled, cudaDevAttrKernelExecTimeout, device);
        cudaDeviceGetAttribute(&p->computeMode, cudaDevAttrComputeMode, device);
        cudaDeviceGetAttribute(&p->maxTexture1DLinear, cudaDevAttrMaxTexture1DLinearWidth, device);
        cudaDeviceGetAttribute(&p->memoryClockRate, cudaDevAttrMemoryClockRate, device);
        cudaDeviceGetAttribute(&p->singleToDoublePrecisionPerfRatio, cudaDevAttrSingleToDoublePrecisionPerfRatio, device);
    }
    return e;
}
#define cudaGetDeviceProperties cudalab_legacy_props
#endif
"""


_ARCHITECTURE = ("-arch", "-gencode", "--generate-code", "-code", "--gpu-architecture", "--gpu-code")


def gpu_options(options: list) -> list:
    """A program's options for the GPU build: its own architectures (``-arch sm_60``, ``-gencode ...``,
    ``--gpu-architecture=compute_75 --gpu-code=sm_75``) and ``-o`` give way to ``-arch=native``, which
    nvcc refuses beside a ``--gpu-code``; a host compiler that no machine here has (CSU's Makefile says
    ``--compiler-bindir /usr/local/gcc-6.4.0/bin``) gives way to nvcc's default, as cudalab's build does
    (``command.host_compiler_here``), else nvcc stops at "Failed to preprocess host compiler properties"."""
    from cudalab.programs.command import host_compiler_here
    kept, skip = [], False
    for k, w in enumerate(options):
        if skip:
            skip = False
        elif w in ("-o", *_ARCHITECTURE):
            skip = True
        elif w in _HOST_COMPILER and not host_compiler_here(options[k + 1] if k + 1 < len(options) else ""):
            skip = True
        elif any(w.startswith(c + "=") and not host_compiler_here(w.split("=", 1)[1]) for c in _HOST_COMPILER):
            continue
        elif not any(w.startswith(a + "=") for a in _ARCHITECTURE):
            kept.append(w)
    return kept


_HOST_COMPILER = ("-ccbin", "--compiler-bindir")


def stage_gpu(programs: list, checkout: Path, dest: Path):
    """Copy the checkout under ``dest`` with run_gpu.py, which builds each program with NVIDIA's
    nvcc for the GPU it runs on (with the adjustments cudalab makes: C++17, CUDA 12's removed
    calls and cudaDeviceProp fields, CUDA 11's texture references, the Thrust headers CUDA 12 included) and records exit code and output in gpu.json, for --gpu."""
    from cudalab.programs import legacy_props, removed_headers
    from cudalab.programs.build import (LEGACY, LEGACY_CUFFT, LEGACY_DEVICE_FUNCTIONS, LEGACY_TEXTURES,
                                        THRUST_AS_CUDA_12_INCLUDED, cpp17)
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "thrust_headers.json").write_text(json.dumps(THRUST_AS_CUDA_12_INCLUDED))
    shutil.copy(LEGACY, dest / "legacy.h")
    shutil.copy(LEGACY_TEXTURES, dest / "legacy_textures.h")
    shutil.copy(LEGACY_DEVICE_FUNCTIONS, dest / "legacy_device_functions.h")
    shutil.copy(LEGACY_CUFFT, dest / "legacy_cufft.h")
    shutil.copytree(removed_headers.FOLDER, dest / "removed", dirs_exist_ok=True)
    shutil.copy(legacy_props.__file__, dest / "legacy_props.py")
    (dest / "legacy_gpu.h").write_text(_GPU_LEGACY_PROPS)
    listed = []
    shutil.copytree(checkout, dest / checkout.name, symlinks=True, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns(".git"))
    for p in programs:
        folder = f"{checkout.name}/{p.folder}"
        listed.append({"name": checkout.name + "/" + p.name, "dir": folder, "options": cpp17(gpu_options(p.options)),
                       "sources": p.sources, "output": Path(p.name).stem + ".gpu", "arguments": p.arguments,
                       "environment": p.environment, "libraries": p.libraries, "input": p.stdin,
                       "host_libraries": [f"{checkout.name}/{f}" for f in p.host_libraries]})
    (dest / "programs.json").write_text(json.dumps(listed, indent=1))
    (dest / "run_gpu.py").write_text(_GPU_RUN)


def gpu_verdicts(path: Path) -> dict:
    """{program: (status, reason)} from a run_gpu.py gpu.json, judged as the emulator's runs are."""
    found = {}
    for name, r in json.loads(path.read_text()).items():
        if r["code"] == "build":
            found[name] = ("fail", "build: " + first_error(r["out"]))
        elif r["code"] == "timeout":
            found[name] = ("time", "still running after 10 s")
        else:
            found[name] = judge(r["code"], r["out"], "", 10)       # no success line asked for here
    return found


# ---------------------------------------------------------------------------------------- report
def write_markdown(results: dict, out: Path, timeout: float, gpu: dict | None = None, gpu_name: str = ""):
    rows = list(results.values())
    ran = [r for r in rows if r["status"] != "left out"]
    count = {s: sum(r["status"] == s for r in ran) for s in ("pass", "ran", "GPU-sized", "fail", "time")}
    lines = [
        "# Course programs on cudalab",
        "",
        "Written by `tools/courses_check.py` (not part of CI: the programs belong to their authors and are not in",
        "this repository). Each program is built with `cudalab run` as its course says (its Makefile, else the",
        "`nvcc` line of its readme, else `nvcc -o NAME NAME.cu`), unchanged and at its authors' sizes, and run with",
        f"no arguments as a student runs it (the emulator's own watchdog), under a limit of {timeout:g} s of CPU",
        "time. *pass*: exit code 0, no line saying it failed, and its success message where it prints one.",
        "*ran*: exit code 0 but no verdict, from an exercise's skeleton (its comments leave work to the student)",
        "or a program whose numbers differ from its course's solution's.",
        "*GPU-sized*: a kernel too large for a CPU, stopped by the watchdog with its estimate of the time it",
        "needs (for a grid small enough to run in one batch: how far it got in 10 s), or an allocation larger than",
        "the emulated device's 4 GiB: cudalab's correct answer for it. *time*: still running at the limit (each",
        "kernel fits the watchdog, but there are hundreds of them). CPU seconds are the emulator's and the",
        "program's together. Exercises with FIXME blanks for the student are left out (nvcc does not build them).",
        "",
        f"**{count['pass']} of {len(ran)} pass, {count['ran']} ran with no verdict, {count['GPU-sized']} GPU-sized, "
        f"{count['fail']} fail, "
        f"{count['time']} over the time limit; {len(rows) - len(ran)} left out.**",
        "",
    ]
    if gpu:
        tried = [r for r in ran if r["name"] in gpu]
        on_gpu = sum(gpu[r["name"]][0] == "pass" for r in tried)
        lines += [f"On a GPU ({gpu_name}), built with NVIDIA's nvcc 13 for it (`-arch=native`, C++17 and",
                  "CUDA 12's removed calls as cudalab builds them) and run with a 10 s limit: "
                  f"**{on_gpu} of the {len(tried)} run there pass**; the *GPU* column gives its result where it is "
                  "not a pass.", ""]
    lines += ["| program | result | CPU s | reason | built from |" + (" GPU |" if gpu else ""),
              "| --- | --- | ---: | --- | --- |" + (" --- |" if gpu else "")]
    for r in ran:
        reason = r["detail"].replace("|", "\\|").replace("`", "'")
        row = f"| {r['name']} | {r['status']} | {r['cpu_seconds']:.1f} | {reason} | {r['how']} |"
        if gpu:
            status, why = gpu.get(r["name"], ("not run", ""))
            row += f" {status}{': ' + why.replace('|', chr(92) + '|')[:160] if status != 'pass' and why else ''} |"
        lines.append(row)
    lines += ["", "## Left out", "", "| program | reason |", "| --- | --- |"]
    lines += [f"| {r['name']} | {r['detail']} |" for r in rows if r["status"] == "left out"]
    lines += ["", "Commands, as `cudalab run` was given them (in the program's folder of a copy of its checkout):", ""]
    lines += [f"- {r['name']}: `{r['command']}`" for r in ran]
    out.write_text("\n".join(lines) + "\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("programs", nargs="*", help="globs of program sources, relative to the checkout")
    p.add_argument("--checkout", type=Path, help="the course's checkout")
    p.add_argument("--timeout", type=float, default=TIMEOUT, help="CPU seconds each program may run")
    p.add_argument("--json", type=Path, default=Path("courses.json"), help="write (and add to) the results here")
    p.add_argument("--logs", type=Path, help="write each program's output to LOGS/NAME.txt")
    p.add_argument("--args", action="append", default=[], metavar="GLOB=WORDS",
                   help="run the programs matching GLOB with these arguments (those their author gives)")
    p.add_argument("--stdin", action="append", default=[], metavar="GLOB=FILE",
                   help="run the programs matching GLOB with FILE (in their folder) as standard input")
    p.add_argument("--options", action="append", default=[], metavar="GLOB=WORDS",
                   help="build the programs matching GLOB that no Makefile, CMake or readme line builds with these "
                        "nvcc options (a course's helper script's: -x cu --extended-lambda)")
    p.add_argument("--notebooks", action="store_true", help="run the programs a course's notebooks write with "
                   "%%%%writefile, or run with nvcc4jupyter's %%%%cu (as cellN.cu), each in a folder named after "
                   "its notebook (a copy of the checkout; the globs then name NOTEBOOK/FILE.cu)")
    p.add_argument("--dry-run", action="store_true", help="print how each program would be built, run none")
    p.add_argument("--merge", type=Path, nargs="+", metavar="RESULTS.json", help="write --markdown from these")
    p.add_argument("--markdown", type=Path, default=ROOT / "docs" / "courses.md")
    p.add_argument("--stage-gpu", type=Path, metavar="DIR", help="copy the programs and run_gpu.py to DIR (to "
                   "run on a machine with a GPU: python3 DIR/run_gpu.py writes gpu.json), run none here")
    p.add_argument("--gpu", type=Path, nargs="+", metavar="GPU.json", help="with --merge: run_gpu.py's results, "
                   "as a column")
    p.add_argument("--gpu-name", default="an NVIDIA H100")
    a = p.parse_args(argv)
    if a.merge:
        results = {}
        for f in a.merge:
            results.update(json.loads(f.read_text()))
        gpu = {name: verdict for f in a.gpu or () for name, verdict in gpu_verdicts(f).items()}
        write_markdown(results, a.markdown, a.timeout, gpu or None, a.gpu_name)
        print(f"wrote {a.markdown}")
        return 0
    if not a.checkout:
        p.error("give --checkout (or --merge)")
    checkout = a.checkout.resolve()
    if a.notebooks:
        checkout = with_notebook_files(checkout, Path(tempfile.mkdtemp(prefix="courses-notebooks-")))
    paths = [Path(f) for pattern in a.programs for f in sorted(glob.glob(str(checkout / pattern))) if Path(f).is_file()]
    results = json.loads(a.json.read_text()) if a.json.exists() else {}
    if a.logs:
        a.logs.mkdir(parents=True, exist_ok=True)
    arguments = [(glob_, shlex.split(words)) for glob_, _, words in (g.partition("=") for g in a.args)]
    options = [(glob_, shlex.split(words)) for glob_, _, words in (g.partition("=") for g in a.options)]

    programs = read_programs(paths, checkout)
    for prog in programs:
        prog.arguments = next((words for glob_, words in arguments if fnmatch.fnmatch(prog.name, glob_)), None)
        if prog.arguments is None:
            prog.arguments, prog.environment = author_run(prog, checkout)
        prog.stdin = next((file for glob_, _, file in (g.partition("=") for g in a.stdin)
                           if fnmatch.fnmatch(prog.name, glob_)), "")
        given = next((words for glob_, words in options if fnmatch.fnmatch(prog.name, glob_)), None)
        if given is not None and prog.how.startswith("default"):
            prog.options, prog.how = [*given, *prog.options], "given (--options)"
        if not prog.left_out:
            prog.sources += project_companions(prog, checkout)
    if a.stage_gpu:
        chosen = [prog for prog in programs if not prog.left_out]
        stage_gpu(chosen, checkout, a.stage_gpu)
        print(f"{len(chosen)} programs in {a.stage_gpu}: run python3 {a.stage_gpu}/run_gpu.py on a GPU")
        return 0
    work = Path(tempfile.mkdtemp(prefix="courses-")) / checkout.name
    if not a.dry_run:
        shutil.copytree(checkout, work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    outputs = {}
    prefix = checkout.name + "/"
    for prog in programs:
        if a.dry_run:
            print(f"{prog.name}: {''.join(f'{k}={v} ' for k, v in prog.environment.items())}"
                  f"{prog.left_out or 'cudalab run ' + shlex.join([*prog.options, *prog.sources])}"
                  f"{' -- ' + shlex.join(prog.arguments) if prog.arguments else ''}"
                  f"  [{prog.how}]")
            continue
        r = run_program(prog, checkout, work, a.timeout, a.logs, outputs)
        r.name = prefix + r.name
        results[r.name] = asdict(r)
        a.json.write_text(json.dumps(results, indent=1))       # as it goes: a stopped run keeps its results
        print(f"{r.name:60s} {r.status:9s} {r.cpu_seconds:6.1f}s  {r.detail[:110]}", flush=True)
    judge_without_verdict_c18(programs, results, outputs, checkout, prefix)
    for name in (prefix + p.name for p in programs if p.name in outputs):
        if results[name]["status"] == "ran" or results[name]["detail"].startswith("prints the numbers"):
            print(f"{name:60s} {results[name]['status']:9s} (judged again)  {results[name]['detail'][:110]}")
    if outputs:
        a.json.write_text(json.dumps(results, indent=1))
    shutil.rmtree(work.parent, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
