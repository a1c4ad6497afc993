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


def first_of_pairs(row, key):
    """Mark the first occurrence of each distinct (row, key) pair: returns (row, key, first).

    Rows arrive non-decreasing (lane order), and inside a row keys mostly do too (consecutive or
    strided addresses), so one pass comparing neighbours finds the repeats; only rows where keys go
    down somewhere are sorted (and come back reordered). That keeps the common case O(n).
    """
    same_row = row[1:] == row[:-1]
    down = same_row & (key[1:] < key[:-1])
    if down.any():
        bad = np.zeros(int(row[-1]) + 1, bool)
        bad[row[1:][down]] = True
        sel = bad[row]
        r, k = row[sel], key[sel]
        order = np.lexsort((k, r))
        row = np.concatenate([row[~sel], r[order]])
        key = np.concatenate([key[~sel], k[order]])
        same_row = row[1:] == row[:-1]
    first = np.empty(len(row), bool)
    first[:1] = True
    np.logical_not(same_row & (key[1:] == key[:-1]), out=first[1:])
    return row, key, first


def as_int64(addresses):
    """Addresses as int64 without a copy when they come as uint64 (they are far below 2**63)."""
    a = np.asarray(addresses)
    return a.view(np.int64) if a.dtype == np.uint64 else a.astype(np.int64, copy=False)
