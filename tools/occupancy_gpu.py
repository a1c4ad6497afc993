"""Check cudalab's occupancy calculator against the real driver on the GPU of this machine.

For kernels built to hit every limiter (many registers through unrolled accumulators,
``--maxrregcount`` and ``__launch_bounds__``; large static and dynamic shared memory, with and
without the opt-in; tiny blocks for the blocks-per-SM limit), at many block sizes and dynamic
shared-memory sizes, it asks the driver ``cuOccupancyMaxActiveBlocksPerMultiprocessor`` and
compares with ``cudalab.device.occupancy.occupancy`` fed with the register count and static shared
memory the driver reports for the loaded kernel (``cuFuncGetAttribute``). It also checks that the
cubin reader (``resources.cubin_resources``) reads the same registers / shared / local sizes as the
driver, and ``max_potential_block_size`` against ``cuOccupancyMaxPotentialBlockSize``.

    python tools/occupancy_gpu.py OUT_DIR        # on a GPU: writes occupancy_h100.csv and occupancy_h100.json
    python tools/occupancy_gpu.py --recheck CSV  # anywhere: recompute the calculator's columns of a
                                                 # recorded table from the driver's recorded inputs
"""
from __future__ import annotations

import csv
import json
import os
import sys
import time

from cuda.bindings import driver as cu

from cudalab.device import profiles
from cudalab.device.occupancy import max_potential_block_size, occupancy
from cudalab.device.resources import Resources, _source_to_cubin, cubin_resources

BLOCK_SIZES = [1, 32, 33, 64, 96, 128, 160, 192, 224, 256, 288, 320, 384, 448, 512, 576, 640, 768, 896, 1024]
OPTIN = 227 * 1024


def heavy(name, n, bounds=""):
    """n float accumulators kept live across a loop: register pressure grows with n."""
    return f"""
extern "C" __global__ void {bounds} {name}(float* o, const float* in, int n) {{
    float acc[{n}];
    #pragma unroll
    for (int i = 0; i < {n}; i++) acc[i] = in[i * n + threadIdx.x];
    for (int j = 0; j < n; j++) {{
        #pragma unroll
        for (int i = 0; i < {n}; i++) acc[i] = fmaf(acc[i], acc[(i + 1) % {n}], in[j + i]);
    }}
    float s = 0.f;
    #pragma unroll
    for (int i = 0; i < {n}; i++) s += acc[i];
    o[blockIdx.x * blockDim.x + threadIdx.x] = s;
}}"""


def static_smem(name, nbytes):
    words = nbytes // 4
    return f"""
extern "C" __global__ void {name}(float* o) {{
    __shared__ float buf[{words}];
    for (int i = threadIdx.x; i < {words}; i += blockDim.x) buf[i] = i;
    __syncthreads();
    o[threadIdx.x] = buf[(threadIdx.x * 7) % {words}];
}}"""


DYN = """
extern "C" __global__ void NAME(float* o) {
    extern __shared__ float d[];
    d[threadIdx.x] = threadIdx.x;
    __syncthreads();
    o[threadIdx.x] = d[(threadIdx.x + 1) % blockDim.x];
}"""

SMALL = """
extern "C" __global__ void small(float* o) { o[blockIdx.x * blockDim.x + threadIdx.x] = 1.f; }"""


def kernels():
    """(kernel name, source, NVRTC options, opt-in max dynamic shared or None, dynamic sizes)."""
    ks = [("small", SMALL, (), None, [0, 4096])]
    for n in (8, 16, 24, 32, 48, 64, 96, 128, 160, 200):
        ks.append((f"heavy{n}", heavy(f"heavy{n}", n), (), None, [0]))
    for r in (24, 32, 40, 56, 72, 88, 104, 120, 136, 168, 200, 232):
        ks.append((f"heavy128_r{r}", heavy(f"heavy128_r{r}", 128), (f"--maxrregcount={r}",), None, [0]))
    for t, b in ((128, 8), (192, 5), (256, 4), (384, 2), (512, 2), (768, 1), (1024, 1)):
        name = f"heavy96_lb{t}_{b}"
        ks.append((name, heavy(name, 96, f"__launch_bounds__({t}, {b})"), (), None, [0]))
    for s in (1024, 4000, 8192, 12300, 20480, 33000, 40960, 49152):
        ks.append((f"smem{s}", static_smem(f"smem{s}", s), (), None, [0, 2000]))
    ks.append(("dyn", DYN.replace("NAME", "dyn"), (), None,
               [0, 1, 1024, 4000, 8192, 16384, 24000, 32768, 40000, 48128, 49152, 50000]))
    ks.append(("dyn_optin", DYN.replace("NAME", "dyn_optin"), (), OPTIN,
               [0, 30000, 50000, 65536, 76000, 100000, 116000, 131072, 160000, 200000, 232448, 240000]))
    ks.append(("smem12300_optin", static_smem("smem12300_optin", 12300), (), OPTIN - 12300,
               [0, 40000, 60000, 100000, 150000, 220000]))
    return ks


def check(r):
    if isinstance(r, tuple):
        err, rest = r[0], r[1:]
    else:
        err, rest = r, ()
    if err != cu.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"CUDA error {err}")
    return rest[0] if len(rest) == 1 else rest


def device_attributes(dev):
    A = cu.CUdevice_attribute
    names = {
        "sms": A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
        "clock_khz": A.CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
        "memory_clock_khz": A.CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE,
        "memory_bus_bits": A.CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH,
        "l2_bytes": A.CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
        "async_engines": A.CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT,
        "max_threads_per_block": A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        "max_threads_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR,
        "max_blocks_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR,
        "registers_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR,
        "registers_per_block": A.CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
        "shared_per_sm": A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
        "shared_per_block": A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK,
        "shared_per_block_optin": A.CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
        "shared_reserved_per_block": A.CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK,
        "cc_major": A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
        "cc_minor": A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
    }
    out = {k: int(check(cu.cuDeviceGetAttribute(a, dev))) for k, a in names.items()}
    out["name"] = check(cu.cuDeviceGetName(256, dev)).split(b"\0")[0].decode()
    out["memory_bytes"] = int(check(cu.cuDeviceTotalMem(dev)))
    return out


def func_attr(f, a):
    return int(check(cu.cuFuncGetAttribute(a, f)))


def main(out_dir):
    check(cu.cuInit(0))
    dev = check(cu.cuDeviceGet(0))
    ctx = check(cu.cuDevicePrimaryCtxRetain(dev))
    check(cu.cuCtxSetCurrent(ctx))
    attrs = device_attributes(dev)
    arch = f"sm_{attrs['cc_major']}{attrs['cc_minor']}"
    prof = profiles.get("H100" if arch == "sm_90" else arch)
    F = cu.CUfunction_attribute
    rows, potential, t0 = [], [], time.time()
    for name, src, opts, optin, dyns in kernels():
        cubin = _source_to_cubin(src, arch, tuple(opts), ())
        mod = check(cu.cuModuleLoadData(cubin))
        f = check(cu.cuModuleGetFunction(mod, name.encode()))
        if optin is not None:
            check(cu.cuFuncSetAttribute(f, F.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, optin))
        regs = func_attr(f, F.CU_FUNC_ATTRIBUTE_NUM_REGS)
        shared = func_attr(f, F.CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)
        local = func_attr(f, F.CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)
        max_threads = func_attr(f, F.CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
        parsed = cubin_resources(cubin, name, prof.shared_reserved_per_block or 1024)
        res = Resources(regs, shared, local, max_threads if max_threads < prof.max_threads_per_block else None)
        for dyn in dyns:
            for bs in BLOCK_SIZES:
                err, n = cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(f, bs, dyn)
                ok = err == cu.CUresult.CUDA_SUCCESS
                calc = calc_columns(res, bs, dyn, prof, optin)
                driver = int(n) if ok else 0
                rows.append({"kernel": name, "options": " ".join(opts), "registers_driver": regs,
                             "registers_cubin": parsed.registers, "static_shared_driver": shared,
                             "static_shared_cubin": parsed.static_shared, "local_driver": local,
                             "local_cubin": parsed.local, "max_threads_per_block": max_threads,
                             "max_dynamic_optin": optin or "", "block_size": bs, "dynamic_smem": dyn,
                             "driver_blocks": driver, "driver_error": "" if ok else str(err).split(".")[-1],
                             **calc, "match": int(driver == calc["calc_blocks"])})
        err, grid, bsz = cu.cuOccupancyMaxPotentialBlockSize(f, None, 0, 0)
        mine = max_potential_block_size(res, 0, device=prof)
        potential.append({"kernel": name, "driver": [int(grid), int(bsz)] if err == cu.CUresult.CUDA_SUCCESS
                          else str(err), "calc": [mine.min_grid_size, mine.block_size]})
        check(cu.cuModuleUnload(mod))
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "occupancy_h100.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    matches = sum(r["match"] for r in rows)
    seen = {r["kernel"]: r for r in rows}.values()
    summary = {
        "device": attrs, "profile": prof.name, "configurations": len(rows), "matches": matches,
        "mismatches": [r for r in rows if not r["match"]][:50],
        "kernels": len(seen),
        "registers_cubin_equal_driver": sum(r["registers_cubin"] == r["registers_driver"] for r in seen),
        "static_shared_cubin_equal_driver": sum(r["static_shared_cubin"] == r["static_shared_driver"] for r in seen),
        "local_cubin_equal_driver": sum(r["local_cubin"] == r["local_driver"] for r in seen),
        "limiters_hit": sorted({r["calc_limiter"] for r in rows}),
        "potential_block_size": potential,
        "potential_matches": sum(p["driver"] == p["calc"] for p in potential),
        "seconds": round(time.time() - t0, 1),
    }
    with open(os.path.join(out_dir, "occupancy_h100.json"), "w") as fh:
        json.dump(summary, fh, indent=1, default=str)
    print(f"{matches}/{len(rows)} configurations match the driver; registers from the cubin equal the driver's for "
          f"{summary['registers_cubin_equal_driver']}/{summary['kernels']} kernels; potential block size "
          f"{summary['potential_matches']}/{len(potential)}")
    for r in summary["mismatches"][:10]:
        print("MISMATCH", r)


def calc_columns(res, bs, dyn, prof, optin):
    o = occupancy(res, bs, dyn, device=prof, max_dynamic_smem=optin)
    return {"calc_blocks": o.active_blocks, "calc_limiter": "+".join(o.limiters),
            "calc_occupancy": round(o.occupancy, 4), "calc_launchable": int(o.launchable)}


def recheck(path, device="H100"):
    """Recompute the calculator's columns of a recorded table; rewrite it; print the match count."""
    prof = profiles.get(device)
    with open(path) as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        mt = int(r["max_threads_per_block"])
        res = Resources(int(r["registers_driver"]), int(r["static_shared_driver"]), int(r["local_driver"]),
                        mt if mt < prof.max_threads_per_block else None)
        optin = int(r["max_dynamic_optin"]) if r["max_dynamic_optin"] else None
        r.update(calc_columns(res, int(r["block_size"]), int(r["dynamic_smem"]), prof, optin))
        r["match"] = int(int(r["driver_blocks"]) == r["calc_blocks"])
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{sum(r['match'] for r in rows)}/{len(rows)} configurations match the driver")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--recheck"]:
        recheck(sys.argv[2])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else ".")
