"""Teaching pairs of kernels, timed on a real GPU and estimated by cudalab's timing model.

    python tools/timing_gpu.py measure OUT_DIR   # on a GPU (cupy + CUDA events): OUT_DIR/timing_h100.csv
    python tools/timing_gpu.py compare CSV       # here: emulate each kernel at a small size, scale the
                                                 # counts to the GPU size, run the model, compare

Every kernel in CASES does work proportional to ``size ** power`` (threads times per-thread loop
length), so the counts of an emulated run at ``emu`` are scaled by ``(gpu / emu) ** power``; the
grid (waves over SMs) is the GPU-size grid.
"""
from __future__ import annotations

import csv
import os
import sys

import numpy as np

SOURCE = r"""
extern "C" __global__ void mm_naive(const float* A, const float* B, float* C, int n) {
    int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
    C[r * n + c] = s;
}
extern "C" __global__ void mm_naive_rowmajor_bad(const float* A, const float* B, float* C, int n) {
    int c = blockIdx.y * blockDim.y + threadIdx.y, r = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.f;
    for (int k = 0; k < n; k++) s += A[r * n + k] * B[k * n + c];
    C[r * n + c] = s;
}
extern "C" __global__ void mm_tiled(const float* A, const float* B, float* C, int n) {
    __shared__ float As[16][16], Bs[16][16];
    int tx = threadIdx.x, ty = threadIdx.y;
    int r = blockIdx.y * 16 + ty, c = blockIdx.x * 16 + tx;
    float s = 0.f;
    for (int t = 0; t < n; t += 16) {
        As[ty][tx] = A[r * n + t + tx];
        Bs[ty][tx] = B[(t + ty) * n + c];
        __syncthreads();
        for (int k = 0; k < 16; k++) s += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[r * n + c] = s;
}
extern "C" __global__ void tr_naive(const float* in, float* out, int n) {
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    out[x * n + y] = in[y * n + x];
}
extern "C" __global__ void tr_shared(const float* in, float* out, int n) {
    __shared__ float t[32][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    t[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    out[y * n + x] = t[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void tr_padded(const float* in, float* out, int n) {
    __shared__ float t[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    t[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    out[y * n + x] = t[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void copy_strided(const float* in, float* out, int n, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = (int)((((long long)i * stride) % n + ((long long)i * stride) / n) % n);
    out[i] = in[j];
}
extern "C" __global__ void branch(float* o, int mode) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = o[i];
    int side = mode ? (threadIdx.x & 1) : ((threadIdx.x >> 5) & 1);
    if (side) { for (int k = 0; k < 64; k++) x = x * 1.0001f + 0.5f; }
    else      { for (int k = 0; k < 64; k++) x = x * 0.9999f - 0.5f; }
    o[i] = x;
}
extern "C" __global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
extern "C" __global__ void reduce_interleaved(const float* in, float* out) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned d = 1; d < 256; d *= 2) {
        if (t % (2 * d) == 0) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void reduce_sequential(const float* in, float* out) {
    __shared__ float s[256];
    unsigned t = threadIdx.x;
    s[t] = in[blockIdx.x * 256 + t];
    __syncthreads();
    for (unsigned d = 128; d > 0; d >>= 1) {
        if (t < d) s[t] += s[t + d];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void smem_stride(float* o, int stride) {
    __shared__ float s[32 * 33];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    float x = 0.f;
    for (int k = 0; k < 64; k++) x += s[((t & 31) * stride + k) % (32 * 33)];
    o[blockIdx.x * blockDim.x + t] = x;
}
"""


def _f32(xp, n, seed=0):
    if xp is _Shape:
        return None
    return xp.asarray(np.random.default_rng(seed).random(n, dtype=np.float32))


def _mm(kernel, block=(16, 16)):
    return lambda xp, n: (kernel, (n // block[0], n // block[1]), block,
                          [_f32(xp, n * n), _f32(xp, n * n, 1), xp.zeros(n * n, np.float32), np.int32(n)])


def _tr(kernel):
    return lambda xp, n: (kernel, (n // 32, n // 32), (32, 32),
                          [_f32(xp, n * n), xp.zeros(n * n, np.float32), np.int32(n)])


def _copy(stride):
    return lambda xp, n: ("copy_strided", (n // 256,), (256,),
                          [_f32(xp, n), xp.zeros(n, np.float32), np.int32(n), np.int32(stride)])


def _vadd(block):
    return lambda xp, n: ("vadd", ((n + block - 1) // block,), (block,),
                          [_f32(xp, n), _f32(xp, n, 1), xp.zeros(n, np.float32), np.int32(n)])


def _reduce(kernel):
    return lambda xp, n: (kernel, (n // 256,), (256,), [_f32(xp, n), xp.zeros(n // 256, np.float32)])


# name, pair (what it teaches), setup(xp, size) -> (kernel, grid, block, args), gpu size, emulated size, power
CASES = [
    ("mm_naive", "matmul: naive vs tiled", _mm("mm_naive"), 1024, 64, 3),
    ("mm_tiled", "matmul: naive vs tiled", _mm("mm_tiled"), 1024, 64, 3),
    ("mm_naive_uncoalesced", "matmul: naive vs tiled", _mm("mm_naive_rowmajor_bad"), 1024, 64, 3),
    ("tr_naive", "transpose: naive vs shared vs padded", _tr("tr_naive"), 4096, 256, 2),
    ("tr_shared", "transpose: naive vs shared vs padded", _tr("tr_shared"), 4096, 256, 2),
    ("tr_padded", "transpose: naive vs shared vs padded", _tr("tr_padded"), 4096, 256, 2),
    ("copy_stride1", "global access: coalesced vs strided", _copy(1), 1 << 24, 1 << 16, 1),
    ("copy_stride2", "global access: coalesced vs strided", _copy(2), 1 << 24, 1 << 16, 1),
    ("copy_stride4", "global access: coalesced vs strided", _copy(4), 1 << 24, 1 << 16, 1),
    ("copy_stride8", "global access: coalesced vs strided", _copy(8), 1 << 24, 1 << 16, 1),
    ("copy_stride32", "global access: coalesced vs strided", _copy(32), 1 << 24, 1 << 16, 1),
    ("branch_warp_uniform", "divergence: per warp vs per lane",
     lambda xp, n: ("branch", (n // 256,), (256,), [_f32(xp, n), np.int32(0)]), 1 << 22, 1 << 14, 1),
    ("branch_divergent", "divergence: per warp vs per lane",
     lambda xp, n: ("branch", (n // 256,), (256,), [_f32(xp, n), np.int32(1)]), 1 << 22, 1 << 14, 1),
    *[(f"vadd_block{b}", "block size", _vadd(b), 1 << 24, 1 << 16, 1) for b in (32, 64, 128, 256, 512, 1024)],
    ("reduce_interleaved", "reduction: divergent vs sequential addressing", _reduce("reduce_interleaved"),
     1 << 24, 1 << 16, 1),
    ("reduce_sequential", "reduction: divergent vs sequential addressing", _reduce("reduce_sequential"),
     1 << 24, 1 << 16, 1),
    ("smem_stride1", "shared memory: no conflicts vs 32-way",
     lambda xp, n: ("smem_stride", (n // 256,), (256,), [xp.zeros(n, np.float32), np.int32(1)]), 1 << 22, 1 << 14, 1),
    ("smem_stride32", "shared memory: no conflicts vs 32-way",
     lambda xp, n: ("smem_stride", (n // 256,), (256,), [xp.zeros(n, np.float32), np.int32(32)]), 1 << 22, 1 << 14, 1),
]


def measure(out_dir, repeats=20):
    import cupy as cp
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",))
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    rows = []
    for name, pair, setup, n_gpu, _n_emu, _p in CASES:
        kernel, grid, block, args = setup(cp, n_gpu)
        f = mod.get_function(kernel)
        for _ in range(3):
            f(grid, block, tuple(args))
        cp.cuda.Device().synchronize()
        start.record()
        for _ in range(repeats):
            f(grid, block, tuple(args))
        stop.record()
        stop.synchronize()
        ms = cp.cuda.get_elapsed_time(start, stop) / repeats
        rows.append({"case": name, "pair": pair, "kernel": kernel, "size": n_gpu, "grid": "x".join(map(str, grid)),
                     "block": "x".join(map(str, block)), "registers": f.num_regs, "measured_us": round(ms * 1e3, 3)})
        print(f"{name:24s} {ms * 1e3:10.2f} us")
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "timing_h100.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def spearman(a, b):
    """Spearman's rank correlation (no ties expected in timings)."""
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    return float(np.corrcoef(ra, rb)[0, 1])


def compare(path, device="H100"):
    """Emulate every case, scale its counts to the GPU size, estimate, and add the estimate to ``path``."""
    import dataclasses

    import cudalab
    from cudalab.analysis import MetricsObserver
    from cudalab.device.timing import estimate
    with open(path) as fh:
        rows = {r["case"]: r for r in csv.DictReader(fh)}
    mod = cudalab.compile(SOURCE)
    for name, _pair, setup, n_gpu, n_emu, power in CASES:
        kernel, grid, block, args = setup(np, n_emu)
        rec = mod.get_kernel(kernel).launch(grid, block, args, observers=[MetricsObserver()])
        scale = (n_gpu / n_emu) ** power
        metrics = {k: v * scale for k, v in rec.metrics.items() if isinstance(v, (int, float))}
        # the data touched grows with the arrays, not with the work: scale it by their bytes
        data = [sum(a.nbytes for a in setup(np, n)[3] if isinstance(a, np.ndarray)) for n in (n_emu, n_gpu)]
        metrics["cudalab__footprint_bytes"] = rec.metrics.get("cudalab__footprint_bytes", 0) * data[1] / max(data[0], 1)
        _, g, _, _ = setup(_Shape, n_gpu)
        big = dataclasses.replace(rec, grid=tuple(g) + (1,) * (3 - len(g)))
        est = estimate(big, device, registers=int(rows[name]["registers"]), metrics=metrics)
        rows[name].update(predicted_us=round(est.time_us, 2), predicted_limiter=est.limiter)
        print(f"{name:24s} measured {float(rows[name]['measured_us']):9.1f} us  model {est.time_us:9.1f} us  "
              f"({est.limiter})")
    out = list(rows.values())
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(out[0]))
        w.writeheader()
        w.writerows(out)
    measured = [float(r["measured_us"]) for r in out]
    predicted = [float(r["predicted_us"]) for r in out]
    print(f"Spearman rank correlation over {len(out)} kernels: {spearman(measured, predicted):.3f}")
    right = 0
    pairs = 0
    for pair in dict.fromkeys(r["pair"] for r in out):
        group = [r for r in out if r["pair"] == pair]
        for i, a in enumerate(group):
            for b in group[i + 1:]:
                pairs += 1
                same = (float(a["measured_us"]) > float(b["measured_us"])) == \
                       (float(a["predicted_us"]) > float(b["predicted_us"]))
                right += same
                print(f"  {a['case']:>22s} / {b['case']:<22s} measured x{float(a['measured_us']) / float(b['measured_us']):6.2f}"
                      f"  model x{float(a['predicted_us']) / float(b['predicted_us']):6.2f}{'' if same else '  WRONG ORDER'}")
    print(f"pairs ordered as measured: {right}/{pairs}")


class _Shape:
    """Stands in for numpy/cupy when only a case's grid is wanted (no arrays are made)."""

    @staticmethod
    def asarray(x):
        return None

    @staticmethod
    def zeros(*a, **k):
        return None


if __name__ == "__main__":
    if sys.argv[1] == "measure":
        measure(sys.argv[2] if len(sys.argv) > 2 else ".")
    else:
        compare(sys.argv[2])
