"""Helpers for counting per warp, the unit of every Nsight Compute metric, without Python loops."""
from __future__ import annotations

import numpy as np

WARP_SIZE = 32


def first_of_pairs(row, key):
    """Mark the first occurrence of each distinct (row, key) pair: returns (row, key, first).

    Rows arrive non-decreasing (lane order), and inside a row keys mostly do too (consecutive or
    strided addresses), so comparing neighbours finds the repeats in O(n); only when keys go down
    somewhere are the pairs sorted first (and come back reordered).
    """
    same_row = row[1:] == row[:-1]
    if (same_row & (key[1:] < key[:-1])).any():
        base = int(key.min())
        span = int(key.max()) - base + 1
        packed = row * span + (key - base)
        packed.sort()
        row, key = np.divmod(packed, span)
        key += base
        same_row = row[1:] == row[:-1]
    first = np.empty(len(row), bool)
    first[:1] = True
    np.logical_not(same_row & (key[1:] == key[:-1]), out=first[1:])
    return row, key, first


def as_int64(addresses):
    """Addresses as int64 without a copy when they come as uint64 (they are far below 2**63)."""
    a = np.asarray(addresses)
    return a.view(np.int64) if a.dtype == np.uint64 else a.astype(np.int64, copy=False)
