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
    return tmp_path / "native"


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


def test_a_better_build_still_running_when_the_program_ends_is_ended_with_it(quick_first):
    import os
    import subprocess
    import sys
    # (a stand-in for better_code.py on a module that takes a minute: the convolution's 83 s)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    child.pid_of_parent = os.getpid()
    compiled._CHILDREN.append(child)
    try:
        compiled.end_children()
        assert child.poll() is not None         # ended, not left building after its program
    finally:
        compiled._CHILDREN.remove(child)
        if child.poll() is None:
            child.kill()


def test_better_code_built_after_the_kernels_last_launch_is_kept_on_disk_at_exit(quick_first, monkeypatch):
    import json
    monkeypatch.setattr(compiled, "BETTER_COST", 0.0)
    n = 32
    _, _, a, b, c = matmul(n)
    mod = fresh("1.0004f")
    mod.get_kernel("tiled")[(n // 16, n // 16), (16, 16)](a, b, c, np.int32(n))   # its last launch
    df = decoded(mod)
    child = df._tier.better
    assert child                                # the better build was due, and started
    child.wait(120)
    key = compiled.fingerprint(df)
    try:
        compiled.end_children()                 # the program ends: the finished build is kept
    finally:
        compiled._CHILDREN.remove(child)
        df._tier.better = False
    assert "better" not in json.loads((quick_first / f"{key}.json").read_text())
    assert not (quick_first / f"{key}.bc").exists()


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
