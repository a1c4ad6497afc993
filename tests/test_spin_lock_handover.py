"""A lock taken by one thread of each block is handed over after a few turns of the waiting loop.

The emulator runs a batch's blocks in lock step; a thread that took a lock leaves the spin loop and
waits at the loop's end while the others go on spinning, so after some turns the emulator lets it
run ahead (independent thread scheduling: engine._let_waiting_threads_run). A loop that tries to
take a lock with atomicCAS or atomicExch gets that after SPIN_LOCK_LIMIT turns with no thread
leaving, instead of the 512 any loop waits: the CUDA Handbook's spinlockReduction takes a global
lock 16,384 times and paid 512 interpreted turns per hand-over.
"""
import numpy as np

import cudalab

SRC = r"""
extern "C" __global__ void locked_sum(double *sum, int *lock, const double *in, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
        if (threadIdx.x == 0) {
            while (atomicCAS(lock, 0, 1)) ;       // take the lock
            __threadfence();
            *sum += in[i];
            __threadfence();
            atomicExch(lock, 0);                  // give it back
        }
    }
}

// a compare-and-swap update loop (no lock): a thread leaves it at every turn
extern "C" __global__ void float_max(float *best, const float *in)
{
    float v = in[blockIdx.x * blockDim.x + threadIdx.x];
    int *bits = (int *)best;
    int old = *bits, seen;
    do {
        seen = old;
        if (__int_as_float(seen) >= v) break;
        old = atomicCAS(bits, seen, __float_as_int(v));
    } while (old != seen);
}
"""

BLOCKS = 64


def test_a_global_lock_taken_once_per_block_and_turn_is_handed_over_quickly():
    mod = cudalab.compile(SRC)
    n = BLOCKS * 32 * 4
    values = np.arange(n, dtype=np.float64)
    total = cudalab.to_device(np.zeros(1))
    lock = cudalab.to_device(np.zeros(1, np.int32))
    rec = mod.locked_sum[BLOCKS, 32](total, lock, cudalab.to_device(values), np.int32(n))
    assert total.copy_to_host()[0] == values[::32].sum()       # every leader's 4 turns, none lost
    assert lock.copy_to_host()[0] == 0
    # 256 hand-overs: at 512 turns of the waiting leaders each this was 648,992 instructions (14,000 now)
    assert rec.instructions < 50_000, rec.instructions


def test_a_compare_and_swap_update_loop_still_finds_the_maximum():
    mod = cudalab.compile(SRC)
    rng = np.random.default_rng(3)
    values = rng.standard_normal(BLOCKS * 64).astype(np.float32)
    best = cudalab.to_device(np.full(1, -np.inf, np.float32))
    mod.float_max[BLOCKS, 64](best, cudalab.to_device(values))
    assert best.copy_to_host()[0] == values.max()


CHAINED = r"""
__device__ int ticket = 0, published = 0;

// a single-pass (chained) sum as a Vietnamese course's radix sort has it: each block takes the next
// index, sums its part, waits until the block before it has published, adds its running total
extern "C" __global__ void chained_sums(const int *in, int *running, int per_block)
{
    __shared__ int bid, part;
    if (threadIdx.x == 0) { bid = atomicAdd(&ticket, 1); part = 0; }
    __syncthreads();
    atomicAdd(&part, in[bid * per_block + threadIdx.x]);
    __syncthreads();
    if (threadIdx.x == 0) {
        int before = 0;
        if (bid > 0) {
            while (atomicAdd(&published, 0) < bid) {}      // wait for the block before
            before = running[bid - 1];
        }
        running[bid] = before + part;
        __threadfence();
        atomicAdd(&published, 1);
    }
}
"""


def test_blocks_that_wait_for_the_block_before_them_are_handed_over_quickly():
    mod = cudalab.compile(CHAINED)
    per_block = 64
    values = np.arange(BLOCKS * per_block, dtype=np.int32) % 7
    running = cudalab.to_device(np.zeros(BLOCKS, np.int32))
    rec = mod.chained_sums[BLOCKS, per_block](cudalab.to_device(values), running, np.int32(per_block))
    assert (running.copy_to_host() == np.cumsum(values.reshape(BLOCKS, per_block).sum(axis=1))).all()
    # 63 hand-overs: at 512 turns of the waiting leaders each this was 192,608 instructions (3,608 now)
    assert rec.instructions < 20_000, rec.instructions
