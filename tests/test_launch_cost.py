"""What a warm launch does in Python, besides running the kernel (bench/launch_python.py times it).

A program that launches a small kernel 10^5 times pays the launch's Python every time, so a warm
launch makes no import statement (each costs 1 to 3 us), reads the CPU clock only where a number
needs it (each reading is a system call), and asks nothing about running batches side by side when
its grid is one batch. These tests count those things; the time itself is the benchmark's business.
"""
import builtins
import time

import numpy as np
import pytest

import cudalab
from cudalab.emulator import engine, pace as pace_mod, parallel
from cudalab.emulator.engine import LaunchStats
from cudalab.emulator.pace import Pace

SCALE = r"""
extern "C" __global__ void scale(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
"""


@pytest.fixture
def scale(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    return cudalab.compile(SCALE).get_kernel("scale")


def count_imports(monkeypatch, launch, times=20):
    """The import statements ``times`` calls of ``launch`` make: (name, importing module, names from it)."""
    imported = []
    real = builtins.__import__

    def counting(name, *args, **kwargs):
        where = (args[0] or {}).get("__name__") if args else kwargs.get("globals", {}).get("__name__")
        imported.append((name, where, tuple(args[2] or ()) if len(args) > 2 else ()))
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", counting)
    for _ in range(times):
        launch()
    monkeypatch.undo()
    return imported


def test_a_warm_launch_imports_nothing(scale, monkeypatch):
    x = cudalab.to_device(np.arange(256, dtype=np.float32))
    y = cudalab.device_array(256, np.float32)
    scale[1, 256](y, x, np.float32(2.0), np.int32(256))          # the first launch builds and imports
    # (20 launches made 200 imports before launch round 18, at c6734d4)
    assert count_imports(monkeypatch, lambda: scale[1, 256](y, x, np.float32(3.0), np.int32(256))) == []
    assert np.array_equal(y.copy_to_host(), 3 * np.arange(256, dtype=np.float32))


def test_a_launch_imports_nothing_while_a_texture_object_lives(scale, monkeypatch):
    """Native code finds the texture objects through the launch's context; filling in its slots
    imported llvmgen at every launch once any texture object existed (in CI, one an earlier test left)."""
    texture = cudalab.texture(cudalab.cuda_array(np.ones((4, 4), np.float32)))
    x = cudalab.to_device(np.arange(256, dtype=np.float32))
    y = cudalab.device_array(256, np.float32)
    scale[1, 256](y, x, np.float32(2.0), np.int32(256))
    assert count_imports(monkeypatch, lambda: scale[1, 256](y, x, np.float32(3.0), np.int32(256))) == []
    assert texture is not None and np.array_equal(y.copy_to_host(), 3 * np.arange(256, dtype=np.float32))


def test_a_grid_of_one_batch_does_not_ask_whether_batches_could_run_side_by_side(scale, monkeypatch):
    x = cudalab.to_device(np.ones(4096, dtype=np.float32))
    y = cudalab.device_array(4096, np.float32)
    scale[16, 256](y, x, np.float32(1.0), np.int32(4096))
    asked = []
    real = engine._window
    monkeypatch.setattr(engine, "_window", lambda *a: asked.append(a) or real(*a))
    scale[16, 256](y, x, np.float32(5.0), np.int32(4096))          # 16 blocks: one batch
    assert asked == []
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 256)              # 4 blocks a batch: several
    monkeypatch.setattr(engine.compiled, "WHOLE_KERNEL_LANES", 4 * 256)
    scale[16, 256](y, x, np.float32(7.0), np.int32(4096))
    assert len(asked) >= 1
    assert np.all(y.copy_to_host() == 7.0)


def test_a_batch_run_on_this_thread_is_timed_from_the_clock_the_caller_read():
    ran = []
    b = parallel.Batch(ex=None, run_df=None, info=None, nb=1)
    before = time.thread_time()
    parallel.run(b, ran.append, now=before - 1.0)        # as if the caller had read the clock a second ago
    assert ran == [b] and b.error is None
    assert b.seconds >= 1.0                              # counted from the clock it was given
    assert before <= b.ended <= time.thread_time()       # the clock at its end, for pace.batch_done
    assert b.user == 0.0                                 # user time is a worker's batch's only


def test_the_system_clock_is_read_before_a_batch_only_where_an_estimate_follows(monkeypatch):
    reads = []
    monkeypatch.setattr(pace_mod, "system_seconds", lambda: reads.append(1) or 0.0)
    one = Pace("k", 8, 10.0, float("inf"), LaunchStats())
    assert list(one.batches(8)) == [(0, 8)]
    assert reads == []                                   # one batch: nothing is estimated after it
    three = Pace("k", 24, 10.0, float("inf"), LaunchStats())
    three.known_pace = True                              # no sample batch
    assert list(three.batches(8)) == [(0, 8), (8, 8), (16, 8)]
    assert len(reads) == 2                               # before the first two, not the last


def test_a_pace_whose_batches_began_unrecorded_leaves_no_system_time_out(monkeypatch):
    monkeypatch.setattr(pace_mod, "system_seconds", lambda: 5.0)     # the thread's system time so far
    p = Pace("k", 100, 1000.0, float("inf"), LaunchStats())
    p.per_batch = 10
    p.batch_done(10, 2.0, now=p.start)                  # 10 of 100 blocks in 2 s, no start of it recorded
    assert p.estimate == pytest.approx(18.0, abs=0.01)


def test_a_kernels_static_shared_bytes_are_worked_out_once():
    k = cudalab.compile(r"""
    __global__ void tile(float *y) {
        __shared__ float t[256];
        __shared__ double u[8];
        t[threadIdx.x] = threadIdx.x;
        __syncthreads();
        if (threadIdx.x < 8) u[threadIdx.x] = t[255 - threadIdx.x];
        __syncthreads();
        y[threadIdx.x] = t[threadIdx.x] + (threadIdx.x < 8 ? u[threadIdx.x] : 0.0);
    }""").get_kernel("tile")
    y = cudalab.device_array(256, np.float32)
    first = k[1, 256](y)
    second = k[1, 256](y)
    assert first.static_shared == second.static_shared == 256 * 4 + 8 * 8
    prog = k.module.program(cudalab.runtime.device.current())
    assert prog.function(k.mangled).__dict__["_static_shared"] == 256 * 4 + 8 * 8


def test_an_array_of_the_wrong_type_is_refused_after_right_ones_passed():
    twice = cudalab.compile(r"""
    __global__ void twice(float *y, const float *x) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }
    """).get_kernel("twice")
    x = cudalab.to_device(np.ones(256, dtype=np.float32))
    y = cudalab.device_array(256, np.float32)
    twice[1, 256](y, x)           # float32 arrays for float*: kept as passing
    twice[1, 256](y, x)
    with pytest.raises(cudalab.LaunchError, match=r"points to float values \(float32\), but the array you passed "
                                                    r"holds float64"):
        twice[1, 256](y, cudalab.to_device(np.ones(256, dtype=np.float64)))
    assert np.all(y.copy_to_host() == 2.0)


BLOCK_SUM = r"""
__global__ void block_sum(const int *x, int *out, int n) {
    __shared__ int s[128];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k >>= 1) {
        if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = s[0];
}
"""


@pytest.mark.parametrize("tier", ["interp", "compiled"])
def test_a_grids_last_smaller_batch_runs_on_a_prefix_of_the_full_batches_geometry(tier, monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", tier)
    monkeypatch.setenv("CUDALAB_THREADS", "1")                         # batches one after another, as planned
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 128)               # 4 blocks a batch
    monkeypatch.setattr(engine.compiled, "WHOLE_KERNEL_LANES", 4 * 128)
    monkeypatch.setattr(engine, "_GEOMETRY", {})
    k = cudalab.compile(BLOCK_SUM).get_kernel("block_sum")
    x = np.arange(11 * 128 - 5, dtype=np.int32)                        # 11 blocks, the last one short
    out = cudalab.device_array(11, np.int32)
    for _ in range(2):          # batches of 1 (a sample), 4, 4 and 2 blocks
        k[11, 128](cudalab.to_device(x), out, np.int32(x.size))
        want = np.add.reduceat(np.append(x, np.zeros(5, np.int32)), np.arange(0, 11 * 128, 128))
        assert np.array_equal(out.copy_to_host(), want)
    shapes = {key[0]: g for key, g in engine._GEOMETRY.items()}
    assert 4 in shapes and 2 in shapes                                 # batches of 4, 4 and 2 blocks
    assert np.shares_memory(shapes[2][0], shapes[4][0])                 # the 2-block batch's lanes: the 4's first
    assert np.array_equal(shapes[2][5], shapes[4][5][:2 * 128])


# ---- launch19: the CPU clock a warm launch reads, and where its Python parameters are packed

def count_clock_reads(monkeypatch, launch, times=10):
    """thread_time() calls (each a system call) over ``times`` calls of ``launch``."""
    reads = []
    real = time.thread_time

    def counting():
        reads.append(1)
        return real()

    monkeypatch.setattr(time, "thread_time", counting)
    for _ in range(times):
        launch()
    monkeypatch.undo()
    return len(reads)


def test_a_warm_one_block_launch_reads_the_cpu_clock_three_times(scale, monkeypatch):
    """The launch's start (its watchdog), its batch's start and end: not around the tier's pick of code
    that is ready, nor again for the grid state's deadline or the kernel's pace (at 384d1a7: 6 a launch)."""
    x = cudalab.to_device(np.arange(256, dtype=np.float32))
    y = cudalab.device_array(256, np.float32)
    for _ in range(2):
        scale[1, 256](y, x, np.float32(2.0), np.int32(256))
    assert count_clock_reads(monkeypatch, lambda: scale[1, 256](y, x, np.float32(5.0), 256)) == 30
    assert np.array_equal(y.copy_to_host(), 5 * np.arange(256, dtype=np.float32))


def test_a_programs_launch_record_has_its_cpu_time_from_the_engines_clock(tmp_path):
    """A whole program's launch records carry their CPU seconds (programs/stopping.py tells a stopped
    program's pace from them), now from the clock reads the engine makes anyway."""
    from cudalab.programs import run_program_source
    src = SCALE.replace('extern "C" ', "") + r"""
#include <cstdio>
int main() {
    float *x, *y;
    cudaMalloc(&x, 4096 * sizeof(float));
    cudaMalloc(&y, 4096 * sizeof(float));
    for (int k = 0; k < 3; k++) scale<<<16, 256>>>(y, x, 2.0f, 4096);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
"""
    r = run_program_source(src, folder=tmp_path)
    assert r.stdout.strip() == "done" and len(r.launches) == 3
    for rec in r.launches:
        assert 0 < rec.cpu_time < 5.0


def test_a_progress_bar_that_shows_nothing_yet_is_not_handed_a_progress_record(monkeypatch):
    """A young launch's bar draws nothing, so the pace makes no Progress record for it; a hook of
    one's own (no ``quiet``) still hears of every batch."""
    from cudalab.runtime.progress import Bar
    made = []
    real = Pace.progress
    monkeypatch.setattr(Pace, "progress", lambda self, now=None: made.append(1) or real(self, now))
    bar = Bar("k")
    pace = Pace("k", 4, 10.0, float("inf"), LaunchStats(), bar)
    pace.per_batch = 2
    pace.batch_done(2, 0.001, now=time.thread_time())
    pace.batch_done(2, 0.001, now=time.thread_time())
    assert made == [] and bar.bar is None
    heard = []
    pace = Pace("k", 4, 10.0, float("inf"), LaunchStats(), heard.append)
    pace.per_batch = 2
    pace.batch_done(2, 0.001, now=time.thread_time())
    pace.batch_done(2, 0.001, now=time.thread_time())
    assert [p.blocks_done for p in heard] == [2, 4]


def test_a_launch_hides_numpys_float_warnings_and_gives_the_callers_setting_back(scale, monkeypatch):
    """A kernel's x / 0 or overflow is the kernel's business, not a numpy warning, however it runs;
    after the launch numpy warns as the caller asked (the launch sets numpy's state for itself only)."""
    import warnings
    monkeypatch.setenv("CUDALAB_TIER", "interp")
    x = cudalab.to_device(np.array([1e38, 3e38] * 128, np.float32))
    y = cudalab.device_array(256, np.float32)
    before = np.geterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scale[1, 256](y, x, np.float32(1e30), np.int32(256))
    assert np.isinf(y.copy_to_host()).all()
    assert np.geterr() == before


def test_a_kernel_launched_again_alike_runs_on_its_last_context_and_a_changed_launch_on_a_new_one(scale, monkeypatch):
    """The native code's context (memory, bounds, parameters, the batch's shared and local memory) of
    the last launch serves the next alike; new arguments or a new allocation make a new one, and each
    launch computes with its own values."""
    from cudalab.emulator import compiled
    seen = []
    real = compiled._context
    monkeypatch.setattr(compiled, "_context", lambda ex, symbols: seen.append(real(ex, symbols)) or seen[-1])
    x = cudalab.to_device(np.arange(256, dtype=np.float32))
    y = cudalab.device_array(256, np.float32)
    for _ in range(3):
        scale[1, 256](y, x, np.float32(2.0), np.int32(256))
    assert seen[-1] is seen[-2]
    scale[1, 256](y, x, np.float32(4.0), np.int32(256))             # other parameter bytes
    assert seen[-1] is not seen[-2]
    assert np.array_equal(y.copy_to_host(), 4 * np.arange(256, dtype=np.float32))
    z = cudalab.to_device(np.ones(256, np.float32))                 # an allocation: new bounds
    scale[1, 256](y, z, np.float32(4.0), np.int32(256))
    assert seen[-1] is not seen[-2]
    assert np.array_equal(y.copy_to_host(), np.full(256, 4, np.float32))
