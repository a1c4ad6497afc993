"""The watchdog's message for a grid that runs as one batch in lock step.

Such a batch ends no block before the watchdog stops it (every thread of a hash table's insert takes
a bucket's lock in turn, lane by lane, inside a grid-stride loop), so no block's pace can be scaled
to the grid, and its loops wait on memory the kernel writes, so they cannot be counted ahead. The
message then says plainly that it cannot tell how long the grid would take, with what it does know:
the work done, its rate, and what the threads were waiting on, taking turns (slow) or stuck; or,
where the work without the waits at the locks is well above what has run, that as a lower bound.
"""
import re

import numpy as np
import pytest

import cudalab

HASH_INSERT = r"""
__global__ void insert(const unsigned *keys, int n, int *heads, int *next, int *locks, int buckets)
{
    for (int tid = blockIdx.x * blockDim.x + threadIdx.x; tid < n; tid += blockDim.x * gridDim.x) {
        int b = keys[tid] % buckets;
        for (int i = 0; i < 32; i++) {
            if (threadIdx.x % 32 == i) {                       // one lane of the warp at a time
                while (atomicCAS(&locks[b], 0, 1) != 0) ;      // take the bucket's lock
                next[tid] = heads[b];
                heads[b] = tid;
                __threadfence();
                atomicExch(&locks[b], 0);                      // give it back
            }
        }
    }
}
"""

LOCK_NEVER_GIVEN_BACK = "__global__ void take(int *lock, int *out) {\n" \
                        "  while (atomicCAS(lock, 0, 1) != 0) { }\n" \
                        "  out[threadIdx.x] = 1; }"


@pytest.fixture(autouse=True)
def short_watchdog():
    cudalab.set_watchdog(0.5)
    yield
    cudalab.set_watchdog(10)


def insert_keys(n, buckets):
    keys = np.random.default_rng(1).integers(0, 1 << 30, n).astype(np.uint32)
    insert = cudalab.compile(HASH_INSERT).get_kernel("insert")
    with pytest.raises(cudalab.KernelError) as e:
        insert[8, 256](keys, np.int32(n), np.full(buckets, -1, np.int32), np.zeros(n, np.int32),
                       np.zeros(buckets, np.int32), np.int32(buckets))
    return e.value.progress, str(e.value)


def assert_slow_not_stuck(message):
    assert "It had finished 0 of its 8 blocks" in message and "thread-instructions at" in message
    handed = re.search(r"take a lock in a loop at line 8 \(an atomicCAS\), one thread at a time: the wait ended "
                       r"for a thread ([\d,]+) times", message)
    assert handed and int(handed[1].replace(",", "")) > 0
    assert "It is slow, not stuck. To let it finish: make the problem smaller" in message
    assert "Does a loop there ever end?" not in message


def test_a_lock_step_batch_with_many_keys_gets_the_least_it_needs():
    """Its skeleton (emulator/forecast.py) goes round each lock loop once, as if every lock were
    free: the waits left out, the count is a lower bound, told when well above the work done."""
    p, message = insert_keys(1 << 22, 1024)      # 4 million keys: 2^20 took 2.7 s of CPU here when let run
    assert p.blocks_done == 0 and p.forecast_partial
    assert p.estimated_thread_instructions > 2 * p.thread_instructions
    assert re.search(r"The whole grid needs more than [\d.]+ (million|billion) thread-instructions: more than", message)
    assert_slow_not_stuck(message)


def test_a_lock_step_batch_whose_time_goes_to_waiting_at_one_lock_cannot_tell():
    """Every key in one bucket: the waits are the work, and the skeleton's count without them is
    below what the threads have already run, so the message says plainly that it cannot tell."""
    # 2^13 keys: the skeleton's count (about 1.5 million) stays well under the work a loaded machine runs
    # before the watchdog (3.8 to 6.4 million seen); with 2^16 keys (about 12 million) it was only just under
    p, message = insert_keys(1 << 13, 1)
    assert p.blocks_done == 0 and p.estimated_seconds is None and p.thread_instructions > 0
    assert "How long the whole grid would take cannot be told: all 8 of its blocks run together, as one batch" \
        in message
    assert_slow_not_stuck(message)


def test_a_lock_no_thread_gives_back_is_called_stuck():
    take = cudalab.compile(LOCK_NEVER_GIVEN_BACK).get_kernel("take")
    with pytest.raises(cudalab.KernelError) as e:
        take[2, 32](np.ones(1, np.int32), np.zeros(64, np.int32))    # the host holds the lock
    message = str(e.value)
    assert "cannot be told: both of its blocks run together" in message
    assert re.search(r"take a lock in a loop at line 2 \(an atomicCAS\), and in [\d,]+ turns of that loop no thread "
                     r"got through: is the lock ever given back", message)
    assert "Does a loop there ever end?" in message and "slow, not stuck" not in message


# books13: a loop steered by __syncthreads_count (bar.red.popc), whose result the skeleton must compute, over
# the whole block (it waits for every warp), not leave as a no-op that ends the loop at its first test
VOTE_NEVER_DONE = """
__global__ void never_done(int *out)
{
    bool done = false;
    do {
        // a Japanese course's exercise, its blank not yet filled in: nothing sets done
    } while (__syncthreads_count(!done) != 0);
    out[threadIdx.x] = 1;
}
"""

VOTE_ROUNDS = """
__global__ void rounds(float *out, int n)
{
    int i = 0;
    float acc = threadIdx.x;
    do {
        #pragma unroll
        for (int j = 0; j < 64; j++) acc = acc * 0.999f + 1.0f;
        i++;
    } while (__syncthreads_count(i < n) != 0);
    out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}
"""


def test_a_loop_on_a_block_vote_that_never_changes_is_not_given_a_tiny_estimate():
    kernel = cudalab.compile(VOTE_NEVER_DONE).get_kernel("never_done")
    with pytest.raises(cudalab.KernelError) as e:
        kernel[10, 320](np.zeros(3200, np.int32))
    message = str(e.value)
    assert "The whole grid needs" not in message          # it was "about 38,400 thread-instructions: 0.00014 s"
    assert "cannot be told: all 10 of its blocks run together" in message
    assert "at line 7. Does a loop there ever end?" in message         # the line of its while (...)


def test_a_loop_on_a_block_vote_is_counted_ahead_with_every_warp_of_the_block():
    n = 3000
    kernel = cudalab.compile(VOTE_ROUNDS).get_kernel("rounds")
    with pytest.raises(cudalab.KernelError) as e:
        kernel[10, 320](np.zeros(3200, np.float32), np.int32(n))
    p = e.value.progress
    assert p.blocks_done == 0 and p.forecast_thread_instructions is not None
    # each of the 3200 threads goes round n times, 64 multiply-adds and a few instructions of loop each time
    assert p.thread_instructions < p.forecast_thread_instructions <= 3200 * n * 72
    assert p.forecast_partial or p.forecast_thread_instructions >= 3200 * n * 64
    assert re.search(r"The whole grid needs (about|more than) [\d.]+ (million|billion) thread-instructions", str(e.value))
