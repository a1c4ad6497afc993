"""The CUDA occupancy calculator: how many blocks of a kernel fit on one SM at once, and why not more.

It follows NVIDIA's own calculator (``cuda_occupancy.h``, what
``cudaOccupancyMaxActiveBlocksPerMultiprocessor`` computes) rule for rule. A block is limited by
four resources of the SM; the smallest of the four counts wins:

* **warps**: an SM holds ``max_warps_per_sm`` warps; a block takes ceil(threads / 32) of them.
* **blocks**: an SM holds at most ``max_blocks_per_sm`` blocks, however small.
* **registers**: a warp is given ``registers_per_thread * 32`` registers rounded up to 256 (the
  allocation unit); the register file is split over 4 sub-partitions (one per warp scheduler) and
  a warp's registers live in one of them, so the SM holds
  ``4 * floor((registers_per_sm / 4) / registers_per_warp)`` warps. A block whose warps
  (rounded up to a multiple of 4) need more than 64 K registers cannot launch at all.
* **shared memory**: a block is given its static + dynamic shared memory plus the 1 KiB the driver
  reserves per block (sm_80 and later), rounded up to the allocation unit (128 bytes from sm_80
  on, 256 before); the SM's shared memory (its largest carveout by default) divided by that.
  More than 48 KiB per block needs the opt-in (``cudaFuncAttributeMaxDynamicSharedMemorySize``).

Occupancy is active warps / ``max_warps_per_sm``. A kernel's registers come from the real
compiler (``resources.kernel_resources``); PTX alone does not say.

The same idea on Intel GPUs (oneAPI GPU optimization guide, "Thread mapping and GPU occupancy"):

==================  =====================================================================
Intel Xe / SYCL     CUDA
==================  =====================================================================
work-item           thread
sub-group           warp (32 lanes in CUDA; 8, 16 or 32 on Xe)
hardware thread     warp slot: one resident sub-group (Xe) / warp (CUDA) of the SM
work-group          block (thread block)
nd_range            grid + block shape (global range = grid * block)
Xe-core (sub-slice) SM (streaming multiprocessor)
SLM                 shared memory (``__shared__``)
thread contexts     max warps per SM (112 per Xe-LP Xe-core; 64 on an H100 SM)
``barrier()``       ``__syncthreads()``
==================  =====================================================================
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

from . import current
from .profiles import Profile, get
from .resources import Resources

LIMITS = ("warps", "blocks", "registers", "shared memory")
BIG = 2**31 - 1


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


@dataclass
class Occupancy:
    """One kernel at one block size on one device: how many blocks fit per SM and what limits them."""

    device: str
    block_size: int
    registers_per_thread: int
    static_shared: int
    dynamic_shared: int
    active_blocks: int                 # per SM
    active_warps: int                  # per SM
    max_warps: int                     # per SM
    occupancy: float                   # active_warps / max_warps
    limiter: str                       # the first of `limiters` ("warps", "blocks", "registers", "shared memory")
    limiters: tuple                    # every resource that allows exactly active_blocks
    block_limits: dict                 # resource -> how many blocks it alone would allow
    registers_per_block: int           # allocated (per-warp rounding included)
    shared_per_block: int              # allocated (reserved 1 KiB and rounding included)
    shared_per_sm: int                 # the shared-memory configuration used
    reason: str = ""                   # why the block cannot run at all (active_blocks 0, or not launchable)
    curve: list = field(default_factory=list, repr=False)   # rows over block sizes 32, 64, ...

    @property
    def launchable(self) -> bool:
        """False when a launch would fail: no block fits, or the block exceeds __launch_bounds__
        (active_blocks then still says what the driver's occupancy API says)."""
        return self.active_blocks > 0 and not self.reason

    def summary(self) -> str:
        """One paragraph for a student."""
        if self.active_blocks == 0 or not self.launchable:
            return f"A block of {self.block_size} threads cannot run on {self.device}: {self.reason}"
        lim = " and ".join(self.limiters)
        per = ", ".join(f"{k} {'-' if v >= BIG else v}" for k, v in self.block_limits.items())
        return (f"{self.active_blocks} blocks of {self.block_size} threads fit on one SM of {self.device}: "
                f"{self.active_warps} of {self.max_warps} warps, occupancy {self.occupancy:.0%}. "
                f"Limited by {lim} (blocks allowed by each resource: {per}).")

    def _repr_html_(self):
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{'-' if v >= BIG else v}</td></tr>"
                       for k, v in self.block_limits.items())
        return (f"<p>{html.escape(self.summary())}</p><table class='cudalab-occupancy'>"
                f"<tr><th>resource</th><th>blocks per SM</th></tr>{rows}</table>")


def _kernel_resources(kernel, profile: Profile) -> Resources:
    """A Kernel, Resources, a dict, (registers, static_smem) or a register count -> Resources."""
    if isinstance(kernel, Resources):
        return kernel
    if isinstance(kernel, dict):
        return Resources(int(kernel.get("registers", kernel.get("registers_per_thread", 0))),
                         int(kernel.get("static_shared", kernel.get("static_smem", 0))),
                         int(kernel.get("local", 0)), kernel.get("max_threads"))
    if isinstance(kernel, (tuple, list)):
        regs, smem = (list(kernel) + [0])[:2]
        return Resources(int(regs), int(smem), 0)
    if isinstance(kernel, int):
        return Resources(kernel, 0, 0)
    if hasattr(kernel, "module") and hasattr(kernel, "mangled"):
        from .resources import kernel_resources
        return kernel_resources(kernel, profile.arch)
    raise TypeError(f"occupancy() takes a cudalab kernel, a register count, (registers, static_shared) or a dict; "
                    f"got {type(kernel).__name__}")


def _block_threads(block) -> int:
    if isinstance(block, (tuple, list)):
        n = 1
        for d in block:
            n *= int(d)
        return n
    return int(block)


def _limits(p: Profile, res: Resources, threads: int, dynamic: int, max_dynamic_shared):
    """(blocks allowed per resource, registers per block, shared per block, shared per SM, reason if 0)."""
    warps = -(-threads // p.warp_size)
    warps = _round_up(warps, p.warp_allocation_unit)
    reason = ""
    if threads > p.max_threads_per_block:
        by_warps = 0
        reason = f"a block may have at most {p.max_threads_per_block} threads."
    else:
        by_warps = p.max_warps_per_sm // warps

    # registers: per warp, rounded to the allocation unit; per sub-partition
    reg_warp = _round_up(res.registers * p.warp_size, p.register_allocation_unit)
    reg_block = reg_warp * warps
    assumed = reg_warp * _round_up(warps, p.sub_partitions)   # the hardware's per-block check
    if res.registers > p.max_registers_per_thread or max(reg_block, assumed) > p.registers_per_block:
        by_regs = 0
        reason = reason or (f"its {warps} warps need {max(reg_block, assumed):,} registers "
                            f"({res.registers} per thread), more than the {p.registers_per_block:,} a block may have. "
                            "Use fewer threads per block, or __launch_bounds__ to make the compiler use fewer registers.")
    elif reg_warp == 0:
        by_regs = BIG
    else:
        per_sub = (p.registers_per_sm // p.sub_partitions) // reg_warp
        by_regs = per_sub * p.sub_partitions // warps

    # shared memory
    used = res.static_shared + dynamic + p.shared_reserved_per_block
    smem_block = _round_up(used, p.shared_allocation_unit)
    optin = max_dynamic_shared is not None and res.static_shared + max_dynamic_shared > p.shared_per_block
    per_block_limit = (p.shared_per_block_optin if optin else p.shared_per_block) + p.shared_reserved_per_block
    smem_sm = p.shared_per_sm
    if max_dynamic_shared is not None and dynamic > max_dynamic_shared:
        by_smem = 0
        reason = reason or (f"it asks for {dynamic:,} bytes of dynamic shared memory, more than the "
                            f"{max_dynamic_shared:,} allowed by cudaFuncAttributeMaxDynamicSharedMemorySize.")
    elif smem_block > per_block_limit:
        by_smem = 0
        hint = (" Raise the limit with cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                "bytes)" if not optin and p.shared_per_block_optin > p.shared_per_block else "")
        reason = reason or (f"it needs {used - p.shared_reserved_per_block:,} bytes of shared memory, more than the "
                            f"{per_block_limit - p.shared_reserved_per_block:,} a block may use.{hint}")
    else:
        by_smem = smem_sm // smem_block if smem_block else BIG
    limits = {"warps": by_warps, "blocks": p.max_blocks_per_sm, "registers": by_regs, "shared memory": by_smem}
    return limits, reg_block, smem_block, smem_sm, reason


def _one(p, res, threads, dynamic, max_dynamic_shared, curve=()):
    limits, reg_block, smem_block, smem_sm, reason = _limits(p, res, threads, dynamic, max_dynamic_shared)
    if res.max_threads and threads > res.max_threads:
        # The driver's occupancy ignores __launch_bounds__ (checked on an H100), but the launch fails.
        reason = reason or (f"the kernel's __launch_bounds__ allows at most {res.max_threads} threads per block, "
                            f"so a launch with {threads} fails (cudaErrorInvalidValue), although "
                            f"{min(limits.values())} such blocks would fit on an SM.")
    blocks = min(limits.values())
    warps = blocks * -(-threads // p.warp_size)
    limiters = tuple(k for k in LIMITS if limits[k] == blocks)
    return Occupancy(device=p.name, block_size=threads, registers_per_thread=res.registers,
                     static_shared=res.static_shared, dynamic_shared=dynamic, active_blocks=blocks,
                     active_warps=warps, max_warps=p.max_warps_per_sm, occupancy=warps / p.max_warps_per_sm,
                     limiter=limiters[0], limiters=limiters, block_limits=limits, registers_per_block=reg_block,
                     shared_per_block=smem_block, shared_per_sm=smem_sm, reason=reason, curve=list(curve))


def occupancy(kernel, block_size, dynamic_smem: int = 0, device=None, max_dynamic_smem=None,
              curve: bool = True) -> Occupancy:
    """Blocks and warps of ``kernel`` that are active on one SM at ``block_size`` threads per block.

    kernel: a cudalab Kernel (its registers come from compiling it for the device), a register
    count, ``(registers, static_shared_bytes)``, a dict or a ``resources.Resources``.
    dynamic_smem: bytes of dynamic shared memory per block (the launch's third ``<<<>>>`` value).
    device: a profile name ("H100", "sm_80") or Profile; the selected device by default.
    max_dynamic_smem: the kernel's cudaFuncAttributeMaxDynamicSharedMemorySize, if it was raised.

    The result's ``curve`` has the same numbers for every block size from 32 to the maximum
    (``curve=False`` leaves it empty: the timing model, which runs after every launch, needs only
    this block size)."""
    p = get(device) if device is not None else current()
    res = _kernel_resources(kernel, p)
    top = min(p.max_threads_per_block, res.max_threads or p.max_threads_per_block)
    points = []
    for t in range(p.warp_size, top + 1, p.warp_size) if curve else ():
        o = _one(p, res, t, int(dynamic_smem), max_dynamic_smem)
        points.append({"block_size": t, "active_blocks": o.active_blocks, "active_warps": o.active_warps,
                       "occupancy": o.occupancy, "limiter": o.limiter})
    return _one(p, res, _block_threads(block_size), int(dynamic_smem), max_dynamic_smem, points)


@dataclass(frozen=True)
class PotentialBlockSize:
    """What cudaOccupancyMaxPotentialBlockSize returns: the block size with the highest occupancy
    and the smallest grid that fills every SM with such blocks."""

    block_size: int
    min_grid_size: int | None          # None for a profile without an SM count
    active_blocks: int
    occupancy: float


def max_potential_block_size(kernel, dynamic_smem=0, device=None, block_size_limit: int = 0,
                             max_dynamic_smem=None) -> PotentialBlockSize:
    """The block size that maximizes active threads per SM, like cudaOccupancyMaxPotentialBlockSize.

    dynamic_smem: bytes per block, or a function block_size -> bytes (the ...VariableSMem form).
    Block sizes are tried from the largest down in steps of 32; the first to reach the most active
    threads wins (so ties go to the larger block)."""
    p = get(device) if device is not None else current()
    res = _kernel_resources(kernel, p)
    limit = min(p.max_threads_per_block, res.max_threads or p.max_threads_per_block)
    if block_size_limit:
        limit = min(limit, block_size_limit)
    best = (0, 0, 0)            # (threads, block size, blocks)
    for aligned in range(_round_up(limit, p.warp_size), 0, -p.warp_size):
        t = min(limit, aligned)
        dyn = dynamic_smem(t) if callable(dynamic_smem) else dynamic_smem
        blocks = min(_limits(p, res, t, int(dyn), max_dynamic_smem)[0].values())
        if blocks * t > best[0]:
            best = (blocks * t, t, blocks)
        if best[0] == p.max_threads_per_sm:
            break
    threads, size, blocks = best
    return PotentialBlockSize(block_size=size, min_grid_size=blocks * p.sms if p.sms else None,
                              active_blocks=blocks, occupancy=threads / p.max_threads_per_sm)
