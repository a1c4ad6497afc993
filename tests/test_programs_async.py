"""Whole programs see a GPU's asynchronous launches: a kernel waits in its stream until the host
needs it, and a broken context answers its error to every later call.

Where a test says what an H200 answered, that was the same program built with nvcc (CUDA 13).
"""
import pytest

import cudalab
from cudalab.programs import run_program_source


def run(source, **kw):
    kw.setdefault("timeout", 120)
    return run_program_source(source, **kw)


LATCH = r"""#include <cstdio>
__global__ void spin(volatile unsigned *latch) { while (latch[0] < 1) ; }
__global__ void add(int *p) { p[threadIdx.x] += 1; }
#define SHOW(call) printf("%s %s\n", #call, cudaGetErrorName(call))
"""


def test_a_kernel_waits_for_a_flag_the_host_sets_after_the_launch():
    # cuda-samples' UnifiedMemoryPerf: "prevent any work on stream from starting until all work is pushed";
    # an H200 answered these lines
    r = run(LATCH + r"""
int main() {
    unsigned *latch; int *d, h[32];
    cudaHostAlloc(&latch, 4, cudaHostAllocMapped);
    cudaMalloc(&d, 128); cudaMemset(d, 0, 128);
    cudaStream_t s; cudaStreamCreate(&s);
    cudaEvent_t e; cudaEventCreate(&e);
    *latch = 0;
    spin<<<1, 1, 0, s>>>(latch);
    add<<<1, 32, 0, s>>>(d);
    cudaEventRecord(e, s);
    SHOW(cudaStreamQuery(s));
    SHOW(cudaEventQuery(e));
    SHOW(cudaStreamQuery(0));
    *latch = 1;
    SHOW(cudaStreamSynchronize(s));
    SHOW(cudaStreamQuery(s));
    SHOW(cudaEventQuery(e));
    cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost);
    printf("h[31] = %d\n", h[31]);
}""")
    assert r.stdout.splitlines() == [
        "cudaStreamQuery(s) cudaErrorNotReady", "cudaEventQuery(e) cudaErrorNotReady",
        "cudaStreamQuery(0) cudaErrorNotReady", "cudaStreamSynchronize(s) cudaSuccess",
        "cudaStreamQuery(s) cudaSuccess", "cudaEventQuery(e) cudaSuccess", "h[31] = 1"], r.stderr


def test_asynchronous_copies_and_memsets_wait_in_their_stream_too():
    # UnifiedMemoryPerf's copy cases: pinned memory, cudaMemcpyAsync behind the spinning kernel
    r = run(LATCH + r"""
int main() {
    unsigned *latch; int *d, *h;
    cudaMallocHost(&latch, 4);
    cudaMallocHost(&h, 128);
    cudaMalloc(&d, 128);
    for (int i = 0; i < 32; ++i) h[i] = i;
    cudaStream_t s; cudaStreamCreate(&s);
    *latch = 0;
    spin<<<1, 1, 0, s>>>(latch);
    cudaMemcpyAsync(d, h, 128, cudaMemcpyHostToDevice, s);
    add<<<1, 32, 0, s>>>(d);
    cudaMemcpyAsync(h, d, 128, cudaMemcpyDeviceToHost, s);
    cudaMemsetAsync(d, 0, 128, s);
    printf("before the synchronization: %d\n", h[31]);
    *latch = 1;
    cudaStreamSynchronize(s);
    printf("after it: %d\n", h[31]);
    cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost);
    printf("after the memset: %d\n", h[31]);
}""")
    assert r.stdout.splitlines() == ["before the synchronization: 31", "after it: 32", "after the memset: 0"], r.stderr


def test_a_copy_on_the_legacy_stream_waits_for_a_blocking_stream_but_not_a_non_blocking_one():
    r = run(LATCH + r"""
int main() {
    unsigned *latch; int *d, h[32];
    cudaMallocManaged(&latch, 4);
    cudaMalloc(&d, 128); cudaMemset(d, 0, 128);
    cudaStream_t blocking, free_running;
    cudaStreamCreate(&blocking);
    cudaStreamCreateWithFlags(&free_running, cudaStreamNonBlocking);
    *latch = 0;
    spin<<<1, 1, 0, free_running>>>(latch);                  // holds up its own stream only
    add<<<1, 32, 0, blocking>>>(d);
    cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost);          // waits for add, not for spin
    printf("after the blocking stream: %d\n", h[31]);
    SHOW(cudaStreamQuery(free_running));
    *latch = 1;
    SHOW(cudaDeviceSynchronize());
}""")
    assert r.stdout.splitlines() == ["after the blocking stream: 1", "cudaStreamQuery(free_running) cudaErrorNotReady",
                                     "cudaDeviceSynchronize() cudaSuccess"], r.stderr


def test_a_stream_that_waits_for_an_event_runs_after_the_work_before_the_record():
    r = run(r"""#include <cstdio>
__global__ void first(volatile unsigned *latch, int *d) { while (latch[0] < 1) ; d[0] = 1; }
__global__ void second(int *d) { d[1] = d[0] + 1; }
int main() {
    unsigned *latch; int *d;
    cudaMallocManaged(&latch, 4);
    cudaMallocManaged(&d, 8);
    d[0] = d[1] = 0;
    *latch = 0;
    cudaStream_t a, b;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    cudaEvent_t done; cudaEventCreate(&done);
    first<<<1, 1, 0, a>>>(latch, d);
    cudaEventRecord(done, a);
    cudaStreamWaitEvent(b, done, 0);
    second<<<1, 1, 0, b>>>(d);
    printf("%s\n", cudaGetErrorName(cudaStreamQuery(b)));
    *latch = 1;
    cudaStreamSynchronize(b);
    printf("%d %d\n", d[0], d[1]);
}""")
    assert r.stdout.splitlines() == ["cudaErrorNotReady", "1 2"], r.stderr


def test_a_polling_loop_ends_when_the_kernel_is_done():
    # asyncAPI: count host iterations while the GPU works
    r = run(r"""#include <cstdio>
__global__ void inc(int *p) { p[threadIdx.x] += 1; }
int main() {
    int *d; cudaMalloc(&d, 1024 * 4);
    cudaEvent_t stop; cudaEventCreate(&stop);
    inc<<<1, 1024>>>(d);
    cudaEventRecord(stop, 0);
    unsigned long counter = 0;
    while (cudaEventQuery(stop) == cudaErrorNotReady) counter++;
    printf("%s, counted %s\n", cudaGetErrorName(cudaGetLastError()), counter > 0 ? "some" : "none");
}""")
    assert r.stdout == "cudaSuccess, counted some\n", r.stderr


def test_the_host_goes_on_while_a_kernel_runs():
    # the launch only queues the kernel: the host's next line finds it not done yet (a GPU answers the
    # same for a kernel this long), and the synchronization waits for it
    r = run(r"""#include <cstdio>
__global__ void work(float *p) {
    float x = threadIdx.x;
    for (int i = 0; i < 2000; ++i) x = x * 0.999f + 1.0f;
    p[blockIdx.x * blockDim.x + threadIdx.x] = x;
}
int main() {
    float *d; cudaMalloc(&d, 64 * 256 * 4);
    work<<<64, 256>>>(d);
    printf("right after the launch: %s\n", cudaGetErrorName(cudaStreamQuery(0)));
    cudaDeviceSynchronize();
    printf("after the synchronization: %s\n", cudaGetErrorName(cudaStreamQuery(0)));
}""")
    assert r.stdout.splitlines() == ["right after the launch: cudaErrorNotReady",
                                     "after the synchronization: cudaSuccess"], r.stderr


def test_a_kernels_error_surfaces_at_the_next_synchronization_naming_its_line():
    r = run(r"""#include <cstdio>
__global__ void poke(int *p) {
    p[1 << 28] = 1;
}
int main() {
    int *d; cudaMalloc(&d, 64);
    poke<<<1, 1>>>(d);
    printf("launch: %s\n", cudaGetErrorName(cudaGetLastError()));
    printf("sync: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
}""")
    assert r.stdout.splitlines() == ["launch: cudaSuccess", "sync: cudaErrorIllegalAddress"]
    assert "at line 3 in kernel poke" in r.stderr


def test_printf_text_comes_at_a_synchronization_and_not_without_one():
    r = run(r"""#include <cstdio>
__global__ void hello(int n) { printf("hello %d\n", n); }
int main() {
    hello<<<1, 1>>>(1);
    printf("host\n");
    fflush(stdout);
    cudaDeviceSynchronize();
    hello<<<1, 1>>>(2);
    return 0;           // no synchronization: an H200 prints nothing of the second kernel
}""")
    assert r.stdout == "host\nhello 1\n", r.stderr


# cudaErrorIllegalAddress leaves an H200's context broken: what each call answered afterwards
AFTER_A_FAULT = [
    ("cudaDeviceSynchronize()", "ERR"), ("cudaGetLastError()", "ERR"), ("cudaGetLastError()", "cudaSuccess"),
    ("cudaPeekAtLastError()", "cudaSuccess"), ("cudaMalloc(&p, 64)", "ERR"), ("cudaMalloc(&p, 1ull << 50)", "ERR"),
    ("cudaFree(0)", "ERR"), ("cudaFree((void *)0x1234)", "ERR"), ("cudaMemcpy(d, h, 64, cudaMemcpyHostToDevice)", "ERR"),
    ("cudaMemcpy(h, d, 64, (cudaMemcpyKind)99)", "cudaErrorInvalidMemcpyDirection"),
    ("cudaMemsetAsync(d, 0, 64, 0)", "ERR"), ("cudaStreamCreate(&s)", "ERR"), ("cudaStreamQuery(0)", "ERR"),
    ("cudaEventCreate(&e)", "ERR"), ("cudaEventElapsedTime(&ms, e0, e1)", "ERR"),
    ("cudaGetDeviceProperties(&prop, 0)", "cudaSuccess"), ("cudaDeviceGetAttribute(&v, cudaDevAttrWarpSize, 0)", "cudaSuccess"),
    ("cudaGetDeviceCount(&v)", "cudaSuccess"), ("cudaMemGetInfo(&f, &t)", "ERR"), ("cudaFuncGetAttributes(&fa, fine)", "ERR"),
    ("cudaMallocHost(&p, 64)", "ERR"), ("cudaFreeHost(0)", "ERR"), ("cudaPointerGetAttributes(&pa, d)", "cudaSuccess"),
    ("cudaDeviceSetLimit(cudaLimitStackSize, 4096)", "ERR"), ("cudaGraphCreate(&g, 0)", "cudaSuccess"),
    ("cudaEventDestroy(e1)", "ERR")]
BROKEN = r"""#include <cstdio>
__global__ void fine(int *p) { if (p) p[threadIdx.x] = 1; }
%s
#define SHOW(call) printf("%%s %%s\n", #call, cudaGetErrorName(call))
int main() {
    int *d, h[16] = {0}, v; void *p; float ms; size_t f, t; cudaStream_t s; cudaEvent_t e, e0, e1;
    cudaDeviceProp prop; cudaFuncAttributes fa; cudaPointerAttributes pa; cudaGraph_t g;
    cudaMalloc(&d, 64); cudaEventCreate(&e0); cudaEventCreate(&e1);
    broken<<<1, 1>>>(d);
    %s
    fine<<<1, 4096>>>(d);
    printf("a launch of a wrong shape: %%s\n", cudaGetErrorName(cudaGetLastError()));
}"""


@pytest.mark.parametrize("kernel, error", [
    ("__global__ void broken(int *p) { p[1 << 28] = 1; }", "cudaErrorIllegalAddress"),
    ("__global__ void broken(int *p) { while (true) ++p[1]; }", "cudaErrorLaunchTimeout")],
    ids=["an illegal address", "a watchdog stop"])
def test_after_a_kernel_broke_the_context_every_call_answers_its_error(kernel, error):
    saved = cudalab.runtime.device.WATCHDOG_SECONDS
    cudalab.set_watchdog(1)             # the program has no time limit of its own: the watchdog stops it
    try:
        r = run(BROKEN % (kernel, "\n    ".join(f"SHOW({call});" for call, _ in AFTER_A_FAULT)), timeout=None)
    finally:
        cudalab.set_watchdog(saved)
    expected = [f"{call} {error if answer == 'ERR' else answer}" for call, answer in AFTER_A_FAULT]
    assert r.stdout.splitlines() == expected + [f"a launch of a wrong shape: {error}"], r.stderr
    assert "kernel broken" in r.stderr


def test_a_host_waiting_for_a_flag_a_queued_kernel_sets_sees_it():
    # the other way round: the program goes quiet with work queued, so the work runs beside it
    r = run(r"""#include <cstdio>
__global__ void signal(volatile int *flag) { *flag = 1; }
int main() {
    int *flag;
    cudaHostAlloc(&flag, 4, cudaHostAllocMapped);
    *flag = 0;
    signal<<<1, 1>>>(flag);
    while (*(volatile int *)flag == 0) ;
    printf("the kernel signalled\n");
}""")
    assert r.stdout == "the kernel signalled\n", r.stderr


def test_a_host_waiting_for_a_flag_a_queued_host_function_sets_sees_it():
    # a host function waits in its stream too; a program spinning on what it sets gets it run beside it
    r = run(r"""#include <cstdio>
#include <pthread.h>
volatile int flag;
pthread_t main_thread;
__global__ void work(int *p) { p[0] = 41; }
void CUDART_CB signal(void *p) { flag = ((int *)p)[0] + !pthread_equal(pthread_self(), main_thread); }
int main() {
    int *p;
    main_thread = pthread_self();
    cudaMallocManaged(&p, 4);
    work<<<1, 1>>>(p);
    cudaLaunchHostFunc(0, signal, p);
    while (flag == 0) ;
    printf("the host function ran after the kernel, on another thread: %d\n", flag);
}""")
    assert r.stdout == "the host function ran after the kernel, on another thread: 42\n", r.stderr


def test_behind_a_kernel_that_faulted_a_stream_callback_is_told_and_a_host_function_skipped():
    # as an H200 did: the callback ran with cudaErrorIllegalAddress (on its driver thread, after the
    # host's next lines or not before the program ended); the host function behind it never ran
    r = run(r"""#include <cstdio>
__global__ void bad(int *p) { p[1 << 28] = 1; }
void CUDART_CB callback(cudaStream_t, cudaError_t status, void *) { printf("callback: %s\n", cudaGetErrorName(status)); }
void CUDART_CB host_fn(void *) { printf("host function ran\n"); }
int main() {
    int *p;
    cudaMalloc(&p, 4);
    cudaStream_t s;
    cudaStreamCreate(&s);
    bad<<<1, 1, 0, s>>>(p);
    printf("cudaStreamAddCallback -> %s\n", cudaGetErrorName(cudaStreamAddCallback(s, callback, 0, 0)));
    printf("cudaLaunchHostFunc -> %s\n", cudaGetErrorName(cudaLaunchHostFunc(s, host_fn, 0)));
    printf("cudaStreamSynchronize -> %s\n", cudaGetErrorName(cudaStreamSynchronize(s)));
    printf("cudaLaunchHostFunc -> %s\n", cudaGetErrorName(cudaLaunchHostFunc(s, host_fn, 0)));
}""")
    assert r.stdout.splitlines() == ["cudaStreamAddCallback -> cudaSuccess", "cudaLaunchHostFunc -> cudaSuccess",
                                     "callback: cudaErrorIllegalAddress",
                                     "cudaStreamSynchronize -> cudaErrorIllegalAddress",
                                     "cudaLaunchHostFunc -> cudaErrorIllegalAddress"], r.stderr


def test_a_profile_sees_the_kernels_a_program_leaves_queued_at_its_end():
    source = r"""__global__ void last(int *p) { p[threadIdx.x] = 1; }
int main() { int *d; cudaMalloc(&d, 128); last<<<1, 32>>>(d); }"""
    assert [rec.kernel for rec in run(source).launches] == []          # never run, as nothing waits for it
    assert [rec.kernel for rec in run(source, profile=True).launches] == ["last"]


def test_a_graph_launched_behind_a_waiting_kernel_waits_too():
    # cudaGraphsPerfScaling: "launch including upload in busy stream"
    r = run(LATCH + r"""
int main() {
    unsigned *latch; int *d, h[32];
    cudaMallocManaged(&latch, 4);
    cudaMalloc(&d, 128); cudaMemset(d, 0, 128);
    cudaStream_t s; cudaStreamCreate(&s);
    cudaGraph_t g; cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    add<<<1, 32, 0, s>>>(d);
    add<<<1, 32, 0, s>>>(d);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&exec, g, 0);
    *latch = 0;
    spin<<<1, 1, 0, s>>>(latch);
    cudaGraphLaunch(exec, s);
    SHOW(cudaStreamQuery(s));
    *latch = 1;
    SHOW(cudaStreamSynchronize(s));
    cudaMemcpy(h, d, 128, cudaMemcpyDeviceToHost);
    printf("h[31] = %d\n", h[31]);
}""")
    assert r.stdout.splitlines() == ["cudaStreamQuery(s) cudaErrorNotReady", "cudaStreamSynchronize(s) cudaSuccess",
                                     "h[31] = 2"], r.stderr
    assert [rec.kernel for rec in r.launches] == ["spin", "add", "add"]


GRAPH_OF_COPIES = LATCH + r"""
int main() {
    unsigned *latch; int *d, *e, *h;
    cudaMallocManaged(&latch, 4);
    cudaMallocHost(&h, 128);
    cudaMalloc(&d, 128); cudaMalloc(&e, 128);
    cudaMemset(d, 0, 128);
    cudaStream_t s; cudaStreamCreate(&s);
    cudaGraph_t g; cudaGraphExec_t exec;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    add<<<1, 32, 0, s>>>(d);
    cudaMemcpyAsync(e, d, 128, cudaMemcpyDeviceToDevice, s);
    cudaMemsetAsync(d, 0, 64, s);
    cudaMemcpyAsync(h, e, 128, cudaMemcpyDeviceToHost, s);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&exec, g, 0);
    h[0] = h[31] = -1;
    *latch = 0;
    spin<<<1, 1, 0, s>>>(latch);
    cudaGraphLaunch(exec, s);
    cudaGraphLaunch(exec, s);
    SHOW(cudaStreamQuery(s));
    printf("before: %d %d\n", h[0], h[31]);
    *latch = 1;
    SHOW(cudaStreamSynchronize(s));
    printf("after: %d %d\n", h[0], h[31]);
}"""


def test_a_graph_of_copies_and_memsets_behind_a_waiting_kernel_waits_and_moves_the_bytes_when_it_runs():
    # two launches: add, copy d to e, zero d's first half, copy e to pinned host memory; an H100 printed these
    r = run(GRAPH_OF_COPIES)
    assert r.stdout.splitlines() == ["cudaStreamQuery(s) cudaErrorNotReady", "before: -1 -1",
                                     "cudaStreamSynchronize(s) cudaSuccess", "after: 1 2"], r.stderr


def test_an_asynchronous_copy_to_registered_memory_waits_in_its_stream():
    # cudaHostRegister'ed memory is the program's own: the copy behind the spinning kernel writes it
    # when its turn comes (an H200 printed the first two lines)
    r = run(LATCH + r"""
int main() {
    unsigned *latch; int *d;
    static int v[4], w[4] = {5, 6, 7, 8};
    cudaHostAlloc(&latch, 4, cudaHostAllocMapped);
    cudaHostRegister(v, sizeof v, 0); cudaHostRegister(w, sizeof w, 0);
    cudaMalloc(&d, sizeof v);
    cudaMemset(d, 7, sizeof v);
    cudaStream_t s; cudaStreamCreate(&s);
    *latch = 0;
    spin<<<1, 1, 0, s>>>(latch);
    cudaMemcpyAsync(v, d, sizeof v, cudaMemcpyDeviceToHost, s);
    cudaMemcpyAsync(d, w, sizeof w, cudaMemcpyHostToDevice, s);
    printf("registered before: %d\n", v[0]);
    *latch = 1;
    cudaStreamSynchronize(s);
    printf("registered after: %d\n", v[0]);
    cudaMemcpy(v, d, sizeof v, cudaMemcpyDeviceToHost);
    printf("copied in: %d %d\n", v[0], v[3]);
}""")
    assert r.stdout.splitlines() == ["registered before: 0", "registered after: 117901063", "copied in: 5 8"], r.stderr


# courses18: TACC's stream lab pipelines chunks through two page-locked buffers per stream and reads a chunk's
# output after only cudaStreamWaitEvent (the stream waits, not the host); an H200 passed it 4 runs of 4
PIPELINE = r"""#include <cstdio>
#include <cstring>
__global__ void square_plus(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * in[i] + 1.0f;
}
int main() {
    const int chunk = 512, chunks = 8, lanes = 2;
    static float input[chunk * chunks], output[chunk * chunks];
    for (int i = 0; i < chunk * chunks; i++) input[i] = (float)(i % 97);
    float *staged_in[lanes], *staged_out[lanes], *d_in[lanes], *d_out[lanes];
    cudaStream_t s[lanes];
    cudaEvent_t done[chunks];
    for (int k = 0; k < lanes; k++) {
        cudaMallocHost(&staged_in[k], chunk * sizeof(float));
        cudaMallocHost(&staged_out[k], chunk * sizeof(float));
        cudaMalloc(&d_in[k], chunk * sizeof(float));
        cudaMalloc(&d_out[k], chunk * sizeof(float));
        cudaStreamCreate(&s[k]);
    }
    for (int c = 0; c < chunks; c++) {
        int k = c % lanes;
        cudaEventCreate(&done[c]);
        if (c >= lanes) {
            cudaStreamWaitEvent(s[k], done[c - lanes], 0);
            memcpy(output + (c - lanes) * chunk, staged_out[k], chunk * sizeof(float));
        }
        memcpy(staged_in[k], input + c * chunk, chunk * sizeof(float));      // refilled: its last copy is queued
        cudaMemcpyAsync(d_in[k], staged_in[k], chunk * sizeof(float), cudaMemcpyHostToDevice, s[k]);
        square_plus<<<chunk / 256, 256, 0, s[k]>>>(d_in[k], d_out[k], chunk);
        cudaMemcpyAsync(staged_out[k], d_out[k], chunk * sizeof(float), cudaMemcpyDeviceToHost, s[k]);
        cudaEventRecord(done[c], s[k]);
    }
    for (int k = 0; k < lanes; k++) {
        cudaStreamSynchronize(s[k]);
        memcpy(output + (chunks - lanes + k) * chunk, staged_out[k], chunk * sizeof(float));
    }
    int wrong = 0;
    for (int i = 0; i < chunk * chunks; i++)
        wrong += output[i] != input[i] * input[i] + 1.0f;
    printf("%d wrong\n", wrong);
    FILE *f = fopen("last_chunk.bin", "wb");                 // a system call reads the buffer after the wait
    printf("%zu written\n", fwrite(staged_out[1], sizeof(float), chunk, f));
    fclose(f);
}
"""


def test_a_pinned_buffer_the_host_reads_after_a_stream_side_wait_holds_the_copy_a_gpu_made_meanwhile(tmp_path,
                                                                                                     monkeypatch):
    # before: the copies waited in their streams until cudaStreamSynchronize, so the host read the buffers
    # as the previous chunk left them (6 of the 8 chunks wrong); the host's touch now runs the queued work
    monkeypatch.chdir(tmp_path)             # (it writes last_chunk.bin where it runs)
    r = run(PIPELINE)
    assert r.stdout.splitlines() == ["0 wrong", "512 written"], r.stdout + r.stderr


def test_a_kernel_spinning_on_a_latch_keeps_the_copy_behind_it_queued_when_the_host_reads_its_buffer():
    # the host's read of the copy's page-locked destination runs no kernel that holds host memory (the latch):
    # on a GPU that kernel spins and the copy behind it has not happened yet (UnifiedMemoryPerf's pattern)
    r = run(LATCH + r"""
int main() {
    unsigned *latch; int *d, *h;
    cudaHostAlloc(&latch, 4, cudaHostAllocMapped);
    cudaMallocHost(&h, 128);
    cudaMalloc(&d, 128); cudaMemset(d, 0, 128);
    for (int i = 0; i < 32; ++i) h[i] = -1;
    cudaStream_t s; cudaStreamCreate(&s);
    *latch = 0;
    add<<<1, 32, 0, s>>>(d);
    spin<<<1, 1, 0, s>>>(latch);
    cudaMemcpyAsync(h, d, 128, cudaMemcpyDeviceToHost, s);
    printf("while it spins: %d\n", h[31]);
    *latch = 1;
    cudaStreamSynchronize(s);
    printf("after: %d\n", h[31]);
}""")
    assert r.stdout.splitlines() == ["while it spins: -1", "after: 1"], r.stderr
