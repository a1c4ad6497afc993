"""The occupancy calculator: NVIDIA's rules, known examples, and the H100 driver's own answers."""
import csv
import dataclasses
import pathlib

import pytest

import cudalab
from cudalab.device import profiles
from cudalab.device.occupancy import max_potential_block_size, occupancy
from cudalab.device.resources import Resources, kernel_resources, resources

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"

TILE = r"""
__global__ void transpose(const float* in, float* out, int n)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    out[x * n + y] = tile[threadIdx.x][threadIdx.y];
}
__global__ void __launch_bounds__(256) bounded(float* o) { o[threadIdx.x] *= 2.f; }
__global__ void local_array(float* o, int k)
{
    float a[64];                      // indexed with a run-time value: lives in local memory
    for (int i = 0; i < 64; i++) a[(i * k) & 63] = o[i];
    o[threadIdx.x] = a[k & 63];
}
"""


def test_256_threads_32_registers_fill_an_ampere_sm():
    o = occupancy((32, 0), 256, device="sm_80")
    assert (o.active_blocks, o.active_warps, o.occupancy) == (8, 64, 1.0)
    assert o.limiters == ("warps", "registers")        # both allow exactly 8 blocks
    assert o.registers_per_block == 32 * 32 * 8 and o.shared_per_block == 1024   # the reserved 1 KiB


@pytest.mark.parametrize("kernel, block, dyn, device, blocks, warps, limiter", [
    ((64, 0), 256, 0, "sm_80", 4, 32, "registers"),           # 64*32 = 2048 registers a warp: 32 warps
    ((40, 0), 256, 0, "sm_80", 6, 48, "registers"),           # 40*32 = 1280, per sub-partition 16384 // 1280 = 12
    ((37, 0), 128, 0, "sm_80", 12, 48, "registers"),          # 37*32 = 1184 rounds up to 1280
    ((16, 48 * 1024), 128, 0, "H100", 4, 16, "shared memory"),  # (48 + 1) KiB a block, 228 KiB an SM
    ((16, 0), 128, 20000, "sm_86", 4, 16, "shared memory"),   # 20000 + 1024 -> 21120; 100 KiB // 21120 = 4
    ((16, 0), 32, 0, "H100", 32, 32, "blocks"),               # tiny blocks: 32 blocks, half the warps
    ((16, 0), 32, 0, "T4", 16, 16, "blocks"),
    ((16, 0), 1024, 0, "H100", 2, 64, "warps"),
    ((16, 0), 1024, 0, "sm_86", 1, 32, "warps"),             # 48 warps an SM: the second block does not fit
    ((16, 0), 33, 0, "sm_80", 32, 64, "warps"),               # 33 threads take 2 warps
])
def test_each_limiter(kernel, block, dyn, device, blocks, warps, limiter):
    o = occupancy(kernel, block, dyn, device=device)
    assert (o.active_blocks, o.active_warps, o.limiter) == (blocks, warps, limiter)
    assert o.block_limits[limiter] == blocks


def test_blocks_that_cannot_run_say_why():
    o = occupancy((255, 0), 1024, device="H100")
    assert o.active_blocks == 0 and not o.launchable and "registers" in o.summary()
    o = occupancy((16, 0), 128, 60000, device="H100")
    assert o.active_blocks == 0 and "cudaFuncAttributeMaxDynamicSharedMemorySize" in o.reason
    o = occupancy((16, 0), 128, 60000, device="H100", max_dynamic_smem=100000)
    assert o.active_blocks == 3 and o.launchable      # 61 KiB blocks, opted in: 3 in 228 KiB
    assert occupancy((16, 0), 2048, device="H100").active_blocks == 0


def test_launch_bounds_like_the_driver():
    """The driver's occupancy API ignores __launch_bounds__; the launch fails. We say both."""
    o = occupancy(Resources(64, 0, 0, max_threads=128), 256, device="H100")
    assert o.active_blocks == 4 and not o.launchable and "__launch_bounds__" in o.summary()
    assert [row["block_size"] for row in o.curve] == [32, 64, 96, 128]


def test_curve_over_block_sizes():
    curve = occupancy((32, 0), 256, device="sm_80").curve
    assert len(curve) == 32 and curve[0]["block_size"] == 32 and curve[-1]["block_size"] == 1024
    assert {row["block_size"]: row["occupancy"] for row in curve}[256] == 1.0
    assert {row["block_size"]: row["active_blocks"] for row in curve}[32] == 32


def test_max_potential_block_size():
    # recorded on an H100: cuOccupancyMaxPotentialBlockSize said (minGrid 132, block 768) for 73 registers
    assert max_potential_block_size(73, device="H100") == max_potential_block_size((73, 0), device="H100")
    best = max_potential_block_size(73, device="H100")
    assert (best.min_grid_size, best.block_size) == (132, 768)
    per_thread = max_potential_block_size(16, dynamic_smem=lambda b: 64 * b, device="H100")
    assert per_thread.block_size * per_thread.active_blocks <= 2048


def test_every_configuration_recorded_on_the_h100():
    """docs/occupancy_h100.csv: the driver's cuOccupancyMaxActiveBlocksPerMultiprocessor for
    1540 (kernel, block size, dynamic shared memory) on an H100, with the registers and static
    shared memory the driver reported for each kernel (tools/occupancy_gpu.py)."""
    h100 = profiles.get("H100")
    with open(DOCS / "occupancy_h100.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) >= 200
    wrong = []
    for r in rows:
        mt = int(r["max_threads_per_block"])
        res = Resources(int(r["registers_driver"]), int(r["static_shared_driver"]), 0, mt if mt < 1024 else None)
        optin = int(r["max_dynamic_optin"]) if r["max_dynamic_optin"] else None
        got = occupancy(res, int(r["block_size"]), int(r["dynamic_smem"]), device=h100, max_dynamic_smem=optin)
        if got.active_blocks != int(r["driver_blocks"]):
            wrong.append((r["kernel"], r["block_size"], r["dynamic_smem"], got.active_blocks, r["driver_blocks"]))
    assert wrong == []
    assert all(r["registers_cubin"] == r["registers_driver"] for r in rows)


def test_resources_from_the_real_compiler():
    mod = cudalab.compile(TILE)
    t = kernel_resources(mod.get_kernel("transpose"), "H100")
    assert t.static_shared == 32 * 33 * 4 and t.local == 0 and 8 <= t.registers <= 32
    b = kernel_resources(mod.get_kernel("bounded"), "H100")
    assert b.max_threads == 256
    s = kernel_resources(mod.get_kernel("local_array"), "H100")
    assert s.local == 256 and s["registers"] == s.registers
    o = occupancy(mod.get_kernel("transpose"), (32, 32), device="H100")
    assert o.registers_per_thread == t.registers and o.active_blocks == 2


@pytest.mark.parametrize("R, occupancy_, groups", [(1, 1.0, 7), (2, 96 / 112, 3), (3, 96 / 112, 2), (4, 64 / 112, 1),
                                                   (5, 0.0, 0)])
def test_the_oneapi_xe_core_example(R, occupancy_, groups):
    """oneAPI GPU optimization guide, "Thread mapping and GPU occupancy": an Xe-LP Xe-core has 112
    thread contexts (warp slots, in CUDA words), a sub-group of 8 work-items runs on one, and a
    work-group (block) may have at most 512 work-items. Work-group (1, R, 128): R = 1 fits 7 times
    (100%), R = 2 three times (86%), R = 3 twice (86%), R = 4 once (57%), R > 4 fails to launch."""
    xe_core = dataclasses.replace(profiles.get("sm_90"), name="Xe-LP Xe-core", warp_size=8, max_warps_per_sm=112,
                                  max_threads_per_block=512, max_blocks_per_sm=64, shared_per_sm=128 * 1024,
                                  shared_reserved_per_block=0)
    o = occupancy((0, 0), (1, R, 128), device=xe_core)
    assert o.active_blocks == groups and o.occupancy == pytest.approx(occupancy_)


def test_resources_of_plain_source_for_an_architecture():
    src = 'extern "C" __global__ void k(float* o) { __shared__ float s[100]; s[threadIdx.x] = 1; o[0] = s[5]; }'
    r = resources(src, "k", "sm_75")
    assert (r.static_shared, r.local, r.arch) == (400, 0, "sm_75") and r.registers > 0


def test_ptx_is_assembled_by_a_toolkits_ptxas_where_the_nvcc_wheel_is_not_installed(tmp_path, monkeypatch):
    # a GPU machine with CUDA installed but not the nvidia-cuda-nvcc wheel: nvJitLink cannot link a
    # kernel that syncs its grid whole-program (ERROR_INTERNAL on an H200), the toolkit's ptxas can
    import nvidia
    from cudalab.device import resources
    toolkit = tmp_path / "cuda" / "bin"
    toolkit.mkdir(parents=True)
    (toolkit / "ptxas").write_text("#!/bin/sh\n")
    monkeypatch.setattr(nvidia, "__path__", [str(tmp_path / "no-wheel")])
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert resources._ptxas_path() == str(toolkit / "ptxas")
