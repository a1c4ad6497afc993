"""The closed form of a block's address check (regions.affine) keeps each widening's own slope.

``x[i]`` with ``i = blockIdx.x * blockDim.x + threadIdx.x`` is ``mul.wide.s32 %rd, %r_i, 4``: the check
that ``i`` did not wrap between the block's first and last thread compares ``i`` itself, whose slope
in threadIdx.x is 1, not the product's 4. With 4 the check failed in every block and each block's
addresses were taken thread by thread (a 2^20-thread reduction's native time about 1.5 times as long).
"""
import cudalab
from cudalab.emulator import regions
from cudalab.emulator.engine import K_BRA, DeviceMemory, Program

LOAD = r"""
__global__ void load(int* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = 7;
}
"""


def test_a_widened_index_is_checked_with_the_index_s_slope():
    m = cudalab.compile(LOAD)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel("load").mangled)
    code = df.code
    accesses = [p for p in range(len(code)) if code[p][2].opcode == "st"]
    insts = [code[p][2] for p in range(accesses[0]) if code[p][0] != K_BRA]
    slopes, widen = regions.affine(insts, accesses, code, set())
    assert list(slopes.values()) == [4]                   # the address steps 4 bytes a thread
    wide = [w for ws in widen.values() for w in ws]
    assert wide and all(k == 1 for _, _, k in wide)       # the index that is widened steps 1
