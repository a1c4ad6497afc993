"""Headers named in another case than the file's (``#include "kernelCall.h"`` for ``KernelCall.h``).

Windows finds a file whatever the case of its name, so a program written there may include its own
header in a case that is not the file's; Linux (a GPU's machine too) stops with "No such file or
directory". cudalab finds the header as Windows would, beside the file that includes it, through a
folder of links under the spelling the program uses, and says so: the note names both spellings.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

# the preprocessor's "main.cpp:1:10: fatal error: kernelCall.h: No such file or directory"
MISSING = re.compile(r"^(?P<includer>[^\n:]+):\d+:\d+: fatal error: (?P<name>[^\n:]+): No such file or directory",
                     re.M)


def found_in_another_case(log: str, cwd: Path, folder: Path) -> tuple | None:
    """(name as included, the file on disk) for the first header ``log`` says is missing that lies beside its
    includer under another case (``folder`` holds the links already made), or None."""
    for m in MISSING.finditer(log):
        name, includer = m.group("name"), (cwd / m.group("includer")).resolve()
        if (folder / name).exists():
            continue
        place = includer.parent / Path(name).parent
        if not place.is_dir():
            continue
        wanted = Path(name).name.lower()
        match = [f for f in sorted(place.iterdir()) if f.name.lower() == wanted and f.is_file()]
        if match:
            return name, match[0]
    return None


def link(name: str, target: Path, folder: Path) -> None:
    """Make ``folder/name`` lead to ``target`` (a header found in another case)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or path.exists():
        path.unlink()
    os.symlink(target, path)


def note(name: str, target: Path) -> str:
    """What the student reads when cudalab found ``name`` as ``target``."""
    return (f"cudalab: note: the program includes \"{name}\", but the file is {target.name}: Windows finds it "
            f"either way, Linux (and nvcc on a GPU's Linux machine) does not. cudalab used {target.name}; write "
            f"the name as the file has it.\n")
