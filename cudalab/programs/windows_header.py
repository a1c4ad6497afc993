"""``#include <windows.h>`` in a program that calls nothing of the Win32 API.

Students who write CUDA in Visual Studio include ``<windows.h>`` by habit (a Russian university's matrix
product includes it and calls only C's ``setlocale`` and ``system``); Linux has no such header, so nvcc
stops at the include on a GPU's Linux machine, and so did cudalab. cudalab builds such a unit again with an
stand-in (shim/windows/windows.h) and says to delete the line. The stand-in also has the Win32 timers that
courses time their kernels with (QueryPerformanceCounter/Frequency, GetTickCount, Sleep: a Lebanese
university's assignments include a timer.h built on them), on the C library's clock, and the note then says
what to use on Linux. A unit that calls anything else of the Win32 API still fails, and is told of the
missing header, as nvcc tells it, with the build's hint on what it is.
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


TIMERS = ("QueryPerformanceCounter", "QueryPerformanceFrequency", "GetTickCount64", "GetTickCount", "Sleep")


def timers_used(text: str) -> list:
    """The stand-in's Win32 timers that ``text`` names, in TIMERS' order."""
    return [name for name in TIMERS if re.search(rf"\b{name}\b", text)]


def _includers(source: str, deps: Path | None) -> list:
    """``source`` and the program's own headers among its dependencies (nvcc -MD's file) that include
    <windows.h>: the timers are often called in a course's timer.h, not in the .cu that includes it."""
    paths = [Path(source)]
    if deps is not None and deps.exists():
        for token in deps.read_text(errors="replace").replace("\\\n", " ").split()[1:]:
            path = Path(token)
            if not token.startswith("/usr/") and FOLDER not in path.parents and path.suffix in (".h", ".hpp", ".cuh"):
                paths.append(path)
    texts = []
    for path in paths:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if path == paths[0] or re.search(r"#\s*include\s*<[Ww]indows\.h>", text):
            texts.append(text)
    return texts


def note(source: str, deps: Path | None = None) -> str:
    """What the student reads when ``source`` built with the stand-in of the <windows.h> it includes."""
    used = sorted({name for text in _includers(source, deps) for name in timers_used(text)}, key=TIMERS.index)
    if used:
        return (f"cudalab: note: {source} includes <windows.h>, which Linux (and nvcc on a GPU's Linux machine) does "
                f"not have; it calls only Win32's timers ({', '.join(used)}), which cudalab gives it from the C "
                f"library's clock. To build it with nvcc on Linux, time it with std::chrono (or cudaEvent_t for "
                f"kernels) instead.\n")
    return (f"cudalab: note: {source} includes <windows.h>, which Linux (and nvcc on a GPU's Linux machine) does not "
            f"have; it calls nothing of the Win32 API, so cudalab built it without. Delete the line to build it with "
            f"nvcc there.\n")
