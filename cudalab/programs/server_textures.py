"""The server's requests for CUDA arrays, 2D/3D copies, texture and surface objects.

A mixin for ``programs.server.Server``: the runtime's semantics live in ``runtime.textures``
(one ``Textures`` per device memory); these methods only unpack the shim's numbers and turn
CudaErrors into replies. Copies are planned here and done by the shim: the server checks both
sides and answers with addresses and pitches in the shared arena (host pointers stay the
program's own), and the shim moves the rows with memmove, as it does for cudaMemcpy2D.

Floats travel as their 32-bit patterns, so descriptors round-trip exactly.
"""
from __future__ import annotations

import struct
from contextlib import contextmanager

from ..emulator.texture import Sampler
from ..errors import CudaError
from .errors import code_of
from ..runtime.textures import ADDRESS_MODES, FILTER_MODES, READ_MODES, RESOURCE_TYPES, ResourceDesc, channel_format, \
    state

ARRAY, POINTER = 1, 0          # what one side of a 3D copy is


def _int(token: str) -> int:
    """A number from the shim: decimal, 0x-hex, or glibc's "(nil)" for a null pointer."""
    return 0 if token == "(nil)" else int(token, 0)


def _float(bits) -> float:
    return struct.unpack("<f", struct.pack("<I", int(bits) & 0xFFFFFFFF))[0]


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


class TextureRequests:
    """op_* handlers for the texture part of the runtime API (mixed into Server)."""

    @property
    def textures(self):
        return state(self.memory)

    @contextmanager
    def _runtime(self, call: str):
        """Run a runtime call; a CudaError becomes the reply, worded with the API call's name."""
        from .server import Reply
        try:
            yield
        except CudaError as e:
            raise Reply(e.code, f"cudalab: {call}: {e.args[0]}") from None

    def _fmt(self, x, y, z, w, kind):
        return channel_format(int(x), int(y), int(z), int(w), int(kind))

    # ------------------------------------------------------------------ arrays
    def op_array_malloc(self, x, y, z, w, kind, width, height, depth, flags, three_d, blob=b""):
        call = "cudaMalloc3DArray" if three_d == "1" else "cudaMallocArray"
        with self._runtime(call):
            fmt = self._fmt(x, y, z, w, kind)
            if three_d == "1":
                arr = self.textures.malloc_3d_array(fmt, (int(width), int(height), int(depth)), int(flags))
            else:
                arr = self.textures.malloc_array(fmt, int(width), int(height), int(flags))
        return (arr.handle,)

    def op_mipmap_malloc(self, x, y, z, w, kind, width, height, depth, levels, flags, blob=b""):
        with self._runtime("cudaMallocMipmappedArray"):
            mm = self.textures.malloc_mipmapped(self._fmt(x, y, z, w, kind), (int(width), int(height), int(depth)),
                                                int(levels), int(flags))
        return (mm.handle,)

    def op_mipmap_level(self, handle, level, blob=b""):
        with self._runtime("cudaGetMipmappedArrayLevel"):
            return (self.textures.mipmap(_int(handle)).level(int(level)).handle,)

    def op_array_free(self, handle, mipmapped, blob=b""):
        with self._runtime("cudaFreeMipmappedArray" if mipmapped == "1" else "cudaFreeArray"):
            if mipmapped == "1":
                self.textures.free_mipmapped(_int(handle))
            else:
                self.textures.free_array(_int(handle))

    def op_array_info(self, handle, blob=b""):
        with self._runtime("cudaArrayGetInfo"):
            arr = self.textures.array(_int(handle))
        kind = ("signed", "unsigned", "float").index(arr.fmt.kind)
        return (*arr.fmt.bits, kind, *arr.extent, arr.flags)

    # ------------------------------------------------------------------ copies
    def _side(self, what, kind, base, pitch, ysize, x, y, z, width, height, depth, in_texels):
        """(address, row pitch, slice pitch) of one side of a copy, after checking it."""
        base, pitch, ysize = _int(base), int(pitch), int(ysize)
        x, y, z = int(x), int(y), int(z)
        if int(kind) == ARRAY:
            arr = self.textures.array(base)
            tb = arr.fmt.texel_bytes if in_texels else 1
            return self.textures.region(base, x * tb, y, z, width, height, depth)
        start = base + z * pitch * ysize + y * pitch + x
        if self.in_arena(base):
            last = (depth - 1) * pitch * ysize + (height - 1) * pitch + width
            self.check_device(start, last, f"{what}")
        return start, pitch, pitch * ysize

    def op_copy3d(self, call, skind, sbase, spitch, sysize, sx, sy, sz, dkind, dbase, dpitch, dysize, dx, dy, dz,
                  width, height, depth, kind, stream, sync, blob=b""):
        """One copy of width x height x depth between two sides (an array, or memory with a pitch).
        Widths and x offsets count texels when a side is an array and the call is cudaMemcpy3D
        (bytes otherwise, as the 2D array calls take them). Answers both sides' addresses."""
        with self._runtime(call):
            sid = self.stream(stream)
            in_texels = call.startswith("cudaMemcpy3D")
            w, h, d = int(width), int(height), int(depth)
            if in_texels and ARRAY in (int(skind), int(dkind)):
                arr = self.textures.array(_int(sbase if int(skind) == ARRAY else dbase))
                w *= arr.fmt.texel_bytes
            if 0 in (w, h, d):
                return (0, 0, 0, 0, 0, 0, 0, 0, 0)
            src = self._side(call + " source", skind, sbase, spitch, sysize, sx, sy, sz, w, h, d, in_texels)
            dst = self._side(call + " destination", dkind, dbase, dpitch, dysize, dx, dy, dz, w, h, d, in_texels)
        direction = self._direction(dst[0], src[0], int(kind))
        host = dst[0] if direction == "d2h" else src[0]
        self.timeline.copy(sid, w * h * d, direction, self.pinned(host), sync == "1")
        return (*src, *dst, w, h, d)

    def op_array_span(self, call, handle, x, y, count, host, to_array, stream, sync, blob=b""):
        """cudaMemcpyToArray / cudaMemcpyFromArray: ``count`` bytes from (x bytes, y) on; answers the
        address, the bytes that fit and the error to report after moving them."""
        with self._runtime(call):
            sid = self.stream(stream)
            addr, fit, error = self.textures.span(_int(handle), int(x), int(y), int(count))
        host = _int(host)
        if self.in_arena(host):
            self.check_device(host, fit, call)
        direction = ("h2d" if to_array == "1" else "d2h") if not self.in_arena(host) else "d2d"
        self.timeline.copy(sid, fit, direction, self.pinned(host), sync == "1")
        return (addr, fit, code_of(error) if error else 0)

    def op_memset3d(self, ptr, pitch, ysize, width, height, depth, stream, sync, blob=b""):
        ptr, pitch, ysize, w, h, d = (_int(v) for v in (ptr, pitch, ysize, width, height, depth))
        if w and h and d:
            self.check_device(ptr, (d - 1) * pitch * ysize + (h - 1) * pitch + w, "cudaMemset3D")
            self.timeline.copy(self.stream(stream), w * h * d, "d2d", True, sync == "1")

    # ------------------------------------------------------------------ texture and surface objects
    def _resource(self, rtype, handle, ptr, x, y, z, w, kind, size, width, height, pitch) -> ResourceDesc:
        rtype = int(rtype)
        if not 0 <= rtype < len(RESOURCE_TYPES):
            raise CudaError(f"resType {rtype} is not a cudaResourceType.", "cudaErrorInvalidValue")
        res = ResourceDesc(RESOURCE_TYPES[rtype], array=_int(handle), address=_int(ptr))
        if res.kind in ("linear", "pitch2d"):
            res.fmt = self._fmt(x, y, z, w, kind)
            res.size, res.width, res.height, res.pitch = int(size), int(width), int(height), int(pitch)
        return res

    def op_tex_create(self, rtype, handle, ptr, x, y, z, w, kind, size, width, height, pitch,
                      a0, a1, a2, filter_, read, srgb, b0, b1, b2, b3, normalized, aniso, mfilter, bias, lo, hi,
                      no_trilinear, seamless, blob=b""):
        with self._runtime("cudaCreateTextureObject"):
            res = self._resource(rtype, handle, ptr, x, y, z, w, kind, size, width, height, pitch)
            modes = [int(m) for m in (a0, a1, a2)]
            if any(not 0 <= m < 4 for m in modes) or int(filter_) not in (0, 1) or int(read) not in (0, 1) \
                    or int(mfilter) not in (0, 1):
                raise CudaError("the texture descriptor has an address, filter or read mode out of range.",
                                "cudaErrorInvalidValue")
            smp = Sampler(tuple(ADDRESS_MODES[m] for m in modes), FILTER_MODES[int(filter_)], READ_MODES[int(read)],
                          bool(int(normalized)), bool(int(srgb)), tuple(_float(b) for b in (b0, b1, b2, b3)),
                          FILTER_MODES[int(mfilter)], _float(bias), _float(lo), _float(hi), int(aniso),
                          bool(int(seamless)), bool(int(no_trilinear)))
            return (self.textures.create_texture(res, smp),)

    def op_tex_destroy(self, handle, blob=b""):
        with self._runtime("cudaDestroyTextureObject"):
            self.textures.destroy_texture(_int(handle))

    def _resource_numbers(self, res: ResourceDesc):
        fmt = res.fmt
        f = (*fmt.bits, ("signed", "unsigned", "float").index(fmt.kind)) if fmt else (0, 0, 0, 0, 0)
        return (RESOURCE_TYPES.index(res.kind), res.array, res.address, *f, res.size, res.width, res.height, res.pitch)

    def op_tex_resource(self, handle, blob=b""):
        with self._runtime("cudaGetTextureObjectResourceDesc"):
            return self._resource_numbers(self.textures.texture(_int(handle)).resource)

    def op_tex_desc(self, handle, blob=b""):
        with self._runtime("cudaGetTextureObjectTextureDesc"):
            s = self.textures.texture(_int(handle)).sampler
        return (*(ADDRESS_MODES.index(m) for m in s.address), FILTER_MODES.index(s.filter), READ_MODES.index(s.read),
                int(s.srgb), *(_bits(b) for b in s.border), int(s.normalized), s.max_anisotropy,
                FILTER_MODES.index(s.mipmap_filter), _bits(s.lod_bias), _bits(s.min_lod), _bits(s.max_lod),
                int(s.disable_trilinear_optimization), int(s.seamless_cubemap))

    def op_surf_create(self, rtype, handle, ptr, x, y, z, w, kind, size, width, height, pitch, blob=b""):
        with self._runtime("cudaCreateSurfaceObject"):
            res = self._resource(rtype, handle, ptr, x, y, z, w, kind, size, width, height, pitch)
            return (self.textures.create_surface(res),)

    def op_surf_destroy(self, handle, blob=b""):
        with self._runtime("cudaDestroySurfaceObject"):
            self.textures.destroy_surface(_int(handle))

    def op_surf_resource(self, handle, blob=b""):
        with self._runtime("cudaGetSurfaceObjectResourceDesc"):
            return self._resource_numbers(self.textures.surface(_int(handle)).resource)
