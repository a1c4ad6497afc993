"""Gangs over shared memory (sixty round 19): a loop that only reads shared memory, run by eight lanes side
by side (regiongen.RegionBuilder._gang), where lane after lane each thread's chain of divisions waited
on itself at every step. The shape is a bisection's Sturm count (the cuda-samples' eigenvalues): the
block loads a chunk of the matrix between barriers, and the threads that still hold an interval count,
each over the whole chunk. The threads part at ``if (tid < active)``, so the region with cuts stops
there and the plain region inside it runs the loop: that region now builds gangs too."""
import numpy as np
import pytest

import cudalab
from test_compiled import both_tiers, gangs_built, same_in_both_tiers

STURM = r"""
__global__ void count_below(const float* d, const float* s, const float* xs, unsigned* counts,
                            float* last, int n, unsigned active) {
    __shared__ float sd[64], ss[64];
    float x = xs[blockIdx.x * blockDim.x + threadIdx.x];
    float delta = 1.0f;
    unsigned count = 0, rem = n;
    for (unsigned i = 0; i < n; i += blockDim.x) {
        __syncthreads();
        if (i + threadIdx.x < n) { sd[threadIdx.x] = d[i + threadIdx.x]; ss[threadIdx.x] = s[i + threadIdx.x]; }
        __syncthreads();
        if (threadIdx.x < active)                       // the threads part: some have converged
            for (unsigned k = 0; k < min(rem, blockDim.x); ++k) {
                delta = sd[k] - x - (ss[k] * ss[k]) / delta;
                count += (delta < 0) ? 1 : 0;
            }
        rem -= blockDim.x;
    }
    counts[blockIdx.x * blockDim.x + threadIdx.x] = count;
    last[blockIdx.x * blockDim.x + threadIdx.x] = delta;    // NaN lanes: the GPU's one NaN, 0x7fffffff
}
__global__ void window_sum(float* out, int m, int off) {
    __shared__ float w[64];
    w[threadIdx.x] = threadIdx.x * 0.5f;
    __syncthreads();
    float acc = 0.0f;
    if (threadIdx.x < 60)
        for (int k = 0; k < m; ++k) acc += w[k + off];  // off + m past 64: a read beyond the block's array
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def _sturm_args(n=200, blocks=3, active=45):
    rng = np.random.default_rng(19)
    xs = rng.uniform(-3, 3, blocks * 64).astype(np.float32)
    xs[[5, 70]] = np.nan                                # a NaN travels the whole chain
    d = rng.uniform(-2, 2, n).astype(np.float32)
    d[17] = np.inf                                      # inf - inf on the way: a NaN made from numbers
    s = rng.uniform(-1, 1, n).astype(np.float32)
    return lambda: [d, s, xs, np.zeros(blocks * 64, np.uint32),
                    np.zeros(blocks * 64, np.float32), np.int32(n), np.uint32(active)]


def test_a_sturm_count_over_shared_memory_runs_in_gangs(tmp_path, monkeypatch):
    """The count loop's lanes go side by side; same bytes and counts as the interpreter's lock step,
    NaN bits included (the chain's NaN is made canonical where it is stored, not at every step)."""
    assert gangs_built(STURM, "count_below", tmp_path, monkeypatch, _sturm_args()(), 3, 64)
    args = same_in_both_tiers(monkeypatch, STURM, "count_below", 3, 64, _sturm_args())
    last = args[4].view(np.uint32)
    assert last[5] == 0x7FFFFFFF and last[70] == 0x7FFFFFFF
    assert args[3][45:64].max() == 0 and args[3][:45].max() > 0     # the threads past `active` counted nothing


@pytest.mark.parametrize("active", [0, 7, 8, 64])
def test_gangs_with_any_number_of_counting_threads_give_the_same_bytes(active, monkeypatch):
    """Threads that stay: none, fewer than a gang, one gang, the whole block (and a chunk of 200 = 3 x 64
    + 8, so the last chunk's loop is shorter than the block)."""
    same_in_both_tiers(monkeypatch, STURM, "count_below", 3, 64, _sturm_args(active=active))


def test_a_shared_read_past_the_array_in_a_gang_names_the_line_and_thread(monkeypatch):
    """The gang's check of the highest shared address fails before the iteration that would read past the
    block's 64 floats; the lanes go on alone and the first to fault is reported as the interpreter does."""
    m = cudalab.compile(STURM)

    def run():
        out = cudalab.to_device(np.zeros(128, np.float32))
        m.window_sum[2, 64](out, np.int32(40), np.int32(30))
        return out.copy_to_host()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"]
    assert "__shared__ read of size 4 bytes" in got["compiled"][0] and "line 28" in got["compiled"][0]


def test_a_shared_window_inside_the_array_sums_alike(monkeypatch):
    args = same_in_both_tiers(monkeypatch, STURM, "window_sum", 2, 64,
                              lambda: [np.zeros(128, np.float32), np.int32(30), np.int32(20)])
    assert args[0][0] == sum(k * 0.5 for k in range(20, 50)) and args[0][60] == 0
