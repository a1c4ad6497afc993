"""Textures and surfaces on the device: tex, tld4, txq, suld, sust, sured, suq (PTX ISA 9.7.10).

A texture or surface object is a 64-bit handle. The host side (``cudalab.runtime.textures``) puts
what a handle names in the device memory's object table (``objects(memory)``): an ``Image`` (where
the texels lie in device memory and how they are laid out) and, for textures, a ``Sampler`` (the
cudaTextureDesc). The emulator lays a CUDA array out row by row (pitch-linear), where a GPU uses an
opaque block-linear layout; nothing a kernel can observe depends on the difference.

The texture unit's arithmetic was measured on an H100 (tests/kernels/textures.py): see ``sample``.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np

from . import slack

KINDS = ("signed", "unsigned", "float")          # cudaChannelFormatKind 0, 1, 2


@dataclass(frozen=True)
class Format:
    """A texel format: bits per channel (x, y, z, w; 0 = absent) and the channels' kind."""

    bits: tuple
    kind: str

    @property
    def channels(self) -> int:
        return sum(1 for b in self.bits if b)

    @property
    def channel_bytes(self) -> int:
        return self.bits[0] // 8

    @property
    def texel_bytes(self) -> int:
        return sum(self.bits) // 8

    @property
    def channel_dtype(self) -> np.dtype:
        b = self.channel_bytes
        if self.kind == "float":
            return np.dtype({2: np.float16, 4: np.float32}[b])
        return np.dtype(f"{'i' if self.kind == 'signed' else 'u'}{b}")

    def __str__(self):
        base = {"float": "float", "signed": "int", "unsigned": "uint"}[self.kind]
        n = self.channels
        return f"{base}{self.bits[0]}" + (f"x{n}" if n > 1 else "")


@dataclass
class Image:
    """Texels in device memory: a CUDA array (or one level of a mipmapped one), or linear or
    pitched memory bound to a texture. Row ``y`` of slice (or layer) ``z`` starts at
    ``address + z * slice_pitch + y * pitch``."""

    address: int
    fmt: Format
    width: int
    height: int = 0          # 0: a 1D resource
    depth: int = 0           # 0: no third dimension; the layer count of layered and cubemap arrays
    pitch: int = 0
    slice_pitch: int = 0
    layered: bool = False
    cubemap: bool = False
    kind: str = "array"      # "array" | "linear" | "pitch2d"
    flags: int = 0           # cudaArray* flags it was made with
    readable: int = 0        # bytes from address to the end of its allocation, where fewer than it spans

    @property
    def rows(self) -> int:
        return max(self.height, 1)

    @property
    def slices(self) -> int:
        return max(self.depth, 1)

    @property
    def nbytes(self) -> int:
        return self.slices * self.slice_pitch if self.slice_pitch else self.rows * self.pitch

    def extent(self) -> tuple:
        return (self.width, self.height, self.depth)


@dataclass(frozen=True)
class Sampler:
    """How a texture object reads its image (cudaTextureDesc, names in Python's words)."""

    address: tuple = ("clamp", "clamp", "clamp")     # wrap | clamp | mirror | border, per dimension
    filter: str = "point"                            # point | linear
    read: str = "element"                            # element | normalized
    normalized: bool = False
    srgb: bool = False
    border: tuple = (0.0, 0.0, 0.0, 0.0)             # float32 values
    mipmap_filter: str = "point"
    lod_bias: float = 0.0
    min_lod: float = 0.0
    max_lod: float = 0.0
    max_anisotropy: int = 0
    seamless_cubemap: bool = False
    disable_trilinear_optimization: bool = False


@dataclass
class TextureObject:
    levels: list                  # [Image]: one, or the levels of a mipmapped array
    sampler: Sampler
    resource: object = None       # what the host made it from (for cudaGetTextureObjectResourceDesc)


@dataclass
class SurfaceObject:
    image: Image
    resource: object = None


@dataclass
class Objects:
    """The texture and surface objects alive on one device, by handle."""

    textures: dict = field(default_factory=dict)
    surfaces: dict = field(default_factory=dict)
    next_handle: int = 1

    def add(self, table: dict, obj) -> int:
        h = self.next_handle
        self.next_handle += 1
        table[h] = obj
        return h


_OBJECTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def objects(memory) -> Objects:
    """The object table of a device memory (made on first use)."""
    table = _OBJECTS.get(memory)
    if table is None:
        table = _OBJECTS[memory] = Objects()
    return table


# ================================================================== the device side
from .decode import Unsupported, op          # noqa: E402  (the data model above imports nothing)
from .memory import GLOBAL_BASE              # noqa: E402
from .memops import atomic_apply             # noqa: E402
from .operands import reader, writer         # noqa: E402

GEOMETRIES = {"1d": (0, 1), "2d": (0, 2), "3d": (0, 3), "a1d": (1, 1), "a2d": (1, 2), "cube": (0, 3),
              "acube": (1, 3)}           # geometry -> (has a layer index first, coordinate dimensions)


def _geometry(inst):
    geom = next((m for m in inst.mods if m in GEOMETRIES or m in ("2dms", "a2dms")), None)
    if geom is None or geom not in GEOMETRIES:
        raise Unsupported(f"{inst.opcode} with geometry .{geom}" if geom else f"{inst.opcode} without a geometry")
    return geom


def _address_operand(inst, mem, d, ctype, layered=False):
    """Readers of the object handle and of the coordinates of ``[handle, {c0, c1, ...}]``; the
    layer index of an array geometry (the first coordinate) is always an integer."""
    if mem[0] != "mem" or mem[1] is None or mem[1][0] != "vec":
        raise Unsupported(f"{inst.opcode} with the operand {inst.text.split(None, 1)[-1]!r}")
    parts = mem[1][1]
    if len(parts) == 3:
        raise Unsupported(f"{inst.opcode} with a separate sampler (independent texture mode)")
    handle, coords = parts
    if handle[0] == "sym":
        raise Unsupported(f"{inst.opcode} of the texture reference {handle[1]} (texture references were removed "
                          "in CUDA 12; use texture objects)")
    coords = coords[1] if coords[0] == "vec" else (coords,)
    return reader(handle, "u64", d.func, d), [reader(c, "s32" if layered and k == 0 else ctype, d.func, d)
                                              for k, c in enumerate(coords)]


def _per_object(ex, sel, handles, table, what, inst, null_reads_zero=False):
    """Lanes grouped by the object their handle names: [(positions in sel, object)]. With
    ``null_reads_zero`` (texture fetches), handle 0 is a group with object None, whose texels are zeros."""
    handles = np.broadcast_to(np.asarray(handles, np.uint64), sel.shape)
    groups = []
    first = handles[:1]
    unique = first if handles.size and (handles == first[0]).all() else np.unique(handles)
    for h in unique:
        pos = np.arange(handles.size) if len(unique) == 1 else np.flatnonzero(handles == h)
        obj = table.get(int(h))
        if obj is None and int(h) == 0 and null_reads_zero and not slack.strict:
            _warn_null_texture(ex, inst, sel[pos])
        elif obj is None:
            lane = sel[pos[0]]
            ex.stop(lane, "memcheck", "cudaErrorIllegalAddress", inst, lambda b, t: (
                f"{inst.opcode} at {_where(ex, inst)} in kernel {ex.kernel_name} by thread {t} in block {b}: "
                f"{int(h)} is not a live {what} object (was it destroyed, or never created with "
                f"cudaCreate{what.capitalize()}Object?)."))
        groups.append((pos, obj))
    return groups


def _warn_null_texture(ex, inst, lanes):
    """A fetch through texture object 0, the handle a failed cudaCreateTextureObject leaves (CSCS's 2011
    stencil bound a 3 x 3 texture with a 12-byte pitch, which the create refuses): an H200 read zeros
    and went on, so the kernel does too, with memcheck's report as a warning (an error with --check
    memcheck), once per instruction and launch."""
    site = (id(inst), "tex", "null")
    f = ex.stats.warned.get(site)
    if f is not None:
        f.details["threads"] += len(lanes)
        return
    f = ex.access_finding(inst, "texture", "ld", lanes, np.zeros(1, np.int64), 4,
                          "is texture object 0, which no cudaCreateTextureObject made (a create that failed "
                          "leaves the handle 0)", counted=False)
    f.details["warning"] = True
    f.message += ("\n    A GPU reads zeros through texture object 0, so the kernel went on with 0 for these texels. "
                  "Check the error code of cudaCreateTextureObject (or of the cudaBindTexture call that made it).")
    ex.stats.warned[site] = f
    ex.stats.findings.append(f)


def _where(ex, inst) -> str:
    """'line N' of the CUDA source, as memcheck words it (the nearest line before, if need be)."""
    from .engine import source_line          # engine imports this module: import late
    line = inst.line or source_line(ex.fr.df.func, inst)
    return f"line {line}" if line else inst.place


def _write_words(ws, ex, sel, words):
    """Write 32-bit result words (an (n, k) uint32 array) into the destination registers."""
    for k, w in enumerate(ws):
        if w is not None:
            w(ex, sel, words[:, k])


def _dest_writers(inst, d, dst):
    regs = dst[1] if dst[0] == "vec" else (dst,)
    return [writer(o, "b32", d.func) if not (o[0] == "sym" and o[1] == "_") else None for o in regs]


# ------------------------------------------------------------------ texels
def _read_channels(data: np.ndarray, offsets: np.ndarray, fmt: Format) -> np.ndarray:
    """The channels (m, channels) of the texels at byte ``offsets`` of the arena, as stored (texels
    are always aligned to their channel size: arrays and bound memory start 512-byte aligned)."""
    cb, n = fmt.channel_bytes, fmt.channels
    typed = data[:data.size - data.size % cb].view(fmt.channel_dtype)
    first = offsets // cb
    return typed[first][:, None] if n == 1 else typed[first[:, None] + np.arange(n)]


def _as_float(values: np.ndarray, fmt: Format, smp: Sampler, filtered=False) -> np.ndarray:
    """Stored channels as the float32 the texture unit works with: floats as they are, 8/16-bit
    integers normalized when the read mode asks (sRGB decoded), other integers unchanged.
    ``filtered``: texels on their way to the linear filter, where a signed -128 (-32768) stays
    -128/127 (-32768/32767): the filter sums the integers (_snorm8_sum, _fixed_point_sum); a lookup
    that returns one texel gives -1."""
    if fmt.kind == "float":
        return values.astype(np.float32)
    if smp.read == "normalized" and fmt.channel_bytes in (1, 2):
        top = float(np.iinfo(fmt.channel_dtype).max)
        f = values.astype(np.float64) / top
        f = (f if filtered and fmt.kind == "signed" else np.maximum(f, -1.0)).astype(np.float32)
        if smp.srgb and fmt.kind == "unsigned" and fmt.channel_bytes == 1:
            f[:, :3] = _srgb_to_linear(values[:, :3])
        return f
    return values


# The texture unit's sRGB decode table, in units of 2**-14, read from an H100 (srgb_u8x4_all_values):
# the sRGB curve rounded to about 7 significant bits, with small departures from the formula.
SRGB_TABLE = np.array([
    0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55, 60, 66, 72, 78, 85, 92, 99, 107, 115, 123, 131, 140, 150,
    159, 169, 180, 190, 201, 213, 224, 236, 250, 262, 276, 290, 304, 318, 332, 348, 364, 380, 396, 412, 430,
    448, 466, 484, 504, 524, 544, 564, 584, 604, 624, 648, 672, 692, 716, 740, 764, 788, 816, 840, 864, 896,
    920, 944, 976, 1000, 1032, 1064, 1088, 1120, 1152, 1184, 1216, 1248, 1280, 1312, 1352, 1384, 1416, 1456,
    1488, 1528, 1560, 1600, 1640, 1672, 1712, 1752, 1792, 1832, 1872, 1920, 1952, 2000, 2048, 2080, 2128,
    2176, 2224, 2272, 2320, 2368, 2416, 2464, 2512, 2560, 2608, 2656, 2704, 2752, 2816, 2864, 2912, 2976,
    3024, 3072, 3136, 3184, 3248, 3296, 3360, 3424, 3472, 3536, 3600, 3664, 3712, 3776, 3840, 3904, 3968,
    4032, 4096, 4160, 4224, 4288, 4352, 4416, 4512, 4576, 4640, 4704, 4768, 4864, 4928, 4992, 5056, 5152,
    5216, 5280, 5376, 5440, 5536, 5600, 5696, 5760, 5824, 5920, 6016, 6080, 6176, 6240, 6336, 6400, 6496,
    6592, 6688, 6752, 6848, 6944, 7008, 7104, 7200, 7296, 7392, 7488, 7584, 7680, 7744, 7872, 7936, 8064,
    8128, 8256, 8320, 8448, 8512, 8640, 8768, 8832, 8960, 9024, 9152, 9280, 9344, 9472, 9600, 9664, 9792,
    9920, 9984, 10112, 10240, 10304, 10432, 10560, 10688, 10816, 10880, 11008, 11136, 11264, 11392, 11456,
    11584, 11712, 11840, 11968, 12096, 12224, 12352, 12480, 12608, 12736, 12864, 12992, 13120, 13248, 13376,
    13504, 13632, 13760, 13888, 14016, 14144, 14272, 14400, 14528, 14656, 14848, 14976, 15104, 15232, 15360,
    15488, 15616, 15744, 16000, 16128, 16256, 16384], np.float32) / np.float32(1 << 14)


def _is_snorm8(fmt: Format) -> bool:
    return fmt.kind == "signed" and fmt.channel_bytes == 1


# The sRGB filter's texel grain: with the largest texel of a lookup decoded from code 32 or more, each
# texel is cut to a multiple of 2 (in the table's units of 2**-14), from 48 to 4, ... from 248 to 128
# (tools/texture_probe.py's srgb_pairs: one grain fits every pair with the same larger texel).
SRGB_GRAIN_CODES = np.array([32, 48, 64, 96, 136, 184, 248])


def _srgb_to_linear(v8):
    return SRGB_TABLE[v8.astype(np.int64)]


def _returns_float(fmt: Format, smp: Sampler) -> bool:
    return fmt.kind == "float" or (smp.read == "normalized" and fmt.channel_bytes in (1, 2))


def _words(values: np.ndarray, fmt: Format, smp: Sampler) -> np.ndarray:
    """(m, channels) texel values -> (m, 4) 32-bit result words, missing channels filled in."""
    m = len(values)
    if _returns_float(fmt, smp):
        out = np.zeros((m, 4), np.float32)
        pass
        out[:, :values.shape[1]] = values
        return out.view(np.uint32)
    out = np.zeros((m, 4), np.uint32)
    pass
    wide = values.astype(np.int64 if fmt.kind == "signed" else np.uint64)
    out[:, :values.shape[1]] = wide.astype(np.uint32)
    return out


# ------------------------------------------------------------------ coordinates
FRACTION_BITS = 8      # the linear filter's weights are 1.8 fixed point (CUDA Guide, "Linear Filtering")
COORD_BITS = 21        # coordinates are fixed point with 21 fractional bits (measured on an H100)


def _texel_fixed(x, n: int, normalized: bool) -> np.ndarray:
    """Coordinates in texels as int64 fixed point with COORD_BITS fractional bits, as the texture
    unit holds them: subnormals are zero, a normalized coordinate is cut (toward -inf) to 21
    fractional bits before it is scaled by the size, an unnormalized one after."""
    x = np.asarray(x, np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        x[~(np.abs(x) >= 2.0 ** -126)] = 0.0           # subnormals and NaN
    np.clip(x, -2.0 ** 36, 2.0 ** 36, out=x)
    x *= 2.0 ** COORD_BITS                              # exact: a power of two, far from overflow
    t = np.floor(x, out=x).astype(np.int64)
    return t * n if normalized else t


def _address(i: np.ndarray, n: int, mode: str, normalized: bool):
    """Texel index i of a dimension of size n under an address mode: (index, outside for border).
    Wrap and mirror need normalized coordinates; with unnormalized ones the GPU clamps."""
    if mode == "wrap" and normalized:
        return i % n, None
    if mode == "mirror" and normalized:
        m = i % (2 * n)
        return np.where(m < n, m, 2 * n - 1 - m), None
    if mode == "border":
        outside = (i < 0) | (i >= n)
        return np.clip(i, 0, n - 1), outside
    return np.clip(i, 0, n - 1), None


class _Footprint:
    """For each dimension: texel indices and weights of the samples a lookup combines."""

    def __init__(self):
        self.index, self.outside, self.weight = [], [], []


def _footprint(coords, sizes, smp, modes, linear, gather=False):
    """Per dimension the (1 or 2) texel indices, border flags and 8-bit weights of each lane. The
    linear filter's fraction is rounded to 8 bits (a weight of 256/256 is possible)."""
    fp = _Footprint()
    one = 1 << COORD_BITS
    for x, n, mode in zip(coords, sizes, modes):
        t = _texel_fixed(x, n, smp.normalized)
        if linear and not gather and (mode == "clamp" or (mode in ("wrap", "mirror") and not smp.normalized)):
            t = np.clip(t, one // 2, n * one - one // 2)    # clamp-to-edge clamps the coordinate itself
        if linear:
            q = (t - one // 2 + (1 << (COORD_BITS - FRACTION_BITS - 1))) >> (COORD_BITS - FRACTION_BITS)
            i0, a = q >> FRACTION_BITS, q & ((1 << FRACTION_BITS) - 1)
            taps, weights = (i0, i0 + 1), ((1 << FRACTION_BITS) - a, a)
        else:
            taps, weights = (t >> COORD_BITS,), (None,)
        idx, out = zip(*(_address(i, n, mode, smp.normalized) for i in taps))
        fp.index.append(idx)
        fp.outside.append(out)
        fp.weight.append(weights)
    return fp


def _offsets(image: Image, x, y=None, z=None) -> np.ndarray:
    off = np.int64(image.address - GLOBAL_BASE) + x.astype(np.int64) * image.fmt.texel_bytes
    if y is not None:
        off = off + y.astype(np.int64) * image.pitch
    if z is not None:
        off = off + z.astype(np.int64) * image.slice_pitch
    return _within(image, off)


class TexelOutside(Exception):
    """Texels of a lookup that lie past the end of the allocation the texture's memory is in."""

    def __init__(self, positions, address):
        super().__init__(f"texel at 0x{address:x}")
        self.positions, self.address = positions, address


def _within(image: Image, off):
    """``off`` where every texel lies inside the image's allocation. A GPU accepts a texture over
    linear or pitched memory that spans more bytes than the allocation holds (NVIDIA's
    convolutionFFT2D binds such a range and reads only the part inside) and reads whatever memory
    follows; here a texel past the end is memcheck's to report (TexelOutside), never a read of
    another allocation or past the arena."""
    if image.readable and off.size:
        bad = off > image.address - GLOBAL_BASE + image.readable - image.fmt.texel_bytes
        if bad.any():
            positions = np.flatnonzero(bad)
            raise TexelOutside(positions, int(off[positions[0]]) + GLOBAL_BASE)
    return off


def border_colour(smp, fmt) -> np.ndarray:
    """The border colour as the texture returns it (4 words): only the format's channels (the
    others are 0), stored in the texel format first (measured on an H100): an 8/16-bit normalized
    format holds round(b * max) clamped (ties down), an integer format the low bits of the float's
    bit pattern."""
    b = np.zeros(4, np.float32)
    b[:fmt.channels] = smp.border[:fmt.channels]
    if fmt.kind == "float":
        return b.view(np.uint32)
    if _returns_float(fmt, smp):
        info = np.iinfo(fmt.channel_dtype)
        stored = np.clip(np.ceil(b.astype(np.float64) * info.max - 0.5), info.min, info.max)
    else:
        stored = b.view(np.uint32) & np.uint32((1 << fmt.bits[0]) - 1 if fmt.bits[0] < 32 else 0xFFFFFFFF)
    texel = stored[None, :fmt.channels].astype(fmt.channel_dtype)
    return _words(_as_float(texel, fmt, smp), fmt, smp)[0]


def _border_words(smp, fmt, m):
    return np.tile(border_colour(smp, fmt), (m, 1))


def _taps(data, image: Image, smp: Sampler, coords, slice_, linear: bool, modes=None, single=False):
    """The texels one lookup reads: ((m, taps, 4) words in np.ndindex order, each dimension's 8-bit
    fraction). A 1D texture filters as a 2D one of height 1, at y = 0. ``single``: when every
    fraction is 0 (texel centres: only the first tap has a weight), read that tap alone."""
    fmt = image.fmt
    if linear and len(coords) == 1:
        coords = [coords[0], np.zeros(len(coords[0]), np.float32)]
    sizes = (image.width, max(image.height, 1), image.depth)[:len(coords)]
    fp = _footprint(coords, sizes, smp, modes or smp.address, linear)
    if linear and not _returns_float(fmt, smp):
        raise Unsupported("linear filtering of a texture that returns integers")
    taps = []
    shape = [len(ix) for ix in fp.index]
    if single and linear and not any(w[-1].any() for w in fp.weight):
        shape = [1] * len(shape)
    for tap in np.ndindex(*shape):
        idx = [fp.index[d][t] for d, t in enumerate(tap)]
        outside = [fp.outside[d][t] for d, t in enumerate(tap) if fp.outside[d][t] is not None]
        z = idx[2] if len(idx) > 2 else slice_
        words = _words(_as_float(_read_channels(data, _offsets(image, idx[0], idx[1] if len(idx) > 1 else None, z),
                                                fmt), fmt, smp, filtered=linear), fmt, smp)
        if outside:
            out = np.logical_or.reduce(outside)
            if out.any():
                words[out] = _border_words(smp, fmt, int(out.sum()))
        taps.append(words)
    return np.stack(taps, 1), [w[-1] for w in fp.weight]


def _filter(words, weights, fmt, groups=None, srgb=False):
    """The filter's result words from tap words (m, taps, 4) and 1.8 weights (m, taps); channels
    the format lacks stay 0. Integer texels read as normalized floats filter in fixed point
    (_fixed_point_sum, _snorm8_sum), sRGB colour channels by their own rule (_srgb_sum)."""
    mantissa = 11 if fmt.kind == "float" and fmt.channel_bytes == 2 else 24     # half texels filter in half
    values = words.view(np.float32)
    out = np.zeros((len(words), 4), np.float32)
    for c in range(fmt.channels):
        if srgb and c < 3:
            out[:, c] = _srgb_sum(values[:, :, c], weights)
        elif _is_snorm8(fmt):
            out[:, c] = _snorm8_sum(values[:, :, c], weights)
        elif fmt.kind != "float" and not (srgb and c < 3):
            out[:, c] = _fixed_point_sum(values[:, :, c], weights, fmt)
        else:
            out[:, c] = weighted_sum(values[:, :, c], weights, FRACTION_BITS, mantissa, groups)
    return out.view(np.uint32)


def _fixed_point_sum(values, weights, fmt):
    """The filter of 8/16-bit unsigned and 16-bit signed texels read as normalized floats, as an H200
    computes it (tools/texture_probe.py: every pair of 8-bit values, random 16-bit pairs and 2 x 2
    blocks, 14 weights; all bit-exact): each texel as a 16-bit normalized integer T (an 8-bit one
    widened as t * 257, which is exact: t / 255 = t * 257 / 65535), the weighted sum with the 1.8
    weights rounded to an integer Q (ties up), and the result Q / 65535 (Q / 32767, at least -1)
    rounded to float32; a 16-bit -32768 counts as itself (s16_pairs: 6 of 917,504 lookups). A texel of 255 at weight w/256 gives round(w * 255 * 257 / 256) / 65535,
    not w / 256: w/256 * (1 + 2**-16) up to w = 128."""
    top = 32767 if fmt.kind == "signed" else 65535
    widen = 257 if fmt.channel_bytes == 1 else 1
    texels = np.rint(values.astype(np.float64) * (top // widen)).astype(np.int64) * widen
    q = ((texels * weights).sum(1) + (1 << (FRACTION_BITS - 1))) >> FRACTION_BITS
    return np.maximum(q / top, -1.0).astype(np.float32)


def _srgb_sum(values, weights):
    """The filter of sRGB colour channels, as an H200 computes it (tools/texture_probe.py's srgb_pairs:
    every pair of codes at 14 weights, 3 channels, all bit-exact): each texel decoded by SRGB_TABLE
    (units of 2**-14), cut toward zero to the grain the largest texel with a weight sets
    (SRGB_GRAIN_CODES), summed exactly with the 1.8 weights, and rounded once to 11 significant bits
    (ties up). So code 1 next to code 64 counts as 0, and 224 next to 248 as 12160, not 12224."""
    d = np.rint(values.astype(np.float64) * (1 << 14)).astype(np.int64)
    top = np.where(weights > 0, d, 0).max(1)
    shift = np.searchsorted(np.rint(SRGB_TABLE[SRGB_GRAIN_CODES] * (1 << 14)), top, side="right")[:, None]
    total = (((d >> shift) << shift) * weights).sum(1)
    return _round_away(total, np.full(len(total), -14 - FRACTION_BITS), 11)


def _snorm8_sum(values, weights):
    """The filter of signed 8-bit texels read as normalized floats, as an H200 computes it
    (tools/texture_probe.py's s8_pairs: every pair of texels at 14 weights, 65,281 different sums,
    all bit-exact): the texels t as integers (-128 too) summed with the 1.8 weights, S = sum(w * t),
    scaled to a 16-bit normalized Q = S + (S + 16 * (S >> 12) + 64) >> 7 (shifts rounding toward
    -inf; about S * 32767 / 32512, up to 0.62 from it), and the result Q / 32767, at least -1,
    rounded to float32. So a texel of 127 at weight 128/256 gives 16383 / 32767, not 0.5."""
    t = np.rint(values.astype(np.float64) * 127).astype(np.int64)       # exact: _as_float keeps -128/127
    s = (t * weights).sum(1)
    q = s + ((s + ((s >> 12) << 4) + 64) >> 7)
    return np.maximum(q / 32767, -1.0).astype(np.float32)


def _lookup(data, image: Image, smp: Sampler, coords, slice_, linear: bool, modes=None):
    """Sample one image at float coordinates (one array per dimension) of ``slice_`` (layer, cube
    face or None): (m, 4) result words."""
    if linear and slice_ is None:
        words = _centres(data, image, smp, coords, modes or smp.address)
        if words is not None:
            return words
    words, fractions = _taps(data, image, smp, coords, slice_, linear, modes, single=True)
    if not linear:
        return words[:, 0]
    if words.shape[1] == 1:          # every lane at a texel centre: the filter gives that texel
        return _one_texel(words[:, 0], image.fmt)
    groups = [[0, 2, 4, 6], [1, 3, 5, 7]] if len(fractions) == 3 else None      # 3D: the two z slices
    return _filter(words, tap_weights(fractions), image.fmt, groups, smp.srgb)


def _centres(data, image: Image, smp: Sampler, coords, modes):
    """Linear lookups of a float texture by unnormalized coordinates that clamp (wrap and mirror
    clamp too without normalized coordinates), when every lane sits exactly at a texel centre: the
    texels themselves, as _taps and _one_texel give them, in a few float32 passes; None otherwise.

    _footprint's fixed point: with t = floor(x * 2**21) clamped to [2**20, n * 2**21 - 2**20], its
    q = (t - 2**20 + 2**12) >> 13 is floor(256 (x' - 0.5) + 0.5) for x' = x clamped to [0.5, n - 0.5]
    (a floor of a floor divided by an integer is one floor; NaN clamps as 0 does, as fmax takes it).
    Where x' - 0.5 is a whole number i, q is 256 i: texel i with weight 1, its neighbour 0. x' - 0.5
    is exact in float32 (x' >= 0.5), and so is every step for sizes up to 2**22."""
    fmt = image.fmt
    if fmt.kind != "float" or fmt.channel_bytes != 4 or smp.normalized or len(coords) > 2 \
            or any(m not in ("clamp", "wrap", "mirror") for m in modes[:len(coords)]) \
            or max(image.width, image.height) > 1 << 22:
        return None
    off = np.int64(image.address - GLOBAL_BASE)
    for x, n, step in zip(coords, (image.width, max(image.height, 1)), (fmt.texel_bytes, image.pitch)):
        i = np.fmin(np.fmax(np.asarray(x, np.float32), np.float32(0.5)), np.float32(n - 0.5))
        i -= np.float32(0.5)
        if (np.floor(i) != i).any():       # a lane off a centre: the filter weighs two texels
            return None
        off = off + i.astype(np.int64) * step
    values = _read_channels(data, _within(image, off), fmt).view(np.float32)
    if not np.abs(values).min(initial=np.inf) >= np.float32(2.0 ** -126):     # zeros, subnormals or NaN
        a = np.abs(values)
        values = np.where(np.isnan(values), np.uint32(0x7FFFFFFF).view(np.float32),
                          np.where(a < np.float32(2.0 ** -126), np.copysign(np.float32(0), values), values))
    out = np.zeros((len(values), 4), np.float32)
    out[:, :fmt.channels] = values
    return out.view(np.uint32)


def _one_texel(words, fmt):
    """What weighted_sum gives for one texel of weight 1 (its other taps weigh 0 and take no part):
    the texel itself, a subnormal as a zero of its sign, a NaN as the canonical NaN. Texel-centre
    lookups (convolutionTexture's x + 0.5) are most linear lookups; this skips the full filter."""
    v = words.view(np.float32)[:, :fmt.channels]
    if fmt.kind == "signed":         # a -128 texel came as -128/127 for the filter (_as_float)
        v = np.maximum(v, np.float32(-1))
    v = np.where(np.abs(v) < np.float32(2.0 ** -126), np.copysign(np.float32(0), v), v)
    v = np.where(np.isnan(v), np.uint32(0x7FFFFFFF).view(np.float32), v)
    out = np.zeros((len(words), 4), np.float32)
    out[:, :fmt.channels] = v
    return out.view(np.uint32)


def mip_weights(a0, b0, a1, b1, f):
    """Trilinear weights of the 2 x 2 texels of two mipmap levels (8 columns: level 0's, then level
    1's), from each level's x and y fractions and the level fraction f (measured on an H100,
    tex2d_lod_linear_mipmaps): each level's x1 share is round(a * level weight), its x0 share the
    rest; those are split between the rows like the 3D rule's (x0: the y0 part rounded, x1: y1)."""
    one = 1 << FRACTION_BITS
    cols = []
    for a, b, wl in ((a0, b0, one - f), (a1, b1, f)):
        x1 = _round_half_up(a * wl, FRACTION_BITS)
        x0 = wl - x1
        y0 = _round_half_up(x0 * (one - b), FRACTION_BITS)
        y1 = _round_half_up(x1 * b, FRACTION_BITS)
        cols += [y0, x0 - y0, x1 - y1, y1]
    return np.stack(cols, 1)


def _round_half_up(num, shift):
    return (num + (1 << (shift - 1))) >> shift


def tap_weights(fractions, total=None) -> np.ndarray:
    """The 1.8 fixed-point weight of each texel of a 2 x 2 (x 2) footprint, in np.ndindex order
    (x slowest), from each dimension's 8-bit fraction. The weights always sum to 256.

    Measured on an H100 (tex2d_linear_onehot_weights, tex3d_linear_*): in 2D the corner weight
    a * b is rounded (ties up) and the other three get what is left of their row and column; in
    3D each z slice's weight (1 - c, c) is split first between x (the x1 share rounded, ties up),
    then each of those four weights between the two y rows: for x0 texels the y0 share is rounded
    (ties up), for x1 texels the y1 share. (Splitting x and z by the 2D rule instead gave 16 and 46
    of the corpus's 4,096 trilinear lookups a weight 1/256 off; z first fits them all, with _slices_sum.)
    ``total``: a 3D footprint's share of a blend of two mipmap levels, split the same way (z first), except
    that the z slices' split of it rounds ties down (an H100 gave all 65,536 one-hot weights of
    tools/texture_probe.py's tex3d_mip_onehot probes so; ties up made 61 of 4,096 lookups 1/256 off)."""
    one = 1 << FRACTION_BITS
    if len(fractions) == 1:
        a, = fractions
        return np.stack([one - a, a], 1)
    if len(fractions) == 2:
        a, b = fractions
        w11 = _round_half_up(a * b, FRACTION_BITS)
        return np.stack([one - a - b + w11, b - w11, a - w11, w11], 1)
    a, b, c = fractions
    # a level's share of a mipmap blend splits between the z slices rounding ties *down* (an H100:
    # tools/texture_probe.py's tex3d_mip_onehot probes, 16 x 4,096 one-hot weights)
    z1 = c if total is None else (c * total + (1 << (FRACTION_BITS - 1)) - 1) >> FRACTION_BITS
    w = {}
    for z, wz in ((0, (one if total is None else total) - z1), (1, z1)):
        x1 = _round_half_up(a * wz, FRACTION_BITS)
        for x, wxz in ((0, wz - x1), (1, x1)):
            if x:
                y1 = _round_half_up(wxz * b, FRACTION_BITS)
                w[(x, 0, z)], w[(x, 1, z)] = wxz - y1, y1
            else:
                y0 = _round_half_up(wxz * (one - b), FRACTION_BITS)
                w[(x, 0, z)], w[(x, 1, z)] = y0, wxz - y0
    return np.stack([w[k] for k in sorted(w)], 1)


GUARD_BITS = 4       # the filter's adder keeps 4 bits more than the result's precision (measured)


def weighted_sum(values: np.ndarray, weights: np.ndarray, scale_bits: int, mantissa: int = 24,
                 groups=None) -> np.ndarray:
    """The texture unit's filter: sum(values * weights) / 2**scale_bits, as an H100 computes it.

    Measured (tests/kernels/textures.py, tex1d_linear_random_values and friends): texels with a
    zero weight take no part; subnormal texels count as (signed) zeros; each texel is cut (toward
    zero) to 28 bits below the leading bit of the largest texel with a weight (15 for half texels:
    the result's precision plus 4); the weighted sum of those is exact and is rounded once to float32
    (to half for half texels), ties away from zero. ``groups`` (3D textures: the two z slices) are
    aligned each on their own and then added. Infinities and NaN give infinity or the canonical NaN
    as IEEE arithmetic would."""
    # taps along axis 0: numpy reduces over a short leading axis far faster than over a short last one
    v = np.ascontiguousarray(values.T, np.float32)
    w = np.ascontiguousarray(weights.T)
    v = np.where(np.abs(v) < np.float32(2.0 ** -126), np.copysign(np.float32(0), v), v)
    live = w > 0
    finite = np.isfinite(v)
    v64 = np.where(live & finite, v, 0).astype(np.float64)
    align = mantissa + GUARD_BITS
    if groups is None:
        total, exp2 = _aligned(v64, w, align)
        out = _round_away(total, exp2 - scale_bits, mantissa)
        zero = total == 0
    else:
        total, exp2 = _slices_sum([_aligned(v64[g], w[g], align) for g in groups])
        out = _round_away(total, exp2 - scale_bits, mantissa)
        zero = total == 0
    if zero.any():        # -0.0 only when every texel with a weight is -0.0
        negzero = ((live & (v64 == 0) & np.signbit(v)) | ~live).all(0) & live.any(0)
        out = np.where(zero & negzero, np.float32(-0.0), out)
    if not finite.all():
        vv = np.where(live & ~finite, v, np.float32(0))
        pos, neg = np.isposinf(vv).any(0), np.isneginf(vv).any(0)
        nan = np.isnan(vv).any(0) | (pos & neg)
        out = np.where(pos, np.float32(np.inf), np.where(neg, np.float32(-np.inf), out))
        out = np.where(nan, np.uint32(0x7FFFFFFF).view(np.float32), out)
    return out.astype(np.float32)


def _slices_sum(parts):
    """(total, exponent) of the groups' partial sums [(t, e): t * 2**e each, ``_aligned``]: each
    partial floored (toward -inf) to a multiple of 2**(E - 1), E the largest group's exponent, then
    added exactly. The group of the largest texel loses nothing (its partial is a multiple of 2**E);
    the other keeps one bit below it. Fitted to the H100's trilinear lookups of tests/kernels/textures.py
    (tex3d_linear_random, tex3d_linear_border_normalized: every one of 2 x 4,096 bit-exact, where the
    exact sum of the two partials left one lookup of each 1 ulp off); cutting at 2**E or at 2**(E - 2),
    truncating toward zero, or rounding each partial to a number of significant bits fit fewer. On
    values of exponents 24 apart (tex3d_linear_wide_exponents, tex2d_lod_linear_wide_exponents, which a
    linear mipmap blend's two levels add the same way) it leaves 1 of 8,192 and 4 of 4,096 lookups off
    where the exact sum left 4 and 5: the rest of the rule is not found (KNOWN_GAPS)."""
    big = np.max([e for _, e in parts], axis=0) - 1
    total = np.zeros_like(parts[0][0])
    for t, e in parts:
        shift = np.minimum(big - e, 63)
        total = total + np.where(shift >= 0, t >> np.maximum(shift, 0), t << np.maximum(-shift, 0))
    return total, big


def _aligned(v64, weights, align):
    """(sum of weights times texels cut to ``align`` bits below the largest one, its exponent);
    taps along axis 0."""
    exps = np.where(v64 != 0, np.frexp(v64)[1], -10000)
    top = exps.max(0)
    q = np.trunc(np.ldexp(v64, align - top)).astype(np.int64)
    return (q * weights).sum(0), top - align


def _round_away(total: np.ndarray, exp2: np.ndarray, mantissa: int = 24) -> np.ndarray:
    """float32(total * 2**exp2) for int64 ``total``, rounded to ``mantissa`` significant bits (24:
    float32, 11: half) to nearest with ties away from zero; subnormal results flush to zero, as the
    texture unit's do."""
    mag = np.abs(total).astype(np.uint64)
    bits = np.where(mag > 0, np.frexp(mag.astype(np.float64))[1], 0).astype(np.int64)
    bits = bits - ((mag >> np.maximum(bits - 1, 0).astype(np.uint64)) == 0)      # float rounding may add one
    shift = np.maximum(bits - mantissa, 0)
    kept = mag >> shift.astype(np.uint64)
    half = np.where(shift > 0, np.uint64(1) << np.maximum(shift - 1, 0).astype(np.uint64), np.uint64(0))
    rem = mag & ((np.uint64(1) << shift.astype(np.uint64)) - np.uint64(1))
    kept = kept + ((shift > 0) & (rem >= half)).astype(np.uint64)
    with np.errstate(over="ignore"):
        r = np.ldexp(kept.astype(np.float64), shift + exp2).astype(np.float32)
    r = np.where(np.abs(r) < np.float32(2.0 ** -126), np.float32(0), r)
    return np.where(total < 0, -r, r)


# ------------------------------------------------------------------ cubemaps and mipmap levels
def _cube_face(x, y, z):
    """Direction -> (face 0..5 as +x -x +y -y +z -z, s, t in [0, 1]) (CUDA Guide, "Cubemap Textures").
    Ties go to z, then y (|x| = |y| picks a y face); a 0/0 or NaN ratio reads as 0, the face's
    centre (measured on an H100, cube_point)."""
    x, y, z = (np.asarray(v, np.float32) for v in (x, y, z))
    ax, ay, az = (np.nan_to_num(np.abs(v), nan=0.0) for v in (x, y, z))
    on_z = (az >= ax) & (az >= ay)
    on_y = ~on_z & (ay >= ax)
    on_x = ~on_z & ~on_y
    neg = np.where(on_x, np.signbit(x), np.where(on_y, np.signbit(y), np.signbit(z)))
    odd = _unscalable(x, y, z)
    if odd is not None:
        on_x, on_y, on_z, neg = (np.where(odd[0], a, b) for a, b in zip(odd[1:], (on_x, on_y, on_z, neg)))
    face = np.where(on_x, 0, np.where(on_y, 2, 4)) + neg
    ma = np.where(on_x, ax, np.where(on_y, ay, az))
    sc = np.select([face == 0, face == 1, face == 2, face == 3, face == 4], [-z, z, x, x, x], -x)
    tc = np.select([face == 2, face == 3], [z, -z], -y)
    with np.errstate(invalid="ignore", divide="ignore"):
        rs, rt = (np.nan_to_num((v / ma).astype(np.float32), nan=0.0, posinf=0.0, neginf=0.0) for v in (sc, tc))
    if odd is not None:            # the face's centre
        rs, rt = (np.where(odd[0], np.float32(0), v) for v in (rs, rt))
    s = ((rs + np.float32(1)) * np.float32(0.5)).astype(np.float32)
    t = ((rt + np.float32(1)) * np.float32(0.5)).astype(np.float32)
    return face.astype(np.int64), s, t


def _unscalable(x, y, z):
    """Directions the texture unit cannot scale to the unit cube: (lanes, on_x, on_y, on_z, negative)
    for them, or None. It multiplies the direction by the reciprocal of its largest component (NaN
    ignored), which flushes to 0 beyond 2**126 and is infinite for a zero direction, so such a direction
    becomes zeros and NaNs (x * 0 with x infinite or NaN, 0 * inf). Of those the face is the first of z,
    y, x whose value equals the largest (NaN ignored), else z, and always the positive one; the texel is
    the face's centre (measured on an H200: tools/texture_probe.py's cube_faces, every direction whose
    components are infinities, 3e38, small numbers, zeros, NaN or 1e-40; subnormal directions scale
    like others)."""
    big = np.fmax(np.fmax(np.abs(x), np.abs(y)), np.abs(z))
    lanes = ~((big > 0) & (big <= np.float32(2.0 ** 126)))
    if not lanes.any():
        return None
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        r = np.where(big > 0, np.float32(0), np.float32(np.inf))
        ax, ay, az = (np.abs(v * r) for v in (x, y, z))
        top = np.fmax(np.fmax(ax, ay), az)
        on_z = (az == top) | ~((ay == top) | (ax == top))
        on_y = ~on_z & (ay == top)
    return lanes, ~on_z & ~on_y, on_y, on_z, np.zeros(lanes.shape, bool)


# the direction of a face's point (sc, tc in [-1, 1] and beyond) as _cube_face's table reads it back
FACE_DIRECTIONS = (lambda sc, tc: (1 + 0 * sc, -tc, -sc), lambda sc, tc: (-1 + 0 * sc, -tc, sc),
                   lambda sc, tc: (sc, 1 + 0 * sc, tc), lambda sc, tc: (sc, -1 + 0 * sc, -tc),
                   lambda sc, tc: (sc, -tc, 1 + 0 * sc), lambda sc, tc: (-sc, -tc, -1 + 0 * sc))


def _seamless(data, image: Image, smp: Sampler, coords, face, base):
    """Linear filtering of a cubemap across its edges (cudaTextureDesc.seamlessCubemap), measured on an
    H200 (tools/texture_probe.py, cube_seamless_onehot: 1,200 lookups near edges and corners, each
    texel's weight read alone): the 2 x 2 footprint and its 1.8 weights are the face's own; a tap past
    one edge reads the texel of the neighbouring face that the tap's centre, carried on across the
    edge, points to; at a corner the tap past both edges is dropped and its weight w shared among the
    other three: w // 3 each, and what is left (1 or 2) goes to the tap inside the face (1) or to the
    two taps past one edge (2). ``base``: the layer's first face slice."""
    n = image.width
    one = 1 << COORD_BITS
    cells = []
    for x in coords:
        q = (_texel_fixed(x, n, smp.normalized) - one // 2 + (1 << (COORD_BITS - FRACTION_BITS - 1))) \
            >> (COORD_BITS - FRACTION_BITS)
        cells.append((q >> FRACTION_BITS, q & ((1 << FRACTION_BITS) - 1)))
    (i0, a), (j0, b) = cells
    weights = tap_weights([a, b]).copy()              # taps (0, 0), (0, 1), (1, 0), (1, 1) as (x, y)
    taps = [(i0 + dx, j0 + dy) for dx, dy in ((0, 0), (0, 1), (1, 0), (1, 1))]
    inside = [((i >= 0) & (i < n), (j >= 0) & (j < n)) for i, j in taps]
    corner = np.stack([~ix & ~iy for ix, iy in inside], 1)
    if corner.any():
        w = (weights * corner).sum(1)
        rest = w % 3
        for k, (ix, iy) in enumerate(inside):
            edge = ix ^ iy                           # past one edge
            extra = np.where(rest == 1, ix & iy, np.where(rest == 2, edge, False))
            weights[:, k] = np.where(corner[:, k], 0, weights[:, k] + np.where(corner.any(1), w // 3 + extra, 0))
    words = []
    for (i, j), (ix, iy) in zip(taps, inside):
        f, ti, tj = face.copy(), np.clip(i, 0, n - 1), np.clip(j, 0, n - 1)
        away = ix ^ iy
        if away.any():
            sc, tc = (2 * (np.where(away, v, 0) + 0.5) / n - 1 for v in (i, j))
            d = [np.zeros(len(f)) for _ in range(3)]
            for fc in range(6):
                on = away & (face == fc)
                for axis, v in enumerate(FACE_DIRECTIONS[fc](sc, tc)):
                    d[axis] = np.where(on, v, d[axis])
            f2, s2, t2 = _cube_face(*d)
            f = np.where(away, f2, f)
            ti = np.where(away, np.clip((s2 * n).astype(np.int64), 0, n - 1), ti)
            tj = np.where(away, np.clip((t2 * n).astype(np.int64), 0, n - 1), tj)
        offsets = _offsets(image, ti, tj, base + f)
        words.append(_words(_as_float(_read_channels(data, offsets, image.fmt), image.fmt, smp, filtered=True),
                            image.fmt, smp))
    return _filter(np.stack(words, 1), weights, image.fmt, srgb=smp.srgb)


def _lod_levels(tex: TextureObject, lod, bias=True):
    """(level a, level b, weight of b in 1/256) per lane for a level of detail (float32 array). A
    lookup without one (plain tex on a mipmapped texture) reads level 0: no bias (measured)."""
    smp = tex.sampler
    top = len(tex.levels) - 1
    lod = np.asarray(lod, np.float32) + np.float32(smp.lod_bias if bias else 0)
    lod = np.clip(np.nan_to_num(lod, nan=0.0), max(smp.min_lod, 0.0), min(smp.max_lod, top))
    if smp.mipmap_filter == "point" or top == 0:
        level = np.floor(lod + np.float32(0.5)).astype(np.int64)
        return level, level, np.zeros(lod.shape, np.int64)
    fx = np.floor(np.ldexp(lod.astype(np.float64), FRACTION_BITS)).astype(np.int64)
    a = np.clip(fx >> FRACTION_BITS, 0, top)
    return a, np.minimum(a + 1, top), fx & ((1 << FRACTION_BITS) - 1)


# The texture unit's log2 (an H100, tools/texture_probe.py's grad_length probe, 1,024 lengths): a length's
# exponent plus a table of its top 8 mantissa bits (cut), in 1/256: round(256 log2(1 + (k + 1/2)/256)),
# one less at these k.
_LOG2_LOWER = (0, 61, 86, 108, 109, 110, 111, 115, 116, 117, 141, 162, 170, 255)
LOG2_TABLE = np.round(256 * np.log2(1 + (np.arange(256) + 0.5) / 256)).astype(np.int64)
LOG2_TABLE[list(_LOG2_LOWER)] -= 1


def _octagon(x, y):
    """The length of (x, y) as the texture unit estimates it: max + 11/32 min, the second term cut to 9
    bits below the first's leading bit (within 1/256 of the H100's level of detail at 1,012 of 1,024
    angles; it is 5% longer than the Euclidean length at 22.5 degrees and 5% shorter at 45)."""
    x, y = np.abs(x), np.abs(y)
    big, small = np.maximum(x, y), np.minimum(x, y)
    grain = np.ldexp(1.0, np.frexp(big)[1] - 10)
    return big + np.floor(small * (11 / 32) / grain) * grain


def _lod_from_gradients(tex, grads, dims):
    """Level of detail from the coordinate derivatives (in level-0 texels), in 1/256 steps as the H100
    computes it for 2D textures (tools/texture_probe.py's grad probes; 1D ones as 2D with y = 0, not
    measured): the longer of the two gradients, and 11/16 of the longer of their sum and difference (so
    two equal parallel gradients count 1.375 times, orthogonal ones once, like an ellipse's major axis),
    each length an octagonal estimate (_octagon), then log2 by a table (LOG2_TABLE). It gives 90% of 4,096 random pairs of
    gradients exactly and the rest within 2/256 (the rule of the remaining 10% is not found). 3D
    textures keep log2 of the longer gradient's Euclidean length (not measured)."""
    size = np.array((tex.levels[0].width, tex.levels[0].height, tex.levels[0].depth)[:dims], np.float64)
    if not tex.sampler.normalized:
        size = np.ones(dims)
    dx = np.stack([np.asarray(g, np.float64) for g in grads[0][:dims]], 1) * size
    dy = np.stack([np.asarray(g, np.float64) for g in grads[1][:dims]], 1) * size
    if dims == 3:
        rho = np.maximum(np.sqrt((dx * dx).sum(1)), np.sqrt((dy * dy).sum(1)))
        with np.errstate(divide="ignore"):
            return np.log2(rho).astype(np.float32)
    if dims == 1:
        dx, dy = np.concatenate([dx, 0 * dx], 1), np.concatenate([dy, 0 * dy], 1)
    length = np.maximum(_octagon(*dx.T), _octagon(*dy.T))
    length = np.maximum(length, (11 / 16) * np.maximum(_octagon(*(dx + dy).T), _octagon(*(dx - dy).T)))
    finite = np.isfinite(length) & (length > 0)
    m, e = np.frexp(np.where(finite, length, 1.0))            # length = m 2^e, m in [1/2, 1)
    k = np.minimum(np.floor((2 * m - 1) * 256), 255).astype(np.int64)
    lod = ((e - 1) * 256 + LOG2_TABLE[k]) / 256.0
    lod = np.where(finite, lod, np.where(np.isnan(length), np.nan, np.where(length > 0, np.inf, -np.inf)))
    return lod.astype(np.float32)


def sample(data, tex: TextureObject, geom: str, coords, lod=None, grads=None, integer=False):
    """One texture lookup per lane: (m, 4) result words. coords: per operand element (layer first
    for arrays); lod: explicit level of detail; grads: (dPdx, dPdy); integer: .s32 coordinates."""
    smp = tex.sampler
    has_layer, dims = GEOMETRIES[geom]
    layer = np.asarray(coords[0]).astype(np.int64) if has_layer else None
    c = list(coords[has_layer:has_layer + dims])
    slice_ = None
    modes = None
    if geom in ("cube", "acube"):
        face, s, t = _cube_face(*c)
        c = [s * np.float32(tex.levels[0].width) if not smp.normalized else s,
             t * np.float32(tex.levels[0].width) if not smp.normalized else t]
        slice_ = face + 6 * _layer(layer, tex.levels[0].depth // 6) if layer is not None else face
        modes = ("clamp", "clamp", "clamp")
    elif layer is not None:
        slice_ = _layer(layer, tex.levels[0].depth)
    if integer:
        return _fetch_integer(data, tex.levels[0], smp, c, slice_)
    linear = smp.filter == "linear"
    if len(tex.levels) == 1:
        if linear and smp.seamless_cubemap and geom in ("cube", "acube"):
            return _seamless(data, tex.levels[0], smp, c, face, slice_ - face)
        return _lookup(data, tex.levels[0], smp, c, slice_, linear, modes)
    if grads is not None:
        lod = _lod_from_gradients(tex, grads, len(c))
    la, lb, w = _lod_levels(tex, np.zeros(len(c[0]), np.float32) if lod is None else lod, bias=lod is not None)
    out = np.zeros((len(c[0]), 4), np.uint32)
    for level in np.unique(la):
        pos = np.flatnonzero(la == level)
        sub = [v[pos] for v in c]
        sl = None if slice_ is None else slice_[pos]
        out[pos] = _lookup(data, tex.levels[level], smp, sub, sl, linear, modes)
        blend = np.flatnonzero(w[pos] > 0)
        for lvl in np.unique(lb[pos][blend]):
            q = blend[lb[pos][blend] == lvl]
            part = [v[q] for v in sub]
            s_q = None if sl is None else sl[q]
            out[pos[q]] = _trilinear(data, tex, level, lvl, part, s_q, w[pos][q], linear, modes)
    return out


def _trilinear(data, tex, la, lb, coords, slice_, f, linear, modes):
    """Blend of two mipmap levels with level fraction f (1.8), one filter over both levels' texels;
    each level's texels are aligned on their own (the 3D texture rule)."""
    smp = tex.sampler
    wa, fa = _taps(data, tex.levels[la], smp, coords, slice_, linear, modes)
    wb, fb = _taps(data, tex.levels[lb], smp, coords, slice_, linear, modes)
    one = 1 << FRACTION_BITS
    if not linear:
        weights = np.stack([one - f, f], 1)
    elif len(fa) == 2:
        weights = mip_weights(fa[0], fa[1], fb[0], fb[1], f)
    else:     # 3D textures between levels: each level's 3D weights out of its share of 256
        weights = np.concatenate([tap_weights(fa, one - f), tap_weights(fb, f)], 1)
    k = wa.shape[1]
    return _filter(np.concatenate([wa, wb], 1), weights, tex.levels[0].fmt, [list(range(k)), list(range(k, 2 * k))])


def _layer(layer, count):
    """A layer index as the GPU takes it: unsigned, clamped to the last layer (so -1 is the last)."""
    return np.minimum(np.asarray(layer).astype(np.int64) & 0xFFFFFFFF, count - 1)


def _fetch_integer(data, image, smp, c, slice_):
    """.s32 coordinates: texel indices, no filtering; outside the image, zeros (linear memory) or
    the address mode's texel."""
    idx = [np.asarray(v).astype(np.int64) for v in c]
    sizes = (image.width, image.height, image.depth)
    inside = np.ones(len(idx[0]), bool)
    for d, v in enumerate(idx):
        inside &= (v >= 0) & (v < sizes[d] if sizes[d] else v == 0)
        idx[d] = np.clip(v, 0, max(sizes[d], 1) - 1)
    words = _words(_as_float(_read_channels(data, _offsets(image, idx[0], idx[1] if len(idx) > 1 else None,
                                                           idx[2] if len(idx) > 2 else slice_), image.fmt),
                             image.fmt, smp), image.fmt, smp)
    words[~inside] = 0
    return words


# ------------------------------------------------------------------ tex, tld4
def _split_dest(dst):
    """d or d|p: (the result vector, the residency predicate operand or None)."""
    return (dst[1], dst[2]) if dst[0] == "pair" else (dst, None)


@op("tex")
def _tex(inst, d):
    """tex{.level,.grad}.geom.v4.dtype.ctype d{|p}, [obj, coords]{, lod | dPdx, dPdy} (PTX ISA 9.7.10.3)."""
    geom = _geometry(inst)
    if "v2" in inst.mods or inst.types[0] == "f16":
        raise Unsupported("tex with .f16x2 results")
    ctype = inst.types[-1]
    dst, pred = _split_dest(inst.operands[0])
    ws = _dest_writers(inst, d, dst)
    wp = writer(pred, "pred", d.func) if pred is not None else None
    rh, rc = _address_operand(inst, inst.operands[1], d, "s32" if ctype == "s32" else "f32", GEOMETRIES[geom][0])
    if len(rc) < sum(GEOMETRIES[geom]):
        raise Unsupported(f"tex.{geom} with {len(rc)} coordinates")
    extra = inst.operands[2:]
    lod_r = grad_r = None
    if "level" in inst.mods:
        lod_r = reader(extra[0], "f32", d.func, d)
    elif "grad" in inst.mods:
        grad_r = [[reader(o, "f32", d.func, d) for o in g[1]] for g in extra[:2]]
    elif extra:
        raise Unsupported("tex with a texel offset or depth compare")
    integer = ctype == "s32"

    def run(ex):
        sel = ex.ridx                 # None: every lane, whole registers (the ALU's convention)
        handles = np.asarray(rh(ex, sel))
        if sel is None and not _whole_registers(ex, handles):
            sel = ex.idx              # lane by lane
            handles = rh(ex, sel)
        lanes = np.arange(ex.n) if sel is None else sel
        coords = [np.broadcast_to(np.asarray(r(ex, sel)), lanes.shape) for r in rc]
        lod = None if lod_r is None else np.broadcast_to(np.asarray(lod_r(ex, sel), np.float32), lanes.shape)
        grads = None if grad_r is None else [[np.broadcast_to(np.asarray(r(ex, sel)), lanes.shape) for r in g]
                                             for g in grad_r]
        groups = _per_object(ex, lanes, handles, objects(ex.mem).textures, "texture", inst, null_reads_zero=True)
        if len(groups) == 1 and groups[0][1] is not None:   # one texture for every lane (the usual case)
            tex = groups[0][1]
            words = _reading(ex, inst, lanes, tex, lambda: sample(ex.mem.data, tex, geom, coords, lod, grads,
                                                                  integer))
        else:
            words = np.zeros((lanes.size, 4), np.uint32)
        for pos, tex in groups if len(groups) > 1 else ():
            if tex is None:             # texture object 0: zeros
                continue
            words[pos] = _reading(ex, inst, lanes[pos], tex, lambda: sample(
                ex.mem.data, tex, geom, [c[pos] for c in coords], None if lod is None else lod[pos],
                None if grads is None else [[g[pos] for g in gg] for gg in grads], integer))
        _write_words(ws, ex, sel, words)
        if wp is not None:
            wp(ex, sel, np.ones(lanes.size, bool))
    return run


@op("tld4")
def _tld4(inst, d):
    """tld4.comp.2d.v4.dtype.f32 d, [obj, {x, y}]: the component ``comp`` of the four texels a
    bilinear lookup would use, counter-clockwise from the lower left (PTX ISA 9.7.10.4)."""
    geom = _geometry(inst)
    if geom not in ("2d", "a2d"):
        raise Unsupported(f"tld4.{geom}")
    comp = "rgba".index(next(m for m in inst.mods if m in ("r", "g", "b", "a")))
    dst, pred = _split_dest(inst.operands[0])
    ws = _dest_writers(inst, d, dst)
    rh, rc = _address_operand(inst, inst.operands[1], d, "f32", geom == "a2d")

    def run(ex):
        sel = ex.idx
        handles = rh(ex, sel)
        coords = [np.broadcast_to(np.asarray(r(ex, sel)), sel.shape) for r in rc]
        words = np.zeros((sel.size, 4), np.uint32)
        for pos, tex in _per_object(ex, sel, handles, objects(ex.mem).textures, "texture", inst, null_reads_zero=True):
            if tex is None:             # texture object 0: zeros
                continue
            words[pos] = _reading(ex, inst, sel[pos], tex,
                                  lambda: gather(ex.mem.data, tex, geom, [c[pos] for c in coords], comp))
        _write_words(ws, ex, sel, words)
    return run


def _whole_registers(ex, handles) -> bool:
    """Whether a lookup may run over every lane of the batch, padding lanes too (the ALU's
    convention): one texture for all (else several textures, or padding lanes never given one), and
    not one bound past its allocation's end, where a padding lane's coordinate could be reported."""
    first = handles.flat[0] if handles.size else 0
    if handles.ndim and not (handles == first).all():
        return False
    tex = objects(ex.mem).textures.get(int(first))
    return tex is None or not tex.levels[0].readable


def _reading(ex, inst, lanes, tex, lookup):
    """``lookup()``, the texels of ``lanes`` (all of one texture object), where memcheck reports a
    texture over linear or pitched memory whose allocation was freed, or a texel past its end."""
    image = tex.levels[0]
    if image.kind != "array":
        a = ex.mem.find(image.address)
        if (a is None or a.freed or not a.address <= image.address
                or a.address + a.size < image.address + (image.readable or image.nbytes)):
            ex.fault(inst, "texture", "ld", np.intersect1d(lanes, ex.idx), np.array([image.address]),
                     image.fmt.texel_bytes,
                     f"is {ex.mem.describe(image.address, image.fmt.texel_bytes)}: the memory bound to this "
                     "texture object is not (or no longer) a device allocation. Bind memory that cudaMalloc "
                     "gave, and destroy the texture before cudaFree.")
    try:
        return lookup()
    except TexelOutside as e:
        ex.fault(inst, "texture", "ld", lanes[e.positions], np.array([e.address]), image.fmt.texel_bytes,
                 f"is {ex.mem.describe(e.address, image.fmt.texel_bytes)}: the texture object spans more bytes "
                 f"({image.nbytes:,} from 0x{image.address:x}) than its allocation holds, and a GPU reads "
                 "whatever memory lies past it. Fetch only texels inside the allocation.")


GATHER_ORDER = ((0, 1), (1, 1), (1, 0), (0, 0))     # (x tap, y tap): lower left, counter-clockwise


def gather(data, tex, geom, coords, comp):
    """tld4: component ``comp`` of the 2 x 2 footprint, in GATHER_ORDER."""
    smp = tex.sampler
    image = tex.levels[0]
    has_layer = geom == "a2d"
    slice_ = _layer(coords[0], image.depth) if has_layer else None
    c = coords[has_layer:has_layer + 2]
    fp = _footprint(c, (image.width, image.height), smp, smp.address, True, gather=True)
    out = np.zeros((len(c[0]), 4), np.uint32)
    for k, (tx, ty) in enumerate(GATHER_ORDER):
        x, y = fp.index[0][tx], fp.index[1][ty]
        words = _words(_as_float(_read_channels(data, _offsets(image, x, y, slice_), image.fmt), image.fmt, smp),
                       image.fmt, smp)
        outside = [o for o in (fp.outside[0][tx], fp.outside[1][ty]) if o is not None]
        if outside:
            o = np.logical_or.reduce(outside)
            words[o] = _border_words(smp, image.fmt, int(o.sum()))
        out[:, k] = words[:, comp]
    return out


# ------------------------------------------------------------------ txq, suq
def _plain_handle(inst, mem, d):
    if mem[0] != "mem" or mem[1] is None or mem[1][0] != "reg":
        raise Unsupported(f"{inst.opcode} with the operand {inst.text.split(None, 1)[-1]!r}")
    return reader(mem[1], "u64", d.func, d)


def _unsupported_query(opcode, what):
    raise Unsupported(f"{opcode}.{what} on a texture or surface object (the CUDA 13 driver rejects it on an H100 "
                      "too: the module does not load); ask for width, height or depth, or pass the value yourself")


def texture_query(tex: TextureObject, what: str, level: int | None = None) -> int:
    """txq's answer for one texture object, as an H100 gives it (txq_width/height/depth): a 1D
    array is 1 texel high and linear memory 0; depth is the layer count of a layered texture (of
    cubes for a layered cubemap), 0 when there is none; a level past the last one has size 0."""
    if level is not None and not 0 <= level < len(tex.levels):
        return 0
    image = tex.levels[level or 0]
    if what == "width":
        return image.width
    if what == "height":
        return image.height or (1 if image.kind == "array" else 0)
    if what == "depth":
        if image.layered:
            return image.depth // (6 if image.cubemap else 1)
        return 0 if image.cubemap else image.depth
    _unsupported_query("txq", what)


@op("txq")
def _txq(inst, d):
    what = next((m for m in inst.mods if m not in ("level", "b32")), None)
    rh = _plain_handle(inst, inst.operands[1], d)
    w = writer(inst.operands[0], "b32", d.func)
    rl = reader(inst.operands[2], "s32", d.func, d) if "level" in inst.mods else None

    def run(ex):
        sel = ex.idx
        handles = rh(ex, sel)
        levels = None if rl is None else np.broadcast_to(np.asarray(rl(ex, sel)), sel.shape)
        out = np.zeros(sel.size, np.uint32)
        for pos, tex in _per_object(ex, sel, handles, objects(ex.mem).textures, "texture", inst):
            if levels is None:
                out[pos] = texture_query(tex, what)
            else:
                for lv in np.unique(levels[pos]):
                    out[pos[levels[pos] == lv]] = np.uint32(texture_query(tex, what, int(lv)) & 0xFFFFFFFF)
        w(ex, sel, out)
    return run


def surface_query(s: SurfaceObject, what: str) -> int:
    """suq's answer, as an H100 gives it (suq_width/height/depth): the array as laid out in memory,
    so a layered 1D surface has its layers as height and a layered cubemap its faces as depth."""
    image = s.image
    if what == "width":
        return image.width
    if what == "height":
        return image.height or (image.depth if image.layered else 0)
    if what == "depth":
        return image.depth if image.height else 0
    _unsupported_query("suq", what)


@op("suq")
def _suq(inst, d):
    what = next((m for m in inst.mods if m != "b32"), None)
    rh = _plain_handle(inst, inst.operands[1], d)
    w = writer(inst.operands[0], "b32", d.func)

    def run(ex):
        sel = ex.idx
        out = np.zeros(sel.size, np.uint32)
        for pos, s in _per_object(ex, sel, rh(ex, sel), objects(ex.mem).surfaces, "surface", inst):
            out[pos] = surface_query(s, what)
        w(ex, sel, out)
    return run


# ------------------------------------------------------------------ suld, sust, sured
SURFACE_GEOMETRIES = {"1d": (0, 1), "2d": (0, 2), "3d": (0, 3), "a1d": (1, 1), "a2d": (1, 2)}


def _surface_shape(inst):
    geom = next((m for m in inst.mods if m in SURFACE_GEOMETRIES), None)
    if geom is None:
        raise Unsupported(f"{inst.opcode} without a 1d/2d/3d/a1d/a2d geometry")
    mode = next((m for m in inst.mods if m in ("trap", "clamp", "zero")), "trap")
    vec = next((int(m[1]) for m in inst.mods if m in ("v2", "v4")), 1)
    return geom, mode, vec


def surface_offsets(ex, inst, s: SurfaceObject, geom, coords, size, mode, lanes, kind):
    """Arena offsets of ``size``-byte surface accesses at (x bytes, y, z | layer), and which lanes
    touch memory: out of bounds, .trap stops the kernel, .clamp moves to the nearest texel, .zero
    reads zeros and drops writes."""
    image = s.image
    has_layer, dims = SURFACE_GEOMETRIES[geom]
    c = [np.asarray(v).astype(np.int64) for v in coords]
    x = c[has_layer]
    y = c[has_layer + 1] if dims > 1 else np.zeros_like(x)
    z = c[has_layer + 2] if dims > 2 else (c[0] if has_layer else np.zeros_like(x))
    row_bytes = image.width * image.fmt.texel_bytes
    if (x % size).any():             # any mode: an H100 faults (surf2d_read_unaligned_x)
        k = int(np.flatnonzero(x % size)[0])
        ex.stop(lanes[k], "memcheck", "cudaErrorMisalignedAddress", inst, lambda b, t: (
            f"Misaligned surface {'read' if kind == 'ld' else 'write'} at {_where(ex, inst)} in kernel "
            f"{ex.kernel_name} by thread {t} in block {b}: byte x = {int(x[k])} is not a multiple of the {size}-byte access. Surfaces take x in bytes: "
            f"texel i of a {image.fmt} surface is at x = {image.fmt.texel_bytes} * i."))
    limits = (row_bytes - size + 1, image.rows, image.slices)
    inside = np.ones(len(x), bool)
    for v, top in zip((x, y, z), limits):
        inside &= (v >= 0) & (v < top)
    if not inside.all():
        if mode == "trap":
            lane = lanes[np.flatnonzero(~inside)[0]]
            k = int(np.flatnonzero(~inside)[0])
            ex.stop(lane, "memcheck", "cudaErrorIllegalAddress", inst, lambda b, t: (
                f"Surface {'read' if kind == 'ld' else 'write'} outside the array at {_where(ex, inst)} in "
                f"kernel {ex.kernel_name} by thread {t} in block {b}: byte x = {int(x[k])}, y = {int(y[k])}, "
                f"{'layer' if has_layer else 'z'} = {int(z[k])} for an array of {image.width} x {image.rows} x "
                f"{image.slices} texels of {image.fmt} ({row_bytes} bytes per row). cudaBoundaryModeTrap stops the "
                "kernel; check the coordinates (x is in bytes: 4 * x for a float surface)."))
        if mode == "clamp":
            x = np.clip(x, 0, row_bytes - size)
            y, z = np.clip(y, 0, image.rows - 1), np.clip(z, 0, image.slices - 1)
            inside[:] = True
    off = np.int64(image.address - GLOBAL_BASE) + z * image.slice_pitch + y * image.pitch + x
    return off, inside


@op("suld")
def _suld(inst, d):
    """suld.b.geom.vec.type.mode d, [surf, coords] (PTX ISA 9.7.10.7): raw bytes, x in bytes."""
    if "p" in inst.mods:
        raise Unsupported("suld.p (formatted surface loads)")
    geom, mode, vec = _surface_shape(inst)
    t = inst.type
    dt = np.dtype({"b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}[t])
    dst = inst.operands[0]
    regs = dst[1] if dst[0] == "vec" else (dst,)
    ws = [writer(o, t, d.func) if not (o[0] == "sym" and o[1] == "_") else None for o in regs]
    rh, rc = _address_operand(inst, inst.operands[1], d, "s32", SURFACE_GEOMETRIES[geom][0])
    size = dt.itemsize * vec

    def run(ex):
        sel = ex.idx
        coords = [np.broadcast_to(np.asarray(r(ex, sel)), sel.shape) for r in rc]
        vals = np.zeros((sel.size, vec), dt)
        for pos, s in _per_object(ex, sel, rh(ex, sel), objects(ex.mem).surfaces, "surface", inst):
            off, inside = surface_offsets(ex, inst, s, geom, [c[pos] for c in coords], size, mode, sel[pos], "ld")
            at = off[inside][:, None] + np.arange(size, dtype=np.int64)[None, :]
            got = np.ascontiguousarray(ex.mem.data[at]).view(dt).reshape(-1, vec)
            vals[pos[inside]] = got
        for k, w in enumerate(ws):
            if w is not None:
                w(ex, sel, vals[:, k])
    return run


@op("sust")
def _sust(inst, d):
    """sust.b.geom.vec.type.mode [surf, coords], values (PTX ISA 9.7.10.8): raw bytes at byte x.
    sust.p: 32-bit values converted to the surface's format at texel x (see _formatted)."""
    formatted = "p" in inst.mods
    geom, mode, vec = _surface_shape(inst)
    t = inst.type
    dt = np.dtype({"b8": np.uint8, "b16": np.uint16, "b32": np.uint32, "b64": np.uint64}[t])
    src = inst.operands[1]
    rs = [reader(o, t, d.func, d) for o in (src[1] if src[0] == "vec" else (src,))]
    rh, rc = _address_operand(inst, inst.operands[0], d, "s32", SURFACE_GEOMETRIES[geom][0])
    size = dt.itemsize * vec

    def run(ex):
        sel = ex.idx
        coords = [np.broadcast_to(np.asarray(r(ex, sel)), sel.shape) for r in rc]
        vals = np.stack([np.broadcast_to(np.asarray(r(ex, sel)).astype(dt), sel.shape) for r in rs], 1)
        for pos, s in _per_object(ex, sel, rh(ex, sel), objects(ex.mem).surfaces, "surface", inst):
            c = [v[pos] for v in coords]
            raw, nbytes = vals[pos], size
            if formatted:
                fmt = s.image.fmt
                has_layer = SURFACE_GEOMETRIES[geom][0]
                c[has_layer] = c[has_layer].astype(np.int64) * fmt.texel_bytes
                raw, nbytes = _formatted(raw, fmt), fmt.texel_bytes
            off, inside = surface_offsets(ex, inst, s, geom, c, nbytes, mode, sel[pos], "st")
            at = off[inside][:, None] + np.arange(nbytes, dtype=np.int64)[None, :]
            ex.mem.data[at] = np.ascontiguousarray(raw[inside]).view(np.uint8).reshape(-1, nbytes)
    return run


def _formatted(words: np.ndarray, fmt: Format) -> np.ndarray:
    """sust.p: 32-bit words as texels (PTX ISA: .u32 for unsigned, .s32 for signed formats, .f32 for
    float ones), saturated to the channel's range (measured: sust_p_formatted_uchar4); channels
    the format lacks are dropped, missing ones are zero."""
    n = fmt.channels
    w = np.zeros((len(words), n), np.uint32)
    k = min(n, words.shape[1])
    w[:, :k] = words[:, :k]
    if fmt.kind == "float":
        return w.view(np.float32).astype(fmt.channel_dtype)
    info = np.iinfo(fmt.channel_dtype)
    v = w.view(np.int32).astype(np.int64) if fmt.kind == "signed" else w.astype(np.int64)
    return np.clip(v, info.min, info.max).astype(fmt.channel_dtype)


SURED_OPS = ("add", "min", "max", "and", "or")


@op("sured")
def _sured(inst, d):
    """sured.b.op.geom.type.mode [surf, coords], value: an atomic reduction into a surface texel."""
    if "p" in inst.mods:
        raise Unsupported("sured.p (formatted surface reductions)")
    opname = next(m for m in inst.mods if m in SURED_OPS)
    geom, mode, _ = _surface_shape(inst)
    t = inst.type
    dt = np.dtype({"u32": np.uint32, "s32": np.int32, "b32": np.uint32, "u64": np.uint64, "s64": np.int64,
                   "b64": np.uint64}[t])
    rv = reader(inst.operands[1], t, d.func, d)
    rh, rc = _address_operand(inst, inst.operands[0], d, "s32", SURFACE_GEOMETRIES[geom][0])
    fn = {"add": lambda o, v: (o + v).astype(dt), "min": np.minimum, "max": np.maximum,
          "and": lambda o, v: o & v, "or": lambda o, v: o | v}[opname]

    def run(ex):
        sel = ex.idx
        coords = [np.broadcast_to(np.asarray(r(ex, sel)), sel.shape) for r in rc]
        vals = np.broadcast_to(np.asarray(rv(ex, sel)).astype(dt), sel.shape)
        for pos, s in _per_object(ex, sel, rh(ex, sel), objects(ex.mem).surfaces, "surface", inst):
            off, inside = surface_offsets(ex, inst, s, geom, [c[pos] for c in coords], dt.itemsize, mode, sel[pos],
                                          "st")
            if (off[inside] % dt.itemsize).any():
                raise Unsupported("sured at a byte x that is not a multiple of the value's size")
            view = ex.mem.view(dt)
            atomic_apply(view, off[inside] // dt.itemsize, vals[pos[inside]], fn, opname)
    return run
