"""``cudalab nvcc ...``: an nvcc command that builds a module file for the driver API, run unchanged.

A driver-API program loads its kernels from a file its build made (``nvcc -fatbin``, ``nvcc -cubin``),
often of GPU machine code only (``-gencode=arch=compute_90,code=sm_90``), which the emulator cannot run.
This runs the wheel's nvcc with the command exactly as given, so the file is the one nvcc makes, and
then once more for the PTX of the same source for the emulated device (``-ptx``); that PTX is kept in
cudalab's cache under the file's SHA-256 (``images.record``), where the program's cuModuleLoad finds it.
A ``-shared`` library is built for the emulator instead (``build.build_library``: against cudalab's
runtime, its kernels' PTX kept for the programs that link it). Any other nvcc command is only run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import images
from .build import nvcc
from .command import NvccUsageError, parse_nvcc


def run(words: list, cwd: str | None = None) -> int:
    """Run ``nvcc words`` in ``cwd``; for a -fatbin or -cubin output, keep its PTX. Returns nvcc's exit code."""
    # on a GPU (CUDALAB_DEVICE=gpu) the machine's own nvcc, whose machine code its driver runs
    on_gpu = os.environ.get("CUDALAB_DEVICE") == "gpu"
    compiler = (on_gpu and shutil.which("nvcc")) or nvcc()
    try:
        shared = parse_nvcc(words).shared
    except NvccUsageError:
        shared = False
    if shared and not on_gpu:       # a CUDA library for the emulator's programs (build.build_library)
        from ..errors import CompileError
        from .build import build_library
        try:
            build_library(parse_nvcc(words), cwd)
        except CompileError as e:
            print(f"cudalab nvcc: {e}", flush=True)
            return 1
        return 0
    r = subprocess.run([compiler, *words], cwd=cwd)
    if r.returncode:
        return r.returncode
    try:
        cmd = parse_nvcc(words)         # read as ``cudalab run`` reads a build (command.py)
    except NvccUsageError:              # (not a build of sources: nothing to keep)
        return 0
    if cmd.mode not in ("-fatbin", "-cubin"):
        return 0
    if cmd.output is None:
        print("cudalab nvcc: give the module's file with -o, so that cudalab can keep its PTX", flush=True)
        return 1
    from ..device import current
    major, minor = current().cc
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "module.ptx"
        # the same sources and compile options, for the emulated device's PTX (its own target and output)
        words = [*cmd.compile_options, *(["-rdc=true"] if cmd.rdc else []), *cmd.sources,
                 "-ptx", f"-arch=compute_{major}{minor}", "-o", str(ptx)]
        p = subprocess.run([nvcc(), *words], cwd=cwd, capture_output=True, text=True, errors="replace")
        if p.returncode:
            print(f"cudalab nvcc: the PTX of {cmd.output} for the emulator could not be built:\n{p.stderr}", flush=True)
            return p.returncode
        images.record((Path(cwd or ".") / cmd.output).read_bytes(), ptx.read_text())
    return 0
