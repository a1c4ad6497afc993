"""Sources generated for cudalab's libcudart shim when it is built: the error table, and a fallback
for every CUDA runtime function the shim does not implement.

A program that calls a runtime function cudalab lacks (IPC, graphics interop, ...) still links:
the fallback prints, once, which function and feature the emulated GPU does not support and
returns ``cudaErrorNotSupported``, as a GPU without the feature would. The list is not written by
hand: it is every ``extern __host__`` declaration of the nvidia-cuda-runtime wheel's
``cuda_runtime_api.h`` and ``cuda_profiler_api.h`` that no shim source defines, so a new CUDA
release's functions are covered the day its headers are. Programs built with
``--default-stream per-thread`` call the ``_ptds``/``_ptsz`` variants; those forward to the
functions they name, marking the call so that its stream 0 is the calling thread's default stream.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..runtime.core.errors import c_table

SHIM_DIR = Path(__file__).parent / "shim"
HEADERS = ("cuda_runtime_api.h", "cuda_profiler_api.h")
# Interop headers need OpenGL/EGL/VDPAU headers the shim is not built with: their functions get
# definitions without a prototype (C links by name), all answering cudaErrorNotSupported.
INTEROP_HEADERS = ("cuda_gl_interop.h", "cuda_egl_interop.h", "cuda_vdpau_interop.h")

# What each family of runtime functions is for, in a student's words (first match wins).
FEATURES = [
    (("cudaIpc", "cudaMemPoolExport", "cudaMemPoolImport"), "sharing memory or events with another process (IPC)"),
    (("cudaGraphics", "cudaGL", "cudaEGL", "cudaVDPAU", "cudaD3D", "cudaWGL"),
     "graphics interoperability (OpenGL, EGL, Direct3D, VDPAU)"),
    (("cudaImportExternal", "cudaExternal", "cudaSignalExternal", "cudaWaitExternal", "cudaDestroyExternal",
      "cudaGraphAddExternal", "cudaGraphExternal", "cudaGraphExecExternal"),
     "external memory and semaphores (Vulkan and Direct3D interop)"),
    (("cudaMemcpyPeer", "cudaMemcpy3DPeer"), "copies between GPUs (the emulator is one GPU)"),
    (("cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmapped", "cudaFreeArray", "cudaFreeMipmapped",
      "cudaArray", "cudaGetMipmapped", "cudaMemcpyToArray", "cudaMemcpyFromArray", "cudaMemcpyArray",
      "cudaMemcpy2DToArray", "cudaMemcpy2DFromArray", "cudaMemcpy2DArray", "cudaCreateTextureObject",
      "cudaDestroyTextureObject", "cudaGetTextureObject", "cudaCreateSurfaceObject", "cudaDestroySurfaceObject",
      "cudaGetSurfaceObject", "cudaCreateChannelDesc", "cudaGetChannelDesc", "cudaDeviceGetTexture1DLinear"),
     "CUDA arrays, textures and surfaces"),
    (("cudaMalloc3D", "cudaMemcpy3D", "cudaMemset3D"), "3D allocations and copies"),
    (("cudaLibrary", "cudaKernel"), "loading device code at run time (the library API)"),
    (("cudaUserObject", "cudaGraphRetainUserObject", "cudaGraphReleaseUserObject"), "user objects of CUDA graphs"),
    (("cudaDevResource", "cudaDeviceGetDevResource", "cudaGreenCtx", "cudaExecutionCtx", "cudaStreamGetDevResource",
      "cudaDevSmResource", "cudaDeviceGetExecutionCtx"), "green contexts and execution contexts"),
    (("cudaLogs",), "driver logs"),
    (("cudaMemcpyBatch", "cudaMemcpy3DBatch"), "batched copies"),
    (("cudaDeviceFlushGPUDirectRDMAWrites", "cudaDeviceRegisterAsyncNotification",
      "cudaDeviceUnregisterAsyncNotification"), "GPUDirect RDMA and driver notifications"),
]

_DECL = re.compile(r"extern\s+([^;{}]*?)\bCUDARTAPI\s+(\w+)\s*\(([^;{}]*?)\)\s*;", re.S)
_DEFINED = re.compile(r"^(?!static\b)[A-Za-z_][\w \t\*]*?\b(cuda\w+|__cuda\w+)\s*\(", re.M)
_PER_THREAD = re.compile(r"#define\s+(cuda\w+)\s+__CUDART_API_PT(DS|SZ)\(\1\)")
_QUALIFIERS = ("__host__", "__cudart_builtin__", "__CUDA_DEPRECATED", "CUDART_DEVICE", "extern")


def _strip_comments(text: str) -> str:
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def _defaults_removed(params: str) -> str:
    """``int x __dv(0)`` -> ``int x``; C++ default values go too."""
    out, i = [], 0
    while i < len(params):
        if params.startswith("__dv(", i):
            depth, i = 1, i + 5
            while i < len(params) and depth:
                depth += {"(": 1, ")": -1}.get(params[i], 0)
                i += 1
            continue
        out.append(params[i])
        i += 1
    return re.sub(r"\s*=\s*[^,)]+", "", "".join(out))


def declarations(include: Path, headers=HEADERS) -> dict:
    """name -> (return type, parameter list) of every host runtime function the headers declare."""
    found = {}
    for header in headers:
        if not (include / header).exists():
            continue
        text = _strip_comments((include / header).read_text())
        for quals, name, params in _DECL.findall(text):
            words = quals.split()
            if "__host__" not in words or name in found:
                continue
            ret = " ".join(w for w in words if w not in _QUALIFIERS)
            found[name] = (ret, " ".join(_defaults_removed(params).split()))
    return found


def per_thread_variants(include: Path) -> dict:
    """``cudaMemcpy_ptds`` -> ``cudaMemcpy`` (the names --default-stream per-thread programs call)."""
    text = (include / "cuda_runtime_api.h").read_text()
    return {f"{name}_pt{kind.lower()}": name for name, kind in _PER_THREAD.findall(text)}


def defined_in_shim() -> set:
    return {m for f in sorted(SHIM_DIR.glob("*.c")) for m in _DEFINED.findall(_strip_comments(f.read_text()))}


def feature_of(name: str) -> str:
    for prefixes, feature in FEATURES:
        if name.startswith(prefixes):
            return feature
    return "this runtime call"


def _argument_names(params: str) -> list:
    if params.strip() in ("", "void"):
        return []
    names = []
    for p in params.split(","):
        m = re.search(r"(\w+)\s*(\[[^\]]*\])?\s*$", p.strip())
        names.append(m.group(1))
    return names


def _body(ret: str, call: str) -> str:
    if ret == "cudaError_t":
        return f"{{ return not_supported({call}); }}"
    if ret == "void":
        return f"{{ not_supported({call}); }}"
    if ret.startswith("struct"):
        return f"{{ {ret} r; memset(&r, 0, sizeof r); not_supported({call}); return r; }}"
    if "*" in ret:
        return f"{{ not_supported({call}); return 0; }}"
    return f"{{ not_supported({call}); return ({ret})0; }}"


def fallbacks(include: Path) -> str:
    """C definitions for every declared runtime function the shim lacks, and per-thread forwards."""
    decls = declarations(include)
    have = defined_in_shim()
    out = ['/* Generated by cudalab/programs/shimgen.py from the CUDA headers: do not edit. */',
           "static cudaError_t not_supported(const char *call, const char *feature) {",
           "    char msg[512];",
           '    snprintf(msg, sizeof msg, "cudalab: %s is not supported by the emulated GPU (%s), so it returns '
           'cudaErrorNotSupported. Run the program on a real GPU (cudalab run --device gpu) to use it.", '
           "call, feature);",
           "    say_once(msg);",
           "    return ret(cudaErrorNotSupported);",
           "}"]
    for name, (ret, params) in sorted(decls.items()):
        if name in have:
            continue
        call = f'"{name}", "{feature_of(name)}"'
        out.append(f"{ret} {name}({params}) {_body(ret, call)}")
    for name, (ret, _) in sorted(declarations(include, INTEROP_HEADERS).items()):
        if name not in have and name not in decls and ret == "cudaError_t":
            out.append(f'cudaError_t {name}() {{ return not_supported("{name}", "{feature_of(name)}"); }}')
    for variant, name in sorted(per_thread_variants(include).items()):
        if variant in have or variant in decls or name not in decls:
            continue
        ret, params = decls[name]
        args = ", ".join(_argument_names(params))
        out.append(f"{ret} {variant}({params}) {{ per_thread_call++; {ret} r = {name}({args}); per_thread_call--; "
                   "return r; }")
    return "\n".join(out) + "\n"


_DRIVER_DECL = re.compile(r"^(?:__CUDA_DEPRECATED\s+)?CUresult\s+CUDAAPI\s+(cu\w+)\s*\(([^;{}]*?)\)\s*;", re.S | re.M)
_DRIVER_DEFINED = re.compile(r"^CUresult\s+CUDAAPI\s+(cu\w+)\s*\(", re.M)
_DRIVER_ERROR = re.compile(r"^\s*(CUDA_ERROR_\w+|CUDA_SUCCESS)\s*=\s*(\d+)", re.M)


def _driver_header(include: Path) -> str:
    """cuda.h without its closing block of superseded versions (declared there under their _v2 names)."""
    text = (include / "cuda.h").read_text()
    cut = text.rfind("#if defined(__CUDA_API_VERSION_INTERNAL)")
    return _strip_comments(text[:cut] if cut > 0 else text)


def driver_fallbacks(include: Path) -> str:
    """The driver API's error names (cuGetErrorName) and a definition for every function cuda.h declares
    that the shim lacks: a program linked -lcuda always links, and a call cudalab does not emulate prints
    its name once and answers CUDA_ERROR_NOT_SUPPORTED. cuda.h's macros give each its current version's
    symbol (cuMemAlloc -> cuMemAlloc_v2), as in the program."""
    if not (include / "cuda.h").exists():
        return "static const struct { int code; const char *name; } DRIVER_ERRORS[] = {{0, \"CUDA_SUCCESS\"}};\n"
    text = _driver_header(include)
    errors = _DRIVER_ERROR.findall(text)
    out = ["/* Generated by cudalab/programs/shimgen.py from cuda.h: do not edit. */",
           "static const struct { int code; const char *name; } DRIVER_ERRORS[] = {",
           *[f'    {{{code}, "{name}"}},' for name, code in errors], "};"]
    return "\n".join(out) + "\n"


def driver_stubs(include: Path) -> str:
    """See driver_fallbacks: the functions, included after the shim's own driver functions."""
    if not (include / "cuda.h").exists():
        return ""
    have = {m for f in sorted(SHIM_DIR.glob("driver*.c")) for m in _DRIVER_DEFINED.findall(_strip_comments(f.read_text()))}
    out = ["/* Generated by cudalab/programs/shimgen.py from cuda.h: do not edit. */",
           "static CUresult driver_not_supported(const char *call) {",
           "    char msg[400];",
           '    snprintf(msg, sizeof msg, "cudalab: the CUDA driver API\'s %s is not emulated, so it returns '
           'CUDA_ERROR_NOT_SUPPORTED. Run the program on a real GPU (cudalab run --device gpu) to use it.", call);',
           "    say_once(msg);",
           "    return CUDA_ERROR_NOT_SUPPORTED;",
           "}"]
    seen = set()
    for name, params in _DRIVER_DECL.findall(_driver_header(include)):
        if name in have or name in seen:
            continue
        seen.add(name)
        out.append(f'CUresult CUDAAPI {name}({" ".join(params.split())}) {{ return driver_not_supported("{name}"); }}')
    return "\n".join(out) + "\n"


# old symbols whose function the current version's is, argument for argument (their new version changed what
# they do, not how they are called): a program that dlsyms the old name (matrixMulDynlinkJIT) gets the same
# function. Old symbol -> the name in C whose current symbol cuda.h's macros give.
SAME_ABI_OLD_NAMES = {n: n for n in ("cuCtxDestroy", "cuCtxPopCurrent", "cuCtxPushCurrent", "cuStreamDestroy",
                                     "cuEventDestroy", "cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxReset",
                                     "cuDevicePrimaryCtxSetFlags", "cuEventElapsedTime", "cuIpcOpenMemHandle",
                                     "cuMemHostRegister", "cuGraphicsResourceSetMapFlags")}
SAME_ABI_OLD_NAMES["cuTexRefSetAddress2D_v2"] = "cuTexRefSetAddress2D"


def driver_names(include: Path) -> list:
    """Every driver function the shim defines, by its name in C (before cuda.h's version macros)."""
    have = [m for f in sorted(SHIM_DIR.glob("driver*.c")) for m in _DRIVER_DEFINED.findall(_strip_comments(f.read_text()))]
    if (include / "cuda.h").exists():
        have += [name for name, _ in _DRIVER_DECL.findall(_driver_header(include))]
    return list(dict.fromkeys(have))


def driver_symbols(include: Path) -> str:
    """The table cudalab_driver_symbol() reads: each driver function's symbol (cuda.h's macros applied:
    cuMemAlloc_v2) and its address, reached through a hidden alias, so a program that defines the same name
    itself (a function pointer called cuInit, filled from dlsym of libcuda.so.1) does not replace it here."""
    names = driver_names(include)
    out = ["/* Generated by cudalab/programs/shimgen.py: do not edit. */",
           "#define CUDALAB_XSTR(x) CUDALAB_STR(x)", "#define CUDALAB_STR(x) #x"]
    out += [f'extern __typeof__({n}) cudalab_local_{n} __attribute__((alias(CUDALAB_XSTR({n})), visibility("hidden")));'
            for n in names]
    out.append("static const struct { const char *symbol; void *fn; } DRIVER_SYMBOLS[] = {")
    out += [f"    {{CUDALAB_XSTR({n}), (void *)cudalab_local_{n}}}," for n in names]
    out += [f'    {{"{old}", (void *)cudalab_local_{n}}},' for old, n in SAME_ABI_OLD_NAMES.items() if n in names]
    out.append("};")
    return "\n".join(out) + "\n"


def shim_sources(include: Path) -> dict:
    """Every generated file the shim's build needs: file name -> text."""
    from .libgen import library_sources
    return {"errors.inc": c_table(), "fallbacks.inc": fallbacks(include), "driver_errors.inc": driver_fallbacks(include),
            "driver_fallbacks.inc": driver_stubs(include), "driver_symbols.inc": driver_symbols(include),
            **library_sources(include)}
