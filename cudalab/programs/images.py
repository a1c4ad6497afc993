"""The PTX inside a module image a driver-API program loads (cuModuleLoad, cuModuleLoadData(Ex)).

cudalab emulates PTX, never a GPU's machine code (SASS). An image is one of three things:

- **PTX text** (``nvcc -ptx``, ``nvrtcGetPTX``): loaded as it is.
- **a fat binary** (``nvcc -fatbin``): a container of entries, each PTX or an ELF cubin for one
  architecture; its PTX entry is used (CUDA 13's nvcc compresses entries with zstd: undone with the
  system's libzstd). ``-gencode arch=compute_90,code=sm_90`` alone stores no PTX.
- **an ELF cubin** (``nvcc -cubin``, ``nvrtcGetCUBIN``): SASS for one architecture, no PTX.

Where an image holds no PTX cudalab can read, it looks for the PTX it was built from, recorded when
the image was made: ``cudalab nvcc`` (the nvcc command of a build, run unchanged, whose -fatbin or
-cubin output's PTX is kept in the cache by the output's SHA-256: ``record``), and NVRTC's
``nvrtcGetCUBIN`` in the program itself (the shim keeps the program's PTX beside each cubin it hands
out, and sends the PTX in its place). Anything else is refused with a message that says how to build
the image so that it carries PTX.
"""
from __future__ import annotations

import hashlib
import struct
from pathlib import Path

from ..errors import CudaError

FATBIN_MAGIC = 0xBA55ED50
ELF_MAGIC = b"\x7fELF"
_PTX_KIND, _ELF_KIND = 1, 2
_COMPRESSED = 0x2000        # an entry's flags: its payload is compressed


def _cache() -> Path:
    from .build import cache_dir
    folder = cache_dir() / "module-ptx"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _key(image: bytes) -> str:
    return hashlib.sha256(image).hexdigest()


def record(image: bytes, ptx: str) -> None:
    """Keep ``ptx`` as the PTX of ``image`` (a cubin or fat binary built from it)."""
    path = _cache() / f"{_key(image)}.ptx"
    tmp = path.with_suffix(f".tmp{id(image)}")
    tmp.write_text(ptx)
    tmp.replace(path)


def recorded(image: bytes) -> str | None:
    path = _cache() / f"{_key(image)}.ptx"
    return path.read_text() if path.exists() else None


def kind_of(image: bytes) -> str:
    if image[:4] == ELF_MAGIC:
        return "cubin"
    if len(image) >= 4 and struct.unpack_from("<I", image)[0] == FATBIN_MAGIC:
        return "fatbin"
    return "ptx"


def fatbin_entries(image: bytes):
    """(kind, architecture, compressed, payload) of each entry of a fat binary. An entry's header (as
    nvcc 13 writes it): kind (1 PTX, 2 ELF) u16, version u16, header size u32, padded payload size u32 at 8,
    compressed size u32 at 16, architecture u32 at 28, flags u64 at 40 (0x2000 or 0x8000: compressed)."""
    _, _, header, size = struct.unpack_from("<IHHQ", image)
    pos, end = header, min(len(image), header + size)
    while pos + 48 <= end:
        kind, _, entry_header, padded = struct.unpack_from("<HHII", image, pos)
        if entry_header == 0:
            break
        arch = struct.unpack_from("<I", image, pos + 28)[0]
        flags = struct.unpack_from("<Q", image, pos + 40)[0]
        payload = image[pos + entry_header: pos + entry_header + padded]
        if flags & (_COMPRESSED | 0x8000):
            stored, full = struct.unpack_from("<I", image, pos + 16)[0], struct.unpack_from("<Q", image, pos + 56)[0]
            payload = _unzstd(payload[:stored], full)
        yield kind, arch, payload is None, payload or b""
        pos += entry_header + padded


def _unzstd(data: bytes, size: int) -> bytes | None:
    """zstd-compressed bytes (nvcc 13's fat binary entries) through the system's libzstd, or None."""
    import ctypes
    import ctypes.util
    try:
        lib = ctypes.CDLL(ctypes.util.find_library("zstd") or "libzstd.so.1")
    except OSError:
        return None
    out = ctypes.create_string_buffer(size + 1)
    lib.ZSTD_decompress.restype = ctypes.c_size_t
    lib.ZSTD_isError.argtypes = [ctypes.c_size_t]
    n = lib.ZSTD_decompress(out, ctypes.c_size_t(size + 1), data, ctypes.c_size_t(len(data)))
    return None if lib.ZSTD_isError(n) else out.raw[:n]


def ptx_of(image: bytes) -> str:
    """The PTX text to emulate for ``image``, or CudaError (CUDA_ERROR_INVALID_IMAGE,
    CUDA_ERROR_NO_BINARY_FOR_GPU) saying why there is none."""
    kind = kind_of(image)
    if kind == "ptx":
        text = image.split(b"\0", 1)[0].decode(errors="replace")
        if ".entry" not in text and ".version" not in text:
            raise CudaError("the module image is neither PTX text nor a cubin or fat binary (cuModuleLoadData "
                            "was given something else).", "cudaErrorInvalidKernelImage")
        return text
    found = recorded(image)
    if found is not None:
        return found
    compressed = False
    if kind == "fatbin":
        for entry_kind, _, packed, payload in fatbin_entries(image):
            if entry_kind == _PTX_KIND and not packed:
                return payload.split(b"\0", 1)[0].decode(errors="replace")
            compressed |= entry_kind == _PTX_KIND
    what = ("a fat binary whose PTX is compressed (and libzstd was not found: add -no-compress)" if compressed else
            "a fat binary of GPU machine code (SASS) only" if kind == "fatbin" else "a cubin (GPU machine code, SASS)")
    raise CudaError(f"the module image is {what}; cudalab emulates PTX, not a GPU's machine code. Build it with "
                    "`cudalab nvcc` in place of nvcc (the same command; cudalab keeps the PTX it was built from), "
                    "or load PTX instead (nvcc -ptx, or nvrtcGetPTX after NVRTC).", "cudaErrorNoKernelImageForDevice")
