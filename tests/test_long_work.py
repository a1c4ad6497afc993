"""Long work as a student meets it: a progress bar for launches that take a while, an early stop
with an estimate for grids sized for a GPU, and time limits that stop a running kernel and leave
the next launch or program working."""
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import re

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell

import cudalab
from cudalab.emulator.engine import LANE_BUDGET
from cudalab.emulator.compiled import NATIVE_GAIN
from cudalab.emulator.pace import SAMPLE_SHARE, Pace, Progress
from cudalab.programs import run_program_source
from cudalab.runtime import progress

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# the Programming Guide's tiled matmul (16x16 tiles in shared memory), without the example's main
TILED_MATMUL = (EXAMPLES / "matrix_mul_shared.cu").read_text().split("int main")[0]

SPIN = "__global__ void spin(long long cycles, int *out) { long long t0 = clock64(); " \
       "while (clock64() - t0 < cycles) { } out[0] = 1; }"
SPIN_PROGRAM = "#include <cstdio>\n" + SPIN + """
int main() {
    int *d; cudaMalloc(&d, 4);
    spin<<<1, 32>>>(1LL << 62, d);
    printf("spin: %s\\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
"""
HELLO_PROGRAM = '#include <cstdio>\n__global__ void hi() { printf("hello from block %d\\n", blockIdx.x); }\n' \
                "int main() { hi<<<2, 1>>>(); cudaDeviceSynchronize(); printf(\"done\\n\"); }\n"
FIRST_BATCH = LANE_BUDGET // 256 // SAMPLE_SHARE      # blocks of 256 threads in a grid's first (sample) batch: 16
ADD = "__global__ void add(const float *a, float *c, int n) " \
      "{ int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + 1; }"


@pytest.fixture(autouse=True)
def defaults():
    yield
    cudalab.set_watchdog(10)
    cudalab.set_progress(None)


def test_a_matmul_sized_for_a_gpu_stops_early_with_an_estimate():
    n = 8192          # 262,144 blocks of 256 threads, each looping 512 times: minutes to hours on the emulator
    mod = cudalab.compile(TILED_MATMUL)
    a, b, c = (cudalab.device_array(n * n, np.float32) for _ in range(3))
    start = time.process_time()
    with pytest.raises(cudalab.KernelError) as e:
        mod.matMulShared[(n // 16, n // 16), (16, 16)](a, b, c, n)
    assert time.process_time() - start < 10                   # within the watchdog's 10 s
    message = str(e.value)
    assert e.value.code == "cudaErrorLaunchTimeout"
    assert "was stopped by the watchdog early: it would run far beyond its limit of 10 s" in message
    # after the sample batch, or (on a machine fast enough that the sample's lower bound is not yet
    # clearly past the limit) after a few more batches: within the first 1%
    done = re.search(r"It had finished ([\d,]+) of its 262,144 blocks", message)
    assert done and FIRST_BATCH <= int(done[1].replace(",", "")) < 262_144 // 100
    assert "thread-instructions at" in message and "a second" in message
    assert "2.03 trillion thread-instructions" in message and "on the emulator" in message
    for remedy in ("make the problem smaller", "cudalab.set_watchdog(seconds)", "%%cuda --timeout",
                   "cudalab run --timeout", 'cudalab.use("gpu")', "--device gpu"):
        assert remedy in message
    p = e.value.progress                                          # the same numbers as plain data
    assert p.blocks_total == 262144 and p.blocks_done == int(done[1].replace(",", ""))
    every_block_alike = p.finished_thread_instructions * 262144 / p.blocks_done
    assert p.estimated_thread_instructions == round(every_block_alike)
    assert p.estimated_seconds > 60                              # far beyond the watchdog's 10 s
    assert e.value.findings[0].details["progress"]["blocks_total"] == 262144


def test_a_launch_stopped_midway_through_a_batch_charges_its_finished_blocks_with_their_own_work_only():
    # an 8192^2 matmul's 16-block sample finished with 124 million thread-instructions; the next
    # batch had run 4.3 billion more when the time limit stopped it (the message said "72 trillion")
    p = Progress("matMulShared", blocks_done=16, blocks_total=262_144, thread_instructions=4_400_000_000,
                 seconds=6.2, finished_thread_instructions=124_000_000)
    assert p.estimated_thread_instructions == 124_000_000 * 262_144 // 16
    pace = Pace("add", blocks_total=64, timeout=10, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    next(pace.batches(32))
    pace.batch_done(1, batch_seconds=0.001)
    pace.stats.thread_instructions += 5000                   # the next batch, halfway
    assert pace.progress().estimated_thread_instructions == 64_000


def test_a_grid_far_beyond_the_cpu_time_limit_left_stops_early_even_when_the_watchdog_would_wait(monkeypatch):
    # tools/samples_check.py gives kernels the program's 720 s but `ulimit -t 120`: a 160 s launch
    # (globalToShmemAsyncCopy's) is stopped after its first batch, not killed with the process
    import resource
    from cudalab.emulator import pace as pace_mod
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (int(time.process_time()) + 100, hard))
        assert 95 < pace_mod.cpu_time_left() <= 100
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    assert pace_mod.cpu_time_left() == float("inf")
    monkeypatch.setattr(pace_mod, "cpu_time_left", lambda: 30.0)
    pace = Pace("gemm", blocks_total=1000, timeout=720, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    batches = pace.batches(100)
    assert next(batches) == (0, 3)
    pace.batch_done(3, batch_seconds=10)              # the sample batch: 10 more batches of at least 10 s,
    assert next(batches) == (3, 3)                    # which the next 3 blocks, a second sample, must confirm
    with pytest.raises(cudalab.KernelError) as e:
        pace.batch_done(3, batch_seconds=10)
    assert "was stopped early: it would run far beyond the 30 s left of the CPU-time limit (ulimit -t)" in str(e.value)
    assert e.value.progress.estimated_seconds > 150


def test_a_launch_meeting_a_cpu_limit_its_program_used_up_says_so_and_not_to_shrink_its_grid(monkeypatch):
    # a DTU course's Hillis-Steele scan doubles its size for 30 rounds: under `ulimit -t 30` the last rounds'
    # launches (0.026 s each here) met a limit with nothing left, and were told to use fewer blocks
    import resource
    from cudalab.emulator import pace as pace_mod
    monkeypatch.setattr(pace_mod, "cpu_time_left", lambda: 0.01)
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (int(time.process_time()) + 30, hard))
        pace = Pace("hs_kernel_global", blocks_total=1000, timeout=10, wall_deadline=float("inf"),
                    stats=SimpleNamespace(thread_instructions=1000))
        next(pace.batches(100))
        with pytest.raises(cudalab.KernelError) as e:
            pace.batch_done(100, batch_seconds=0.02)    # a second sample is not waited for with no time left
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    told = str(e.value)
    assert re.search(r"far beyond the 0\.01 s left of the program's CPU-time limit \(ulimit -t, \d+ s\), which its "
                     r"work before this launch used up\.", told), told
    assert "To run it anyway: give the program more CPU time (a higher ulimit -t)" in told
    assert "fewer blocks" not in told


def test_a_grid_too_long_only_at_the_interpreters_pace_is_not_stopped_on_it():
    # on a cold cache a kernel's first batches run interpreted while LLVM builds its native code in the
    # background: a 100 s estimate at the interpreter's pace is 5 s of native code, within the watchdog
    pace = Pace("vector_add", blocks_total=1000, timeout=10, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    next(pace.batches(1))
    pace.batch_done(1, 0.1, speedup=NATIVE_GAIN)               # no stop: the engine waits for native code
    assert pace.clearly_too_long() == ("by the watchdog", "its limit of 10 s")
    assert pace.clearly_too_long(NATIVE_GAIN) is None
    with pytest.raises(cudalab.KernelError, match="stopped by the watchdog early"):
        pace.batch_done(1, 0.1)                                # the same pace from native code: stopped
    far = Pace("matmul", blocks_total=10**6, timeout=10, wall_deadline=float("inf"),
               stats=SimpleNamespace(thread_instructions=1000))
    next(far.batches(1))
    with pytest.raises(cudalab.KernelError, match="stopped by the watchdog early"):
        far.batch_done(1, 0.1, speedup=NATIVE_GAIN)            # too long even for native code: stopped at once


# the tiled matmul at the size its argument gives (8192 is sized for a GPU)
MATMUL_PROGRAM = "#include <cstdlib>\n" + TILED_MATMUL + """
int main(int argc, char **argv) {
    const int n = atoi(argv[1]);
    float *A, *B, *C;
    cudaMalloc(&A, n * n * 4); cudaMalloc(&B, n * n * 4); cudaMalloc(&C, n * n * 4);
    matMulShared<<<dim3(n / 16, n / 16), dim3(16, 16)>>>(A, B, C, n);
    printf("matMulShared: %s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
}
"""


@pytest.fixture
def warm_matmul(monkeypatch):
    """MATMUL_PROGRAM built by nvcc and its kernel's native code in the disk cache, made by a small run
    before the timed one, with no time limit: a test that times the stop must not time the builds. (Under
    a load of 19 to 24 on this machine's 2 cores, the 30 s of wall time ran out during the native build.)"""
    with monkeypatch.context() as m:
        m.setenv("CUDALAB_TIER", "compiled")        # the native code is built before the launch runs
        r = run_program_source(MATMUL_PROGRAM, args=["64"])
    assert r.returncode == 0 and r.stdout == "matMulShared: cudaSuccess\n", r.stderr


def test_a_program_sized_for_a_gpu_stops_early_and_tells_why(warm_matmul):
    program = MATMUL_PROGRAM
    # 30 s, not more: with the compiled tier's regions the 16-block sample runs at ~450 million
    # thread-instructions a second here, so the lower bound of the estimate (~150 s) must stand
    # clearly (CLEARLY = 2x) above the limit for the stop to come after the sample on any machine
    # up to ~2.5x faster than this one; at 60 s it sat at the edge and a quick sample ran a full batch.
    # The watchdog's 30 s, which count the launch's CPU time, not a program time limit of 30 s of wall
    # time (timeout=30, which also sets the watchdog): the stop takes about 3 s of CPU, which at a load of
    # 19 to 24 on 2 cores is more than 30 s of wall time
    cudalab.set_watchdog(30)
    result = run_program_source(program, args=["8192"])
    assert result.stdout == "matMulShared: cudaErrorLaunchTimeout\n"      # the program saw the watchdog's error
    assert "was stopped by the watchdog early" in result.stderr
    # after the sample, or (where the sample moves to native code at its loop head mid-batch, and
    # runs so fast that its bound is not yet clear) after a batch or two: within the first 1%
    done = re.search(r"It had finished ([\d,]+) of its 262,144 blocks", result.stderr)
    assert done and FIRST_BATCH <= int(done[1].replace(",", "")) < 262_144 // 100
    assert "2.03 trillion thread-instructions" in result.stderr        # the whole grid's work, from the sample
    # the estimate's words depend on this machine's speed: "between 95 s and 6.2 minutes", "about 4 hours"
    assert re.search(r"(between [\d.]+ (s|minutes|hours) and|about) [\d.]+ (s|minutes|hours|days) on the emulator",
                     result.stderr)
    assert "cudalab run --timeout" in result.stderr


def test_the_watchdog_says_how_far_the_kernel_got_and_what_to_do():
    mod = cudalab.compile("__global__ void k(const int *go, int *out, int first) {\n"
                          "    if (blockIdx.x >= first) while (go[0] == 0) { }   // nobody sets go[0]\n"
                          "    out[blockIdx.x] = 1; }")
    cudalab.set_watchdog(1)
    with pytest.raises(cudalab.KernelError) as e:
        mod.k[4096, 256](np.zeros(1, np.int32), np.zeros(4096, np.int32), FIRST_BATCH)
    message = str(e.value)
    assert "ran for more than 1 s and was stopped by the watchdog" in message
    assert f"It had finished {FIRST_BATCH} of its 4,096 blocks" in message   # the first batch ended; the next spins
    assert "thread-instructions at" in message
    assert "threads were still running" in message and "at line 2" in message
    assert "cudalab.set_watchdog(seconds)" in message and "--device gpu" in message


def test_a_flag_read_once_is_an_endless_loop_and_its_count_is_the_work_done():
    """Without volatile, nvcc reads p[0] once and compiles the wait as a branch to itself. Native code
    used to count its turns by the billion in no time ("833 billion thread-instructions at 833 billion
    a second" for one thread, more than a GPU runs); it is interpreted now, and the message says why the
    loop cannot end."""
    mod = cudalab.compile('extern "C" __global__ void spin(int *p) {\n    while (p[0] != 1) { }\n}')
    cudalab.set_watchdog(1)
    with pytest.raises(cudalab.KernelError) as e:
        mod.get_kernel("spin")[1, 1](np.zeros(1, np.int32))
    message = str(e.value)
    # a count is written in digits below a million, in words above ("1.2 million"), as a student says it
    count, words = re.search(r"after [\d.]+ s: ([\d,.]+)( million)? thread-instructions", message).groups()
    done = float(count.replace(",", "")) * (1e6 if words else 1)
    assert 0 < done < 50_000_000          # the interpreter's count for one thread in about 1 s of CPU
    assert "at line 2. The compiled code there branches to itself: a loop that can never end" in message
    assert "through a volatile pointer or an atomic" in message


def test_progress_numbers_read_as_a_student_would_say_them():
    p = Progress("matMul", blocks_done=512, blocks_total=4096, thread_instructions=250_000_000, seconds=5.0,
                 estimated_seconds=40.0)
    assert p.rate == 50_000_000
    assert p.estimated_thread_instructions == 2_000_000_000
    assert p.describe() == ("It had finished 512 of its 4,096 blocks (12%) after 5.0 s: 250 million "
                            "thread-instructions at 50 million a second.")
    assert p.describe_estimate() == "The whole grid needs about 2 billion thread-instructions: about 40 s on the emulator."
    # after the small first batch only, the time is known within bounds: each later batch of 512
    # blocks takes at least as long as that one, and at most as long per block
    p = Progress("matMul", blocks_done=16, blocks_total=4096, thread_instructions=7_800_000, seconds=0.2,
                 estimated_seconds=51.2, at_least_seconds=1.8)
    assert p.describe_estimate() == ("The whole grid needs about 2 billion thread-instructions: between 1.8 s and "
                                     "51 s on the emulator.")


def test_a_long_launch_shows_a_progress_bar_of_blocks(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)     # as if every launch were long
    cudalab.set_progress(True)
    n = 1 << 20                                          # 4096 blocks: a sample batch and 8 more
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    cudalab.compile(ADD).add[n // 256, 256](a, c, n)
    bar = capsys.readouterr().err
    assert "add:" in bar and "4096/4096" in bar and "blocks" in bar and "thread-instructions/s" in bar
    assert (c == a + 1).all()


def test_short_launches_and_switched_off_bars_show_nothing(monkeypatch, capsys):
    n = 1 << 20
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    add = cudalab.compile(ADD).add
    cudalab.set_progress(True)
    add[n // 256, 256](a, c, n)                          # well under 2 s
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    cudalab.set_progress(False)
    add[n // 256, 256](a, c, n)
    assert capsys.readouterr().err == ""
    cudalab.set_progress(None)
    monkeypatch.setenv("CUDALAB_PROGRESS", "0")
    add[n // 256, 256](a, c, n)
    assert capsys.readouterr().err == ""


def test_a_programs_progress_bar_never_touches_its_stdout(monkeypatch, capsys):
    monkeypatch.setattr(progress, "SHOW_AFTER", 0.0)
    cudalab.set_progress(True)
    program = "#include <cstdio>\n" + ADD + """
int main() {
    const int n = 1 << 20;
    float *a, *c;
    cudaMallocManaged(&a, n * 4); cudaMallocManaged(&c, n * 4);
    for (int i = 0; i < n; i++) a[i] = i;
    add<<<n / 256, 256>>>(a, c, n);
    cudaDeviceSynchronize();
    printf("c[n-1] = %.0f\\n", c[n - 1]);
}
"""
    result = run_program_source(program, timeout=60)
    assert result.stdout == "c[n-1] = 1048576\n"
    assert "4096/4096" in capsys.readouterr().err          # the bar went to this process's stderr


def test_a_program_time_limit_stops_a_spinning_kernel_and_the_next_program_runs():
    start = time.monotonic()
    stopped = run_program_source(SPIN_PROGRAM, timeout=2)
    assert time.monotonic() - start < 30                      # (the build is most of it the first time)
    assert stopped.returncode != 0
    assert "The program's time limit (2 s) ran out while kernel spin was running" in stopped.stderr
    assert "It had finished 0 of its 1 block" in stopped.stderr and "at line 2" in stopped.stderr
    hello = run_program_source(HELLO_PROGRAM, timeout=60)
    assert hello.ok and hello.stdout.endswith("done\n") and hello.stdout.count("hello from block") == 2


def test_a_program_of_many_short_kernels_stopped_by_its_time_limit_says_where_its_time_went():
    # a benchmark looping over sizes (cuda-samples' UnifiedMemoryPerf): no one kernel is too long,
    # so no watchdog estimate; the message counts the launches and names the kernels that took the time
    program = "#include <cstdio>\n" + ADD + """
int main() {
    float *a, *c; cudaMalloc(&a, 4096); cudaMalloc(&c, 4096);
    for (;;) { add<<<4, 256>>>(a, c, 1024); cudaDeviceSynchronize(); }
}"""
    stopped = run_program_source(program, timeout=2)
    assert stopped.returncode != 0
    message = re.search(r"the program ran longer than 2 s and was stopped\. It had run ([\d,]+) kernel launches, "
                        r"[\d.]+ s of the emulator's CPU time in all \(([\d,.]+) a second\): ([\d,]+) of add \([\d.]+ s, "
                        r"[\d.]+ ms each\)\.", stopped.stderr)
    assert message, stopped.stderr
    assert message.group(1) == message.group(3) and int(message.group(1).replace(",", "")) > 10
    assert float(message.group(2).replace(",", "")) > 5          # launches a second
    # and what the loop it was in costs: the rest is the loop's length times that
    assert re.search(r"It was in a loop, the same launch over and over: [\d,]+ iterations of add so far, [\d.]+ ms an "
                     r"iteration here .* every [\d,]+ more need about", stopped.stderr), stopped.stderr


def test_a_benchmark_of_runtime_calls_stopped_by_its_time_limit_says_how_many_it_made():
    # the CUDA Handbook's nullDtoHMemcpyAsync: 10^6 cudaMemcpyAsync of 4 bytes timed with the host's
    # clock, no kernel at all; "it had not finished any kernel" alone told the student nothing
    program = """
int main() {
    int *d, *h; cudaMalloc(&d, 4); cudaMallocHost(&h, 4);
    for (;;) cudaMemcpyAsync(h, d, 4, cudaMemcpyDeviceToHost, 0);
}"""
    stopped = run_program_source(program, timeout=3)
    assert stopped.returncode != 0
    message = re.search(r"It had made ([\d,]+) runtime calls, about ([\d,]+) a second \(cudaMemcpy/cudaMemcpyAsync "
                        r"([\d,]+), ", stopped.stderr)
    assert message, stopped.stderr
    total, each = (int(message.group(k).replace(",", "")) for k in (1, 3))
    assert total >= 1000 and total - each <= 5                  # the malloc calls besides the copies


def launches(*runs):
    """Launch records of a benchmark: for each (kernel, problem size, iterations), that many launches
    of one grid, the size among their arguments (as scan's: the arrays' length changes, not the grid)."""
    from cudalab.runtime.record import LaunchRecord
    return [LaunchRecord(kernel, (6656, 1, 1), (256, 1, 1), 0, "emu", cpu_time=0.01 * size, arguments=size)
            for kernel, size, iterations in runs for _ in range(iterations)]


def test_a_benchmark_timed_once_per_size_stopped_midway_says_what_its_current_size_still_needs():
    from cudalab.programs.stopping import rest_of_run, runs
    # scan's short arrays: 100 launches per size, stopped 37 launches into the third size
    timed = launches(("scan", 1, 100), ("scan", 2, 100), ("scan", 4, 37))
    assert runs(timed) == [(0, 1, 100), (100, 1, 100), (200, 1, 37)]
    said = rest_of_run(timed, running=True)
    # 36 launches of the third size finished, 0.04 s each: the 64 left need about 2.6 s
    assert "runs of 100 iterations of scan" in said and "had finished 36 of them" in said
    assert "about 3 s at its pace so far (40 ms an iteration)" in said
    # three kernels an iteration (scan's large arrays) are one iteration of 3 launches
    three = launches(*[(k, g, 1) for g in (8, 16) for _ in range(5) for k in ("a", "b", "c")])
    assert runs(three) == [(0, 3, 5), (15, 3, 5)]
    # single launches between the loops (a warm-up) are not runs to go by
    warmed = launches(*[r for size in (1, 2, 4) for r in (("warm", size, 1), ("mm", size, 20 if size < 4 else 5))])
    assert "runs of 20 iterations of mm" in rest_of_run(warmed) and "had finished 5 of them" in rest_of_run(warmed)
    # one earlier size is no pattern to go by, nor a loop whose length changes with the size
    assert rest_of_run(launches(("scan", 1, 100), ("scan", 2, 10))) == ""
    assert rest_of_run(launches(("scan", 1, 100), ("scan", 2, 50), ("scan", 4, 10))) == ""
    # nor loops of one launch followed by a loop of more launches an iteration than runs() can see as one
    # (NCI's axpy_overlapped: one stream for small sizes, then 16 to 306, each launch at its own offset)
    many = launches(("axpy", 1, 100), ("axpy", 2, 100), *[("axpy", 100 + j, 1) for _ in range(10) for j in range(16)],
                    ("axpy", 999, 1))
    assert rest_of_run(many) == ""


def _native_builds_done():
    """Wait for every native build under way in this process: the process's CPU time, which a CPU-time
    limit counts, is every thread's. Each kernel an earlier test launched may have its build thread
    ("cudalab compile ..."), and they take compiled._BUILD_LOCK one after another: waiting for the lock
    once left the next kernel's build to run inside the limit (a clean clone's cold cache, at a load
    near 20, used up a 3 s limit before its program's kernel started). Then the process must be idle."""
    import threading
    while True:
        builds = [t for t in threading.enumerate() if t.name.startswith("cudalab compile")]
        if not builds:
            break
        for t in builds:
            t.join()
    import gc
    gc.collect()                # nor a collection of every earlier test's objects, come due inside the limit
    cpu = time.process_time()
    time.sleep(0.2)
    assert time.process_time() - cpu < 0.05, f"a thread of this process is busy: {threading.enumerate()}"


def test_native_builds_done_waits_for_every_queued_build_not_only_the_one_running():
    import threading
    from cudalab.emulator import compiled
    ended = []

    def build(name):
        with compiled._BUILD_LOCK:
            time.sleep(0.05)
            ended.append(name)
    threads = [threading.Thread(target=build, args=(f"k{i}",), name=f"cudalab compile k{i}") for i in range(4)]
    for t in threads:
        t.start()
    _native_builds_done()
    assert sorted(ended) == ["k0", "k1", "k2", "k3"]


# (run in a process of its own: RLIMIT_CPU counts every thread of the process, and in a CI worker that has run
# other tests the 6 s below were twice used up before the spin began, "It had not finished any kernel yet")
CPU_LIMITED_RUN = """
import json, resource, signal, sys, time
sys.path.insert(0, sys.argv[1])
from test_long_work import SPIN_PROGRAM, HELLO_PROGRAM, _native_builds_done
from cudalab.programs import run_program_source
soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
signal.signal(signal.SIGXCPU, lambda *a: None)      # its repeats, once cudalab's handler is gone
run_program_source(SPIN_PROGRAM, timeout=1)         # built and warm: the limit below is the spin's
_native_builds_done()
resource.setrlimit(resource.RLIMIT_CPU, (int(time.process_time()) + 6, hard))
stopped = run_program_source(SPIN_PROGRAM)
resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
print(json.dumps([stopped.returncode, stopped.stderr, run_program_source(HELLO_PROGRAM, timeout=60).ok]))
"""


def test_a_program_over_its_cpu_time_limit_is_stopped_by_cudalab_with_how_far_its_kernel_got():
    # a grader's (or tools/samples_check.py's) `ulimit -t`: at the soft limit SIGXCPU stops the
    # running kernel with the same account as --timeout, before the hard limit would kill cudalab
    import json
    out = subprocess.run([sys.executable, "-c", CPU_LIMITED_RUN, str(Path(__file__).parent)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    returncode, stderr, hello_ok = json.loads(out.stdout.strip().splitlines()[-1])
    assert returncode != 0
    assert re.search(r"The program's CPU-time limit \(ulimit -t, \d+ s\) ran out while kernel spin was running",
                     stderr), stderr
    assert "It had finished 0 of its 1 block" in stderr
    assert "used up its CPU-time limit" in stderr and "a higher ulimit -t" in stderr
    assert hello_ok                                     # and the next program runs


def test_cudalab_run_timeout_stops_a_spinning_kernel(tmp_path):
    (tmp_path / "spin.cu").write_text(SPIN_PROGRAM)
    (tmp_path / "hello.cu").write_text(HELLO_PROGRAM)
    cli = [sys.executable, "-m", "cudalab.cli", "run"]
    root = EXAMPLES.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([*cli, "--timeout", "2", "spin.cu"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env=env)
    assert out.returncode != 0
    assert "time limit (2 s) ran out while kernel spin was running" in out.stderr
    out = subprocess.run([*cli, "hello.cu"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0 and out.stdout.endswith("done\n")


def test_cudalab_run_timeout_is_how_long_a_kernel_files_launch_may_run(tmp_path, capsys):
    from cudalab.cli import main
    f = tmp_path / "spin.cu"
    f.write_text(SPIN + "\n// cudalab: cycles = int64 4611686018427387904\n// cudalab: out = zeros int32[1]\n"
                        "// cudalab: launch spin<<<1, 32>>>(cycles, out)\n")
    assert main(["run", "--timeout", "1", str(f)]) == 1
    assert "spin ran for more than 1 s and was stopped by the watchdog" in capsys.readouterr().err


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "cudalab")
    return shell


def test_cuda_cell_timeout_stops_a_spinning_program_and_the_next_cell_runs(ip, capsys):
    ip.run_cell_magic("cuda", "--timeout 2", SPIN_PROGRAM)
    assert "time limit (2 s) ran out while kernel spin was running" in capsys.readouterr().err
    ip.run_cell_magic("cuda", "", HELLO_PROGRAM)
    assert capsys.readouterr().out.endswith("done\n")


def test_cuda_cell_timeout_is_how_long_its_kernels_may_run(ip):
    ip.run_cell_magic("cuda", "--timeout 1", SPIN)
    result = ip.run_cell("import numpy as np\nspin[1, 32](1 << 62, np.zeros(1, np.int32))")
    assert isinstance(result.error_in_exec, cudalab.KernelError)
    assert "ran for more than 1 s and was stopped by the watchdog" in str(result.error_in_exec)
    ip.run_cell_magic("cuda", "", ADD)
    result = ip.run_cell("a = np.ones(10, np.float32); c = np.zeros(10, np.float32); add[1, 32](a, c, 10)")
    assert result.error_in_exec is None and (ip.user_ns["c"] == 2).all()


def test_interrupting_a_long_launch_says_how_far_it_got_and_the_next_launch_works(monkeypatch):
    def press_stop(bar, p):           # Jupyter's stop button (or Ctrl-C) while the second batch runs
        if p.blocks_done > FIRST_BATCH:
            raise KeyboardInterrupt
    monkeypatch.setattr(progress.Bar, "__call__", press_stop)
    monkeypatch.setattr(progress.Bar, "quiet", lambda self, done, total: False)    # (a young launch's bar is
    n = 1 << 20                                                                     # otherwise not called at all)
    a = np.arange(n, dtype=np.float32)
    c = np.zeros(n, np.float32)
    add = cudalab.compile(ADD).add
    with pytest.raises(cudalab.KernelError) as e:
        add[n // 256, 256](a, c, n)
    assert e.value.code == "cudaErrorLaunchFailure"
    assert "The kernel add was interrupted while it ran. It had finished" in str(e.value)
    assert "of its 4,096 blocks" in str(e.value)
    monkeypatch.undo()
    add[n // 256, 256](a, c, n)
    assert (c == a + 1).all()


# more iterations than the emulator runs in lock step before it lets waiting threads go ahead
# (independent thread scheduling): 3000 elements, or 0.2 s of the device's clock (an A100's 1410 MHz:
# %clock ticks at the profile's clock rate, for Python launches as for programs)
@pytest.mark.parametrize("work, n", [("for (int i = 0; i < n; i++) s += a[i];", 3000),             # a serial sum
                                     ("long long t0 = clock64(); while (clock64() - t0 < n) { } s = n;", 300_000_000)])
def test_one_thread_working_long_while_the_block_waits_at_syncthreads(work, n):
    mod = cudalab.compile("__global__ void k(const float *a, float *out, int n) {\n"
                          "    __shared__ float total;\n"
                          f"    if (threadIdx.x == 0) {{ float s = 0; {work} total = s; }}\n"
                          "    __syncthreads();               // the other threads wait here for thread 0\n"
                          "    out[threadIdx.x] = total; }")
    out = np.zeros(64, np.float32)
    mod.k[1, 64](np.ones(min(n, 3000), np.float32), out, n)
    assert (out == n).all()


PERSISTENT = r'''
__global__ void persistent(float* out, int tiles, int steps) {
  float acc = 0.f;
  for (int t = blockIdx.x; t < tiles; t += gridDim.x) {     // each block loops over tiles
    for (int k = 0; k < steps; ++k) {
      __syncthreads();
      acc = acc * 0.5f + out[(t * 7 + k) % 1024];
#pragma unroll
      for (int j = 0; j < 32; ++j) acc = acc * 0.999f + 0.5f;   // work the control flow does not need
    }
  }
  out[1024 + blockIdx.x * blockDim.x + threadIdx.x] = acc;
}'''


def test_a_persistent_grid_of_one_batch_is_stopped_with_the_count_of_its_work():
    """A grid that is one batch finishes no block before the watchdog, so no block's pace can be
    extrapolated: the estimate counts the batch's work by replaying its control flow alone
    (emulator/forecast.py), and that count is exact when the loops depend on registers only."""
    k = cudalab.compile(PERSISTENT).get_kernel("persistent")
    out = np.zeros(1024 + 64 * 256, np.float32)

    def work(tiles_per_block, steps):
        return k[64, 256](out, 64 * tiles_per_block, steps).thread_instructions
    # the work is linear in tiles and in tiles x steps (steps a multiple of the compiler's unrolling, 4)
    one, two, longer = work(1, 8), work(2, 8), work(2, 16)
    per_step = (longer - two) // (2 * 8)
    per_tile = two - one - per_step * 8
    fixed = one - per_tile - per_step * 8
    cudalab.set_watchdog(0.3)
    with pytest.raises(cudalab.KernelError) as e:
        k[64, 256](out, 64 * 20, 100)
    p = e.value.progress
    assert p.blocks_done == 0 and p.blocks_total == 64
    assert p.estimated_thread_instructions == fixed + per_tile * 20 + per_step * 20 * 100
    assert p.thread_instructions < p.estimated_thread_instructions and not p.forecast_partial
    message = str(e.value)
    assert "It had finished 0 of its 64 blocks" in message
    assert re.search(r"The whole grid needs about [\d.]+ billion thread-instructions: about [\d.]+ s on the emulator",
                     message)
    assert "To let it finish: make the problem smaller" in message and "--device gpu" in message


def test_a_grid_too_big_to_count_in_time_gets_a_lower_bound():
    k = cudalab.compile(PERSISTENT).get_kernel("persistent")
    cudalab.set_watchdog(0.3)        # the count gets 0.25 s: far too little
    with pytest.raises(cudalab.KernelError) as e:
        k[64, 256](np.zeros(1024 + 64 * 256, np.float32), 64 * 2600, 1000)   # 2.6 million iterations a block
    p = e.value.progress
    assert p.forecast_partial and p.estimated_thread_instructions > p.thread_instructions
    assert re.search(r"The whole grid needs more than [\d.]+ (million|billion) thread-instructions: more than "
                     r"[\d.]+ (s|minutes) on the emulator", str(e.value))


def test_a_loop_waiting_on_memory_no_thread_writes_keeps_the_question_and_no_estimate():
    """The skeleton's loads read memory as the stopped launch left it: a spin on a flag nobody sets
    spins there too, runs out of its time and counts only a lower bound; a loop whose end needs a
    store to global memory cannot be replayed at all."""
    k = cudalab.compile("__global__ void wait(int *flag, int *out) {\n"
                        "  int n = 0;\n"
                        "  while (atomicAdd(flag, 0) == 0) { ++n; }\n"
                        "  out[threadIdx.x] = n; }").get_kernel("wait")
    cudalab.set_watchdog(0.3)
    with pytest.raises(cudalab.KernelError) as e:
        k[2, 32](np.zeros(1, np.int32), np.zeros(32, np.int32))
    assert e.value.progress.estimated_seconds is None
    assert "Does a loop there ever end?" in str(e.value)


def test_a_kernel_spinning_natively_on_a_flag_gets_no_estimate_below_its_own_work():
    """`while (*flag == 0) {}` compiles to a branch to itself, which native code runs a whole budget
    at a time: the launch has done far more work than its skeleton can count in the time it gets,
    and a count below the work done says nothing, so the message asks about the loop instead."""
    k = cudalab.compile("__global__ void spin(int *flag) { while (*flag == 0) {} }").get_kernel("spin")
    cudalab.set_watchdog(1)
    with pytest.raises(cudalab.KernelError) as e:
        k[1, 1](np.zeros(1, np.int32))
    p = e.value.progress
    assert p.estimated_thread_instructions is None or p.estimated_thread_instructions > p.thread_instructions
    assert "needs more than" not in str(e.value) and "Does a loop there ever end?" in str(e.value)


def test_the_cpu_limits_stop_raised_inside_a_finalizer_prints_no_traceback(capsys):
    """SIGXCPU can arrive while Python runs a finalizer; the stop it raises there cannot reach the
    server's loop (which sees the deadline at its next request anyway), and Python would print it
    as "Exception ignored in ..." to the student. Other such exceptions are still reported."""
    from cudalab.programs.stopping import CpuLimitRanOut, _unraisable_hook
    seen = []
    hook = _unraisable_hook(seen.append)
    hook(SimpleNamespace(exc_value=CpuLimitRanOut("the program's CPU-time limit ran out")))
    other = SimpleNamespace(exc_value=ValueError("a real mistake"))
    hook(other)
    assert seen == [other]


def test_a_kernel_stopped_between_instructions_names_its_line_and_no_made_up_thread():
    """Native code returns to the watchdog between instructions, when no thread is mid-instruction:
    the message names the line only, never "0 threads were still running, e.g. thread (0,0,0)"."""
    from cudalab.emulator.engine import _still_running
    from cudalab.runtime.core.context import Context
    ex = SimpleNamespace(pc_of={"inst": SimpleNamespace(place="line 7"), "mask": np.zeros(64, bool)})
    detail = _still_running(ex)
    assert detail == "It was stopped at line 7."
    ctx = SimpleNamespace(limit_words=lambda: "time limit (3 s)")
    told = Context.time_limit_message(ctx, "spin", f"The kernel spin ran too long. {detail}")
    assert told.endswith("so the kernel was stopped, and then the program. It was stopped at line 7.")


def test_an_endless_loop_stopped_by_the_programs_cpu_limit_still_says_it_can_never_end():
    """A lecture's kernel steps the outer index in its inner loop (`for (i = 0; i < n; it++)`), which nvcc
    compiles as a branch to itself. Under a CPU-time limit (ulimit -t, the courses' runs) the program's
    message is the limit's, and it kept only the line: the reason the loop cannot end is kept too."""
    from cudalab.emulator.engine import _still_running
    from cudalab.runtime.core.context import Context
    ex = SimpleNamespace(pc_of={"inst": SimpleNamespace(place="line 138"), "mask": np.ones(128, bool), "endless": True},
                         where=lambda lane: ((0, 0, 0), (lane, 0, 0)))
    detail = _still_running(ex)
    ctx = SimpleNamespace(limit_words=lambda: "CPU-time limit (ulimit -t, 120 s)")
    told = Context.time_limit_message(ctx, "kernel6", f"The kernel kernel6 ran too long. {detail}")
    assert "128 threads were still running, e.g. thread (0,0,0) of block (0,0,0) at line 138." in told
    assert told.endswith("otherwise the compiler reads it once, before the loop.")
    assert "for (i = 0; i < n; it++)" in told and told.count("branches to itself") == 1


def test_a_kernel_stopped_by_the_programs_time_limit_in_a_loop_it_cannot_count_asks_if_it_ends():
    """A Japanese course's exercise left blank loops on __syncthreads_count(!done) with nothing setting done:
    the watchdog asks whether a loop there ever ends, and the program's time limit (its message the
    limit's) keeps the question; a launch whose loops were counted does not get it."""
    import cudalab
    from cudalab.runtime.core.context import Context
    k = cudalab.compile("__global__ void wait_all(int *out) {\n  bool done = false;\n"
                        "  do { } while (__syncthreads_count(!done) != 0);\n  out[threadIdx.x] = 1; }").get_kernel("wait_all")
    cudalab.set_watchdog(0.3)
    try:
        with pytest.raises(cudalab.KernelError) as e:
            k[4, 256](np.zeros(1024, np.int32))
    finally:
        cudalab.set_watchdog(10)
    assert "Does a loop there ever end?" in str(e.value)
    ctx = SimpleNamespace(limit_words=lambda: "CPU-time limit (ulimit -t, 120 s)")
    told = Context.time_limit_message(ctx, "wait_all", str(e.value), e.value.progress)
    assert "e.g. thread (0,0,0) of block (0,0,0) at line 3. Does a loop there ever end?" in told
    assert "The whole grid needs" not in told
    counted = Context.time_limit_message(ctx, "walk", "The kernel walk ran too long. 32 threads were still running, "
                                         "e.g. thread (0,0,0) of block (0,0,0) at line 3. To let it finish: ...")
    assert "ever end" not in counted


def test_a_grid_stopped_within_the_time_its_finished_blocks_forecast_is_not_asked_if_its_loop_ends():
    """A course's histogram of 524,288 blocks, 4 s a launch here, run seven times: the program's 30 s CPU limit
    ran out in the seventh, at 36% after 1.5 s. Its finished blocks forecast the whole grid at about 4 s, so the
    kernel is slow, not stuck, and 'Does a loop there ever end?' would send the student hunting for a bug that
    is not there; a grid already far past what its blocks forecast still gets the question."""
    where = "32 threads were still running, e.g. thread (0,0,0) of block (9,0,0) at line 7."

    def stopped(spent_beyond: float, estimate: float) -> str:
        pace = Pace("simple_histo", blocks_total=64, timeout=10, wall_deadline=float("inf"),
                    stats=SimpleNamespace(thread_instructions=1000))
        pace.blocks_done, pace.estimate = 16, estimate
        pace.start -= spent_beyond                       # the launch's CPU seconds so far
        return str(pace.timed_out(where))

    on_its_way = stopped(spent_beyond=1.5, estimate=4.0)
    assert "line 7. To let it finish:" in on_its_way and "ever end" not in on_its_way
    stuck = stopped(spent_beyond=9.0, estimate=0.5)     # blocks that ended fast, one that never does
    assert "line 7. Does a loop there ever end?" in stuck


def test_a_grid_whose_threads_each_loop_long_is_stopped_with_an_estimate_from_the_threads_that_ended(monkeypatch):
    """One batch of 512 blocks whose every thread loops long (Cheng's sumMatrixOnGPU-1D-grid-1D-block):
    no block ends before the watchdog, and the skeleton's count of the batch runs out of its time.
    Native code runs the batch's threads one after another, though, so thousands of them have ended:
    the grid's work is the work done at their share."""
    monkeypatch.setenv("CUDALAB_TIER", "compiled")        # the native region, as a long launch soon gets
    k = cudalab.compile("__global__ void walk(float *out, int n) {\n"
                        "  float s = 0;\n"
                        "  for (int i = 0; i < n; i++) s = s * 0.999f + (float)i;\n"
                        "  out[blockIdx.x * blockDim.x + threadIdx.x] = s; }").get_kernel("walk")
    out = np.zeros(512 * 32, np.float32)
    per_iteration = (k[512, 32](out, 40).thread_instructions - k[512, 32](out, 20).thread_instructions) // 20
    whole = k[512, 32](out, 20).thread_instructions + per_iteration * (20000 - 20)
    cudalab.set_watchdog(0.3)
    with pytest.raises(cudalab.KernelError) as e:
        k[512, 32](out, 20000)
    p = e.value.progress
    assert p.blocks_done == 0 and not p.forecast_partial
    assert whole <= p.estimated_thread_instructions <= 1.1 * whole
    assert re.search(r"It had finished 0 of its 512 blocks .* The whole grid needs about [\d.]+ (million|billion) "
                     r"thread-instructions: about [\d.]+ s on the emulator", str(e.value))
    assert "To let it finish" in str(e.value) and "Does a loop there ever end?" not in str(e.value)


def test_one_slow_batch_after_a_sample_that_fits_does_not_stop_the_launch():
    # a DLI lesson transposes a 16384x16384 matrix into a freshly allocated 1 GiB array: the 4-block
    # sample takes 1 ms, the first full batch of 504 blocks 1.7 s (the first touch of the new memory's
    # pages), every later one 7 ms. Stopped on the slow batch alone, the launch was told 'about 2.2
    # minutes on the emulator'; it takes 5 s. One batch against the batch before it is not enough.
    pace = Pace("tile_transpose", blocks_total=262_144, timeout=60, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    next(pace.batches(504))
    pace.batch_done(4, batch_seconds=0.001)         # the sample: fits easily
    pace.batch_done(504, batch_seconds=1.7)         # alone, it says 15 minutes: not stopped yet
    assert pace.clearly_too_long() is not None
    pace.batch_done(504, batch_seconds=0.007)       # the pace it keeps
    assert pace.clearly_too_long() is None
    # a launch that really is too long is stopped one batch later: two batches agree
    slow = Pace("matmul", blocks_total=262_144, timeout=60, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    next(slow.batches(504))
    slow.batch_done(4, batch_seconds=0.001)
    slow.batch_done(504, batch_seconds=1.7)
    with pytest.raises(cudalab.KernelError, match="stopped by the watchdog early"):
        slow.batch_done(504, batch_seconds=1.7)


def _first_touch(megabytes: int):
    """Write one float of every page of a fresh array: the OS maps each page on its first touch
    (system time), as it does the emulator's fresh device memory when a kernel first writes it."""
    fresh = np.zeros(megabytes << 18, np.float32)
    fresh[::1024] = 1.0
    return fresh


def test_a_batch_that_first_touches_fresh_device_memory_is_not_the_kernels_pace():
    # the system time the OS spends mapping a new array's pages, the first time a kernel writes them,
    # is paid once: a DLI transpose into a fresh 1 GiB array spent it across its first batches, and
    # the watchdog stopped the launch as 'about 4.9 minutes' of work that takes seconds
    import resource
    if not hasattr(resource, "RUSAGE_THREAD"):
        pytest.skip("per-thread CPU usage is Linux's")
    pace = Pace("transpose", blocks_total=3 + 100 * 100, timeout=1e6, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    next(pace.batches(100))                          # the 3-block sample: it first touches 128 MB
    t0 = time.thread_time()
    fresh = _first_touch(128)
    touch = time.thread_time() - t0                  # nearly all of it system time
    # a limit that the 100 batches left would clearly outlast at the sample's whole pace (100 x touch is more
    # than CLEARLY x 40 x touch) and easily fit at its user-time pace (a first touch is mostly the OS's work)
    pace.timeout = 40 * touch
    pace.batch_done(3, touch)                        # not stopped: its pace is its user time
    assert pace.clearly_too_long() is None
    del fresh


FIRST_THREADS_WORK = """
__global__ void add(const float *x, const float *y, float *z, int turns)
{
    const int n = blockDim.x * blockIdx.x + threadIdx.x;
    if (n < 1024)                       // the first 8 blocks of 128 threads work; the rest return at once
        for (int i = 0; i < turns; ++i)
            z[n] = x[n] + y[n];
}
"""


def test_a_grid_whose_first_blocks_do_all_the_work_is_not_stopped_on_its_sample(monkeypatch):
    # CudaSteps' stream.cu launches `add` over 781,250 blocks of which only the first 8 loop: its
    # sample batch (the grid's first blocks) held all 8, and the watchdog, taking every later block
    # to be as long, said "10.6 trillion thread-instructions: between 93 minutes and 2.1 days" of a
    # launch of about a billion. A second sample of the next blocks, far lighter, lets it run.
    monkeypatch.setenv("CUDALAB_TIER", "interp")         # the sample at the interpreter's pace, as on a cold cache
    blocks, turns = 78_125, 3000
    mod = cudalab.compile(FIRST_THREADS_WORK)
    x, y = (cudalab.to_device(np.full(blocks * 128, v, np.float32)) for v in (1.25, 2.5))
    z = cudalab.device_array(blocks * 128, np.float32)
    cudalab.set_watchdog(3)
    mod.add[blocks, 128](x, y, z, np.int32(turns))           # was: stopped by the watchdog early
    out = z.copy_to_host()
    assert np.all(out[:1024] == 3.75) and not out[1024:].any()
    # the first sample alone would have stopped it: 8 long blocks in 32, taken as the pace of 78,125
    pace = Pace("add", blocks_total=blocks, timeout=3, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=8 * 128 * turns * 6))
    batches = pace.batches(LANE_BUDGET // 128)
    sample = next(batches)[1]
    pace.batch_done(sample, batch_seconds=0.2)
    assert pace.clearly_too_long() is not None                # 77 batches of at least 0.2 s
    assert next(batches) == (sample, sample)                  # so the next blocks are a second sample
    pace.stats.thread_instructions += sample * 128 * 6
    pace.batch_done(sample, batch_seconds=0.0001)             # far lighter: no stop, and the estimate is theirs
    assert pace.clearly_too_long() is None and pace.estimate < 3
    # so is the count: the 8 long blocks' work once, and the rest at the light blocks' 6 instructions a thread
    assert pace.progress().estimated_thread_instructions == 8 * 128 * turns * 6 + (blocks - sample) * 128 * 6
    assert next(batches) == (2 * sample, LANE_BUDGET // 128)  # then full batches
    # a sample that took most of the time there is stops the launch at once: a second would not fit
    slow = Pace("add", blocks_total=blocks, timeout=3, wall_deadline=float("inf"),
                stats=SimpleNamespace(thread_instructions=1000))
    next(slow.batches(LANE_BUDGET // 128))
    with pytest.raises(cudalab.KernelError, match="stopped by the watchdog early"):
        slow.batch_done(sample, batch_seconds=2.0)


def jacobi_launches(naive: int, optimized: int):
    """A Jacobi solver's launches, as Drexel's ECEC 413 lab makes them: one kernel an iteration until the
    answer converges, first the naive kernel, then the optimized one over the same system."""
    from cudalab.runtime.record import LaunchRecord
    return [LaunchRecord(kernel, (1, 1, 1), (1024, 1, 1), 0, "emu", cpu_time=0.004, arguments=6)
            for kernel, n in (("jacobi_naive", naive), ("jacobi_optimized", optimized)) for _ in range(n)]


def test_a_program_stopped_inside_a_long_loop_of_launches_says_what_an_iteration_costs_and_what_the_rest_needs():
    from cudalab.programs.stopping import in_a_loop, time_spent
    # the second solver's loop, stopped after 4,000 of the first's 16,494 iterations: no two earlier loops of
    # one length to go by (rest_of_run), but the loop before it ran to its end over another kernel
    said = time_spent(jacobi_launches(16_494, 4_001), running=True)
    assert "It was in a loop, the same launch over and over: 4,000 iterations of jacobi_optimized so far, " \
           "4 ms an iteration here (16.0 s)." in said
    assert "If it makes as many as the loop before it (16,494 iterations of jacobi_naive), the rest of this " \
           "one needs about 50 s at this pace." in said          # 12,494 iterations x 4 ms
    assert "every 10,000 more need about 40 s here" in said
    assert said.count("It was in a loop") == 1                  # said once
    # a transpose timed 100 times (Oslo's locality course), 1.3 s a launch, stopped in its first loop:
    # nothing before it to compare, so the cost of an iteration and of the next hundred
    from cudalab.runtime.record import LaunchRecord
    timed = [LaunchRecord("naiveTranspose", (32768, 1, 1), (256, 1, 1), 0, "emu", cpu_time=1.3, arguments=4)] * 88
    said = in_a_loop(timed, running=True)
    assert "87 iterations of naiveTranspose so far, 1.3 s an iteration here" in said
    assert "If it makes as many" not in said and "every 100 more need about 2.2 minutes here" in said
    # a few launches are no loop to speak of
    assert in_a_loop(timed[:5]) == ""
    # ping-pong buffers (x and x_new swapped each time) make an iteration of two launches of one kernel
    from cudalab.programs.stopping import in_a_loop as loop
    from cudalab.runtime.record import LaunchRecord as Rec
    pingpong = [Rec("jacobi", (1, 1, 1), (1024, 1, 1), 0, "emu", cpu_time=0.004, arguments=k % 2) for k in range(50)]
    assert "25 iterations of 2 launches of jacobi so far, 8 ms an iteration" in loop(pingpong)
    # stopped between the two launches of an iteration: the odd one out belongs to the loop
    assert "25 iterations of 2 launches of jacobi so far" in loop(pingpong + pingpong[:2], running=True)
