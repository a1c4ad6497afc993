"""Batches of blocks on two threads at once give the bytes of one batch after the other.

A launch's batches run on worker threads where the kernel's blocks cannot see each other's work
(emulator/parallel.py): CUDALAB_THREADS=2 must leave every result, count, warning and error as
CUDALAB_THREADS=1 gives it. Batches here are made small (a few blocks each) so that a small grid has
many of them, and the launch is let go on two threads however short it is.
"""
import numpy as np
import pytest

import cudalab
from cudalab import KernelError
from cudalab.emulator import compiled, engine, parallel

BLOCK = 128


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * BLOCK)            # 4 blocks a batch
    monkeypatch.setattr(compiled, "WHOLE_KERNEL_LANES", 4 * BLOCK)
    monkeypatch.setattr(parallel, "MIN_SECONDS", 0.0)                # however short the launch
    cudalab.set_watchdog(10)
    yield
    cudalab.set_watchdog(10)


@pytest.fixture
def beside(monkeypatch):
    """How many batches went to a worker thread."""
    sent = []
    submit = parallel.submit
    monkeypatch.setattr(parallel, "submit", lambda b, body, n: (sent.append(b.info.first_block), submit(b, body, n)))
    return sent


def launch(monkeypatch, threads, tier, kernel, grid, block, *args):
    monkeypatch.setenv("CUDALAB_THREADS", str(threads))
    monkeypatch.setenv("CUDALAB_TIER", tier)
    return kernel[grid, block](*args)


TILED = r"""
#define T 16
extern "C" __global__ void tiled(const float *a, const float *b, float *c, int n)
{
    __shared__ float sa[T][T], sb[T][T];
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    float sum = 0.0f;
    for (int k = 0; k < n; k += T) {
        sa[threadIdx.y][threadIdx.x] = a[row * n + k + threadIdx.x];
        sb[threadIdx.y][threadIdx.x] = b[(k + threadIdx.y) * n + col];
        __syncthreads();
        for (int j = 0; j < T; ++j)
            sum += sa[threadIdx.y][j] * sb[j][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = sum;
}
"""


@pytest.mark.parametrize("tier", ["compiled", "interp"])
def test_a_tiled_matmul_gives_the_same_bytes_on_one_thread_and_on_two(tier, monkeypatch, beside):
    n = 128                                   # 64 blocks of 256 threads: 16 batches of 4 blocks
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 256)
    monkeypatch.setattr(compiled, "WHOLE_KERNEL_LANES", 4 * 256)
    k = cudalab.compile(TILED).get_kernel("tiled")
    rng = np.random.default_rng(1)
    a, b = (cudalab.to_device(rng.random((n, n), np.float32)) for _ in range(2))
    out, counts = [], []
    for threads in (1, 2, 1, 2):            # (the first launch of each tier may build its native code)
        c = cudalab.device_array((n, n), np.float32)
        rec = launch(monkeypatch, threads, tier, k, (n // 16, n // 16), (16, 16), a, b, c, np.int32(n))
        out.append(c.copy_to_host())
        counts.append(rec.metrics.get("smsp__thread_inst_executed.sum", rec.instructions))
    assert all(np.array_equal(out[0].view(np.uint32), o.view(np.uint32)) for o in out)
    np.testing.assert_allclose(out[0], a.copy_to_host() @ b.copy_to_host(), rtol=1e-4)
    assert counts[1] == counts[3] == counts[2]
    if tier == "compiled":                  # native code leaves the GIL: later batches ran beside the others
        assert beside
    else:                                   # the interpreter holds it: one batch after another
        assert not beside


def test_native_batches_are_counted_by_the_registers_they_hold_so_four_threads_run_four(monkeypatch):
    # the tiled matmul names about a hundred registers (523 bytes a lane) but its native batches make
    # arrays of a few (62 bytes): counted as all of them, the memory for batches in flight
    # (IN_FLIGHT_BYTES) let two run at once, and four threads ran a 2048 product on two (bench/README.md)
    n = 128                                   # 64 blocks of 256 threads: 16 batches of 4 blocks
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 256)
    monkeypatch.setattr(compiled, "WHOLE_KERNEL_LANES", 4 * 256)
    mod = cudalab.compile(TILED)
    k = mod.get_kernel("tiled")
    rng = np.random.default_rng(1)
    a, b = (cudalab.to_device(rng.random((n, n), np.float32)) for _ in range(2))
    threads_asked = []
    submit = parallel.submit
    monkeypatch.setattr(parallel, "submit", lambda b, body, t: (threads_asked.append(t), submit(b, body, t)))
    out = []
    for threads in (1, 4):
        c = cudalab.device_array((n, n), np.float32)
        if threads == 4:        # room for two batches in flight if every register had its array
            df = mod.ptx_module._decoded[mod._mangled("tiled")]
            all_registers = 4 * (256 * (engine.register_bytes(df) + engine.LANE_BYTES) + 2 * 16 * 16 * 4)
            monkeypatch.setattr(parallel, "IN_FLIGHT_BYTES", int(2.5 * all_registers))
        launch(monkeypatch, threads, "compiled", k, (n // 16, n // 16), (16, 16), a, b, c, np.int32(n))
        out.append(c.copy_to_host())
    assert df._native_register_bytes < engine.register_bytes(df) / 4
    assert max(threads_asked) == 4
    assert np.array_equal(out[0].view(np.uint32), out[1].view(np.uint32))


WMMA = r"""
#include <mma.h>
using namespace nvcuda;
extern "C" __global__ void tiles(const half *a, const half *b, float *c)
{
    // every warp multiplies its own 16x16 tiles of a and b: c[w] = a[w] * b[w]
    int w = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a + w * 256, 16);
    wmma::load_matrix_sync(fb, b + w * 256, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c + w * 256, fc, 16, wmma::mem_row_major);
}
"""


def test_tensor_core_tiles_give_the_same_bytes_on_one_thread_and_on_two(monkeypatch, beside):
    blocks = 48                               # 4 warps a block: 192 tiles in 12 batches
    k = cudalab.compile(WMMA).get_kernel("tiles")
    rng = np.random.default_rng(2)
    a, b = (cudalab.to_device((rng.random(blocks * 4 * 256) * 4 - 2).astype(np.float16)) for _ in range(2))
    out = []
    for threads in (1, 2):
        c = cudalab.device_array(blocks * 4 * 256, np.float32)
        # the compiled tier builds the kernel's native code before the launch (the auto tier runs it
        # interpreted, on one thread, until a build of its own ends: a fresh cache's first launches)
        launch(monkeypatch, threads, "compiled", k, blocks, BLOCK, a, b, c)
        out.append(c.copy_to_host())
    assert np.array_equal(out[0].view(np.uint32), out[1].view(np.uint32))
    assert beside                             # (the tensor-core loops leave the GIL too)


FAULTS = r"""
extern "C" __global__ void late(const float *x, float *y, int bad1, int bad2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    if (blockIdx.x == bad1 && threadIdx.x == 3) v = x[i + (1 << 28)];     // far past the array
    if (blockIdx.x == bad2 && threadIdx.x == 5) v = x[i + (1 << 28)];
    y[i] = 2.0f * v;
}
"""


def test_of_two_faulting_blocks_the_earlier_one_is_reported_as_on_one_thread(monkeypatch, beside):
    blocks = 64
    k = cudalab.compile(FAULTS).get_kernel("late")
    x = cudalab.to_device(np.arange(blocks * BLOCK, dtype=np.float32))
    y = cudalab.device_array(blocks * BLOCK, np.float32)
    messages = []
    for threads in (1, 2):
        with pytest.raises(KernelError) as e:
            # block 50 (its batch may end first on another thread) and block 41 fault: 41 is reported
            launch(monkeypatch, threads, "compiled", k, blocks, BLOCK, x, y, np.int32(50), np.int32(41))
        messages.append(str(e.value))
        finding = e.value.findings[0]
        assert (finding.block, finding.thread) == ((41, 0, 0), (5, 0, 0))
    assert messages[0] == messages[1]
    assert any(f <= 41 < f + 4 for f in beside)     # block 41's batch ran on a worker thread (block 50's may have)
    ok = cudalab.device_array(blocks * BLOCK, np.float32)                 # and the next launch works
    launch(monkeypatch, 2, "compiled", k, blocks, BLOCK, x, ok, np.int32(blocks), np.int32(blocks))
    assert np.array_equal(ok.copy_to_host(), 2 * x.copy_to_host())


OVERRUN = r"""
extern "C" __global__ void shift(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    y[i] = x[i] + x[i + 1];          // the last thread reads one past the end: padding a GPU maps
}
"""


def test_a_warning_from_a_late_block_is_worded_and_counted_as_on_one_thread(monkeypatch, beside):
    blocks = 64
    k = cudalab.compile(OVERRUN).get_kernel("shift")
    x = cudalab.to_device(np.arange(blocks * BLOCK, dtype=np.float32))
    found = []
    for threads in (1, 2):
        y = cudalab.device_array(blocks * BLOCK, np.float32)
        rec = launch(monkeypatch, threads, "compiled", k, blocks, BLOCK, x, y, np.int32(blocks * BLOCK))
        found.append([(f.message, f.details.get("threads"), f.block, f.thread) for f in rec.findings])
    assert found[0] == found[1]
    assert found[0][0][2] == (blocks - 1, 0, 0)
    assert beside


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


def test_the_watchdog_stops_a_block_that_spins_on_a_worker_thread(monkeypatch, beside):
    blocks = 64
    cudalab.set_watchdog(1)
    k = cudalab.compile(SPIN).get_kernel("spins")
    flags = cudalab.to_device(np.zeros(2, np.int32))
    out = cudalab.device_array(blocks * BLOCK, np.int32)
    with pytest.raises(KernelError, match="stopped by the watchdog") as e:
        launch(monkeypatch, 2, "compiled", k, blocks, BLOCK, flags, out)
    assert e.value.code == "cudaErrorLaunchTimeout"
    assert "block (50,0,0)" in str(e.value)
    assert any(f <= 50 < f + 4 for f in beside)     # block 50's batch spun on a worker thread
    cudalab.set_watchdog(10)
    flags = cudalab.to_device(np.ones(2, np.int32))                      # the next launch works
    launch(monkeypatch, 2, "compiled", k, blocks, BLOCK, flags, out)
    assert np.array_equal(out.copy_to_host(), np.arange(blocks * BLOCK))


def test_kernels_whose_blocks_can_see_each_other_run_one_batch_after_another():
    def why(src, name):
        mod = cudalab.compile(src)
        from cudalab.emulator.engine import Program
        from cudalab.emulator.memory import DeviceMemory
        return parallel.independent(Program(mod.ptx_module, DeviceMemory()).function(mod._mangled(name)))

    assert why(TILED, "tiled") == ""
    assert why(SPIN, "spins") == ""
    assert "atom" in why('extern "C" __global__ void h(int *b, const int *x) '
                         '{ atomicAdd(&b[x[threadIdx.x] & 15], 1); }', "h")
    assert "call" in why('#include <cstdio>\nextern "C" __global__ void p() { printf("%d\\n", blockIdx.x); }', "p")
    assert "volatile" in why('extern "C" __global__ void f(volatile int *flag) '
                             '{ if (blockIdx.x) while (flag[0] == 0) {} else flag[0] = 1; }', "f")
    assert "membar" in why('extern "C" __global__ void m(float *y) '
                           '{ y[blockIdx.x] = 1; __threadfence(); }', "m")
    # atomics on a block's own shared memory are the block's business: a per-block histogram runs beside others
    assert why('extern "C" __global__ void sh(const int *x, int *bins) { __shared__ int s[16]; '
               'if (threadIdx.x < 16) s[threadIdx.x] = 0; __syncthreads(); '
               'atomicAdd(&s[x[blockIdx.x * blockDim.x + threadIdx.x] & 15], 1); __syncthreads(); '
               'if (threadIdx.x < 16) bins[blockIdx.x * 16 + threadIdx.x] = s[threadIdx.x]; }', "sh") == ""
    # a race lesson: every block adds to one counter without an atomic
    assert "same address in every block" in why('extern "C" __global__ void r(int *count) '
                                                '{ *count = *count + 1; }', "r")


def test_the_thread_count_comes_from_cudalab_threads_or_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.setattr(parallel, "cpu_quota", lambda: None)
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    monkeypatch.delenv("CUDALAB_THREADS", raising=False)
    assert parallel.workers() == 3
    monkeypatch.setenv("CUDALAB_THREADS", "1")
    assert parallel.workers() == 1                  # one batch at a time, as before
    monkeypatch.setenv("CUDALAB_THREADS", "2")
    assert parallel.workers() == 2
    monkeypatch.setenv("CUDALAB_THREADS", "two")
    assert parallel.workers() == 1


def test_a_container_limited_to_one_cpu_runs_one_batch_at_a_time(monkeypatch, tmp_path):
    # mybinder and `docker run --cpus` limit the CPU time (a cgroup quota), not the cores a process sees
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    monkeypatch.delenv("CUDALAB_THREADS", raising=False)
    limit = tmp_path / "cpu.max"
    monkeypatch.setattr(parallel, "CGROUP_V2", str(limit))
    parallel.cpu_quota.cache_clear()
    limit.write_text("100000 100000\n")               # one CPU
    assert parallel.workers() == 1
    parallel.cpu_quota.cache_clear()
    limit.write_text("250000 100000\n")               # two and a half
    assert parallel.workers() == 2
    parallel.cpu_quota.cache_clear()
    limit.write_text("max 100000\n")                  # no limit: the cores, at most MAX_DEFAULT
    assert parallel.workers() == parallel.MAX_DEFAULT
    parallel.cpu_quota.cache_clear()


def test_a_process_forked_after_a_launch_runs_its_batches_on_threads_of_its_own(monkeypatch, beside):
    import os
    n = 64
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 256)
    monkeypatch.setattr(compiled, "WHOLE_KERNEL_LANES", 4 * 256)
    k = cudalab.compile(TILED).get_kernel("tiled")
    a = cudalab.to_device(np.eye(n, dtype=np.float32))
    b = cudalab.to_device(np.arange(n * n, dtype=np.float32).reshape(n, n))
    c = cudalab.device_array((n, n), np.float32)
    launch(monkeypatch, 2, "compiled", k, (n // 16, n // 16), (16, 16), a, b, c, np.int32(n))
    assert beside                             # the parent's pool has threads now
    pid = os.fork()
    if pid == 0:                              # the child: the same launch, on a pool of its own
        try:
            c2 = cudalab.device_array((n, n), np.float32)
            launch(monkeypatch, 2, "compiled", k, (n // 16, n // 16), (16, 16), a, b, c2, np.int32(n))
            os._exit(0 if np.array_equal(c2.copy_to_host(), b.copy_to_host()) else 1)
        except BaseException:           # noqa: BLE001
            os._exit(2)
    waited = 0
    import time
    while waited < 120:                     # (a child stuck on its parent's pool would never end)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.2)
        waited += 0.2
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked process's launch never ended")
    assert os.waitstatus_to_exitcode(status) == 0


def test_a_counter_added_to_launch_stats_is_merged_from_a_worker_batch_without_more_code():
    import dataclasses
    from cudalab.emulator.engine import LaunchStats

    @dataclasses.dataclass
    class WithMore(LaunchStats):            # a counter and a log someone adds to LaunchStats later
        shuffles: int = 0
        notes: list = dataclasses.field(default_factory=list)

    launch_stats = WithMore(thread_instructions=100, shuffles=3, notes=["block 0"], global_bytes_per_instruction=1.5)
    batch = parallel.own_stats(launch_stats, WithMore)
    batch.thread_instructions, batch.shuffles, batch.notes = 40, 2, ["block 4"]
    parallel.merge(launch_stats, batch)
    assert (launch_stats.thread_instructions, launch_stats.shuffles) == (140, 5)
    assert launch_stats.notes == ["block 0", "block 4"]             # in block order
    assert launch_stats.global_bytes_per_instruction == 1.5          # the launch's own, not a batch's


def test_nvcc_compiles_as_many_sources_at_once_as_the_cpu_quota_allows(monkeypatch, tmp_path):
    # a container of one CPU on a 16-core host (mybinder, docker --cpus 1): one nvcc at a time
    import importlib
    build = importlib.import_module("cudalab.programs.build")     # (the package's ``build`` is a function)
    from cudalab.programs.command import NvccCommand
    monkeypatch.setattr(parallel.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    monkeypatch.setattr(parallel, "cpu_quota", lambda: 1)
    running, most = [0], [0]
    import threading
    import time as clock
    lock = threading.Lock()

    def compile_unit(source, cmd, arch, cwd):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        clock.sleep(0.05)
        with lock:
            running[0] -= 1
        return source

    monkeypatch.setattr(build, "compile_unit", compile_unit)
    cmd = NvccCommand(sources=["a.cu", "b.cu", "c.cu"])
    assert build._compile_units(cmd, "sm_90", tmp_path) == ["a.cu", "b.cu", "c.cu"]
    assert most[0] == 1
    monkeypatch.setattr(parallel, "cpu_quota", lambda: 3)
    most[0] = 0
    build._compile_units(cmd, "sm_90", tmp_path)
    assert most[0] == 3
