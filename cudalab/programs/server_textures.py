"""The server's requests for CUDA arrays, 2D/3D copies, texture and surface objects.

A mixin for ``programs.server.Server``: the runtime's semantics live in ``runtime.textures``
(one ``Textures`` per device memory) and ``runtime.core.textures`` (copies on the context's streams);
these methods only unpack the shim's numbers. Copies are planned by the context and done by the
shim: the server checks both sides and answers with addresses and pitches in the shared arena (host pointers stay the
program's own), and the shim moves the rows with memmove, as it does for cudaMemcpy2D.

Floats travel as their 32-bit patterns, so descriptors round-trip exactly.
"""
from __future__ import annotations

import struct
from contextlib import contextmanager

from ..emulator.texture import Sampler
from ..errors import CudaError
from ..runtime.core.errors import code_of
from ..runtime.textures import ADDRESS_MODES, FILTER_MODES, READ_MODES, RESOURCE_TYPES, ResourceDesc, channel_format


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
        return self.ctx.textures

    @contextmanager
    def _runtime(self, call: str):
        """Run a runtime call; a CudaError's message names the API call."""
        try:
            yield
        except CudaError as e:
            raise CudaError(f"{call}: {e.args[0]}", e.code) from None

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
    def op_copy3d(self, call, skind, sbase, spitch, sysize, sx, sy, sz, dkind, dbase, dpitch, dysize, dx, dy, dz,
                  width, height, depth, kind, stream, sync, blob=b""):
        """One copy of width x height x depth between two sides (an array, or memory with a pitch);
        answers both sides' addresses and pitches for the shim to move the rows."""
        src = (int(skind), _int(sbase), int(spitch), int(sysize), (int(sx), int(sy), int(sz)))
        dst = (int(dkind), _int(dbase), int(dpitch), int(dysize), (int(dx), int(dy), int(dz)))
        with self._runtime(call):
            a, b, extent = self.ctx.copy_3d(call, src, dst, (int(width), int(height), int(depth)), int(kind),
                                            _int(stream), sync == "1")
        return (*a, *b, *extent)

    def op_array_span(self, call, handle, x, y, count, host, to_array, stream, sync, blob=b""):
        """cudaMemcpyToArray / cudaMemcpyFromArray: ``count`` bytes from (x bytes, y) on; answers the
        address, the bytes that fit and the error to report after moving them."""
        with self._runtime(call):
            addr, fit, error = self.ctx.array_span(call, _int(handle), int(x), int(y), int(count), _int(host),
                                                   to_array == "1", _int(stream), sync == "1")
        return (addr, fit, code_of(error) if error else 0)

    def op_memset3d(self, ptr, pitch, ysize, width, height, depth, stream, sync, blob=b""):
        with self._runtime("cudaMemset3D"):
            self.ctx.memset_3d(_int(ptr), _int(pitch), _int(ysize), (_int(width), _int(height), _int(depth)),
                               _int(stream), sync == "1")

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
