"""A kernel whose body is one ``ret`` does nothing a program can see: an empty ``__global__`` function
of a launch-overhead lesson, or one whose work nvcc removed because nothing stores its result (a
Japanese course's constant-memory demo reads 81 constants into a variable nobody uses, over a grid
of 2^30 threads, 1000 times). The emulator counts it as its batches would, without building them."""
import time

import cudalab
from cudalab.emulator.events import Observer

SOURCE = r"""
__constant__ int table[81];
__global__ void unused_reads(int n) {
    int v;
    if (threadIdx.x < n) for (int i = 0; i < 81; i++) v = table[i];
}
__global__ void writes(int *out) { if (threadIdx.x == 0) out[blockIdx.x] = blockIdx.x; }
"""


def test_an_empty_kernel_over_a_billion_threads_is_counted_without_running_its_batches():
    mod = cudalab.compile(SOURCE)
    k = mod.get_kernel("unused_reads")
    k[(32, 32), 1024](1024)                 # warm: decoding and the launch plan
    start = time.thread_time()
    for _ in range(40):
        rec = k[(32, 32, 1024), (32, 32)](1024)
    # 8,192 batches each before: 126 to 137 ms a launch here, 6 ms now
    assert time.thread_time() - start < 1.5
    assert rec.thread_instructions == 2 ** 30    # one ret a thread


def test_the_counts_are_those_the_batches_give():
    mod = cudalab.compile(SOURCE)
    k = mod.get_kernel("unused_reads")
    quick = k[4096, 256](256)
    watched = k.launch(4096, 256, (256,), observers=[Observer()])     # an observer sees every batch run
    assert (quick.instructions, quick.thread_instructions) == (watched.instructions, watched.thread_instructions)


def test_a_kernel_that_stores_still_runs():
    mod = cudalab.compile(SOURCE)
    out = cudalab.device_array(64, "int32")
    mod.get_kernel("writes")[64, 32](out)
    assert list(out.copy_to_host()) == list(range(64))
