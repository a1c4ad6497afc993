"""Float atomicAdd into one variable, interpreted: each lane's old value as one lane after another.

``total += x[i]`` by every thread (a reduction's first try, a dot product's last step) puts every
lane of a batch on one address. The interpreter sums such a run with one numpy accumulate, where a
float32 sum is what the GPU's adds give while every value is a normal number or zero; a run that
meets a subnormal sum (flushed to zero in global memory) or an overflow is summed lane by lane.
"""
import time

import numpy as np
import pytest

import cudalab

SUM_INTO_ONE = r"""
__device__ float total;
__global__ void sum_into_one(const float* x, float* seen, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) seen[i] = atomicAdd(&total, x[i]);
}
"""


def one_after_another(start, values):
    """The old values and the final sum of float32 adds in lane order, flushing subnormals as global
    memory's atomics do."""
    tiny = np.finfo(np.float32).tiny
    flush = lambda v: np.float32(0) if v != 0 and abs(v) < tiny else v   # noqa: E731
    old, acc = [], np.float32(start)
    for v in values:
        old.append(acc)
        with np.errstate(over="ignore"):
            acc = flush(np.float32(flush(acc) + flush(v)))
    return np.array(old, np.float32), acc


def run(values, monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "interp")
    m = cudalab.compile(SUM_INTO_ONE)
    x = cudalab.to_device(values)
    seen = cudalab.device_array(values.size, np.float32)
    t0 = time.process_time()
    m.sum_into_one[(values.size + 255) // 256, 256](x, seen, np.int32(values.size))
    return seen.copy_to_host(), m.get_global("total").copy_to_host()[0], time.process_time() - t0


def test_every_lane_sees_the_sum_of_the_lanes_before_it(monkeypatch):
    values = np.random.default_rng(7).standard_normal(1 << 17).astype(np.float32)
    seen, total, seconds = run(values, monkeypatch)
    old, want = one_after_another(0, values)
    assert seen.tobytes() == old.tobytes() and np.float32(total).tobytes() == want.tobytes()
    assert seconds < 1.0            # one numpy step per lane took 1.4 s


@pytest.mark.parametrize("values", [
    [1.5e-38, -1.4e-38, 2.0, -2.0, 1e-39],          # a sum that becomes subnormal is flushed to zero
    [3e38, 3e38, -3e38, 1.0],                        # an overflow to infinity stays infinite
], ids=["subnormal sum", "overflow"])
def test_a_run_that_leaves_the_normal_numbers_is_summed_lane_by_lane(values, monkeypatch):
    values = np.array(values * 64, np.float32)
    seen, total, _ = run(values, monkeypatch)
    old, want = one_after_another(0, values)
    assert seen.tobytes() == old.tobytes() and np.float32(total).tobytes() == want.tobytes()
