"""Headers old toolkits had and CUDA 13's does not, given back as stand-ins to the units that include them.

Courses of the CUDA 2 to 4 era include ``<sm_11_atomic_functions.h>`` for atomicAdd or
``<sm_13_double_functions.h>`` for the double intrinsics, and NVIDIA's own ``cuPrintf.cu`` (bundled by
many of them: Stanford's CS193G tutorials) includes the first. What they declared every CUDA unit now
gets from ``device_atomic_functions.h`` and ``device_double_functions.h``; the texture-reference
headers (``cuda_texture_types.h``, ``texture_fetch_functions.h``, the surface ones) went with the
references, which cudalab builds over objects (``shim/legacy_textures.h``), and CUDA 13's Thrust dropped
``thrust/system/cuda/experimental/pinned_allocator.h`` (now ``universal_host_pinned_allocator``). nvcc 13 stops at the
``#include`` ("No such file or directory"), on a GPU too; cudalab builds such a unit again with
``shim/removed/`` on its include path, whose stand-ins include today's header, and says so.
"""
from __future__ import annotations

import re
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "shim" / "removed"
# (what nvcc's preprocessor says: g++'s "fatal error: X: No such file", cudafe's "cannot open source file")
_MISSING = re.compile(r"fatal error: ([\w./]+\.h): No such file|cannot open source file \"([\w./]+\.h)\"")


def named(log: str) -> list:
    """The removed headers ``log`` says nvcc did not find."""
    names = [m.group(1) or m.group(2) for m in _MISSING.finditer(log)]
    return [n for n in dict.fromkeys(names) if ".." not in n.split("/") and (FOLDER / n).is_file()]


def used(dependencies: str) -> list:
    """The stand-ins a unit's dependency file (nvcc -MD) lists: every one it included, where the
    preprocessor's error named only the first it missed."""
    folder = str(FOLDER)
    return [Path(w).relative_to(FOLDER).as_posix() for w in dict.fromkeys(dependencies.replace("\\\n", " ").split())
            if w.startswith(folder + "/")] if folder in dependencies else []


def options() -> list:
    """nvcc options that find the stand-ins (after the program's own folders: none of them has these names)."""
    return ["-I", str(FOLDER)]


def note(source: str, names: list) -> str:
    """What the student reads when cudalab gave ``names`` to ``source``."""
    listed = ", ".join(f"<{n}>" for n in names)
    return (f"cudalab: note: {source} includes {listed}, which CUDA 13 no longer has (nvcc stops there on a GPU "
            f"too); what {'it' if len(names) == 1 else 'they'} declared every CUDA unit now has, so cudalab built it "
            f"with a stand-in. Delete the #include to build it with today's nvcc.\n")
