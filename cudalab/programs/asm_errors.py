"""A ptxas error in the text of an ``asm()`` statement, told at the statement.

nvcc copies an inline-assembly string into the PTX as it is written (``%0``, ``%1`` ... replaced by the
operands' registers), between ``// begin inline asm`` and ``// end inline asm``; ptxas then reads it as
PTX and stops at the first word that is none: "ptxas 08.ptx, line 136; fatal : Parsing error near
'Here'". That names a line of a file the student never sees (a course's exercise leaves
``asm("Your Code Here" : ...)`` to be filled in). The ``.loc`` line nvcc puts before the statement says
where it is in the source.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

_PTXAS = re.compile(r"^ptxas (\S+\.ptx), line (\d+); (?:fatal|error)\s*:\s*(.*)$", re.M)
_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]+)"', re.M)


def hint(log: str, keep: Path) -> str:
    """A hint (starting with a newline) for ptxas's first error when its PTX line comes from an asm()
    statement, else ""; ``keep`` is the folder nvcc kept the PTX in (--keep-dir)."""
    m = _PTXAS.search(log)
    if not m:
        return ""
    ptx = Path(m.group(1)) if Path(m.group(1)).is_absolute() else keep / Path(m.group(1)).name
    try:
        text = ptx.read_text(errors="replace")
    except OSError:
        return ""
    found = asm_statement(text, int(m.group(2)))
    if found is None:
        return ""
    where, line = found
    return (f"\nhint: line {m.group(2)} of the PTX is the text of the asm() statement{where}: {ADVICE}; ptxas "
            f"could not read \"{line}\" ({m.group(3).strip()}).")


ADVICE = ("nvcc copies an asm() string into the PTX as written (%0, %1, ... become the operands' registers), so it "
          "must be PTX instructions, such as asm(\"add.s32 %0, %1, %2;\" : \"=r\"(c) : \"r\"(a), \"r\"(b))")


def asm_statement(text: str, number: int) -> tuple | None:
    """(" at FILE:LINE" or "", the PTX line) when line ``number`` (from 1) of the PTX ``text`` lies inside
    an asm() statement's text, else None. (NVRTC marks inline assembly as nvcc does, so the emulator's own
    reading of a notebook cell's PTX can tell the same.)"""
    lines = text.splitlines()
    if not 0 < number <= len(lines):
        return None
    begin = next((k for k in range(number - 2, -1, -1)
                  if "// begin inline asm" in lines[k] or "// end inline asm" in lines[k]), None)
    if begin is None or "// begin inline asm" not in lines[begin]:
        return None
    files = dict(_FILE.findall(text))
    loc = next((_LOC.match(lines[k]) for k in range(begin, -1, -1) if _LOC.match(lines[k])), None)
    where = f" at {Path(files[loc.group(1)]).name}:{loc.group(2)}" if loc and loc.group(1) in files else ""
    return where, lines[number - 1].strip()


_TARGET = re.compile(r"^\s*\.target\s+(sm_\w+)", re.M)


def ptxas_refuses(text: str) -> str | None:
    """ptxas's first error for this PTX (the wheel's ptxas, for the PTX's own target), or None when it
    reads it or cannot be run: the emulator's own reader may lack an instruction ptxas knows, and only
    ptxas can say the asm() text is no PTX at all."""
    try:
        from .build import cuda_home, nvcc
        nvcc()                                   # (sets the tools' executable bits)
        ptxas = cuda_home() / "bin" / "ptxas"
        target = _TARGET.search(text)
        with tempfile.TemporaryDirectory(prefix="cudalab-asm-") as tmp:
            (Path(tmp) / "cell.ptx").write_text(text)
            r = subprocess.run([str(ptxas), f"--gpu-name={target.group(1) if target else 'sm_80'}", "cell.ptx",
                                "-o", "/dev/null"], capture_output=True, text=True, errors="replace", cwd=tmp,
                               timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    if r.returncode == 0:
        return None
    m = _PTXAS.search(r.stdout + r.stderr)
    return m.group(3).strip() if m else (r.stdout + r.stderr).strip().splitlines()[0]
