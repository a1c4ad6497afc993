"""Helpers for counting per warp, the unit of every Nsight Compute metric, without Python loops."""
from __future__ import annotations

import numpy as np

WARP_SIZE = 32


def distinct_pairs(row, key, bits=None):
    """The distinct (row, key) pairs, as two arrays sorted by row then key.

    ``row`` must be non-decreasing (it is derived from lane order). Each pair is packed into one
    int64, ``row << bits | key - base``; in lane order the packed values are mostly sorted already
    (consecutive or strided addresses), so a sort runs only when they go down somewhere, and
    repeats are then neighbours. ``base`` is a multiple of 32, so ``key & 31`` (a bank) survives.
    ``bits``: how many bits the keys need, when the caller knows (saves a min and a max).
    """
    if bits is None:
        base = int(key.min()) & ~31
        bits = (int(key.max()) - base).bit_length()
    else:
        base = 0
    if int(row[-1]).bit_length() + bits > 62:   # too wide to pack: sort the pairs themselves
        order = np.lexsort((key, row))
        row, key = row[order], key[order]
        keep = np.empty(len(row), bool)
        keep[:1] = True
        np.logical_or(row[1:] != row[:-1], key[1:] != key[:-1], out=keep[1:])
        return row[keep], key[keep]
    packed = (row << bits) | (key - base)
    if (packed[1:] < packed[:-1]).any():
        packed = np.sort(packed)
    keep = np.empty(len(packed), bool)
    keep[:1] = True
    np.not_equal(packed[1:], packed[:-1], out=keep[1:])
    packed = packed[keep]
    return packed >> bits, (packed & ((1 << bits) - 1)) + base


def distinct(values):
    """The distinct values of a 1-D integer array, sorted: ``np.unique`` without its cost.

    numpy 2's ``np.unique`` hashes every value (about 60 us for one warp-group's 1,024 addresses,
    35x a sort), and the profiler asks it for every global load a warp-group executes. Addresses come
    in lane order, mostly ascending already, so a sort runs only where they go down somewhere."""
    values = np.asarray(values)
    if len(values) > 1 and (values[1:] < values[:-1]).any():
        values = np.sort(values)
    keep = np.empty(len(values), bool)
    keep[:1] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def as_int64(addresses):
    """Addresses as int64 without a copy when they come as uint64 (they are far below 2**63)."""
    a = np.asarray(addresses)
    return a.view(np.int64) if a.dtype == np.uint64 else a.astype(np.int64, copy=False)
