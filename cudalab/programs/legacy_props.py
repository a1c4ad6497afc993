"""CUDA 12's cudaDeviceProp for programs written before CUDA 13: an include folder that is the
toolkit's own except for ``driver_types.h``, whose cudaDeviceProp has the eight fields CUDA 13
removed (``clockRate``, ``memoryClockRate``, ``deviceOverlap``, ...) back, and whose cudaPointerAttributes
answers to CUDA 10's ``memoryType`` as well as ``type``.

CUDA 13 moved them to device attributes, but a decade of device queries prints ``prop.clockRate``
and CUDA by Example tests ``prop.deviceOverlap`` before it uses streams. The fields take eight of
the ints CUDA 13 reserved at the end of the struct, so every other field keeps its offset and the
struct its size; the emulator's runtime (``shim/cudart.c``) fills them from the matching
attributes. The folder holds a link to each entry of the toolkit's include folder and a patched
copy of driver_types.h. Given first with ``-I``, it is where nvcc finds ``cuda_runtime.h``, and
the quoted includes of the headers found there resolve inside it, so every header sees the
patched struct. Programs built for a real GPU keep NVIDIA's headers and runtime.

The folder's ``cuda.h`` is patched too, for the driver API's most common call: CUDA 13 made
``cuCtxCreate`` the four-argument ``cuCtxCreate_v4`` (create parameters first), so every driver
program written before it (``cuCtxCreate(&ctx, 0, dev)``: NVIDIA's old samples, a 2011 course's
multi-GPU examples) stops at a compile error. The three-argument form is still in every driver as
``cuCtxCreate_v2`` (and in cudalab's, ``shim/driver_legacy.c``); the patched header declares it and
sends a three-argument call there: by an overload in C++, by counting the arguments in C.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

REMOVED = ("clockRate", "deviceOverlap", "kernelExecTimeoutEnabled", "computeMode", "maxTexture1DLinear",
           "memoryClockRate", "singleToDoublePrecisionPerfRatio", "cooperativeMultiDeviceLaunch")
_STRUCT = re.compile(r"struct __device_builtin__ cudaDeviceProp\s*\{(.*?)\bint\s+reserved\[(\d+)\];", re.S)


_POINTER_TYPE = re.compile(r"(struct __device_builtin__ cudaPointerAttributes\s*\{.*?)enum cudaMemoryType type;", re.S)


def _memory_type_back(text: str) -> str:
    """cudaPointerAttributes with CUDA 10's ``memoryType`` beside ``type``, which replaced it in CUDA 11: the
    same field under both names (an anonymous union), so a UVA lesson's ``attributes.memoryType`` reads it."""
    return _POINTER_TYPE.sub(r"\1union { enum cudaMemoryType type; enum cudaMemoryType memoryType; };  "
                             r"/* cudalab: CUDA 10's name too */", text, count=1)


def patched_driver_types(text: str) -> str | None:
    """driver_types.h with the removed fields in cudaDeviceProp's reserved space, or None when its
    struct has them already (CUDA 12) or has no room for them."""
    m = _STRUCT.search(text)
    if not m or int(m.group(2)) < len(REMOVED) or any(re.search(rf"\b{f}\s*;", m.group(1)) for f in REMOVED):
        return None
    fields = "".join(f"int {f}; " for f in REMOVED)
    return _memory_type_back(text[:m.start()] + "#define CUDALAB_LEGACY_DEVICE_PROP 1  /* cudalab: CUDA 12's fields below */\n"
                             + text[m.start():m.end(1)] + fields
                             + f"int reserved[{int(m.group(2)) - len(REMOVED)}];" + text[m.end():])


# NVTX 2's headers, which toolkits up to CUDA 12 shipped beside libnvToolsExt (nvcc ... -lnvToolsExt): NVTX 3,
# in nvtx3/, is the same API in headers alone (its calls do nothing unless a profiler is attached)
NVTX2_HEADERS = ("nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h", "nvToolsExtOpenCL.h", "nvToolsExtSync.h")


def _nvtx2_header(name: str) -> str:
    return (f"/* cudalab: NVTX 2's {name}, which CUDA 13 no longer ships: NVTX 3's, the same calls in headers alone */\n"
            f"#include \"nvtx3/{name}\"\n")


_CTX_CREATE_MACRO = "#define cuCtxCreate                         cuCtxCreate_v4\n"
_CTX_CREATE_DECL = ("CUresult CUDAAPI cuCtxCreate(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, "
                    "unsigned int flags, CUdevice dev);\n")


def patched_cuda_h(text: str) -> str | None:
    """cuda.h with the three-argument cuCtxCreate of CUDA 3.2 to 12 back (module docstring), or None
    when the header does not name cuCtxCreate_v4 as CUDA 13's does. cudalab's own runtime, which
    lists ``cuCtxCreate`` by name for cuGetProcAddress, defines CUDALAB_RUNTIME_SHIM and keeps the
    plain macro."""
    if text.count(_CTX_CREATE_MACRO) != 1 or text.count(_CTX_CREATE_DECL) != 1:
        return None
    macro = ("#if defined(__cplusplus) || defined(CUDALAB_RUNTIME_SHIM)\n" + _CTX_CREATE_MACRO +
             "#else  /* cudalab: C programs written before CUDA 13 call cuCtxCreate(&ctx, flags, dev) */\n"
             "#define __cudalab_ctx_create(a, b, c, d, name, ...) name\n"
             "#define cuCtxCreate(...) __cudalab_ctx_create(__VA_ARGS__, cuCtxCreate_v4, cuCtxCreate_v2, 0)(__VA_ARGS__)\n"
             "#endif\n")
    declaration = (_CTX_CREATE_DECL +
                   "/* cudalab: cuCtxCreate as CUDA 3.2 to 12 declared it, still in every driver */\n"
                   "CUresult CUDAAPI cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);\n"
                   "#if defined(__cplusplus)\n"
                   "extern \"C++\" inline CUresult cuCtxCreate_v4(CUcontext *pctx, unsigned int flags, CUdevice dev)\n"
                   "{ return cuCtxCreate_v2(pctx, flags, dev); }\n"
                   "#endif\n")
    return text.replace(_CTX_CREATE_MACRO, macro).replace(_CTX_CREATE_DECL, declaration)


def legacy_include(include: Path, cache: Path) -> Path | None:
    """The include folder described above, made once in ``cache``; None when the toolkit's
    cudaDeviceProp needs nothing back."""
    patched = patched_driver_types((include / "driver_types.h").read_text())
    if patched is None:
        return None
    cuda_h = patched_cuda_h((include / "cuda.h").read_text()) if (include / "cuda.h").exists() else None
    nvtx = "".join(_nvtx2_header(n) for n in NVTX2_HEADERS)
    folder = cache / f"include-{hashlib.sha256((str(include) + patched + (cuda_h or '') + nvtx).encode()).hexdigest()[:20]}"
    if folder.exists():
        return folder
    tmp = folder.with_name(f"{folder.name}.tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    own = {"driver_types.h": patched, **({"cuda.h": cuda_h} if cuda_h else {})}
    for entry in include.iterdir():
        if entry.name not in own:
            (tmp / entry.name).symlink_to(entry)
    for name, text in own.items():
        (tmp / name).write_text(text)
    for name in NVTX2_HEADERS:
        if not (tmp / name).exists() and (include / "nvtx3" / name).exists():
            (tmp / name).write_text(_nvtx2_header(name))
    try:            # (publish.publish's rename, spelled out: courses_check copies this file alone to a GPU machine)
        tmp.rename(folder)
    except OSError:                     # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
