"""DLPack for cudalab's CuPy: ``a.toDlpack()``, ``a.__dlpack__()``, ``cupy.from_dlpack`` and ``cupy.fromDlpack``.

Lessons hand CuPy arrays to other libraries (PyTorch, JAX, cuDF) and back without a copy through
DLPack: a PyCapsule named ``"dltensor"`` holding a C struct (DLManagedTensor) that gives the data's
address, device, dtype, shape and strides, and a deleter the consumer calls when it is done. The
capsules made here are real ones, built with ctypes as the C structs DLPack defines, so any consumer
can read them; their device is CUDA (kDLCUDA, device 0) and their address is the emulated device's,
as a real CuPy's is the GPU's: numpy's ``from_dlpack`` refuses them as it refuses a GPU's, and
``cupy.from_dlpack`` reads them back as a view of the same device memory. A CPU producer's tensor (a
numpy array) is refused with CuPy's TypeError and its advice (CuPy 14.2.0 on an H200 did so).
Unlike CuPy 14, ``toDlpack``/``fromDlpack`` give no deprecation warning and the capsule is DLPack's
unversioned one ("dltensor", which every consumer reads; CuPy 14's is "dltensor_versioned").
"""
from __future__ import annotations

import ctypes
import sys

import numpy as np

CPU, CUDA, CUDA_HOST, CUDA_MANAGED = 1, 2, 3, 13          # DLDeviceType values
_NAME, _USED = b"dltensor", b"used_dltensor"
_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}           # numpy kind -> DLDataTypeCode
_KINDS = {code: kind for kind, code in _CODES.items()}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = (ctypes.c_void_p, ctypes.c_char_p)
# the capsule names must outlive every capsule: C buffers kept by the module
_NAME_BUF, _USED_BUF = ctypes.create_string_buffer(_NAME), ctypes.create_string_buffer(_USED)

_EXPORTED: dict = {}        # address of a DLManagedTensor -> (its capsule, what it keeps alive)
_DELETED: list = []         # addresses whose consumer is done, let go at the next call here


def _delete(managed):
    """The producer's deleter, called by the consumer when it is done: the array is let go at the next
    DLPack call."""
    _DELETED.append(ctypes.addressof(managed.contents))


_DELETE = _DELETER(_delete)


def _release():
    """Let go of the arrays whose tensors are done: deleted by their consumer, or never consumed and
    their capsule dropped by the program (only this registry still refers to it). The capsules have no
    destructor of their own: it would run when the capsule goes, maybe with an exception pending
    (numpy's from_dlpack refusing a CUDA tensor drops the capsule with its error set), and there ctypes
    can call no Python."""
    while _DELETED:
        _EXPORTED.pop(_DELETED.pop(), None)
    for address, (capsule, *_) in list(_EXPORTED.items()):
        # three references: the entry, this loop's name and getrefcount's argument
        if sys.getrefcount(capsule) <= 3 and _api.PyCapsule_IsValid(id(capsule), _NAME_BUF):
            del _EXPORTED[address]


def to_capsule(a):
    """A DLPack capsule over device array ``a``'s memory (no copy; it keeps ``a`` alive)."""
    _release()
    dt = a.dtype
    if dt.kind not in _CODES:
        raise BufferError(f"DLPack has no type for {dt} (it holds booleans, integers, floats and complex numbers).")
    shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
    strides = (ctypes.c_int64 * max(a.ndim, 1))(*(s // dt.itemsize for s in a.strides))
    if any(s % dt.itemsize for s in a.strides):
        raise BufferError("DLPack counts strides in elements; this view's are not whole elements.")
    managed = _Managed()
    managed.dl_tensor = _Tensor(a.device_ptr, _Device(CUDA, 0), a.ndim, _DataType(_CODES[dt.kind], dt.itemsize * 8, 1),
                                ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)),
                                ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)), 0)
    managed.deleter = _DELETE
    capsule = _api.PyCapsule_New(ctypes.addressof(managed), _NAME_BUF, None)
    _EXPORTED[ctypes.addressof(managed)] = (capsule, managed, shape, strides, a)
    return capsule


class _Owner:
    """What a consumed tensor's view keeps alive: calls the producer's deleter when the view goes."""

    def __init__(self, managed):
        self.managed = managed

    def __del__(self):
        if self.managed.contents.deleter:
            self.managed.contents.deleter(self.managed)


def from_capsule(capsule, copy=None):
    """A cupy array from a DLPack capsule: a view of the producer's device memory (a CUDA tensor). A
    CPU tensor is refused, as CuPy 14 refuses it."""
    from . import ndarray
    _release()
    address = id(capsule)
    if type(capsule).__name__ != "PyCapsule" or not _api.PyCapsule_IsValid(address, _NAME_BUF):
        raise ValueError("A DLPack tensor object cannot be consumed multiple times (or object was not a DLPack "
                         f"capsule). Got: {capsule!r}. A capsule is read once: call toDlpack() or __dlpack__() again "
                         "for another view; for an array with __dlpack__, use cupy.from_dlpack.")
    managed = ctypes.cast(_api.PyCapsule_GetPointer(address, _NAME_BUF), ctypes.POINTER(_Managed))
    t = managed.contents.dl_tensor
    dt = _dtype(t.dtype)
    shape = tuple(t.shape[i] for i in range(t.ndim))
    strides = tuple(t.strides[i] * dt.itemsize for i in range(t.ndim)) if t.strides else None
    kind = t.device.device_type
    if kind == CPU:          # CuPy 14.2 on an H200 refused a numpy array so, with this advice
        raise TypeError("CPU arrays cannot be directly imported to CuPy. Use `cupy.array(numpy.from_dlpack(input))` "
                        "instead.")
    if kind not in (CUDA, CUDA_MANAGED):
        raise BufferError(f"a DLPack tensor on device type {kind} cannot become a cupy array (CUDA is 2, CPU 1).")
    _api.PyCapsule_SetName(address, _USED_BUF)
    view = ndarray(shape, dt, memptr=t.data + t.byte_offset, strides=strides, base=_Owner(managed))
    return view.copy() if copy else view


def from_dlpack(array, *, device=None, copy=None):
    """CuPy's ``from_dlpack``: an object with ``__dlpack__`` (a cupy array, a numpy array, a torch
    tensor) or a raw capsule, as a cupy array."""
    if hasattr(array, "__dlpack__"):
        try:
            capsule = array.__dlpack__(stream=None)
        except TypeError:
            capsule = array.__dlpack__()
        return from_capsule(capsule, copy)
    return from_capsule(array, copy)


def _dtype(t) -> np.dtype:
    if t.lanes != 1 or t.code not in _KINDS:
        raise BufferError(f"DLPack type (code {t.code}, {t.bits} bits, {t.lanes} lanes) has no numpy dtype.")
    return np.dtype(f"{_KINDS[t.code]}{t.bits // 8}") if t.code != 6 else np.dtype(bool)
