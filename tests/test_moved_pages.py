"""A copy into a new array takes the pages of the array dropped before the last launch.

A timing loop that copies its arguments to the device again before every launch frees the old copies
at the launch and copies into new addresses (freed memory is quarantined, so a use after free is still
reported). The new array's pages used to be faulted in and zeroed by the system while the old ones were
handed back; now the old block's pages move under the new one (``DeviceMemory._take_held_pages``), and
the old addresses read as zeros, exactly as after a give-back.
"""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import memory as arena
from cudalab.emulator.memory import DeviceMemory

SIZE = 4 << 20


def offset(memory, addr):
    return addr - arena.GLOBAL_BASE


def dropped_before_a_launch(memory, addr):
    """Free ``addr`` the way a launch frees the arrays a program dropped: pages held until the next alloc."""
    memory.hold_pages = True
    memory.free(addr)
    memory.hold_pages = False


@pytest.fixture
def memory():
    m = DeviceMemory(limit=1 << 30)
    if not m._movable():
        pytest.skip("no anonymous reservation here: the arena grows by copying")
    return m


def test_a_whole_copy_into_a_new_array_takes_the_dropped_arrays_pages(memory):
    old = memory.alloc(SIZE)
    memory.write(old, np.full(SIZE, 7, np.uint8))
    dropped_before_a_launch(memory, old)
    new = memory.alloc(SIZE)
    assert new != old                                     # quarantine: a new address all the same
    moves = arena._moves[0]
    payload = np.arange(SIZE, dtype=np.uint32).astype(np.uint8)
    memory.write(new, payload)
    assert arena._moves[0] == moves + 1
    assert np.array_equal(memory.read(new, SIZE), payload)
    start = offset(memory, old)
    assert not memory.data[start:start + SIZE].any()      # the old block reads zeros, as after a give-back
    with pytest.raises(cudalab.CudaError, match="free"):
        memory.read(old, 16)                              # and is still a use after free


def test_a_new_array_nobody_copies_into_reads_zeros_and_the_held_pages_go_back(memory):
    old = memory.alloc(SIZE)
    memory.write(old, np.full(SIZE, 9, np.uint8))
    dropped_before_a_launch(memory, old)
    zeros = memory.alloc(SIZE)                            # cudalab.device_array: no copy follows
    other = memory.alloc(1 << 10)                         # the next allocation gives the held block back
    assert not memory._held
    assert not memory.read(zeros, SIZE).any()
    assert not memory.data[offset(memory, old):offset(memory, old) + SIZE].any()
    memory.free(other)


def test_a_copy_into_part_of_the_new_array_moves_nothing(memory):
    old = memory.alloc(SIZE)
    memory.write(old, np.full(SIZE, 3, np.uint8))
    dropped_before_a_launch(memory, old)
    new = memory.alloc(SIZE)
    moves = arena._moves[0]
    memory.write(new, np.ones(SIZE // 2, np.uint8))
    assert arena._moves[0] == moves
    got = memory.read(new, SIZE)
    assert got[:SIZE // 2].all() and not got[SIZE // 2:].any()


WARP_SUM = r"""
__global__ void warp_sums(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}
"""


def test_a_loop_that_copies_its_arguments_before_each_launch_keeps_its_memory_and_its_sums(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")      # built at the first launch, not in a thread meanwhile
    kernel = cudalab.compile(WARP_SUM).get_kernel("warp_sums")
    n = 1 << 20
    rng = np.random.default_rng(5)
    before = moves = 0
    for turn in range(8):
        if turn == 2:                                     # after the first launches' own tables
            with open("/proc/self/statm") as f:
                before = int(f.read().split()[1]) * 4096
            moves = arena._moves[0]
        x = rng.integers(-50, 50, n, dtype=np.int32)
        d_x, d_out = cudalab.to_device(x), cudalab.to_device(np.zeros(n // 32, np.int32))
        kernel[n // 256, 256](d_x, d_out, np.int32(n))
        assert np.array_equal(d_out.copy_to_host(), x.reshape(-1, 32).sum(axis=1))
        del d_x, d_out
    with open("/proc/self/statm") as f:
        grown = int(f.read().split()[1]) * 4096 - before
    assert grown < 6 * n * 4 // 2                         # the old copies did not stay resident
    if arena._moves[0] < arena.MOVE_LIMIT and DeviceMemory(limit=1 << 20)._movable():
        assert arena._moves[0] > moves                    # the copies took the dropped arrays' pages


def test_an_allocation_above_1_mib_takes_whole_2_mib_pages_as_cudamalloc_does(memory):
    """The arena's two page sizes: an H200's cudaMalloc spaces 3 MiB blocks 4 MiB apart (the 2 MiB page,
    ``memory.PAGE``), while pages given back or moved are the system's (``OS_PAGE``). A second
    definition of PAGE as the system's page had made large blocks 4 KiB apart."""
    assert arena.padded_size(3_000_000) == 4 << 20 and arena.padded_size(3 << 20) == 4 << 20
    first = memory.alloc(3_000_000)
    second = memory.alloc(3_000_000)
    assert second - first == 4 << 20
    assert arena.OS_PAGE == __import__("mmap").PAGESIZE
