"""What a launch leaves behind, and what it takes on from before, is no more than it must.

A launch's objects go when it returns (no reference cycles for the garbage collector to find later,
whose sweeps cost a small launch 20 to 30 us on average), and the arrays a program dropped before a
launch are freed before the kernel runs (a stale pointer to one is a use after free) but give their
pages back to the system at the next allocation, not inside the launch.
"""
import gc

import numpy as np
import pytest

import cudalab
from cudalab.errors import KernelError
from cudalab.runtime import arrays, device as devices

COPY = r"""
__global__ void copy(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + __shfl_xor_sync(0xffffffff, x[i], 1);
}
"""


def resident_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.parametrize("tier", ["interp", "compiled"])
def test_a_launch_leaves_no_cycles_for_the_garbage_collector(tier, monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", tier)
    k = cudalab.compile(COPY).get_kernel("copy")
    x, y = cudalab.to_device(np.arange(1024, dtype=np.int32)), cudalab.device_array(1024, np.int32)
    k[4, 256](x, y, np.int32(1024))
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        for _ in range(3):
            k[4, 256](x, y, np.int32(1000))
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage if type(o).__module__.startswith("cudalab")]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []
    assert y.copy_to_host()[999] == 999 + 998 and y.copy_to_host()[1000] == 1000 + 1001


def test_arrays_dropped_before_a_launch_give_their_pages_back_at_the_next_allocation():
    k = cudalab.compile(COPY).get_kernel("copy")
    arena = devices.current().memory
    n = 4 << 20                                              # 16 MiB of int32
    x = cudalab.to_device(np.ones(n, np.int32))
    y = cudalab.device_array(n, np.int32)
    k[n // 256, 256](x, y, np.int32(n))
    stale = x.device_ptr
    del x                                                    # dropped: freed before the next launch
    k[n // 256, 256](y, y, np.int32(16))
    assert arena.allocs[stale].freed                         # freed before the kernel ran, its pages
    held = resident_bytes()                                  # still the process's ...
    z = cudalab.device_array(16, np.int32)                   # ... until the next allocation
    assert held - resident_bytes() > (n * 4) // 2
    arrays.release_dropped()
    with pytest.raises(KernelError, match="free"):           # a stale pointer: a use after free
        with cudalab.check("memcheck"):
            k[1, 32](cudalab.DeviceArray((16,), np.int32, ptr=stale, owned=False), z, np.int32(16))
