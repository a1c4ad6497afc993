"""Building whole programs: nvcc from NVIDIA's pip wheels, linked against cudalab's libcudart shim.

``build_program(source)`` compiles a ``.cu`` file with ``int main`` into an executable plus its
PTX (kept from the same nvcc run) and the registers ptxas gave each kernel. Results are cached
by content under ``~/.cache/cudalab`` (or ``$CUDALAB_CACHE``), so running a program twice
compiles it once. The shim (``shim/cudart.c``) is built the same way, with the system C
compiler, the first time it is needed.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..errors import CompileError
from . import errors

ARCH = "sm_80"
SHIM_DIR = Path(__file__).parent / "shim"


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
def shim_library() -> Path:
    """Build (once) and return the static library ``libcudart_cudalab.a``."""
    src = b"".join(f.read_bytes() for f in sorted(SHIM_DIR.glob("*.c")))   # cudart.c #includes the others
    table = errors.c_table()
    out = cache_dir() / f"shim-{_digest(src, table, cuda_home())}"
    lib = out / "libcudart_cudalab.a"
    if lib.exists():
        return lib
    tmp = out.with_name(out.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "errors.inc").write_text(table)
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        raise CompileError("no C compiler found: cudalab builds its CUDA runtime with the system's cc/gcc "
                           "(on Debian/Ubuntu: apt install build-essential).")
    cmd = [cc, "-std=gnu11", "-O2", "-fPIC", "-Wall", "-I", str(tmp), "-I", str(cuda_home() / "include"),
           "-c", str(SHIM_DIR / "cudart.c"), "-o", str(tmp / "cudart.o")]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise CompileError(f"building cudalab's CUDA runtime failed:\n{r.stderr}", r.stderr)
    subprocess.run(["ar", "rcs", str(tmp / lib.name), str(tmp / "cudart.o")], check=True)
    if out.exists():
        shutil.rmtree(tmp)
    else:
        tmp.rename(out)
    return lib


@dataclass
class BuiltProgram:
    executable: Path
    ptx: str
    registers: dict = field(default_factory=dict)    # mangled kernel name -> registers per thread (ptxas)
    log: str = ""


_UNDEFINED = re.compile(r"undefined reference to `([^'`]+)'")
_ENTRY = re.compile(r"Compiling entry function '([^']+)'")
_REGS = re.compile(r"Used (\d+) registers")


def _registers(log: str) -> dict:
    regs, current = {}, None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = m.group(1)
        elif (m := _REGS.search(line)) and current:
            regs[current] = int(m.group(1))
            current = None
    return regs


def _student_log(log: str, workdir: Path, shown: str, line_offset: int) -> str:
    """nvcc's messages with cudalab's own paths removed and cell lines shifted back."""
    log = "\n".join(l for l in log.splitlines() if not l.startswith("ptxas info") and not l.startswith("    "))
    log = log.replace(str(workdir) + "/", "")
    if line_offset:
        log = re.sub(rf"{re.escape(shown)}\((\d+)\)", lambda m: f"{shown}({int(m.group(1)) - line_offset})", log)
    return log.strip()


def build_program(source: str, filename: str = "program.cu", options=(), line_offset: int = 0) -> BuiltProgram:
    """Compile a whole CUDA program for the emulator; raises CompileError with nvcc's messages.

    ``line_offset``: lines cudalab put before the student's first line (a notebook cell's
    prelude), subtracted from the line numbers in nvcc's messages."""
    lib = shim_library()
    name = Path(filename).name if filename.endswith(".cu") else "program.cu"
    key = _digest(source, name, tuple(options), lib.parent.name, ARCH)
    out = cache_dir() / "programs" / key
    exe = out / "program"
    if exe.exists():
        return BuiltProgram(exe, (out / "program.ptx").read_text(), _registers((out / "build.log").read_text()),
                            (out / "build.log").read_text())
    work = out.with_name(out.name + f".tmp{os.getpid()}")
    keep = work / "keep"
    keep.mkdir(parents=True, exist_ok=True)
    src = work / name
    src.write_text(source)
    cmd = [nvcc(), f"-arch={ARCH}", "-lineinfo", "--resource-usage", "--keep", "--keep-dir", str(keep),
           "-cudart", "none", *options, "-o", "program", name, str(lib)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=work)
    log = r.stdout + r.stderr
    if r.returncode:
        missing = sorted({m for m in _UNDEFINED.findall(log) if m.startswith(("cuda", "__cuda"))})
        shutil.rmtree(work, ignore_errors=True)
        if missing:
            raise CompileError(
                "\n".join(f"cudalab does not implement {m} yet." for m in missing) +
                "\nThe program compiled, but it calls CUDA runtime functions the emulator does not provide. "
                "Use the ones it has (cudaMalloc, cudaMemcpy, streams, events, ...) or run on a real GPU.", log)
        raise CompileError(_student_log(log, work, name, line_offset) or "nvcc failed", log)
    ptx_files = sorted(keep.glob("*.ptx"))
    ptx = ptx_files[0].read_text()
    (work / "program.ptx").write_text(ptx)
    (work / "build.log").write_text(log)
    shutil.rmtree(keep, ignore_errors=True)
    if not out.exists():
        work.rename(out)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return BuiltProgram(exe, ptx, _registers(log), log)
