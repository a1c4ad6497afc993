"""Shared-memory wavefronts and bank conflicts of warp-level accesses, as Nsight Compute counts them.

Shared memory is 32 banks of 4-byte words; word ``w`` lives in bank ``w % 32``. A bank delivers one
word per wavefront, so a warp's access costs as many wavefronts as the bank asked for the most
*distinct* words; lanes asking for the same word share it (broadcast). Accesses wider than 32 bits
are split by the hardware into phases: 64-bit accesses in 2 half-warps of 16 lanes, 128-bit ones in
4 quarter-warps of 8 lanes, and each phase costs its own wavefronts (a 64/128-bit lane covers 2/4
consecutive words, so 16x8 or 8x16 bytes fill all 32 banks exactly once). The ideal is one
wavefront per phase that has active lanes; ``l1tex__data_bank_conflicts_pipe_lsu_mem_shared`` is
the excess over it.

Loads have one exception, measured with Nsight Compute on an H100 (docs/ncu_comparison.md): when
each pair of neighbouring lanes (2k, 2k+1) of a warp reads one address (or one lane of the pair is
inactive), the phases are twice as wide: a 64-bit load is one phase of 32 lanes, a 128-bit load two
of 16. A warp of doubles all reading one address costs 1 wavefront, not 2; ``s[t / 2]`` costs 1
(double) and 2 (float4). Lanes that share an address but are not neighbours (``s[t % 16]``) get no
such discount, and stores never do.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .warps import WARP_SIZE, as_int64, distinct_pairs

BANKS = 32
BANK_BYTES = 4
SHARED_WORD_BITS = 18   # 1 MiB of shared memory per block, more than any GPU has (H100: 228 KiB)


_PHASE_SHIFT = {1: 5, 2: 4, 4: 3}   # batch lane >> shift = warp * phases + phase


def phases(size: int) -> int:
    """How many phases one warp-wide access of ``size`` bytes per lane is split into."""
    return 1 if size <= 4 else 2 if size <= 8 else 4


def _lane_words(addresses, size):
    """The 32-bit words each lane touches: shape (lanes, words per lane)."""
    first = as_int64(addresses) >> 2   # / BANK_BYTES
    if size <= BANK_BYTES:
        return first[:, None]
    return first[:, None] + np.arange(size // BANK_BYTES, dtype=np.int64)


@dataclass
class SharedWavefronts:
    """Wavefronts of one warp-level shared-memory instruction, per warp that executed it."""

    warps: np.ndarray        # batch-relative warp ids (lane // 32)
    wavefronts: np.ndarray   # per warp
    ideal: np.ndarray        # per warp: phases with active lanes

    @property
    def bank_conflicts(self):
        return self.wavefronts - self.ideal

    @property
    def ways(self):
        """n-way conflict per warp: wavefronts per phase."""
        return self.wavefronts / np.maximum(self.ideal, 1)


def _paired_warps(lanes, addresses, nwarps):
    """Per warp: does every pair of neighbouring lanes (2k, 2k+1) use one address (or only one of
    them run)? Those warps' 64/128-bit loads go in phases twice as wide (see the module docstring)."""
    dense = np.full(nwarps * WARP_SIZE, -1, np.int64)
    dense[lanes] = as_int64(addresses)
    a, b = dense[0::2], dense[1::2]
    return ((a == b) | (a < 0) | (b < 0)).reshape(nwarps, WARP_SIZE // 2).all(axis=1)


_DENSE_LIMIT = 1 << 22   # (rows x word range) up to which _distinct uses a scratch table


def _distinct(row, word):
    """The distinct (row, word) pairs, in no particular order. Through a scratch table indexed by
    (row, word) when it is small: every pair writes its position, and the one position that stays
    picks that pair's representative; no sort (the hot path of a profiled launch)."""
    base = int(word.min())
    span = int(word.max()) - base + 1
    if (int(row[-1]) + 1) * span > _DENSE_LIMIT:
        return distinct_pairs(row, word, bits=SHARED_WORD_BITS)
    key = row * span + (word - base)
    pos = np.arange(len(key), dtype=np.int32)
    table = np.empty((int(row[-1]) + 1) * span, np.int32)
    table[key] = pos
    pick = table[key] == pos
    return row[pick], word[pick]


def shared_wavefronts(lanes, addresses, size: int, load: bool = False) -> SharedWavefronts:
    """Wavefronts per warp for one shared-memory instruction over the active ``lanes`` of a batch.

    ``addresses`` are byte offsets in the block's shared memory (one per lane), ``size`` the bytes
    each lane accesses (16 for ``ld.shared.v4.f32``), ``load`` whether it is a load (``ld.shared``:
    wide loads by pairs of lanes that share addresses go in wider phases).
    """
    lanes = np.asarray(lanes, np.int64)
    if len(lanes) == 0:
        zero = np.zeros(0, np.int64)
        return SharedWavefronts(zero, zero, zero)
    nphase = phases(size)
    words = _lane_words(addresses, size)
    nwarps = int(lanes[-1] >> 5) + 1
    # one row per (warp, phase), i.e. per 32, 16 or 8 lanes; a row's 32 banks serve in parallel
    row = lanes >> _PHASE_SHIFT[nphase]       # = warp * nphase + phase
    if load and nphase > 1:                   # paired warps: phases twice as wide, in the first rows
        wide = _paired_warps(lanes, addresses, nwarps)[lanes >> 5]
        wide_phase = (lanes & (WARP_SIZE - 1)) >> (_PHASE_SHIFT[nphase] + 1)
        row = np.where(wide, (lanes >> 5) * nphase + wide_phase, row)
    if words.shape[1] > 1:
        row = np.repeat(row, words.shape[1])
    row, word = _distinct(row, words.ravel())
    words_per_bank = np.bincount((row << 5) | (word & (BANKS - 1)), minlength=nwarps * nphase * BANKS)
    per_phase = words_per_bank.reshape(nwarps, nphase, BANKS).max(axis=2)
    wavefronts = per_phase.sum(axis=1)
    warps = np.flatnonzero(wavefronts)
    ideal = np.ones(len(warps), np.int64) if nphase == 1 else np.count_nonzero(per_phase[warps], axis=1)
    return SharedWavefronts(warps, wavefronts[warps], ideal)


@dataclass
class BankMap:
    """What one warp's shared access looks like bank by bank: the data a bank-conflict picture draws.

    One row per active lane; ``bank``, ``word`` and ``wavefront`` have one column per 32-bit word the
    lane touches (1, 2 or 4). ``wavefront`` numbers the serialized pass (0-based, over all phases)
    in which the word is delivered: lanes whose words share a bank go in different passes unless
    they want the same word.
    """

    warp: int
    lane: np.ndarray         # lane id in the warp (0..31)
    address: np.ndarray      # byte offset in shared memory
    phase: np.ndarray
    bank: np.ndarray
    word: np.ndarray
    wavefront: np.ndarray
    wavefronts: int


def bank_map(lanes, addresses, size: int, warp: int, load: bool = False) -> BankMap:
    """Lane -> bank/word/wavefront map of batch warp ``warp`` for one shared-memory instruction."""
    lanes = np.asarray(lanes, np.int64)
    mine = lanes // WARP_SIZE == warp
    lane = lanes[mine] % WARP_SIZE
    address = np.asarray(addresses, np.int64)[mine]
    nphase = phases(size)
    if load and nphase > 1 and _paired_warps(lane, address, 1)[0]:
        nphase //= 2
    phase = lane // (WARP_SIZE // nphase)
    word = _lane_words(address, size)
    bank = word % BANKS
    ph = np.broadcast_to(phase[:, None], word.shape)
    # rank of each distinct word inside its (phase, bank): that is its pass within the phase
    uniq, inverse = np.unique(np.stack([ph.ravel(), bank.ravel(), word.ravel()]), axis=1, return_inverse=True)
    group_start = np.r_[True, (uniq[0, 1:] != uniq[0, :-1]) | (uniq[1, 1:] != uniq[1, :-1])]
    first_of_group = np.maximum.accumulate(np.where(group_start, np.arange(uniq.shape[1]), 0))
    rank = np.arange(uniq.shape[1]) - first_of_group
    per_phase = np.zeros(nphase, np.int64)
    np.maximum.at(per_phase, uniq[0], rank + 1)
    offset = np.cumsum(per_phase) - per_phase
    wavefront = (offset[uniq[0]] + rank)[inverse.ravel()].reshape(word.shape)
    return BankMap(int(warp), lane, address, phase, bank, word, wavefront, int(per_phase.sum()))
