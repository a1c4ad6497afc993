"""Whole programs written for a GPU meet the emulator's limits as CUDA errors, never as a crash.

What NVIDIA's cuda-samples showed (tools/samples_check.py): a program built with ``-rdc=true``
registers the device runtime's own kernels, which must pass quietly; an instruction the emulator
cannot run, or a bug in the emulator while it runs one, reaches the program as
``cudaErrorNotSupported`` with a message naming the instruction and its line, and the program
goes on.
"""
import signal

import numpy as np
import pytest

import cudalab
from cudalab.emulator import decode
from cudalab.errors import UnsupportedError
from cudalab.programs import run_program_source


@pytest.fixture
def h100():
    """Programmatic dependent launch needs compute capability 9.0: the emulated device is an H100."""
    before = cudalab.device.current()
    cudalab.set_device("H100")
    yield
    cudalab.set_device(before)


def run(source, **kw):
    return run_program_source(source, timeout=120, **kw)


def test_a_program_built_with_rdc_registers_the_device_runtime_without_a_word():
    r = run(r"""#include <cstdio>
__global__ void child(int *out) { out[threadIdx.x] = 10 * threadIdx.x; }
__global__ void parent(int *out) { child<<<1, 4>>>(out); }
int main() {
    int *d, h[4];
    cudaMalloc(&d, sizeof h);
    parent<<<1, 1>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
}""", options=["-rdc=true", "-arch=sm_90"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "0 10 20 30\n"
    assert r.stderr == ""        # libcudadevrt's memcpy/memset kernels and error tables are not the program's


REVERSE = r"""#include <cstdio>
__global__ void reverse_bits(unsigned *p) {
    p[threadIdx.x] = __brev(p[threadIdx.x] + %d);
}
int main() {
    unsigned *d;
    cudaMalloc(&d, 128);
    reverse_bits<<<1, 32>>>(d);
    printf("launch: %%s\n", cudaGetErrorName(cudaGetLastError()));
    printf("sync: %%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    printf("malloc after: %%s\n", cudaGetErrorName(cudaMalloc(&d, 4)));
}"""


def broken_when_run(inst, d):
    def run(ex):
        raise TypeError("a made-up bug")
    return run


def broken_when_read(inst, d):
    raise AttributeError("a made-up bug")


# a kernel that cannot be read fails at its launch (as a GPU's launch of a kernel its driver cannot
# compile does); one that fails while it runs is queued at the launch, and the synchronization that
# runs it answers the error
@pytest.mark.parametrize("decoder, what, failing", [
    (broken_when_run, "The emulator failed on the PTX instruction", "sync"),
    (broken_when_read, "The emulator cannot run the PTX instruction", "launch")])
def test_a_bug_in_an_instruction_reaches_the_program_as_not_supported_naming_it(monkeypatch, decoder, what, failing):
    monkeypatch.setitem(decode.DECODERS, "brev", decoder)
    r = run(REVERSE % (1 if decoder is broken_when_run else 2))     # a source of its own: decoding is cached
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"launch: {'cudaErrorNotSupported' if failing == 'launch' else 'cudaSuccess'}",
                                     f"sync: {'cudaErrorNotSupported' if failing == 'sync' else 'cudaSuccess'}",
                                     "malloc after: cudaSuccess"]
    assert what in r.stderr
    assert "`brev.b32" in r.stderr and "source line 3" in r.stderr and "made-up bug" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_bug_in_an_instruction_is_an_unsupported_error_in_python_too(monkeypatch):
    monkeypatch.setitem(decode.DECODERS, "brev", broken_when_run)
    k = cudalab.compile("__global__ void flip(unsigned *p) { p[threadIdx.x] = __brev(p[threadIdx.x] ^ 7u); }")
    with pytest.raises(UnsupportedError, match=r"`brev\.b32 .*\(TypeError: a made-up bug\)") as e:
        k.flip[1, 32](np.zeros(32, np.uint32))
    assert e.value.code == "cudaErrorNotSupported"


def test_a_kernel_with_internal_linkage_is_named_as_written():
    r = run("namespace { __global__ void tiny(int *p) { *p = 1; } }\n"
            "static __global__ void small(int *p) { *p = 2; }\n"
            "int main() { int *d; cudaMalloc(&d, 4); tiny<<<1, 1>>>(d); small<<<1, 1>>>(d); cudaDeviceSynchronize(); }")
    assert [rec.kernel for rec in r.launches] == ["(anonymous namespace)::tiny", "small"]


# A long copy in a stream the program created, then a tiny kernel on "stream 0": the legacy default
# stream waits for the copy, a per-thread default stream does not (Programming Guide, "Default Stream").
DEFAULT_STREAM = r"""#include <cstdio>
__global__ void tiny(int *p) { *p = 1; }
int main() {
    const size_t big = 64 << 20;
    char *h, *d; int *flag; cudaStream_t s; cudaEvent_t e;
    cudaMallocHost(&h, big); cudaMalloc(&d, big); cudaMalloc(&flag, 4);
    cudaStreamCreate(&s); cudaEventCreate(&e);
    cudaMemcpyAsync(d, h, big, cudaMemcpyHostToDevice, s);
    tiny<<<1, 1, 0, STREAM>>>(flag);
    cudaEventRecord(e, STREAM);
    cudaEventSynchronize(e);
    printf("after stream 0's kernel, the copy is %s\n", cudaStreamQuery(s) == cudaSuccess ? "done" : "not done");
}"""


@pytest.mark.parametrize("options, stream, copy", [
    ([], "0", "done"),
    (["--default-stream", "per-thread"], "0", "not done"),
    ([], "cudaStreamPerThread", "not done"),
    (["--default-stream", "per-thread"], "cudaStreamLegacy", "done")])
def test_the_per_thread_default_stream_does_not_wait_for_other_streams(options, stream, copy):
    r = run(DEFAULT_STREAM.replace("STREAM", stream), options=options)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"after stream 0's kernel, the copy is {copy}\n"


def test_each_host_thread_has_its_own_per_thread_stream():
    r = run(r"""#include <cstdio>
#include <thread>
int main() {
    unsigned long long ids[3];
    auto id_of_mine = [&](int k) { cudaStreamGetId(cudaStreamPerThread, &ids[k]); };
    std::thread a(id_of_mine, 0), b(id_of_mine, 1);
    a.join(); b.join();
    id_of_mine(2);
    unsigned long long again; cudaStreamGetId(cudaStreamPerThread, &again);
    printf("%d %d %d\n", ids[0] != ids[1] && ids[1] != ids[2] && ids[0] != ids[2], again == ids[2], ids[2] != 0);
}""")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "1 1 1\n"


def test_a_programmatic_dependent_launch_overlaps_the_kernel_before_it_on_the_timeline(h100):
    r = run(r"""#include <cstdio>
__global__ void produce(float *a, int n) {
    a[threadIdx.x] = threadIdx.x;
    cudaTriggerProgrammaticLaunchCompletion();       // what follows does not feed the next kernel
    for (int i = 0; i < n; ++i) a[threadIdx.x + 32] = a[threadIdx.x + 32] * 0.5f + i;
}
__global__ void consume(float *a, int n) {
    float x = 0;
    for (int i = 0; i < n; ++i) x = x * 0.5f + i;    // work that needs nothing from produce
    cudaGridDependencySynchronize();                 // produce has finished: its stores are visible
    a[threadIdx.x + 64] = a[threadIdx.x] + x;
}
float both(float *a, cudaStream_t s, int programmatic) {
    cudaLaunchAttribute attr;
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = programmatic;
    cudaLaunchConfig_t config = {dim3(1), dim3(32), 0, s, &attr, 1};
    cudaEvent_t start, end; float ms;
    cudaEventCreate(&start); cudaEventCreate(&end);
    cudaEventRecord(start, s);
    produce<<<1, 32, 0, s>>>(a, 100000);
    cudaLaunchKernelEx(&config, consume, a, 100000);
    cudaEventRecord(end, s);
    cudaEventSynchronize(end);
    cudaEventElapsedTime(&ms, start, end);
    return ms;
}
int main() {
    float *a, h[96]; cudaStream_t s;
    cudaMalloc(&a, sizeof h); cudaStreamCreate(&s);
    float apart = both(a, s, 0), overlapped = both(a, s, 1);
    cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
    printf("%s, a[65] = %g\n", overlapped < apart ? "shorter with PDL" : "no overlap", h[65] - h[64]);
}""", options=["-arch=sm_90"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == "shorter with PDL, a[65] = 1\n"
    produce = r.launches[2].reports["pdl"]
    consume = r.launches[3].reports["pdl"]
    assert 0 < produce["trigger_fraction"] < 0.1 and consume["trigger_fraction"] is None
    assert 0.9 < consume["wait_fraction"] < 1


def test_after_a_kernel_fault_later_kernels_do_not_run():
    r = run(r"""#include <cstdio>
__global__ void poke(int *p) { p[1 << 28] = 1; }     // 1 GiB past: no allocation near
__global__ void follow(int *p) { p[threadIdx.x * (1 << 22)] = 2; }
int main() {
    int *d;
    cudaMalloc(&d, 64);
    poke<<<1, 1>>>(d);
    follow<<<1, 32>>>(d);                 // queued behind the fault: a GPU never runs it
    printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    follow<<<1, 32>>>(d);
    printf("launch after: %s\n", cudaGetErrorName(cudaGetLastError()));
}""")
    assert r.stdout.splitlines() == ["sync: cudaErrorIllegalAddress", "launch after: cudaErrorIllegalAddress"]
    assert [rec.kernel for rec in r.launches] == ["poke"]
    assert "follow" not in r.stderr


def test_a_copy_after_a_faulting_kernel_returns_the_fault_and_copies_nothing():
    # cudaMemcpy waits for the kernel before it, so it is where a program first hears of the kernel's fault
    # (llm.c's validate_result checks only its cudaMemcpy); the bytes stay as they were, as on a GPU
    r = run(r"""#include <cstdio>
__global__ void poke(int *p) { p[0] = 7; p[1 << 28] = 1; }
int main() {
    int *d, h[2] = {5, 5};
    cudaMalloc(&d, sizeof h);
    poke<<<1, 1>>>(d);
    cudaError_t copied = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("copy: %s, h[0] = %d\n", cudaGetErrorName(copied), h[0]);
    printf("memset: %s\n", cudaGetErrorName(cudaMemset(d, 0, sizeof h)));
    printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
}""")
    assert r.stdout.splitlines() == ["copy: cudaErrorIllegalAddress, h[0] = 5", "memset: cudaErrorIllegalAddress",
                                     "sync: cudaErrorIllegalAddress"]


def test_a_program_over_its_cpu_time_limit_is_told_so_and_not_as_a_crash():
    # llm.c's matmul_forward checks cuBLAS against an OpenMP matmul of 19 GFLOP: under a grader's
    # `ulimit -t` that host code, not a kernel, runs out of time (here the program sets its own limit)
    r = run(r"""#include <sys/resource.h>
int main() {
    struct rlimit one = {1, RLIM_INFINITY};
    setrlimit(RLIMIT_CPU, &one);
    volatile double x = 0;
    for (;;) x = x + 1;
}""")
    assert r.returncode == -signal.SIGXCPU
    assert "stopped by its CPU-time limit (ulimit -t) after 1 s" in r.stderr and "crashed" not in r.stderr


def test_a_program_ended_by_a_signal_to_stop_is_not_told_it_crashed():
    # a course's unfinished exercise loops forever on the CPU (`for (...; +i)`); the student ends it,
    # and hears where such a signal comes from rather than of a crash
    r = run(r"""#include <csignal>
int main() { std::raise(SIGTERM); }""")
    assert r.returncode == -signal.SIGTERM
    assert r.stderr == ("cudalab: the program was ended by SIGTERM, a signal to stop (from kill, a job's time "
                        "limit or the program itself), not a crash.\n")


def test_a_thread_that_exits_while_another_waits_for_the_gpu_ends_the_program_with_its_exit_code():
    # CUDA by Practice's multidevice lesson: one host thread's error check calls exit(1) while another
    # thread waits for its kernel. The program ends with code 1, as on a GPU; its connection to the
    # emulator is reset mid-request, which is the program ending, not an error of cudalab's to print
    r = run(r"""#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <unistd.h>
__global__ void spin(float *a) { for (int i = 0; i < 2000; i++) a[threadIdx.x] += 1.0f; }
void *worker(void *) {
    float *d;
    cudaMalloc(&d, 1024 * sizeof(float));
    for (;;) { spin<<<64, 1024>>>(d); cudaDeviceSynchronize(); }
}
int main() {
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    usleep(200000);
    printf("main gives up\n");
    exit(1);
}""")
    assert (r.returncode, r.stdout, r.stderr) == (1, "main gives up\n", "")


def test_freeing_an_allocation_twice_says_so_and_fails_as_on_a_gpu():
    # an object whose destructor frees, passed to a kernel by value, frees twice (CUDA by Example's Lock)
    r = run_program_source("""
        #include <cstdio>
        struct Buffer {
            int* p;
            Buffer() { cudaMalloc(&p, sizeof(int)); }
            ~Buffer() { printf("free: %d\\n", (int)cudaFree(p)); }
        };
        __global__ void touch(Buffer b) { *b.p = 1; }
        int main() { Buffer b; touch<<<1, 1>>>(b); cudaDeviceSynchronize(); }
    """)
    assert r.stdout == "free: 0\nfree: 1\n", r.stderr
    assert "4-byte allocation was freed already" in r.stderr and "passed to a kernel by value" in r.stderr


def test_freeing_pinned_host_memory_with_cudafree_names_the_call_that_frees_it():
    # a book's stream example frees its cudaMallocHost buffers with cudaFree: CUDA refuses, the
    # memory stays, and the message says which call would free it
    r = run_program_source("""
        #include <cstdio>
        int main() {
            int *h, *d;
            cudaMallocHost(&h, 4096);
            cudaMalloc(&d, 4096);
            printf("%d %d\\n", (int)cudaFree(h), (int)cudaFreeHost(d));
            h[0] = 1;                     // still allocated
            printf("%d %d\\n", (int)cudaFreeHost(h), (int)cudaFree(d));
        }
    """)
    assert r.stdout == "1 1\n0 0\n", r.stderr
    assert "4,096-byte allocation was made by cudaMallocHost, and cudaFreeHost frees it, not cudaFree" in r.stderr
    assert "made by cudaMalloc, and cudaFree frees it, not cudaFreeHost" in r.stderr


# a kernel that faults at line 4 of its file, in a file of its own
FAR_AWAY = """\
// kernels, apart from main

__global__ void far_away(int *p) {
    p[threadIdx.x + (1 << 26)] = 2;
}
"""
CALLS_IT = """\
#include <cstdio>
%s
int main() {
    int *d; cudaMalloc(&d, 64);
    %s
    printf("%%s\\n", cudaGetErrorName(cudaDeviceSynchronize()));
}
"""


@pytest.mark.parametrize("files, where", [
    # a second source file: main.cu's lines are "line N", the others' are named
    ({"kernels.cu": FAR_AWAY + "void launch(int *d) { far_away<<<1, 4>>>(d); }\n",
      "main.cu": CALLS_IT % ("void launch(int *d);", "launch(d);")}, "line 4 of kernels.cu"),
    # a kernel in an included header (a course's scan_kernel.cuh)
    ({"far.cuh": FAR_AWAY, "main.cu": CALLS_IT % ('#include "far.cuh"', "far_away<<<1, 4>>>(d);")},
     "line 4 of far.cuh")])
def test_an_error_in_a_kernel_of_another_file_names_that_file_and_line(tmp_path, monkeypatch, files, where):
    from cudalab.programs import run_program
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cu", *(f for f in files if f.endswith(".cu") and f != "main.cu")], timeout=120)
    assert r.stdout == "cudaErrorIllegalAddress\n"
    assert f"at {where} in kernel far_away" in r.stderr, r.stderr


