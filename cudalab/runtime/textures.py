"""CUDA arrays, texture objects and surface objects: the runtime's semantics, once.

``Textures`` holds one device's arrays and objects and answers what the CUDA runtime calls do
(cudaMallocArray, cudaMalloc3DArray, cudaMallocMipmappedArray, cudaCreateTextureObject, ...), with
CUDA's error codes for misuse. Whole programs reach it through the server
(``programs/server_textures.py``); Python code through ``cuda_array``, ``mipmapped_array``,
``texture`` and ``surface`` at the bottom of this file::

    arr = cudalab.cuda_array(image)                           # (H, W) float32 -> a 2D float array
    tex = cudalab.texture(arr, filter="linear", address="wrap", normalized=True)
    kernel[grid, block](tex, out)                             # a cudaTextureObject_t argument

A CUDA array is an allocation in device memory whose texels the emulator lays out row by row;
texture and surface objects are handles into ``emulator.texture.objects(memory)``, where the
emulator's tex/suld/sust instructions find them. On a real GPU the same calls go to the CUDA
runtime (``cudalab.gpu.textures``).
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass

import numpy as np

from ..emulator.texture import KINDS, Format, Image, Sampler, SurfaceObject, TextureObject, objects
from ..errors import CudaError
from .core.properties import MAX_TEXTURE_1D_LINEAR, TEXTURE_ALIGNMENT, TEXTURE_PITCH_ALIGNMENT, TEXTURES

# cudaArray* flags (driver_types.h)
ARRAY_LAYERED, ARRAY_SURFACE_LOAD_STORE, ARRAY_CUBEMAP, ARRAY_TEXTURE_GATHER = 0x01, 0x02, 0x04, 0x08
ADDRESS_MODES = ("wrap", "clamp", "mirror", "border")      # cudaTextureAddressMode 0..3
FILTER_MODES = ("point", "linear")                         # cudaTextureFilterMode 0..1
READ_MODES = ("element", "normalized")                     # cudaTextureReadMode 0..1
RESOURCE_TYPES = ("array", "mipmap", "linear", "pitch2d")  # cudaResourceType 0..3

# Linear memory bound to a texture starts textureAlignment-aligned; cudaMalloc's pointers are (on an
# H100 and in emulator/memory.py), a pointer 256 bytes into an allocation is not (measured). The
# texture limits are the device properties' (cudaDeviceProp.maxTexture*: runtime/core/properties.py).
ARRAY_HANDLE_BASE = 0x7A00_0000_0000        # cudaArray_t / cudaMipmappedArray_t values (not addresses)


def fail(message: str, code: str = "cudaErrorInvalidValue"):
    raise CudaError(message, code)


# ------------------------------------------------------------------ channel formats

def channel_format(x: int, y: int, z: int, w: int, kind: int | str) -> Format:
    """A cudaChannelFormatDesc as the emulator's Format; invalid ones raise
    cudaErrorInvalidChannelDescriptor (channels of one size, 8/16/32 bits, float only 16/32)."""
    kind = KINDS[kind] if isinstance(kind, int) and 0 <= kind < 3 else kind
    bits = tuple(int(b) for b in (x, y, z, w))
    n = sum(1 for b in bits if b)
    sizes = {b for b in bits if b}
    ok = (kind in KINDS and n in (1, 2, 4) and len(sizes) == 1 and all(bits[:n])
          and sizes <= ({16, 32} if kind == "float" else {8, 16, 32}))
    if not ok:
        fail(f"the channel format ({x}, {y}, {z}, {w}, {kind}) is not one a CUDA array can hold: use 1, 2 or 4 "
             "channels of one size (8, 16 or 32 bits; 16 or 32 for float), e.g. cudaCreateChannelDesc<float4>().",
             "cudaErrorInvalidChannelDescriptor")
    return Format(bits, kind)


def format_of(dtype, channels: int = 1) -> Format:
    """The channel format of numpy data: uint8 -> 8-bit unsigned, float16 -> half, ..."""
    dt = np.dtype(dtype)
    kind = {"u": "unsigned", "i": "signed", "f": "float"}.get(dt.kind)
    if kind is None or dt.itemsize not in (1, 2, 4) or (kind == "float" and dt.itemsize == 1):
        fail(f"a texture cannot hold {dt} values: use uint8/int8, uint16/int16, uint32/int32, float16 or float32.",
             "cudaErrorInvalidChannelDescriptor")
    if channels not in (1, 2, 4):
        fail(f"a texel has 1, 2 or 4 channels (like float, float2, float4), not {channels}. For RGB data add an "
             "alpha channel.", "cudaErrorInvalidChannelDescriptor")
    b = dt.itemsize * 8
    return channel_format(*([b] * channels + [0] * (4 - channels)), kind)


# ------------------------------------------------------------------ descriptions

@dataclass
class ResourceDesc:
    """cudaResourceDesc: what a texture or surface object views."""

    kind: str                       # array | mipmap | linear | pitch2d
    array: int = 0                  # cudaArray_t / cudaMipmappedArray_t handle
    address: int = 0                # linear and pitch2d: the device pointer
    fmt: Format | None = None       # linear and pitch2d: the channel format
    size: int = 0                   # linear: bytes
    width: int = 0                  # pitch2d: texels
    height: int = 0
    pitch: int = 0                  # pitch2d: bytes per row


@dataclass
class CudaArray:
    """A CUDA array (cudaArray_t): texels of one format with an extent (width, height, depth;
    0 = absent) and flags. On the emulator ``image`` says where they lie in device memory."""

    handle: int
    fmt: Format
    extent: tuple
    flags: int
    image: Image | None = None
    owner: "MipmappedArray | None" = None   # a level of a mipmapped array is freed with it
    freed: bool = False
    device: object = None                    # the Python API's device, for copies
    is_cuda_array = True

    # -- Python API: numpy in, numpy out
    @property
    def channels(self) -> int:
        return self.fmt.channels

    @property
    def dtype(self) -> np.dtype:
        return self.fmt.channel_dtype

    @property
    def shape(self) -> tuple:
        """The numpy shape of its data: (depth or layers, height, width) without absent axes, then
        channels when there are more than one."""
        w, h, d = self.extent
        shape = tuple(s for s in (d, h) if s) + (w,)
        return shape + ((self.channels,) if self.channels > 1 else ())

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize

    def copy_to_device(self, data):
        """Fill the array from a numpy array of its shape (values converted to its channel type)."""
        a = np.ascontiguousarray(np.asarray(data))
        if a.shape != self.shape:
            fail(f"cannot copy an array of shape {a.shape} into a CUDA array of shape {self.shape}.")
        raw = a.astype(self.dtype, copy=False).reshape(-1).view(np.uint8)
        if self.device.kind == "gpu":
            from ..gpu import textures as gpu_textures
            gpu_textures.copy_to_array(self.handle, raw, self.extent, self.fmt.texel_bytes)
        else:
            self.device.memory.write(self.image.address, raw)
        return self

    def copy_to_host(self) -> np.ndarray:
        if self.device.kind == "gpu":
            from ..gpu import textures as gpu_textures
            raw = gpu_textures.copy_from_array(self.handle, self.nbytes, self.extent, self.fmt.texel_bytes)
        else:
            raw = self.device.memory.read(self.image.address, self.nbytes)
        return raw.view(self.dtype).reshape(self.shape).copy()

    def free(self):
        """cudaFreeArray (a level of a mipmapped array goes with the mipmapped array)."""
        if self.device is None or self.freed or self.owner is not None:
            return
        if self.device.kind == "gpu":
            from ..gpu import textures as gpu_textures
            gpu_textures.free_array(self.handle)
            self.freed = True
        else:
            state(self.device.memory).free_array(self.handle)

    def __repr__(self):
        return f"<CudaArray {self.fmt} shape={self.shape}{_flag_words(self.flags)}>"


@dataclass
class MipmappedArray:
    """A mipmapped array (cudaMipmappedArray_t): one CUDA array per level, each half the last."""

    handle: int
    levels: list
    flags: int
    freed: bool = False
    device: object = None
    is_mipmapped = True

    def level(self, k: int) -> CudaArray:
        """cudaGetMipmappedArrayLevel."""
        if not 0 <= k < len(self.levels):
            fail(f"this mipmapped array has levels 0 to {len(self.levels) - 1}; there is no level {k}.")
        return self.levels[k]

    def free(self):
        if self.device is None or self.freed:
            return
        if self.device.kind == "gpu":
            from ..gpu import textures as gpu_textures
            gpu_textures.free_mipmapped(self.handle)
            self.freed = True
        else:
            state(self.device.memory).free_mipmapped(self.handle)

    def __repr__(self):
        top = self.levels[0]
        return f"<MipmappedArray {top.fmt} shape={top.shape} levels={len(self.levels)}{_flag_words(self.flags)}>"


def _flag_words(flags):
    words = [n for bit, n in ((ARRAY_LAYERED, "layered"), (ARRAY_CUBEMAP, "cubemap"),
                              (ARRAY_SURFACE_LOAD_STORE, "surface"), (ARRAY_TEXTURE_GATHER, "gather")) if flags & bit]
    return (" " + " ".join(words)) if words else ""


# ------------------------------------------------------------------ one device's arrays and objects

def level_extent(extent, k: int, flags: int) -> tuple:
    """The extent of mipmap level k: each dimension halved k times (at least 1); layers stay."""
    w, h, d = extent
    keep_depth = flags & (ARRAY_LAYERED | ARRAY_CUBEMAP)
    return max(w >> k, 1), (max(h >> k, 1) if h else 0), (d if keep_depth else (max(d >> k, 1) if d else 0))


class Textures:
    """The arrays, mipmapped arrays, texture objects and surface objects of one device memory."""

    def __init__(self, memory):
        self._memory = weakref.ref(memory)
        self.objects = objects(memory)
        self.arrays: dict = {}          # handle -> CudaArray (levels of mipmapped arrays included)
        self.mipmaps: dict = {}         # handle -> MipmappedArray
        self._next = 0

    @property
    def memory(self):
        return self._memory()

    def _handle(self) -> int:
        self._next += 1
        return ARRAY_HANDLE_BASE + 16 * self._next

    # -------------------------------------------------------------- arrays
    def malloc_array(self, fmt: Format, width: int, height: int = 0, flags: int = 0) -> CudaArray:
        """cudaMallocArray: a 1D (height 0) or 2D array."""
        if flags & ~(ARRAY_SURFACE_LOAD_STORE | ARRAY_TEXTURE_GATHER):
            fail(f"cudaMallocArray takes the flags cudaArraySurfaceLoadStore and cudaArrayTextureGather; 0x{flags:x} "
                 "has others (layered and cubemap arrays come from cudaMalloc3DArray).")
        return self.malloc_3d_array(fmt, (width, height, 0), flags)

    def malloc_3d_array(self, fmt: Format, extent, flags: int = 0, levels: int = 1) -> CudaArray:
        """cudaMalloc3DArray: extent (width, height, depth) in texels; 0 marks an absent dimension.
        Layered arrays keep their layer count in depth; cubemaps have depth 6 (6 x layers)."""
        w, h, d = (int(v) for v in extent)
        self._check_extent(fmt, w, h, d, flags)
        image = self._allocate(fmt, w, h, d, flags)
        arr = CudaArray(self._handle(), fmt, (w, h, d), flags, image)
        self.arrays[arr.handle] = arr
        return arr

    def _check_extent(self, fmt, w, h, d, flags):
        layered, cube = bool(flags & ARRAY_LAYERED), bool(flags & ARRAY_CUBEMAP)
        if w <= 0 or h < 0 or d < 0 or (h == 0 and d and not layered):
            fail(f"a CUDA array of extent ({w}, {h}, {d}) is invalid: the width must be at least 1, and a depth "
                 "needs a height (except for layered 1D arrays).")
        L = TEXTURES
        if cube:
            per = L["maxTextureCubemapLayered"][0] if layered else L["maxTextureCubemap"]
            if w != h or (d != 6 if not layered else d % 6 or d == 0) or w > per:
                fail(f"a cubemap array has square faces and a depth of 6{' x layers' if layered else ''} faces; "
                     f"the extent ({w}, {h}, {d}) is not one.")
        elif layered:
            lim = L["maxTexture2DLayered"] if h else L["maxTexture1DLayered"]
            dims = (w, h, d) if h else (w, d)
            if d == 0 or any(v > m for v, m in zip(dims, lim)):
                fail(f"a layered array of extent ({w}, {h}, {d}) is too large or has no layers (the limit is "
                     f"{lim}).")
        else:
            lim = L["maxTexture3D"] if d else L["maxTexture2D"] if h else (L["maxTexture1D"],)
            dims = (w, h, d) if d else (w, h) if h else (w,)
            if any(v > m for v, m in zip(dims, lim)):
                fail(f"a CUDA array of extent {dims} is larger than the device allows ({lim}).")

    def _allocate(self, fmt, w, h, d, flags, label="cudaArray"):
        pitch = w * fmt.texel_bytes
        slice_pitch = pitch * max(h, 1)
        nbytes = slice_pitch * max(d, 1)
        address = self.memory.alloc(nbytes, label=f"{label} {fmt} ({w}, {h}, {d})")
        self.memory.find(address).mark_written(0, nbytes)      # arrays read as zeros before any copy
        return Image(address, fmt, w, h, d, pitch, slice_pitch, bool(flags & ARRAY_LAYERED),
                     bool(flags & ARRAY_CUBEMAP), "array", flags)

    def malloc_mipmapped(self, fmt: Format, extent, levels: int, flags: int = 0) -> MipmappedArray:
        """cudaMallocMipmappedArray: level k has extent max(1, n >> k) per dimension (layers stay)."""
        w, h, d = (int(v) for v in extent)
        self._check_extent(fmt, w, h, d, flags)
        most = max(w, h, 0 if flags & (ARRAY_LAYERED | ARRAY_CUBEMAP) else d).bit_length()
        levels = most if levels <= 0 else min(levels, most)      # as CUDA does: 0 or too many -> all
        mm = MipmappedArray(self._handle(), [], flags)
        for k in range(levels):
            image = self._allocate(fmt, *level_extent((w, h, d), k, flags), flags, label=f"mipmap level {k}")
            level = CudaArray(self._handle(), fmt, image.extent(), flags, image, owner=mm)
            self.arrays[level.handle] = level
            mm.levels.append(level)
        self.mipmaps[mm.handle] = mm
        return mm

    def array(self, handle: int) -> CudaArray:
        arr = self.arrays.get(int(handle))
        if arr is None or arr.freed:
            fail(f"0x{int(handle):x} is not a live CUDA array (was it freed, or never made with cudaMallocArray?).",
                 "cudaErrorInvalidResourceHandle" if handle else "cudaErrorInvalidValue")
        return arr

    def mipmap(self, handle: int) -> MipmappedArray:
        mm = self.mipmaps.get(int(handle))
        if mm is None or mm.freed:
            fail(f"0x{int(handle):x} is not a live mipmapped array.",
                 "cudaErrorInvalidResourceHandle" if handle else "cudaErrorInvalidValue")
        return mm

    def free_array(self, handle: int):
        if not handle:
            return                                   # cudaFreeArray(NULL) does nothing
        arr = self.array(handle)
        if arr.owner is not None:
            return                     # a level goes with its mipmapped array (CUDA answers success)
        arr.freed = True
        self.memory.free(arr.image.address)

    def free_mipmapped(self, handle: int):
        if not handle:
            return
        mm = self.mipmap(handle)
        mm.freed = True
        for level in mm.levels:
            level.freed = True
            self.memory.free(level.image.address)

    # -------------------------------------------------------------- copies
    def region(self, handle: int, x: int, y: int, z: int, width: int, height: int, depth: int):
        """(address of byte x of row y of slice z, row pitch, slice pitch) for a copy of ``width``
        bytes x height rows x depth slices to or from an array; outside it: cudaErrorInvalidValue.
        Offsets and widths need not be whole texels (CUDA 13 copies bytes, measured)."""
        im = self.array(handle).image
        row = im.width * im.fmt.texel_bytes
        if min(x, y, z) < 0 or x + width > row or y + height > im.rows or z + depth > im.slices:
            fail(f"a copy of {width} bytes x {height} rows x {depth} slices at byte {x} of row {y}, slice {z} does "
                 f"not fit in the CUDA array of {im.width} x {im.rows} x {im.slices} texels of {im.fmt} ({row} bytes "
                 "per row).")
        return im.address + z * im.slice_pitch + y * im.pitch + x, im.pitch, im.slice_pitch

    def span(self, handle: int, x: int, y: int, count: int):
        """For ``count`` bytes from byte x of row y on, row after row (cudaMemcpyToArray): (address,
        bytes that fit, error code or ""). Like CUDA 13 (measured), a copy that runs past the end
        still moves the part that fits, then reports cudaErrorInvalidValue."""
        im = self.array(handle).image
        start = y * im.pitch + x
        if x < 0 or y < 0 or x > im.pitch or start > im.nbytes:
            fail(f"byte {x} of row {y} is outside the CUDA array ({im.nbytes} bytes, {im.pitch} per row).")
        fit = min(count, im.nbytes - start)
        return im.address + start, fit, "" if fit == count else "cudaErrorInvalidValue"

    # -------------------------------------------------------------- texture and surface objects
    def image_of(self, res: ResourceDesc) -> list:
        """The images a resource description names (several for a mipmapped array)."""
        if res.kind == "array":
            return [self.array(res.array).image]
        if res.kind == "mipmap":
            return [level.image for level in self.mipmap(res.array).levels]
        fmt = res.fmt
        if res.kind == "linear":
            if res.address % TEXTURE_ALIGNMENT:
                fail(f"linear memory bound to a texture must start {TEXTURE_ALIGNMENT}-byte aligned "
                     f"(cudaDeviceProp::textureAlignment); 0x{res.address:x} is not. Bind the pointer cudaMalloc "
                     "gave, not one inside the allocation.")
            n = res.size // fmt.texel_bytes
            if n > MAX_TEXTURE_1D_LINEAR:
                fail(f"a linear texture of {res.size} bytes ({n} texels of {fmt}) is larger than the "
                     f"{MAX_TEXTURE_1D_LINEAR:,} texels allowed.")
            readable = self._allocated_bytes(res.address, res.size) if n else 0
            return [Image(res.address, fmt, n, 0, 0, res.size, 0, kind="linear", readable=readable)]
        if res.kind == "pitch2d":
            lw, lh, lp = TEXTURES["maxTexture2DLinear"]
            if (res.address % TEXTURE_ALIGNMENT or res.pitch % TEXTURE_PITCH_ALIGNMENT
                    or res.width * fmt.texel_bytes > res.pitch or not 0 < res.width <= lw
                    or not 0 <= res.height <= lh or res.pitch > lp):
                fail(f"a pitched 2D texture needs a {TEXTURE_ALIGNMENT}-byte aligned pointer, a pitch that is "
                     f"a multiple of {TEXTURE_PITCH_ALIGNMENT} bytes and at least the row's bytes, and a "
                     f"width and height of at least 1; got {res.width} x {res.height} texels of {fmt}, pitch "
                     f"{res.pitch} at 0x{res.address:x}. cudaMallocPitch gives such memory.")
            readable = self._allocated_bytes(res.address, res.pitch * res.height) if res.height else 0
            return [Image(res.address, fmt, res.width, res.height, 0, res.pitch, 0, kind="pitch2d",
                          readable=readable)]
        fail(f"unknown resource type {res.kind!r}.")

    def _allocated_bytes(self, address, nbytes) -> int:
        """The bytes from ``address`` to the end of its allocation where fewer than ``nbytes`` (0: all
        fit, or no live allocation holds the address). An H200 accepts a range past its allocation's
        end (tests/runtime_api/texture_bounds.cu; convolutionFFT2D binds more than it allocated) and,
        in a one-off probe, any pointer but a null one: unallocated, freed or host memory, faulting
        only when a fetch reaches unmapped memory. Here memcheck reports a fetch outside a live
        allocation (emulator.texture._reading), where a GPU reads whatever memory lies there."""
        if not address:
            fail("a texture over linear memory needs a device pointer; this one is null.")
        a = self.memory.find(address)
        if a is None or a.freed or not a.address <= address < a.address + a.size:
            return 0
        left = a.address + a.size - address
        return left if left < nbytes else 0

    def create_texture(self, res: ResourceDesc, sampler: Sampler) -> int:
        """cudaCreateTextureObject; returns the handle."""
        levels = self.image_of(res)
        fmt = levels[0].fmt
        if sampler.read == "normalized" and (fmt.kind == "float" or fmt.channel_bytes == 4):
            fail(f"cudaReadModeNormalizedFloat turns 8- and 16-bit integers into floats; the texels here are {fmt}. "
                 "Use cudaReadModeElementType.", "cudaErrorInvalidNormSetting")
        if sampler.filter == "linear" and fmt.kind != "float" and sampler.read == "element":
            fail(f"linear filtering needs a texture that returns floats: read the {fmt} texels with "
                 "cudaReadModeNormalizedFloat, or use cudaFilterModePoint.", "cudaErrorInvalidFilterSetting")
        return self.objects.add(self.objects.textures, TextureObject(levels, sampler, res))

    def texture(self, handle: int) -> TextureObject:
        return _live(self.objects.textures, handle, "texture")

    def destroy_texture(self, handle: int):
        _destroy(self.objects.textures, handle, "texture")

    def create_surface(self, res: ResourceDesc) -> int:
        """cudaCreateSurfaceObject: only over an array made with cudaArraySurfaceLoadStore."""
        if res.kind != "array":
            fail("a surface object views a CUDA array (cudaResourceTypeArray); linear, pitched and mipmapped "
                 "resources cannot be surfaces.")
        arr = self.array(res.array)     # CUDA 13 does not insist on cudaArraySurfaceLoadStore (measured)
        return self.objects.add(self.objects.surfaces, SurfaceObject(arr.image, res))

    def surface(self, handle: int) -> SurfaceObject:
        return _live(self.objects.surfaces, handle, "surface")

    def destroy_surface(self, handle: int):
        _destroy(self.objects.surfaces, handle, "surface")


def _live(table: dict, handle: int, what: str):
    """The texture or surface object a handle names (0 is cudaErrorInvalidValue, a stale one InvalidResourceHandle)."""
    obj = table.get(int(handle))
    if obj is None:
        fail(f"{int(handle)} is not a live {what} object.", "cudaErrorInvalidResourceHandle"
             if handle else "cudaErrorInvalidValue")
    return obj


def _destroy(table: dict, handle: int, what: str):
    """cudaDestroyTextureObject / cudaDestroySurfaceObject: 0 is let pass, as CUDA does."""
    if handle:
        _live(table, handle, what)
        del table[int(handle)]


_STATES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def state(memory) -> Textures:
    """The Textures of a device memory (one per memory, made on first use)."""
    s = _STATES.get(memory)
    if s is None:
        s = _STATES[memory] = Textures(memory)
    return s


# ------------------------------------------------------------------ the Python API

def sampler(filter="point", address="clamp", normalized=False, read="element", border=(0.0, 0.0, 0.0, 0.0),
            srgb=False, mipmap_filter="point", lod_bias=0.0, min_lod=0.0, max_lod=None, max_anisotropy=0,
            seamless_cubemap=False, disable_trilinear_optimization=False, levels=1) -> Sampler:
    """A Sampler from Python words, checked; ``max_lod`` defaults to the last mipmap level."""
    modes = (address,) * 3 if isinstance(address, str) else tuple(address) + ("clamp",) * (3 - len(address))
    for what, value, allowed in (("filter", filter, FILTER_MODES), ("read", read, READ_MODES),
                                 ("mipmap_filter", mipmap_filter, FILTER_MODES)):
        if value not in allowed:
            fail(f"{what}={value!r} is not one of {', '.join(map(repr, allowed))}.")
    for m in modes:
        if m not in ADDRESS_MODES:
            fail(f"address mode {m!r} is not one of {', '.join(map(repr, ADDRESS_MODES))}.")
    if len(modes) != 3:
        fail(f"give one address mode, or one per dimension (up to 3), not {len(modes)}.")
    border = tuple(float(np.float32(b)) for b in (tuple(border) + (0.0,) * 4)[:4])
    return Sampler(modes, filter, read, bool(normalized), bool(srgb), border, mipmap_filter,
                   float(np.float32(lod_bias)), float(np.float32(min_lod)),
                   float(np.float32(levels - 1 if max_lod is None else max_lod)), int(max_anisotropy),
                   bool(seamless_cubemap), bool(disable_trilinear_optimization))


def array_extent(shape, channels=1, layered=False, cubemap=False):
    """The CUDA extent (width, height, depth) of numpy data of ``shape``."""
    dims = tuple(shape[:-1]) if channels > 1 else tuple(shape)
    if channels > 1 and (not shape or shape[-1] != channels):
        fail(f"data for a {channels}-channel array has {channels} values in its last axis; shape {tuple(shape)} "
             "does not.")
    if not 1 <= len(dims) <= 3:
        fail(f"a CUDA array holds 1D, 2D or 3D data (then channels); shape {tuple(shape)} has {len(dims)} axes.")
    if (layered or cubemap) and len(dims) == 1:
        fail("a layered or cubemap array needs a layer axis first: shape (layers, width) or (layers, height, width).")
    if layered and len(dims) == 2:
        return (dims[1], 0, dims[0])
    return tuple(reversed(dims)) + (0,) * (3 - len(dims))


def _flags(layered, cubemap, surface, gather):
    return ((ARRAY_LAYERED if layered else 0) | (ARRAY_CUBEMAP if cubemap else 0)
            | (ARRAY_SURFACE_LOAD_STORE if surface else 0) | (ARRAY_TEXTURE_GATHER if gather else 0))


def _device():
    from . import device as devices
    return devices.current()


def cuda_array(data=None, *, shape=None, dtype=np.float32, channels=1, layered=False, cubemap=False,
               surface=False, gather=False, device=None):
    """A CUDA array, filled from numpy ``data`` (or empty, of ``shape`` and ``dtype``).

    Shapes, as numpy orders them (width last, then channels when there are 2 or 4):
    (W,) 1D, (H, W) 2D, (D, H, W) 3D; layered=True: (layers, W) or (layers, H, W); cubemap=True:
    (6, W, W) or, layered, (6 * layers, W, W). ``surface=True`` lets surface objects write it
    (cudaArraySurfaceLoadStore); ``gather=True`` allows tex2Dgather (cudaArrayTextureGather).
    ``device``: where it lives (default: the current device, see cudalab.use)."""
    if data is not None:
        data = np.ascontiguousarray(np.asarray(data))
        shape, dtype = data.shape, data.dtype
    if shape is None:
        fail("cuda_array needs data, or a shape (and dtype) for an empty array.")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    fmt = format_of(dtype, channels)
    extent = array_extent(shape, channels, layered, cubemap)
    flags = _flags(layered, cubemap, surface, gather)
    dev = device or _device()
    if dev.kind == "gpu":
        from ..gpu import textures as gpu_textures
        arr = CudaArray(gpu_textures.malloc_array(fmt, extent, flags), fmt, extent, flags)
    else:
        arr = state(dev.memory).malloc_3d_array(fmt, extent, flags)
    arr.device = dev
    if data is not None:
        arr.copy_to_device(data)
    return arr


def mipmapped_array(levels, *, channels=1, layered=False, cubemap=False, surface=False, gather=False, device=None):
    """A mipmapped array from a list of numpy levels (level 0, the largest, first; each next level
    max(1, n // 2) per dimension, layers unchanged). The levels it does not get stay zero."""
    levels = [np.ascontiguousarray(np.asarray(a)) for a in levels]
    if not levels:
        fail("mipmapped_array needs at least one level.")
    top = levels[0]
    fmt = format_of(top.dtype, channels)
    extent = array_extent(top.shape, channels, layered, cubemap)
    flags = _flags(layered, cubemap, surface, gather)
    dev = device or _device()
    if dev.kind == "gpu":
        from ..gpu import textures as gpu_textures
        handle, level_handles = gpu_textures.malloc_mipmapped(fmt, extent, len(levels), flags)
        mm = MipmappedArray(handle, [], flags)
        for k, h in enumerate(level_handles):
            mm.levels.append(CudaArray(h, fmt, level_extent(extent, k, flags), flags, owner=mm))
    else:
        mm = state(dev.memory).malloc_mipmapped(fmt, extent, len(levels), flags)
    mm.device = dev
    for level in mm.levels:
        level.device = dev
    for k, a in enumerate(levels):
        mm.level(k).copy_to_device(a)
    return mm


class _ObjectHandle(int):
    """A texture or surface object's handle (the int a kernel takes) that remembers what it views and
    where it lives: ``destroy`` goes to the emulator's objects or to the GPU's, by ``kind``."""

    kind = ""
    resource = None
    device = None

    def destroy(self):
        if self.device is not None:
            if self.device.kind == "gpu":
                from ..gpu import textures as owner
            else:
                owner = state(self.device.memory)
            getattr(owner, f"destroy_{self.kind}")(int(self))
            self.device = None

    def __repr__(self):
        return f"<{self.kind} object {int(self)} over {self.resource!r}>"


class TextureHandle(_ObjectHandle):
    """A texture object: a cudaTextureObject_t (pass it to a kernel) that remembers what it views."""

    kind = "texture"
    sampler = None


class SurfaceHandle(_ObjectHandle):
    """A surface object: a cudaSurfaceObject_t (pass it to a kernel) over a CUDA array."""

    kind = "surface"


def resource_of(resource, channels=1, width=None, height=None, pitch=None) -> ResourceDesc:
    """A ResourceDesc for what ``texture``/``surface`` were given: an array, a mipmapped array, or a
    device array (linear memory; with width, height and pitch: pitched 2D memory)."""
    if isinstance(resource, MipmappedArray):
        return ResourceDesc("mipmap", array=resource.handle)
    if isinstance(resource, CudaArray):
        return ResourceDesc("array", array=resource.handle)
    ptr = getattr(resource, "device_ptr", None)
    if ptr is None:
        fail(f"a texture views a CUDA array, a mipmapped array or a device array, not {type(resource).__name__}. "
             "Make one with cudalab.cuda_array(data) or cudalab.to_device(data).")
    fmt = format_of(resource.dtype, channels)
    if width is None and height is None and pitch is None:
        return ResourceDesc("linear", address=int(ptr), fmt=fmt, size=int(resource.nbytes))
    if None in (width, height, pitch):
        fail("a pitched 2D texture needs width, height (texels) and pitch (bytes per row) together.")
    return ResourceDesc("pitch2d", address=int(ptr), fmt=fmt, width=int(width), height=int(height),
                        pitch=int(pitch))


def texture(resource, *, filter="point", address="clamp", normalized=False, read="element",
            border=(0.0, 0.0, 0.0, 0.0), srgb=False, mipmap_filter="point", lod_bias=0.0, min_lod=0.0,
            max_lod=None, max_anisotropy=0, seamless_cubemap=False, disable_trilinear_optimization=False,
            channels=1, width=None, height=None, pitch=None):
    """A texture object over ``resource`` (cudaCreateTextureObject), passed to kernels as a
    cudaTextureObject_t.

    filter: "point" | "linear"; address: "wrap" | "clamp" | "mirror" | "border", or one per
    dimension; normalized: coordinates in [0, 1) instead of texels; read: "element" (texels as
    stored) | "normalized" (8/16-bit integers as floats in [0, 1] or [-1, 1]); border: the colour
    outside a "border" texture. For a device array: channels (texels of 2 or 4 values), and
    width/height/pitch for pitched 2D memory."""
    res = resource_of(resource, channels, width, height, pitch)
    levels = len(resource.levels) if res.kind == "mipmap" else 1
    smp = sampler(filter, address, normalized, read, border, srgb, mipmap_filter, lod_bias, min_lod, max_lod,
                  max_anisotropy, seamless_cubemap, disable_trilinear_optimization, levels)
    dev = getattr(resource, "device", None) or _device()
    if dev.kind == "gpu":
        from ..gpu import textures as gpu_textures
        h = TextureHandle(gpu_textures.create_texture(res, smp))
    else:
        h = TextureHandle(state(dev.memory).create_texture(res, smp))
    h.resource, h.sampler, h.device = resource, smp, dev
    return h


def surface(array):
    """A surface object over a CUDA array made with surface=True (cudaCreateSurfaceObject)."""
    res = resource_of(array)
    dev = getattr(array, "device", None) or _device()
    if dev.kind == "gpu":
        from ..gpu import textures as gpu_textures
        h = SurfaceHandle(gpu_textures.create_surface(res))
    else:
        h = SurfaceHandle(state(dev.memory).create_surface(res))
    h.resource, h.device = array, dev
    return h
