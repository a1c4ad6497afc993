"""The emulator's clock64(), clock() and %globaltimer count the kernel's own progress.

A GPU's clock counts its SM's cycles: work timed between two reads shows its cycles, and a kernel that
spins ``while (clock64() - t0 < n)`` ends after ``n`` cycles whatever the host does. The emulator's
clock counts 4 cycles a batch-level instruction, and for a loop that waits on it (the same instruction
reading it again within a few instructions) the CPU time of the thread running the batch, at the
device's clock rate: a pause of the host (another program taking the core, a thread holding the
interpreter) is not the kernel's time, so a spin makes as many turns, and the timeline sees the same
wait, at any load.
"""
import time

import numpy as np
import pytest

import cudalab
from cudalab.emulator.events import Observer

SPIN = r"""
__global__ void spin(long long cycles, long long *out) {
    long long t0 = clock64(), t = t0, turns = 0;
    while (t - t0 < cycles) { t = clock64(); turns++; }
    out[0] = turns;
    out[1] = t - t0;
}
__global__ void timed(long long *took, float *x) {
    long long t0 = clock64();
    float v = threadIdx.x;
    for (int i = 0; i < 500; i++) v = v * 0.999f + 1.0f;
    long long t1 = clock64();
    x[threadIdx.x] = v;
    if (threadIdx.x == 0) *took = t1 - t0;
}
__global__ void reads(long long *out, int n) {
    // clock64 and %globaltimer read turn about in one thread, with a little work between
    float v = threadIdx.x;
    for (int i = 0; i < n; i++) {
        unsigned long long g;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
        out[2 * i] = clock64();
        out[2 * i + 1] = (long long) g;
        v = v * 0.5f + 1.0f;
    }
    if (v < 0) out[0] = 0;
}
"""


class HostPauses(Observer):
    """Sleeps a millisecond at every 50th instruction: the host not running the kernel, as a busy
    machine pauses it, without costing the thread CPU time."""

    def __init__(self, pause=0.001):
        self.pause, self.seen = pause, 0

    def on_instruction(self, ev):
        self.seen += 1
        if self.pause and self.seen % 50 == 0:
            time.sleep(self.pause)


@pytest.fixture(scope="module")
def mod():
    return cudalab.compile(SPIN)


def spin(mod, cycles, pause):
    out = cudalab.device_array(2, np.int64)
    rec = mod.spin.launch(1, 1, (np.int64(cycles), out), observers=[HostPauses(pause)])
    turns, took = out.copy_to_host()
    return int(turns), int(took), rec


def test_a_pause_of_the_host_is_not_the_kernels_time(mod):
    # 2 ms of an emulated GPU's cycles; every turn of the loop is about 5 instructions, so the observer
    # sleeps once every 10 turns: on the host's clock those sleeps (1 ms each) would end the spin in a turn
    cycles = 2_000_000
    steady, _, _ = spin(mod, cycles, pause=0.0)
    paused, took, rec = spin(mod, cycles, pause=0.001)
    assert took >= cycles
    assert paused > steady / 3, (paused, steady)


def test_a_spin_shows_its_cycles_as_the_kernels_wait_on_the_timeline(mod):
    cycles = 2_000_000
    _, took, rec = spin(mod, cycles, pause=0.001)
    khz = cudalab.device_properties()["clockRate"]
    # the wait is the spin's cycles at the device's clock, not the (much longer) sleeps of the host
    assert rec.clock_wait_us == pytest.approx(took * 1000 / khz, rel=0.01)
    assert took < 1.5 * cycles


def test_clock64_is_monotonic_in_a_thread_and_globaltimer_counts_the_same_time(mod):
    n = 50
    out = cudalab.device_array(2 * n, np.int64)
    mod.reads[1, 32](out, np.int32(n))
    v = out.copy_to_host().reshape(n, 2)
    clock, timer = v[:, 0], v[:, 1]
    assert (np.diff(clock) > 0).all()
    assert (np.diff(timer) >= 0).all()
    # the timer's nanoseconds and the clock's cycles between the first and last reads are one span
    span_ns = timer[-1] - timer[0]
    span_cycles = clock[-1] - clock[0]
    assert span_ns > 0
    assert abs(time.time_ns() - timer[-1]) < 60e9        # nanoseconds of the host's time of day
    khz = cudalab.device_properties()["clockRate"]
    assert span_ns == pytest.approx(span_cycles * 1e6 / khz, rel=0.05)


def test_each_launch_reads_a_clock_of_its_own_that_clock_can_count_on_for_a_while(mod):
    # an SM's clock counts from its reset, not from the kernel's start: a seed taken from clock64()
    # differs from launch to launch, and the 32-bit clock() starts low enough not to wrap in a spin
    starts = []
    for _ in range(3):
        out = cudalab.device_array(2, np.int64)
        mod.reads[1, 1](out, np.int32(1))
        starts.append(int(out.copy_to_host()[0]))
    assert len(set(starts)) == 3, starts
    assert all(0 <= s < 2**31 for s in starts), starts


def test_work_timed_between_two_reads_shows_its_modelled_cycles(mod):
    # the clock sample's way (a read before and after the work): 4 cycles an instruction of the work,
    # the same every run, not the emulator's pace (millions of cycles on the CPU's or the host's time)
    took = []
    for _ in range(2):
        out, x = cudalab.device_array(1, np.int64), cudalab.device_array(64, np.float32)
        mod.timed[1, 64](out, x)
        took.append(int(out.copy_to_host()[0]))
    assert took[0] == took[1]
    assert 500 * 4 <= took[0] <= 500 * 10 * 4              # 500 turns of an unrolled loop, 1 to 10 instructions each
