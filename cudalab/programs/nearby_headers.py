"""A header the build did not find that lies in a folder near the program (``../common/gputimer.h``).

A course repository often keeps one copy of a helper header (CS344's ``gputimer.h``, a book's ``common.h``)
in one lab's folder, and a program of another lab includes it by its bare name: nvcc stops with "No such
file or directory", on a GPU's machine too, since nothing puts that folder on the include path. cudalab
does not guess the folder for the student, but says where a file of that name is, so the fix (``-I``, or a
copy beside the program) is one step. The search is bounded: the includer's folder's parent and grandparent,
a few levels down, so a missing system header does not walk a whole disk.
"""
from __future__ import annotations

import os
from pathlib import Path

from .include_case import MISSING

UP = 2          # folders above the includer's that are searched (its parent and grandparent)
DEPTH = 3       # how far down from each
ENTRIES = 5000  # the most directory entries one search reads


def find(name: str, includer: Path) -> Path | None:
    """The file ``name`` (a bare header name or a relative path) nearest to ``includer``'s folder, or None."""
    start = includer.parent
    for top in list(start.parents)[:UP]:
        if top == Path(top.anchor) or top in (Path.home(), *Path.home().parents):
            break       # (a file in /tmp or ~: its neighbours are not its course's)
        seen = 0
        for folder, dirs, files in os.walk(top):
            depth = len(Path(folder).relative_to(top).parts)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".")) if depth < DEPTH else []
            seen += len(dirs) + len(files)
            candidate = Path(folder) / name
            if Path(folder) != start and candidate.is_file():
                return candidate
            if seen > ENTRIES:
                break
    return None


def hint(log: str, cwd: Path) -> str:
    """For each header ``log`` says is missing that lies near its includer: where it is and how to use it."""
    hints = []
    for m in MISSING.finditer(log):
        name, includer = m.group("name"), (cwd / m.group("includer")).resolve()
        if os.path.isabs(name) or not includer.exists():
            continue
        found = find(name, includer)
        if found is None:
            continue
        folder = os.path.relpath(found.parent if "/" not in name else found.parents[len(Path(name).parts) - 1],
                                 includer.parent)
        hints.append(f"\nhint: {name} is not beside {includer.name} nor on the include path, but there is one in "
                     f"{folder}: build with -I{folder} (nvcc stops here on a GPU's machine too), or copy it beside "
                     f"{includer.name}.")
    return "".join(dict.fromkeys(hints))
