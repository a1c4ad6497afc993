"""The differential-testing corpus: CUDA C++ kernels with edge-case inputs, the real GPU as oracle.

Each group module (``integer``, ``floating``, ...) holds ``CASES``, a list of dicts:
  name, group, src, kernel (C++ name; templates as "f<3>"), grid, block, shared (dynamic bytes),
  make() -> kernel arguments (numpy arrays are copied to the device and back; numpy scalars,
  structured ``np.void`` ones included, are passed by value), exact (bit for bit) or ulp/atol for
  approximate math (an element passes if it is within ``ulp`` units in the last place OR within
  ``atol``), arch: the architecture the emulator compiles for when the case needs the H100's own
  instructions ("compute_90"; the GPU always compiles for itself).
There are no numpy references: ``record.py`` runs every case on a real GPU and saves inputs and
outputs in ``recorded/<group>.npz``; ``tests/test_corpus.py`` replays them on the emulator.
A texture or surface object argument is a ``TexArg``: its data and how the object is made, built
with cudalab's own API on whichever device runs the case (the GPU when recording).
"""
import importlib
import json
import zlib
from dataclasses import dataclass, field

import numpy as np

GROUPS = ("integer", "floating", "conversions", "half", "memory", "atomics", "sync_warp", "control",
          "gpu_behaviour", "textures", "sm90", "async_copy", "mma", "fuzz_found", "guide", "split_barrier")


class Corpus(list):
    """The cases of one group; ``case(...)`` appends one."""

    def __init__(self, group):
        super().__init__()
        self.group = group

    def case(self, name, src, kernel, grid, block, make, *, shared=0, ulp=0, atol=0.0, options=(), cluster=None, arch=None):
        """make(rng) builds the arguments; rng is seeded from the case name, so inputs never move.

        ``options``: compiler flags both sides use (``-arch=compute_90``, ``-rdc=true``); ``cluster``:
        the launch's cluster size (cudaLaunchAttributeClusterDimension). Cases with either run through
        cudalab's own GPU backend when recorded, so the GPU gets the very PTX the emulator gets.
        ``arch``: shorthand for ``-arch=...`` in options ("compute_90" for the H100's own instructions)."""
        if arch:
            options = (*options, f"-arch={arch}")
        def make_args():
            with np.errstate(all="ignore"):   # edge values overflow on purpose when narrowed
                return make(np.random.default_rng(zlib.crc32(name.encode())))
        self.append(dict(name=name, group=self.group, src=src, kernel=kernel, grid=grid, block=block,
                         shared=shared, make=make_args,
                         exact=not (ulp or atol), ulp=ulp, atol=atol, options=tuple(options), cluster=cluster, arch=arch))


@dataclass
class TexArg:
    """A texture or surface object argument: the texels, where they go and how they are read.

    kind: "array" (cudalab.cuda_array), "mipmap" (data is the list of levels), "linear" (a device
    array) or "pitch2d" (rows ``array["pitch"]`` bytes apart); array: the keywords of
    cuda_array/mipmapped_array (channels, layered, cubemap, surface, gather); view: the keywords of
    cudalab.texture, or None for a surface object, whose contents are an output of the case."""

    data: object
    kind: str = "array"
    array: dict = field(default_factory=dict)
    view: dict | None = field(default_factory=dict)
    result: object = None            # a surface's contents after the launch

    def spec(self) -> str:
        """Everything but the texels, as JSON (recorded beside them; a change makes the recording stale)."""
        shapes = [list(a.shape) for a in self.data] if self.kind == "mipmap" else list(self.data.shape)
        return json.dumps(dict(kind=self.kind, array=self.array, view=self.view, shapes=shapes,
                               dtype=str(self.levels[0].dtype)), sort_keys=True)

    @property
    def levels(self):
        return list(self.data) if self.kind == "mipmap" else [self.data]

    def stored(self):
        """The texels as one array (mipmap levels flattened one after another)."""
        return np.concatenate([a.ravel() for a in self.data]) if self.kind == "mipmap" else self.data

    @classmethod
    def from_stored(cls, spec: str, stored):
        s = json.loads(spec)
        data = stored.reshape(s["shapes"]) if s["kind"] != "mipmap" else None
        if data is None:
            data, at = [], 0
            for shape in s["shapes"]:
                n = int(np.prod(shape))
                data.append(stored[at:at + n].reshape(shape))
                at += n
        return cls(data, s["kind"], s["array"], s["view"])

    def build(self, cudalab):
        """Make the object on cudalab's current device: (handle, what to keep alive until the end)."""
        array = dict(self.array)
        if self.kind == "mipmap":
            res = cudalab.mipmapped_array(self.data, **array)
        elif self.kind == "array":
            res = cudalab.cuda_array(self.data, **array)
        else:
            channels, pitch = array.pop("channels", 1), array.pop("pitch", None)
            rows = self.data.reshape(self.data.shape[0], -1) if pitch else self.data.reshape(-1)
            if pitch:
                padded = np.zeros((rows.shape[0], pitch // self.data.itemsize), self.data.dtype)
                padded[:, :rows.shape[1]] = rows
                rows = padded
            res = cudalab.to_device(rows)
            extra = dict(width=self.data.shape[1], height=self.data.shape[0], pitch=pitch) if pitch else {}
            return cudalab.texture(res, channels=channels, **extra, **(self.view or {})), res
        obj = cudalab.surface(res) if self.view is None else cudalab.texture(res, **self.view)
        return obj, res

    def finish(self, obj, res):
        """After the launch: keep a surface's contents, then destroy the object and free the memory."""
        if self.view is None:
            self.result = res.copy_to_host()
        obj.destroy()
        res.free()


def cases(groups=GROUPS):
    """Every case of the named groups, in corpus order."""
    return [c for g in groups for c in importlib.import_module(f"{__name__}.{g}").CASES]


# ---------------------------------------------------------------- edge-case inputs
def bits_f32(*words):
    return np.array(words, np.uint32).view(np.float32)


def bits_f64(*words):
    return np.array(words, np.uint64).view(np.float64)


F32_EDGES = np.concatenate([
    np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, 1 / 3, np.pi, -100.25, 1e10, -1e-10,
              65504.0, 65520.0, 16777216.0, 16777217.0, 2147483520.0, 2147483648.0, -2147483648.0,
              4294967296.0, 9.2233720e18, 0.49999997, 8388607.5, np.inf, -np.inf], np.float32),
    bits_f32(0x00000001, 0x80000001, 0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00400000,
             0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FC12345, 0xFFFFFFFF, 0x3F7FFFFF, 0x33800000)])

F64_EDGES = np.concatenate([
    np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 1 / 3, np.pi, 1e300, -1e-300, 3.4028235677973366e38,
              3.4028235e38 * 1.0000001, 1e-45, 1.4e-45, 2.0 ** 53, 2.0 ** 53 + 1, 2.0 ** 63, -2.0 ** 63, 2.0 ** 64,
              2147483647.5, -2147483648.5, 0.49999999999999994, np.inf, -np.inf], np.float64),
    bits_f64(0x1, 0x800FFFFFFFFFFFFF, 0x0010000000000000, 0x7FEFFFFFFFFFFFFF, 0x7FF8000000000000,
             0xFFF8000000000000, 0x7FF0000000000001, 0x7FF8000012345678, 0x36A0000000000000)])

I32_EDGES = np.array([0, 1, -1, 2, -2, 7, -7, 31, 32, 255, -256, 65535, 65536, -65536, 0x55555555,
                      -0x55555556, 0x7FFFFFFE, 0x7FFFFFFF, -0x80000000, -0x7FFFFFFF], np.int64).astype(np.int32)

I64_EDGES = np.array([0, 1, -1, 7, -7, 2 ** 31, -2 ** 31, 2 ** 32, 2 ** 32 - 1, 2 ** 62, 2 ** 63 - 1, -2 ** 63,
                      -2 ** 63 + 1, 0x5555555555555555, 0x123456789ABCDEF], np.int64)


def f32_mix(rng, n):
    """n float32s: the edge values, then normal numbers over a wide range, then random bit patterns."""
    k = (n - len(F32_EDGES)) // 2
    wide = rng.standard_normal(k) * np.exp2(rng.integers(-40, 40, k).astype(np.float64))
    raw = rng.integers(0, 2 ** 32, n - len(F32_EDGES) - k, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return np.concatenate([F32_EDGES, wide.astype(np.float32), raw])[:n]


def f64_mix(rng, n):
    """n float64s, built like f32_mix."""
    k = (n - len(F64_EDGES)) // 2
    wide = rng.standard_normal(k) * np.exp2(rng.integers(-300, 300, k).astype(np.float64))
    raw = rng.integers(0, 2 ** 63, n - len(F64_EDGES) - k, dtype=np.uint64) * np.uint64(2)
    raw = (raw + rng.integers(0, 2, len(raw), dtype=np.uint64)).view(np.float64)
    return np.concatenate([F64_EDGES, wide, raw])[:n]


def i32_mix(rng, n):
    """n int32s: edge values, small numbers, then uniformly random words."""
    k = (n - len(I32_EDGES)) // 2
    small = rng.integers(-300, 300, k)
    raw = rng.integers(-2 ** 31, 2 ** 31, n - len(I32_EDGES) - k)
    return np.concatenate([I32_EDGES, small, raw]).astype(np.int32)[:n]


def i64_mix(rng, n):
    """n int64s, built like i32_mix."""
    k = (n - len(I64_EDGES)) // 2
    small = rng.integers(-100000, 100000, k)
    raw = rng.integers(-2 ** 63, 2 ** 63 - 1, n - len(I64_EDGES) - k, dtype=np.int64, endpoint=True)
    return np.concatenate([I64_EDGES, small, raw]).astype(np.int64)[:n]

