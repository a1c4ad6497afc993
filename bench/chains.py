"""Dependent float32 chains and linear texture lookups in native code (sixty round 19).

    python bench/chains.py                  # both kernels, 4 launches each after the one that builds
    PYTHONPATH=/other/tree python bench/chains.py     # the same on another tree (before a change)

Native code runs a region's lanes one after another, so a thread's chain of dependent float operations
(``delta = d[k] - x - s[k] * s[k] / delta``) waits on each division's latency, and on every NaN test on
the way. Two kernels of our own, CPU seconds a launch (the process's clock; the load average is printed):

- *sturm*: eigenvalues' bisection count (cuda-samples' bisectKernelLarge_MultIntervals): each block loads
  a chunk of a 2,048-long tridiagonal matrix into shared memory between barriers, and the threads
  ``tid < active`` count the chunk, each a division chain (``active`` read per block, as eigenvalues
  reads its intervals' count). 16 blocks of 256 threads.
- *newton*: a per-thread loop of Newton steps for sqrt(v) with no memory in it, 2^16 threads x 64 turns.
- *resize*: a bilinear ``tex2D<float>`` resize of three 1920 x 1080 planes to 640 x 480 (clamp, unnormalized
  coordinates: the shape of cuda-samples' NV12toBGRandResize's resizeBGRplanarBatchKernel), 921,600
  lookups a launch.

The output's hash is printed too: a change to the native code must leave it as it was.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path

import numpy as np

if not os.environ.get("PYTHONPATH"):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import cudalab  # noqa: E402

STURM = r"""
__global__ void sturm(const float* d, const float* s, const float* xs, const unsigned* actives,
                      unsigned* counts, int n) {
    __shared__ float sd[256], ss[256];
    __shared__ unsigned active;
    if (threadIdx.x == 0) active = actives[blockIdx.x];     // the block's intervals still open
    float x = xs[blockIdx.x * blockDim.x + threadIdx.x], delta = 1.0f;
    unsigned count = 0, rem = n;
    for (unsigned i = 0; i < n; i += blockDim.x) {
        __syncthreads();
        if (i + threadIdx.x < n) { sd[threadIdx.x] = d[i + threadIdx.x]; ss[threadIdx.x] = s[i + threadIdx.x]; }
        __syncthreads();
        if (threadIdx.x < active)
            for (unsigned k = 0; k < min(rem, blockDim.x); ++k) {
                delta = sd[k] - x - (ss[k] * ss[k]) / delta;
                count += (delta < 0) ? 1 : 0;
            }
        rem -= blockDim.x;
    }
    counts[blockIdx.x * blockDim.x + threadIdx.x] = count;
}
"""

NEWTON = r"""
__global__ void newton(const float* a, float* out, int turns) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = a[i], x = 1.0f + v, s = 0.0f;
    for (int k = 0; k < turns; ++k) { x = x - (x * x - v) / (x + x); s = s * 0.5f + x; }
    out[i] = s;
}
"""

RESIZE = r"""
__global__ void resize(cudaTextureObject_t src, float* dst, int pitch, int w, int h, int srch, float sx, float sy) {
    int x = threadIdx.x + blockIdx.x * blockDim.x, y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x >= w || y >= h) return;
    for (int c = 0; c < 3; ++c)                 // three planes stacked in one texture
        dst[c * pitch * h + y * pitch + x] = tex2D<float>(src, x * sx, c * srch + y * sy);
}
"""


def _launches(launch, out, count=4):
    times = []
    for _ in range(count + 1):              # the first launch plans and builds: not shown
        t = time.process_time()
        launch()
        cudalab.synchronize()
        times.append(time.process_time() - t)
    return times[1:], hashlib.md5(out.copy_to_host().tobytes()).hexdigest()[:8]


def main():
    rng = np.random.default_rng(19)
    n, blocks = 2048, 16
    d = cudalab.to_device(rng.uniform(-2, 2, n).astype(np.float32))
    s = cudalab.to_device(rng.uniform(-1, 1, n).astype(np.float32))
    xs = rng.uniform(-3, 3, blocks * 256).astype(np.float32)
    xs[5] = np.nan
    xs = cudalab.to_device(xs)
    actives = cudalab.to_device(rng.integers(200, 257, blocks).astype(np.uint32))
    counts = cudalab.device_array(blocks * 256, np.uint32)
    k = cudalab.compile(STURM).get_kernel("sturm")
    # (more launches than shown: the compiled tier builds a kernel once it has run long enough)
    _launches(lambda: k[blocks, 256](d, s, xs, actives, counts, np.int32(n)), counts, 8)
    times, digest = _launches(lambda: k[blocks, 256](d, s, xs, actives, counts, np.int32(n)), counts)
    print(f"load {os.getloadavg()[0]:.1f}; CPU s a launch")
    print(f"sturm  {blocks} x 256 threads, n {n}: " + ", ".join(f"{t:.3f}" for t in times) + f"  (output {digest})")
    m = 1 << 16
    a = rng.uniform(0.5, 4, m).astype(np.float32)
    a[7] = -1.0
    da, out = cudalab.to_device(a), cudalab.device_array(m, np.float32)
    k = cudalab.compile(NEWTON).get_kernel("newton")
    _launches(lambda: k[m // 256, 256](da, out, np.int32(64)), out, 3)
    times, digest = _launches(lambda: k[m // 256, 256](da, out, np.int32(64)), out)
    print(f"newton {m} threads x 64 turns: " + ", ".join(f"{t:.3f}" for t in times) + f"  (output {digest})")
    W, H, w, h = 1920, 1080, 640, 480
    img = cudalab.to_device(rng.random(3 * H * W, np.float32))
    tex = cudalab.texture(img, filter="linear", address="clamp", width=W, height=3 * H, pitch=W * 4)
    dst = cudalab.device_array(3 * w * h, np.float32)
    k = cudalab.compile(RESIZE).get_kernel("resize")
    args = (tex, dst, np.int32(w), np.int32(w), np.int32(h), np.int32(H), np.float32(W / w), np.float32(H / h))
    _launches(lambda: k[(w // 32, h // 8), (32, 8)](*args), dst, 8)
    times, digest = _launches(lambda: k[(w // 32, h // 8), (32, 8)](*args), dst)
    print(f"resize {3 * w * h} lookups: " + ", ".join(f"{t:.3f}" for t in times) + f"  (output {digest})")


if __name__ == "__main__":
    main()
