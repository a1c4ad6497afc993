"""CUDA arrays, texture and surface objects on a real GPU, through cuda.bindings' runtime API.

The same calls as ``cudalab.runtime.textures`` makes on the emulator, for ``cudalab.use("gpu")``
and for recording the texture corpus on an H100 (tests/kernels/record.py). Arguments are the
runtime's own descriptions (a Format, an extent, a ResourceDesc, a Sampler), so nothing here
decides what a texture means; a CUDA error becomes a CudaError with the runtime's name.
"""
from __future__ import annotations

import numpy as np

from ..errors import CudaError


def _rt():
    from cuda.bindings import runtime
    return runtime


def _ok(result, what):
    """cuda.bindings returns (cudaError_t, values...): raise on an error, else give the values."""
    rt = _rt()
    err, *values = result if isinstance(result, tuple) else (result,)
    if err != rt.cudaError_t.cudaSuccess:
        raise CudaError(f"{what} failed on the GPU: {rt.cudaGetErrorString(err)[1].decode()}.", err.name)
    return values[0] if len(values) == 1 else tuple(values)


def channel_desc(fmt):
    rt = _rt()
    return _ok(rt.cudaCreateChannelDesc(*fmt.bits, rt.cudaChannelFormatKind(("signed", "unsigned", "float")
                                                                            .index(fmt.kind))), "cudaCreateChannelDesc")


def _extent(extent):
    return _rt().make_cudaExtent(*(int(v) for v in extent))


def malloc_array(fmt, extent, flags) -> int:
    return int(_ok(_rt().cudaMalloc3DArray(channel_desc(fmt), _extent(extent), flags), "cudaMalloc3DArray"))


def malloc_mipmapped(fmt, extent, levels, flags):
    """(handle, [level handles])."""
    rt = _rt()
    mm = _ok(rt.cudaMallocMipmappedArray(channel_desc(fmt), _extent(extent), levels, flags), "cudaMallocMipmappedArray")
    return int(mm), [int(_ok(rt.cudaGetMipmappedArrayLevel(mm, k), "cudaGetMipmappedArrayLevel"))
                     for k in range(levels)]


def _copy3d(handle, host: np.ndarray, extent, texel_bytes, to_array: bool):
    rt = _rt()
    w, h, d = extent
    p = rt.cudaMemcpy3DParms()
    ptr = rt.make_cudaPitchedPtr(host.ctypes.data, w * texel_bytes, w, max(h, 1))
    if to_array:
        p.srcPtr, p.dstArray, p.kind = ptr, rt.cudaArray_t(handle), rt.cudaMemcpyKind.cudaMemcpyHostToDevice
    else:
        p.dstPtr, p.srcArray, p.kind = ptr, rt.cudaArray_t(handle), rt.cudaMemcpyKind.cudaMemcpyDeviceToHost
    p.extent = rt.make_cudaExtent(w, max(h, 1), max(d, 1))
    _ok(rt.cudaMemcpy3D(p), "cudaMemcpy3D")


def copy_to_array(handle, raw: np.ndarray, extent, texel_bytes):
    _copy3d(handle, np.ascontiguousarray(raw), extent, texel_bytes, True)


def copy_from_array(handle, nbytes, extent, texel_bytes) -> np.ndarray:
    out = np.empty(nbytes, np.uint8)
    _copy3d(handle, out, extent, texel_bytes, False)
    return out


def free_array(handle):
    _ok(_rt().cudaFreeArray(_rt().cudaArray_t(handle)), "cudaFreeArray")


def free_mipmapped(handle):
    _ok(_rt().cudaFreeMipmappedArray(_rt().cudaMipmappedArray_t(handle)), "cudaFreeMipmappedArray")


def resource_desc(res):
    """A cudaResourceDesc from the runtime's ResourceDesc."""
    rt = _rt()
    r = rt.cudaResourceDesc()
    r.resType = rt.cudaResourceType(("array", "mipmap", "linear", "pitch2d").index(res.kind))
    if res.kind == "array":
        r.res.array.array = rt.cudaArray_t(res.array)
    elif res.kind == "mipmap":
        r.res.mipmap.mipmap = rt.cudaMipmappedArray_t(res.array)
    elif res.kind == "linear":
        r.res.linear.devPtr, r.res.linear.desc, r.res.linear.sizeInBytes = res.address, channel_desc(res.fmt), res.size
    else:
        p = r.res.pitch2D
        p.devPtr, p.desc, p.width, p.height, p.pitchInBytes = (res.address, channel_desc(res.fmt), res.width,
                                                               res.height, res.pitch)
    return r


def texture_desc(smp):
    """A cudaTextureDesc from the runtime's Sampler."""
    rt = _rt()
    t = rt.cudaTextureDesc()
    modes = ("wrap", "clamp", "mirror", "border")
    t.addressMode = [rt.cudaTextureAddressMode(modes.index(m)) for m in smp.address]
    t.filterMode = rt.cudaTextureFilterMode(("point", "linear").index(smp.filter))
    t.readMode = rt.cudaTextureReadMode(("element", "normalized").index(smp.read))
    t.sRGB, t.normalizedCoords = int(smp.srgb), int(smp.normalized)
    t.borderColor = list(smp.border)
    t.maxAnisotropy = smp.max_anisotropy
    t.mipmapFilterMode = rt.cudaTextureFilterMode(("point", "linear").index(smp.mipmap_filter))
    t.mipmapLevelBias, t.minMipmapLevelClamp, t.maxMipmapLevelClamp = smp.lod_bias, smp.min_lod, smp.max_lod
    t.disableTrilinearOptimization = int(smp.disable_trilinear_optimization)
    t.seamlessCubemap = int(smp.seamless_cubemap)
    return t


def create_texture(res, smp) -> int:
    return int(_ok(_rt().cudaCreateTextureObject(resource_desc(res), texture_desc(smp), None),
                   "cudaCreateTextureObject"))


def create_surface(res) -> int:
    return int(_ok(_rt().cudaCreateSurfaceObject(resource_desc(res)), "cudaCreateSurfaceObject"))


def destroy_texture(handle):
    _ok(_rt().cudaDestroyTextureObject(handle), "cudaDestroyTextureObject")


def destroy_surface(handle):
    _ok(_rt().cudaDestroySurfaceObject(handle), "cudaDestroySurfaceObject")
