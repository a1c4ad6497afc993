"""Standard headers that Visual Studio's headers bring in and g++'s do not (``ceil`` with only ``<iostream>``).

Microsoft's ``<iostream>`` and ``<stdio.h>`` include much of the C library (``<cmath>``, ``<cstring>``),
so a program written in Visual Studio may call ``ceil`` or ``memcpy`` without including their header; g++,
nvcc's host compiler on Linux, stops with "'ceil' was not declared in this scope" (on a GPU's Linux machine
too). cudalab compiles such a unit again with the headers g++ names in its notes ("'memcpy' is defined in
header '<cstring>'"), or ``<cmath>`` for the math functions it names none for, and says which to include.

The same holds for names in namespace std: Microsoft's headers include ``<thread>`` and ``<mutex>`` from
``<vector>`` and ``<algorithm>`` by way of their own internals, so a reduction that runs ``std::thread``s on the
host beside its kernels (the CUDA tutorial's standard-library lesson, copied into a Vietnamese learner's
repository) builds in Visual Studio and stops nvcc's front end on Linux at 'namespace "std" has no member
"thread"'. The standard header of each such name (``_STD_HEADERS``) is included the same way.
"""
from __future__ import annotations

import re

# g++'s "error: 'ceil' was not declared in this scope" (its quotes are the locale's)
UNDECLARED = re.compile(r"""['‘`](\w+)['’]\s+was not declared in this scope""")
# g++'s own suggestion: "note: 'memcpy' is defined in header '<cstring>'; did you forget to '#include <cstring>'?"
_SUGGESTED = re.compile(r"""['‘`](?:std::)?(\w+)['’]\s+is defined in header\s+['‘`]<(\w+)>['’]""")
# nvcc's front end (EDG) on a .cu file, and g++ on a host file: a std:: name no included header declared
_NOT_IN_STD = re.compile(r"""namespace "std" has no member "(\w+)"|['‘`](\w+)['’]\s+is not a member of\s+['‘`]std['’]""")
# the standard header of the std:: names a program may use without including it (Visual Studio's headers
# bring them in); the float math of std_float_math.py (std::sqrtf) is not here: no header of g++ 12 has it
_STD_HEADERS = {name: header for header, names in {
    "thread": "thread this_thread", "mutex": "mutex lock_guard unique_lock scoped_lock once_flag call_once",
    "condition_variable": "condition_variable", "future": "future async promise",
    "chrono": "chrono", "iomanip": "setw setprecision setfill put_time",
    "numeric": "accumulate iota inner_product partial_sum adjacent_difference gcd lcm",
    "algorithm": "sort stable_sort min_element max_element fill fill_n copy_if transform reverse "
                 "random_shuffle shuffle count_if find_if all_of any_of none_of equal",
    "limits": "numeric_limits", "functional": "function bind plus multiplies greater less",
    "memory": "unique_ptr shared_ptr make_unique make_shared", "sstream": "stringstream ostringstream istringstream",
    "fstream": "ifstream ofstream fstream", "random": "mt19937 mt19937_64 random_device default_random_engine "
              "uniform_int_distribution uniform_real_distribution normal_distribution",
    "cstring": "memcpy memset strlen strcmp strcpy", "iterator": "back_inserter ostream_iterator",
    "array": "array", "string": "to_string stoi stof stod",
}.items() for name in names.split()}
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
    for name in dict.fromkeys(a or b for a, b in _NOT_IN_STD.findall(log)):
        header = _STD_HEADERS.get(name) or suggested.get(name)
        if header and f"std::{name}" not in found.get(header, []):
            found.setdefault(header, []).append(f"std::{name}")
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
