"""racecheck and initcheck, by example: a buggy kernel, the finding a student gets, and the fix that silences it."""
import numpy as np
import pytest

import cudalab

SRC = r"""
__global__ void reverse(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    out[t] = s[63 - t];                 // line 6: reads what another warp wrote, no barrier
}
__global__ void reverse_synced(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[63 - t];
}
__global__ void overwrite(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncthreads();
    out[t] = s[63 - t];                 // line 20: read ...
    s[t] = 0;                           // line 21: ... then another warp overwrites it (WAR)
}
__global__ void everyone_writes(int *out) {
    __shared__ int s[1];
    s[0] = threadIdx.x;                 // line 25: WAW between warps
    __syncthreads();
    out[threadIdx.x] = s[0];
}
__global__ void histogram(const int *in, int *out) {
    __shared__ int h[4];
    if (threadIdx.x < 4) h[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&h[in[threadIdx.x] & 3], 1);   // atomics do not race with atomics
    __syncthreads();
    if (threadIdx.x < 4) out[threadIdx.x] = h[threadIdx.x];
}
__global__ void histogram_early_read(const int *in, int *out) {
    __shared__ int h[4];
    if (threadIdx.x < 4) h[threadIdx.x] = 0;
    __syncthreads();
    atomicAdd(&h[in[threadIdx.x] & 3], 1);   // line 41
    if (threadIdx.x < 4) out[threadIdx.x] = h[threadIdx.x];   // line 42: no barrier after the atomics
}
__global__ void warp_local(int *out) {
    __shared__ int s[64];
    int t = threadIdx.x;
    s[t] = t;
    __syncwarp();
    out[t] = s[t ^ 1];                  // same warp only: no race between warps
}
__global__ void shift(const int *a, int *out) {
    out[threadIdx.x] = a[threadIdx.x] + 1;     // line 52
}
__global__ void fill(int *a) {
    a[threadIdx.x] = 7 * threadIdx.x;
}
__device__ int counter;
__global__ void count(int *out) {
    out[threadIdx.x] = atomicAdd(&counter, 1) >= 0;
}
"""


@pytest.fixture(scope="module")
def mod():
    return cudalab.compile(SRC)


@pytest.fixture(autouse=True)
def checks_off():
    yield
    cudalab.check()


def race(mod, kernel, *args, block=64):
    with cudalab.check("racecheck"):
        return mod.get_kernel(kernel)[1, block](*args).findings


def test_missing_barrier_is_a_read_after_write_race(mod, capsys):
    out = np.zeros(64, np.int32)
    (f,) = race(mod, "reverse", out)
    assert out.tolist() == list(range(63, -1, -1))           # lock step: the values are right here...
    assert f.kind == "racecheck" and f.details["hazard"] == "RAW"   # ...but on a GPU they may not be
    assert f.details["lines"] == (5, 6)
    assert "Race reported between Write access at line 5 and Read access at line 6 in kernel reverse" in f.message
    assert f.details["hazards"] == 64                        # every thread reads another warp's word
    assert f.block == (0, 0, 0)
    t1, t2 = f.details["threads"]
    assert t1[0] // 32 != t2[0] // 32 and t1[0] == 63 - t2[0]
    assert "cudalab racecheck warning" in capsys.readouterr().err


def test_barrier_fixes_it(mod):
    assert race(mod, "reverse_synced", np.zeros(64, np.int32)) == []


def test_write_after_read(mod):
    (f,) = race(mod, "overwrite", np.zeros(64, np.int32))
    assert f.details["hazard"] == "WAR" and f.details["lines"] == (20, 21)
    assert "Race reported between Read access at line 20 and Write access at line 21" in f.message


def test_write_after_write_in_one_instruction(mod):
    (f,) = race(mod, "everyone_writes", np.zeros(64, np.int32))
    assert f.details["hazard"] == "WAW" and f.details["lines"] == (25, 25)


def test_atomics_do_not_race_with_atomics(mod):
    out = np.zeros(4, np.int32)
    assert race(mod, "histogram", np.arange(64, dtype=np.int32), out) == []
    assert out.tolist() == [16, 16, 16, 16]


def test_reading_atomics_without_a_barrier_races(mod):
    found = race(mod, "histogram_early_read", np.arange(64, dtype=np.int32), np.zeros(4, np.int32))
    assert [(f.details["hazard"], f.details["lines"]) for f in found] == [("RAW", (41, 42))]


def test_one_warp_never_races_with_itself(mod):
    assert race(mod, "warp_local", np.zeros(64, np.int32)) == []


def test_every_block_is_checked(mod):
    with cudalab.check("racecheck"):
        rec = mod.reverse[3, 64](np.zeros(64, np.int32))
    (f,) = rec.findings
    assert f.details["hazards"] == 3 * 64


def test_checks_are_off_by_default_and_after_the_with_block(mod):
    with cudalab.check("racecheck") as c:
        assert "racecheck" in repr(c)
    assert mod.reverse[1, 64](np.zeros(64, np.int32)).findings == []
    cudalab.check("racecheck")                               # session-wide until cudalab.check()
    assert len(mod.reverse[1, 64](np.zeros(64, np.int32)).findings) == 1
    cudalab.check()
    assert mod.reverse[1, 64](np.zeros(64, np.int32)).findings == []


def test_unknown_check_names_the_valid_ones():
    with pytest.raises(cudalab.CudaError, match="memcheck, racecheck, initcheck, synccheck"):
        cudalab.check("racechek")


# ------------------------------------------------------------------ initcheck
def test_reading_a_fresh_device_array_is_uninitialized(mod, capsys):
    a = cudalab.device_array(64, np.int32)
    out = np.zeros(64, np.int32)
    with cudalab.check("initcheck"):
        rec = mod.shift[1, 64](a, out)
    (f,) = rec.findings
    assert f.kind == "initcheck" and f.line == 52 and f.details["threads"] == 64
    assert "Uninitialized __global__ memory read of size 4 bytes" in f.message
    assert "by thread (0,0,0) in block (0,0,0)" in f.message
    assert out.tolist() == [1] * 64                          # the kernel still ran to the end
    assert "cudalab initcheck warning" in capsys.readouterr().err


def test_copied_or_kernel_written_memory_is_initialized(mod):
    with cudalab.check("initcheck"):
        assert mod.shift[1, 64](cudalab.to_device(np.arange(64, dtype=np.int32)), np.zeros(64, np.int32)).findings == []
        a = cudalab.device_array(64, np.int32)
        assert mod.fill[1, 64](a).findings == []
        assert mod.shift[1, 64](a, np.zeros(64, np.int32)).findings == []


def test_half_written_array(mod):
    a = cudalab.device_array(64, np.int32)
    with cudalab.check("initcheck"):
        mod.fill[1, 32](a)                                   # writes a[0:32] only
        (f,) = mod.shift[1, 64](a, np.zeros(64, np.int32)).findings
    assert f.details["threads"] == 32 and f.thread == (32, 0, 0)


def test_device_variables_start_zeroed(mod):
    with cudalab.check("initcheck"):
        assert mod.count[1, 32](np.zeros(32, np.int32)).findings == []


def test_launches_without_initcheck_count_as_writes(mod):
    a = cudalab.device_array(64, np.int32)
    mod.fill[1, 64](a)                                       # not followed: assume it wrote
    with cudalab.check("initcheck"):
        assert mod.shift[1, 64](a, np.zeros(64, np.int32)).findings == []


# ------------------------------------------------------------------ against compute-sanitizer on an H100
def sanitizer_comparison():
    import importlib.util
    import pathlib
    import sys
    root = pathlib.Path(__file__).parent.parent
    spec = importlib.util.spec_from_file_location("sanitizer_gpu", root / "tools" / "sanitizer_gpu.py")
    tool = sys.modules["sanitizer_gpu"] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    return tool.compare(root / "tools" / "sanitizer_gpu_results.json")


# where cudalab differs from compute-sanitizer, on purpose or not (docs/sanitizer_comparison.md says why)
DIFFERS = {"local array index out of range", "reading atomics before the barrier",
           "split barrier: count_split", "split barrier: own_tails"}       # the H100 hangs: nothing reported


def test_same_findings_as_compute_sanitizer(capsys):
    rows = sanitizer_comparison()
    assert len(rows) == 37
    for case, gpu, _, ours in rows:
        if case.name in DIFFERS:
            assert gpu != ours, case.name
        else:
            assert gpu == ours, case.name
