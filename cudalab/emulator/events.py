"""What the emulator tells observers: plain records of what each instruction did to which lanes.

The emulator runs a *batch* of blocks at once. Lanes of a batch are laid out block-major, each block
padded to a whole number of warps, so ``lane // 32`` is a warp of the batch and ``lane % 32`` its lane
id; ``BatchInfo`` maps them back to blockIdx/threadIdx. Observers get one event per executed
instruction (not per warp) with numpy arrays over the active lanes: grouping by warp is a numpy
``unique``/``bincount`` away, and no Python loop over warps runs inside the emulator.

With no observer attached the emulator builds none of these records.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class BatchInfo:
    """Where a batch's lanes sit in the launch."""

    first_block: int          # linear block index of the batch's first block
    nblocks: int              # blocks in this batch
    grid: tuple               # (x, y, z)
    block: tuple              # (x, y, z)
    threads_per_block: int    # bx*by*bz
    lanes_per_block: int      # threads_per_block rounded up to a multiple of 32

    def block_of(self, lanes):
        """Linear block index (in the grid) of each lane."""
        return self.first_block + np.asarray(lanes) // self.lanes_per_block

    def thread_of(self, lanes):
        """Linear thread index (in its block) of each lane."""
        return np.asarray(lanes) % self.lanes_per_block

    def warp_of(self, lanes):
        """Global warp id (block * warps_per_block + warp in block) of each lane."""
        lanes = np.asarray(lanes)
        wpb = self.lanes_per_block // 32
        return self.first_block * wpb + lanes // 32


@dataclass
class InstructionEvent:
    """One instruction executed by the lanes in ``lanes`` (sorted, batch-relative)."""

    inst: object              # ptx.ir.Instruction (has .opcode, .mods, .line, .index)
    lanes: np.ndarray         # int64 active lanes
    batch: BatchInfo


@dataclass
class MemoryEvent(InstructionEvent):
    """A load, store or atomic: one address per active lane.

    space: 'global' | 'shared' | 'local' | 'const' | 'param'
    kind: 'ld' | 'st' | 'atom' | 'red'
    size: bytes per lane (vector accesses: the whole vector, e.g. 16 for ld.v4.f32)
    addresses: uint64, for shared the byte offset inside the block's shared memory,
    for global the device address.
    """

    space: str = "global"
    kind: str = "ld"
    size: int = 4
    addresses: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    op: str = ""              # atomics: 'add', 'cas', ...


@dataclass
class BranchEvent(InstructionEvent):
    """A conditional branch: ``taken`` is a bool per active lane."""

    taken: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))


@dataclass
class BarrierEvent(InstructionEvent):
    """bar.sync / bar.red / bar.warp.sync reached by ``lanes``."""


@dataclass
class AsyncEvent(InstructionEvent):
    """An asynchronous copy's bytes in shared memory (emulator/asyncops.py), for racecheck.

    kind: 'issue' (a copy to ``addresses`` is in flight: its bytes are not there yet), 'land' (they
    are written now: by the issuing thread's wait when ``barrier`` is -1, else by the completion of
    phase ``phase`` of the mbarrier in slot ``barrier``), 'read' (a bulk copy read its shared
    source), 'observe' (the lanes saw ``phase`` phases of the barrier ``barrier`` complete).
    ``lanes`` are the issuing lanes and may repeat (a bulk copy is one row per 16 bytes).
    """

    kind: str = "issue"
    size: int = 0
    addresses: np.ndarray = field(default_factory=lambda: np.zeros(0, np.uint64))
    barrier: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    phase: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))


class Observer:
    """Subclass and override what you need; every hook defaults to doing nothing."""

    def on_launch_start(self, launch) -> None: ...
    def on_batch_start(self, batch: BatchInfo) -> None: ...
    def on_instruction(self, ev: InstructionEvent) -> None: ...
    def on_memory(self, ev: MemoryEvent) -> None: ...
    def on_branch(self, ev: BranchEvent) -> None: ...
    def on_barrier(self, ev: BarrierEvent) -> None: ...
    def on_async(self, ev: AsyncEvent) -> None: ...
    def on_launch_end(self, launch) -> None: ...
