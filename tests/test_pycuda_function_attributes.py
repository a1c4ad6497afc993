"""A PyCUDA kernel's attributes (``func.num_regs``, ``shared_size_bytes``, ``local_size_bytes``, and the
same through ``get_attribute``): course programs print them next to a launch to talk about occupancy.
They come from the real compiler's report for the kernel, as PyCUDA's come from the driver."""
import pytest

import cudalab.numba

STAGED = r"""
__global__ void staged(float *values)
{
    __shared__ float tile[64];
    tile[threadIdx.x] = values[threadIdx.x];
    __syncthreads();
    values[threadIdx.x] = tile[63 - threadIdx.x];
}
"""


@pytest.fixture
def pycuda():
    cudalab.numba.install()
    import pycuda
    import pycuda.autoinit  # noqa: F401
    yield pycuda
    cudalab.numba.uninstall()


def test_a_functions_attributes_are_numbers(pycuda):
    import pycuda.driver as drv
    from pycuda.compiler import SourceModule
    staged = SourceModule(STAGED).get_function("staged")
    assert staged.shared_size_bytes == 64 * 4
    assert isinstance(staged.num_regs, int) and 1 <= staged.num_regs <= 255
    assert staged.local_size_bytes >= 0 and staged.const_size_bytes == 0
    assert staged.max_threads_per_block == 1024
    assert staged.get_attribute(drv.function_attribute.NUM_REGS) == staged.num_regs
    assert staged.get_attribute(drv.function_attribute.SHARED_SIZE_BYTES) == 256


def test_an_occupancy_record_names_what_limits_the_blocks(pycuda):
    """pycuda.tools.OccupancyRecord, as lessons on launch shapes print it: blocks and warps an SM holds
    and which resource runs out first (the emulated device's own calculator gives the numbers)."""
    from pycuda.tools import DeviceData, OccupancyRecord
    device = DeviceData()
    plain = OccupancyRecord(device, 256)
    assert (plain.limited_by, plain.occupancy) == ("warps", 1.0)
    assert plain.warps_per_mp == plain.tb_per_mp * 8
    assert [name for _, name in plain.tb_per_mp_limits] == ["warps", "device"]
    heavy = OccupancyRecord(device, 256, registers=64)            # 64 registers a thread: half the SM
    assert (heavy.limited_by, heavy.occupancy) == ("regs", 0.5)
    assert OccupancyRecord(device, 128, shared_mem=48 * 1024).limited_by == "smem"
    with pytest.raises(ValueError, match="at most 1024 threads"):
        OccupancyRecord(device, 2048)
