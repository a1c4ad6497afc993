"""PyCUDA's texture references on cudalab: ``mod.get_texref("tex")``, ``set_array``, ``set_address``.

Texture lessons written for PyCUDA declare ``texture<float, 2> tex;`` in a SourceModule, fill a CUDA
array (``drv.np_to_array``), bind it with ``texref.set_array(ary)`` and read it in the kernel with
``tex2D(tex, x, y)``. CUDA 12 removed texture references; cudalab builds them over texture objects
for whole programs (cudalab/programs/shim/legacy_textures.h), and a SourceModule that declares one is
built the same way, by nvcc with that header: each reference is an 80-byte managed variable holding
its settings and, once bound, the texture object every fetch reads through. This module is the
host side PyCUDA's driver calls: it reads and writes that variable and makes the object. A
``surface<void, 2> surf;`` is the same with a 32-byte variable (its channel description and the
surface object ``surf2Dwrite`` writes through): ``mod.get_surfref("surf").set_array(ary)``.
"""
from __future__ import annotations

import struct

import numpy as np

from ..runtime import textures as rt

# struct textureReference in legacy_textures.h: byte offsets of the fields the driver API sets
_NORMALIZED, _FILTER, _ADDRESS, _CHANNEL, _READ_MODE, _OBJECT, SIZE = 0, 4, 8, 20, 68, 72, 80
# struct surfaceReference: its channelDesc (5 ints), then the surface object, 8-aligned
_SURFACE_CHANNEL, _SURFACE_OBJECT, SURFACE_SIZE = 0, 24, 32


class address_mode:                 # noqa: N801  (PyCUDA's names: CUaddress_mode)
    WRAP, CLAMP, MIRROR, BORDER = 0, 1, 2, 3


class filter_mode:                  # noqa: N801  (CUfilter_mode)
    POINT, LINEAR = 0, 1


TRSA_OVERRIDE_FORMAT = 1            # set_array's flag
TRSF_READ_AS_INTEGER, TRSF_NORMALIZED_COORDINATES, TRSF_SRGB = 1, 2, 0x10


class TextureReference:
    """A ``texture<T, dim, mode>`` of a SourceModule: its settings live in the module's variable, and
    binding memory to it makes the texture object the kernel's fetches read."""

    def __init__(self, module, name: str, address: int):
        self.module, self.name, self.address = module, name, int(address)
        self._format = None             # (CUarray_format, channels) from set_format
        self._bound = None              # what keeps the bound memory alive

    # -------------------------------------------------------------- the variable's fields
    def _device(self):
        from ..runtime import device
        return device.current()

    def _read(self, offset: int, fmt: str):
        return struct.unpack_from(fmt, bytes(self._device().read(self.address + offset, struct.calcsize(fmt))))

    def _write(self, offset: int, fmt: str, *values):
        self._device().write(self.address + offset, struct.pack(fmt, *values))

    def set_address_mode(self, dim: int, mode: int):
        self._write(_ADDRESS + 4 * int(dim), "<i", int(mode))

    def get_address_mode(self, dim: int) -> int:
        return self._read(_ADDRESS + 4 * int(dim), "<i")[0]

    def set_filter_mode(self, mode: int):
        self._write(_FILTER, "<i", int(mode))

    def get_filter_mode(self) -> int:
        return self._read(_FILTER, "<i")[0]

    def set_flags(self, flags: int):
        """TRSF_NORMALIZED_COORDINATES switches to coordinates in [0, 1); whether texels read as integers
        or as normalized floats is the kernel's ``texture<T, dim, mode>`` (compiled into its fetches)."""
        self._write(_NORMALIZED, "<i", int(bool(int(flags) & TRSF_NORMALIZED_COORDINATES)))

    def get_flags(self) -> int:
        return TRSF_NORMALIZED_COORDINATES if self._read(_NORMALIZED, "<i")[0] else 0

    def set_format(self, fmt: int, num_components: int):
        self._format = (int(fmt), int(num_components))

    def get_format(self) -> tuple:
        return self._format or (None, 0)

    # -------------------------------------------------------------- binding
    def set_array(self, ary, flags: int = 0):
        """Bind a CUDA array (``drv.np_to_array``, ``drv.Array``): the kernel's fetches read its texels."""
        self._bind(rt.ResourceDesc("array", array=ary.handle), ary)

    def set_address(self, devptr, nbytes, allow_offset=False) -> int:
        """Bind ``nbytes`` of linear device memory (read with ``tex1Dfetch``) in the format ``set_format``
        gave (else the template's texel type); the offset to add to indices is 0."""
        from .driver import _address
        self._bind(rt.ResourceDesc("linear", address=_address(devptr), fmt=self._channel_format(),
                                   size=int(nbytes)), devptr)
        return 0

    def set_address_2d(self, devptr, descr, pitch):
        """Bind pitched 2D memory: ``descr`` an ArrayDescriptor (width, height, format, channels)."""
        from .driver import _address
        self.set_format(descr.format, descr.num_channels)
        self._bind(rt.ResourceDesc("pitch2d", address=_address(devptr), fmt=self._channel_format(),
                                   width=int(descr.width), height=int(descr.height), pitch=int(pitch)), devptr)

    def _channel_format(self):
        """The texels' format: set_format's, else the template's (the variable's channelDesc)."""
        if self._format is not None:
            from .arrays import _FORMATS
            bits, kind = _FORMATS[self._format[0]]
            n = self._format[1]
            return rt.channel_format(*([bits] * n + [0] * (4 - n)), kind)
        return rt.channel_format(*self._read(_CHANNEL, "<5i"))

    def _bind(self, resource, keep):
        from ..errors import CudaError
        from .driver import LogicError
        state = rt.state(self._device().memory)
        old = self._read(_OBJECT, "<Q")[0]
        if old:                 # the object an earlier binding made goes (a rebinding replaces it)
            try:
                state.destroy_texture(old)
            except CudaError:
                pass
        modes = tuple(rt.ADDRESS_MODES[m] for m in self._read(_ADDRESS, "<3i"))
        sampler = rt.sampler(rt.FILTER_MODES[self.get_filter_mode()], modes, bool(self._read(_NORMALIZED, "<i")[0]),
                             rt.READ_MODES[self._read(_READ_MODE, "<i")[0]])
        try:
            handle = state.create_texture(resource, sampler)
        except CudaError as e:
            raise LogicError(f"cuTexRefSet failed: invalid value - {e}") from None
        self._write(_OBJECT, "<Q", int(handle))
        self._bound = keep


class SurfaceReference:
    """A ``surface<void, dim>`` of a SourceModule: ``set_array`` makes the surface object its
    ``surf2Dwrite``/``surf2Dread`` go through, from a CUDA array made surface-writable
    (``np_to_array(a, "C", allowSurfaceBind=True)``, or a descriptor with ``array3d_flags.SURFACE_LDST``)."""

    def __init__(self, module, name: str, address: int):
        self.module, self.name, self.address = module, name, int(address)
        self._array = None

    def set_array(self, ary, flags: int = 0):
        from ..errors import CudaError
        from ..runtime import device
        from .driver import LogicError
        dev = device.current()
        state = rt.state(dev.memory)
        old = struct.unpack("<Q", bytes(dev.read(self.address + _SURFACE_OBJECT, 8)))[0]
        if old:                 # a rebinding replaces the object the last one made
            try:
                state.destroy_surface(old)
            except CudaError:
                pass
        try:
            if not state.array(ary.handle).flags & rt.ARRAY_SURFACE_LOAD_STORE:   # as cuSurfRefSetArray checks
                rt.fail("the CUDA array was not made surface-writable (make it with np_to_array(..., "
                        "allowSurfaceBind=True), or an ArrayDescriptor3D whose flags include "
                        "array3d_flags.SURFACE_LDST)")
            handle = state.create_surface(rt.ResourceDesc("array", array=ary.handle))
        except CudaError as e:
            raise LogicError(f"cuSurfRefSetArray failed: invalid value - {e}") from None
        dev.write(self.address + _SURFACE_OBJECT, struct.pack("<Q", int(handle)))
        self._array = ary

    def get_array(self):
        return self._array


def find(module, name: str, kind=TextureReference):
    """The reference (a TextureReference, or with ``kind=SurfaceReference`` a surface) named ``name`` in
    a SourceModule, or None when it declares none such."""
    try:
        address, nbytes = module.get_global(name)
    except Exception:       # noqa: BLE001  (no such variable)
        return None
    size = SIZE if kind is TextureReference else SURFACE_SIZE
    return kind(module, name, int(address)) if int(nbytes) == size else None


def dtype_format(dtype, channels: int = 1) -> tuple:
    """(CUarray_format, channels) for a GPUArray's dtype, as bind_to_texref_ext sets them."""
    from .arrays import dtype_to_array_format
    return dtype_to_array_format(np.dtype(dtype)), int(channels)


def matrix_to_texref(matrix, texref, order):
    """PyCUDA's shortcut: the matrix as a CUDA array (``matrix_to_array``) bound to ``texref``."""
    from .arrays import matrix_to_array
    texref.set_array(matrix_to_array(matrix, order))


def bind_array_to_texref(ary, texref):
    """PyCUDA's older spelling of ``texref.set_array(ary)``."""
    texref.set_array(ary)
