"""``cudalab nvcc ...``: an nvcc command that builds a module file for the driver API, run unchanged.

A driver-API program loads its kernels from a file its build made (``nvcc -fatbin``, ``nvcc -cubin``),
often of GPU machine code only (``-gencode=arch=compute_90,code=sm_90``), which the emulator cannot run.
This runs the wheel's nvcc with the command exactly as given, so the file is the one nvcc makes, and
then once more for the PTX of the same source for the emulated device (``-ptx``); that PTX is kept in
cudalab's cache under the file's SHA-256 (``images.record``), where the program's cuModuleLoad finds it.
Any other nvcc command (no -fatbin or -cubin) is only run.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import images
from .build import nvcc

MODULE_OUTPUTS = ("-fatbin", "--fatbin", "-cubin", "--cubin")
# options that name targets or outputs: the PTX run chooses its own
_WITH_VALUE = ("-o", "--output-file", "-gencode", "--generate-code", "-arch", "--gpu-architecture", "-code",
               "--gpu-code", "-odir", "--output-directory")


def _ptx_words(words: list, arch: str) -> list:
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
            continue
        name = w.split("=", 1)[0]
        if name in _WITH_VALUE:
            skip = "=" not in w
            continue
        if w in MODULE_OUTPUTS or w.startswith(("-gencode=", "--generate-code=")):
            continue
        out.append(w)
    return [*out, "-ptx", f"-arch=compute_{arch}"]


def _output(words: list) -> str | None:
    for i, w in enumerate(words):
        if w in ("-o", "--output-file") and i + 1 < len(words):
            return words[i + 1]
        if w.startswith(("-o=", "--output-file=")):
            return w.split("=", 1)[1]
    return None


def run(words: list, cwd: str | None = None) -> int:
    """Run ``nvcc words`` in ``cwd``; for a -fatbin or -cubin output, keep its PTX. Returns nvcc's exit code."""
    # on a GPU (CUDALAB_DEVICE=gpu) the machine's own nvcc, whose machine code its driver runs
    compiler = (os.environ.get("CUDALAB_DEVICE") == "gpu" and shutil.which("nvcc")) or nvcc()
    r = subprocess.run([compiler, *words], cwd=cwd)
    if r.returncode or not any(w in MODULE_OUTPUTS for w in words):
        return r.returncode
    out = _output(words)
    if out is None:
        print("cudalab nvcc: give the module's file with -o, so that cudalab can keep its PTX", flush=True)
        return 1
    from ..device import current
    major, minor = current().cc
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "module.ptx"
        p = subprocess.run([nvcc(), *_ptx_words(words, f"{major}{minor}"), "-o", str(ptx)], cwd=cwd,
                           capture_output=True, text=True)
        if p.returncode:
            print(f"cudalab nvcc: the PTX of {out} for the emulator could not be built:\n{p.stderr}", flush=True)
            return p.returncode
        images.record((Path(cwd or ".") / out).read_bytes(), ptx.read_text())
    return 0

