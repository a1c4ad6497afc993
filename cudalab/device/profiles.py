"""Device profiles: what each compute capability allows per SM and per block, and what named GPUs add.

Per-compute-capability numbers are the CUDA C++ Programming Guide's appendix tables (cleaned up in
shared/compute_capabilities.md); the allocation rules the occupancy calculator needs (register and
shared-memory allocation units, sub-partitions, shared-memory carveouts, the 1 KiB the driver
reserves per block since sm_80) are those of NVIDIA's occupancy calculator, ``cuda_occupancy.h``.
Named GPUs add their size and speed (SMs, clocks, memory, bandwidth, copy engines) from the
vendors' data sheets.

    profiles.get("A100")      # a named GPU: sm_80 limits + 108 SMs, 1555 GB/s, ...
    profiles.get("sm_86")     # a compute capability alone (no SM count or bandwidth)
    profiles.list()           # every name get() accepts
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

KB = 1024
# A bare compute capability ("sm_86") has no size or speed: the runtime's device properties, the
# timeline and the timing model all size it like this GPU (Profile.sized).
SIZED_LIKE = "A100"

# Features that need a minimum compute capability (shared/compute_capabilities.md, "Feature support").
# name -> (major, minor), what it is.
FEATURES = {
    "half": ((5, 3), "half-precision arithmetic, comparisons, shuffles and conversions"),
    "fp64_atomic_add": ((6, 0), "64-bit floating-point atomicAdd on global and shared memory"),
    "tensor_cores": ((7, 0), "tensor cores and warp matrix functions (wmma, PTX mma)"),
    "independent_thread_scheduling": ((7, 0), "lanes of a warp progress separately; __syncwarp is needed"),
    "bf16": ((8, 0), "bfloat16 arithmetic"),
    "redux_sync": ((8, 0), "warp reduce functions __reduce_*_sync (PTX redux.sync)"),
    "memcpy_async": ((8, 0), "hardware memcpy_async (PTX cp.async), split arrive/wait barriers"),
    "l2_residency_control": ((8, 0), "L2 persistence (access policy windows)"),
    "clusters": ((9, 0), "thread block clusters and distributed shared memory"),
    "tma": ((9, 0), "the tensor memory accelerator (bulk tensor copies, cp.async.bulk)"),
    "dpx": ((9, 0), "DPX instructions for dynamic programming"),
}

# PTX instructions that exist only from some compute capability on, -> the feature they need.
PTX_FEATURES = {"redux.sync": "redux_sync", "cp.async": "memcpy_async", "mma": "tensor_cores",
                "wmma": "tensor_cores", "cp.async.bulk": "tma", "barrier.cluster": "clusters"}


@dataclass(frozen=True)
class Profile:
    """One device: the limits of its compute capability, plus size and speed if it is a named GPU."""

    name: str                          # "A100" or "sm_80"
    cc: tuple                          # compute capability (major, minor)
    # per block
    max_threads_per_block: int = 1024
    max_block: tuple = (1024, 1024, 64)
    max_grid: tuple = (2**31 - 1, 65535, 65535)
    registers_per_block: int = 64 * KB
    shared_per_block: int = 48 * KB            # without opt-in
    shared_per_block_optin: int = 48 * KB      # with cudaFuncAttributeMaxDynamicSharedMemorySize
    # per SM
    warp_size: int = 32
    max_blocks_per_sm: int = 32
    max_warps_per_sm: int = 64
    registers_per_sm: int = 64 * KB
    max_registers_per_thread: int = 255
    shared_per_sm: int = 64 * KB
    shared_carveouts_kb: tuple = ()            # shared-memory sizes an SM can be configured with (Volta+)
    max_resident_grids: int = 128
    # allocation rules (cuda_occupancy.h)
    register_allocation_unit: int = 256        # registers are given to a warp in chunks of 256
    warp_allocation_unit: int = 1              # a block holds whole warps (threads rounded up to 32)
    sub_partitions: int = 4                    # an SM's register file is split over 4 schedulers
    shared_allocation_unit: int = 256          # bytes; 128 from sm_80 on
    shared_reserved_per_block: int = 0         # bytes the driver keeps per block (1 KiB from sm_80 on)
    shared_banks: int = 32
    constant_memory: int = 64 * KB
    # a named GPU (None for a bare compute capability)
    gpu: str | None = None                     # marketing name
    sms: int | None = None
    clock_mhz: int | None = None               # boost clock
    memory_bytes: int | None = None
    memory_bandwidth_gbs: float | None = None  # DRAM, GB/s (1e9 bytes per second)
    l2_bytes: int | None = None
    copy_engines: int | None = None            # deviceQuery's asyncEngineCount
    host_link_gbs: float | None = None         # PCIe (or NVLink-C2C) bandwidth for pinned copies, GB/s
    fp32_per_sm_per_clock: int | None = None   # FP32 lanes per SM (FMA = 2 flops)
    memory_bus_bits: int | None = None         # cudaDevAttrGlobalMemoryBusWidth
    memory_clock_khz: int | None = None        # cudaDevAttrMemoryClockRate
    fp64_ratio: int | None = None              # cudaDevAttrSingleToDoublePrecisionPerfRatio (CUDA cores)
    persisting_l2_max: int | None = None       # cudaDevAttrMaxPersistingL2CacheSize, bytes
    # a product's arithmetic rate as a multiple of fp32_flops, by the precision a library computes in
    # ("half", "tf32", "double"; "single" is 1): see _MATH_RATES
    math_rates: tuple = ()
    notes: str = ""
    features: frozenset = field(default=frozenset())

    @property
    def arch(self) -> str:
        return f"sm_{self.cc[0]}{self.cc[1]}"

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * self.warp_size

    def sized(self) -> "Profile":
        """This profile if it is a GPU; for a bare compute capability, the GPU whose SMs, clocks,
        copy engines and bandwidths stand in for the ones it lacks (SIZED_LIKE)."""
        return self if self.sms else get(SIZED_LIKE)

    def fp32_flops(self) -> float:
        """Peak FP32 arithmetic of this profile sized (``sized``), flops a second (an FMA is two): what a
        library call's or a CuPy operation's time is measured against."""
        p = self.sized()
        return (p.sms or 1) * (p.fp32_per_sm_per_clock or 64) * 2 * (p.clock_mhz or 1000) * 1e6

    def math_rate(self, precision: str) -> float:
        """The arithmetic rate of a library's product computed in ``precision`` ("half", "tf32",
        "double", "single") as a multiple of ``fp32_flops``: 1 for FP32 and for a profile without rates."""
        return dict(self.sized().math_rates).get(precision, 1.0)

    def has(self, feature: str) -> bool:
        """Whether this device has a feature of FEATURES (or a PTX instruction of PTX_FEATURES)."""
        feature = PTX_FEATURES.get(feature, feature)
        if feature not in FEATURES:
            raise KeyError(f"unknown feature {feature!r}; known: {', '.join(FEATURES)}")
        return feature in self.features

    def limits(self):
        """The launch limits the runtime checks (``cudalab.runtime.launch.Limits``) for this device."""
        from ..runtime.launch import Limits
        return Limits(max_threads_per_block=self.max_threads_per_block, max_block=self.max_block,
                      max_grid=self.max_grid, shared_per_block=self.shared_per_block,
                      shared_per_block_optin=self.shared_per_block_optin)

    def describe(self) -> list:
        """(what, value) rows for a table a student reads."""
        rows = [("device", self.gpu or self.name), ("compute capability", f"{self.cc[0]}.{self.cc[1]} ({self.arch})")]
        if self.sms:
            rows += [("SMs", self.sms), ("boost clock", f"{self.clock_mhz} MHz"),
                     ("memory", f"{self.memory_bytes / 2**30:.0f} GiB at {self.memory_bandwidth_gbs:g} GB/s"),
                     ("L2 cache", f"{self.l2_bytes / 2**20:g} MiB"), ("copy engines", self.copy_engines)]
        rows += [("threads per block", self.max_threads_per_block), ("blocks per SM", self.max_blocks_per_sm),
                 ("warps per SM", f"{self.max_warps_per_sm} ({self.max_threads_per_sm} threads)"),
                 ("registers per SM", f"{self.registers_per_sm:,}"),
                 ("registers per thread", self.max_registers_per_thread),
                 ("shared memory per SM", f"{self.shared_per_sm // KB} KiB"),
                 ("shared memory per block", f"{self.shared_per_block // KB} KiB "
                                              f"({self.shared_per_block_optin // KB} KiB opt-in)"),
                 ("features", ", ".join(sorted(self.features)) or "-")]
        return rows

    def _repr_html_(self):
        import html
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                       f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>" for k, v in self.describe())
        return f"<table class='cudalab-profile'>{rows}</table>"


def _features(cc):
    return frozenset(f for f, (need, _) in FEATURES.items() if cc >= need)


# Per compute capability: (max blocks/SM, max warps/SM, registers/SM, registers/block,
#   shared/SM KB, shared/block opt-in KB, max resident grids, carveouts KB)
_CC = {
    (3, 5): (16, 64, 64 * KB, 64 * KB, 48, 48, 32, ()),
    (3, 7): (16, 64, 128 * KB, 64 * KB, 112, 48, 32, ()),
    (5, 0): (32, 64, 64 * KB, 64 * KB, 64, 48, 32, ()),
    (5, 2): (32, 64, 64 * KB, 64 * KB, 96, 48, 32, ()),
    (5, 3): (32, 64, 64 * KB, 32 * KB, 64, 48, 16, ()),
    (6, 0): (32, 64, 64 * KB, 64 * KB, 64, 48, 128, ()),
    (6, 1): (32, 64, 64 * KB, 64 * KB, 96, 48, 32, ()),
    (6, 2): (32, 64, 64 * KB, 32 * KB, 64, 48, 16, ()),
    (7, 0): (32, 64, 64 * KB, 64 * KB, 96, 96, 128, (0, 8, 16, 32, 64, 96)),
    (7, 2): (32, 64, 64 * KB, 64 * KB, 96, 96, 16, (0, 8, 16, 32, 64, 96)),
    (7, 5): (16, 32, 64 * KB, 64 * KB, 64, 64, 128, (32, 64)),
    (8, 0): (32, 64, 64 * KB, 64 * KB, 164, 163, 128, (0, 8, 16, 32, 64, 100, 132, 164)),
    (8, 6): (16, 48, 64 * KB, 64 * KB, 100, 99, 128, (0, 8, 16, 32, 64, 100)),
    (8, 7): (16, 48, 64 * KB, 64 * KB, 164, 163, 128, (0, 8, 16, 32, 64, 100, 132, 164)),
    (8, 9): (24, 48, 64 * KB, 64 * KB, 100, 99, 128, (0, 8, 16, 32, 64, 100)),
    (9, 0): (32, 64, 64 * KB, 64 * KB, 228, 227, 128, (0, 8, 16, 32, 64, 100, 132, 164, 196, 228)),
}


def _arch_profile(cc) -> Profile:
    blocks, warps, regs_sm, regs_block, smem_sm, optin, grids, carve = _CC[cc]
    return Profile(
        name=f"sm_{cc[0]}{cc[1]}", cc=cc, max_blocks_per_sm=blocks, max_warps_per_sm=warps,
        registers_per_sm=regs_sm, registers_per_block=regs_block, shared_per_sm=smem_sm * KB,
        shared_per_block_optin=optin * KB, max_resident_grids=grids, shared_carveouts_kb=carve,
        sub_partitions=2 if cc == (6, 0) else 4,
        shared_allocation_unit=128 if cc >= (8, 0) else 256,
        shared_reserved_per_block=1 * KB if cc >= (8, 0) else 0,
        features=_features(cc))


ARCHS = {f"sm_{a}{b}": _arch_profile((a, b)) for a, b in _CC}

# Named GPUs: (compute capability, full name, SMs, boost MHz, memory GiB, DRAM GB/s, L2 MiB,
#   copy engines, host link GB/s, FP32 lanes per SM). Data-sheet numbers; the host link is the
#   practical pinned-memory rate of its PCIe generation (x16: gen3 ~12, gen4 ~25, gen5 ~50 GB/s).
#   The H100 row was checked against a real H100 SXM (docs/occupancy_h100.json: 132 SMs, 1980 MHz,
#   50 MiB L2, 3 copy engines); the other GPUs' copy-engine counts are deviceQuery's as commonly
#   reported and were not checked here.
_GPUS = {
    "T4": ((7, 5), "Tesla T4", 40, 1590, 16, 320, 4, 3, 12, 64),
    "V100": ((7, 0), "Tesla V100-SXM2-32GB", 80, 1530, 32, 900, 6, 6, 12, 64),
    "A100": ((8, 0), "A100-SXM4-40GB", 108, 1410, 40, 1555, 40, 3, 25, 64),
    "RTX 3090": ((8, 6), "GeForce RTX 3090", 82, 1695, 24, 936, 6, 2, 25, 128),
    "RTX 4090": ((8, 9), "GeForce RTX 4090", 128, 2520, 24, 1008, 72, 2, 25, 128),
    "L4": ((8, 9), "NVIDIA L4", 58, 2040, 24, 300, 48, 2, 25, 128),
    "H100": ((9, 0), "H100 SXM5 80GB", 132, 1980, 80, 3350, 50, 3, 50, 128),
    "H100 PCIe": ((9, 0), "H100 PCIe 80GB", 114, 1755, 80, 2000, 50, 3, 50, 128),
}

# Named GPUs' memory and rates, as cudaDeviceProp reports them: memory bus width (bits), memory clock
# (kHz), cudaDevAttrSingleToDoublePrecisionPerfRatio (FP32 : FP64 on the CUDA cores), max persisting
# L2 bytes. The H100 row was read from an H100 SXM; the others are data-sheet values.
_MEMORY = {
    "H100": (5120, 2_619_000, 2, 32_768_000),
    "H100 PCIe": (5120, 1_593_000, 2, 32_768_000),
    "A100": (5120, 1_215_000, 2, 31_457_280),
    "V100": (4096, 877_000, 2, 0),
    "T4": (256, 5_001_000, 32, 0),
    "RTX 3090": (384, 9_751_000, 64, 4_718_592),
    "RTX 4090": (384, 10_501_000, 64, 56_623_104),
    "L4": (192, 6_251_000, 64, 37_748_736),
}

# A library product's arithmetic rate as a multiple of the GPU's FP32 peak (its FP32 lanes), by the
# precision it computes in: "half" (FP16 or BF16 inputs on the tensor cores, FP32 sums), "tf32" (FP32
# inputs rounded to TF32 on the tensor cores, sm_80 on) and "double" (FP64: the tensor cores' DMMA on
# A100 and H100, half rate on V100, 1/32 or 1/64 on the others). Dense data-sheet figures, e.g. the
# A100: 19.5 TFLOPS FP32, 312 FP16 tensor, 156 TF32, 19.5 FP64 tensor; the H100 SXM: 67, 989, 494, 67;
# GeForce cards sum FP16 products in FP32 at half their FP16 tensor rate (RTX 3090: 35.6 and 71).
# "double" here differs from _MEMORY's FP64 ratio by design: a DGEMM runs on the tensor cores of an
# A100 or H100, an element-wise FP64 operation on their CUDA cores.
_MATH_RATES = {
    "T4": {"half": 8, "tf32": 1, "double": 1 / 32},
    "V100": {"half": 8, "tf32": 1, "double": 1 / 2},
    "A100": {"half": 16, "tf32": 8, "double": 1},
    "RTX 3090": {"half": 2, "tf32": 1, "double": 1 / 64},
    "RTX 4090": {"half": 2, "tf32": 1, "double": 1 / 64},
    "L4": {"half": 4, "tf32": 2, "double": 1 / 64},
    "H100": {"half": 14.8, "tf32": 7.4, "double": 1},
    "H100 PCIe": {"half": 14.8, "tf32": 7.4, "double": 1},
}


def _gpu_profile(name, spec) -> Profile:
    cc, full, sms, mhz, gib, bw, l2, engines, link, lanes = spec
    bus, mem_clock, fp64_ratio, persisting = _MEMORY[name]
    return replace(ARCHS[f"sm_{cc[0]}{cc[1]}"], name=name, gpu=full, sms=sms, clock_mhz=mhz,
                   memory_bytes=gib * 2**30, memory_bandwidth_gbs=float(bw), l2_bytes=l2 * 2**20,
                   copy_engines=engines, host_link_gbs=float(link), fp32_per_sm_per_clock=lanes,
                   memory_bus_bits=bus, memory_clock_khz=mem_clock, fp64_ratio=fp64_ratio,
                   persisting_l2_max=persisting, math_rates=tuple(_MATH_RATES[name].items()))


GPUS = {name: _gpu_profile(name, spec) for name, spec in _GPUS.items()}


def _key(name: str) -> str:
    return name.lower().replace(" ", "").replace("-", "").replace("_", "")


_ALIASES = {_key(n): p for n, p in {**ARCHS, **GPUS}.items()}
_ALIASES.update({_key(f"compute_{a[3:]}"): p for a, p in ARCHS.items()})
_ALIASES.update({_key(f"{p.cc[0]}.{p.cc[1]}"): p for p in ARCHS.values()})


def get(name) -> Profile:
    """A profile by GPU name ("A100", "RTX 4090"), architecture ("sm_80", "compute_80", "8.0")
    or a Profile (returned as is)."""
    if isinstance(name, Profile):
        return name
    p = _ALIASES.get(_key(str(name)))
    if p is None:
        raise KeyError(f"there is no device profile called {name!r}. Known GPUs: {', '.join(GPUS)}; "
                       f"architectures: {', '.join(ARCHS)}.")
    return p


def list() -> "list[str]":  # noqa: A001 - the brief's API name
    """Every named GPU, then every architecture."""
    return [*GPUS, *ARCHS]
