"""Building whole programs: nvcc from NVIDIA's pip wheels, linked against cudalab's libcudart shim.

``build(parse_nvcc(["-I../Common", "main.cpp", "kernel.cu"]))`` builds the way a Makefile would:
each source file is compiled where it lies (so ``#include "kernel.cuh"`` is found next to the
file that includes it, and ``-I`` paths are read from the caller's folder), with ``-dc`` when
``-rdc=true``, then linked, with nvcc's device link step first for relocatable device code. Each
``.cu`` file's PTX is kept from its compile and the modules are joined (``ptx/link.py``) into the
one program the emulator loads; ptxas's register counts come along for the occupancy calculator.

Everything is cached under ``~/.cache/cudalab`` (or ``$CUDALAB_CACHE``): a translation unit by its
path, options and the contents of every file it included (nvcc's own ``-MD`` list), the program
by its units, so running a program again compiles nothing and editing one file recompiles that
file. The shim (``shim/cudart.c``) is built once with the system C compiler.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path

from ..errors import CompileError
from ..frontend.nvrtc import CURAND_FRONT
from ..ptx.link import FILE_NUMBER, PtxLinkError, link
from . import (asm_errors, images, include_case, legacy_notes, missing_definitions, msvc_headers, nearby_headers,
               removed_headers, shimgen, std_float_math, void_main, vs_includes, windows_header)
from .command import NvccCommand, parse_nvcc
from .cccl_compat import MDSPAN_CONVERSION, implicit_mdspan_include, mdspan_note
from .legacy_props import legacy_include
from .publish import publish

SHIM_DIR = Path(__file__).parent / "shim"
SHIMMED = ("-lcudart", "-lcudart_static", "-lcublas", "-lcublas_static", "-lcublasLt", "-lcublasLt_static",
           "-lcurand", "-lcurand_static", "-lcufft", "-lcufft_static", "-lcusparse", "-lcusparse_static", "-lculibos")
LEGACY = SHIM_DIR / "legacy.h"      # runtime calls CUDA 13 removed, for programs written for CUDA 12 and older
LEGACY_TEXTURES = SHIM_DIR / "legacy_textures.h"    # CUDA 11's texture and surface references, given on demand
LEGACY_VOTES = SHIM_DIR / "legacy_votes.h"          # the warp votes before CUDA 9, given on demand
LEGACY_DEVICE_FUNCTIONS = SHIM_DIR / "legacy_device_functions.h"   # CUDA 11's mul24, saturate, ..., on demand
LEGACY_CUFFT = SHIM_DIR / "legacy_cufft.h"          # cufftResult codes CUDA 13 dropped, on demand


def cache_dir() -> Path:
    d = Path(os.environ.get("CUDALAB_CACHE") or Path.home() / ".cache" / "cudalab")
    d.mkdir(parents=True, exist_ok=True)
    return d


@lru_cache(maxsize=1)
def cuda_home() -> Path:
    """The folder of the CUDA 13 wheels (bin/nvcc, include/, nvvm/)."""
    try:
        import nvidia
        for base in nvidia.__path__:
            home = Path(base) / "cu13"
            if (home / "bin" / "nvcc").exists():
                return home
    except ImportError:
        pass
    # an installed CUDA toolkit (CUDA_HOME, or the nvcc on PATH) has the same layout
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                 shutil.which("nvcc") and str(Path(shutil.which("nvcc")).resolve().parent.parent)):
        if home and (Path(home) / "bin" / "nvcc").exists() and (Path(home) / "include" / "cuda_runtime.h").exists():
            return Path(home)
    raise CompileError("nvcc was not found: whole programs (with int main) need the nvidia-cuda-nvcc and "
                       "nvidia-nvvm wheels. Install them with: pip install nvidia-cuda-nvcc nvidia-nvvm")


def nvcc() -> str:
    exe = cuda_home() / "bin" / "nvcc"
    if not os.access(exe, os.X_OK):       # some installers drop the executable bit
        for tool in (cuda_home() / "bin").iterdir():
            tool.chmod(tool.stat().st_mode | 0o111)
        for tool in (cuda_home() / "nvvm" / "bin").iterdir():
            tool.chmod(tool.stat().st_mode | 0o111)
    return str(exe)


def _digest(*parts) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else str(p).encode())
        h.update(b"\0")
    return h.hexdigest()[:20]


@lru_cache(maxsize=1)
def _legacy_props_options() -> list:
    """``-I`` the include folder that gives cudaDeviceProp back CUDA 12's fields (legacy_props.py)."""
    folder = legacy_include(cuda_home() / "include", cache_dir())
    return ["-I", str(folder)] if folder else []


@lru_cache(maxsize=1)
def shim_library() -> Path:
    """Build (once) and return the static library ``libcudart_cudalab.a``."""
    src = b"".join(f.read_bytes() for f in sorted(SHIM_DIR.glob("*.c")))
    generated = shimgen.shim_sources(cuda_home() / "include")   # errors.inc, fallbacks.inc
    out = cache_dir() / f"shim-{_digest(src, *generated.values(), cuda_home(), *_legacy_props_options())}"
    lib = out / "libcudart_cudalab.a"
    if lib.exists():
        return lib
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    for name, text in generated.items():
        (tmp / name).write_text(text)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise CompileError("no C compiler found: cudalab builds its CUDA runtime with the system's cc/gcc "
                           "(on Debian/Ubuntu: apt install build-essential).")
    cmd = [cc, "-std=gnu11", "-O2", "-fPIC", "-Wall", "-DCUDALAB_RUNTIME_SHIM", "-I", str(tmp), *_legacy_props_options(),
           "-I", str(cuda_home() / "include"),
           "-c", str(SHIM_DIR / "cudart.c"), "-o", str(tmp / "cudart.o")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise CompileError(f"building cudalab's CUDA runtime failed:\n{r.stderr}", r.stderr)
    subprocess.run(["ar", "rcs", str(tmp / lib.name), str(tmp / "cudart.o")], check=True)
    # the driver a program may dlopen (CCCL's cuda::stream, cuda::launch; a program that dlsyms cu* functions):
    # shim/libcuda.c and a trampoline for each driver symbol cudart.o defines, found by RUNPATH
    exports = _driver_exports(tmp / "cudart.o", tmp)
    r = subprocess.run([cc, "-O2", "-fPIC", "-shared", "-Wl,-soname,libcuda.so.1", "-I", str(tmp),
                        "-I", str(cuda_home() / "include"), str(SHIM_DIR / "libcuda.c"), *exports,
                        "-o", str(tmp / "libcuda.so.1")], capture_output=True, text=True)
    if r.returncode:
        raise CompileError(f"building cudalab's CUDA driver stand-in failed:\n{r.stderr}", r.stderr)
    # what programs export to it
    (tmp / "driver.list").write_text("{ cudalab_driver_entry_point; cudalab_driver_symbol; };\n")
    publish(tmp, out)
    return lib


def _nvrtc_link(options: list) -> list:
    """Link options for ``-lnvrtc``: NVIDIA's own NVRTC, from the nvidia-cuda-nvrtc wheel (the emulator's front
    end too), found at run time by RUNPATH. The wheel ships only ``libnvrtc.so.13``, so a folder of the cache
    holds the ``libnvrtc.so`` the linker looks for."""
    if not any(o in ("-lnvrtc", "-lnvrtc_static") for o in options):
        return []
    found = sorted((cuda_home() / "lib").glob("libnvrtc.so.*"))
    if not found:
        raise CompileError("the program links NVRTC (-lnvrtc), which comes with the nvidia-cuda-nvrtc wheel: "
                           "pip install nvidia-cuda-nvrtc")
    folder = cache_dir() / "nvrtc-link"
    folder.mkdir(parents=True, exist_ok=True)
    link_name = folder / "libnvrtc.so"
    if not link_name.exists() or link_name.resolve() != found[0].resolve():
        tmp = folder / f"libnvrtc.so.{os.getpid()}"
        tmp.unlink(missing_ok=True)
        tmp.symlink_to(found[0])
        tmp.replace(link_name)
    return ["-L", str(folder), "-lnvrtc", "-Xlinker", f"-rpath={found[0].parent}", "-ldl"]


def _driver_exports(shim_object: Path, folder: Path) -> list:
    """libcuda_exports.inc (the symbols) and, on x86-64 and AArch64, libcuda_exports.S: one trampoline per
    driver symbol the shim's object defines (nm), jumping through libcuda.c's cudalab_slots. Returns the
    assembler file to build with libcuda.c (none elsewhere: such a driver then only answers cuGetProcAddress)."""
    import platform
    from .shimgen import SAME_ABI_OLD_NAMES
    nm = shutil.which("nm")
    r = subprocess.run([nm, "--defined-only", str(shim_object)], capture_output=True, text=True) if nm else None
    defined = set(re.findall(r"^\w+ [TW] (cu[A-Z]\w*)$", r.stdout, re.M)) if r and not r.returncode else set()
    # the older symbols of versioned functions (cuMemAlloc of cuMemAlloc_v2) are exported too, as NVIDIA's
    # driver keeps them: a program that looks them all up and uses a few (matrixMulDynlinkJIT) finds them; those
    # of the same arguments are the function (SAME_ABI_OLD_NAMES), the others answer CUDA_ERROR_NOT_SUPPORTED
    older = {f"{m.group(1)}{'' if k == 1 else f'_v{k}'}" for s in defined if (m := re.match(r"(cu\w+)_v(\d)$", s))
             for k in range(1, int(m.group(2)))}
    symbols = sorted(defined | older | set(SAME_ABI_OLD_NAMES)) if defined else []
    symbols = [s for s in symbols if not s.startswith("cuGetProcAddress")]      # libcuda.c's own
    machine = platform.machine()
    if machine not in ("x86_64", "aarch64"):
        symbols = []
    (folder / "libcuda_exports.inc").write_text(
        "static const char *const EXPORTS[] = {" + "".join(f'"{s}", ' for s in symbols) + "NULL};\n")
    if not symbols:
        return []
    lines = ["    .text"]
    for k, sym in enumerate(symbols):
        lines += [f"    .globl {sym}", f"    .type {sym}, @function", f"{sym}:"]
        if machine == "x86_64":
            lines.append(f"    jmp *cudalab_slots+{8 * k}(%rip)")
        else:
            lines += [f"    adrp x16, cudalab_slots+{8 * k}", f"    ldr x16, [x16, #:lo12:cudalab_slots+{8 * k}]",
                      "    br x16"]
    lines.append('    .section .note.GNU-stack,"",@progbits')
    (folder / "libcuda_exports.S").write_text("\n".join(lines) + "\n")
    return [str(folder / "libcuda_exports.S")]


def _driver_link(lib: Path) -> list:
    """Link options that let the program's dlopen("libcuda.so.1") find cudalab's (shim/libcuda.c) before a
    system driver, and let that library reach the shim's driver entry points in the program."""
    # (--dynamic-list, not the newer --export-dynamic-symbol: binutils before 2.35 lack the latter)
    # (-u: a program that reaches the driver only through dlopen, calling nothing of the shim, links it all the same)
    return ["-Xlinker", f"-rpath={lib.parent}", "-Xlinker", f"--dynamic-list={lib.parent / 'driver.list'}",
            "-Xlinker", "--undefined=cudalab_driver_entry_point"]


@dataclass
class BuiltProgram:
    executable: Path
    ptx: str                                         # every .cu file's PTX, linked into one module
    registers: dict = field(default_factory=dict)    # mangled kernel name -> registers per thread (ptxas)
    log: str = ""
    notes: str = ""                                  # what the student should know before it runs (unlinked_libraries)


@dataclass
class Unit:
    """One compiled translation unit: its object file, its PTX (None for host-only .cpp/.c) and log."""

    key: str
    obj: Path
    ptx: str | None
    log: str


def emulator_arch(cmd: NvccCommand) -> str:
    """The one target the emulator builds for, as the driver would pick from a GPU's fat binary:
    the newest architecture asked for that the emulated device (``cudalab.set_device``) can run,
    its own compute capability when none was asked for (nvcc's ``-arch=native``), and the oldest one
    asked for when all are newer than the device (the emulator runs the PTX all the same). A course
    written for a Kepler or a Volta (``-arch=sm_35``, ``sm_70``) asks for what this nvcc no longer
    builds: such architectures count as not asked for, so the program is built for the device, as
    ``--device gpu`` builds it (``without_archs_before``) and as a driver JITs old PTX for the GPU at
    hand. (Built for sm_75 on the A100 profile, COM4521's tiled matmul used 56 registers, not the 32
    of sm_80, and cudaOccupancyMaxPotentialBlockSize chose 576 threads where an H200 chose 1024.)"""
    from ..device import current
    major, minor = current().cc
    device = major * 10 + minor
    asked = sorted({a for a in cmd.archs if int(re.match(r"\d+", a).group()) >= oldest_arch()},
                   key=lambda a: int(re.match(r"\d+", a).group()))
    if not asked:
        return f"sm_{max(device, oldest_arch())}"
    fitting = [a for a in asked if int(re.match(r"\d+", a).group()) <= device]
    chosen = fitting[-1] if fitting else asked[0]
    return f"sm_{chosen}"


@lru_cache(maxsize=1)
def oldest_arch() -> int:
    """The oldest architecture this nvcc builds for (75 for CUDA 13), from ``nvcc --list-gpu-arch``."""
    r = _nvcc_run(["--list-gpu-arch"], None)
    return min((int(a) for a in re.findall(r"compute_(\d+)", r.stdout)), default=75)


_UNDEFINED = re.compile(r"undefined reference to `([^'`]+)'")
_NO_LIBRARY = re.compile(r"cannot find -l([^\s:]+)")
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_REGS = re.compile(r"Used (\d+) registers")
# what a library's missing functions are (the longest prefix names them: cublasLt before cublas); cudalab
# computes cuBLAS (v2 and legacy), cuBLASLt, cuRAND's host API, cuFFT and cuSPARSE itself, so what is missing of
# those is the rest
_LIBRARIES = {"cublasLt": "cuBLASLt", "cublasXt": "cuBLASXt beyond its gemm", "cublas": "cuBLAS", "cufftXt": "cuFFT's multi-GPU and callback API (cufftXt)", "cufft": "cuFFT",
              "curand": "cuRAND (its host API)",
              "cusparse": "cuSPARSE", "cusolver": "cuSOLVER", "npp": "NPP", "nvjpeg": "nvJPEG",
              "nvrtc": "NVRTC", "cuda": "the CUDA driver API (cu* calls)", "nvidia-ml": "NVML",
              "nvToolsExt": "NVTX"}
# those whose functions all begin with the library's name (the driver's, with cu + a capital)
_BY_PREFIX = ("cublas", "cublasLt", "cufft", "curand", "cusparse", "cusolver", "npp", "nvjpeg", "nvrtc", "cuda")


def _registers(log: str) -> dict:
    regs, current = {}, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = m.group(1)
        elif (m := _REGS.search(line)) and current:
            regs[current] = int(m.group(1))
            current = None
    return regs


_NO_RESOURCE_USAGE = "Resource usage is not shown as the final resource allocation is not done"


def _student_log(log: str, workdir: Path | None = None, shown: str = "", line_offset: int = 0) -> str:
    """nvcc's messages without ptxas's resource lines (and nvcc's warning that -rdc=true has none:
    cudalab asked for them, not the student), cudalab's own folders, and cell lines shifted back."""
    log = "\n".join(l for l in log.splitlines() if not l.startswith(("ptxas info", "    "))
                    and _NO_RESOURCE_USAGE not in l)
    if workdir is not None:
        log = log.replace(str(workdir) + "/", "")
    if line_offset:
        log = re.sub(rf"{re.escape(shown)}\((\d+)\)", lambda m: f"{shown}({int(m.group(1)) - line_offset})", log)
    return log.strip()


def _nvcc_run(args, cwd) -> subprocess.CompletedProcess:
    """nvcc's messages, as text whatever the source's encoding: a warning quotes the source line, and a
    course written on a Chinese or Russian Windows (GBK, CP1251 comments and strings) is not UTF-8."""
    return subprocess.run([nvcc(), *args], capture_output=True, text=True, errors="replace", cwd=cwd)


def _own_headers(deps_file: Path, cwd: Path) -> dict:
    """{path: content digest} of the files a unit included, less the compiler's and the system's."""
    if not deps_file.exists():
        return {}
    text = deps_file.read_text().replace("\\\n", " ")
    rule = text.split(": ", 1)[1] if ": " in text else ""
    # make's syntax: a space in a file name is escaped ("02\ matmul.cu")
    paths = [re.sub(r"\\(.)", r"\1", w) for w in re.findall(r"(?:\\.|[^\s\\])+", rule)]
    skip = (str(cuda_home()), "/usr/", str(cuda_home().resolve()))
    found = {}
    for p in paths:
        full = (cwd / p).resolve()
        if not str(full).startswith(skip) and not p.startswith(skip):
            found[str(full)] = _digest(full.read_bytes())
    return found


def _fresh(manifest: Path) -> bool:
    try:
        recorded = json.loads(manifest.read_text())
        return all(_digest(Path(p).read_bytes()) == h for p, h in recorded.items())
    except (OSError, ValueError):
        return False


_LEGACY_CALL = re.compile(r"\b(cudaThread\w+|cudaMemAdvise|cudaMemPrefetchAsync|cudaGraph(Add|Remove)Dependencies|"
                          r"cudaGraphGetEdges|cudaGraphNodeGetDepende\w+|cudaGraphAddNode|cudaStreamGetCaptureInfo\w*|"
                          r"cudaStreamUpdateCaptureDependencies)\s*\(")
_RUNTIME_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](cuda_runtime|cuda_runtime_api|cuda)\.h[>"]', re.M)


def _sees_the_runtime(path: Path, cmd: NvccCommand) -> bool:
    """Whether a unit gets legacy.h (which includes cuda_runtime_api.h): every CUDA unit, as nvcc gives
    each the runtime's headers, but a host-only .cpp or .c file only when it includes them itself. nvcc
    hands such a file to the host compiler as it is, and some declare their own stand-ins for the CUDA
    names they use without a GPU (the CUDA Handbook's chCUDA.h under NO_CUDA: `typedef int cudaError_t`)."""
    opts = cmd.compile_options
    if path.suffix == ".cu" or any(a == "-x" and b == "cu" for a, b in zip(opts, opts[1:])):
        return True
    text = path.read_text(errors="replace")
    # and only when it calls what legacy.h gives back: included first, the runtime's header changes what the
    # file's own headers see (cuda-samples' helper_cuda.h declares its cudaError_t overload only then, and
    # binomialOptions_nvrtc's driver-API checks then pick it and stop the build)
    return bool(_RUNTIME_INCLUDE.search(text)) and bool(_LEGACY_CALL.search(text))


def compile_unit(source: str, cmd: NvccCommand, arch: str, cwd: Path) -> Unit:
    """Compile one source file where it lies (``nvcc -c``, or ``-dc`` for relocatable device code)."""
    path = (cwd / source).resolve()
    if not path.exists():
        raise CompileError(f"{source}: no such file (looked in {cwd})")
    debug = "-G" in cmd.compile_options
    legacy = ["-include", str(LEGACY)] if _sees_the_runtime(path, cmd) else []
    # cudalab's front for curand_kernel.h first (frontend/curand: XORWOW's skip-ahead run natively)
    options = ["-I", CURAND_FRONT, *_without_other_toolkits(cmd.compile_options, cwd),
               *([] if debug else ["-lineinfo"]), f"-arch={arch}", *legacy, *_legacy_props_options()]
    key = _digest("unit", path, cwd, tuple(options), cmd.rdc, cuda_home())
    out = cache_dir() / "units" / key
    if _fresh(out / "headers.json"):
        return _unit(key, out)
    work = out.with_name(out.name + f".tmp{os.getpid()}.{id(cmd)}")
    keep = work / "keep"
    keep.mkdir(parents=True, exist_ok=True)
    unit_source, built_as_int_main = source, False

    def compile_with(options):
        return _nvcc_run(["-dc" if cmd.rdc else "-c", *options, "--resource-usage", "--keep", "--keep-dir",
                          str(keep), "-MD", "-MF", str(work / "deps.d"), "-o", str(work / "unit.o"), unit_source], cwd)

    r = compile_with(options)
    case_notes, headers, included, removed = "", out.with_name(out.name + ".headers"), {}, []
    project_folders, std_floats, without_windows = None, [], None
    while r.returncode:
        # Windows' habits, each met only once the one before it is passed (a header's name stops the
        # preprocessor before g++ sees main), so they are tried in turn until none is left
        log = r.stdout + r.stderr
        if not built_as_int_main and void_main.REFUSED.search(log):
            # a Visual Studio program's void main(): built (here and in the tries below) from a copy that says
            # int main, as MSVC builds it; the original's folder comes first on the include path, so the
            # "header.h" beside it are found as before (the copy stays beside the cache entry, which its digest
            # keeps fresh)
            options = [f"-I{path.parent}", *options]
            unit_source = str(void_main.int_main_copy(path, out.with_name(out.name + ".int_main")))
            built_as_int_main = True
        elif found := include_case.found_in_another_case(log, cwd, headers):
            # a header included in another case than its file's, as Windows finds it: through a folder of
            # links under the program's spelling, searched after the includer's own folder
            include_case.link(*found, headers)
            if not case_notes:
                options = [f"-I{headers}", *options]
            case_notes += include_case.note(*found)
        elif not included and (included := msvc_headers.headers_for(log)):
            # a standard header Visual Studio's own headers bring in (ceil with only <iostream>)
            options = [*msvc_headers.options(included), *options]
        elif not removed and (removed := removed_headers.named(log)):
            # a header old toolkits had (sm_11_atomic_functions.h, which NVIDIA's cuPrintf.cu includes)
            options = [*options, *removed_headers.options()]
        elif not project_folders and (project_folders := vs_includes.folders_for(log, cwd)):
            # a header in a folder the Visual Studio project beside the includer lists (../../Common)
            options = [*options, *vs_includes.options(project_folders[1])]
        elif not std_floats and (std_floats := std_float_math.names(log)):
            # std::sqrtf, which Visual Studio's <cmath> has and g++ 12's does not (shim/std_float_math.h)
            options = [*options, *std_float_math.options()]
        elif without_windows is None and windows_header.missing(log):
            # <windows.h> included by habit: an empty one (shim/windows/); kept only if the unit then builds
            without_windows, options = (r, options), [*options, *windows_header.options()]
        else:
            break
        r = compile_with(options)
    if without_windows is not None and r.returncode:
        r, options = without_windows    # it calls the Win32 API (or stops for another cause): nvcc's first stop
    if r.returncode and _OLD_DIALECT.search(r.stdout + r.stderr):
        options = cpp17(options)          # and so for the tries below (a workshop's -std=c++11 Thrust lambda)
        r = compile_with(options)
    string_macro = False
    if r.returncode and _STRING_MACRO.search(r.stdout + r.stderr):
        # "[%s:%d] "msg: a macro's parameter right after a string literal, which C++11 made one token (a
        # literal with the suffix msg), so the parameter is never replaced (Parboil's and the Illinois labs'
        # FATAL macro); built as C++03, the dialect nvcc compiled such labs in, if the rest of the unit allows
        again = compile_with(cpp03(options))
        if not again.returncode:
            r, options, string_macro = again, cpp03(options), True
    if r.returncode and _THRUST_NOT_INCLUDED.search(r.stdout + r.stderr):
        # Thrust's headers up to CUDA 12 brought in thrust::pair and thrust::tuple with every container
        # and algorithm, and most algorithms and fancy iterators with each other; CUDA 13's (CCCL 3) no
        # longer do, and a book's unique_by_key_copy result, a workshop's counting_iterator and a
        # homework's remove_copy_if stop there
        again = compile_with([*options, *THRUST_AS_CUDA_12_INCLUDED])
        r = again if not again.returncode else r
    if r.returncode and _EXTENDED_LAMBDA.search(r.stdout + r.stderr):
        # a __device__ lambda (thrust::transform(..., [] __device__ (float x) {...})) from a course whose build
        # line is lost or never had the flag: built with it, and the student told what nvcc needs
        again = compile_with([*options, "--extended-lambda"])
        if not again.returncode:
            r = again
            r.stdout = extended_lambda_note(path) + r.stdout
    if r.returncode and MDSPAN_CONVERSION.search(r.stdout + r.stderr):
        # an mdspan of size_t extents passed where one of int extents is taken: implicit in CUDA 12's C++17
        # libcu++, explicit in CUDA 13's (cccl_compat.py); NVIDIA's CUDA C++ tutorial does it in ten lessons
        # (with --extended-lambda too when the unit also lacked it: that retry above failed here)
        lambdas = _EXTENDED_LAMBDA.search(r.stdout + r.stderr) is not None
        folder = implicit_mdspan_include(cuda_home() / "include" / "cccl", cache_dir())
        again = compile_with([f"-I{folder}", *options, *(["--extended-lambda"] if lambdas else [])]) if folder else r
        if not again.returncode:
            r = again
            r.stdout = mdspan_note(path) + (extended_lambda_note(path) if lambdas else "") + r.stdout
    old_apis = []       # the legacy headers (shim/legacy_*.h) the unit was built over: the student is told
    if r.returncode and _VOTE_WITHOUT_SYNC.search(r.stdout + r.stderr):
        # __any, __all and __ballot of CUDA 8 and older, whose PTX ptxas refuses for compute 7.0 and up
        # (shim/legacy_votes.h): built again with them voting among the active threads
        again = compile_with([*options, "-include", str(LEGACY_VOTES)])
        if not again.returncode:
            r = again
            old_apis.append("votes")
    if r.returncode and LEGACY_DEVICE_FUNCTION.search(r.stdout + r.stderr):
        # mul24, umul24, mulhi, float_as_int, saturate, float2int, ... of CUDA 11 and older, which CUDA 12 dropped
        # (shim/legacy_device_functions.h): built again with each name the intrinsic it stood for
        again = compile_with([*options, "-include", str(LEGACY_DEVICE_FUNCTIONS)])
        if not again.returncode:
            r, options = again, [*options, "-include", str(LEGACY_DEVICE_FUNCTIONS)]
            old_apis.append("device functions")
    if r.returncode and LEGACY_CUFFT_RESULT.search(r.stdout + r.stderr):
        # CUFFT_INCOMPLETE_PARAMETER_LIST, CUFFT_PARSE_ERROR and CUFFT_LICENSE_ERROR, which CUDA 13's cuFFT
        # dropped and the helper_cuda.h courses copied from CUDA 12's samples still names (shim/legacy_cufft.h)
        again = compile_with([*options, "-include", str(LEGACY_CUFFT)])
        if not again.returncode:
            r, options = again, [*options, "-include", str(LEGACY_CUFFT)]
            old_apis.append("cufft codes")
    if r.returncode and _TEXTURE_REFERENCE.search(r.stdout + r.stderr):
        # CUDA 11's texture and surface references, over objects (shim/legacy_textures.h); if the file still
        # does not build, what nvcc said of the references themselves is the message, with the hint below
        with_references = compile_with([*options, "-include", str(LEGACY_TEXTURES)])
        if not with_references.returncode:
            r = with_references
            old_apis.append("textures")
    if old_apis and not r.returncode:
        r.stdout = "".join(legacy_notes.note(source, kind) for kind in old_apis) + r.stdout
    if built_as_int_main and not r.returncode:
        r.stdout = void_main.note(path) + r.stdout
    if case_notes and not r.returncode:
        r.stdout = case_notes + r.stdout
    if included and not r.returncode:
        r.stdout = msvc_headers.note(source, included) + r.stdout
    if string_macro and not r.returncode:
        r.stdout = string_macro_note(path) + r.stdout
    if removed and not r.returncode:
        deps = work / "deps.d"
        named = removed_headers.used(deps.read_text(errors="replace")) if deps.exists() else []
        r.stdout = removed_headers.note(source, named or removed) + r.stdout
    if project_folders and not r.returncode:
        r.stdout = vs_includes.note(*project_folders, cwd) + r.stdout
    if std_floats and not r.returncode:
        r.stdout = std_float_math.note(source, std_floats) + r.stdout
    if without_windows is not None and not r.returncode:
        r.stdout = windows_header.note(source, work / "deps.d") + r.stdout
    log = r.stdout + r.stderr
    if r.returncode:
        asm_hint = asm_errors.hint(log, keep)       # (read before the kept PTX goes)
        shutil.rmtree(work, ignore_errors=True)
        message = _student_log(log, keep) or f"nvcc could not compile {source}"
        message += _missing_header_hint(log) + nearby_headers.hint(log, cwd) + asm_hint
        if not cmd.rdc and "Unresolved extern" in log:
            message += ("\nhint: a __device__ function or variable defined in another .cu file needs relocatable "
                        "device code: build with -rdc=true (nvcc's separate compilation).")
        if not cmd.rdc and _NESTED_LAUNCH.search(log):
            message += (f"\nhint: {path.name} launches kernels from device code (dynamic parallelism), which needs "
                        f"relocatable device code, as nvcc says on a GPU's machine too: build with -rdc=true and link "
                        f"the device runtime (nvcc -rdc=true {path.name} -lcudadevrt).")
        if _DEVICE_SYNC.search(log):
            message += ("\nhint: cudaDeviceSynchronize() in a kernel made it wait for the kernels it launched in CUDA 11 "
                        "and older; CUDA 12 removed it (on a GPU too): a parent grid cannot wait for its children. "
                        "Launch the work that needs their results into cudaStreamTailLaunch, or from the host.")
        if _TEXTURE_REFERENCE.search(log):
            message += ("\nhint: texture references (a file-scope texture<T, dim> bound with cudaBindTexture) were "
                        "removed in CUDA 12, so nvcc refuses them on a GPU too. Use a texture object: describe the "
                        "memory with cudaResourceDesc and cudaTextureDesc, make it with cudaCreateTextureObject, pass "
                        "it to the kernel and read it with tex1Dfetch<T>(obj, i) or tex2D<T>(obj, x, y).")
        raise CompileError(message, log)
    ptx = sorted(keep.glob("*.ptx"))
    if ptx:
        shutil.move(str(ptx[0]), work / "unit.ptx")
    (work / "build.log").write_text(log)
    (work / "headers.json").write_text(json.dumps({str(path): _digest(path.read_bytes()),
                                                   **_own_headers(work / "deps.d", cwd)}))
    shutil.rmtree(keep, ignore_errors=True)
    if out.exists():
        shutil.rmtree(out, ignore_errors=True)
    try:
        work.rename(out)
    except OSError:                       # another build of the same unit finished first
        shutil.rmtree(work, ignore_errors=True)
    return _unit(key, out)


def _without_other_toolkits(options: list, cwd: Path) -> list:
    """``options`` less the ``-I`` folders that hold a CUDA toolkit's own headers other than this nvcc's:
    a Makefile's ``-I/usr/local/cuda/include`` (gpu-mode's lecture 2, most samples' ``$(CUDA_PATH)``)
    means the toolkit that builds, which nvcc searches by itself; a different version's
    crt/host_runtime.h in front of this nvcc's stops the build (``__cudaLaunch`` took another number
    of arguments in CUDA 13.0)."""
    own = (cuda_home() / "include").resolve()

    def other_toolkit(folder: Path):
        return (folder / "crt" / "host_runtime.h").exists() and folder.resolve() != own
    return [o for o in options if not (o.startswith("-I") and other_toolkit(cwd / o[2:]))]


# CUDA 13's headers (Thrust, CUB, libcu++, cooperative groups) stop a unit built for C++11 or C++14
_OLD_DIALECT = re.compile(r"requires at least C\+\+ ?17")
# a string literal glued to a macro's parameter, read as a C++11 user-defined literal: cudafe's and g++'s words
_STRING_MACRO = re.compile(r"user-defined literal operator not found|unable to find string literal operator")


def cpp03(options: list) -> list:
    """``options`` with C++03 in place of any -std (nvcc's and the host compiler's)."""
    kept = [o for k, o in enumerate(options) if not re.match(r"^(-std|--std)=", o)
            and not (o in ("-std", "--std") or options[k - 1:k] in (["-std"], ["--std"]))]
    return ["-std=c++03", *kept]


def string_macro_note(source: Path) -> str:
    """What the student reads when cudalab built ``source`` as C++03 for a string literal glued to a macro
    parameter (kept in the unit's log, so a cached build says it again)."""
    return (f"cudalab: note: {source.name} puts a macro's parameter right after a string literal (\"...\"msg), which "
            f"C++11 and later read as one literal with a suffix, so the parameter is never replaced and nvcc stops at "
            f"\"user-defined literal operator not found\" (on a GPU too); cudalab built the file as C++03, the dialect "
            f"it was written in. Put a space between the literal and the name to build it with today's nvcc.\n")


# a name Thrust's headers declared for every program up to CUDA 12, which a CUDA 13 program must include itself
_THRUST_NOT_INCLUDED = re.compile(r'namespace "thrust" has no member "\w+"')
# the headers of Thrust's pairs and tuples, algorithms, function objects, fancy iterators and memory
# (not its allocators and memory resources, which programs of that time did include)
_THRUST_HEADERS = (
    "pair tuple functional memory device_ptr distance advance swap execution_policy host_vector device_vector "
    "adjacent_difference binary_search copy count equal extrema fill find for_each gather generate inner_product logical merge mismatch partition reduce remove replace reverse "
    "scan scatter sequence set_operations sort tabulate transform transform_reduce transform_scan uninitialized_copy "
    "uninitialized_fill unique random iterator/counting_iterator iterator/constant_iterator iterator/discard_iterator "
    "iterator/permutation_iterator iterator/reverse_iterator iterator/transform_iterator iterator/zip_iterator").split()
THRUST_AS_CUDA_12_INCLUDED = [w for h in _THRUST_HEADERS for w in ("-include", f"thrust/{h}.h")]


# nvcc's refusal of a __device__ or __host__ __device__ lambda without --extended-lambda, and a program's own
# #error asking for it ("please compile with --expt-extended-lambda")
_EXTENDED_LAMBDA = re.compile(r"annotation on lambda requires --extended-lambda|#error[^\n]*--?(expt-)?extended-lambda")


def extended_lambda_note(source: Path) -> str:
    """What the student should know when cudalab built ``source`` with ``--extended-lambda`` that its
    command lacks: nvcc (on a GPU's machine too) stops at its ``__device__`` lambdas without it. Kept in
    the unit's log, so a cached build says it again (``lambda_notes``)."""
    return (f"cudalab: note: {source.name} has __device__ lambdas, which nvcc compiles only with --extended-lambda; "
            f"cudalab added it, but nvcc without it stops at \"annotation on lambda requires --extended-lambda\". "
            f"Add --extended-lambda to the nvcc command (in a notebook: %%cuda --compiler-args=\"--extended-lambda\").\n")


def lambda_notes(units: list) -> str:
    """The notes of the units a program was linked from (extended lambdas, void main, file names in
    another case, headers Visual Studio's bring in, mdspan, headers old toolkits had, a Visual Studio project's
    include folders), once each: every ``cudalab: note:`` line a unit's build put in its log."""
    return "".join(dict.fromkeys(line + "\n" for u in units for line in u.log.splitlines()
                                 if line.startswith("cudalab: note:")))


def cpp17(options: list) -> list:
    """``options`` with C++17 for an older -std (nvcc's and the host compiler's): a course written
    when nvcc's default was C++11 (``-std=c++11`` for cooperative groups) builds as CUDA 13's own
    headers require, instead of stopping at their #error."""
    return [re.sub(r"^((?:-std|--std)=)?(c|gnu)\+\+(98|03|0x|11|1y|14)$", r"\1\2++17", o) for o in options]


def _unit(key: str, folder: Path) -> Unit:
    ptx = folder / "unit.ptx"
    return Unit(_digest(key, (folder / "headers.json").read_text()), folder / "unit.o",
                ptx.read_text() if ptx.exists() else None, (folder / "build.log").read_text())


# nvcc's refusal of a launch inside a kernel in whole-program mode (a book's nestedHelloWorld built without -rdc)
_NESTED_LAUNCH = re.compile(r"kernel launch from __device__ or __global__ functions requires separate compilation mode")
_DEVICE_SYNC = re.compile(r'function\("cudaDeviceSynchronize"\) from a __(global|device)__')
# what nvcc 12+ says of CUDA 11's texture references: the template is gone, and so are their calls
_VOTE_WITHOUT_SYNC = re.compile(r"Instruction 'vote' without '\.sync' is not supported")
# the plain names CUDA 11's device_functions.hpp gave its intrinsics, as nvcc 13 reports their use
LEGACY_CUFFT_RESULT = re.compile(r'identifier "CUFFT_(?:INCOMPLETE_PARAMETER_LIST|PARSE_ERROR|LICENSE_ERROR)" is undefined')
LEGACY_DEVICE_FUNCTION = re.compile(r'identifier "(?:u?mul24|mulhi|mul64hi|float_as_u?int|u?int_as_float|saturate|'
                                    r'float2u?int|u?int2float)" is undefined')
_TEXTURE_REFERENCE = re.compile(r'\b(texture|surface) is not a template|'
                                r'identifier "cuda(Un)?Bind(Texture|Surface)(2D|ToArray)?" is undefined')
_NO_HEADER = re.compile(r"fatal error: ([\w./+-]+): No such file|cannot open source file \"([\w./+-]+)\"")
_WINDOWS_API = ("Windows (the Win32 API: Sleep, QueryPerformanceCounter, SetConsoleOutputCP, ...), which Linux, a GPU's "
                "Linux machine and cudalab lack; cudalab tried the file with an empty one and it still stopped (it calls "
                "some of the API, or stops further on): use <chrono> and <thread> (std::this_thread::sleep_for) for "
                "Windows' clocks and Sleep, and delete the line")
_HEADER_WHEELS = {"curand": "nvidia-curand (cuRAND's host and device APIs): pip install 'cudalab[curand]'",
                  "cuda_profiler_api": "nvidia-cuda-profiler-api: pip install nvidia-cuda-profiler-api",
                  "cudaProfiler": "nvidia-cuda-profiler-api: pip install nvidia-cuda-profiler-api",
                  "nvtx3/": "nvidia-nvtx: pip install nvidia-nvtx",
                  "helper_": "NVIDIA's cuda-samples (its Common folder), not with the toolkit: get them with "
                             "git clone https://github.com/NVIDIA/cuda-samples and build with -I cuda-samples/Common",
                  "cutil": "the GPU Computing SDK of CUDA 4 and older, which is gone: use your own error checks "
                           "(or cuda-samples' helper_cuda.h and checkCudaErrors)",
                  "cublasLt": "nvidia-cublas (cuBLASLt's header; cudalab computes its matmul): pip install 'cudalab[cublas]'",
                  "cublasXt": "nvidia-cublas (cuBLASXt's header; cudalab computes its gemm): "
                              "pip install 'cudalab[cublas]'",
                  "cublas": "nvidia-cublas (cuBLAS's headers; cudalab computes its routines): pip install 'cudalab[cublas]'",
                  "cufftXt": "cuFFT's multi-GPU and callback API (cufftXt), which cudalab does not emulate",
                  "cufft": "nvidia-cufft (cuFFT's headers; cudalab computes its transforms): pip install 'cudalab[cufft]'",
                  "cusparse": "nvidia-cusparse (cuSPARSE's headers; cudalab computes its generic API): pip install "
                              "'cudalab[cusparse]'",
                  "npp": "NPP, which cudalab does not emulate",
                  # (a Japanese course's last lecture reads a file straight into device memory)
                  "cufile": "cuFile (GPUDirect Storage: file reads into GPU memory), which cudalab does not emulate; "
                            "run it on a real GPU whose machine has GDS (--device gpu)",
                  "cusolver": "cuSOLVER, which cudalab does not emulate", "GL/": "OpenGL, which cudalab does not emulate",
                  "mpi": "MPI, which cudalab does not provide",
                  # (a Vietnamese learner's CUTLASS GEMM and convolution, its submodule not checked out)
                  "cutlass/": "NVIDIA's CUTLASS (header-only C++ templates for GEMM and convolution), which is no "
                              "part of the toolkit: git clone https://github.com/NVIDIA/cutlass (or git submodule "
                              "update --init where a project names it) and build with -I cutlass/include "
                              "-I cutlass/tools/util/include",
                  "cute/": "NVIDIA's CUTLASS (CuTe, its layout and tensor templates), which is no part of the toolkit: "
                           "git clone https://github.com/NVIDIA/cutlass and build with -I cutlass/include",
                  # (a Russian student's Visual Studio matrix product includes it and calls only C's setlocale)
                  "windows.h": _WINDOWS_API, "Windows.h": _WINDOWS_API,
                  # (a Russian course's bilateral filter reads and shows its image with OpenCV)
                  "opencv": "OpenCV's C++ library (images in and out: cv::imread, cv::Mat), a host library cudalab does "
                            "not bring: install it (apt install libopencv-dev; pip's opencv-python has no C++ headers) "
                            "and build with `pkg-config --cflags --libs opencv4`"}


def _missing_header_hint(log: str) -> str:
    """Name the package behind a CUDA header nvcc did not find (they come from NVIDIA's pip wheels)."""
    hints = []
    for m in _NO_HEADER.finditer(log):
        header = m.group(1) or m.group(2)
        where = next((w for prefix, w in _HEADER_WHEELS.items() if header.startswith(prefix)), None)
        if where:
            hints.append(f"\nhint: {header} comes with {where}.")
    return "".join(dict.fromkeys(hints))


def _link_error(log: str) -> CompileError:
    missing = sorted({m for m in _UNDEFINED.findall(log)})
    libraries = sorted({_LIBRARIES.get(re.sub(r"\d+$", "", lib), f"lib{lib}") for lib in _NO_LIBRARY.findall(log)})
    runtime = [m for m in missing if m.startswith(("cuda", "__cuda"))]
    driver = [m for m in missing if re.match(r"cu[A-Z]", m)]
    lines = [f"cudalab does not implement {m} yet." for m in runtime]
    if runtime:
        lines.append("The program compiled, but it calls CUDA runtime functions the emulator does not provide. "
                     "Use the ones it has (cudaMalloc, cudaMemcpy, streams, events, ...) or run on a real GPU.")
    if driver:
        lines.append(f"The program calls driver API functions cudalab does not emulate ({_first(driver, 4)}): "
                     "it runs contexts, modules, launches, memory, streams, "
                     "events and textures, not graphics interop or IPC. Run it on a real GPU (--device gpu).")
    used = {max((n for n in _LIBRARIES if n != "cuda" and m.startswith(n)), key=len, default=None) for m in missing}
    for name, what in _LIBRARIES.items():
        if name in used or what in libraries:
            lines.append(f"The program uses {what}, which cudalab does not emulate; run it on a real GPU "
                         "(--device gpu).")
    graphics = [m for m in missing if re.match(r"(glut|glew|glfw|gl|egl)[A-Z]", m)]
    if graphics:    # (CUDA by Example's cpu_bitmap.h draws its images with GLUT)
        lines.append(f"The program draws with OpenGL ({_first(graphics)}), "
                     "which cudalab does not emulate, so it cannot be linked here (nor its kernels run). Run it on a "
                     "machine with a display and a GPU, linked with -lglut -lGL (--device gpu).")
    builtins = [m.removeprefix("__device_builtin_variable_") for m in missing
                if m.startswith("__device_builtin_variable_")]
    if builtins:    # (TACC's reduction lab sizes a launch with warpSize in main(): nvcc's link stops there too)
        lines.append(f"Host code reads {', '.join(builtins)}, which exist{'s' if len(builtins) == 1 else ''} only in "
                     "device code (inside a kernel or a __device__ function): nvcc compiles the line and its link "
                     f"stops the same way, at undefined reference to __device_builtin_variable_{builtins[0]}. "
                     + ("On the host, write 32, or ask the device: cudaDeviceGetAttribute(&w, cudaDevAttrWarpSize, 0) "
                        "or cudaDeviceProp's warpSize." if "warpSize" in builtins else
                        "On the host, use the values the launch was given (the dim3 grid and block)."))
    openmp = [m for m in missing if m.startswith(("omp_", "GOMP_"))]
    if openmp:      # (a Visual Studio project's /openmp, which a Linux build must ask g++ for)
        lines.append(f"The program uses OpenMP ({_first(openmp)}), which the "
                     "host compiler links only when asked: build with -Xcompiler -fopenmp, as nvcc needs it too.")
    libraries = [l for l in libraries if l not in _LIBRARIES.values()]
    if libraries:
        lines.append(f"the linker found no {', '.join(libraries)} (check -l and -L).")
    return CompileError("\n".join(dict.fromkeys(lines)) or _student_log(log) or "linking failed", log)


def _first(names: list, count: int = 3) -> str:
    """The first ``count`` of the names a link missed, for a message that must stay one line."""
    return ", ".join(names[:count]) + (", ..." if len(names) > count else "")




# the libraries whose host API the shim answers, by their functions' prefix (the longest first) and the
# name nvcc's link needs (-lcublas and -lcublas_static alike)
_SHIM_LIBRARIES = {"cublasLt": ("cuBLASLt", "cublasLt"), "cublas": ("cuBLAS", "cublas"), "cufft": ("cuFFT", "cufft"),
                   "curand": ("cuRAND", "curand"), "cusparse": ("cuSPARSE", "cusparse")}


def unlinked_libraries(objects: list, cmd: NvccCommand) -> str:
    """A note naming each library whose functions the program calls but whose ``-l`` its command lacks.
    cudalab's shim answers them all the same, but nvcc's link would stop at ``undefined reference to
    `cublasCreate_v2'``: the student learns it here, not on the first machine with a GPU. Empty where
    binutils' nm is missing (it comes with the compilers nvcc needs)."""
    nm = shutil.which("nm")
    if nm is None:
        return ""
    r = subprocess.run([nm, "-u", *map(str, objects)], capture_output=True, text=True)
    called = {}
    for symbol in re.findall(r"^\s+U (\w+)$", r.stdout, re.M):
        prefix = max((p for p in _SHIM_LIBRARIES if symbol.startswith(p)), key=len, default=None)
        if prefix:
            called.setdefault(prefix, symbol)
    linked = {o[2:].removesuffix("_static") for o in cmd.link_options if o.startswith("-l")}
    linked |= {m.group(1) for f in cmd.linked if (m := re.match(r"lib(\w+?)(_static)?\.(a|so)", Path(f).name))}
    return "".join(f"cudalab: note: the program calls {_SHIM_LIBRARIES[p][0]} ({symbol}) but its build does not "
                   f"link it: cudalab's own {_SHIM_LIBRARIES[p][0]} answers, while nvcc's link would stop at "
                   f"`undefined reference to {symbol}`. Add -l{_SHIM_LIBRARIES[p][1]} to the nvcc command (in a "
                   f"notebook: %%cuda --compiler-args=\"-l{_SHIM_LIBRARIES[p][1]}\").\n"
                   for p, symbol in called.items() if _SHIM_LIBRARIES[p][1] not in linked)


def _own_file_first(ptx: str, source: Path, cwd: Path) -> str:
    """A unit's PTX with its own source file as ``.file 1``, the file whose lines the emulator names.
    nvcc numbers files in the order their device code comes, so a header with __device__ functions
    included before the kernels (CUDA by Example's book.h) would be file 1 and its line numbers
    taken for the program's. A unit whose device code all comes from included files (a kernel in a
    .cuh) has no file 1: every line is named with its file."""
    files = re.findall(r'^\s*\.file\s+(\d+)\s+"([^"]*)"', ptx, re.M)
    own = next((int(n) for n, path in files if (cwd / path).resolve() == source.resolve()), None)
    if own == 1 or not files:
        return ptx
    if own is None:
        own = max(int(n) for n, _ in files) + 1
    swap = {own: 1, 1: own}
    return FILE_NUMBER.sub(lambda m: (m.group(1) or m.group(3)) + str(swap.get(int(m.group(2) or m.group(4)),
                                                                               m.group(2) or m.group(4))), ptx)


def build(cmd: NvccCommand, cwd=None, line_offset: int = 0) -> BuiltProgram:
    """Build a whole program for the emulator from an nvcc command line (see the module docstring)."""
    cwd = Path(cwd or os.getcwd()).resolve()
    if cmd.mode:
        raise CompileError(f"{cmd.mode} stops nvcc before a program exists; cudalab builds and runs the whole "
                           f"program, so leave {cmd.mode} out")
    if not cmd.sources:
        raise CompileError("no source files: give the program's .cu (and .cpp/.c) files")
    lib = shim_library()
    arch = emulator_arch(cmd)
    units = _compile_units(cmd, arch, cwd, line_offset)
    libraries = cuda_libraries(cmd, cwd)
    linked = [(cwd / f).resolve() for f in cmd.linked]
    key = _digest("program", *(u.key for u in units), *(_digest(f.read_bytes()) for f in linked),
                  *(_digest(f.read_bytes()) for f in libraries), tuple(cmd.link_options), cmd.rdc,
                  lib.parent.name, arch, *_driver_link(lib))
    out = cache_dir() / "programs" / key
    exe = out / "program"
    if not exe.exists():
        work = out.with_name(out.name + f".tmp{os.getpid()}.{id(cmd)}")
        work.mkdir(parents=True, exist_ok=True)
        objects = [str(u.obj) for u in units] + [str(f) for f in linked]
        if cmd.rdc:
            nvlink = [o for k, o in enumerate(cmd.link_options) if o.startswith("-L")
                      or (k and cmd.link_options[k - 1] == "-Xnvlink") or o == "-Xnvlink"]
            r = _nvcc_run(["-dlink", f"-arch={arch}", *nvlink, *objects, "-o", str(work / "dlink.o")], cwd)
            if r.returncode:
                shutil.rmtree(work, ignore_errors=True)
                raise CompileError(_student_log(r.stdout + r.stderr) or "the device link failed", r.stdout + r.stderr)
            objects.append(str(work / "dlink.o"))
        devrt = ["-lcudadevrt"] if cmd.rdc else []       # registers the device runtime's module, as nvcc links it
        own = own_link_options(cmd)
        # a CUDA library cudalab built (-shared) is found at run time where the link found it, without LD_LIBRARY_PATH
        rpaths = [f"-Xlinker=-rpath={d}" for d in dict.fromkeys(str(f.parent) for f in libraries)]
        r = _nvcc_run([f"-arch={arch}", "-cudart", "none", *objects, *own, *_nvrtc_link(cmd.link_options), str(lib),
                       *devrt, *_driver_link(lib), *rpaths,
                       "-o", str(work / "program")], cwd)
        if r.returncode:
            shutil.rmtree(work, ignore_errors=True)
            log = r.stdout + r.stderr
            # a function of the program's own that a file left out of the build defines (missing_definitions.py)
            raise CompileError(str(_link_error(log)) + missing_definitions.hint(
                _UNDEFINED.findall(log), cmd.sources, cwd, cmd.output), log)
        try:
            ptx = link([_own_file_first(u.ptx, cwd / s, cwd) for s, u in zip(cmd.sources, units) if u.ptx]
                       + [images.recorded(f.read_bytes()) for f in libraries])
        except PtxLinkError as e:
            raise CompileError(f"cudalab could not join the program's PTX modules: {e}") from None
        (work / "program.ptx").write_text(ptx)
        (work / "build.log").write_text("\n".join(u.log for u in units))
        (work / "notes.txt").write_text(lambda_notes(units) + unlinked_libraries(objects, cmd))
        publish(work, out)
    log = (out / "build.log").read_text()
    notes = out / "notes.txt"
    return BuiltProgram(exe, (out / "program.ptx").read_text(), _registers(log), log,
                        notes.read_text() if notes.exists() else "")


def own_link_options(cmd: NvccCommand) -> list:
    """The link options of ``cmd`` left to the linker, less the libraries cudalab stands in for.
    -lcudart in a Makefile names NVIDIA's runtime, which cudalab's own (the shim) stands in for, and so
    do -lcublas, -lcurand, -lcufft and -lcusparse: the shim answers their host APIs (shim/cublas.c,
    curand.c, cufft.c, cusparse.c). A library it does not emulate may be linked by a Makefile's LIB := -lcusolver ...
    for every program of a folder: a program that calls none of it links without it, one that does stops at its
    undefined names, which _link_error explains. -lcuda: the driver API is the shim's too (shim/driver*.c);
    -lnvrtc is NVIDIA's NVRTC (_nvrtc_link). -lnvToolsExt: NVTX 2's library, which CUDA 13 no longer ships; its
    calls are NVTX 3's headers now (legacy_props.NVTX2_HEADERS), which need no library."""
    return [o for o in cmd.link_options if o not in SHIMMED and o != "-lnvToolsExt"
            and not (o.startswith("-l") and o[2:] in _BY_PREFIX)]


def _compile_units(cmd: NvccCommand, arch: str, cwd: Path, line_offset: int = 0) -> list:
    """Every source file of ``cmd`` compiled (a few at a time, at most one an allowed core: a container's
    CPU quota, mybinder's 2 CPUs on a 64-core host, as the emulator's batches count them), in order."""
    from ..emulator.parallel import cores
    workers = min(len(cmd.sources), max(1, min(4, cores())))
    with ThreadPoolExecutor(workers) as pool:
        jobs = [pool.submit(compile_unit, s, cmd, arch, cwd) for s in cmd.sources]
        try:
            return [j.result() for j in jobs]
        except CompileError as e:
            if line_offset:
                e.args = (_student_log(str(e), None, Path(cmd.sources[0]).name, line_offset), *e.args[1:])
            raise


def build_library(cmd: NvccCommand, cwd=None) -> Path:
    """``nvcc -shared -Xcompiler -fPIC -o libcumessage.so cumessage.cu``, for the emulator: the library nvcc
    would make, its runtime calls and kernel registrations left to the program's runtime (cudalab's shim,
    which every program links) instead of a copy of NVIDIA's runtime inside it, and its kernels' PTX kept
    under the library's SHA-256 (``images.record``). A program that links it (``-L. -lcumessage``, or the
    .so named) joins that PTX to its own (``cuda_libraries``), so the library's kernels register and run
    as the program's (Princeton's GPU primer builds its hello-world library so). Returns the library."""
    cwd = Path(cwd or os.getcwd()).resolve()
    if not cmd.sources:
        raise CompileError("-shared: no source files to build the library from: give its .cu (and .cpp/.c) files")
    if "-fPIC" not in cmd.compile_options:      # a shared library's objects are position-independent
        cmd = replace(cmd, compile_options=[*cmd.compile_options, "-Xcompiler", "-fPIC"])
    arch = emulator_arch(cmd)
    units = _compile_units(cmd, arch, cwd)
    out = cwd / (cmd.output or "a.out")
    own = own_link_options(cmd)
    r = _nvcc_run(["-shared", f"-arch={arch}", "-cudart", "none", *(str(u.obj) for u in units),
                   *cmd.linked, *own, "-o", str(out)], cwd)
    if r.returncode:
        raise _link_error(r.stdout + r.stderr)
    ptx = [_own_file_first(u.ptx, cwd / s, cwd) for s, u in zip(cmd.sources, units) if u.ptx]
    if ptx:
        try:
            images.record(out.read_bytes(), link(ptx))
        except PtxLinkError as e:
            raise CompileError(f"cudalab could not join the library's PTX modules: {e}") from None
    return out


def cuda_libraries(cmd: NvccCommand, cwd: Path) -> list:
    """The shared libraries a program's link names (``-L. -lcumessage``, or ``libcumessage.so`` itself) that
    hold CUDA code built by cudalab (``build_library``: their PTX is recorded). One that holds kernels of
    NVIDIA's nvcc instead would register them with a runtime of its own: CompileError saying how to build it."""
    folders = [cwd / o[2:] for o in cmd.link_options if o.startswith("-L")]
    found = [(cwd / f).resolve() for f in cmd.linked if re.search(r"\.so(\.\d+)*$", f)]
    for o in own_link_options(cmd):
        if o.startswith("-l"):
            found += [p.resolve() for d in folders if (p := d / f"lib{o[2:]}.so").is_file()][:1]
    libraries = []
    for f in dict.fromkeys(found):
        data = f.read_bytes()
        if images.recorded(data) is not None:
            libraries.append(f)
        elif b".nv_fatbin" in data:
            raise CompileError(f"{f.name} holds CUDA kernels built by NVIDIA's nvcc with its own CUDA runtime, which "
                               "cudalab's emulator cannot register. Build the library for cudalab with the same "
                               f"command through cudalab: `cudalab run -shared ... -o {f.name} FILES.cu` (or "
                               "`cudalab nvcc -shared ...`).")
    return libraries


def source_folder(source: str, filename: str) -> Path:
    """A folder of cudalab's cache holding ``source`` as ``filename`` (programs given as text)."""
    folder = cache_dir() / "sources" / _digest(source, filename)
    path = folder / filename
    if not path.exists() or path.read_text() != source:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".{filename}.{os.getpid()}"
        tmp.write_text(source)
        tmp.replace(path)
    return folder


def build_program(source: str, filename: str = "program.cu", options=(), line_offset: int = 0) -> BuiltProgram:
    """Compile a whole CUDA program given as text (a notebook cell) for the emulator; raises
    CompileError with nvcc's messages, cell lines shifted back by ``line_offset`` (the lines cudalab
    put before the student's first line)."""
    name = Path(filename).name if filename.endswith(".cu") else "program.cu"
    folder = source_folder(source, name)
    return build(parse_nvcc([*options, name]), folder, line_offset)
