"""Probe kernels for the texture unit's rules the corpus left open: what an H100/H200 gives, recorded.

Each probe is a corpus-style case (tests/kernels: a kernel, its TexArg and arrays) run once on the
GPU; the inputs and outputs go to one npz, which the emulator's rules are then fitted and checked
against (``python tools/texture_probe.py check PROBES.npz``). The probes:

* ``*_pairs``: linear filtering of 8/16-bit texels read as normalized floats, over every pair of
  8-bit texel values (random pairs for 16-bit ones) at 14 filter weights: a 2D texture of height 256
  whose row y holds the pairs (2k, 2k + 1), read at y's centre, so only x filters;
* ``*_bilinear``: the same formats over random 2 x 2 blocks at random (x, y) weights;
* ``cube_faces``: which face (and texel) a direction with infinite, huge, zero or NaN components
  picks, point sampled;
* ``cube_seamless_onehot``: seamless cubemap filtering near edges and corners: a layered cubemap of
  96 layers, layer L zero but for texel L (face L // 16) = 1, so each lookup's result is that
  texel's weight.

Set 2 (``gpu2``/``check2``: issue 15's three open texture rules):

* ``grad_length``, ``grad_angle``, ``grad_pairs``: tex2DGrad on a mipmap whose level k holds 256 k (so the
  result is 256 times the level of detail): one gradient along x at 1,024 lengths from 2 to 4 texels
  (the logarithm and its rounding), one of length 4 at 1,024 angles (the length estimate), and 4,096
  random pairs (how two gradients combine);
* ``tex3d_linear_many``: 65,536 random trilinear lookups of random float texels (the adder's rounding);
* ``tex3d_mip_onehot_L_i``: a 3D mipmap (8, 4, 2, 1 texels a side) all zero but for one texel of level L
  of the footprint every lookup reads (level 0: texels 2..3, level 1: 1..2 on each axis), at random
  levels of detail between 0 and 1: each result is that texel's weight / 256.

    python tools/texture_probe.py gpu OUT.npz       # on the GPU machine (gpu2 for set 2)
    python tools/texture_probe.py check OUT.npz     # here: the emulator against the recording (check2)
"""
from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]

from kernels import TexArg                      # noqa: E402
from kernels.textures import (FLAT_LEVELS, LOD_VIEW, TEX_1D_3D_LOD, TEX_2D, TEX_2D_GRAD, TEX_3D,  # noqa: E402
                              TEX_CUBE, TEX_CUBE_LAYERED)

WEIGHTS = np.array([1, 2, 3, 5, 37, 64, 85, 127, 128, 129, 170, 200, 250, 255])
BLOCK = 256


def case(name, src, kernel, args):
    n = len(args[-2]) // (2 if kernel == "tex_1d_3d_lod" else 1)
    return dict(name=name, src=src, kernel=kernel, grid=(n + BLOCK - 1) // BLOCK, block=BLOCK, shared=0,
                options=(), cluster=None), args + [np.int32(n)]


def pairs(rng, dtype):
    """(256, 512) texels: row y holds 256 pairs; 8-bit: every (k, y) pair, 16-bit: random pairs,
    a quarter of them close (t1 = t0 + small)."""
    info = np.iinfo(dtype)
    if info.bits == 8:
        k, y = np.meshgrid(np.arange(256), np.arange(256))
        t0, t1 = k, y
    else:
        t0 = rng.integers(info.min, info.max + 1, (256, 256))
        t1 = rng.integers(info.min, info.max + 1, (256, 256))
        close = rng.random((256, 256)) < 0.25
        t1 = np.where(close, np.clip(t0 + rng.integers(-3, 4, (256, 256)), info.min, info.max), t1)
    out = np.empty((256, 512), np.int64)
    out[:, 0::2], out[:, 1::2] = t0, t1
    return out.astype(dtype)


def pair_coords():
    """x = 2k + 0.5 + w/256 for every pair k and weight w, at every row's centre."""
    k, y, w = np.meshgrid(np.arange(256), np.arange(256), WEIGHTS, indexing="ij")
    x = 2 * k + 0.5 + w / 256.0
    return np.stack([x.ravel(), y.ravel() + 0.5], 1).astype(np.float32)


def bilinear(rng, dtype, n=256):
    info = np.iinfo(dtype)
    data = rng.integers(info.min, info.max + 1, (2 * n, 2 * n)).astype(dtype)
    bx, by = rng.integers(0, n, n * n), rng.integers(0, n, n * n)
    a, b = rng.integers(0, 257, n * n), rng.integers(0, 257, n * n)
    p = np.stack([2 * bx + 0.5 + a / 256.0, 2 * by + 0.5 + b / 256.0], 1).astype(np.float32)
    return data, p


SPECIAL = np.array([np.inf, -np.inf, 3e38, -3e38, 2, -2, 1, -1, 0.5, 0, -0.0, np.nan, 1e-40], np.float32)


def cube_directions():
    x, y, z = np.meshgrid(SPECIAL, SPECIAL, SPECIAL, indexing="ij")
    d = np.stack([x.ravel(), y.ravel(), z.ravel(), np.zeros(x.size, np.float32)], 1)
    return d.astype(np.float32)


def seamless_directions(rng, n=1200):
    """Directions near the cube's edges and corners: two or three components of nearly equal size."""
    s = rng.choice([-1.0, 1.0], (n, 3))
    base = np.ones((n, 3))
    base[:, 2] = np.where(np.arange(n) % 3 == 0, 1.0, rng.random(n) * 2 - 1)      # corners, then edges
    jitter = rng.random((n, 3)) * np.exp2(-rng.integers(1, 8, (n, 1)))
    d = (base - jitter) * s
    perm = np.array([rng.permutation(3) for _ in range(n)])
    d = np.take_along_axis(d, perm, 1)
    return np.concatenate([d, np.zeros((n, 1))], 1).astype(np.float32)


def probes():
    rng = np.random.default_rng(15)
    linear_norm = dict(read="normalized", filter="linear")
    out = []
    for name, dtype in (("u8", np.uint8), ("s8", np.int8), ("u16", np.uint16), ("s16", np.int16)):
        p = pair_coords()
        out.append(case(f"{name}_pairs", TEX_2D, "tex_2d<float>",
                        [TexArg(pairs(rng, dtype), view=linear_norm), p, np.zeros(len(p), np.float32)]))
        data, q = bilinear(rng, dtype)
        out.append(case(f"{name}_bilinear", TEX_2D, "tex_2d<float>",
                        [TexArg(data, view=linear_norm), q, np.zeros(len(q), np.float32)]))
    px = pairs(rng, np.uint8)
    rgba = np.stack([px, px[::-1], px ^ 0x5A, px], -1).copy()
    p = pair_coords()[::4].copy()
    out.append(case("srgb_pairs", TEX_2D, "tex_2d<float4>",
                    [TexArg(rgba, array=dict(channels=4), view=dict(linear_norm, srgb=True)), p,
                     np.zeros((len(p), 4), np.float32)]))
    cube = (np.arange(6 * 4 * 4, dtype=np.float32) + 1).reshape(6, 4, 4)
    d = cube_directions()
    out.append(case("cube_faces", TEX_CUBE, "tex_cube<float>",
                    [TexArg(cube, array=dict(cubemap=True), view=dict(filter="point")), d,
                     np.zeros(len(d), np.float32)]))
    onehot = np.zeros((96, 6, 4, 4), np.float32)
    onehot[np.arange(96), np.arange(96) // 16, (np.arange(96) // 4) % 4, np.arange(96) % 4] = 1
    d = seamless_directions(rng)
    dd = np.repeat(d, 96, 0)
    layer = np.tile(np.arange(96, dtype=np.int32), len(d))
    for name, seamless in (("cube_seamless_onehot", True), ("cube_linear_onehot", False)):
        out.append(case(name, TEX_CUBE_LAYERED, "tex_cube_layered<float>",
                        [TexArg(onehot.reshape(576, 4, 4), array=dict(cubemap=True, layered=True),
                                view=dict(filter="linear", seamless_cubemap=seamless)), dd, layer,
                         np.zeros(len(dd), np.float32)]))
    return out


def grad_rows(rng):
    """Gradients (dx.x, dx.y, dy.x, dy.y) in normalized units of the 32-texel level 0."""
    length = np.stack([2 + np.arange(1024) / 512, np.zeros(1024), np.zeros(1024), np.zeros(1024)], 1)
    th = np.arange(1024) * (np.pi / 2) / 1024
    angle = np.stack([4 * np.cos(th), 4 * np.sin(th), 0 * th, 0 * th], 1)
    r = np.exp2(rng.random((4096, 2)) * 3 + 1)
    t = rng.random((4096, 2)) * 2 * np.pi
    pairs = np.stack([r[:, 0] * np.cos(t[:, 0]), r[:, 0] * np.sin(t[:, 0]), r[:, 1] * np.cos(t[:, 1]),
                      r[:, 1] * np.sin(t[:, 1])], 1)
    return {"grad_length": length, "grad_angle": angle, "grad_pairs": pairs}


MIP3D_SIZES = (8, 4, 2, 1)
MIP3D_CELL = {0: (2, 3), 1: (1, 2)}        # the texels each level's footprint covers on every axis


def mip3d_coords(rng, n=4096):
    """Normalized (x, y, z, lod): level-0 texel coordinates in [3, 3.5) (footprint 2..3; level 1's 1..2),
    lod k/256 for random k, a tenth of them between those steps."""
    p = np.zeros((n, 4), np.float32)
    p[:, :3] = (3 + rng.random((n, 3)) / 2) / 8
    k = rng.integers(0, 256, n) + np.where(rng.random(n) < 0.1, rng.random(n), 0)
    p[:, 3] = k / 256
    return p


def probes_2():
    rng = np.random.default_rng(1515)
    out = []
    for name, g in grad_rows(rng).items():
        g = (g / 32).astype(np.float32)
        out.append(case(name, TEX_2D_GRAD, "tex_2d_grad<float4>",
                        [TexArg(FLAT_LEVELS, "mipmap", {}, LOD_VIEW), np.full((len(g), 2), 0.5, np.float32), g,
                         np.zeros((len(g), 4), np.float32)]))
    data = (rng.standard_normal((8, 8, 8)) * np.exp2(rng.integers(-6, 7, (8, 8, 8)))).astype(np.float32)
    p = np.zeros((65536, 4), np.float32)
    p[:, :3] = rng.random((65536, 3)) * 8 - 0.5
    out.append(case("tex3d_linear_many", TEX_3D, "tex_3d<float4>",
                    [TexArg(data, view=dict(filter="linear")), p, np.zeros((len(p), 4), np.float32)]))
    p = mip3d_coords(rng)
    one_d = TexArg([np.zeros(8 >> k, np.float32) for k in range(4)], "mipmap", {},
                   dict(normalized=True, filter="linear", mipmap_filter="linear", max_lod=3.0))
    for level, (lo, hi) in MIP3D_CELL.items():
        for at in np.ndindex(2, 2, 2):
            levels = [np.zeros((s, s, s), np.float32) for s in MIP3D_SIZES]
            levels[level][tuple(lo + np.array(at))] = 1
            out.append(case(f"tex3d_mip_onehot_{level}_{''.join(map(str, at))}", TEX_1D_3D_LOD, "tex_1d_3d_lod",
                            [one_d, TexArg(levels, "mipmap", {}, dict(normalized=True, filter="linear",
                                                                     mipmap_filter="linear", max_lod=3.0)),
                             p, np.zeros((2 * len(p), 4), np.float32)]))
    return out


def save(path, results):
    """Only the outputs (the inputs are made again from the same seed): half of the probes in
    ``path``, half in ``path`` with ``_b`` before the extension (files back from the GPU are small)."""
    for part, stem in ((results[0::2], path), (results[1::2], path.replace(".npz", "_b.npz"))):
        np.savez_compressed(stem, **{c["name"]: args[-2] for c, args in part})


def cmd_gpu(path, make=probes):
    from kernels.record import run_on_gpu
    done = []
    for c, args in make():
        try:
            run_on_gpu(c, args)
            print("ok", c["name"], flush=True)
            done.append((c, args))
        except Exception as e:       # noqa: BLE001 - one failing probe must not lose the others
            print("FAIL", c["name"], type(e).__name__, str(e)[:300], flush=True)
    save(path, done)


def load(path, make=probes):
    """{probe name: (case, args with the GPU's output as the output argument)}."""
    got = {**np.load(path), **np.load(path.replace(".npz", "_b.npz"))}
    out = {}
    for c, args in make():
        if c["name"] in got:
            args[-2] = got[c["name"]]
            out[c["name"]] = (c, args)
    return out


def emulate(c, args):
    """The emulator's outputs for a probe recorded on the GPU (its output array, zeroed first)."""
    from test_corpus import run_on_emulator
    fresh = [a if isinstance(a, TexArg) else a.copy() for a in args]
    fresh[-2] = np.zeros_like(fresh[-2])
    run_on_emulator(c, fresh)
    return fresh[-2]


def cmd_check(path, names=None, make=probes):
    for name, (c, args) in load(path, make).items():
        if names and name not in names:
            continue
        want = args[-2]
        got = emulate(c, args)
        bad = got.view(np.uint32) != want.view(np.uint32)
        print(f"{name}: {int(bad.sum())} of {bad.size} differ", flush=True)


if __name__ == "__main__":
    which = probes_2 if sys.argv[1].endswith("2") else probes
    if sys.argv[1].startswith("gpu"):
        cmd_gpu(sys.argv[2], which)
    else:
        cmd_check(sys.argv[2], sys.argv[3:], which)
