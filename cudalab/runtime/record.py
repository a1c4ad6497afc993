"""LaunchRecord: what one launch did, as plain data (printable, HTML in a notebook, testable)."""
from __future__ import annotations

import html
from dataclasses import dataclass, field

_LAST = [None]


@dataclass
class LaunchRecord:
    kernel: str
    grid: tuple
    block: tuple
    shared_bytes: int
    backend: str
    wall_time: float = 0.0                  # seconds of host time for the whole launch
    # the emulator's CPU seconds for it (the watchdog's clock), and a hash of its parameter bytes: a
    # program stopped midway is told its launches' pace and runs of equal launches (programs/stopping.py)
    cpu_time: float = field(default=0.0, repr=False)
    arguments: int = field(default=0, repr=False)
    gpu_time_ms: float | None = None        # measured on a real GPU with events
    instructions: int = 0                   # batch-level PTX instructions the emulator executed
    thread_instructions: int = 0            # instructions summed over threads
    metrics: dict = field(default_factory=dict)     # Nsight Compute metric name -> number
    reports: dict = field(default_factory=dict)     # report name -> plain data
    findings: list = field(default_factory=list)    # Finding records (racecheck, initcheck, ...)
    printed: list = field(default_factory=list)     # device printf lines, in order
    device_launches: list = field(default_factory=list)   # grids it launched from the device, as run (dicts)
    resources: object = field(default=None, repr=False)   # callable -> device.resources.Resources (lazy)
    global_bytes_per_instruction: float = field(default=0.0, repr=False)   # the kernel's, from its PTX (ptx/mix.py)
    chain_cycles: tuple = field(default=(), repr=False)    # a lone warp's cycles per instruction (ptx/chains.py)
    longest_path: float = field(default=0.0, repr=False)   # instructions of its longest thread (a batch's, on average)
    mapped_bytes_per_instruction: tuple = field(default=(0.0, 0.0), repr=False)  # of those, (loads, stores) through
    #                                                         pointers to mapped host memory (runtime core)
    clock_wait_us: float = field(default=0.0, repr=False)  # the longest a batch of it waited on clock64()/globaltimer
    static_shared: int = field(default=0, repr=False)      # bytes of __shared__ arrays (blocks per SM, the timeline)

    def counted(self, stats, observers=()):
        """Take what the emulator counted for this launch (``engine.launch``'s stats, and the metrics
        of observers that count them, like analysis.MetricsObserver): the same for a Python launch
        and a program's kernel."""
        self.instructions, self.thread_instructions = stats.instructions, stats.thread_instructions
        self.cpu_time = getattr(stats, "cpu_seconds", 0.0)
        self.global_bytes_per_instruction = stats.global_bytes_per_instruction
        self.chain_cycles = getattr(stats, "chain_cycles", ())
        # the batch-level count is each batch's longest path (lock step, or a region's longest thread)
        self.longest_path = stats.instructions / stats.batches if getattr(stats, "batches", 0) else 0.0
        self.printed = stats.printed
        self.clock_wait_us = max((w[0] for w in getattr(stats, "clock_waits", ())), default=0.0)
        self.findings.extend(stats.findings)
        self.device_launches = stats.device_launches     # grids this launch started from the device
        if stats.pdl:                                    # griddepcontrol: programmatic dependent launch (sm90.py)
            from ..emulator.sm90 import pdl_trigger_fraction, pdl_wait_fraction
            self.reports["pdl"] = dict(stats.pdl, trigger_fraction=pdl_trigger_fraction(stats),
                                       wait_fraction=pdl_wait_fraction(stats))
        for o in observers:
            counts = getattr(o, "metrics", None)
            counts = counts() if callable(counts) else counts
            if isinstance(counts, dict):
                self.metrics.update(counts)

    @property
    def registers(self):
        """Registers per thread the real compiler (ptxas, for the current device profile) gives the
        kernel. Computed on first use: it compiles the source once more, to a cubin."""
        r = self.resources() if callable(self.resources) else self.resources
        self.resources = r
        return getattr(r, "registers", None)

    @property
    def threads(self):
        g, b = self.grid, self.block
        return g[0] * g[1] * g[2] * b[0] * b[1] * b[2]

    def summary_rows(self):
        rows = [("kernel", self.kernel), ("grid", self.grid), ("block", self.block),
                ("threads", f"{self.threads:,}"), ("dynamic shared memory", f"{self.shared_bytes} bytes"),
                ("device", self.backend), ("host time", f"{self.wall_time * 1e3:.2f} ms")]
        if self.gpu_time_ms is not None:
            rows.append(("GPU time", f"{self.gpu_time_ms:.4f} ms"))
        if self.thread_instructions:
            rows.append(("thread instructions", f"{self.thread_instructions:,}"))

        for k, v in self.metrics.items():
            rows.append((k, f"{v:,}" if isinstance(v, int) else f"{v:.3g}" if isinstance(v, float) else v))
        if self.findings:
            rows.append(("findings", len(self.findings)))
        return rows

    def __repr__(self):
        g = "x".join(map(str, self.grid))
        b = "x".join(map(str, self.block))
        extra = f", {len(self.findings)} findings" if self.findings else ""
        return (f"<LaunchRecord {self.kernel} grid={g} block={b} on {self.backend}: "
                f"{self.wall_time * 1e3:.1f} ms{extra}>")

    def _repr_html_(self):
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(str(k))}</th>"
                       f"<td style='text-align:left'>{html.escape(str(v))}</td></tr>" for k, v in self.summary_rows())
        return f"<table class='cudalab-launch'>{rows}</table>"


def set_last(rec):
    _LAST[0] = rec


def last_launch():
    """The LaunchRecord of the most recent launch (None before the first)."""
    return _LAST[0]
