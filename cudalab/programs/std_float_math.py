"""``std::sqrtf`` and the other float math functions C++17 puts in namespace std, for a Visual Studio program.

C++17's ``<cmath>`` declares ``sqrtf``, ``powf``, ``fabsf``, ... in namespace std as well as globally; Visual
Studio's library has them, and g++'s libstdc++ only from version 14 on. A program written in Visual Studio
(a Russian course's cuBLAS, cuFFT and cuRAND samples: ``std::sqrtf(re * re + im * im)``) stops g++ 12, nvcc's
host compiler here, with "'sqrtf' is not a member of 'std'" (and nvcc's own front end with 'namespace "std"
has no member "sqrtf"'). cudalab compiles such a unit again with shim/std_float_math.h, which gives namespace
std the C library's own functions, and says what to write for the file to build with nvcc on Linux too.
"""
from __future__ import annotations

import re
from pathlib import Path

HEADER = Path(__file__).resolve().parent / "shim" / "std_float_math.h"
# g++ (its quotes are the locale's) and nvcc's front end (EDG)
_NOT_IN_STD = re.compile(r"""['‘`](\w+)['’]\s+is not a member of\s+['‘`]std['’]|namespace "std" has no member "(\w+)\"""")
_GIVEN = set(re.findall(r"using ::(\w+);", HEADER.read_text()))


def names(log: str) -> list:
    """The float (or long double) math functions ``log`` says namespace std lacks, that the header gives."""
    found = [a or b for a, b in _NOT_IN_STD.findall(log)]
    return [n for n in dict.fromkeys(found) if n in _GIVEN]


def options() -> list:
    return ["-include", str(HEADER)]


def note(source: str, used: list) -> str:
    """What the student reads when cudalab declared ``used`` in namespace std for ``source``."""
    shown = ", ".join(f"std::{n}" for n in used)
    plain, kind = used[0][:-1], "float" if used[0].endswith("f") else "long double"
    return (f"cudalab: note: {source} calls {shown}, which C++17's <cmath> declares and Visual Studio's library has, "
            f"but g++'s (nvcc's host compiler on Linux) has only from version 14; cudalab gave namespace std the C "
            f"library's {'function' if len(used) == 1 else 'functions'}. Write {used[0]} or std::{plain} (its {kind} "
            f"overload) to build it with nvcc on Linux too.\n")
