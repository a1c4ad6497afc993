"""CUDA 12's mdspan conversions for programs written against it: an include folder whose one header,
``cuda/std/__mdspan/mdspan.h``, is the toolkit's own with mdspan's converting constructor implicit.

CUDA 12's libcu++ (CCCL 2) took its mdspan from the Kokkos reference implementation, whose
conditional ``explicit`` is written only for C++20 and is empty in C++17, nvcc's default dialect: an
``mdspan<float, dextents<size_t, 2>>`` (what ``cuda::std::mdspan m(ptr, height, width)`` deduces)
converted to ``mdspan<const float, dextents<int, 2>>`` where a function takes one. CCCL 3 (CUDA 13)
follows C++23 and makes that conversion explicit (the index type narrows), so NVIDIA's own CUDA C++
tutorial (its ``ach::compute`` takes ``dextents<int, 2>``) stops at "no suitable user-defined
conversion" in ten lessons, with nvcc 13 on a GPU's machine too. cudalab builds such a unit again with
this folder first on the include path (``compile_unit``) and tells the student what nvcc needs.
The folder is made once in the cache from the toolkit's header; nothing of NVIDIA's is kept in the
repository.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

from .publish import publish

HEADER = Path("cuda") / "std" / "__mdspan" / "mdspan.h"
# nvcc's error for a call or an initialization that needs the conversion (the target named directly or by a
# typedef, `to "grid" (aka "...mdspan<...")`)
MDSPAN_CONVERSION = re.compile(r'no suitable user-defined conversion from "[^"\n]*\bmdspan<[^"\n]*" to [^\n]*\bmdspan<')
# the converting constructor from another mdspan that CCCL 3 declares explicit (the other one of the
# pair, for conversions C++23 keeps implicit, has no ``explicit``)
_EXPLICIT_CONVERSION = re.compile(r"\bexplicit(\s+constexpr\s+mdspan\s*\(\s*const\s+mdspan\s*<\s*_OtherElementType\b)")


def implicit_conversions(text: str) -> str | None:
    """mdspan.h with its converting constructor implicit, or None when the header has no explicit one
    (a libcu++ that converts implicitly already, or one laid out otherwise)."""
    patched, n = _EXPLICIT_CONVERSION.subn(r"/* cudalab: implicit, as CUDA 12's C++17 mdspan */\1", text)
    return patched if n == 1 else None


def implicit_mdspan_include(cccl: Path, cache: Path) -> Path | None:
    """The include folder described above for the CCCL headers in ``cccl``, made once in ``cache``;
    None when the toolkit's mdspan needs nothing changed. The patched header includes the others it
    needs with angle brackets, so they come from the toolkit."""
    source = cccl / HEADER
    if not source.exists():
        return None
    patched = implicit_conversions(source.read_text())
    if patched is None:
        return None
    folder = cache / f"mdspan-{hashlib.sha256((str(source) + patched).encode()).hexdigest()[:20]}"
    if folder.exists():
        return folder
    tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    (tmp / HEADER).parent.mkdir(parents=True)
    (tmp / HEADER).write_text(patched)
    publish(tmp, folder)
    return folder


def mdspan_note(source: Path) -> str:
    """What the student should know when ``source`` was built with the folder above. Kept in the unit's
    log as a ``cudalab: note:`` line, so a cached build says it again."""
    return (f"cudalab: note: {source.name} converts a cuda::std::mdspan to one of another index type (size_t extents, "
            f"as mdspan(ptr, rows, cols) deduces, where a function takes dextents<int, 2>). CUDA 12's libcu++ did that "
            f"implicitly in C++17; CUDA 13's makes it explicit, and nvcc 13 stops at \"no suitable user-defined "
            f"conversion\". cudalab built it as CUDA 12 did. For CUDA 13, say the extents' type where the mdspan is "
            f"made: cuda::std::mdspan<const float, cuda::std::dextents<int, 2>> m(ptr, rows, cols).\n")
