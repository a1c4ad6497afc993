"""Standard headers that Visual Studio's headers bring in and g++'s do not (``ceil`` with only ``<iostream>``).

Microsoft's ``<iostream>`` and ``<stdio.h>`` include much of the C library (``<cmath>``, ``<cstring>``),
so a program written in Visual Studio may call ``ceil`` or ``memcpy`` without including their header; g++,
nvcc's host compiler on Linux, stops with "'ceil' was not declared in this scope" (on a GPU's Linux machine
too). cudalab compiles such a unit again with the headers g++ names in its notes ("'memcpy' is defined in
header '<cstring>'"), or ``<cmath>`` for the math functions it names none for, and says which to include.
"""
from __future__ import annotations

import re

# g++'s "error: 'ceil' was not declared in this scope" (its quotes are the locale's)
UNDECLARED = re.compile(r"""['‘`](\w+)['’]\s+was not declared in this scope""")
# g++'s own suggestion: "note: 'memcpy' is defined in header '<cstring>'; did you forget to '#include <cstring>'?"
_SUGGESTED = re.compile(r"""['‘`](\w+)['’]\s+is defined in header\s+['‘`]<(\w+)>['’]""")
# the C math functions g++ names no header for
_MATH = set("""ceil ceilf floor floorf round roundf trunc fabs fabsf fmod fmodf sqrt sqrtf cbrt pow powf exp expf
exp2 log logf log2 log10 sin sinf cos cosf tan tanf asin acos atan atan2 sinh cosh tanh hypot fmin fmax
isnan isinf""".split())


def headers_for(log: str) -> dict:
    """{header: [names]} for the names ``log`` says were not declared that a standard header declares."""
    suggested = dict(_SUGGESTED.findall(log))
    found: dict = {}
    for name in dict.fromkeys(UNDECLARED.findall(log)):
        header = suggested.get(name) or ("cmath" if name in _MATH else None)
        if header:
            found.setdefault(header, []).append(name)
    return found


def options(headers: dict) -> list:
    """nvcc options that include ``headers`` first in the unit."""
    return [w for h in headers for w in ("-include", h)]


def note(source: str, headers: dict) -> str:
    """What the student reads when cudalab included ``headers`` for ``source``."""
    uses = "; ".join(f"{', '.join(names)} without #include <{h}>" for h, names in headers.items())
    wanted = " ".join(f"#include <{h}>" for h in headers)
    return (f"cudalab: note: {source} uses {uses}, which Visual Studio's headers bring in and g++'s (nvcc's host "
            f"compiler on Linux) do not; cudalab included {'it' if len(headers) == 1 else 'them'}. Add {wanted} to build it with "
            f"nvcc on Linux too.\n")
