"""CUDA C++ -> PTX with NVRTC from NVIDIA's pip wheels (no GPU, no driver, no system CUDA needed).

Why NVRTC: it is NVIDIA's own C++ front end, so templates, C++17, ``cuda_fp16.h``, cooperative
groups and the compiler's real diagnostics come for free; ``-lineinfo`` gives the ``.loc`` line
table that maps every PTX instruction back to the student's source line.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache

from ..errors import CompileError

DEFAULT_ARCH = "compute_80"
_KERNEL_RE = re.compile(r"__global__")


@dataclass(frozen=True)
class CompiledSource:
    """What a front-end hands on: PTX plus the names a student uses for its kernels."""

    source: str
    ptx: str
    options: tuple
    log: str
    lowered: dict = field(default_factory=dict)   # C++ name expression -> mangled PTX name
    filename: str = "cell.cu"


# cudalab's front for cuRAND's curand_kernel.h (which it includes from the folders after it): searched
# first, by NVRTC here and by nvcc in the emulator's program builds (programs/build.py)
CURAND_FRONT = os.path.join(os.path.dirname(__file__), "curand")


@lru_cache(maxsize=1)
def include_dirs() -> tuple:
    """Header folders shipped in the nvidia-cuda-runtime and nvidia-cuda-cccl wheels, after cudalab's
    front for curand_kernel.h (XORWOW's skip-ahead as one call the emulator runs natively)."""
    dirs = [CURAND_FRONT]
    try:
        import nvidia
        for base in nvidia.__path__:
            for sub in ("cu13/include", "cu13/include/cccl", "cuda_runtime/include", "cuda_cccl/include"):
                p = os.path.join(base, sub)
                if os.path.isdir(p):
                    dirs.append(p)
    except ImportError:
        pass
    if not any(os.path.isdir(os.path.join(d, "nv")) for d in dirs):
        # no nvidia-cuda-cccl wheel: a CUDA toolkit's own copy of libcu++ (nv/target, cuda/std) will do
        home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
        for sub in ("include/cccl", "include"):
            p = os.path.join(home, sub)
            if os.path.isdir(os.path.join(p, "nv")):
                dirs.append(p)
                break
    shim = os.path.join(os.path.dirname(__file__), "include")
    dirs.append(shim)
    return tuple(dirs)


def _name_expressions(source: str, extra=()) -> list:
    """Kernel names to ask NVRTC to lower: plain ``__global__`` functions found in the text.

    Templates need their instantiation spelled out (``mm<16>``); students pass those as
    ``name_expressions`` or by calling ``get_kernel("mm<16>")``, which recompiles with it.
    """
    names = []
    # `__global__ void name(` ; skip templates (preceded by `template <...>` on the same declaration)
    attr = r"(?:(?:__launch_bounds__|__cluster_dims__|__maxnreg__)\s*\([^)]*\)\s*)*"
    for m in re.finditer(r"(template\s*<[^;{]*?>\s*)?__global__\s+" + attr + r"void\s+" + attr +
                         r"([A-Za-z_]\w*)\s*\(", source):
        if not m.group(1) and not _inside_a_function(source, m.start()) and m.group(2) not in names:
            names.append(m.group(2))
    for e in extra:
        if e not in names:
            names.append(e)
    return names


_COMMENT_OR_LITERAL = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
_NAMESPACE_BLOCK = re.compile(r'(extern\s*"C(\+\+)?"|namespace(\s+[\w:]+)?)\s*$')


def _inside_a_function(source: str, at: int) -> bool:
    """True where ``at`` lies inside a function's body (a ``{`` block not opened by ``extern "C"`` or a
    namespace): a kernel declared there (``extern __global__ void inner();`` in the kernel that launches
    it, an -rdc=true module's way to name a kernel of another file) is not visible where NVRTC reads name
    expressions, which is an error; its definition, in the other file, is that module's kernel."""
    blocks = []
    code = _COMMENT_OR_LITERAL.sub(lambda m: " " * len(m.group()), source[:at])   # braces in them don't count
    for m in re.finditer(r"[{}]", code):
        if m.group() == "{":
            blocks.append(bool(_NAMESPACE_BLOCK.search(code[max(0, m.start() - 80):m.start()])))
        elif blocks:
            blocks.pop()
    return not all(blocks)


def format_diagnostics(log: str, source: str, filename: str, line_offset: int = 0) -> str:
    """Rewrite NVRTC's ``file(line): error: ...`` with the student's line numbers and the line itself."""
    lines = source.splitlines()
    out, shown = [], None
    for raw in log.splitlines():
        m = re.match(rf"{re.escape(filename)}\((\d+)\): (.*)", raw)
        if m:
            n = int(m.group(1))
            out.append(f"line {n + line_offset}: {m.group(2)}")
            shown = lines[n - 1].strip() if 1 <= n <= len(lines) else None
            if shown is not None:
                out.append(f"    {lines[n - 1].rstrip()}")
            continue
        text = raw.strip()
        # NVRTC echoes the source line and a caret under it; we already showed the line.
        if not text or text == shown or set(text) <= {"^", " "}:
            continue
        if "detected in the compilation" in raw or raw.startswith("Compilation terminated"):
            continue
        out.append(raw)
    return "\n".join(out)


# What an error means where NVRTC's words do not say it: code written for an older CUDA
_REMOVED = re.compile(r"\b(texture|surface) is not a template")


def _why(log: str) -> str:
    m = _REMOVED.search(log)
    if not m:
        return ""
    return (f"\n(`{m.group(1)}<...>` declares a {m.group(1)} reference, which CUDA 12 removed: nvcc refuses it on a "
            f"GPU too. Read the array through a {m.group(1)} object instead (cudaCreate{m.group(1).title()}Object; "
            f"cudalab emulates those), or read the array directly.)")


_CACHE: dict = {}


def _current_arch() -> str:
    """compute_XX of the device profile chosen with cudalab.set_device (A100, sm_80, by default), so
    NVRTC refuses what that GPU lacks (e.g. __reduce_add_sync before sm_80), as nvcc would."""
    try:
        from ..device import current
        cc = current().cc
        return f"compute_{cc[0]}{cc[1]}"
    except Exception:
        return DEFAULT_ARCH


def compile_to_ptx(source: str, options=(), name_expressions=(), filename: str = "cell.cu",
                   arch: str | None = None, line_offset: int = 0) -> CompiledSource:
    """Compile CUDA C++ to PTX. Results are cached by (source, options, names)."""
    opts = list(options)
    if not any(o.startswith(("-std", "--std")) for o in opts):
        opts.append("-std=c++17")
    if not any(o.startswith(("-arch", "--gpu-architecture")) for o in opts):
        opts.append(f"--gpu-architecture={arch or _current_arch()}")
    if "-lineinfo" not in opts:
        opts.append("-lineinfo")
    names = _name_expressions(source, name_expressions)
    key = hashlib.sha1(repr((source, tuple(opts), tuple(names), filename)).encode()).hexdigest()
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    from .libnvrtc import compile_program
    res = compile_program(source, filename, opts + [f"-I{d}" for d in include_dirs()], names)
    if not res.ok:
        nice = format_diagnostics(res.log, source, filename, line_offset) + _why(res.log)
        raise CompileError(f"Your CUDA C++ did not compile:\n{nice}", log=res.log)
    ptx, log, lowered = res.ptx, res.log, res.lowered
    out = CompiledSource(source=source, ptx=ptx, options=tuple(opts), log=log, lowered=lowered,
                         filename=filename)
    _CACHE[key] = out
    return out
