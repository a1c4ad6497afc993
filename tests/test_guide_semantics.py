"""Device functions of the Programming Guide and the Math API that tests/kernels/guide.py found the
emulator getting wrong, one readable example each (the corpus cases hold the GPU's recorded bits)."""
import numpy as np

import cudalab


def test_float2_and_float4_atomic_add_are_elementwise_atomics():
    """sm_90's atomicAdd(float2*, float2) is atom.global.add.v2.f32: each element is its own atomic
    add, and the instruction returns the old pair."""
    src = r'''
    __global__ void add_pairs(const float* x, float2* pair, float4* quad, float2* old) {
      int i = threadIdx.x;
      old[i] = atomicAdd(&pair[i & 1], make_float2(x[i], 2.0f * x[i]));
      atomicAdd(quad, make_float4(1.0f, x[i], -x[i], (float)i));
    }'''
    x = np.arange(64, dtype=np.float32)
    pair, quad, old = np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(128, np.float32)
    cudalab.compile(src, options=["-arch=compute_90"]).get_kernel("add_pairs")[1, 64](x, pair, quad, old)
    even, odd = x[0::2].sum(), x[1::2].sum()
    assert pair.tolist() == [even, 2 * even, odd, 2 * odd]
    assert quad.tolist() == [64.0, x.sum(), -x.sum(), x.sum()]
    firsts = old.reshape(64, 2)[:, 0]           # every thread saw a distinct running sum of its slot
    assert sorted(firsts[0::2].tolist()) == sorted(np.concatenate(([0], np.cumsum(x[0::2])[:-1])).tolist())
