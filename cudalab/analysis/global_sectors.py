"""Requests and 32-byte sectors of warp-level global (or local) accesses, as Nsight Compute counts them.

Since Volta, a warp's global load, store or atomic is one *request* to L1TEX, which fetches every
32-byte *sector* any active lane touches, once (Nsight Compute Kernel Profiling Guide, "Memory
tables": l1tex__t_requests / l1tex__t_sectors). Coalesced float accesses by 32 lanes touch 4
sectors; the same warp striding by 128 bytes touches 32, and uses 4 bytes of each.

Atomics (atom and red) differ where lanes share an address, as Nsight Compute measured on an H100
(docs/ncu_comparison.md): updates of one address are applied one after another, so a sector is
counted once per update of its most-updated address. 32 lanes adding to one int: 32 sectors, not 1;
8 lanes on each of 4 ints of one sector: 8; 32 distinct consecutive ints: 4, as for a store.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .warps import WARP_SIZE, as_int64, distinct, distinct_pairs

SECTOR_BYTES = 32


@dataclass
class GlobalSectors:
    """Sectors of one warp-level global instruction, per warp that executed it (= per request)."""

    warps: np.ndarray            # batch-relative warp ids
    sectors: np.ndarray          # distinct sectors per warp
    requested_bytes: np.ndarray  # bytes the warp's active lanes asked for
    ideal_sectors: np.ndarray    # fewest sectors those bytes could fit in

    @property
    def requests(self) -> int:
        return len(self.warps)

    @property
    def efficiency(self):
        """Fraction of fetched bytes the threads asked for (a broadcast can't make it exceed 1)."""
        return np.minimum(1.0, self.requested_bytes / np.maximum(self.sectors * SECTOR_BYTES, 1))


def _lane_sectors(addresses, size):
    """Sectors each lane touches: shape (lanes, k), and a mask of the valid ones or None when all
    are (k > 1 only for wide or misaligned accesses that straddle a sector boundary)."""
    addresses = as_int64(addresses)
    first = addresses >> 5   # / SECTOR_BYTES
    if size & (size - 1) == 0 and size <= SECTOR_BYTES and not (addresses & (size - 1)).any():
        return first[:, None], None   # naturally aligned, at most 32 bytes: one sector per lane
    last = (addresses + (size - 1)) >> 5
    sectors = first[:, None] + np.arange(int((last - first).max()) + 1, dtype=np.int64)
    return sectors, sectors <= last[:, None]


def global_sectors(lanes, addresses, size: int, atomic: bool = False) -> GlobalSectors:
    """Distinct 32-byte sectors per warp touched by one global instruction over ``lanes``
    (``atomic``: an atom/red, whose updates of one address each count its sector again)."""
    lanes = np.asarray(lanes, np.int64)
    if len(lanes) == 0:
        return _count(lanes, np.zeros((0, 1), np.int64), None, size)
    r = _count(lanes, *_lane_sectors(addresses, size), size)
    if atomic:
        r.sectors = _atomic_sectors(lanes, as_int64(addresses))[r.warps]
        r.ideal_sectors = np.minimum(r.ideal_sectors, r.sectors)
    return r


def in_lane_order(lanes, addresses, size: int):
    """The usual global load or store, counted in one pass: naturally aligned, at most 32 bytes, and each
    warp's addresses never going down from lane to lane (coalesced, strided, a broadcast). Returns
    (``global_sectors``'s answer, ``dram_segments``'s, the distinct sectors in order or None when the
    warps' addresses go down from one warp to the next), or None for other accesses, which take the
    general functions. The profiler asks this of every global access; the general functions ask
    numpy for the same warp numbers and orderings three times over."""
    a = as_int64(addresses)
    if len(a) == 0 or size & (size - 1) or size > SECTOR_BYTES or (a & (size - 1)).any():
        return None
    warp = np.asarray(lanes, np.int64) >> 5
    sec = a >> 5
    next_warp = warp[1:] != warp[:-1]
    down = sec[1:] < sec[:-1]
    if (down & ~next_warp).any():
        return None
    new = np.empty(len(a), bool)                 # a lane whose sector is not its left neighbour's
    new[0] = True
    np.not_equal(sec[1:], sec[:-1], out=new[1:])
    touched = None if down.any() else sec[new]
    new[1:] |= next_warp
    active = np.bincount(warp)
    warps = np.flatnonzero(active)
    per_warp = np.bincount(warp[new], minlength=len(active))[warps]
    requested = active[warps] * size
    counted = GlobalSectors(warps, per_warp, requested, np.minimum(per_warp, -(-requested // SECTOR_BYTES)))
    seg = (a - a.min()) >> 6                     # as dram_segments: 64-byte pieces from the lowest address
    np.not_equal(seg[1:], seg[:-1], out=new[1:])
    new[1:] |= next_warp
    return counted, int(np.count_nonzero(new)), touched


def _atomic_sectors(lanes, addresses):
    """Per batch warp: the sum over its sectors of the most lanes updating one address in the
    sector (atomics are naturally aligned, so a lane touches one sector)."""
    warp = lanes >> 5
    order = np.lexsort((addresses, warp))
    warp, addresses = warp[order], addresses[order]
    first = np.r_[True, (warp[1:] != warp[:-1]) | (addresses[1:] != addresses[:-1])]
    starts = np.flatnonzero(first)
    updates = np.diff(np.r_[starts, len(warp)])            # lanes per distinct (warp, address)
    warp, sector = warp[starts], addresses[starts] >> 5
    group = np.flatnonzero(np.r_[True, (warp[1:] != warp[:-1]) | (sector[1:] != sector[:-1])])
    most = np.maximum.reduceat(updates, group)             # per (warp, sector)
    return np.bincount(warp[group], weights=most, minlength=int(lanes[-1] >> 5) + 1).astype(np.int64)


def local_sectors(lanes, offsets, size: int) -> GlobalSectors:
    """Distinct sectors per warp of one local-memory instruction; ``offsets`` are per thread.

    Local memory is interleaved so that "consecutive 32-bit words are accessed by consecutive
    thread IDs" (CUDA C++ Programming Guide, Local Memory): word w of lane t sits at byte
    (w * 32 + t) * 4 of its warp's local window, so a warp reading one array element is coalesced.
    """
    lanes = np.asarray(lanes, np.int64)
    words = (as_int64(offsets) >> 2)[:, None] + np.arange(max(1, size // 4), dtype=np.int64)
    return _count(lanes, (words << 2) + ((lanes & (WARP_SIZE - 1)) >> 3)[:, None], None, size)


def _count(lanes, sectors, valid, size):
    """Distinct sectors per warp from each lane's sectors (lanes x k, ``valid`` masking extras)."""
    warp = lanes >> 5
    if valid is None and sectors.shape[1] == 1:
        row, sec = warp, sectors[:, 0]
    else:
        valid = np.ones(sectors.shape, bool) if valid is None else valid
        row, sec = np.broadcast_to(warp[:, None], sectors.shape)[valid], sectors[valid]
    active = np.bincount(warp)
    warps = np.flatnonzero(active)
    if len(warps) == 0:
        return GlobalSectors(warps, warps, warps, warps)
    per_warp = np.bincount(distinct_pairs(row, sec)[0], minlength=len(active))[warps]
    requested = active[warps] * size
    # a broadcast can need fewer sectors than its bytes fill; it is never worse than ideal
    ideal = np.minimum(per_warp, -(-requested // SECTOR_BYTES))
    return GlobalSectors(warps, per_warp, requested, ideal)


@dataclass
class SectorMap:
    """Which sector each lane of one warp touches: the data a coalescing picture draws."""

    warp: int
    lane: np.ndarray       # lane id in the warp
    address: np.ndarray
    sector: np.ndarray     # index (0-based) of the lane's first sector among the warp's sectors
    nsectors: np.ndarray   # sectors the lane touches (1, or 2 when it straddles a boundary)
    offset: np.ndarray     # byte offset of the access inside its first sector
    sector_address: np.ndarray  # address of each of the warp's distinct sectors, sorted


def sector_map(lanes, addresses, size: int, warp: int) -> SectorMap:
    """Lane -> sector map of batch warp ``warp`` for one global instruction."""
    lanes = np.asarray(lanes, np.int64)
    mine = lanes // WARP_SIZE == warp
    address = as_int64(addresses)[mine]
    sectors, valid = _lane_sectors(address, size)
    valid = np.ones(sectors.shape, bool) if valid is None else valid
    touched = distinct(sectors[valid])
    return SectorMap(int(warp), lanes[mine] % WARP_SIZE, address,
                     np.searchsorted(touched, sectors[:, 0]), valid.sum(axis=1),
                     (address % SECTOR_BYTES).astype(np.int64), touched * SECTOR_BYTES)


DRAM_SEGMENT_BYTES = 64


def dram_segments(lanes, addresses) -> int:
    """Distinct 64-byte segments per warp request, summed: what L2 fetches from DRAM when nothing is
    cached (an H100 moves DRAM data in 64-byte pieces: a stride-32 float copy reads twice the bytes
    of a stride-8 one although both touch one 32-byte sector per lane; measured, docs/timing_h100)."""
    if len(lanes) == 0:
        return 0
    addresses = np.asarray(addresses, np.uint64)
    seg = ((addresses - addresses.min()) >> np.uint64(6)).astype(np.int64)
    key = (np.asarray(lanes, np.int64) >> 5 << 40) | seg
    return len(distinct(key))
