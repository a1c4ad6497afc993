"""PyCUDA's memory pools (``pycuda.tools.DeviceMemoryPool``, ``PageLockedMemoryPool``, ``bitlog2``).

A program that allocates and frees arrays of the same sizes over and over (an iterative solver's
temporaries) hands PyCUDA's pool's ``allocate`` to its GPUArrays: a freed block is not given back to
the driver but held in a *bin* and handed out again for the next request of that bin. A bin holds
every size with the same leading bits: the size's base-2 exponent and, below its leading one, the next
``leading_bits_in_bin_id`` bits (4 by default), so a block is at most 1/16 larger than asked. Programs
and PyCUDA's own tests read the bins (``bin_number``, ``alloc_size``) and the counts (``held_blocks``,
``active_blocks``, ``managed_bytes``, ``active_bytes``), so they are computed here as PyCUDA's C++
computes them. When the device is full, the pool frees what it holds and tries once more, as PyCUDA's
does, before the driver's out-of-memory error reaches the program.
"""
from __future__ import annotations

import weakref

from . import driver


def bitlog2(n: int) -> int:
    """The position of the highest set bit of ``n`` (``bitlog2(17) == 4``); 0 for 0, as PyCUDA's table gives."""
    n = int(n)
    if n < 0:
        raise OverflowError(f"bitlog2 takes a size, not the negative number {n}")
    return n.bit_length() - 1 if n else 0


def _shift_left(x: int, by: int) -> int:
    return x << by if by >= 0 else x >> -by


class _Bins:
    """What PyCUDA's memory_pool<> keeps: the bins of held blocks, the counts, the holding switch."""

    def __init__(self, leading_bits_in_bin_id: int = 4):
        self.leading_bits = int(leading_bits_in_bin_id)
        self.bins: dict[int, list] = {}
        self.held_blocks = self.active_blocks = self.managed_bytes = self.active_bytes = 0
        self.holding = True

    def bin_number(self, size: int) -> int:
        """The bin of a request of ``size`` bytes: its exponent, then the bits below its leading one."""
        size = int(size)
        exponent = bitlog2(size)
        shifted = _shift_left(size, self.leading_bits - exponent)
        mantissa = shifted & ((1 << self.leading_bits) - 1)
        return exponent << self.leading_bits | mantissa

    def alloc_size(self, bin_nr: int) -> int:
        """The bytes a block of bin ``bin_nr`` has: the largest size whose bin it is."""
        bin_nr = int(bin_nr)
        exponent, mantissa = bin_nr >> self.leading_bits, bin_nr & ((1 << self.leading_bits) - 1)
        ones = _shift_left(1, exponent - self.leading_bits)
        ones = ones - 1 if ones else 0
        head = _shift_left((1 << self.leading_bits) | mantissa, exponent - self.leading_bits)
        return head | ones

    # -- the pool's bookkeeping; ``new(bytes)`` and ``release(block)`` talk to the allocator
    def take(self, size: int, new, release):
        """A block for ``size`` bytes: a held one of its bin, else a new one of the bin's size."""
        bin_nr = self.bin_number(size)
        held = self.bins.setdefault(bin_nr, [])
        if held:
            block = held.pop()
            self.held_blocks -= 1
        else:
            block = self._new(bin_nr, new, release)
            self.managed_bytes += self.alloc_size(bin_nr)
        self.active_blocks += 1
        self.active_bytes += size
        return block

    def _new(self, bin_nr: int, new, release):
        """A new block from the allocator; while the device is full, held blocks are freed, largest first."""
        while True:
            try:
                return new(self.alloc_size(bin_nr))
            except driver.MemoryError:
                if not self._free_one(release):
                    raise

    def give(self, block, size: int, release):
        self.active_blocks -= 1
        self.active_bytes -= size
        bin_nr = self.bin_number(size)
        if self.holding:
            self.bins.setdefault(bin_nr, []).append(block)
            self.held_blocks += 1
        else:
            release(block)
            self.managed_bytes -= self.alloc_size(bin_nr)

    def _free_one(self, release) -> bool:
        """Free one held block of the largest bin (PyCUDA's try_to_free_memory); False if none is held."""
        for bin_nr in sorted(self.bins, reverse=True):
            if self.bins[bin_nr]:
                release(self.bins[bin_nr].pop())
                self.held_blocks -= 1
                self.managed_bytes -= self.alloc_size(bin_nr)
                return True
        return False

    def free_held(self, release):
        while self._free_one(release):
            pass


class _Pool:
    """The Python face both pools share."""

    def __init__(self, leading_bits_in_bin_id: int = 4):
        self._bins = _Bins(leading_bits_in_bin_id)

    def bin_number(self, size) -> int:
        return self._bins.bin_number(size)

    def alloc_size(self, bin_nr) -> int:
        return self._bins.alloc_size(bin_nr)

    held_blocks = property(lambda self: self._bins.held_blocks)
    active_blocks = property(lambda self: self._bins.active_blocks)
    managed_bytes = property(lambda self: self._bins.managed_bytes)
    active_bytes = property(lambda self: self._bins.active_bytes)

    def free_held(self):
        """Give every held block back to the driver."""
        self._bins.free_held(self._release)

    def stop_holding(self):
        """Free the held blocks, and from now on give freed blocks straight back."""
        self._bins.holding = False
        self.free_held()

    @staticmethod
    def _release(block):
        block.free()


class PooledDeviceAllocation:
    """A block from ``DeviceMemoryPool.allocate``: ``int()`` is its address (kernels, GPUArrays and copies
    take it), ``len()`` the bytes asked for; ``free()``, or dropping the last reference, returns it to the
    pool."""

    def __init__(self, pool, block, size):
        self._pool, self._block, self.size = pool, block, int(size)
        self._finalizer = weakref.finalize(self, pool._bins.give, block, self.size, pool._release)

    def __int__(self):
        return int(self._block)

    __index__ = __int__

    def __len__(self):
        return self.size

    def __add__(self, offset):
        return int(self) + int(offset)

    __radd__ = __add__

    def free(self):
        self._finalizer()

    def __repr__(self):
        return f"<PooledDeviceAllocation of {self.size} bytes at 0x{int(self):x}>"


class DeviceMemoryPool(_Pool):
    """PyCUDA's pool of device memory: pass ``pool.allocate`` as a GPUArray's ``allocator``."""

    def allocate(self, size) -> PooledDeviceAllocation:
        size = int(size)
        block = self._bins.take(size, driver.mem_alloc, self._release)
        return PooledDeviceAllocation(self, block, size)


class PageLockedMemoryPool(_Pool):
    """PyCUDA's pool of page-locked host arrays: ``allocate(shape, dtype, order="C")`` gives a numpy array."""

    def allocate(self, shape, dtype, order="C"):
        return driver.pagelocked_empty(shape, dtype, order)
