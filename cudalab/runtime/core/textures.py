"""CUDA arrays, 2D/3D copies and texture/surface objects as runtime calls on a Context.

The objects themselves (arrays, mipmaps, texture and surface objects, their checks) are
``runtime.textures.Textures``, one per device memory, which the Python API (``cudalab.cuda_array``,
``cudalab.texture``) uses too. This mixin adds what needs the context: copies that go on a stream
and the timeline, checked against the context's allocation table. The bytes of a copy may be the
program's host memory, so the adapter moves them; these methods plan (addresses, pitches) and check.
"""
from __future__ import annotations

from ...errors import CudaError

ARRAY, POINTER = 1, 0          # what one side of a 3D copy is


class TextureAPI:
    """Context mixin: cudaMemcpy3D/2DArray/ToArray/FromArray and cudaMemset3D semantics."""

    @property
    def textures(self):
        from ..textures import state
        return state(self.memory.arena)

    def copy_side(self, what: str, kind: int, base: int, pitch: int, ysize: int, pos, extent, texel_units: bool):
        """(address, row pitch, slice pitch) of one side of a copy, after checking it fits.
        ``pos`` counts bytes in x unless ``texel_units`` (cudaMemcpy3D's positions count texels
        of an array side); ``extent`` is (bytes, rows, slices)."""
        x, y, z = pos
        width, height, depth = extent
        if kind == ARRAY:
            arr = self.textures.array(base)
            tb = arr.fmt.texel_bytes if texel_units else 1
            return self.textures.region(base, x * tb, y, z, width, height, depth)
        start = base + z * pitch * ysize + y * pitch + x
        if self.memory.in_arena(base):
            self.memory.check(start, (depth - 1) * pitch * ysize + (height - 1) * pitch + width, what)
        return start, pitch, pitch * ysize

    def copy_3d(self, call: str, src: tuple, dst: tuple, extent, kind: int, stream, sync: bool):
        """Plan one copy of an extent between two sides, each (kind, base, pitch, ysize, pos).
        Widths count texels when a side is an array and the call is cudaMemcpy3D*, bytes otherwise
        (as the 2D array calls take them). Returns (src side, dst side, (bytes, rows, slices))."""
        s = self.stream(stream)
        in_texels = call.startswith("cudaMemcpy3D")
        w, h, d = extent
        if in_texels and ARRAY in (src[0], dst[0]):
            w *= self.textures.array(src[1] if src[0] == ARRAY else dst[1]).fmt.texel_bytes
        if 0 in (w, h, d):
            return (0, 0, 0), (0, 0, 0), (0, 0, 0)
        a = self.copy_side(call + " source", *src, (w, h, d), in_texels)
        b = self.copy_side(call + " destination", *dst, (w, h, d), in_texels)
        direction = self.memory.direction(b[0], a[0], kind, call)
        host = b[0] if direction == "D2H" else a[0]
        if s.capture is not None and not sync:
            raise CudaError(f"{call} on a capturing stream: 3D and array copies are not captured into graphs by "
                            "the emulated GPU; issue them before or after the capture.", "cudaErrorStreamCaptureUnsupported")
        self.transfer(w * h * d, direction, s, self.memory.pinned(host), sync)
        return a, b, (w, h, d)

    def array_span(self, call: str, handle: int, x: int, y: int, count: int, host: int, to_array: bool, stream,
                   sync: bool):
        """cudaMemcpyToArray / cudaMemcpyFromArray: ``count`` bytes from (x bytes, y) on. Returns the
        array address, the bytes that fit and the error name to report after moving them (or None)."""
        s = self.stream(stream)
        addr, fit, error = self.textures.span(handle, x, y, count)
        if self.memory.in_arena(host):
            self.memory.check(host, fit, call)
            direction = "D2D"
        else:
            direction = "H2D" if to_array else "D2H"
        self.transfer(fit, direction, s, self.memory.pinned(host), sync)
        return addr, fit, error

    def memset_3d(self, ptr: int, pitch: int, ysize: int, extent, stream, sync: bool):
        w, h, d = extent
        s = self.stream(stream)
        if w and h and d:
            self.memory.check(ptr, (d - 1) * pitch * ysize + (h - 1) * pitch + w, "cudaMemset3D")
            self.timeline.memset(w * h * d, s.handle, sync=sync)
