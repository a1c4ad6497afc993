"""Freed device memory gives its pages back to the system.

Freed blocks are quarantined (not handed out again while the arena has room, so a use after free
is reported), and the arena's room is the device's memory plus as much again for page-locked host
memory. A benchmark that allocates and frees a large table for every size it times climbed through
all of it with every old page still resident: 9 GB of a shared machine for a 4 GiB device.
"""
import numpy as np

from cudalab.emulator.memory import RELEASE_BYTES, DeviceMemory


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_a_large_freed_block_reads_zeros_and_no_longer_holds_its_pages():
    memory = DeviceMemory(limit=1 << 30)
    before = resident_bytes()
    size = 64 << 20
    a = memory.alloc(size)
    start = a - min(memory.allocs)                          # the first allocation sits at the arena's start
    memory.data[start:start + size] = 7
    assert resident_bytes() - before > size // 2            # the block's pages are the process's now
    memory.free(a)
    assert resident_bytes() - before < size // 4            # ... and given back on free
    assert not memory.data[start:start + size].any()
    b = memory.alloc(1 << 20)                               # the arena goes on as before
    assert b != a and memory.allocs[a].freed


def test_a_small_freed_block_keeps_its_bytes_for_the_messages_that_quote_them():
    memory = DeviceMemory(limit=1 << 30)
    a = memory.alloc(RELEASE_BYTES // 4)
    start = a - min(memory.allocs)
    memory.data[start:start + 16] = 5
    memory.free(a)
    assert (memory.data[start:start + 16] == 5).all()
