"""Warp divergence: which branches split warps, and how many lanes warps ran with.

A warp executes one instruction for all its active lanes; when a conditional branch sends some
lanes one way and some the other, the warp runs both paths in turn with part of its lanes idle,
until they reconverge. Nsight Compute sums it up as
``smsp__thread_inst_executed_per_inst_executed.ratio`` (32 = no lane ever idle).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .warps import WARP_SIZE


@dataclass
class BranchOutcome:
    """One conditional branch instruction, per warp that executed it."""

    warps: np.ndarray    # batch-relative warp ids
    active: np.ndarray   # active lanes per warp
    taken: np.ndarray    # lanes per warp that took the branch

    @property
    def split(self):
        """Warps whose lanes went both ways: they diverge here."""
        return (self.taken > 0) & (self.taken < self.active)


def branch_outcome(lanes, taken) -> BranchOutcome:
    """Per-warp taken/not-taken counts of one conditional branch over the active ``lanes``."""
    warp = np.asarray(lanes, np.int64) >> 5
    active = np.bincount(warp)
    taken = np.bincount(warp[np.asarray(taken, bool)], minlength=len(active))
    warps = np.flatnonzero(active)
    return BranchOutcome(warps, active[warps], taken[warps])


def active_lane_histogram(lanes):
    """How many warps ran an instruction with 1..32 active lanes: an array of 33 counts (index 0
    stays 0: a warp with no active lane does not execute)."""
    return lane_histogram(np.bincount(np.asarray(lanes, np.int64) >> 5))


def lane_histogram(per_warp):
    """``active_lane_histogram`` from the active-lane count of each batch warp."""
    hist = np.bincount(per_warp, minlength=WARP_SIZE + 1)
    hist[0] = 0
    return hist


def possible_lanes(warps, batch):
    """Lanes each warp has at all (32, except the last warp of a block whose size is not a multiple
    of 32): a warp running with fewer is diverged or has exited threads, not just short."""
    wpb = batch.lanes_per_block // WARP_SIZE
    return np.minimum(WARP_SIZE, batch.threads_per_block - (np.asarray(warps) % wpb) * WARP_SIZE)
