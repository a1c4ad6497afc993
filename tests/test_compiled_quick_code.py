"""Quick machine code first, the better code later, for a kernel that keeps running.

The compiled tier's first machine code for a big module comes from LLVM's fast code generator (opt=0),
so a first launch does not wait for opt=2's code generation; once the kernel has run natively about as
long as the better build would take, a child process (emulator/better_code.py) builds it from the same
optimized module, and later batches and launches run it. The bytes are the same either way. Here every
module counts as big (``QUICK_IR_BYTES`` 0) and the better build is due at once (its cost 0), in a
cache folder of the test's own.
"""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import compiled

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
            sum = fmaf(sa[threadIdx.y][j], sb[j][threadIdx.x], sum * SCALE);
        __syncthreads();
    }
    c[row * n + col] = sum;
}
"""


@pytest.fixture
def quick_first(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    monkeypatch.setattr(compiled, "QUICK_IR_BYTES", 0)
    # the test's own lists of children and quick kernels (end_children sees no other test's), and no
    # child left running after it
    lists = {name: [] for name in ("_CHILDREN", "_QUICK", "_LEFT")}
    for name, fresh_list in lists.items():
        monkeypatch.setattr(compiled, name, fresh_list)
    yield tmp_path / "native"
    for child in lists["_CHILDREN"] + lists["_LEFT"]:
        if child.poll() is None:
            child.kill()
            child.wait()


def wait_for_better(df, seconds=120.0):
    import time
    st = df._tier
    end = time.monotonic() + seconds
    while st.better and st.better.poll() is None and time.monotonic() < end:
        time.sleep(0.05)


def fresh(scale):
    """The kernel with a scale of its own: a module no other test has launched (the tier keeps its state
    with the parsed module, which is cached by source)."""
    return cudalab.compile(TILED.replace("SCALE", scale))


def matmul(n=64):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    return a, b, cudalab.to_device(a), cudalab.to_device(b), cudalab.device_array((n, n), np.float32)


def test_a_kernel_that_keeps_running_moves_from_quick_code_to_better_code_with_the_same_bytes(quick_first, monkeypatch):
    monkeypatch.setattr(compiled, "BETTER_COST", 0.0)       # the better build is due after the first batch
    n = 64
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0001f")
    k = mod.get_kernel("tiled")
    k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
    quick_bytes = c.copy_to_host().tobytes()
    df = decoded(mod)
    st = df._tier
    assert st.fused._better is not None and st.fused._better["opt"] == compiled.BETTER_OPT   # quick code ran first
    assert (quick_first / f"{compiled.fingerprint(df)}.bc").exists()         # its module, kept for the better build
    wait_for_better(df)
    c2 = cudalab.device_array((n, n), np.float32)
    k[(n // 16, n // 16), (16, 16)](a, b, c2, np.int32(n))         # the next launch takes the better code
    assert st.fused._better is None and st.better is False
    assert c2.copy_to_host().tobytes() == quick_bytes
    assert not (quick_first / f"{compiled.fingerprint(df)}.bc").exists()     # the cache now holds the better code
    # interpreted, the same bytes again
    monkeypatch.setenv("CUDALAB_TIER", "interp")
    c3 = cudalab.device_array((n, n), np.float32)
    k[(n // 16, n // 16), (16, 16)](a, b, c3, np.int32(n))
    assert c3.copy_to_host().tobytes() == quick_bytes


def test_a_kernel_run_briefly_never_builds_its_better_code(quick_first, monkeypatch):
    monkeypatch.setattr(compiled, "BETTER_COST", 1e9)       # a build far longer than the kernel ever runs
    n = 32
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0002f")
    k = mod.get_kernel("tiled")
    for _ in range(3):
        k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
    df = decoded(mod)
    assert df._tier.better is None and df._tier.fused._better is not None
    assert df._tier.native_seconds > 0


def test_quick_code_loaded_from_the_disk_cache_still_gets_its_better_code(quick_first, monkeypatch):
    monkeypatch.setattr(compiled, "BETTER_COST", 1e9)
    n = 32
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0003f")
    k = mod.get_kernel("tiled")
    k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
    df = decoded(mod)
    from cudalab.emulator.engine import Program
    from cudalab.emulator.memory import DeviceMemory
    loaded = compiled._build(Program(mod.ptx_module, DeviceMemory()), df)     # as a later process finds it on disk
    assert loaded._better is not None and loaded._better["seconds"] > 0


def decoded(mod, name="tiled"):
    """The kernel's decoded function (what the compiled tier keeps its state on)."""
    return mod.ptx_module._decoded[mod._mangled(name)]


def test_a_better_build_still_running_when_the_program_ends_is_ended_with_it_where_builds_may_not_outlive_it(
        quick_first):
    import os
    import subprocess
    import sys
    assert not compiled.after_exit()            # (conftest.py: tests leave nothing running)
    # (a stand-in for better_code.py on a module that takes a minute: the convolution's 83 s)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child.pid_of_parent = os.getpid()
    compiled._CHILDREN.append(child)
    compiled.end_children()
    assert child.poll() is not None             # ended, not left building after its program


def test_a_build_under_way_at_the_programs_end_finishes_and_puts_its_code_in_the_disk_cache_itself(
        quick_first, monkeypatch):
    import json
    monkeypatch.setenv("CUDALAB_BUILD_AFTER_EXIT", "1")
    monkeypatch.setattr(compiled, "BETTER_COST", 0.0)
    n = 32
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0004f")
    mod.get_kernel("tiled")[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))   # the build is due after it
    df = decoded(mod)
    child = df._tier.better
    assert child                                # the better build was due, and started
    compiled.end_children()                     # the program ends now
    assert child.wait(120) == 0                 # not ended with it: it finished, with no parent's help
    key = compiled.fingerprint(df)
    meta = json.loads((quick_first / f"{key}.json").read_text())
    assert "better" not in meta and meta["built"] > 0
    assert not (quick_first / f"{key}.bc").exists() and not (quick_first / f"{key}.better.lock").exists()
    assert compiled._build(program_of(mod), df)._better is None       # what the program's next run loads


def test_quick_code_time_adds_up_over_runs_and_half_the_builds_estimate_gets_the_build_at_a_programs_end(
        quick_first, monkeypatch):
    import json
    monkeypatch.setenv("CUDALAB_BUILD_AFTER_EXIT", "1")
    monkeypatch.setattr(compiled, "BETTER_COST", 1e6)       # never due while a program runs
    n = 32
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0006f")
    mod.get_kernel("tiled")[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
    df = decoded(mod)
    ran, seconds = df._tier.native_seconds, df._tier.fused._better["seconds"]
    assert df._tier.better is None and ran > 0
    compiled.end_children()                     # the first run ends far from half its estimate: nothing started
    assert compiled._LEFT == []
    key = compiled.fingerprint(df)
    assert json.loads((quick_first / f"{key}.json").read_text())["better"]["ran"] == pytest.approx(ran, abs=1e-3)
    # the next run's quick code, loaded from the disk cache, has run that long already
    loaded = compiled._build(program_of(mod), df)
    assert loaded._better["ran"] == pytest.approx(ran, abs=1e-3)
    st = df._tier = compiled._Tier(fused=loaded)
    compiled.note_native(df, loaded, seconds / 2 - ran + 0.5)    # the two runs together: over half of it
    assert st.better is None                    # not due while it runs
    compiled.end_children()                     # but at its end
    (child,) = compiled._LEFT
    assert child.wait(120) == 0
    assert compiled._build(program_of(mod), df)._better is None     # the third run starts with the better code


def test_a_run_that_finds_another_process_building_its_better_code_waits_for_it_and_builds_it_if_that_one_failed(
        quick_first, monkeypatch):
    import fcntl
    monkeypatch.setattr(compiled, "BETTER_COST", 1e6)       # never due by its own time
    n = 32
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0008f")
    k = mod.get_kernel("tiled")
    k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))   # builds the quick code (no better build: not due)
    df = decoded(mod)
    key = compiled.fingerprint(df)
    assert df._tier.better is None
    df._tier = compiled._Tier()                 # the program's next run, while an earlier run's build holds the lock
    quick_first.mkdir(exist_ok=True)
    with open(quick_first / f"{key}.better.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
            child = df._tier.better
            assert child and child.poll() is None       # started at once, and waiting for the other build
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)            # the other build ended without its code
    assert child.wait(120) == 0                         # so this one built it
    k[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))
    assert df._tier.fused._better is None


def test_past_the_programs_cpu_time_limit_nothing_is_left_running(quick_first, monkeypatch):
    import os
    import subprocess
    import sys
    from cudalab.emulator import pace
    monkeypatch.setenv("CUDALAB_BUILD_AFTER_EXIT", "1")
    monkeypatch.setattr(pace, "cpu_time_left", lambda: 0.0)     # ulimit -t's soft limit reached
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child.pid_of_parent = os.getpid()
    compiled._CHILDREN.append(child)
    compiled.end_children()
    assert child.poll() is not None


def test_a_second_build_of_the_same_code_waits_for_the_first_and_builds_nothing(tmp_path):
    import fcntl
    import json
    import subprocess
    import sys
    import time
    key = "k" * 32
    (tmp_path / f"{key}.json").write_text(json.dumps({"symbols": [], "better": {"opt": 1, "seconds": 1.0}}))
    (tmp_path / f"{key}.bc").write_bytes(b"not bitcode: this child must not get as far as reading it")
    script = compiled.Path(compiled.__file__).with_name("better_code.py")
    with open(tmp_path / f"{key}.better.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # the first build, under way
        child = subprocess.Popen([sys.executable, str(script), str(tmp_path), key, "1", "7"])
        try:
            time.sleep(0.5)
            assert child.poll() is None                 # waiting for the first
            limits = compiled.Path(f"/proc/{child.pid}/limits").read_text()
            assert any(line.startswith("Max cpu time") and line.split()[3] == "7" for line in limits.splitlines())
            # the first finishes: its code in the cache, no quick code left
            (tmp_path / f"{key}.json").write_text(json.dumps({"symbols": [], "built": 1.0}))
            (tmp_path / f"{key}.bc").unlink()
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
        try:
            assert child.wait(60) == 0                  # nothing to build: it did not read the bitcode
        finally:
            if child.poll() is None:
                child.kill()
    assert not (tmp_path / f"{key}.better.o").exists()


def program_of(mod):
    from cudalab.emulator.engine import Program
    from cudalab.emulator.memory import DeviceMemory
    return Program(mod.ptx_module, DeviceMemory())


WALK = r"""
extern "C" __global__ void walk(float *out, int steps)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = i * 1e-3f;
    for (int s = 0; s < steps; ++s)
        x = x * 0.999f + 1e-3f;
    out[i] = x;
}
"""


def test_a_long_launch_waits_for_its_better_code_rather_than_run_every_batch_at_the_quick_pace(quick_first, monkeypatch):
    # a batch cannot change code while it runs: once the better build is under way, a launch whose rest
    # at the quick pace is longer than the build waits for it (asleep), so its next batch runs the better code
    from cudalab.emulator import engine
    monkeypatch.setattr(compiled, "BETTER_COST", 0.0)       # the better build is due after the first batch
    monkeypatch.setattr(compiled, "QUICK_BATCH_LANES", 4 * 128)   # batches of 4 blocks while quick code runs
    monkeypatch.setattr(engine, "LANE_BUDGET", 4 * 128)
    cudalab.set_watchdog(60)
    ran = []                                                # per batch: quick code (True) or better (False)
    note = compiled.note_native
    # (the rest told as a launch 100 times as long: on a loaded machine the child's start-up alone may
    # outlast this one's rest, and a launch waits no longer than its rest would take at the quick pace)
    monkeypatch.setattr(compiled, "note_native", lambda df, run_df, seconds, later: (
        ran.append(run_df.__dict__.get("_better") is not None), note(df, run_df, seconds, 100 * later)))
    mod = cudalab.compile(WALK.replace("0.999f", "0.9991f"))      # (a module no other test launched)
    k = mod.get_kernel("walk")
    out = cudalab.device_array(32 * 128, np.float32)
    try:
        k[32, 128](out, np.int32(50_000))
    finally:
        cudalab.set_watchdog(10)
    assert ran[0] and not ran[1]            # the first batch ran quick code, the next one the better code
    assert not any(ran[1:])
    x = (np.arange(32 * 128) * np.float32(1e-3)).astype(np.float32)     # what the threads compute, near enough
    for _ in range(50_000):
        x = x * np.float32(0.9991) + np.float32(1e-3)
    assert np.allclose(out.copy_to_host(), x, rtol=1e-4)     # (the GPU contracts x * a + b into one fma)
