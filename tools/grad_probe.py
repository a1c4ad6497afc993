"""Level of detail from crafted gradients, recorded on a GPU: tex2DGrad on a 32 x 32 mipmap whose level k
holds 256 k, so a linear mip blend returns 256 * the level of detail the GPU used. One vector alone at
every angle (the length the texture unit computes), two equal vectors at every angle between them, a
long and a short one at every angle (how two gradients combine). An H100's answers are in
tests/grad_probe_h100.npz (docs/fuzz_report.md, texture filtering).

    python tools/grad_probe.py OUT.npz        # on the GPU machine
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, "tests")]
from kernels import TexArg  # noqa: E402
from kernels.textures import FLAT_LEVELS, LOD_VIEW, TEX_2D_GRAD  # noqa: E402


def gradients():
    rows = []
    th = np.arange(256) * (np.pi / 2) / 256
    for r in (4.0, 5.0):                                         # A: one vector, dy = 0
        rows += [[r * np.cos(t), r * np.sin(t), 0, 0] for t in th]
    ph = np.arange(256) * np.pi / 256
    for psi in (0.0, np.pi / 6):                                 # C: two vectors of length 4, angle phi apart
        rows += [[4 * np.cos(psi), 4 * np.sin(psi), 4 * np.cos(psi + p), 4 * np.sin(psi + p)] for p in ph]
    for s in (1.0, 2.0, 3.0):                                    # D: (4, 0) and s at angle phi
        rows += [[4, 0, s * np.cos(p), s * np.sin(p)] for p in ph[::2]]
    return (np.array(rows) / 32).astype(np.float32)


def main(out):
    from kernels.record import run_on_gpu
    g = gradients()
    n = len(g)
    args = [TexArg(FLAT_LEVELS, "mipmap", {}, LOD_VIEW), np.full((n, 2), 0.5, np.float32), g,
            np.zeros((n, 4), np.float32), np.int32(n)]
    case = dict(name="grad_probe", src=TEX_2D_GRAD, kernel="tex_2d_grad<float4>", grid=(n + 255) // 256,
                block=256, shared=0, options=(), cluster=None)
    run_on_gpu(case, args)
    np.savez_compressed(out, gradients=g, out=args[3])
    print("lod/256 first", args[3][:4, 0], "n", n)


if __name__ == "__main__":
    main(sys.argv[1])
