"""``cupy.cuda.texture`` on cudalab: CuPy's descriptors over cudalab's CUDA arrays and texture objects.

Image-processing lessons written with CuPy sample their images through textures: a
``ChannelFormatDescriptor`` (bits per channel and kind), a ``CUDAarray`` filled with ``copy_from``, a
``ResourceDescriptor`` and a ``TextureDescriptor`` (address, filter and read modes), and the
``TextureObject`` a RawKernel takes as its ``cudaTextureObject_t``. Each is a thin wrapper of cudalab's
runtime (``cudalab.runtime.textures``: the same checks and CUDA error codes as cudaMallocArray and
cudaCreateTextureObject); the emulator's tex and surface instructions read them.
"""
from __future__ import annotations

import numpy as np

from ..runtime import textures as rt

# cudaChannelFormatKind, cudaResourceType, cudaTextureAddressMode, cudaTextureFilterMode,
# cudaTextureReadMode and cudaArray flags, as cupy.cuda.runtime names them
CONSTANTS = dict(
    cudaChannelFormatKindSigned=0, cudaChannelFormatKindUnsigned=1, cudaChannelFormatKindFloat=2,
    cudaChannelFormatKindNone=3,
    cudaResourceTypeArray=0, cudaResourceTypeMipmappedArray=1, cudaResourceTypeLinear=2,
    cudaResourceTypePitch2D=3,
    cudaAddressModeWrap=0, cudaAddressModeClamp=1, cudaAddressModeMirror=2, cudaAddressModeBorder=3,
    cudaFilterModePoint=0, cudaFilterModeLinear=1, cudaReadModeElementType=0, cudaReadModeNormalizedFloat=1,
    cudaArrayDefault=0, cudaArrayLayered=1, cudaArraySurfaceLoadStore=2, cudaArrayCubemap=4,
    cudaArrayTextureGather=8,
)


class ChannelFormatDescriptor:
    """cudaChannelFormatDesc: bits of each of up to four channels and their kind
    (``runtime.cudaChannelFormatKindFloat``, ...)."""

    def __init__(self, x: int, y: int, z: int, w: int, f: int):
        self.x, self.y, self.z, self.w, self.f = int(x), int(y), int(z), int(w), int(f)

    @property
    def format(self):
        """The emulator's Format; one CUDA cannot hold is cudaErrorInvalidChannelDescriptor where it is
        used (cudaMallocArray, a texture over linear memory), as cudaCreateChannelDesc checks nothing."""
        return _raising(lambda: rt.channel_format(self.x, self.y, self.z, self.w, self.f))

    def get_channel_format(self) -> dict:
        return {"x": self.x, "y": self.y, "z": self.z, "w": self.w, "f": self.f}


class CUDAarray:
    """cudaMalloc3DArray: ``width`` texels (and ``height``, ``depth`` when not 0) of ``desc``'s format.
    ``copy_from(numpy or cupy array)`` fills it, ``copy_to(array)`` reads it back."""

    def __init__(self, desc: ChannelFormatDescriptor, width: int, height: int = 0, depth: int = 0,
                 flags: int = 0):
        self.desc, self.width, self.height, self.depth, self.flags = desc, int(width), int(height), int(depth), int(flags)
        self.ndim = 1 + bool(self.height) + bool(self.depth)
        from ..runtime import device as devices
        dev = devices.current()
        self._array = _raising(lambda: rt.state(dev.memory).malloc_3d_array(
            desc.format, (self.width, self.height, self.depth), self.flags))
        self._array.device = dev

    @property
    def ptr(self) -> int:
        return self._array.handle

    def _values(self, a):
        from ..runtime.arrays import DeviceArray
        values = a.copy_to_host() if isinstance(a, DeviceArray) else np.asarray(a)
        shape = self._array.shape
        if values.size != int(np.prod(shape)):
            raise ValueError(f"a CUDA array of {self.width}x{max(self.height, 1)}x{max(self.depth, 1)} texels "
                             f"of {self._array.channels} channel(s) holds {int(np.prod(shape))} values, not "
                             f"{values.size}.")
        return values.reshape(shape)

    def copy_from(self, in_arr, stream=None):
        """Fill the array from a numpy or cupy array of as many values (cudaMemcpy3D)."""
        self._array.copy_to_device(self._values(in_arr))

    def copy_to(self, out_arr, stream=None):
        """Copy the texels into a numpy or cupy array of as many values."""
        values = self._array.copy_to_host()
        if isinstance(out_arr, np.ndarray):
            out_arr[...] = values.reshape(out_arr.shape)
        else:
            out_arr.set(values.reshape(out_arr.shape))


class ResourceDescriptor:
    """cudaResourceDesc: a CUDAarray (``cudaResourceTypeArray``), or a cupy array as linear memory
    (``sizeInBytes``) or pitched 2D memory (``width``, ``height``, ``pitchInBytes``) with ``chDesc``."""

    def __init__(self, restype: int, cuArr: CUDAarray | None = None, arr=None,
                 chDesc: ChannelFormatDescriptor | None = None, sizeInBytes: int = 0, width: int = 0,
                 height: int = 0, pitchInBytes: int = 0):
        self.restype, self.cuArr, self.arr, self.chDesc = int(restype), cuArr, arr, chDesc
        if self.restype == 0:
            if cuArr is None:
                raise ValueError("a cudaResourceTypeArray resource needs cuArr (a CUDAarray).")
            self.desc = rt.ResourceDesc("array", array=cuArr.ptr)
        elif self.restype in (2, 3):
            if arr is None or chDesc is None:
                raise ValueError("a linear or pitched resource needs arr (a cupy array) and chDesc.")
            if self.restype == 2:
                self.desc = rt.ResourceDesc("linear", address=int(arr.device_ptr), fmt=chDesc.format,
                                            size=int(sizeInBytes or arr.nbytes))
            else:
                self.desc = rt.ResourceDesc("pitch2d", address=int(arr.device_ptr), fmt=chDesc.format,
                                            width=int(width), height=int(height), pitch=int(pitchInBytes))
        else:
            raise ValueError("cudalab's CuPy takes array (0), linear (2) and pitch2D (3) resources; a mipmapped "
                             "one (1) is made with cudalab.mipmapped_array and cudalab.texture.")

    def get_resource_desc(self) -> dict:
        return {"resType": self.restype}


class TextureDescriptor:
    """cudaTextureDesc: address modes (one per dimension), filter mode, read mode, border colour,
    normalized coordinates."""

    def __init__(self, addressModes=None, filterMode: int = 0, readMode: int = 0, sRGB=None, borderColors=None,
                 normalizedCoords=None, maxAnisotropy=None):
        modes = tuple(rt.ADDRESS_MODES[int(m)] for m in (addressModes or (0,)))
        self.sampler = rt.sampler(rt.FILTER_MODES[int(filterMode)], modes, bool(normalizedCoords),
                                  rt.READ_MODES[int(readMode)], tuple(borderColors or (0.0,) * 4), bool(sRGB),
                                  max_anisotropy=int(maxAnisotropy or 0))

    def get_texture_desc(self) -> dict:
        s = self.sampler
        return {"filterMode": rt.FILTER_MODES.index(s.filter), "readMode": rt.READ_MODES.index(s.read),
                "normalizedCoords": int(s.normalized)}


def _raising(make):
    """The runtime's CudaError as CuPy's CUDARuntimeError (CUDA's number and name first)."""
    from .runtime_api import _raising as as_cupy
    return as_cupy(make)()


class _Object:
    def _create(self, dev, make):
        self._dev = dev
        self.ptr = _raising(make)

    def __int__(self):
        return self.ptr

    def _cupy_kernel_argument(self):
        """What a RawKernel passes for it: the handle, a cudaTextureObject_t/cudaSurfaceObject_t."""
        return np.uint64(self.ptr)


class TextureObject(_Object):
    """cudaCreateTextureObject over a ResourceDescriptor with a TextureDescriptor; ``ptr`` is the
    handle a kernel's ``cudaTextureObject_t`` parameter gets (pass the object itself to a RawKernel)."""

    def __init__(self, ResDesc: ResourceDescriptor, TexDesc: TextureDescriptor):
        from ..runtime import device as devices
        dev = devices.current()
        self.ResDesc, self.TexDesc = ResDesc, TexDesc
        self._create(dev, lambda: rt.state(dev.memory).create_texture(ResDesc.desc, TexDesc.sampler))

    def __del__(self):
        try:
            rt.state(self._dev.memory).destroy_texture(self.ptr)
        except Exception:       # noqa: BLE001  (the device may be gone at exit)
            pass


class SurfaceObject(_Object):
    """cudaCreateSurfaceObject over a ResourceDescriptor of a CUDAarray made with
    ``runtime.cudaArraySurfaceLoadStore``; a kernel's ``cudaSurfaceObject_t`` gets ``ptr``."""

    def __init__(self, ResDesc: ResourceDescriptor):
        from ..runtime import device as devices
        dev = devices.current()
        self.ResDesc = ResDesc
        self._create(dev, lambda: rt.state(dev.memory).create_surface(ResDesc.desc))

    def __del__(self):
        try:
            rt.state(self._dev.memory).destroy_surface(self.ptr)
        except Exception:       # noqa: BLE001
            pass
