"""curand_init with a seed only known at run time and no subsequence or offset.

A book's Monte Carlo integrator seeds each thread with ``curand_init(clock() + tid, 0, 0, &state)``.
Knowing the jump distances are zero, the compiler drops those two parameters from the skip-ahead
function of cudalab's curand front and calls it with five: the emulator's native answer, written for
the seven the front declares, failed inside ('list index out of range'). Such a call runs the function
the compiler left instead."""
import numpy as np

import cudalab

DRAW = r"""
#include <curand_kernel.h>
extern "C" __global__ void draw(float *out)
{
    curandState s;
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    curand_init((unsigned long long) clock() + tid, 0ULL, 0ULL, &s);
    out[tid] = curand_uniform(&s);
}
"""


def test_a_jump_the_compiler_specialized_runs_as_the_function_it_left():
    module = cudalab.compile(DRAW)
    call = module.compiled.ptx.split("cudalab_xorwow_jump,", 1)[1].split(")", 1)[0]
    assert call.count("param") == 5                        # the case at hand: two of the seven dropped
    out = np.zeros(64, np.float32)
    module.get_kernel("draw")[1, 64](out)
    assert 0 < out.min() and out.max() <= 1 and len(set(out.tolist())) == 64
