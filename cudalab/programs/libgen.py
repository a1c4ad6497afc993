"""Sources generated for the math-library part of cudalab's shim: cuBLAS's routines from its header,
and a fallback for each cuBLAS, cuBLASLt, cuRAND, cuFFT and cuSPARSE function the shim does not define.

A program that calls cuBLAS links against cudalab's own definitions (shim/cublas.c), never
NVIDIA's libcublas. Every function cublas_api.h declares gets one: the handle functions and the
strided copies are written by hand in cublas.c; a routine the emulator computes
(``runtime.libraries.blas.routine``) gets a wrapper that sends its arguments by their names in the
header; every other one answers CUBLAS_STATUS_NOT_SUPPORTED and says so once. As with the runtime's
fallbacks (shimgen.py), the list is the header's, so a new cuBLAS release's functions are covered
the day its wheel is. The library parts are built only when their headers are installed (the
nvidia-cublas wheel: ``pip install 'cudalab[cublas]'``; curand.h comes with nvidia-curand, cusparse.h
with nvidia-cusparse).
"""
from __future__ import annotations

import re
from pathlib import Path

from ..runtime.libraries import blas

SHIM_DIR = Path(__file__).parent / "shim"
_DECL = r"(?:^|(?<=[;{{}}]))\s*([A-Za-z_][\w \t\*]*?)\s*\b{marker}\s+(\w+)\s*\(([^;{{}}]*?)\)\s*;"
_SCALARS = ("alpha", "beta")


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def declarations(header: Path, marker: str = "CUBLASWINAPI") -> dict:
    """name -> (return type, [(parameter type, parameter name)]) of every function the header declares
    (each declaration has ``marker`` before its name: CUBLASWINAPI, CURANDAPI)."""
    found = {}
    text = re.sub(r"^[ \t]*#.*$", ";", _strip_comments(header.read_text()), flags=re.M)   # no directives
    text = re.sub(r"\b[A-Z_]+_DEPRECATED\w*(\s*\([^()]*\))?", " ", text)    # cuSPARSE's markers before a return type
    for ret, name, params in re.findall(_DECL.format(marker=marker), text, re.S):
        ret = " ".join(w for w in ret.split() if w != "CUBLASAPI")
        plist = []
        for p in params.split(","):
            p = " ".join(p.split())
            if p in ("", "void"):
                continue
            m = re.match(r"(.*?)(\w+)\s*(\[\s*\])?$", p)
            plist.append((m.group(1).strip() + (" *" if m.group(3) else ""), m.group(2)))
        found.setdefault(name, (ret, plist))
    return found


def defined_in(source: Path, prefix: str) -> set:
    """Every ``prefix...`` name a hand-written shim file spells out (it defines them all)."""
    return set(re.findall(rf"\b({prefix}\w+)\b", _strip_comments(source.read_text())))


def _signature(ret: str, name: str, params) -> str:
    return f"{ret} {name}({', '.join(f'{t} {n}' for t, n in params) or 'void'})"


def _wrapper(ret: str, name: str, params) -> str:
    """A routine the emulator computes: its arguments by name in one request (shim/libraries.c's request_*)."""
    lines = [_signature(ret, name, params) + " {", "    struct request q;",
             f'    if (!blas_begin(&q, handle, "{name}")) return CUBLAS_STATUS_NOT_INITIALIZED;']
    result = "0, 0"
    names = {n for _, n in params}
    for typ, n in params[1:]:
        if n in _SCALARS:
            size = "ex_scalar_size(computeType, Ctype)" if "void" in typ and {"computeType", "Ctype"} <= names \
                else f"sizeof *{n}"
            lines.append(f'    request_scalar(&q, "{n}", {n}, {size});')
        elif n == "result":
            lines.append(f'    request_ptr(&q, "{n}", {n});')
            result = f"{n}, sizeof *{n}"
        elif "*" in typ:
            lines.append(f'    request_ptr(&q, "{n}", (const void *){n});')
        else:
            lines.append(f'    request_int(&q, "{n}", (long long){n});')
    lines += [f"    return blas_call(&q, handle, {result});", "}"]
    return "\n".join(lines)


def _legacy_wrapper(ret: str, name: str, params) -> str:
    """A legacy routine (cublas.h) the emulator computes: the v2 routine's request with scalars by
    value, a transpose character as cublasOperation_t and a reduction's result returned
    (shim/cublas_legacy.c's legacy_*)."""
    lines = [_signature(ret, name, params) + " {", "    struct request q;", f'    legacy_begin(&q, "{name}");']
    for typ, n in params:
        if n in _SCALARS:
            lines.append(f'    request_scalar(&q, "{n}", &{n}, sizeof {n});')
        elif typ == "char":
            lines.append(f'    request_int(&q, "{n}", legacy_op({n}));')
        elif "*" in typ:
            lines.append(f'    request_ptr(&q, "{n}", (const void *){n});')
        else:
            lines.append(f'    request_int(&q, "{n}", (long long){n});')
    if ret == "void":
        lines += ["    legacy_call(&q, 0, 0);", "}"]
    else:
        lines += [f"    {ret} result = {{0}};", "    legacy_call(&q, &result, sizeof result);", "    return result;", "}"]
    return "\n".join(lines)


def _fallback(ret: str, name: str, params, refuse: str) -> str:
    """A function cudalab lacks: ``refuse`` (the shim's blas_not_supported, rand_not_supported) says so once."""
    unused = "".join(f"(void){n}; " for _, n in params)
    if ret.endswith("Status_t") or ret in ("cufftResult", "cublasStatus"):
        body = f'return {refuse}("{name}");'
    elif ret == "void":
        body = f'{refuse}("{name}");'
    else:       # a compound literal: a number, a pointer or a struct (the legacy API returns cuComplex)
        body = f'{refuse}("{name}"); return ({ret}){{0}};'
    return f"{_signature(ret, name, params)} {{ {unused}{body} }}"


def cublas_source(include: Path) -> str:
    """cublas.inc: a wrapper for each routine the emulator computes, a fallback for every other one."""
    have = defined_in(SHIM_DIR / "cublas.c", "cublas")
    out = ["/* Generated by cudalab/programs/libgen.py from cublas_api.h: do not edit. */"]
    for name, (ret, params) in sorted(declarations(include / "cublas_api.h").items()):
        if name in have:
            continue
        if blas.routine(name) is not None and params and params[0][1] == "handle":
            out.append(_wrapper(ret, name, params))
        else:
            out.append(_fallback(ret, name, params, "blas_not_supported"))
    return "\n".join(out) + "\n"


def legacy_source(include: Path) -> str:
    """cublas_legacy.inc: cublas.h's routines (those cublas_api.h does not share) as requests of the
    routine the emulator computes, or a fallback that cublasGetError reports."""
    have = defined_in(SHIM_DIR / "cublas_legacy.c", "cublas") | set(declarations(include / "cublas_api.h"))
    out = ["/* Generated by cudalab/programs/libgen.py from cublas.h: do not edit. */"]
    for name, (ret, params) in sorted(declarations(include / "cublas.h").items()):
        if name in have:
            continue
        if blas.routine(name) is not None:
            out.append(_legacy_wrapper(ret, name, params))
        else:
            out.append(_fallback(ret, name, params, "legacy_not_supported"))
    return "\n".join(out) + "\n"


def fallbacks_source(header: Path, shim: str, prefix: str, marker: str, refuse: str) -> str:
    """cublasLt.inc, curand.inc, cufft.inc, cusparse.inc: a fallback (``refuse``) for every function of
    ``header`` that the hand-written ``shim`` file (shim/cublasLt.c, curand.c, ...) does not define."""
    have = defined_in(SHIM_DIR / shim, prefix)
    out = [f"/* Generated by cudalab/programs/libgen.py from {header.name}: do not edit. */"]
    for name, (ret, params) in sorted(declarations(header, marker).items()):
        if name not in have:
            out.append(_fallback(ret, name, params, refuse))
    return "\n".join(out) + "\n"


def library_sources(include: Path) -> dict:
    """The generated files of the library shims whose headers are installed (file name -> text)."""
    parts, files = [], {}
    if (include / "cublas_api.h").exists():
        parts.append("#define CUDALAB_CUBLAS 1")
        files["cublas.inc"] = cublas_source(include)
        files["cublas_legacy.inc"] = legacy_source(include)
    if (include / "cublasLt.h").exists() and (include / "cublas_api.h").exists():
        parts.append("#define CUDALAB_CUBLASLT 1")
        files["cublasLt.inc"] = fallbacks_source(include / "cublasLt.h", "cublasLt.c", "cublasLt", "CUBLASWINAPI",
                                                   "lt_not_supported")
    if (include / "curand.h").exists():
        parts.append("#define CUDALAB_CURAND 1")
        files["curand.inc"] = fallbacks_source(include / "curand.h", "curand.c", "curand", "CURANDAPI",
                                                 "rand_not_supported")
    if (include / "cufft.h").exists():
        parts.append("#define CUDALAB_CUFFT 1")
        files["cufft.inc"] = fallbacks_source(include / "cufft.h", "cufft.c", "cufft", "CUFFTAPI",
                                                "fft_not_supported")
    if (include / "cusparse.h").exists():
        parts.append("#define CUDALAB_CUSPARSE 1")
        files["cusparse.inc"] = fallbacks_source(include / "cusparse.h", "cusparse.c", "cusparse", "CUSPARSEAPI",
                                                   "sparse_not_supported")
    files["libraries.inc"] = "/* Generated by cudalab/programs/libgen.py. */\n" + "\n".join(parts) + "\n"
    return files
