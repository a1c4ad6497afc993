"""A loop with barriers that reads ``volatile`` shared memory along the way is one native region with cuts;
a loop that waits on such memory (its exit decided by what it read) is not.

The cuda-samples' scan keeps its tree in ``volatile uint *s_Data`` and loops ``offset <<= 1`` with two
``__syncthreads()`` a turn. The rule that keeps a spinning loop out of a region with cuts (a block whose
threads each wait their own way would stop there) took any volatile load for a spin, so scan's loop ran its
barriers and branches interpreted between small native pieces: 17% of its thread-instructions."""
import sys
from pathlib import Path

import numpy as np

import cudalab
from cudalab.emulator import compiled, regions
from cudalab.emulator.engine import K_BRA, DeviceMemory, Program, _DecodeContext

sys.path.insert(0, str(Path(__file__).parent))

VOLATILE_SCAN = r"""
__global__ void scan_blocks(const unsigned *in, unsigned *out, unsigned size)
{
    __shared__ unsigned buf[2 * 256];
    volatile unsigned *s = buf;
    unsigned t = threadIdx.x;
    unsigned pos = 2 * t - (t & (size - 1));
    s[pos] = 0;
    pos += size;
    unsigned v = in[blockIdx.x * blockDim.x + t];
    s[pos] = v;
    for (unsigned offset = 1; offset < size; offset <<= 1) {
        __syncthreads();
        unsigned sum = s[pos] + s[pos - offset];
        __syncthreads();
        s[pos] = sum;
    }
    out[blockIdx.x * blockDim.x + t] = s[pos] - v;
}
"""

WAITS_FOR_A_FLAG = r"""
__global__ void wait_then_copy(volatile int *flag, const int *in, int *out)
{
    __shared__ int seen;
    int turns = 0;
    do {
        __syncthreads();
        if (threadIdx.x == 0) seen = *flag;
        __syncthreads();
        turns++;
    } while (seen == 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = in[threadIdx.x] + turns;
}
"""


def _function(source, kernel):
    m = cudalab.compile(source)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel(kernel).mangled)
    info = compiled._compilable(df, _DecodeContext(df.func, prog.module, df.param_offsets))
    spans = regions.find(df, info, compiled.liveness(df)[1], regions.cuts(df, info))
    backs = [pc for pc, c in enumerate(df.code) if c[0] == K_BRA and c[3] is not None and c[3] <= pc]
    return df, spans, backs


def test_a_loop_reading_volatile_shared_memory_between_barriers_is_one_region_with_cuts():
    df, spans, backs = _function(VOLATILE_SCAN, "scan_blocks")
    assert len(backs) == 1 and not regions.waits_on_memory(df.code, df.code[backs[0]][3], backs[0])
    assert any(s <= df.code[backs[0]][3] and backs[0] < e for s, e in spans)


def test_a_loop_that_waits_on_a_flag_it_reads_is_kept_out_of_regions_with_cuts():
    df, spans, backs = _function(WAITS_FOR_A_FLAG, "wait_then_copy")
    back = backs[0]
    assert regions.waits_on_memory(df.code, df.code[back][3], back)
    assert not any(s <= df.code[back][3] and back < e for s, e in spans)


def test_the_volatile_scan_gives_the_same_bytes_and_counts_in_both_tiers(monkeypatch):
    from test_compiled import same_in_both_tiers
    rng = np.random.default_rng(4)
    x = rng.integers(0, 1000, 6 * 256).astype(np.uint32)
    for size in (8, 64, 256):
        out = same_in_both_tiers(monkeypatch, VOLATILE_SCAN, "scan_blocks", 6, 256,
                                 lambda: [x, np.zeros_like(x), np.uint32(size)])[1]
        want = np.concatenate([np.cumsum(r) - r for r in x.reshape(-1, size)])
        assert out.tolist() == want.tolist()


def test_the_flag_wait_runs_in_both_tiers_when_the_flag_is_set(monkeypatch):
    from test_compiled import same_in_both_tiers
    x = np.arange(64, dtype=np.int32)
    same_in_both_tiers(monkeypatch, WAITS_FOR_A_FLAG, "wait_then_copy", 3, 64,
                       lambda: [np.ones(1, np.int32), x, np.zeros(3 * 64, np.int32)])
