"""The device arena is reserved address space, not committed memory.

A pytest worker or a notebook kernel runs many programs, each with an arena of several GiB reserved
for it. Were those reservations charged against the system's commit limit, the process would soon
be refused a fork (``OSError: [Errno 12] Cannot allocate memory`` when it starts the next program),
though it uses little memory."""
import re
import sys

import pytest

from cudalab.emulator import memory

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")


def vm_flags_at(address: int) -> set[str]:
    """The kernel's VmFlags of the mapping that holds ``address``."""
    inside = False
    for line in open("/proc/self/smaps"):
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) ", line)
        if m:
            inside = int(m[1], 16) <= address < int(m[2], 16)
        elif inside and line.startswith("VmFlags:"):
            return set(line.split()[1:])
    raise AssertionError("no mapping holds the address")


@linux_only
def test_a_reserved_arena_is_not_charged_against_the_commit_limit():
    arena = memory.reserve(8 << 30)            # twice the emulated device's memory, never touched
    flags = vm_flags_at(arena.ctypes.data)
    assert "nr" in flags                        # MAP_NORESERVE: pages are taken only where written
    assert "ac" not in flags                    # so the 8 GiB are not counted as committed


@linux_only
def test_a_device_keeps_its_arena_uncharged_after_it_grows():
    mem = memory.DeviceMemory()
    address = mem.alloc(64 << 20)               # past the 16 MiB the arena starts with
    assert mem.data.size >= 64 << 20
    assert "ac" not in vm_flags_at(mem.data.ctypes.data + address - memory.GLOBAL_BASE)
