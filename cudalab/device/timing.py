"""A first-order estimate of how long a launch would take on a real GPU, from what the emulator counted.

The model is a roofline over four pipes and the warps' dependent chains, taken on the busiest SM,
plus the launch itself::

    time = launch_overhead + max(issue, shared, global, dispatch, latency)

* issue:    warp instructions / (4 schedulers x 1 instruction per clock). A divergent branch costs
            both paths because the emulator counts every warp instruction executed. A scheduler
            issues only for its own warps: an SM that holds fewer than 4 warps (a one-warp block)
            keeps only that many schedulers busy.
* shared:   shared-memory wavefronts / (1 wavefront per clock): a 32-way bank conflict costs 32.
* global:   global (and local) memory sectors x 32 bytes / (DRAM bandwidth x 0.75), slowed further
            when too few warps are resident to hide memory latency (below 50% occupancy).
* dispatch: blocks on the busiest SM x 160 clocks: starting a block is not free, which is why
            32-thread blocks are slow even for a memory-bound kernel.
* latency:  a warp waits for each result it needs. ``rec.chain_cycles`` (ptx/chains.py, from the PTX)
            is a lone warp's cycles per instruction of the kernel's main loop, its global loads from L2
            or DRAM (mixed by the share of the launch's global sectors that reach DRAM, from the
            metrics; all of them without); the warps an SM holds wait side by side, so the SM takes
            that times its instructions per warp it holds, and the kernel at least its longest thread's
            (``rec.longest_path``: a divergent kernel's few busy lanes). A dependent multiply-xor chain
            at 1 or 2 warps per scheduler is latency-bound (11 cycles a step, 3.75 instructions), at 8
            issue-bound; a DRAM pointer chase is latency-bound until the bandwidth runs out
            (tools/latency_gpu_probe_h100.txt, tests/test_timing_latency.py). Not for a kernel that
            waited on its clock (its spin loop's count is the host's pace).
* host link: bytes read from and written to mapped host memory (zero-copy: cudaHostAlloc with
            cudaHostAllocMapped, cudaMallocHost) cross PCIe or NVLink-C2C, all SMs together, at the
            profile's host link rate; they are taken out of the global pipe. The Handbook's
            stream5MappedXfer (a saxpy reading 1 GiB of mapped memory) took 21.3 ms on an H100: 50 GB/s,
            the H100 profile's link (a grid-stride kernel on an H200 read 40 GB/s and wrote 47 GB/s of it).

Work is spread over SMs as the hardware does: ``ceil(blocks / SMs)`` blocks on the busiest SM, in
waves of ``active_blocks x SMs`` (occupancy.py).

``device_share`` says how much of the device the kernel keeps busy while it runs, for kernels of other
streams beside it (the timeline's concurrent kernels): with its chains known, its busiest pipe's share
of its time (a latency-bound kernel leaves the rest of the issue slots, DRAM bandwidth, to others), on
the average SM (its blocks over the busiest SM's times the SMs: 115 blocks on 108 SMs keep them half
busy); without them (a hand-made record), the share of SMs its blocks reach times, for an issue-bound
kernel, how well its warps per scheduler hide their instructions' latency (``LATENCY_HIDING_WARPS``) or,
for a memory-bound one, the share of DRAM bandwidth the model gives it; times the share of its time
that pipe is busy (not the launch overhead).

What it ignores, honestly: caches (every sector is charged as DRAM traffic, so kernels with heavy
reuse, like a naive matrix multiply, come out too slow in absolute terms, though still ranked
right against their tiled versions; the latency side knows L2 from DRAM, not L1); the cost of each
instruction's issue (PTX instructions, not SASS: an FMA chain's loop issues 1.75 PTX instructions a
step where the H100 spent 1.32 cycles, an integer one 3.75 where it spent 3.85; latencies are per PTX
instruction, fitted); where issue and latency meet (4 warps per scheduler of an 11-cycle chain) the
model takes the larger, the H100 took 12% more; tensor cores;
clocks below boost. The constants 0.75 and 160 were fitted to a vector add on an H100
(docs/timing_h100.csv). Use it to rank versions of a kernel and to see *which* pipe limits it,
not to predict microseconds.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import current
from .occupancy import occupancy
from .profiles import get

ISSUE_PER_CLOCK = 4            # warp schedulers per SM, one warp instruction per clock each
WAVEFRONTS_PER_CLOCK = 1       # shared memory: one wavefront per clock per SM
DRAM_EFFICIENCY = 0.75         # streaming kernels reach about 75% of the data-sheet bandwidth
BLOCK_DISPATCH_CLOCKS = 160    # one block started per SM every ~160 clocks (fitted on an H100)
LATENCY_HIDING_OCCUPANCY = 0.5  # below this, memory throughput falls in proportion
LAUNCH_OVERHEAD_US = 2.0       # a kernel launch back to back with others
L2_BANDWIDTH_FACTOR = 3.0      # L2 delivers about 3x what DRAM does (H100, A100 data sheets)
LATENCY_HIDING_WARPS = 2.8     # warps per scheduler that keep it issuing a dependent chain every clock: an H100
#                                ran 4 streams of 1-block-per-SM multiply-xor kernels (2 warps per scheduler) 1.39x
#                                faster than one stream (tools/overlap_gpu_probe_h100.txt), so each used 1/1.39


@dataclass
class Estimate:
    """The estimate, its parts (microseconds) and what limits it."""

    device: str
    time_us: float
    limiter: str                     # 'issue' | 'shared' | 'global' | 'dispatch' | 'host link' | 'launch'
    parts_us: dict                   # pipe -> microseconds on the busiest SM
    waves: int
    blocks_per_sm: int               # on the busiest SM
    occupancy: float
    assumptions: tuple = ()
    resident_blocks: int = 1         # blocks of it one SM holds at once (the occupancy calculator's)
    device_share: float = 1.0        # the share of the device's limiting pipe it keeps busy (below)

    def summary(self) -> str:
        parts = ", ".join(f"{k} {v:.1f} us" for k, v in self.parts_us.items())
        why = ""
        if self.limiter == "latency":
            why = ("; each warp waits for the results its next instructions need, and too few warps share "
                   "an SM to fill the waits: more warps per SM, or more independent work per thread, would hide them")
        return (f"about {self.time_us:.1f} us on {self.device}, limited by {self.limiter} ({parts}); "
                f"{self.waves} wave{'s' * (self.waves != 1)}, occupancy {self.occupancy:.0%}{why}")


def _sum(metrics, prefix):
    return sum(v for k, v in metrics.items() if k.startswith(prefix))


def estimate(rec, device=None, registers: int | None = None, kernel=None, metrics: dict | None = None) -> Estimate:
    """Estimate the duration of launch record ``rec`` (with ``rec.metrics`` from a MetricsObserver)
    on ``device`` (a profile with an SM count, like "A100"; the selected device by default).

    Occupancy needs the kernel's registers per thread: give the ``kernel`` (they are read from the
    compiler) or ``registers``; 32 is assumed otherwise. ``metrics`` overrides ``rec.metrics``."""
    p = get(device) if device is not None else current()
    if not p.sms:
        raise ValueError(f"{p.name} is a compute capability, not a GPU: the timing model needs an SM count "
                         "and bandwidth. Pick a GPU, like 'A100' or 'H100'.")
    m = rec.metrics if metrics is None else metrics
    if "smsp__inst_executed.sum" not in m:
        raise ValueError("the launch record has no metrics: launch with observers=[MetricsObserver()] "
                         "(cudalab.analysis) so the emulator counts instructions and memory traffic.")
    assumptions = []
    threads = rec.block[0] * rec.block[1] * rec.block[2]
    blocks = rec.grid[0] * rec.grid[1] * rec.grid[2]
    if kernel is not None:
        occ = occupancy(kernel, threads, rec.shared_bytes, device=p, curve=False)
    else:
        if registers is None:
            registers = 32
            assumptions.append("32 registers per thread assumed")
        occ = occupancy((registers, 0), threads, rec.shared_bytes, device=p, curve=False)
    resident = max(occ.active_blocks, 1)
    waves = -(-blocks // (resident * p.sms))
    busiest = -(-blocks // p.sms)              # blocks on the busiest SM
    share = busiest / blocks                   # its share of the counted work
    warps_per_sm = max(1, min(busiest, resident) * -(-threads // 32))
    clock = p.clock_mhz * 1e6
    inst = m["smsp__inst_executed.sum"]
    wavefronts = _sum(m, "l1tex__data_pipe_lsu_wavefronts_mem_shared")
    sectors = _sum(m, "l1tex__t_sectors_pipe_lsu_mem_global") + _sum(m, "l1tex__t_sectors_pipe_lsu_mem_local")
    hiding = min(1.0, occ.occupancy / LATENCY_HIDING_OCCUPANCY) if occ.occupancy else 1.0
    bandwidth = p.memory_bandwidth_gbs * 1e9 * DRAM_EFFICIENCY * hiding * min(1.0, blocks / p.sms)
    segments = m.get("cudalab__dram_segments_global.sum")
    if segments:
        # L2 serves every sector; DRAM sees 64-byte segments, at most once each when the data touched
        # fits in L2 (naive matmul rereads rows and columns from L2, not from DRAM)
        loads = segments * 64
        footprint = m.get("cudalab__footprint_bytes") or 0       # bytes the loads touch
        if footprint and p.l2_bytes and footprint <= p.l2_bytes:
            loads = min(loads, footprint)
        dram = loads + m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", 0) * 32
        global_us = max(sectors * 32 / (bandwidth * L2_BANDWIDTH_FACTOR), dram / bandwidth) * 1e6
    else:
        global_us = sectors * 32 / bandwidth * 1e6
    global_us *= m.get("cudalab__device_share", 1.0)       # mapped host memory's bytes go over the host link
    mapped = m.get("cudalab__mapped_load_bytes", 0.0) + m.get("cudalab__mapped_store_bytes", 0.0)
    dram_share = 1.0                   # of the global loads' sectors, the share that comes from DRAM
    if segments and sectors:
        dram_share = min(1.0, dram / (sectors * 32))
    parts = {
        # a warp scheduler issues for its own warps only: a block of one warp keeps one of the four busy
        "issue": inst * share / min(ISSUE_PER_CLOCK, warps_per_sm) / clock * 1e6,
        "shared": wavefronts * share / WAVEFRONTS_PER_CLOCK / clock * 1e6,
        "global": global_us,
        "dispatch": busiest * BLOCK_DISPATCH_CLOCKS / clock * 1e6,
    }
    if mapped and p.host_link_gbs:
        parts["host link"] = mapped / (p.host_link_gbs * 1e9) * 1e6
    chain = getattr(rec, "chain_cycles", ())
    if chain and not getattr(rec, "clock_wait_us", 0.0):    # (a clock spin's count is the host's pace)
        # each warp waits out its own dependent chain: a lone warp's cycles per instruction (ptx/chains.py,
        # its global loads from L2 or DRAM in the launch's proportion) times its instructions; the warps of
        # an SM wait side by side, so the SM takes that per warp it holds at once, wave after wave; and
        # the kernel lasts at least as long as its longest thread's chain (a divergent kernel whose few
        # busy lanes hash long words: thread instructions over 32 say little of them)
        cpi = chain[0] + dram_share * (chain[1] - chain[0])
        per_sm = max(inst * share / warps_per_sm, getattr(rec, "longest_path", 0.0))
        parts["latency"] = per_sm * cpi / clock * 1e6
    limiter = max(parts, key=parts.get)
    total = LAUNCH_OVERHEAD_US + parts[limiter]
    # what another stream's kernel may still use while this one runs (the timeline's concurrent kernels):
    # the SMs it leaves empty, the issue slots of schedulers with too few warps to hide their instructions'
    # latency, the DRAM bandwidth too few warps leave unused, and the launch overhead's idle time
    used = blocks / (busiest * p.sms)        # the average SM's share of the busiest one's work
    dram_used = hiding * min(1.0, blocks / p.sms)
    if "latency" in parts:
        # the busiest pipe's share of the time each warp spends waiting (all of it for the limiting pipe)
        share = max(used * parts["issue"], used * parts["shared"], dram_used * parts["global"],
                    used * parts["dispatch"], parts.get("host link", 0.0)) / total
    else:      # a launch without its PTX's chains: warps per scheduler hide latency as the probe's chain did
        share = {"issue": used * min(1.0, warps_per_sm / ISSUE_PER_CLOCK / LATENCY_HIDING_WARPS),
                 "global": dram_used}.get(limiter, used)
        share *= parts[limiter] / total
    if parts[limiter] < LAUNCH_OVERHEAD_US:
        limiter = "launch"
    return Estimate(device=p.name, time_us=total, limiter=limiter, parts_us=parts, waves=waves,
                    blocks_per_sm=busiest, occupancy=occ.occupancy, assumptions=tuple(assumptions),
                    resident_blocks=resident, device_share=share)
