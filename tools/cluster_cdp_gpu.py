"""Measure thread block clusters and device-side launches on the GPU of this machine: what the
occupancy calculator, the launch checks and the device runtime must reproduce.

* ``cuOccupancyMaxActiveClusters`` and ``cuOccupancyMaxPotentialClusterSize`` for cluster shapes of
  1 to 8 blocks (16 with the non-portable opt-in), several block sizes and shared-memory sizes, next
  to ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` for the same block;
* the driver's answer to bad cluster launches (a grid that is not a multiple of the cluster, too
  many blocks per cluster, a launch attribute that contradicts ``__cluster_dims__``);
* how many device-side launches one grid may have pending (cudaLimitDevRuntimePendingLaunchCount,
  2048 by default): 4096 threads each launch a child, and the children that ran and the launches
  that failed are counted (through cudalab's GPU backend, which links libcudadevrt).

    python tools/cluster_cdp_gpu.py OUT_DIR      # on a GPU: writes cluster_cdp_h100.json
"""
from __future__ import annotations

import json
import os
import sys
import time

from cuda.bindings import driver as cu

from cudalab.device.resources import _source_to_cubin

KERNELS = r'''
extern "C" __global__ void plain(float* o) {
  extern __shared__ float s[];
  s[threadIdx.x] = threadIdx.x;
  __syncthreads();
  if (o) o[blockIdx.x * blockDim.x + threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}
extern "C" __global__ void __cluster_dims__(2, 1, 1) fixed2(float* o) {
  if (o) o[blockIdx.x] = 1.0f;
}
'''
CLUSTERS = [(1, 1, 1), (2, 1, 1), (3, 1, 1), (4, 1, 1), (2, 2, 1), (6, 1, 1), (8, 1, 1), (2, 2, 2), (16, 1, 1)]
BLOCKS = [32, 128, 256, 512, 1024]
SMEM = [0, 48 * 1024, 100 * 1024, 200 * 1024]


def check(r):
    err, *vals = r
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(str(err).split(".")[-1])
    return vals[0] if len(vals) == 1 else tuple(vals)


def config(grid, block, smem, cluster=None, stream=None):
    c = cu.CUlaunchConfig()
    c.gridDimX, c.gridDimY, c.gridDimZ = grid
    c.blockDimX, c.blockDimY, c.blockDimZ = block
    c.sharedMemBytes = smem
    c.hStream = stream or cu.CUstream(0)
    attrs = []
    if cluster is not None:
        a = cu.CUlaunchAttribute()
        a.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        a.value.clusterDim.x, a.value.clusterDim.y, a.value.clusterDim.z = cluster
        attrs.append(a)
    c.attrs, c.numAttrs = attrs, len(attrs)
    return c


def try_launch(f, grid, block, smem, cluster):
    """'' when the launch ran, else the driver's error name."""
    import ctypes
    try:
        err, = cu.cuLaunchKernelEx(config(grid, block, smem, cluster), f, ((0,), (ctypes.c_void_p,)), 0)
    except (TypeError, ValueError):
        ptr = ctypes.c_void_p(0)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(ptr))
        err, = cu.cuLaunchKernelEx(config(grid, block, smem, cluster), f, ctypes.addressof(params), 0)
    if err != cu.CUresult.CUDA_SUCCESS:
        return str(err).split(".")[-1]
    err, = cu.cuCtxSynchronize()
    return "" if err == cu.CUresult.CUDA_SUCCESS else "sync: " + str(err).split(".")[-1]


CDP = r'''
__global__ void dive(int* seen, int depth) {
  seen[depth] = 1;
  if (depth >= 255) return;
  dive<<<1, 1>>>(seen, depth + 1);
  int e = (int)cudaGetLastError();
  if (e) seen[256 + depth] = e;
}
__global__ void tiny(int* ran) { atomicAdd(ran, 1); }
__global__ void many(int* ran, int* failed, int* codes) {
  tiny<<<1, 1>>>(ran);
  int e = (int)cudaGetLastError();
  if (e) { atomicAdd(failed, 1); atomicMax(codes, e); }
}
'''


def pending_launches():
    """{threads that launched, children that ran, launches that failed, the largest error code}."""
    import numpy as np
    import cudalab
    cudalab.use("gpu")
    try:
        k = cudalab.compile(CDP, options=["-arch=compute_90", "-rdc=true"]).get_kernel("many")
        ran, failed, codes = np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int32)
        k[16, 256](ran, failed, codes)
        cudalab.synchronize()
        out = {"launched": 4096, "ran": int(ran[0]), "failed": int(failed[0]), "code": int(codes[0])}
        seen = np.zeros(512, np.int32)
        cudalab.compile(CDP, options=["-arch=compute_90", "-rdc=true"]).get_kernel("dive")[1, 1](seen, 0)
        cudalab.synchronize()
        out["deepest grid that ran"] = int(np.flatnonzero(seen[:256])[-1])
        out["launch errors by depth"] = {int(d): int(seen[256 + d]) for d in np.flatnonzero(seen[256:])}
        return out
    finally:
        cudalab.use("emu")


def main(out_dir):
    t0 = time.time()
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    A = cu.CUdevice_attribute
    sms = int(check(cu.cuDeviceGetAttribute(A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)))
    cubin = _source_to_cubin(KERNELS, "sm_90", (), ())
    mod = check(cu.cuModuleLoadData(cubin))
    plain = check(cu.cuModuleGetFunction(mod, b"plain"))
    fixed2 = check(cu.cuModuleGetFunction(mod, b"fixed2"))
    F = cu.CUfunction_attribute
    check(cu.cuFuncSetAttribute(plain, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 227 * 1024))
    rows = []
    for nonportable in (0, 1):
        check(cu.cuFuncSetAttribute(plain, F.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, nonportable))
        for bs in BLOCKS:
            for smem in SMEM:
                per_sm = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(plain, bs, smem)
                for cl in CLUSTERS:
                    grid = (cl[0] * 4, cl[1] * 2, cl[2])
                    row = {"nonportable": nonportable, "block": bs, "smem": smem, "cluster": cl,
                           "blocks_per_sm": int(per_sm[1]) if per_sm[0] == cu.CUresult.CUDA_SUCCESS else None}
                    err, n = cu.cuOccupancyMaxActiveClusters(plain, config(grid, (bs, 1, 1), smem, cl))
                    row["max_active_clusters"] = int(n) if err == cu.CUresult.CUDA_SUCCESS else str(err).split(".")[-1]
                    err, n = cu.cuOccupancyMaxPotentialClusterSize(plain, config(grid, (bs, 1, 1), smem, cl))
                    row["max_potential_cluster_size"] = int(n) if err == cu.CUresult.CUDA_SUCCESS else str(err).split(".")[-1]
                    rows.append(row)
    check(cu.cuFuncSetAttribute(plain, F.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0))
    launches = {}
    for what, args in (
            ("grid 3 with cluster 2", (plain, (3, 1, 1), (32, 1, 1), 128, (2, 1, 1))),
            ("grid 4 with cluster 2", (plain, (4, 1, 1), (32, 1, 1), 128, (2, 1, 1))),
            ("cluster 9 (portable limit 8)", (plain, (9, 1, 1), (32, 1, 1), 128, (9, 1, 1))),
            ("cluster 16 without opt-in", (plain, (16, 1, 1), (32, 1, 1), 128, (16, 1, 1))),
            ("cluster (0,1,1)", (plain, (4, 1, 1), (32, 1, 1), 128, (0, 1, 1))),
            ("__cluster_dims__(2) kernel, grid 3", (fixed2, (3, 1, 1), (32, 1, 1), 0, None)),
            ("__cluster_dims__(2) kernel, attribute 4", (fixed2, (8, 1, 1), (32, 1, 1), 0, (4, 1, 1))),
            ("__cluster_dims__(2) kernel, attribute 2", (fixed2, (8, 1, 1), (32, 1, 1), 0, (2, 1, 1)))):
        try:
            launches[what] = try_launch(*args)
        except Exception as e:          # keep probing: one odd answer must not hide the others
            launches[what] = f"python: {type(e).__name__}: {e}"
    check(cu.cuFuncSetAttribute(plain, F.CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1))
    for what, args in (("cluster 16 with opt-in", (plain, (16, 1, 1), (32, 1, 1), 128, (16, 1, 1))),
                       ("cluster 17 with opt-in", (plain, (17, 1, 1), (32, 1, 1), 128, (17, 1, 1)))):
        try:
            launches[what] = try_launch(*args)
        except Exception as e:
            launches[what] = f"python: {type(e).__name__}: {e}"
    try:
        pending = pending_launches()
    except Exception as e:
        pending = f"python: {type(e).__name__}: {e}"
    out = {"sms": sms, "occupancy": rows, "launches": launches, "pending_launches": pending,
           "seconds": round(time.time() - t0, 1)}
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "cluster_cdp_h100.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    print(json.dumps(launches, indent=1))
    print("pending launches:", pending)
    print(f"{len(rows)} occupancy rows in {out['seconds']} s")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
