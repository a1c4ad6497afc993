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
    lines, number = text.splitlines(), int(m.group(2))
    if not 0 < number <= len(lines):
        return ""
    begin = next((k for k in range(number - 2, -1, -1)
                  if "// begin inline asm" in lines[k] or "// end inline asm" in lines[k]), None)
    if begin is None or "// begin inline asm" not in lines[begin]:
        return ""
    files = dict(_FILE.findall(text))
    loc = next((_LOC.match(lines[k]) for k in range(begin, -1, -1) if _LOC.match(lines[k])), None)
    where = (f" at {Path(files[loc.group(1)]).name}:{loc.group(2)}"
             if loc and loc.group(1) in files else "")
    return (f"\nhint: line {number} of the PTX is the text of the asm() statement{where}: nvcc copies an asm() "
            f"string into the PTX as written (%0, %1, ... become the operands' registers), so it must be PTX "
            f"instructions, such as asm(\"add.s32 %0, %1, %2;\" : \"=r\"(c) : \"r\"(a), \"r\"(b)); ptxas could not "
            f"read \"{lines[number - 1].strip()}\" ({m.group(3).strip()}).")
