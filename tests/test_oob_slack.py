"""Out-of-bounds accesses a GPU runs are warnings; the ones it faults on stop the kernel.

A read one element past an array's end, or past a block's shared array but inside its 128-byte
allocation unit, runs on an H100/H200 and gives the bytes there (tools/oob_probe.cu measured it);
compute-sanitizer's memcheck reports it. cudalab warns once per line and goes on, or stops like
compute-sanitizer when memcheck is asked for (cudalab.check("memcheck"), --check memcheck).
"""
import numpy as np
import pytest

import cudalab
from cudalab import KernelError
from cudalab.programs import run_program_source

SRC = r"""
extern "C" __global__ void shifted(const int *a, int *out, int n, int shift) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i + shift];
}
extern "C" __global__ void tile(int *out, int reach) {
    __shared__ int t[25];                       // 100 bytes: the block gets 128
    t[threadIdx.x % 25] = threadIdx.x % 25;
    __syncthreads();
    out[threadIdx.x] = t[threadIdx.x + reach];
}
extern "C" __global__ void dynamic_tile(int *out, int reach) {
    extern __shared__ int d[];
    d[threadIdx.x] = 7;
    __syncthreads();
    out[threadIdx.x] = d[threadIdx.x + reach];
}
extern "C" __global__ void local_past(int *a, int k) {
    int loc[4];
    for (int j = 0; j < 4; j++) loc[j] = a[j] + 1;
    a[threadIdx.x] = loc[k];
}
"""


@pytest.fixture(scope="module")
def mod():
    return cudalab.compile(SRC)


@pytest.fixture(autouse=True)
def default_checks():
    cudalab.check()
    yield
    cudalab.check()


def test_a_read_one_past_the_end_warns_once_and_the_kernel_goes_on(capsys):
    mod = cudalab.compile(SRC)          # (its own module: a module's warnings are told once per line)
    a = cudalab.to_device(np.arange(64, dtype=np.int32))
    out = cudalab.device_array(64, np.int32)
    for _ in range(3):          # a launch in a loop warns once for the line
        rec = mod.shifted[1, 64](a, out, np.int32(64), np.int32(1))
    got = out.copy_to_host()
    assert (got[:63] == np.arange(1, 64)).all()     # the last thread read the padding (zeros here)
    (f,) = rec.findings
    assert f.kind == "memcheck" and f.details["warning"] and f.line == 4 and f.thread == (63, 0, 0)
    assert "0 bytes after the end of a 256-byte allocation" in f.message
    err = capsys.readouterr().err
    assert err.count("cudalab memcheck warning: Invalid __global__ read of size 4 bytes") == 1
    assert "at line 4 in kernel shifted" in err and "--check memcheck" in err


def test_memcheck_asked_for_stops_at_the_same_read(mod):
    a = cudalab.to_device(np.arange(64, dtype=np.int32))
    out = cudalab.device_array(64, np.int32)
    with cudalab.check("memcheck"), pytest.raises(KernelError) as e:
        mod.shifted[1, 64](a, out, np.int32(64), np.int32(1))
    assert e.value.code == "cudaErrorIllegalAddress"
    assert "Invalid __global__ read of size 4 bytes" in str(e.value) and "by thread (63,0,0)" in str(e.value)
    assert "warning" not in str(e.value)


def test_a_large_array_is_followed_by_the_rest_of_its_2_mib_page(mod, capsys):
    """cudaMalloc gives an allocation above 1 MiB whole 2 MiB pages: 384 threads reading 3 KiB past
    the end of a 3,000,000-byte array (a histogram of a course, with no bounds test) run on a GPU,
    even though a small array allocated next was freed meanwhile."""
    n = 750_000
    a = cudalab.to_device(np.arange(n, dtype=np.int32))
    small = cudalab.device_array(16, np.int32)
    out = cudalab.device_array(n + 1024, np.int32)
    small.free()
    rec = mod.shifted[(n + 1024) // 256, 256](a, out, np.int32(n + 768), np.int32(0))
    assert (out.copy_to_host()[:n] == np.arange(n)).all()
    assert rec.findings[0].details["threads"] == 768 and "0 bytes after the end of a 3000000-byte" in rec.findings[0].message


def test_a_read_far_past_every_allocation_still_faults(mod):
    a = cudalab.to_device(np.arange(64, dtype=np.int32))
    out = cudalab.device_array(64, np.int32)
    with pytest.raises(KernelError) as e:
        mod.shifted[1, 64](a, out, np.int32(64), np.int32(1 << 30))     # 4 GiB on: past the whole device
    assert e.value.code == "cudaErrorIllegalAddress" and "by thread (0,0,0)" in str(e.value)


def test_a_read_of_freed_memory_still_faults(mod):
    a = cudalab.to_device(np.arange(64, dtype=np.int32))
    out = cudalab.device_array(64, np.int32)
    gone = cudalab.to_device(np.arange(64, dtype=np.int32))
    keep = cudalab.device_array(64, np.int32)          # (gone is not the last allocation)
    shift = (gone.device_ptr - a.device_ptr) // 4
    del gone
    import gc
    gc.collect()
    cudalab.device_array(1, np.int32)                  # frees what was dropped
    with pytest.raises(KernelError, match="already freed"):
        mod.shifted[1, 64](a, out, np.int32(64), np.int32(shift))
    del keep


def test_shared_memory_past_the_array_but_inside_its_128_byte_unit_warns(capsys):
    mod = cudalab.compile(SRC)
    out = cudalab.device_array(32, np.int32)
    rec = mod.tile[1, 32](out, np.int32(0))            # threads 25..31 read bytes 100..127
    got = out.copy_to_host()
    assert (got[:25] == np.arange(25)).all()
    (f,) = rec.findings
    assert f.details["space"] == "shared" and f.details["threads"] == 7 and f.thread == (25, 0, 0)
    assert "0 bytes after the end of the block's 100-byte shared memory, inside its 128-byte allocation" in f.message
    assert "Invalid __shared__ read" in capsys.readouterr().err


def test_shared_memory_past_its_unit_faults_and_memcheck_stops_inside_it(mod):
    out = cudalab.device_array(64, np.int32)
    with pytest.raises(KernelError, match=r"(?s)Invalid __shared__ read.*by thread \(24,0,0\)"):
        mod.tile[1, 64](out, np.int32(8))               # thread 24 reads byte 128
    with cudalab.check("memcheck"), pytest.raises(KernelError, match=r"by thread \(25,0,0\)"):
        mod.tile[1, 32](out, np.int32(0))


def test_dynamic_shared_memory_is_rounded_up_the_same_way(mod):
    out = cudalab.device_array(32, np.int32)
    rec = mod.dynamic_tile[1, 32, 0, 100](out, np.int32(0))     # 100 dynamic bytes: 25 ints, unit 128
    assert (out.copy_to_host()[:25] == 7).all() and rec.findings[0].details["threads"] == 7
    with pytest.raises(KernelError, match="out of bounds of the block's 128-byte shared memory"):
        mod.dynamic_tile[1, 32, 0, 128](out, np.int32(1))      # 128 bytes fill the unit: 4 past it


def test_a_constant_array_read_past_its_end_warns_as_global_memory_does(capsys):
    m = cudalab.compile("""
__constant__ int table[16];
extern "C" __global__ void lookup(int *out) { out[threadIdx.x] = table[threadIdx.x]; }""")
    m.get_global("table").copy_to_device(np.arange(16, dtype=np.int32))
    out = np.full(20, -1, np.int32)
    rec = m.lookup[1, 20](out)
    assert (out[:16] == np.arange(16)).all() and (out[16:] == 0).all()
    assert rec.findings[0].details["space"] == "const" and rec.findings[0].details["threads"] == 4
    assert "Invalid __constant__ read of size 4 bytes" in capsys.readouterr().err


def test_a_local_array_read_past_its_end_reads_zeros_within_the_threads_stack(mod):
    a = np.arange(32, dtype=np.int32)
    rec = mod.local_past[1, 32](a, np.int32(6))
    assert (a == 0).all() and rec.findings[0].details["space"] == "local"
    with pytest.raises(KernelError, match="Invalid __local__ read"):
        mod.local_past[1, 32](np.arange(32, dtype=np.int32), np.int32(100000))


def test_a_numba_kernel_without_a_bounds_test_warns_in_python_words(capsys):
    from numba import cuda

    @cudalab.jit
    def doubled(x, out):
        i = cuda.grid(1)
        out[i] = x[i] * 2

    x = np.arange(100, dtype=np.float64)
    out = np.zeros(100)
    doubled[1, 128](x, out)
    assert (out == 2 * x).all()
    err = capsys.readouterr().err
    assert "cudalab memcheck warning (28 threads): Invalid __global__ read of size 8 bytes" in err
    assert "out[i] = x[i] * 2" in err


PROGRAM = r"""#include <cstdio>
__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    c[i] = a[i] + b[i];
}
int main() {
    int n = 1000;
    float *a, *b, *c;
    cudaMalloc(&a, n * 4); cudaMalloc(&b, n * 4); cudaMalloc(&c, n * 4);
    printf("before\n");
    for (int k = 0; k < 3; k++) add<<<(n + 255) / 256, 256>>>(a, b, c, n);
    printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
"""


def test_a_whole_program_gets_the_warning_on_its_stderr_and_runs_to_the_end():
    r = run_program_source(PROGRAM, timeout=120)
    assert r.stdout.splitlines() == ["before", "sync: cudaSuccess"]
    assert r.stderr.count("cudalab memcheck warning (24 threads): Invalid __global__ read") == 1
    assert r.stderr.count("Invalid __global__ write") == 1 and "at line 4 in kernel add" in r.stderr


def test_a_whole_program_under_memcheck_stops_as_compute_sanitizer_does():
    with cudalab.check("memcheck"):
        r = run_program_source(PROGRAM, timeout=120)
    assert r.stdout.splitlines() == ["before", "sync: cudaErrorIllegalAddress"]
    assert "cudalab: Invalid __global__ read of size 4 bytes" in r.stderr and "warning" not in r.stderr


KERNEL_FILE = r"""
// cudalab: a = arange float32[100]
// cudalab: c = zeros float32[100]
// cudalab: launch one_past<<<1, 128>>>(a, c)
__global__ void one_past(const float *a, float *c) {
    int i = threadIdx.x;
    if (i <= 100) c[i] = a[i];      // <= : one element too many
}
"""


def test_cudalab_run_warns_and_with_check_memcheck_stops(tmp_path, capsys):
    from cudalab.cli import main
    f = tmp_path / "one_past.cu"
    f.write_text(KERNEL_FILE)
    assert main(["run", str(f)]) == 0
    err = capsys.readouterr().err
    assert "cudalab memcheck warning: Invalid __global__ read of size 4 bytes" in err and "line 7" in err
    try:
        code = main(["run", "--check", "memcheck", str(f)])
    finally:
        cudalab.check()
    out = capsys.readouterr()
    assert code != 0 and "Invalid __global__ read of size 4 bytes" in out.out + out.err
    assert "warning" not in out.out + out.err


# ---------------------------------------------------------------- farther: the pool a GPU maps
# An H200 ran reads 1 KiB to 64 MiB past a 1,000-byte cudaMalloc and 4 KiB before it, and a write
# 1 MiB past it: small allocations come from a large mapped pool (tools/oob_probe_h200.txt).

def test_a_read_far_past_a_small_array_warns_as_the_gpu_runs_it(mod):
    """A course's matrix sum launched with far too many threads reads 256 KiB past a 16 KiB array."""
    a = cudalab.to_device(np.arange(4096, dtype=np.int32))
    out = cudalab.device_array(64, np.int32)
    rec = mod.shifted[1, 64](a, out, np.int32(64), np.int32(64 * 1024))
    assert rec.findings[0].details["warning"] and rec.findings[0].details["threads"] == 64
    with cudalab.check("memcheck"), pytest.raises(KernelError, match="Invalid __global__ read"):
        mod.shifted[1, 64](a, out, np.int32(64), np.int32(64 * 1024))


def test_an_overrun_into_a_freed_neighbour_warns_but_its_old_pointer_faults(mod):
    """A scan without an index test writes 1.5 KiB past its array, through the padding into a block
    freed before: the threads of that access run off a live array, so it is an overrun, as on a
    GPU. The same freed block read through its old pointer alone stays a use after free."""
    a = cudalab.to_device(np.arange(64, dtype=np.int32))           # 256 bytes, padded to 1,024
    gone = cudalab.to_device(np.full(512, 9, np.int32))
    out = cudalab.device_array(512, np.int32)
    shift = (gone.device_ptr - a.device_ptr) // 4
    gone.free()
    rec = mod.shifted[1, 512](a, out, np.int32(512), np.int32(0))  # threads 256..511 read the freed block
    got = out.copy_to_host()
    assert (got[:64] == np.arange(64)).all() and (got[64:256] == 0).all()
    assert rec.findings[0].details["warning"] and rec.findings[0].details["threads"] == 448
    with pytest.raises(KernelError, match="already freed"):
        mod.shifted[1, 64](a, out, np.int32(64), np.int32(shift))


def test_past_a_large_arrays_last_page_and_a_null_pointer_still_fault(mod):
    out = cudalab.device_array(64, np.int32)
    big = cudalab.to_device(np.zeros(750_000, np.int32))           # 3,000,000 bytes: pages up to 4 MiB
    with pytest.raises(KernelError, match=r"by thread \(0,0,0\)"):
        mod.shifted[1, 64](big, out, np.int32(64), np.int32(1 << 20))   # 4 MiB from its start
    with pytest.raises(KernelError, match="null pointer"):
        mod.shifted[1, 64](np.uint64(0), out, np.int32(64), np.int32(0))


POOL_PROGRAM = r"""#include <cstdio>
__global__ void peek(const int *a, long long k, int *out) { out[threadIdx.x] = a[k + threadIdx.x]; }
__global__ void poke(int *a, long long k) { a[k] = 42; }
int main() {
    int *a, *out, got[2];
    cudaMalloc(&a, 4000); cudaMalloc(&out, 8);
    cudaMemset(a, 1, 4000);
    long long far[] = {-2, 1 << 18, 15 << 20};          // 8 bytes before; 1 MiB and 60 MiB past
    for (int j = 0; j < 3; j++) {
        poke<<<1, 1>>>(a, far[j] + 1);
        peek<<<1, 2>>>(a, far[j], out);
        cudaMemcpy(got, out, 8, cudaMemcpyDeviceToHost);
        printf("%lld: %d %d %s\n", far[j], got[0], got[1], cudaGetErrorName(cudaGetLastError()));
    }
    peek<<<1, 2>>>(a, 1LL << 30, out);                   // 4 GiB past: no allocation is near
    printf("4 GiB: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
"""


def test_a_program_reads_around_its_first_allocation_and_faults_far_from_it():
    """8 bytes before the first cudaMalloc and far past it are mapped on a GPU: reads there give the
    bytes there, writes land there (1 MiB and 60 MiB past: read back), except outside the emulator's
    arena (before its first byte: zeros, the write dropped); 4 GiB past faults."""
    r = run_program_source(POOL_PROGRAM, timeout=120)
    lines = r.stdout.splitlines()
    assert lines[0] == "-2: 0 0 cudaSuccess"                 # before the arena: the poke at a[-1] is dropped
    assert lines[1] == f"{1 << 18}: 0 42 cudaSuccess"
    assert lines[2] == f"{15 << 20}: 0 42 cudaSuccess"      # (a program's arena spans its whole device)
    assert lines[3] == "4 GiB: cudaErrorIllegalAddress"
    assert r.stderr.count("cudalab memcheck warning") == 2 and "Invalid __global__ write" in r.stderr
    with cudalab.check("memcheck"):
        r = run_program_source(POOL_PROGRAM, timeout=120)
    assert "Invalid __global__ write of size 4 bytes" in r.stderr and "warning" not in r.stderr



ASYNC_SRC = r"""
#include <cuda_pipeline.h>
extern "C" __global__ void shifted_copy(const int *in, int *out, long long shift) {
    __shared__ int s[64];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&s[t], &in[t + shift], sizeof(int));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[t] = s[t];
}
"""


@pytest.mark.parametrize("copy", ["load", "async copy"])
def test_a_read_past_the_arenas_end_gives_zeros(mod, copy, monkeypatch):
    """The emulator's arena holds the allocations' bytes only: a read a GPU runs farther on (the pool
    past a small allocation) gives zeros there, by a load or by an asynchronous copy alike."""
    from cudalab.emulator.memory import GLOBAL_BASE
    from cudalab.runtime import device
    # a device of its own, whose arena is small (the test's allocations only), whatever ran before
    monkeypatch.setattr(device, "_devices", {})
    monkeypatch.setattr(device, "_current", [None])
    monkeypatch.setattr(device, "_both", [False])
    mem = device.current().memory
    out = cudalab.device_array(64, np.int32)
    a = cudalab.to_device(np.arange(64, dtype=np.int32))            # the arena's last allocation
    past = mem.data.size - (a.device_ptr - GLOBAL_BASE) + 4096        # bytes from a to past the arena's end
    assert past < 60 << 20                      # within the pool a GPU maps past a small allocation
    k = cudalab.compile(ASYNC_SRC).shifted_copy if copy == "async copy" else mod.shifted
    args = (a, out, np.int64(past // 4)) if copy == "async copy" else (a, out, np.int32(64), np.int32(past // 4))
    rec = k[1, 64](*args)
    assert (out.copy_to_host() == 0).all() and rec.findings[0].details["warning"]


ASYNC_PROGRAM = r"""#include <cstdio>
#include <cuda_pipeline.h>
__global__ void shifted_copy(const int *in, int *out) {
    __shared__ int s[8];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&s[t], &in[t - 2], sizeof(int));     // threads 0, 1: before the array
    __pipeline_commit();
    __pipeline_wait_prior(0);
    out[t] = s[t];
}
int main() {
    int *in, *out, h[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    cudaMalloc(&in, sizeof h); cudaMalloc(&out, sizeof h);
    cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
    shifted_copy<<<1, 8>>>(in, out);
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    for (int j = 0; j < 8; j++) printf("%d ", h[j]);
    printf("%s\n", cudaGetErrorName(cudaGetLastError()));
}
"""


def test_an_async_copy_from_before_the_first_allocation_gives_zeros():
    r = run_program_source(ASYNC_PROGRAM, timeout=120)
    assert r.stdout.strip() == "0 0 1 2 3 4 5 6 cudaSuccess"
    assert "cudalab memcheck warning (2 threads): Invalid __global__ read of size 4 bytes" in r.stderr
