"""PyCUDA's CUDA arrays on cudalab: ``Array``, its descriptors, ``np_to_array``, ``matrix_to_array`` and
the copies to and from arrays (``Memcpy2D``/``Memcpy3D``'s ``set_src_array``, ``set_dst_array``).

Image and interpolation lessons written for PyCUDA put a numpy image into a CUDA array with
``drv.np_to_array(img, "C")`` or ``drv.matrix_to_array(m, "C")`` and bind it to a texture reference.
The arrays are cudalab's (``cudalab.runtime.textures``: the same extents and formats as
cuArray3DCreate checks); the texture references that read them are texrefs.py's. The copies treat
an array as device memory laid out row after row (its pitch is a row of texels), as the emulator
stores it.
"""
from __future__ import annotations

import numpy as np

from ..runtime import textures as rt


class array_format:                 # noqa: N801  (PyCUDA's name: CUarray_format)
    UNSIGNED_INT8, UNSIGNED_INT16, UNSIGNED_INT32 = 0x01, 0x02, 0x03
    SIGNED_INT8, SIGNED_INT16, SIGNED_INT32 = 0x08, 0x09, 0x0A
    HALF, FLOAT = 0x10, 0x20


class array3d_flags:                # noqa: N801  (CUDA_ARRAY3D_* flags)
    ARRAY3D_LAYERED = LAYERED = 0x01
    SURFACE_LDST = 0x02
    CUBEMAP = 0x04
    TEXTURE_GATHER = 0x08


# CUarray_format -> (bits, the runtime's channel kind)
_FORMATS = {array_format.UNSIGNED_INT8: (8, "unsigned"), array_format.UNSIGNED_INT16: (16, "unsigned"),
            array_format.UNSIGNED_INT32: (32, "unsigned"), array_format.SIGNED_INT8: (8, "signed"),
            array_format.SIGNED_INT16: (16, "signed"), array_format.SIGNED_INT32: (32, "signed"),
            array_format.HALF: (16, "float"), array_format.FLOAT: (32, "float")}
_BY_DTYPE = {np.dtype(np.uint8): array_format.UNSIGNED_INT8, np.dtype(np.uint16): array_format.UNSIGNED_INT16,
             np.dtype(np.uint32): array_format.UNSIGNED_INT32, np.dtype(np.int8): array_format.SIGNED_INT8,
             np.dtype(np.int16): array_format.SIGNED_INT16, np.dtype(np.int32): array_format.SIGNED_INT32,
             np.dtype(np.float16): array_format.HALF, np.dtype(np.float32): array_format.FLOAT}


def dtype_to_array_format(dtype) -> int:
    """The CUarray_format holding ``dtype``'s values (PyCUDA's TypeError for one no array holds)."""
    try:
        return _BY_DTYPE[np.dtype(dtype)]
    except KeyError:
        raise TypeError(f"cannot convert dtype '{np.dtype(dtype)}' to array format: a CUDA array holds 8-, 16- and "
                        "32-bit integers, float16 and float32 (np_to_array reads float64 and complex values as "
                        "pairs of int32)") from None


class ArrayDescriptor:
    """CUDA_ARRAY_DESCRIPTOR: ``width``, ``height`` (0 for a 1D array), ``format``, ``num_channels``."""

    def __init__(self):
        self.width = self.height = 0
        self.format, self.num_channels = array_format.FLOAT, 1


class ArrayDescriptor3D(ArrayDescriptor):
    """CUDA_ARRAY3D_DESCRIPTOR: also ``depth`` (0 for 1D and 2D; layers of a layered array) and ``flags``."""

    def __init__(self):
        super().__init__()
        self.depth = self.flags = 0


class Array:
    """cuArrayCreate / cuArray3DCreate from a descriptor: a CUDA array in the emulated device's memory."""

    def __init__(self, descriptor):
        from ..runtime import device as devices
        from ..errors import CudaError
        from .driver import LogicError
        if descriptor.format not in _FORMATS:
            raise LogicError(f"cuArrayCreate failed: invalid value - format 0x{int(descriptor.format):x} is not a "
                             "CUarray_format (use pycuda.driver.array_format)")
        bits, kind = _FORMATS[descriptor.format]
        channels = int(descriptor.num_channels)
        extent = (int(descriptor.width), int(descriptor.height), int(getattr(descriptor, "depth", 0)))
        dev = devices.current()
        try:
            fmt = rt.channel_format(*([bits] * channels + [0] * (4 - channels)), kind)
            self._array = rt.state(dev.memory).malloc_3d_array(fmt, extent, int(getattr(descriptor, "flags", 0)))
        except CudaError as e:
            raise LogicError(f"cuArray3DCreate failed: invalid value - {e}") from None
        self._array.device = dev
        self._descriptor = (extent, int(descriptor.format), channels, int(getattr(descriptor, "flags", 0)))

    @property
    def handle(self) -> int:
        return self._array.handle

    def get_descriptor(self) -> ArrayDescriptor:
        d = ArrayDescriptor()
        (d.width, d.height, _), d.format, d.num_channels, _ = self._descriptor
        return d

    def get_descriptor_3d(self) -> ArrayDescriptor3D:
        d = ArrayDescriptor3D()
        (d.width, d.height, d.depth), d.format, d.num_channels, d.flags = self._descriptor
        return d

    def free(self):
        self._array.free()

    def _region(self, x_bytes, y, z, width, height, depth, call="cuMemcpy3D"):
        """(address, row pitch, slice pitch) of a copy's box inside the array; outside it, LogicError."""
        from ..errors import CudaError
        from .driver import LogicError
        try:
            return rt.state(self._array.device.memory).region(self.handle, x_bytes, y, z, width, height, depth)
        except CudaError as e:
            raise LogicError(f"{call} failed: invalid value - {e}") from None


def _as_host(ary, order):
    if order not in ("C", "F"):
        from .driver import LogicError
        raise LogicError("order must be either F or C")
    return np.asarray(ary, order=order)


def _format_of(dtype, allow_pairs: bool) -> tuple:
    """(CUarray_format, channels) for ``dtype``: float64 and complex64 as two int32 channels, complex128
    as four (how PyCUDA's kernels read them, with fp_tex_double and the like), when ``allow_pairs``."""
    dt = np.dtype(dtype)
    if allow_pairs and dt in (np.dtype(np.float64), np.dtype(np.complex64), np.dtype(np.complex128)):
        return array_format.SIGNED_INT32, dt.itemsize // 4
    return dtype_to_array_format(dt), 1


def matrix_to_array(matrix, order, allow_double_hack=False) -> Array:
    """A 2D CUDA array holding a matrix: order "C" makes its rows the array's rows, "F" its columns.
    float64 needs ``allow_double_hack`` (two int32 channels per value)."""
    matrix = _as_host(matrix, order)
    rows, width = matrix.shape if order == "C" else matrix.shape[::-1]
    d = ArrayDescriptor()
    d.width, d.height = width, rows
    d.format, d.num_channels = _format_of(matrix.dtype, allow_double_hack and matrix.dtype == np.float64)
    return _filled(Array(d), matrix, width * matrix.dtype.itemsize, rows, 1)


def np_to_array(nparray, order, allowSurfaceBind=False) -> Array:    # noqa: N803  (PyCUDA's keyword)
    """A 2D or 3D CUDA array holding a numpy array of shape (height, width) or (depth, height, width), in
    the given memory order; float64 and complex values as int32 pairs. ``allowSurfaceBind`` makes it
    surface-writable (a 2D one becomes a layered array of one layer, as in PyCUDA)."""
    host = _as_host(nparray, order)
    array, (depth, rows, width) = _array_for(host.shape, host.dtype, order, allowSurfaceBind, "np_to_array")
    return _filled(array, host, width * host.dtype.itemsize, rows, depth)


def gpuarray_to_array(gpuarray, order, allowSurfaceBind=False) -> Array:    # noqa: N803  (PyCUDA's keyword)
    """np_to_array for a GPUArray: the CUDA array is filled from device memory (a device-to-array copy)."""
    if order not in ("C", "F"):
        from .driver import LogicError
        raise LogicError("order must be either F or C")
    array, (depth, rows, width) = _array_for(gpuarray.shape, gpuarray.dtype, order, allowSurfaceBind,
                                             "gpuarray_to_array")
    return _filled(array, gpuarray, width * np.dtype(gpuarray.dtype).itemsize, rows, depth)


def _array_for(shape, dtype, order, surface: bool, call: str) -> tuple:
    """The CUDA array np_to_array and gpuarray_to_array fill, and its (depth, rows, width)."""
    from .driver import LogicError
    if len(shape) not in (2, 3):
        raise LogicError(f"CUDA arrays of 2 or 3 dimensions are supported ({call}): this array has {len(shape)}.")
    shape = tuple(shape) if order == "C" else tuple(shape)[::-1]
    depth, rows, width = (1,) * (3 - len(shape)) + shape
    d = ArrayDescriptor3D()
    d.width, d.height, d.depth = width, rows, (depth if len(shape) == 3 or surface else 0)
    d.format, d.num_channels = _format_of(dtype, True)
    if surface:
        d.flags = array3d_flags.SURFACE_LDST | (array3d_flags.LAYERED if len(shape) == 2 else 0)
    return Array(d), (depth, rows, width)


def make_multichannel_2d_array(ndarray, order) -> Array:
    """A 2D CUDA array of 1, 2 or 4 channels from an array of shape (height, width, channels) ("C") or
    (channels, width, height) ("F")."""
    host = _as_host(ndarray, order)
    channels, rows, width = (host.shape[2], host.shape[0], host.shape[1]) if order == "C" else \
        (host.shape[0], host.shape[2], host.shape[1])          # "F": (channels, width, height), as PyCUDA reads it
    d = ArrayDescriptor()
    d.width, d.height, d.format, d.num_channels = width, rows, dtype_to_array_format(host.dtype), channels
    return _filled(Array(d), host, width * channels * host.dtype.itemsize, rows, 1)


def _filled(array: Array, source, row_bytes: int, rows: int, depth: int) -> Array:
    """``array`` with a host array's (or a GPUArray's) bytes copied in, in their memory order."""
    from .driver import Memcpy3D
    copy = Memcpy3D()
    if isinstance(source, np.ndarray):
        copy.set_src_host(source)
    else:
        copy.set_src_device(source.gpudata)
    copy.set_dst_array(array)
    copy.width_in_bytes = copy.src_pitch = row_bytes
    copy.src_height = copy.height = rows
    copy.depth = depth
    copy()
    return array
