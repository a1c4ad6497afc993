"""NVRTC's C API through ctypes: the few calls that turn CUDA C++ into PTX, loaded on first use.

cuda-bindings' ``nvrtc`` module pulls in its driver bindings and ``cuda.pathfinder`` on import,
about a third of a second before a notebook's first kernel can compile. NVRTC itself is one
shared library with a small C API, so it is opened directly: from the nvidia-cuda-nvrtc wheel
next to the other ``nvidia`` packages, else wherever ``cuda.pathfinder`` finds it (a CUDA toolkit).
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass, field
from functools import lru_cache

_WHEEL_LIBS = ("cu13/lib/libnvrtc.so.13", "cuda_nvrtc/lib/libnvrtc.so.13", "cuda_nvrtc/lib/libnvrtc.so.12")


@lru_cache(maxsize=1)
def library() -> ctypes.CDLL:
    """libnvrtc, with the argument types of the calls below declared."""
    path = None
    try:
        import nvidia
        path = next((p for base in nvidia.__path__ for p in (os.path.join(base, w) for w in _WHEEL_LIBS)
                     if os.path.exists(p)), None)
    except ImportError:
        pass
    if path is None:
        from cuda.pathfinder import load_nvidia_dynamic_lib
        path = load_nvidia_dynamic_lib("nvrtc").abs_path
    lib = ctypes.CDLL(path)
    p, s, sz = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t
    for name, args in (("nvrtcCreateProgram", [ctypes.POINTER(p), s, s, ctypes.c_int, p, p]),
                       ("nvrtcAddNameExpression", [p, s]),
                       ("nvrtcCompileProgram", [p, ctypes.c_int, ctypes.POINTER(s)]),
                       ("nvrtcGetProgramLogSize", [p, ctypes.POINTER(sz)]), ("nvrtcGetProgramLog", [p, s]),
                       ("nvrtcGetPTXSize", [p, ctypes.POINTER(sz)]), ("nvrtcGetPTX", [p, s]),
                       ("nvrtcGetCUBINSize", [p, ctypes.POINTER(sz)]), ("nvrtcGetCUBIN", [p, s]),
                       ("nvrtcGetLoweredName", [p, s, ctypes.POINTER(s)]),
                       ("nvrtcDestroyProgram", [ctypes.POINTER(p)])):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    lib.nvrtcGetErrorString.argtypes, lib.nvrtcGetErrorString.restype = [ctypes.c_int], s
    return lib


@dataclass
class Output:
    """What one compilation gave: success, NVRTC's log, the PTX (or cubin), the lowered name expressions."""
    ok: bool
    log: str
    ptx: str = ""
    lowered: dict = field(default_factory=dict)
    cubin: bytes = b""


def _check(lib, err):
    if err:
        raise RuntimeError(f"NVRTC failed: {lib.nvrtcGetErrorString(err).decode()}")


def _bytes(lib, prog, size_fn, get_fn) -> bytes:
    n = ctypes.c_size_t()
    _check(lib, size_fn(prog, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value)
    _check(lib, get_fn(prog, buf))
    return buf.raw


def _text(lib, prog, size_fn, get_fn) -> str:
    return _bytes(lib, prog, size_fn, get_fn).rstrip(b"\x00").decode(errors="replace")


def compile_program(source: str, filename: str, options, names, cubin=False) -> Output:
    """Compile ``source`` with ``options`` (str), lowering the name expressions ``names``; the
    result is PTX, or with ``cubin`` (an ``--gpu-architecture=sm_XX`` option) a cubin."""
    lib = library()
    prog = ctypes.c_void_p()
    _check(lib, lib.nvrtcCreateProgram(ctypes.byref(prog), source.encode(), filename.encode(), 0, None, None))
    try:
        for n in names:
            _check(lib, lib.nvrtcAddNameExpression(prog, n.encode()))
        opts = (ctypes.c_char_p * max(len(options), 1))(*[o.encode() for o in options])
        err = lib.nvrtcCompileProgram(prog, len(options), opts)
        log = _text(lib, prog, lib.nvrtcGetProgramLogSize, lib.nvrtcGetProgramLog).strip()
        if err:
            return Output(False, log)
        if cubin:
            return Output(True, log, cubin=_bytes(lib, prog, lib.nvrtcGetCUBINSize, lib.nvrtcGetCUBIN))
        ptx = _text(lib, prog, lib.nvrtcGetPTXSize, lib.nvrtcGetPTX)
        lowered = {}
        for n in names:
            out = ctypes.c_char_p()
            if lib.nvrtcGetLoweredName(prog, n.encode(), ctypes.byref(out)) == 0 and out.value:
                lowered[n] = out.value.decode()
        return Output(True, log, ptx, lowered)
    finally:
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
