"""Kernels that read through textures against the same kernels with plain loads, on both tiers and as C.

    python bench/textures.py                   # tex1Dfetch 2^20, tex2D matmul 256
    python bench/textures.py --markdown --interp-budget 10

Many older course programs read their inputs through textures (tex1Dfetch over linear memory, tex2D
over a CUDA array). Each row is a kernel: the interpreter (``CUDALAB_TIER=interp``; a run past
``--interp-budget`` CPU seconds is extrapolated from the first rows of blocks, marked ``~``), the compiled
tier (best of 3 launches after the launch that builds it), and the same loop in C (``c/textures.c``,
``cc -O2``, one core; the texture and plain rows of a kernel compute the same thing, so they share it).
Times are the process's CPU seconds. Outputs are checked: the texture and plain versions must agree.
To time another tree (before a change), run this file with that tree first on PYTHONPATH.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
CC = ["cc", "-O2"]

SOURCE = r"""
__global__ void fetch_tex(cudaTextureObject_t x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * tex1Dfetch<float>(x, i) + 1.0f;
}
__global__ void fetch_plain(const float *x, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * x[i] + 1.0f;
}
__global__ void matmul_tex(cudaTextureObject_t a, cudaTextureObject_t b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float sum = 0.0f;
    for (int k = 0; k < n; k++)
        sum += tex2D<float>(a, k + 0.5f, row + 0.5f) * tex2D<float>(b, col + 0.5f, k + 0.5f);
    c[row * n + col] = sum;
}
__global__ void matmul_plain(const float *a, const float *b, float *c, int n) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= n || col >= n) return;
    float sum = 0.0f;
    for (int k = 0; k < n; k++)
        sum += a[row * n + k] * b[k * n + col];
    c[row * n + col] = sum;
}
"""


def inputs(name, size):
    """(kernel arguments for the texture version, for the plain version, output array, grid, block)."""
    import cudalab
    if name == "fetch":
        x = (np.arange(size) % 7 - 3).astype(np.float32)
        dx = cudalab.to_device(x)
        out = cudalab.device_array(size, np.float32)
        grid = ((size + 255) // 256,)
        return [cudalab.texture(dx), out, np.int32(size)], [dx, out, np.int32(size)], out, grid, (256,)
    a = ((np.arange(size * size) % 7) - 3).astype(np.float32).reshape(size, size)
    b = ((np.arange(size * size) % 5) * 0.5).astype(np.float32).reshape(size, size)
    da, db = cudalab.to_device(a), cudalab.to_device(b)
    out = cudalab.device_array((size, size), np.float32)
    ta, tb = cudalab.texture(cudalab.cuda_array(a)), cudalab.texture(cudalab.cuda_array(b))
    grid = (size // 16, size // 16)
    return [ta, tb, out, np.int32(size)], [da, db, out, np.int32(size)], out, grid, (16, 16)


def timed(kernel, grid, block, args):
    t = time.process_time()
    kernel[grid, block](*args)
    return time.process_time() - t


def emulate(name, size, way, budget):
    """(interp s, note, compiled s, first compiled launch s, output) of kernel ``name_way``."""
    import cudalab
    cudalab.set_watchdog(3600)
    kernel = cudalab.compile(SOURCE).get_kernel(f"{name}_{way}")
    tex_args, plain_args, out, grid, block = inputs(name, size)
    args = tex_args if way == "tex" else plain_args
    os.environ["CUDALAB_TIER"] = "interp"
    timed(kernel, grid[:-1] + (1,), block, args)                    # parsing, decoding
    full = grid[-1]
    rows = full
    one = timed(kernel, grid[:-1] + (1,), block, args)
    if one * full > budget:
        rows = max(1, min(full, int(budget / max(one, 1e-6))))
    interp = timed(kernel, grid[:-1] + (rows,), block, args) * full / rows
    note = f"~ ({rows} of {full} block rows)" if rows < full else ""
    os.environ["CUDALAB_TIER"] = "compiled"
    first = timed(kernel, grid, block, args)
    best = min(timed(kernel, grid, block, args) for _ in range(3))
    os.environ.pop("CUDALAB_TIER", None)
    return interp, note, best, first, out.copy_to_host()


def run_c(exe, name, size):
    return float(subprocess.run([str(exe), name, str(size)], capture_output=True, text=True, check=True).stdout.split()[0])


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--interp-budget", type=float, default=20.0)
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--only", help="fetch or matmul")
    a = p.parse_args(argv)
    folder = tempfile.mkdtemp()
    try:
        exe = Path(folder) / "textures"
        subprocess.run(CC + ["-o", str(exe), str(HERE / "c" / "textures.c")], check=True)
        rows = []
        for name, size in (("fetch", 1 << 20), ("matmul", 256)):
            if a.only and name != a.only:
                continue
            c = run_c(exe, name, size)
            outs = {}
            for way in ("tex", "plain"):
                interp, note, comp, first, outs[way] = emulate(name, size, way, a.interp_budget)
                rows.append([f"{name}_{way}", str(size), f"{interp:.3g} {note}".strip(), f"{comp:.3g}", f"{first:.3g}",
                             f"{c:.4f}", f"{comp / c:.1f}x", f"{interp / comp:.1f}x"])
            if outs["tex"].tobytes() != outs["plain"].tobytes():
                rows[-1].append("texture and plain outputs differ")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    head = ["kernel", "size", "interp s", "compiled s", "first compiled launch s", "C s", "compiled / C",
            "interp / compiled"]
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(head)]
        print("  ".join(h.ljust(w) for h, w in zip(head, widths)))
        for r in rows:
            print("  ".join(x.ljust(w) for x, w in zip(r, widths)) + ("  " + r[8] if len(r) > 8 else ""))
    cc = subprocess.run(["cc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    one, five, _ = os.getloadavg()
    print(f"\nC: {' '.join(CC)} ({cc}), one core; CPU seconds. Load average {one:.1f} (1 min), {five:.1f} (5 min).")
    return 1 if any(len(r) > 8 for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
