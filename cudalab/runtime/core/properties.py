"""The emulated device as ``cudaGetDeviceProperties`` and ``cudaDeviceGetAttribute`` see it, from the
selected device profile (``cudalab.set_device``), and the device limits ``cudaDeviceSetLimit`` sets.

Every field of CUDA 13's ``cudaDeviceProp`` and every ``cudaDevAttr`` value a CUDA 13.0 driver
answers (1 to 147; later numbers are ``cudaErrorInvalidValue`` there too) is given. Values that
follow from the compute capability or the GPU (SMs, shared memory, registers, clocks, L2, copy
engines, features) come from the profile; the rest (texture and surface limits, capability flags)
are what an H100 with driver 580 answered (tests/runtime_api/h100/attributes.out), which recent
data-center GPUs share. ``totalGlobalMem`` is the emulator's memory, not the GPU's.
"""
from __future__ import annotations

KB = 1024

# Texture and surface limits (cudaDeviceProp field -> value), the same on every GPU since sm_70; the
# runtime's array and texture checks use them too (runtime/textures.py).
TEXTURE_ALIGNMENT, TEXTURE_PITCH_ALIGNMENT = 512, 32
MAX_TEXTURE_1D_LINEAR = 1 << 28         # cudaDevAttrMaxTexture1DLinearWidth (no cudaDeviceProp field since CUDA 13)
TEXTURES = {
    "maxTexture1D": 131072, "maxTexture1DMipmap": 32768, "maxTexture2D": (131072, 65536),
    "maxTexture2DMipmap": (32768, 32768), "maxTexture2DLinear": (131072, 65000, 2097120),
    "maxTexture2DGather": (32768, 32768), "maxTexture3D": (16384, 16384, 16384),
    "maxTexture3DAlt": (8192, 8192, 32768), "maxTextureCubemap": 32768, "maxTexture1DLayered": (32768, 2048),
    "maxTexture2DLayered": (32768, 32768, 2048), "maxTextureCubemapLayered": (32768, 2046),
    "maxSurface1D": 32768, "maxSurface2D": (131072, 65536), "maxSurface3D": (16384, 16384, 16384),
    "maxSurface1DLayered": (32768, 2048), "maxSurface2DLayered": (32768, 32768, 2048),
    "maxSurfaceCubemap": 32768, "maxSurfaceCubemapLayered": (32768, 2046),
}


def gpu_figures(sized) -> tuple:
    """(bus bits, memory clock kHz, FP32:FP64 ratio, max persisting L2 bytes) of a sized profile; a
    profile made without them (a student's own) reads SIZED_LIKE's."""
    from ...device.profiles import SIZED_LIKE, get
    if sized.memory_bus_bits is None:
        sized = get(SIZED_LIKE)
    return sized.memory_bus_bits, sized.memory_clock_khz, sized.fp64_ratio, sized.persisting_l2_max


def device_properties(profile, total_global_mem: int) -> dict:
    """Every cudaDeviceProp field (arrays as tuples) for a cudalab.device profile."""
    from ...device.profiles import SIZED_LIKE
    p = profile
    sized = p.sized()
    bus, mem_clock, fp64_ratio, persisting = gpu_figures(sized)
    name = f"cudalab emulated {p.gpu} ({p.arch})" if p.sms else \
        f"cudalab emulated {p.arch} (sized like an {SIZED_LIKE})"
    l2 = sized.l2_bytes
    props = {
        "name": name, "totalGlobalMem": total_global_mem, "sharedMemPerBlock": p.shared_per_block,
        "regsPerBlock": p.registers_per_block, "warpSize": p.warp_size, "memPitch": 2**31 - 1,
        "maxThreadsPerBlock": p.max_threads_per_block, "maxThreadsDim": tuple(p.max_block),
        "maxGridSize": tuple(p.max_grid), "totalConstMem": p.constant_memory, "major": p.cc[0], "minor": p.cc[1],
        "textureAlignment": TEXTURE_ALIGNMENT, "texturePitchAlignment": TEXTURE_PITCH_ALIGNMENT, "multiProcessorCount": sized.sms, "integrated": 0,
        "canMapHostMemory": 1, **TEXTURES, "surfaceAlignment": 512, "concurrentKernels": 1, "ECCEnabled": 1,
        "pciBusID": 0, "pciDeviceID": 0, "pciDomainID": 0, "tccDriver": 0, "asyncEngineCount": sized.copy_engines,
        "unifiedAddressing": 1, "memoryBusWidth": bus, "l2CacheSize": l2, "persistingL2CacheMaxSize": persisting,
        "maxThreadsPerMultiProcessor": p.max_threads_per_sm, "streamPrioritiesSupported": 1,
        "globalL1CacheSupported": 1, "localL1CacheSupported": 1, "sharedMemPerMultiprocessor": p.shared_per_sm,
        "regsPerMultiprocessor": p.registers_per_sm, "managedMemory": 1, "isMultiGpuBoard": 0,
        "multiGpuBoardGroupID": 0, "hostNativeAtomicSupported": 0, "pageableMemoryAccess": 0,
        "concurrentManagedAccess": 1, "computePreemptionSupported": 1, "canUseHostPointerForRegisteredMem": 1,
        "cooperativeLaunch": 1, "sharedMemPerBlockOptin": p.shared_per_block_optin,
        "pageableMemoryAccessUsesHostPageTables": 0, "directManagedMemAccessFromHost": 0,
        "maxBlocksPerMultiProcessor": p.max_blocks_per_sm,
        "accessPolicyMaxWindowSize": 128 << 20 if p.has("l2_residency_control") else 0,
        "reservedSharedMemPerBlock": p.shared_reserved_per_block, "hostRegisterSupported": 1,
        "sparseCudaArraySupported": 1, "hostRegisterReadOnlySupported": 1, "timelineSemaphoreInteropSupported": 1,
        "memoryPoolsSupported": 1, "gpuDirectRDMASupported": 1, "gpuDirectRDMAFlushWritesOptions": 1,
        "gpuDirectRDMAWritesOrdering": 100, "memoryPoolSupportedHandleTypes": 9,
        "deferredMappingCudaArraySupported": 1, "ipcEventSupported": 1, "clusterLaunch": int(p.has("clusters")),
        "unifiedFunctionPointers": 1, "deviceNumaConfig": 0, "deviceNumaId": -1, "mpsEnabled": 0, "hostNumaId": 0,
        "gpuPciDeviceID": 0, "gpuPciSubsystemID": 0, "hostNumaMultinodeIpcSupported": 0, "luidDeviceNodeMask": 0,
        # no cudaDeviceProp field since CUDA 13: attributes only
        "clockRate": sized.clock_mhz * 1000, "memoryClockRate": mem_clock,
        "singleToDoublePrecisionPerfRatio": fp64_ratio,
    }
    return props


# cudaDevAttr number -> the property it reads: a field name, (field, index) for an array field, or a
# constant (the H100's answer to an attribute with no property). 1..147 is what a CUDA 13.0 driver knows.
ATTRIBUTES = {
    1: "maxThreadsPerBlock", 2: ("maxThreadsDim", 0), 3: ("maxThreadsDim", 1), 4: ("maxThreadsDim", 2),
    5: ("maxGridSize", 0), 6: ("maxGridSize", 1), 7: ("maxGridSize", 2), 8: "sharedMemPerBlock",
    9: "totalConstMem", 10: "warpSize", 11: "memPitch", 12: "regsPerBlock", 13: "clockRate",
    14: "textureAlignment", 15: 1, 16: "multiProcessorCount", 17: 0, 18: "integrated", 19: "canMapHostMemory",
    20: 0, 21: "maxTexture1D", 22: ("maxTexture2D", 0), 23: ("maxTexture2D", 1), 24: ("maxTexture3D", 0),
    25: ("maxTexture3D", 1), 26: ("maxTexture3D", 2), 27: ("maxTexture2DLayered", 0),
    28: ("maxTexture2DLayered", 1), 29: ("maxTexture2DLayered", 2), 30: "surfaceAlignment",
    31: "concurrentKernels", 32: "ECCEnabled", 33: "pciBusID", 34: "pciDeviceID", 35: "tccDriver",
    36: "memoryClockRate", 37: "memoryBusWidth", 38: "l2CacheSize", 39: "maxThreadsPerMultiProcessor",
    40: "asyncEngineCount", 41: "unifiedAddressing", 42: ("maxTexture1DLayered", 0),
    43: ("maxTexture1DLayered", 1), 44: 1, 45: ("maxTexture2DGather", 0), 46: ("maxTexture2DGather", 1),
    47: ("maxTexture3DAlt", 0), 48: ("maxTexture3DAlt", 1), 49: ("maxTexture3DAlt", 2), 50: "pciDomainID",
    51: "texturePitchAlignment", 52: "maxTextureCubemap", 53: ("maxTextureCubemapLayered", 0),
    54: ("maxTextureCubemapLayered", 1), 55: "maxSurface1D", 56: ("maxSurface2D", 0), 57: ("maxSurface2D", 1),
    58: ("maxSurface3D", 0), 59: ("maxSurface3D", 1), 60: ("maxSurface3D", 2), 61: ("maxSurface1DLayered", 0),
    62: ("maxSurface1DLayered", 1), 63: ("maxSurface2DLayered", 0), 64: ("maxSurface2DLayered", 1),
    65: ("maxSurface2DLayered", 2), 66: "maxSurfaceCubemap", 67: ("maxSurfaceCubemapLayered", 0),
    68: ("maxSurfaceCubemapLayered", 1), 69: MAX_TEXTURE_1D_LINEAR, 70: ("maxTexture2DLinear", 0),
    71: ("maxTexture2DLinear", 1), 72: ("maxTexture2DLinear", 2), 73: ("maxTexture2DMipmap", 0),
    74: ("maxTexture2DMipmap", 1), 75: "major", 76: "minor", 77: "maxTexture1DMipmap",
    78: "streamPrioritiesSupported", 79: "globalL1CacheSupported", 80: "localL1CacheSupported",
    81: "sharedMemPerMultiprocessor", 82: "regsPerMultiprocessor", 83: "managedMemory", 84: "isMultiGpuBoard",
    85: "multiGpuBoardGroupID", 86: "hostNativeAtomicSupported", 87: "singleToDoublePrecisionPerfRatio",
    88: "pageableMemoryAccess", 89: "concurrentManagedAccess", 90: "computePreemptionSupported",
    91: "canUseHostPointerForRegisteredMem", 92: 0, 93: 0, 94: 0, 95: "cooperativeLaunch", 96: 1,
    97: "sharedMemPerBlockOptin", 98: 0, 99: "hostRegisterSupported", 100: "pageableMemoryAccessUsesHostPageTables",
    101: "directManagedMemAccessFromHost", 102: 1, 103: 1, 104: 0, 105: 0, 106: "maxBlocksPerMultiProcessor",
    107: 1, 108: "persistingL2CacheMaxSize", 109: "accessPolicyMaxWindowSize", 110: 1,
    111: "reservedSharedMemPerBlock", 112: "sparseCudaArraySupported", 113: "hostRegisterReadOnlySupported",
    114: "timelineSemaphoreInteropSupported", 115: "memoryPoolsSupported", 116: "gpuDirectRDMASupported",
    117: "gpuDirectRDMAFlushWritesOptions", 118: "gpuDirectRDMAWritesOrdering",
    119: "memoryPoolSupportedHandleTypes", 120: "clusterLaunch", 121: "deferredMappingCudaArraySupported",
    122: 1, 123: 1, 124: 1, 125: "ipcEventSupported", 126: "memSyncDomainCount", 127: 1, 128: 1, 129: 1,
    130: "deviceNumaConfig", 131: "deviceNumaId", 132: 0, 133: "mpsEnabled", 134: "hostNumaId", 135: 0, 136: 0,
    137: 0, 138: 0, 139: "gpuPciDeviceID", 140: "gpuPciSubsystemID", 141: 1, 142: 1,
    143: "hostNumaMultinodeIpcSupported", 144: 1, 145: 1, 146: 0, 147: 0,
}
# cudaDevAttr names (without the prefix) -> numbers, from CUDA 13's driver_types.h
ATTRIBUTE_NAMES = {
    "MaxThreadsPerBlock": 1, "MaxBlockDimX": 2, "MaxBlockDimY": 3, "MaxBlockDimZ": 4, "MaxGridDimX": 5,
    "MaxGridDimY": 6, "MaxGridDimZ": 7, "MaxSharedMemoryPerBlock": 8, "TotalConstantMemory": 9, "WarpSize": 10,
    "MaxPitch": 11, "MaxRegistersPerBlock": 12, "ClockRate": 13, "TextureAlignment": 14, "GpuOverlap": 15,
    "MultiProcessorCount": 16, "KernelExecTimeout": 17, "Integrated": 18, "CanMapHostMemory": 19, "ComputeMode":
    20, "MaxTexture1DWidth": 21, "MaxTexture2DWidth": 22, "MaxTexture2DHeight": 23, "MaxTexture3DWidth": 24,
    "MaxTexture3DHeight": 25, "MaxTexture3DDepth": 26, "MaxTexture2DLayeredWidth": 27,
    "MaxTexture2DLayeredHeight": 28, "MaxTexture2DLayeredLayers": 29, "SurfaceAlignment": 30,
    "ConcurrentKernels": 31, "EccEnabled": 32, "PciBusId": 33, "PciDeviceId": 34, "TccDriver": 35,
    "MemoryClockRate": 36, "GlobalMemoryBusWidth": 37, "L2CacheSize": 38, "MaxThreadsPerMultiProcessor": 39,
    "AsyncEngineCount": 40, "UnifiedAddressing": 41, "MaxTexture1DLayeredWidth": 42,
    "MaxTexture1DLayeredLayers": 43, "MaxTexture2DGatherWidth": 45, "MaxTexture2DGatherHeight": 46,
    "MaxTexture3DWidthAlt": 47, "MaxTexture3DHeightAlt": 48, "MaxTexture3DDepthAlt": 49, "PciDomainId": 50,
    "TexturePitchAlignment": 51, "MaxTextureCubemapWidth": 52, "MaxTextureCubemapLayeredWidth": 53,
    "MaxTextureCubemapLayeredLayers": 54, "MaxSurface1DWidth": 55, "MaxSurface2DWidth": 56,
    "MaxSurface2DHeight": 57, "MaxSurface3DWidth": 58, "MaxSurface3DHeight": 59, "MaxSurface3DDepth": 60,
    "MaxSurface1DLayeredWidth": 61, "MaxSurface1DLayeredLayers": 62, "MaxSurface2DLayeredWidth": 63,
    "MaxSurface2DLayeredHeight": 64, "MaxSurface2DLayeredLayers": 65, "MaxSurfaceCubemapWidth": 66,
    "MaxSurfaceCubemapLayeredWidth": 67, "MaxSurfaceCubemapLayeredLayers": 68, "MaxTexture1DLinearWidth": 69,
    "MaxTexture2DLinearWidth": 70, "MaxTexture2DLinearHeight": 71, "MaxTexture2DLinearPitch": 72,
    "MaxTexture2DMipmappedWidth": 73, "MaxTexture2DMipmappedHeight": 74, "ComputeCapabilityMajor": 75,
    "ComputeCapabilityMinor": 76, "MaxTexture1DMipmappedWidth": 77, "StreamPrioritiesSupported": 78,
    "GlobalL1CacheSupported": 79, "LocalL1CacheSupported": 80, "MaxSharedMemoryPerMultiprocessor": 81,
    "MaxRegistersPerMultiprocessor": 82, "ManagedMemory": 83, "IsMultiGpuBoard": 84, "MultiGpuBoardGroupID": 85,
    "HostNativeAtomicSupported": 86, "SingleToDoublePrecisionPerfRatio": 87, "PageableMemoryAccess": 88,
    "ConcurrentManagedAccess": 89, "ComputePreemptionSupported": 90, "CanUseHostPointerForRegisteredMem": 91,
    "CooperativeLaunch": 95, "MaxSharedMemoryPerBlockOptin": 97, "CanFlushRemoteWrites": 98,
    "HostRegisterSupported": 99, "PageableMemoryAccessUsesHostPageTables": 100,
    "DirectManagedMemAccessFromHost": 101, "MaxBlocksPerMultiprocessor": 106, "MaxPersistingL2CacheSize": 108,
    "MaxAccessPolicyWindowSize": 109, "SparseCudaArraySupported": 112, "HostRegisterReadOnlySupported": 113,
    "TimelineSemaphoreInteropSupported": 114, "MemoryPoolsSupported": 115, "GPUDirectRDMASupported": 116,
    "GPUDirectRDMAFlushWritesOptions": 117, "GPUDirectRDMAWritesOrdering": 118,
    "MemoryPoolSupportedHandleTypes": 119, "ClusterLaunch": 120, "DeferredMappingCudaArraySupported": 121,
    "IpcEventSupport": 125, "MemSyncDomainCount": 126, "NumaConfig": 130, "NumaId": 131, "MpsEnabled": 133,
    "HostNumaId": 134, "D3D12CigSupported": 135, "VulkanCigSupported": 138, "GpuPciDeviceId": 139,
    "GpuPciSubsystemId": 140, "HostNumaMemoryPoolsSupported": 142, "HostNumaMultinodeIpcSupported": 143,
    "HostMemoryPoolsSupported": 144, "OnlyPartialHostNativeAtomicSupported": 147,
}


def attribute(props: dict, attr: int) -> int | None:
    """The value of cudaDevAttr number ``attr``; None for a number the driver does not know."""
    src = ATTRIBUTES.get(attr)
    if src is None:
        return None
    if isinstance(src, int):
        return src
    if isinstance(src, tuple):
        return int(props[src[0]][src[1]])
    if src == "memSyncDomainCount":
        return 4 if props["major"] >= 9 else 1
    return int(props[src])


# cudaFuncAttribute names (without the prefix) -> numbers, those cudaFuncSetAttribute sets (driver_types.h)
FUNC_ATTRIBUTE_NAMES = {
    "MaxDynamicSharedMemorySize": 8, "PreferredSharedMemoryCarveout": 9, "ClusterDimMustBeSet": 10,
    "RequiredClusterWidth": 11, "RequiredClusterHeight": 12, "RequiredClusterDepth": 13,
    "NonPortableClusterSizeAllowed": 14, "ClusterSchedulingPolicyPreference": 15,
}


# ---------------------------------------------------------------------- limits (cudaDeviceSetLimit)
LIMIT_NAMES = ("cudaLimitStackSize", "cudaLimitPrintfFifoSize", "cudaLimitMallocHeapSize",
               "cudaLimitDevRuntimeSyncDepth", "cudaLimitDevRuntimePendingLaunchCount",
               "cudaLimitMaxL2FetchGranularity", "cudaLimitPersistingL2CacheSize")


def default_limits(props: dict) -> dict:
    """cudaLimit number -> its value when a program starts (an H100's defaults, the persisting L2
    size in sixteenths of the L2 as that GPU rounds it). DevRuntimeSyncDepth is absent from sm_90
    on (cudaErrorUnsupportedLimit there), as device-side cudaDeviceSynchronize is."""
    from ...emulator.devrt import DEFAULT_PENDING
    limits = {0: 1024, 1: 8_650_752, 2: 8 << 20, 4: DEFAULT_PENDING, 5: 64,
              6: min(3 * props["l2CacheSize"] // 16, props["persistingL2CacheMaxSize"])}
    if props["major"] < 9:
        limits[3] = 2
    return limits


def persisting_l2_unit(props: dict) -> int:
    """The persisting-L2 limit is kept in sixteenths of the L2 (an H100 answers 4 MiB asked with 6.25 MiB)."""
    return max(props["l2CacheSize"] // 16, 1)
