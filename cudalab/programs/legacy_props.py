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


_CUDA_H_END = "#endif /* __cuda_cuda_h__ */"
# CUDA 12 and older declared cuCtxCreate(&context, flags, device); CUDA 13's cuda.h maps the name to
# cuCtxCreate_v4, which takes a CUctxCreateParams* before the flags. Every driver-API program of those
# years (a course's JIT example, a book's module loader) makes its context with the three-argument call.
_OLD_DRIVER_CALLS = """
#if defined(__cplusplus) && !defined(__CUDA_API_VERSION_INTERNAL)
/* cudalab: cuCtxCreate as CUDA 3.2 to 12 declared it, for programs written then (no creation parameters) */
static inline CUresult cuCtxCreate(CUcontext *pctx, unsigned int flags, CUdevice dev) {
    return cuCtxCreate(pctx, (CUctxCreateParams *)0, flags, dev);
}
#endif
"""


def patched_cuda_h(text: str) -> str | None:
    """cuda.h with the three-argument cuCtxCreate back (a C++ overload), or None when it needs none
    (CUDA 12's, whose cuCtxCreate is that one) or its end is not where this expects it."""
    if "cuCtxCreate_v4" not in text or _CUDA_H_END not in text or "cudalab:" in text:
        return None
    at = text.rindex(_CUDA_H_END)
    return text[:at] + _OLD_DRIVER_CALLS + text[at:]


# NVTX 2's headers, which toolkits up to CUDA 12 shipped beside libnvToolsExt (nvcc ... -lnvToolsExt): NVTX 3,
# in nvtx3/, is the same API in headers alone (its calls do nothing unless a profiler is attached)
NVTX2_HEADERS = ("nvToolsExt.h", "nvToolsExtCuda.h", "nvToolsExtCudaRt.h", "nvToolsExtOpenCL.h", "nvToolsExtSync.h")


def _nvtx2_header(name: str) -> str:
    return (f"/* cudalab: NVTX 2's {name}, which CUDA 13 no longer ships: NVTX 3's, the same calls in headers alone */\n"
            f"#include \"nvtx3/{name}\"\n")


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
    for entry in include.iterdir():
        if entry.name != "driver_types.h" and not (entry.name == "cuda.h" and cuda_h):
            (tmp / entry.name).symlink_to(entry)
    (tmp / "driver_types.h").write_text(patched)
    if cuda_h:
        (tmp / "cuda.h").write_text(cuda_h)
    for name in NVTX2_HEADERS:
        if not (tmp / name).exists() and (include / "nvtx3" / name).exists():
            (tmp / name).write_text(_nvtx2_header(name))
    try:
        tmp.rename(folder)
    except OSError:                     # another process made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
