"""Functions a program calls that no file of its build defines, and the file beside it that does.

A course splits a program in two: ``sample1.cu`` has ``main`` and launches ``Sample1Kernel``, which a header
declares and ``sample1_kernel.cu`` defines (a Japanese lab's first sample, books round 15). Built alone, as
``nvcc -o sample1 sample1.cu``, it stops at the link with "undefined reference to `Sample1Kernel(float*,
float*, float*)'", on a GPU's machine too; the student should read which file holds the function and the
command that builds both.
"""
from __future__ import annotations

import re
from pathlib import Path

_SOURCE_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
# the names of libraries a link may miss, which build.py's _link_error explains (CUDA's runtime, driver and
# libraries, graphics, OpenMP, MPI, the device's built-in variables); a program's own cube() or globalSum() is not
_LIBRARY_NAME = re.compile(r"__cuda|cuda|cu[A-Z]|(cublas|cufft|curand|cusparse|cusolver|cudnn|nvrtc|nvtx|npp)|"
                           r"(gl|glut|glew|glfw|egl)[A-Z]|omp_|GOMP_|MPI_|__device_builtin")
# at most this many files are read from each folder (a course's folder, not a checkout of thousands)
_MOST_FILES = 200


def _base_name(symbol: str) -> str | None:
    """``Sample1Kernel`` of ``Sample1Kernel(float*, float*, float*)`` and ``ns::f`` of ``ns::f(int)``' last
    part; None for what is no plain function of the program's own (operators, templates' instances)."""
    name = symbol.split("(", 1)[0].strip()
    name = name.rsplit("::", 1)[-1]
    return name if re.fullmatch(r"[A-Za-z_]\w*", name) else None


def _defines(text: str, name: str) -> bool:
    """Whether ``text`` defines function ``name``: its name, a parameter list and a body (not a call, nor a
    declaration ending in a semicolon)."""
    return re.search(rf"\b{re.escape(name)}\s*\([^;{{}}()]*(?:\([^()]*\)[^;{{}}()]*)*\)\s*(?:const\s*)?\{{", text) is not None


def hint(missing: list, sources: list, cwd: Path, output: str | None) -> str:
    """The hint for a link whose ``missing`` symbols (as the linker names them) are the program's own
    functions: the files beside its ``sources`` that define them, and the command that builds them with the
    program; or, where none does, that the build lacks the file that defines them. Empty for other names."""
    own = [(symbol, name) for symbol in missing if (name := _base_name(symbol)) and not _LIBRARY_NAME.match(name)]
    if not own:
        return ""
    names = list(dict.fromkeys(name for _, name in own))
    in_c = _defined_in_c(names, sources, cwd)
    if in_c:
        file, those = in_c
        shown = ", ".join(those[:3]) + (", ..." if len(those) > 3 else "")
        return (f"\nhint: {shown} {'is' if len(those) == 1 else 'are'} defined in {file}, which nvcc compiles as C, "
                f"while the C++ files of the build call {'it' if len(those) == 1 else 'them'} as C++ functions (their "
                f"names are mangled, so the linker looks for other symbols): declare {'it' if len(those) == 1 else 'them'} "
                f"extern \"C\" where the C++ files include the declarations (#ifdef __cplusplus extern \"C\" {{ #endif "
                f"in the header), or compile {file} as C++ (a Makefile's g++ -c {file}, as nvcc would with a .cpp name).")
    built = {(cwd / s).resolve() for s in sources}
    folders = list(dict.fromkeys((cwd / s).resolve().parent for s in sources))
    defines: dict = {}              # file -> the missing names it defines
    for folder in folders:
        candidates = sorted(f for f in folder.iterdir() if f.suffix in _SOURCE_SUFFIXES and f.resolve() not in built)
        for file in candidates[:_MOST_FILES]:
            text = file.read_text(errors="replace")
            found = [name for name in names if _defines(text, name)]
            if found:
                defines[file] = found
    # the fewest files that define them all: each pick the file that defines most of what is left (a timed
    # variant of a kernel file defines the same kernel again, and two definitions would not link either)
    chosen, left = [], list(names)
    while left and defines:
        file = max(defines, key=lambda f: (sum(n in left for n in defines[f]), -len(defines[f])))
        if not any(n in left for n in defines[file]):
            break
        chosen.append(file)
        left = [n for n in left if n not in defines[file]]
    if not chosen:
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        return (f"\nhint: {shown} {'is' if len(names) == 1 else 'are'} called but defined in no file of this build "
                f"(a header may declare {'it' if len(names) == 1 else 'them'}): give the build the file that defines "
                f"{'it' if len(names) == 1 else 'them'}, as nvcc needs it too.")
    extra = [str(f.relative_to(cwd)) if f.is_relative_to(cwd) else str(f) for f in chosen]
    said = "; ".join(f"{', '.join(n for n in defines[f] if n in names)} {'is' if len(defines[f]) == 1 else 'are'} "
                     f"defined in {f.name}" for f in chosen)
    command = " ".join(["nvcc", *sources, *extra, *(["-o", output] if output else [])])
    return (f"\nhint: {said}, which this build does not compile: a program in several files is built from all of "
            f"them ({command}).")


def _defined_in_c(names: list, sources: list, cwd: Path) -> tuple | None:
    """(file, names) for a .c file of the build that defines some of ``names``: compiled as C, its functions
    keep plain names, which C++ callers do not look for (a lab's timer.c, built by its Makefile with g++)."""
    if not any(Path(s).suffix in (".cu", ".cpp", ".cc", ".cxx") for s in sources):
        return None
    for source in sources:
        if Path(source).suffix == ".c" and (cwd / source).is_file():
            text = (cwd / source).read_text(errors="replace")
            found = [name for name in names if _defines(text, name)]
            if found:
                return source, found
    return None
