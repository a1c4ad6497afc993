"""Checking a launch before it runs: shapes, shared memory and arguments, with CUDA's error names.

Bad shapes answer ``cudaErrorInvalidValue``, which is what CUDA 13 returns on an H100 for a block
of 2048 threads, a zero-size grid, blockDim.z = 65 or gridDim.y = 65536 (older CUDA releases said
cudaErrorInvalidConfiguration). Limits come from the device profile (compute capability 8.0 by
default): 1024 threads per block,
block dims (1024, 1024, 64), grid dims (2^31-1, 65535, 65535), 48 KiB of shared memory per block
without opt-in. Arguments are marshalled into the kernel's parameter buffer the way the CUDA
driver does: each at its alignment, pointers as 64-bit addresses, scalars converted to the
declared type only when the value fits.
"""
from __future__ import annotations

import functools
import struct
from dataclasses import dataclass

import numpy as np

from ..emulator.dtypes import dtype as ptx_dtype
from ..errors import LaunchError


@dataclass(frozen=True)
class Limits:
    """What a launch may ask for on one device (``device.profiles.Profile.limits()`` makes them)."""

    max_threads_per_block: int
    max_block: tuple
    max_grid: tuple
    shared_per_block: int
    shared_per_block_optin: int


def dim3(v, what: str, kernel: str = ""):
    """An int or a tuple of up to 3 ints -> (x, y, z)."""
    if isinstance(v, (int, np.integer)):
        t = (int(v),)
    elif isinstance(v, (tuple, list)) and 1 <= len(v) <= 3 and all(isinstance(x, (int, np.integer)) for x in v):
        t = tuple(int(x) for x in v)
    else:
        where = f"{kernel}: " if kernel else ""
        raise LaunchError(f"{where}the {what} must be an int or a tuple of 1 to 3 ints, like 256 or (16, 16); "
                          f"got {v!r}.", "cudaErrorInvalidValue")
    return t + (1,) * (3 - len(t))


def check_config(kernel: str, grid, block, shared_dynamic: int, shared_static: int, limits: Limits | None = None):
    if limits is None:
        from ..device import current
        limits = current().limits()
    g, b = dim3(grid, "grid", kernel), dim3(block, "block", kernel)
    for name, d in (("grid", g), ("block", b)):
        if any(x < 1 for x in d):
            raise LaunchError(f"{kernel}: every {name} dimension must be at least 1, but the {name} is {d}. "
                              "A launch with zero threads or blocks is invalid.", "cudaErrorInvalidValue")
    threads = b[0] * b[1] * b[2]
    if threads > limits.max_threads_per_block:
        raise LaunchError(f"{kernel}: a block may have at most {limits.max_threads_per_block} threads, but "
                          f"block {b} has {threads}. Use smaller blocks and more of them.",
                          "cudaErrorInvalidValue")
    for axis, (x, m) in enumerate(zip(b, limits.max_block)):
        if x > m:
            raise LaunchError(f"{kernel}: blockDim.{'xyz'[axis]} may be at most {m}, but it is {x}.",
                              "cudaErrorInvalidValue")
    for axis, (x, m) in enumerate(zip(g, limits.max_grid)):
        if x > m:
            raise LaunchError(f"{kernel}: gridDim.{'xyz'[axis]} may be at most {m:,}, but it is {x:,}.",
                              "cudaErrorInvalidValue")
    if shared_dynamic < 0:
        raise LaunchError(f"{kernel}: dynamic shared memory cannot be negative ({shared_dynamic}).",
                          "cudaErrorInvalidValue")
    total = shared_static + shared_dynamic
    if total > limits.shared_per_block:
        hint = "Use smaller tiles."
        if total <= limits.shared_per_block_optin:
            hint = ("Use smaller tiles, or opt in to more with cudaFuncSetAttribute(kernel, "
                    "cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) (in Python: kernel.set_attribute("
                    f"'MaxDynamicSharedMemorySize', bytes)), up to {limits.shared_per_block_optin:,} bytes here.")
        raise LaunchError(f"{kernel}: the block needs {total:,} bytes of shared memory ({shared_static:,} static + "
                          f"{shared_dynamic:,} dynamic), more than the {limits.shared_per_block:,} bytes a block may "
                          f"use. {hint}", "cudaErrorInvalidValue")
    return g, b


def check_clusters(kernel: str, cluster, profile):
    """Thread block clusters need compute capability 9.0 (cudaErrorNotSupported before); a cluster
    of one block is no cluster. The cluster's shape (a divisor of the grid, at most 8 blocks or 16
    non-portable, agreeing with __cluster_dims__) is checked by the engine, as the driver checks it
    (emulator/cluster.py)."""
    blocks = (cluster,) if isinstance(cluster, (int, np.integer)) else cluster or ()
    if any(x != 1 for x in blocks) and not profile.has("clusters"):
        cc = profile.cc
        raise LaunchError(f"{kernel}: thread block clusters need compute capability 9.0; the selected device "
                          f"{profile.gpu or profile.name} has {cc[0]}.{cc[1]}. Choose one with "
                          "cudalab.set_device('H100').", "cudaErrorNotSupported")


def _describe(v):
    if isinstance(v, np.ndarray):
        return f"a numpy array ({v.dtype}, shape {v.shape})"
    return f"{type(v).__name__} {v!r}"


def marshal(kernel: str, params, ctypes, args, pointer_of):
    """Pack ``args`` into the parameter buffer.

    params: ir.Param list (PTX types and sizes); ctypes: C++ types from the mangled name or None;
    pointer_of(arg) -> device address for arrays (or None if ``arg`` is not an array).
    Returns the buffer (bytes). What depends on the kernel alone (each parameter's offset, its
    C++ type, how a number is packed) is worked out once per kernel (``_layout``); a message's
    wording ("argument 2 of saxpy (float)") only where one is raised."""
    if len(args) != len(params):
        sig = ", ".join(t.name for t in ctypes) if ctypes else f"{len(params)} parameters"
        raise LaunchError(f"{kernel} takes {len(params)} argument{'s' * (len(params) != 1)} ({sig}), "
                          f"but {len(args)} {'were' if len(args) != 1 else 'was'} given.", "cudaErrorInvalidValue")
    buf = bytearray()
    for k, ((p, ct, packer), a) in enumerate(zip(_layout(params, ctypes), args)):
        if len(buf) % p.align:
            buf += bytes(-len(buf) % p.align)
        if packer is not None and type(a) in packer[0]:
            raw = packer[1](a)
            if raw is not None:
                buf += raw
                continue
        ptr = pointer_of(a)
        if ptr is not None:
            if ct is not None and not ct.pointer:
                raise LaunchError(f"{_where(kernel, k, ct)} is a {ct.name} value, but you passed {_describe(a)}.",
                                  "cudaErrorInvalidValue")
            _check_pointee(kernel, k, ct, a)
            if p.size != 8:
                raise LaunchError(f"{_where(kernel, k, ct)} is not a pointer, but you passed {_describe(a)}.",
                                  "cudaErrorInvalidValue")
            buf += int(ptr).to_bytes(8, "little")
            continue
        if ct is not None and ct.pointer:
            if a is None or (isinstance(a, (int, np.integer)) and int(a) == 0):
                buf += b"\0" * 8          # a null pointer, allowed (the kernel must not use it)
                continue
            if isinstance(a, (int, np.integer)):
                buf += (int(a) & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little")   # a raw device address
                continue
            raise LaunchError(f"{_where(kernel, k, ct)} is a pointer: pass a numpy array or a device array, not "
                              f"{_describe(a)}.", "cudaErrorInvalidValue")
        buf += _scalar_bytes(_where(kernel, k, ct), p, ct, a)
    return bytes(buf)


def _where(kernel: str, k: int, ct) -> str:
    """How a message names argument ``k``: "argument 2 of saxpy (float)"."""
    return f"argument {k + 1} of {kernel}" + (f" ({ct.name})" if ct else "")


_LAYOUTS: dict = {}     # id(params) -> (params, ctypes, [(param, C++ type, packer or None)])

_INTS = frozenset({int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})
_FLOATS = frozenset({float, np.float32, np.float64})


def _layout(params, ctypes) -> list:
    """Each parameter's (ir.Param, C++ type or None, packer): a packer, for a number parameter, is
    (the argument types it takes, pack(value) -> bytes or None), which packs what ``_scalar_bytes``
    would pack for those types with ``struct`` (1 us less an argument than ``np.array(v).tobytes()``)
    and answers None where that one should decide (a value out of range: its message)."""
    hit = _LAYOUTS.get(id(params))
    if hit is not None and hit[0] is params and hit[1] is ctypes:
        return hit[2]
    rows = []
    for k, p in enumerate(params):
        ct = ctypes[k] if ctypes and k < len(ctypes) else None
        rows.append((p, ct, _packer(p, ct)))
    if len(_LAYOUTS) > 4096:
        _LAYOUTS.clear()
    _LAYOUTS[id(params)] = (params, ctypes, rows)
    return rows


def _packer(p, ct):
    """(argument types, pack) for a number parameter of ``_layout``, or None (a pointer, a struct, bytes)."""
    if (ct is not None and ct.pointer) or p.type.startswith("b"):
        return None
    try:
        target = np.dtype(ct.numpy) if ct is not None and ct.numpy else ptx_dtype(p.type)
        if target.itemsize != p.size:
            target = ptx_dtype(p.type)
    except Exception:       # noqa: BLE001 - a type _scalar_bytes words the message for
        return None
    if target.itemsize != p.size:
        return None
    if target.kind in "iu":
        letter = {1: "b", 2: "h", 4: "i", 8: "q"}[target.itemsize]
        fmt = struct.Struct("<" + (letter if target.kind == "i" else letter.upper()))
        info = np.iinfo(target)
        lo, hi, pack = int(info.min), int(info.max), fmt.pack

        def pack_int(a):
            v = int(a)
            return pack(v) if lo <= v <= hi else None
        return _INTS, pack_int
    if target.kind == "f" and target.itemsize in (4, 8):
        pack = struct.Struct("<f" if target.itemsize == 4 else "<d").pack

        def pack_float(a):
            if type(a) is int and not -(1 << 53) <= a <= 1 << 53:
                return None
            try:
                return pack(a)      # (a C cast from double, as numpy's: the same rounding, NaN and infinities)
            except OverflowError:   # (past float's range: numpy makes it an infinity)
                return None
        return _FLOATS | {int}, pack_float
    return None


_ANY_POINTEE = {None, "int8", "uint8"}        # void*, char*, unsigned char*: raw bytes of anything


_POINTEES_OK: set = set()     # (C++ type, array dtype, a numpy array?) that passed _check_pointee


def _check_pointee(kernel, k, ct, a):
    """An array passed for ``float*`` must hold float32: the kernel reads its bytes as floats.
    (What passed once is kept: np.dtype and its comparisons cost microseconds, at every argument of
    every launch.)"""
    dt = getattr(a, "dtype", None)
    if ct is None or dt is None or ct.numpy in _ANY_POINTEE or ct.base in ("void", "const void"):
        return
    key = (ct, dt, isinstance(a, np.ndarray))
    if key in _POINTEES_OK:
        return
    _check_dtype(_where(kernel, k, ct), ct, a, dt)
    if len(_POINTEES_OK) > 1024:
        _POINTEES_OK.clear()
    _POINTEES_OK.add(key)


def _check_dtype(where, ct, a, dt):
    """_check_pointee's test itself: raises LaunchError where ``a``'s elements are not the pointee's type."""
    if not isinstance(a, np.ndarray) and np.dtype(dt) == np.uint8:
        return          # a device buffer of raw bytes (like cudaMalloc's) may hold anything
    want = np.dtype(ct.numpy)
    if np.dtype(dt) != want:
        raise LaunchError(f"{where} points to {ct.base.replace('const ', '')} values ({want}), but the array you "
                          f"passed holds {np.dtype(dt)}: the kernel would read its bytes as the wrong type. "
                          f"Convert it first, e.g. a.astype(np.{want}).", "cudaErrorInvalidValue")


@functools.lru_cache(maxsize=None)
def _iinfo(dtype):
    """np.iinfo, kept: a launch asks it of each integer argument, and making one took 4 us."""
    return np.iinfo(dtype)


def _scalar_bytes(where, p, ct, a):
    if isinstance(a, np.ndarray) and a.ndim == 0:
        a = a[()]
    if isinstance(a, np.generic) and a.dtype.itemsize == p.size and (ct is None or ct.numpy is None) \
            and p.type.startswith("b"):
        return a.tobytes()          # __half, __nv_bfloat16, small structs: the value's own bits
    if isinstance(a, (np.void, bytes, bytearray)) or (isinstance(a, np.generic) and a.dtype.itemsize == p.size
                                                        and p.type.startswith("b") and p.size not in (1, 2, 4, 8)):
        raw = bytes(a) if not isinstance(a, np.generic) else a.tobytes()
        if len(raw) != p.size:
            raise LaunchError(f"{where} is a {p.size}-byte value, but you passed {len(raw)} bytes.", "cudaErrorInvalidValue")
        return raw
    if p.type.startswith("b") and ptx_dtype(p.type).itemsize != p.size:
        raise LaunchError(f"{where} is a struct of {p.size} bytes: pass it as a numpy structured scalar or bytes.",
                          "cudaErrorInvalidValue")

    if not isinstance(a, (int, float, bool, np.integer, np.floating, np.bool_)):
        raise LaunchError(f"{where} is a number, but you passed {_describe(a)}.", "cudaErrorInvalidValue")
    target = np.dtype(ct.numpy) if ct is not None and ct.numpy else ptx_dtype(p.type)
    if target.itemsize != p.size:
        target = ptx_dtype(p.type)
    if target.kind in "iu":
        if isinstance(a, (float, np.floating)):
            if float(a) != int(a):
                raise LaunchError(f"{where} is an integer, but you passed {a!r}: convert it with int() first.",
                                  "cudaErrorInvalidValue")
            a = int(a)
        info = _iinfo(target)
        v = int(a)
        if ct is None and target.kind == "u" and v < 0 and v >= np.iinfo(f"i{target.itemsize}").min:
            # no C++ type (an extern "C" kernel, PTX): NVVM declares C's int parameters .u32 too, so a
            # negative value goes as its two's complement, as C passes it
            return np.array(v, f"i{target.itemsize}").tobytes()
        if not info.min <= v <= info.max:
            raise LaunchError(f"{where} is {ct.name if ct else target.name}: the value {v:,} does not fit "
                              f"(allowed {info.min:,} .. {info.max:,}).", "cudaErrorInvalidValue")
        return np.array(v, target).tobytes()
    if target.kind == "f":
        return np.array(a, target).tobytes()
    if target.kind == "b":
        return np.array(bool(a), np.uint8).tobytes()
    return np.array(a).astype(target).tobytes()
