"""``#include <windows.h>`` in a program that calls nothing of the Win32 API.

Students who write CUDA in Visual Studio include ``<windows.h>`` by habit (a Russian university's matrix
product includes it and calls only C's ``setlocale`` and ``system``); Linux has no such header, so nvcc
stops at the include on a GPU's Linux machine, and so did cudalab. cudalab builds such a unit again with an
empty stand-in (shim/windows/windows.h) and says to delete the line. A unit that does call the Win32 API
still fails, and is told of the missing header, as nvcc tells it, with the build's hint on what it is.
"""
from __future__ import annotations

import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "shim" / "windows"
_MISSING = re.compile(r"fatal error: [Ww]indows\.h: No such file|cannot open source file \"[Ww]indows\.h\"")


def missing(log: str) -> bool:
    return bool(_MISSING.search(log))


def options() -> list:
    return [f"-I{FOLDER}"]


def note(source: str) -> str:
    """What the student reads when ``source`` built without the Win32 API it includes."""
    return (f"cudalab: note: {source} includes <windows.h>, which Linux (and nvcc on a GPU's Linux machine) does not "
            f"have; it calls nothing of the Win32 API, so cudalab built it without. Delete the line to build it with "
            f"nvcc there.\n")
