"""Programs written in Visual Studio with ``void main()``: built as the Windows compiler builds them.

Microsoft's compiler accepts ``void main(void)`` (the program then exits with 0), and a book or course
written on Windows (a Korean textbook's listings, many university labs) uses it throughout. g++, the host
compiler nvcc calls on Linux, refuses it ("'::main' must return 'int'"), so such a program stops before it
runs, on a GPU's Linux machine too. cudalab builds a copy of the file in which ``void main`` reads
``int main`` (same lines and columns: messages and the profiler still name the student's own lines, through
a ``#line`` directive), and says so: the note tells the student what g++ needs.
"""
from __future__ import annotations

import re
from pathlib import Path

# what g++ says of `void main` (its quotes are the locale's: '::main' or ‘::main’)
REFUSED = re.compile(r"""['‘`]::main['’]\s+must return\s+['‘`]int['’]""")
# `void main(` at the start of a line or after a qualifier: "void" and "int " are both four characters
_VOID_MAIN = re.compile(r"\bvoid(\s+main\s*\()")


def declares_void_main(text: str) -> bool:
    """Does this source define ``void main(``, as Visual Studio's programs may?"""
    return bool(_VOID_MAIN.search(text))


def int_main_copy(path: Path, folder: Path) -> Path:
    """Write ``path`` to ``folder`` with ``void main(`` as ``int main(``, every other character in its place;
    a ``#line`` directive names the original file, so nvcc's messages and the PTX's line table do too. Visual
    Studio saves files with a byte-order mark, which nvcc passes over at the start of a file but not after
    the directive: it is left out."""
    text = path.read_text(errors="surrogateescape").removeprefix("\ufeff")   # a BOM leads only the file, not a line
    copy = folder / path.name
    folder.mkdir(parents=True, exist_ok=True)
    quoted = str(path).replace("\\", "\\\\").replace('"', '\\"')
    copy.write_text(f'#line 1 "{quoted}"\n' + _VOID_MAIN.sub(r"int \1", text), errors="surrogateescape")
    return copy


def note(source: Path) -> str:
    """What the student reads when cudalab built ``source``'s ``void main`` as ``int main``."""
    return (f"cudalab: note: {source.name} declares void main(), which Visual Studio accepts but g++ (nvcc's host "
            f"compiler on Linux) refuses with \"'::main' must return 'int'\"; cudalab built it as int main (exit code "
            f"0). Write int main() and return 0 to build it with nvcc on Linux too.\n")
