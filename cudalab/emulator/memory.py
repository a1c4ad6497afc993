"""Emulated device memory: one growable byte arena, an allocation table, and address windows.

Addresses look like a GPU's: global allocations live at ``GLOBAL_BASE + offset`` and start
256-byte aligned (as cudaMalloc's do, which the coalescing numbers depend on). Generic pointers
into shared and local memory fall in their own windows, so a generic ``ld`` can tell the spaces
apart the way the hardware's address translation does.
"""
from __future__ import annotations

import bisect
import ctypes
import mmap
import platform
import sys
from dataclasses import dataclass

import numpy as np

from ..errors import CudaError

GLOBAL_BASE = 0x7F00_0000_0000
SHARED_WINDOW = 0x7E00_0000_0000      # generic address of shared offset 0
LOCAL_WINDOW = 0x7D00_0000_0000       # generic address of local offset 0
WINDOW_SIZE = 0x0100_0000_0000
FUNC_BASE = 0x7C00_0000_0000          # addresses of device functions (function pointers, vtables)
PARAM_WINDOW = 0x7B00_0000_0000       # generic address of kernel parameter offset 0 (sm90.py)
ALIGN = 512                           # cudaMalloc on an H100 hands out 512-byte aligned blocks
DEVICE_MEMORY = 4 << 30               # the emulated GPU's memory (cudaDeviceProp.totalGlobalMem)


NEAR = 64 << 20                       # an address this close to an allocation is named by it (slack.POOL_AFTER)
LARGE = 1 << 20                       # bigger allocations get whole 2 MiB pages, as cudaMalloc's do
PAGE = 2 << 20


def padded_size(size):
    """The arena bytes an allocation of ``size`` takes (an int, or a numpy array of sizes): rounded up
    to ALIGN, then a red zone of ALIGN bytes, so that a small overrun lands in memory no other
    allocation holds; above LARGE, the size and its red zone rounded up to 2 MiB pages. An H200's
    cudaMalloc did the same: 1,000-byte blocks 1,024 bytes apart, 3 MiB ones 4 MiB apart, and a read
    up to 2 MiB past the end of a 2 MiB or 64 MiB allocation ran (emulator/slack.py)."""
    large = (size + ALIGN + PAGE - 1) // PAGE * PAGE
    if isinstance(size, np.ndarray):
        return np.where(size > LARGE, large, np.maximum(ALIGN, (size + ALIGN - 1) // ALIGN * ALIGN) + ALIGN)
    return large if size > LARGE else max(ALIGN, (size + ALIGN - 1) // ALIGN * ALIGN) + ALIGN


def largest_fitting(hole: int) -> int:
    """The largest allocation whose padded size fits in ``hole`` bytes (for the out-of-memory message)."""
    small = min(hole - ALIGN, LARGE)
    large = hole // PAGE * PAGE - ALIGN
    return max(small, large if large > LARGE else 0, 0)


def negative_size_message(size: int) -> str:
    """What a student reads when an allocation's size is a negative number read as an unsigned size_t.

    ``int size = n * sizeof(float)`` with n = 999,999,999 overflows an int to -294,967,300, and cudaMalloc's
    size_t parameter reads that as 18,446,744,073,414,584,316 bytes (PMPP chapter 2's vector sum, a reader's
    Bazel project): a GPU refuses it as out of memory too, but "free arrays you no longer need" would send the
    student the wrong way. Sizes of 2**63 bytes and more are no real request: they are always such a sign."""
    signed = size - (1 << 64)
    cause = ("was computed in a 32-bit int that overflowed (an int holds at most 2,147,483,647, so a byte count "
             "of 2 GiB or more wraps around to a negative number) or went below zero"
             if signed >= -(1 << 31) else "went below zero (or overflowed a signed 64-bit count)")
    return (f"out of device memory: the size asked for, {size:,} bytes, is the negative number {signed:,} read as an "
            f"unsigned size_t: the byte count {cause}. A GPU refuses it the same way. Compute sizes in size_t, "
            f"for example (size_t)n * sizeof(float).")


@dataclass
class Allocation:
    address: int
    size: int
    label: str = ""
    freed: bool = False
    initialized: np.ndarray | None = None   # per-byte written flags (initcheck), when tracked
    written_all: bool = False               # every byte written (a whole host copy, or marked so)
    scratch: bool = False                   # the runtime's, for one launch (see DeviceMemory.alloc)
    host: bool = False                      # page-locked host memory (cudaMallocHost), not the device's

    def mark_written(self, start: int, stop: int):
        """Record that bytes [start, stop) of this allocation hold data (initcheck)."""
        if self.written_all:
            return
        if start <= 0 and stop >= self.size:
            self.written_all, self.initialized = True, None
            return
        if self.initialized is None:
            self.initialized = np.zeros(self.size, bool)
        self.initialized[max(start, 0):stop] = True


class DeviceMemory:
    """The global memory of one emulated device."""

    def __init__(self, limit: int = DEVICE_MEMORY, initial: int = 16 << 20, host_room: int = 0):
        self.limit = limit                           # the device's memory (totalGlobalMem)
        # page-locked host memory lives in the arena too (a whole program maps it at the same
        # addresses), beyond the device's: a bandwidth test's 1 GiB cudaMallocHost buffers take
        # nothing from its 1 GiB cudaMalloc ones, as on a GPU
        self.capacity = limit + host_room
        self.device_bytes = 0                        # padded bytes of live device allocations
        # the arena grows inside address space reserved for all of it at once (_ensure)
        self._reserved = reserve(max(self.capacity, initial))
        self.data = np.zeros(initial, np.uint8) if self._reserved is None else self._reserved[:initial]
        self.allocs: dict[int, Allocation] = {}     # address -> Allocation (live and freed)
        self._starts: list[int] = []                 # sorted addresses of live allocations
        self._ends: list[int] = []                   # their past-last bytes, in the same order
        self._free: list[tuple[int, int]] = []       # (offset, size) holes
        self._scratch: list[tuple[int, int]] = []    # (offset, size) holes left by scratch allocations
        self.top = 0                                 # bump pointer (offset)
        self._high_water = 0                         # bytes below this may hold old data
        self._bounds = None                          # (starts, ends) arrays of live allocations, see bounds()
        self._padded = None                          # (bounds, (starts, padded ends)), see padded_bounds()
        self._views: dict = {}
        self._released: list[int] = []               # addresses to free at the next alloc
        self.hold_pages = False                      # freed blocks keep their pages until the next alloc
        self._held: list[tuple[int, int]] = []       # (offset, size) of those blocks (give_back_held)
        self._fresh: set[int] = set()                # live allocations made since mark_all_written
        self._awaiting: dict[int, int] = {}          # a big new allocation that may take held pages (write)

    # ---------------------------------------------------------------- allocation
    def alloc(self, size: int, label: str = "", scratch: bool = False, host: bool = False) -> int:
        """Allocate ``size`` bytes, 512-byte aligned, followed by its padding (``padded_size``).

        Like compute-sanitizer's allocator, freed memory is not handed out again while there is
        room elsewhere, and no two allocations touch: a small overrun lands in a red zone or a freed
        block, so it is reported as such instead of silently reading a neighbour.

        ``scratch``: memory the runtime holds for one launch only (the device copy of a numpy
        argument), which the caller fills at once. It reuses a block that an earlier scratch
        allocation freed, so a launch repeated in a loop does not grow the arena (and copy it) on
        every call; only scratch blocks are reused that way, so a program's own freed arrays are
        never handed out again early and their use after free is still reported.

        ``host``: page-locked host memory, which counts against the arena's room for host memory
        (``capacity``) but not against the device's ``limit``."""
        self._awaiting.clear()
        if not self._held or int(size) < RELEASE_BYTES or not self._movable():
            self.give_back_held()
        self._free_released()
        size = int(size)
        if size < 0:
            raise CudaError(f"cannot allocate a negative number of bytes ({size}).", "cudaErrorInvalidValue")
        padded = padded_size(size)
        if not host and self.device_bytes + padded > self.limit:
            raise self._out_of_memory(size, largest_fitting(self.limit - self.device_bytes))
        off = self._first_fit(self._scratch, padded) if scratch else None
        if off is not None:
            self.data[off + size:off + padded] = 0          # the rest the caller's copy overwrites
        elif self.top + padded > self.capacity:
            off = self._first_fit(self._free, padded)
            if off is None:
                self._coalesce()
                off = self._first_fit(self._free, padded) if self.top + padded > self.capacity else self._bump(padded)
            if off is None:
                # the largest block that still fits: each one is followed by its red zone
                fits = largest_fitting(max([self.capacity - self.top, *(s for _, s in self._free)]))
                raise self._out_of_memory(
                    size, fits if host else min(fits, largest_fitting(self.limit - self.device_bytes)))
        else:
            off = self._bump(padded)
        addr = GLOBAL_BASE + off
        if self._held:
            if off >= self._high_water and size >= RELEASE_BYTES:
                self._awaiting[addr] = size             # untouched pages: the first whole write may move
            else:
                self.give_back_held()
        if off < self._high_water:
            self.data[off:off + padded] = 0
        self._high_water = max(self._high_water, off + padded)
        self.allocs[addr] = Allocation(addr, size, label, scratch=scratch, host=host)
        if not host:
            self.device_bytes += padded
        self._fresh.add(addr)
        k = bisect.bisect_left(self._starts, addr)
        self._starts.insert(k, addr)
        self._ends.insert(k, addr + size)
        self._bounds = None
        return addr

    def free(self, addr: int):
        a = self.allocs.get(int(addr))
        if a is None or a.freed:
            what = "was already freed" if a is not None else "is not the start of an allocation"
            raise CudaError(f"cannot free pointer 0x{int(addr):x}: it {what}.", "cudaErrorInvalidValue")
        a.freed = True
        self._awaiting.pop(a.address, None)
        a.initialized = None            # kept for use-after-free messages: the bytes' flags are not needed
        self._fresh.discard(a.address)
        k = bisect.bisect_left(self._starts, a.address)
        del self._starts[k]
        del self._ends[k]
        self._bounds = None
        padded = padded_size(a.size)
        if not a.host:
            self.device_bytes -= padded
        (self._scratch if a.scratch else self._free).append((a.address - GLOBAL_BASE, padded))
        if not a.scratch:
            if self.hold_pages:
                self._held.append((a.address - GLOBAL_BASE, padded))
            else:
                self._give_back_pages(a.address - GLOBAL_BASE, padded)

    def give_back_held(self):
        """Give back the pages of blocks freed while ``hold_pages`` was on: the arrays a program dropped
        before a launch, which the launch frees first (runtime.arrays.release_dropped). Their pages go at
        the next allocation, where the program's next ``to_device`` would be, not in the launch: giving
        back 4 MiB took 0.4 ms here (madvise), a third of a 2^20-element reduction's launch on arguments
        just copied (speed.py), and three such arrays 1.2 ms, more than the vector add itself."""
        while self._held:
            self._give_back_pages(*self._held.pop())

    def _give_back_pages(self, off: int, nbytes: int):
        """Hand a freed block's whole pages back to the system (``madvise``: MADV_REMOVE punches them
        out of a whole program's memfd, MADV_DONTNEED drops an anonymous arena's), for blocks of
        ``RELEASE_BYTES`` or more. Freed memory is quarantined (``alloc``), so the arena climbs to its
        whole capacity (the device's memory and as much again for page-locked host memory) before a
        freed block is handed out again; its old pages stayed resident all the while: a benchmark that
        allocates and frees 128 MiB per size held 9 GB of the machine (a cuckoo-hashing lab). The bytes
        read as zeros afterwards, which only a use after free (a fault) or an overrun into the freed
        neighbour (memcheck's warning) can see; a block handed out again is zeroed anyway."""
        if nbytes < RELEASE_BYTES or off + nbytes > self.data.size:
            return
        base = self.data.ctypes.data + off
        start = -(-base // OS_PAGE) * OS_PAGE
        stop = (base + nbytes) // OS_PAGE * OS_PAGE
        if stop - start < OS_PAGE:
            return
        if _madvise(start, stop - start, MADV_REMOVE) != 0:
            _madvise(start, stop - start, MADV_DONTNEED)

    def _movable(self) -> bool:
        """Whether pages may move inside the arena: only while it is this process's own anonymous
        reservation (a whole program's arena is a memfd the program maps at the same addresses, whose
        file offsets must stay where they are), and while few moves have split it (``MOVE_LIMIT``)."""
        r = self._reserved
        return (_moves[0] < MOVE_LIMIT and r is not None and self.data.ctypes.data == r.ctypes.data)

    def _take_held_pages(self, off: int, nbytes: int):
        """Before a copy fills a new allocation whole (``write``): move the resident pages of a block the
        program dropped before its last launch (``_held``) under the new one's, rather than give those back
        to the system and fault in fresh ones, which the system zeroes first.

        A program that copies its arguments again before every launch (speed.py, a course's timing loop)
        freed the last copies at the launch (runtime.arrays.release_dropped) and copies into new addresses
        (freed memory is quarantined, ``alloc``): a 4 MiB array was 1,024 page faults and 4 MiB of zeroing
        in the copy, then 4 MiB given back (``madvise``), and the next launch found its own tables and the
        interpreter's objects pushed out of the caches by it (the warp-shuffle reduction's launch: about
        twice the CPU time of one on the same arguments, bench/README.md, lanes17 round). ``mremap`` moves
        the pages in one call: the old block's addresses keep their mapping, empty (they read as zeros, as
        after ``_give_back_pages``; a use after free through the old pointer is still a fault), and the
        new block gets the old bytes, which the copy overwrites at once. Each move splits the reservation's
        mapping in up to three, so a process moves at most ``MOVE_LIMIT`` times (Linux allows 65,530)."""
        base = self.data.ctypes.data
        start = -(-(base + off) // OS_PAGE) * OS_PAGE
        length = (base + off + nbytes) // OS_PAGE * OS_PAGE - start
        for k, (o, s) in enumerate(self._held):
            src = -(-(base + o) // OS_PAGE) * OS_PAGE
            have = (base + o + s) // OS_PAGE * OS_PAGE - src
            if have >= length > 0 and o + s <= self.data.size:
                if _mremap(src, length, start) != 0:
                    return
                _moves[0] += 1
                del self._held[k]
                if have - length >= OS_PAGE:
                    _madvise(src + length, have - length, MADV_DONTNEED)
                return

    def _out_of_memory(self, size: int, fits: int) -> CudaError:
        if size >= 1 << 63:
            return CudaError(negative_size_message(size), "cudaErrorMemoryAllocation")
        return CudaError(
            f"out of device memory: asked for {size:,} bytes, but the largest allocation that fits in "
            f"the emulated device's {self.limit:,} bytes is now {max(fits, 0):,} bytes. "
            "Free arrays you no longer need, or use smaller sizes.", "cudaErrorMemoryAllocation")

    def _bump(self, padded: int) -> int:
        """The offset of ``padded`` bytes at the top of the arena."""
        off = self.top
        self.top += padded
        self._ensure(self.top)
        return off

    @staticmethod
    def _first_fit(holes: list, padded: int):
        """The offset of the first block of ``holes`` ((offset, size) pairs: the freed blocks, or the
        freed scratch ones) of at least ``padded`` bytes, taken from the list (the rest stays a hole),
        or None."""
        for k, (o, s) in enumerate(holes):
            if s >= padded:
                if s == padded:
                    holes.pop(k)
                else:
                    holes[k] = (o + padded, s - padded)
                return o
        return None

    def _coalesce(self):
        """Join neighbouring freed blocks (the runtime's scratch ones too) and hand the last one back
        to the top of the arena. Only when nothing else fits: a program that allocates and frees 1 GiB,
        then 2 GiB, then asks for 3 GiB gets it, as from cudaMalloc, while freed memory still stays
        unused as long as there is room elsewhere (use after free is reported, not hidden)."""
        merged = []
        for o, s in sorted(self._free + self._scratch):
            if merged and sum(merged[-1]) == o:
                merged[-1] = (merged[-1][0], merged[-1][1] + s)
            else:
                merged.append((o, s))
        if merged and sum(merged[-1]) == self.top:
            self.top = merged.pop()[0]
        self._free, self._scratch = merged, []

    def release_later(self, addrs):
        """Free these allocations at the next alloc (those still live).

        For a finalizer (a dropped Module's globals): the garbage collector runs finalizers at any
        allocation of a Python object, possibly in the middle of this table's own bookkeeping, so
        they only queue the addresses (list.extend: safe at any point)."""
        self._released.extend(int(a) for a in addrs)

    def _free_released(self):
        while self._released:
            a = self.allocs.get(self._released.pop())
            if a is not None and not a.freed:
                self.free(a.address)

    def mark_all_written(self):
        """Every live allocation counts as written (initcheck). Runs before every launch without
        initcheck, so it visits only the allocations made since its last call: the others are
        marked already, and a mark is never taken back."""
        for addr in self._fresh:
            a = self.allocs[addr]
            a.mark_written(0, a.size)
        self._fresh.clear()

    def _ensure(self, nbytes: int):
        """Grow the arena to at least ``nbytes`` (doubling). It grows inside address space reserved
        once for the whole ``capacity`` (``reserve``), so growing is a longer view of the same bytes:
        nothing is copied, and the arena never moves. Copying it cost CuPy's Black-Scholes of 10
        million options 2.9 of its 11.7 s of CPU (a 2 GiB arena, grown from 16 MiB
        by seven doublings, each a copy of all of it). The arena's
        size (``data.size``) still doubles as it did: what lies past it reads as zeros and a write
        there is dropped (memops._global), the same before and after."""
        if nbytes <= self.data.size:
            return
        cap = self.data.size
        while cap < nbytes:
            cap *= 2
        reserved = self._reserved
        # (only while the arena is that reservation's: a whole program's server maps its memfd instead)
        if reserved is not None and nbytes <= reserved.size and self.data.ctypes.data == reserved.ctypes.data:
            self.data = reserved[:min(cap, reserved.size)]
        else:                           # no address space to reserve (strict overcommit): copy
            new = np.zeros(cap, np.uint8)
            new[:self.data.size] = self.data
            self.data, self._reserved = new, None
        self._views.clear()

    def view(self, dt) -> np.ndarray:
        """The arena as an array of ``dt`` (cached; rebuilt when the arena grows)."""
        dt = np.dtype(dt)
        v = self._views.get(dt)
        if v is None:
            v = self.data[: self.data.size // dt.itemsize * dt.itemsize].view(dt)
            self._views[dt] = v
        return v

    # ---------------------------------------------------------------- lookup
    def find(self, addr: int):
        """The allocation containing ``addr``, or the nearest one before it (for error messages)."""
        k = bisect.bisect_right(self._starts, int(addr)) - 1
        return self.allocs[self._starts[k]] if k >= 0 else None

    def describe(self, addr: int, size: int) -> str:
        """Where an address falls relative to the nearest allocation, in compute-sanitizer's words.

        Live allocations come first; a freed one is named only when the address is inside it and no
        live allocation has reused its memory (use after free)."""
        addr = int(addr)
        if addr == 0:
            return "a null pointer (0x0): the pointer was never set to an allocation"
        live = [a for a in self.allocs.values() if not a.freed]
        for a in live:
            if a.address <= addr < a.address + max(a.size, 1):
                return f"inside a {a.size}-byte allocation at 0x{a.address:x}"
        for a in self.allocs.values():
            if a.freed and a.address <= addr < a.address + max(a.size, 1):
                return f"inside a {a.size}-byte allocation at 0x{a.address:x} that was already freed (use after free)"
        best = None
        for a in live:
            dist = addr - (a.address + a.size) if addr >= a.address else a.address - addr
            if best is None or dist < best[0]:
                best = (dist, a)
        if best is None or best[0] > NEAR:
            return "not in any allocation (is the pointer set?)"
        dist, a = best
        if addr >= a.address + a.size:
            return f"{dist} bytes after the end of a {a.size}-byte allocation at 0x{a.address:x}"
        return f"{dist} bytes before a {a.size}-byte allocation at 0x{a.address:x}"

    def freed_holes(self) -> list[tuple[int, int]]:
        """(offset, size) of the blocks the program freed that no allocation holds again, sorted
        (the runtime's own scratch blocks are not among them): emulator/slack.py tells a use after
        free from an overrun with them."""
        return sorted(self._free)

    def stray_write(self, end: int):
        """A kernel wrote arena bytes below offset ``end`` outside every allocation (a write a GPU
        runs: slack.py): an allocation made there later must be zeroed, as fresh memory is."""
        self._high_water = max(self._high_water, end)

    def bounds(self):
        """(starts, ends): sorted uint64 arrays of the live allocations' first and past-last bytes
        (the compiled tier searches them too).

        alloc and free keep both as sorted Python lists (one insert or delete each) and drop the
        arrays; they are made again from the lists, in one C loop each, when next asked for. (Editing
        the arrays with np.insert and np.delete cost every allocation tens of microseconds; a launch
        with numpy arguments makes and frees several.) A change always makes new arrays rather than
        editing these, so a launch that holds the old pair (the compiled tier's context) keeps a
        consistent one."""
        if self._bounds is None:
            self._bounds = (np.array(self._starts, np.uint64), np.array(self._ends, np.uint64))
        return self._bounds

    def padded_bounds(self):
        """(starts, padded ends): the live allocations' first bytes and the ends of the padding that
        follows each (``padded_size``), which no other allocation overlaps (emulator/slack.py)."""
        bounds = self.bounds()
        if self._padded is None or self._padded[0] is not bounds:
            starts, ends = bounds
            padded = padded_size((ends - starts).astype(np.int64))
            self._padded = (bounds, (starts, starts + padded.astype(np.uint64)))
        return self._padded[1]

    def valid(self, addrs: np.ndarray, size: int) -> np.ndarray:
        """Per address: does [addr, addr+size) lie inside one live allocation?"""
        if not self._starts:
            return np.zeros(addrs.shape, bool)
        starts, ends = self.bounds()
        if addrs.size:
            # the common case: every lane inside the one allocation its lowest address falls in
            lo, hi = addrs.min(), addrs.max()
            k = int(np.searchsorted(starts, lo, side="right")) - 1
            if k >= 0 and lo >= starts[k] and hi + np.uint64(size) <= ends[k]:
                return np.ones(addrs.shape, bool)
        k = np.searchsorted(starts, addrs, side="right") - 1
        ok = k >= 0
        kk = np.maximum(k, 0)
        return ok & (addrs >= starts[kk]) & (addrs + np.uint64(size) <= ends[kk])

    # ---------------------------------------------------------------- host copies
    def write(self, addr: int, raw: bytes | np.ndarray):
        buf = np.frombuffer(raw, np.uint8) if isinstance(raw, (bytes, bytearray, memoryview)) \
            else np.ascontiguousarray(raw).reshape(-1).view(np.uint8)
        off = int(addr) - GLOBAL_BASE
        self._check_host(addr, buf.size)
        if self._awaiting and self._awaiting.pop(int(addr), -1) == buf.size:
            self._take_held_pages(off, buf.size)
        self.data[off:off + buf.size] = buf
        a = self.find(addr)
        a.mark_written(int(addr) - a.address, int(addr) - a.address + buf.size)

    def read(self, addr: int, nbytes: int) -> np.ndarray:
        off = int(addr) - GLOBAL_BASE
        self._check_host(addr, nbytes)
        return self.data[off:off + nbytes].copy()

    def copy_within(self, dst: int, src: int, nbytes: int):
        """``write(dst, read(src, nbytes))`` as one move of the bytes, not two: a queued copy between two
        places of the arena (device and cudaMallocHost memory), 128 KiB three times per launch in a streams
        exercise."""
        self._check_host(src, nbytes)
        self._check_host(dst, nbytes)
        d, s = int(dst) - GLOBAL_BASE, int(src) - GLOBAL_BASE
        self.data[d:d + nbytes] = self.data[s:s + nbytes]      # (numpy copies through a buffer if they overlap)
        a = self.find(dst)
        a.mark_written(int(dst) - a.address, int(dst) - a.address + nbytes)

    def read_into(self, addr: int, out: np.ndarray):
        """``read`` into an existing uint8 array (its size is the byte count)."""
        off = int(addr) - GLOBAL_BASE
        self._check_host(addr, out.size)
        out[:] = self.data[off:off + out.size]

    def _check_host(self, addr, nbytes):
        a = self.find(addr)
        if a is None or a.freed or int(addr) + nbytes > a.address + a.size:
            raise CudaError(f"a copy of {nbytes} bytes at 0x{int(addr):x} does not fit in device memory: "
                            f"the address is {self.describe(addr, nbytes)}.", "cudaErrorInvalidValue")


OS_PAGE = mmap.PAGESIZE             # the system's page (madvise, mremap); PAGE is cudaMalloc's 2 MiB
RELEASE_BYTES = 1 << 20             # freed blocks this large give their pages back (_give_back_pages)
MADV_DONTNEED, MADV_REMOVE = 4, 9   # Linux's madvise advice numbers


MREMAP_MAYMOVE, MREMAP_FIXED, MREMAP_DONTUNMAP = 1, 2, 4    # Linux's mremap flags (DONTUNMAP from 5.7)
MOVE_LIMIT = 4096                   # page moves a process makes (DeviceMemory._take_held_pages)
_moves = [0]                        # moves made so far


def _mremap(source: int, length: int, dest: int) -> int:
    """Move ``length`` bytes of pages from ``source`` to ``dest`` (page-aligned addresses), leaving the
    source mapped and empty: 0, or -1 where refused (an older kernel, another system: the caller then
    gives the pages back as before)."""
    if not sys.platform.startswith("linux"):
        return -1
    try:
        fn = _mremap.fn
    except AttributeError:
        try:
            fn = ctypes.CDLL(None, use_errno=True).mremap
            fn.restype = ctypes.c_void_p
            fn.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int, ctypes.c_void_p)
        except (OSError, AttributeError):
            fn = None
        _mremap.fn = fn
    if fn is None:
        return -1
    got = fn(source, length, length, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, dest)
    return 0 if got == dest else -1


def _madvise(address: int, length: int, advice: int) -> int:
    """libc's madvise on raw addresses (0, or -1 where refused); -1 where there is no libc to ask."""
    try:
        libc = _madvise.libc
    except AttributeError:
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        except (OSError, AttributeError):
            libc = None
        _madvise.libc = libc
    return -1 if libc is None else libc.madvise(ctypes.c_void_p(address), ctypes.c_size_t(length), advice)


# Python's mmap module names MAP_NORESERVE only from 3.13; before, Linux's value on the usual machines.
# Without it the reservation is charged against the commit limit in full, and a process holding a
# few of them (a test worker that ran many programs) can no longer fork: its children fail with ENOMEM
MAP_NORESERVE = getattr(mmap, "MAP_NORESERVE", 0x4000 if sys.platform.startswith("linux") and platform.machine() in (
    "x86_64", "i686", "i386", "aarch64", "arm64", "armv7l", "riscv64", "s390x") else 0)


def reserve(nbytes: int):
    """``nbytes`` of zeroed memory as a numpy array that costs pages only where written: a private
    anonymous mapping without swap reserved for it (MAP_NORESERVE), as a whole program's arena is a
    memfd mapped at its full size (programs/server.py). None where the system refuses it (a strict
    overcommit policy, a 32-bit address space); the arena then grows by copying."""
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | MAP_NORESERVE
    try:
        return np.frombuffer(mmap.mmap(-1, nbytes, flags=flags), np.uint8)
    except (OSError, ValueError, OverflowError):
        return None
