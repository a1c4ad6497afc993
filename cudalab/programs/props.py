"""The emulated device's cudaDeviceProp: an sm_80-class GPU (A100-like), as cudaGetDeviceProperties says.

Values follow the CUDA C++ Programming Guide's table for compute capability 8.0 and an A100's
published numbers; ``totalGlobalMem`` is the emulator's arena. When cudalab/device grows a
profile table, this becomes a view of it.
"""
from __future__ import annotations

PROFILE = {
    "name": "cudalab emulated GPU (sm_80)",
    "major": 8, "minor": 0,
    "multiProcessorCount": 108,
    "warpSize": 32,
    "maxThreadsPerBlock": 1024,
    "maxThreadsDim": (1024, 1024, 64),
    "maxGridSize": (2**31 - 1, 65535, 65535),
    "sharedMemPerBlock": 48 * 1024,
    "sharedMemPerBlockOptin": 163 * 1024,
    "sharedMemPerMultiprocessor": 164 * 1024,
    "reservedSharedMemPerBlock": 1024,
    "regsPerBlock": 65536,
    "regsPerMultiprocessor": 65536,
    "maxThreadsPerMultiProcessor": 2048,
    "maxBlocksPerMultiProcessor": 32,
    "totalConstMem": 65536,
    "memPitch": 2**31 - 1,
    "textureAlignment": 512,
    "texturePitchAlignment": 32,
    "l2CacheSize": 40 * 1024 * 1024,
    "persistingL2CacheMaxSize": 30 * 1024 * 1024,
    "memoryBusWidth": 5120,
    "concurrentKernels": 1,
    "asyncEngineCount": 2,
    "unifiedAddressing": 1,
    "canMapHostMemory": 1,
    "managedMemory": 1,
    "concurrentManagedAccess": 1,
    "cooperativeLaunch": 1,
    "streamPrioritiesSupported": 1,
    "globalL1CacheSupported": 1,
    "localL1CacheSupported": 1,
    "hostRegisterSupported": 1,
    "memoryPoolsSupported": 0,
    "computePreemptionSupported": 1,
    "directManagedMemAccessFromHost": 1,
    "pageableMemoryAccess": 0,
    "integrated": 0,
    "ECCEnabled": 0,
}
# cudaDeviceGetAttribute values with no cudaDeviceProp field (CUDA 13 dropped the clock rates)
ATTRIBUTES = {13: 1_410_000, 36: 1_215_000}    # cudaDevAttrClockRate, cudaDevAttrMemoryClockRate (kHz)


def from_profile(p) -> dict:
    """cudaDeviceProp fields of a cudalab.device profile (the one chosen with cudalab.set_device)."""
    out = dict(PROFILE)
    out.update({
        "name": f"cudalab emulated {p.gpu or p.name} ({p.arch})", "major": p.cc[0], "minor": p.cc[1],
        "maxThreadsPerBlock": p.max_threads_per_block, "maxThreadsDim": tuple(p.max_block),
        "maxGridSize": tuple(p.max_grid), "sharedMemPerBlock": p.shared_per_block,
        "sharedMemPerBlockOptin": p.shared_per_block_optin, "sharedMemPerMultiprocessor": p.shared_per_sm,
        "reservedSharedMemPerBlock": p.shared_reserved_per_block, "regsPerBlock": p.registers_per_block,
        "regsPerMultiprocessor": p.registers_per_sm, "warpSize": p.warp_size,
        "maxThreadsPerMultiProcessor": p.max_warps_per_sm * p.warp_size,
        "maxBlocksPerMultiProcessor": p.max_blocks_per_sm, "totalConstMem": p.constant_memory,
    })
    if p.sms:
        out["multiProcessorCount"] = p.sms
    if p.l2_bytes:
        out["l2CacheSize"] = p.l2_bytes
    if p.copy_engines:
        out["asyncEngineCount"] = p.copy_engines
    return out


def props_text(total_global_mem: int) -> str:
    """``field=value`` lines for the shim's cudaGetDeviceProperties (arrays as ``a,b,c``), from the
    selected device profile (cudalab.set_device; an A100 by default)."""
    try:
        from ..device import current
        base = from_profile(current())
    except Exception:
        base = PROFILE
    items = dict(base, totalGlobalMem=total_global_mem)
    lines = [f"{k}={','.join(map(str, v)) if isinstance(v, tuple) else v}" for k, v in items.items()]
    lines += [f"attr.{a}={v}" for a, v in ATTRIBUTES.items()]
    return "\n".join(lines)
