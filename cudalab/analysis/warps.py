"""Group an event's active lanes by warp: the unit every Nsight Compute memory metric counts in."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

WARP_SIZE = 32


@dataclass
class WarpGroups:
    """The warps of one event, in lane order.

    ``warps[i]`` is a batch-relative warp id (``lane // 32``), ``active[i]`` its number of active
    lanes, and ``index[j]`` the position in ``warps`` of the j-th active lane.
    """

    warps: np.ndarray
    active: np.ndarray
    index: np.ndarray

    def __len__(self):
        return len(self.warps)


def warp_groups(lanes) -> WarpGroups:
    """Split sorted batch lanes into warps without a Python loop (lanes arrive sorted)."""
    lanes = np.asarray(lanes, np.int64)
    if len(lanes) == 0:
        empty = np.zeros(0, np.int64)
        return WarpGroups(empty, empty, empty)
    w = lanes >> 5
    first = np.empty(len(w), bool)
    first[0] = True
    np.not_equal(w[1:], w[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    active = np.diff(starts, append=len(w))
    return WarpGroups(w[starts], active, np.cumsum(first) - 1)
