"""The watchdog of a launch whose batches run on several threads: it counts the launch's busiest thread.

A launch's native batches run on worker threads at once (emulator/parallel.py). Its time is the
launching thread's CPU seconds plus the most one worker spent (or all the workers' seconds shared out
over the cores, where threads outnumber cores): about the wall time on free cores, never the CPU time
of every thread added up. So a launch that two threads finish within the limit is not stopped for
what both spent, a spinning block on a worker still stops at the limit, and the watchdog's message
and estimate tell that same time. Batches are made small (a few blocks each) so that a small grid
has many of them.
"""
import time

import numpy as np
import pytest

import cudalab
from cudalab import KernelError
from cudalab.emulator import compiled, engine, parallel
from cudalab.emulator.engine import LaunchStats
from cudalab.emulator.pace import Pace

BLOCK = 128


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * BLOCK)            # 4 blocks a batch
    monkeypatch.setattr(compiled, "WHOLE_KERNEL_LANES", 4 * BLOCK)
    monkeypatch.setattr(parallel, "MIN_SECONDS", 0.0)                # however short the launch
    monkeypatch.setattr(parallel, "cores", lambda: 2)               # two free cores, whatever the machine
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    cudalab.set_watchdog(10)
    yield
    cudalab.set_watchdog(10)


def a_pace(timeout=10.0):
    return Pace("k", 100, timeout, float("inf"), LaunchStats())


def test_a_launch_is_timed_by_its_busiest_thread_not_by_all_its_threads_together():
    pace = a_pace()
    pace.cores = 4
    pace.workers.update({1: 3.0, 2: 2.5, 3: 2.0})          # CPU seconds three workers spent on its batches
    assert 3.0 <= pace.spent() < 3.1                       # the busiest worker (and this thread's moment)
    assert 7.5 <= pace.cpu_seconds() < 7.6                 # what the machine spent
    assert not pace.time_is_up()
    pace.cores = 2                                         # three threads on two cores take longer than any one
    assert 3.75 <= pace.spent() < 3.85
    pace.workers[1] = 10.5
    assert pace.time_is_up()


def test_the_estimate_shares_the_rest_of_the_grid_out_over_the_threads_that_will_run_it():
    alone, shared = a_pace(timeout=1000), a_pace(timeout=1000)
    for pace, ways in ((alone, 1), (shared, 4)):
        pace.per_batch = 10
        pace.batch_done(10, 2.0, now=pace.start, ways=ways)     # 10 of 100 blocks took 2 s
    assert alone.estimate == pytest.approx(18.0, abs=0.01)          # 90 blocks at 0.2 s each, one after another
    assert shared.estimate == pytest.approx(4.5, abs=0.01)          # ... four at a time


BUSY = r"""
extern "C" __global__ void busy(float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < n; ++k)
        s = s * 0.999f + (float)(k ^ i);
    y[i] = s;
}
"""


def timed(monkeypatch, threads, kernel, blocks, *args):
    """(the launch's error or None, this process's CPU seconds) of one launch on ``threads`` threads."""
    monkeypatch.setenv("CUDALAB_THREADS", str(threads))
    c0 = time.process_time()
    try:
        kernel[blocks, BLOCK](*args)
    except KernelError as e:
        return e, time.process_time() - c0
    return None, time.process_time() - c0


def test_a_launch_two_threads_finish_in_time_is_not_stopped_for_the_cpu_time_of_both(monkeypatch):
    blocks = 128
    k = cudalab.compile(BUSY).get_kernel("busy")
    y = cudalab.device_array(blocks * BLOCK, np.float32)
    n = np.int32(2000)
    timed(monkeypatch, 1, k, blocks, y, n)                              # builds the native code
    for _ in range(3):      # enough work that the threads' start-up and the machine's noise are a small part
        error, alone = timed(monkeypatch, 1, k, blocks, y, n)
        if alone > 0.6:
            break
        n = np.int32(n * max(2, int(0.8 / max(alone, 0.01))))
    expected = y.copy_to_host()
    cudalab.set_watchdog(0.7 * alone)
    error, _ = timed(monkeypatch, 1, k, blocks, y, n)
    assert error is not None and error.code == "cudaErrorLaunchTimeout"     # one thread: over its limit
    y2 = cudalab.device_array(blocks * BLOCK, np.float32)
    error, both = timed(monkeypatch, 2, k, blocks, y2, n)
    assert error is None, str(error)            # two threads: each well within it, though together over it
    assert both > 0.7 * alone                   # (they did spend more CPU time than the limit, in all)
    assert np.array_equal(y2.copy_to_host(), expected)


SPIN = r"""
extern "C" __global__ void spins(const int *flags, int *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    long long k = 0;
    if (blockIdx.x == 50)
        while (flags[k & 1] == 0) ++k;       // flags are zeros: block 50 never gets out
    out[i] = (int)k + i;
}
"""


def test_a_block_spinning_on_a_worker_stops_at_the_limit_and_the_message_tells_that_time(monkeypatch):
    blocks = 64
    limit = 1.0
    k = cudalab.compile(SPIN).get_kernel("spins")
    out = cudalab.device_array(blocks * BLOCK, np.int32)
    timed(monkeypatch, 2, k, blocks, cudalab.to_device(np.ones(2, np.int32)), out)      # builds the native code
    cudalab.set_watchdog(limit)
    error, cpu = timed(monkeypatch, 2, k, blocks, cudalab.to_device(np.zeros(2, np.int32)), out)
    assert error is not None and error.code == "cudaErrorLaunchTimeout"
    assert "block (50,0,0)" in str(error)
    assert f"ran for more than {limit:g} s and was stopped by the watchdog" in str(error)
    # the launch's time is its busiest thread's: the spinning worker's limit, not a share of it
    assert limit <= error.progress.seconds < limit + 0.5
    assert f"after {error.progress.seconds:.1f} s" in str(error)
    assert cpu < 2 * limit + 1.0                # and no thread ran on past it
    cudalab.set_watchdog(10)
    launch_ok, _ = timed(monkeypatch, 2, k, blocks, cudalab.to_device(np.ones(2, np.int32)), out)
    assert launch_ok is None                    # the next launch works
    assert np.array_equal(out.copy_to_host(), np.arange(blocks * BLOCK))


def test_a_launch_records_the_cpu_time_of_all_its_threads():
    """A launch's record (``cpu_time``, which a stopped program's account adds up) is what every thread
    spent on it, where the watchdog's time is its busiest thread's."""
    pace = a_pace()
    pace.cores = 2
    pace.workers.update({1: 3.0, 2: 2.5})
    now = pace.began + 0.5                                 # the launching thread's own half second
    assert pace.total_cpu(now) == pytest.approx(6.0)
    assert pace.spent(now) == pytest.approx(3.5)


def test_a_launch_record_counts_the_batches_its_workers_ran(monkeypatch):
    """The record's CPU time is the launch's on every thread (a stopped program adds these up): with
    batches on two threads, it is most of what the process spent, not the launching thread's part."""
    blocks = 64
    k = cudalab.compile(BUSY).get_kernel("busy")
    y = cudalab.device_array(blocks * BLOCK, np.float32)
    timed(monkeypatch, 2, k, blocks, y, np.int32(100))                      # builds the native code
    monkeypatch.setenv("CUDALAB_THREADS", "2")
    c0 = time.process_time()
    rec = k[blocks, BLOCK](y, np.int32(12000))
    spent = time.process_time() - c0
    assert 0.7 * spent <= rec.cpu_time <= 1.05 * spent + 0.01
