"""Launch plans: what every launch of one shape would derive again (checks, shared-memory layout,
batch sizes, the timing estimate) is derived once and kept, with the same results, errors and
timeline rows as before (bench/launch_cost.py measures the CPU time it saves)."""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import engine
from cudalab.emulator.memory import DeviceMemory
from cudalab.errors import CudaError
from cudalab.ptx import parse
from cudalab.runtime.core import Context, Function

SOURCE = r"""
extern "C" __global__ void scale(float* x, float k, int n) {
    extern __shared__ float tile[];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) x[i] = tile[threadIdx.x] * k;
}
"""


@pytest.fixture
def ctx_and_scale():
    """A runtime core and the kernel, as a whole program's server holds them."""
    memory = DeviceMemory()
    ctx = Context(memory)
    program = ctx.bind(engine.Program(parse(cudalab.compile(SOURCE).ptx), memory))
    return ctx, Function(program, "scale", "scale", [(8, 8), (4, 4), (4, 4)])


def launch(ctx, fn, x, n, k, grid, block, shared):
    args = x.to_bytes(8, "little") + np.float32(k).tobytes() + int(n).to_bytes(4, "little")
    ctx.launch(fn, grid, block, shared, args)
    ctx.finish_all()
    return ctx.launches[-1]


def test_a_kernel_launched_in_a_loop_gives_the_same_results_and_timeline_rows(ctx_and_scale):
    ctx, fn = ctx_and_scale
    n = 1000
    x = ctx.malloc(4 * n, "device")
    ctx.memory.arena.write(x, np.ones(n, np.float32))
    records = [launch(ctx, fn, x, n, 2, (4, 1, 1), (256, 1, 1), 1024) for _ in range(5)]
    np.testing.assert_array_equal(ctx.memory.arena.read(x, 4 * n).view(np.float32), np.full(n, 32, np.float32))
    assert len({r.thread_instructions for r in records}) == 1
    rows = [r for r in ctx.timeline.rows() if r["kind"] == "kernel"]
    assert len(rows) == 5 and len({round(r["end"] - r["start"], 9) for r in rows}) == 1
    assert all(r["model"] == "instructions only" for r in rows)
    # one plan for the shape, kept with the decoded function; another dynamic size gets its own
    df = fn.program.function("scale")
    assert len(df._plans) == 1
    launch(ctx, fn, x, n, 0.5, (4, 1, 1), (256, 1, 1), 2048)
    assert len(df._plans) == 2
    plan = engine.launch_plan(fn.program, df, (4, 1, 1), (256, 1, 1), 2048)
    assert plan.total_shared == 2048 and plan.lpb == 256 and plan.blocks == 4


def test_a_refused_shape_is_refused_at_every_launch(ctx_and_scale):
    """Only shapes that passed the checks are kept: a bad one gets CUDA's error each time."""
    ctx, fn = ctx_and_scale
    x = ctx.malloc(4 * 1024, "device")
    for _ in range(2):
        with pytest.raises(CudaError, match="at most 1024 threads") as e:
            launch(ctx, fn, x, 1024, 1, (1, 1, 1), (2048, 1, 1), 0)
        assert e.value.code == "cudaErrorInvalidValue"
    assert not fn.checked


def test_a_shape_refused_before_passes_once_the_kernel_may_use_more_shared_memory(ctx_and_scale):
    """cudaFuncSetAttribute changes what a launch may ask for: the checks read the new value."""
    ctx, fn = ctx_and_scale
    x = ctx.malloc(4 * 256, "device")
    big = 64 * 1024
    for _ in range(2):
        with pytest.raises(CudaError, match="shared memory"):
            launch(ctx, fn, x, 256, 1, (1, 1, 1), (256, 1, 1), big)
    ok = launch(ctx, fn, x, 256, 1, (1, 1, 1), (256, 1, 1), 1024)
    ctx.func_set_attribute(fn, 8, big)          # cudaFuncAttributeMaxDynamicSharedMemorySize
    rec = launch(ctx, fn, x, 256, 1, (1, 1, 1), (256, 1, 1), big)
    assert rec.shared_bytes == big and rec.thread_instructions == ok.thread_instructions


LOOP_PROGRAM = r"""
#include <cstdio>
__global__ void inc(int *x) { atomicAdd(x, 1); }
__global__ void crash(int *p) { *p = 1; }
int main() {
    int *x;
    cudaMallocManaged(&x, 4);
    *x = 0;
    int failed = 0;
    for (int i = 0; i < 200; i++) {          // the same launch again and again: sent without waiting
        inc<<<1, 32>>>(x);
        if (cudaGetLastError() != cudaSuccess) failed++;
    }
    inc<<<1, 2048>>>(x);                      // a shape the checks refuse, in the middle of the loop
    cudaError_t refused = cudaGetLastError();
    for (int i = 0; i < 100; i++) inc<<<1, 32>>>(x);
    cudaError_t synced = cudaDeviceSynchronize();
    printf("%d %d %s %s\n", *x, failed, cudaGetErrorName(refused), cudaGetErrorName(synced));
    for (int i = 0; i < 50; i++) crash<<<1, 1>>>(nullptr);     // asynchronous: each launch succeeds
    cudaError_t launched = cudaGetLastError();
    cudaError_t faulted = cudaDeviceSynchronize();
    crash<<<1, 1>>>(nullptr);
    printf("%s %s %s\n", cudaGetErrorName(launched), cudaGetErrorName(faulted), cudaGetErrorName(cudaGetLastError()));
}
"""


def test_a_loop_of_launches_gets_every_result_and_error_of_a_gpu():
    """A launch that repeats the last one goes to the emulator without waiting for its answer: the
    counts, a refused shape's error at its own call and a fault's at the synchronization stay a GPU's."""
    from cudalab.programs import run_program_source
    r = run_program_source(LOOP_PROGRAM)
    lines = r.stdout.splitlines()
    assert lines[0] == f"{300 * 32} 0 cudaErrorInvalidValue cudaSuccess"
    assert lines[1] == "cudaSuccess cudaErrorIllegalAddress cudaErrorIllegalAddress"
    assert len(r.launches) == 301          # the 50 after the first crash do not run, as on a GPU


def test_a_compiled_launch_of_several_batches_builds_its_native_context_once(monkeypatch):
    """A grid bigger than a native batch runs as a few batches (a small sample first, then whole
    ones), each starting at its own block. Their native context (compiled._context) is kept per
    batch shape, so a loop of such launches builds none again: keeping only the last one rebuilt
    it at every batch of every launch."""
    from cudalab.emulator import compiled
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    kernel = cudalab.compile(r"""
    __global__ void add(const float* a, const float* b, float* c, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = a[i] + b[i];
    }""").get_kernel("add")
    n = (1 << 19) + (1 << 17)           # more lanes than one native batch (compiled.WHOLE_KERNEL_LANES)
    rng = np.random.default_rng(3)
    a, b = rng.random(n, np.float32), rng.random(n, np.float32)
    da, db, dc = cudalab.to_device(a), cudalab.to_device(b), cudalab.to_device(np.zeros(n, np.float32))
    grid = (n + 255) // 256
    for _ in range(2):      # compiles and builds each batch's context (from a cold cache the first
        kernel[grid, 256](da, db, dc, np.int32(n))      # launch's sample batch may still be interpreted)
    built, contexts = [], []
    real_template, real_context = compiled._context_template, compiled._context
    monkeypatch.setattr(compiled, "_context_template", lambda *args: built.append(1) or real_template(*args))
    monkeypatch.setattr(compiled, "_context", lambda *args: contexts.append(1) or real_context(*args))
    for turn in range(3):
        b = rng.random(n, np.float32)
        db.copy_to_device(b)            # new values in the same allocation: the same parameters
        kernel[grid, 256](da, db, dc, np.int32(n))
        assert np.array_equal(dc.copy_to_host(), a + b), f"launch {turn}"
    assert len(contexts) >= 6           # several batches a launch, each with its context
    assert built == []


def test_a_python_launch_in_a_loop_is_checked_once_and_a_bad_shape_every_time(monkeypatch):
    """kernel[grid, block](...) in a loop: CUDA's launch checks run for the first launch of a shape
    only (Context.checked_shape), while a shape that fails them is refused at every launch."""
    from cudalab.runtime.core.context import Context as Core
    kernel = cudalab.compile(r"""
    __global__ void inc(int* x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 1; }""").get_kernel("inc")
    x = cudalab.to_device(np.zeros(64, np.int32))
    checks = []
    real = Core.check_launch
    monkeypatch.setattr(Core, "check_launch", lambda self, *args, **kw: checks.append(1) or real(self, *args, **kw))
    for _ in range(5):
        kernel[2, 32](x)
    assert x.copy_to_host().tolist() == [5] * 64
    assert len(checks) == 1
    for _ in range(2):
        with pytest.raises(CudaError, match="at most 1024 threads"):
            kernel[1, 2048](x)
    assert len(checks) == 3


def test_a_compiled_launch_on_freshly_copied_arguments_reuses_its_native_context(monkeypatch):
    """A benchmark or a student's loop often copies its inputs to the device before every launch:
    new allocations, so new pointers in the parameters and new allocation bounds. Those are
    written into a copy of the kernel's context template at each batch (compiled._context); the
    template itself is built again only where the arena moved (its address is in the template)."""
    from cudalab.emulator import compiled
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    kernel = cudalab.compile(r"""
    __global__ void scale(const float* a, float* c, float k, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) c[i] = k * a[i];
    }""").get_kernel("scale")
    n = 1 << 14
    rng = np.random.default_rng(4)
    a = rng.random(n, np.float32)
    for _ in range(2):      # compiles (from a cold cache the first launch may still be interpreted)
        kernel[n // 256, 256](cudalab.to_device(a), cudalab.to_device(np.zeros(n, np.float32)), np.float32(2), np.int32(n))
    arenas = []             # the arena each template was built for
    real_template = compiled._context_template
    monkeypatch.setattr(compiled, "_context_template",
                        lambda ex, *args: arenas.append(ex.mem.data) or real_template(ex, *args))
    for turn in range(4):
        a = rng.random(n, np.float32)
        da, dc = cudalab.to_device(a), cudalab.to_device(np.zeros(n, np.float32))
        kernel[n // 256, 256](da, dc, np.float32(3), np.int32(n))
        assert np.array_equal(dc.copy_to_host(), np.float32(3) * a), f"launch {turn}"
    assert all(x is not y for k, x in enumerate(arenas) for y in arenas[k + 1:]), \
        "a template was built again for the same arena"


def test_a_batch_that_native_code_runs_whole_makes_no_lane_masks(monkeypatch):
    """Which lanes exited or returned is the interpreter's question. A batch that one native region
    runs from the kernel's start to its end never asks it, so the batch makes no such masks (at 2^19
    lanes each was an inversion or zeroing, with its fresh pages, of tens of microseconds), while an
    interpreted launch whose threads return early still ends them right."""
    from cudalab.emulator import engine
    source = r"""
    __global__ void clamp(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        if (x[i] > 1.0f) x[i] = 1.0f;
    }"""
    batches = []
    real_init = engine.Exec.__init__

    def noted(self, *args, **kw):
        real_init(self, *args, **kw)
        batches.append(self)
    monkeypatch.setattr(engine.Exec, "__init__", noted)
    n = 5000
    for tier in ("compiled", "compiled", "interp"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        kernel = cudalab.compile(source).get_kernel("clamp")
        x = np.linspace(0, 2, n, dtype=np.float32)
        d = cudalab.to_device(x)
        batches.clear()
        kernel[(n + 255) // 256, 256](d, np.int32(n))
        assert np.array_equal(d.copy_to_host(), np.minimum(x, 1)), tier
    # the last compiled launch (the first may still have been interpreted from a cold cache)
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    batches.clear()
    kernel[(n + 255) // 256, 256](cudalab.to_device(x), np.int32(n))
    assert batches and all(ex._exited is None for ex in batches)


def test_a_small_batch_shape_takes_plain_arrays_and_a_big_one_huge_pages():
    """A batch shape's lane arrays (engine._geometry) come from one buffer of 2 MiB pages only where
    they are big (a 2^20-thread batch: a few page faults instead of thousands). A 256-block batch
    needs 2.4 MB of them: padded out to 6 MiB of huge pages, which Linux may first have to make by
    compacting memory, its first launch took up to ten times as long as with plain arrays."""
    from cudalab.emulator import engine
    small = engine._build_geometry(256, 256, 256, (256, 1, 1), 0)
    assert all(a.base is None or a.base.nbytes == a.nbytes for a in small[:4])     # each its own
    big = engine._build_geometry(4096, 256, 256, (256, 1, 1), 0)
    base = big[0].base
    assert base is not None and base.nbytes >= engine.SLAB_BYTES and big[1].base is base
    assert small[3].all() and small[5].tolist() == list(range(256 * 256))


def test_a_kernel_launched_again_refills_its_last_shared_memory_with_zeros(monkeypatch):
    """A kernel launched in a loop takes its last launch's register arrays and shared memory back
    (engine._run_batches' pool), zeroed, instead of mapping fresh pages, which fault in one by one at
    their first touch (a 2^20-thread tree reduction: 330 faults, a millisecond of system time a
    launch). Every launch still starts from zeroed shared memory, as the emulator's always has."""
    from cudalab.emulator import engine
    kernel = cudalab.compile(r"""
    __global__ void count(int* out) {
        __shared__ int s[256];
        s[threadIdx.x] += 1;                       // reads shared memory nobody wrote
        __syncthreads();
        out[blockIdx.x * blockDim.x + threadIdx.x] = s[255 - threadIdx.x];
    }""").get_kernel("count")
    batches = []
    real_init = engine.Exec.__init__

    def noted(self, *args, **kw):
        real_init(self, *args, **kw)
        batches.append(self.shared.ctypes.data)
    monkeypatch.setattr(engine.Exec, "__init__", noted)
    out = cudalab.to_device(np.zeros(64 * 256, np.int32))
    for turn in range(3):
        kernel[64, 256](out)
        assert (out.copy_to_host() == 1).all(), f"launch {turn}"
    assert len(set(batches[1:])) == 1       # the same memory again (the first launch may have made two)


STREAMS_PROGRAM = r"""
#include <cstdio>
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void crash(int *p) { *p = 1; }
int main() {
    const int n = 64;
    cudaStream_t s[4];
    cudaEvent_t done[4];
    float *in, *out, *x, *y;
    cudaMallocHost(&in, 4 * n * sizeof(float));
    cudaMallocHost(&out, 4 * n * sizeof(float));
    cudaMalloc(&x, 4 * n * sizeof(float));
    cudaMalloc(&y, 4 * n * sizeof(float));
    cudaMemset(y, 0, 4 * n * sizeof(float));
    for (int i = 0; i < 4 * n; i++) in[i] = 1.0f;
    for (int k = 0; k < 4; k++) cudaStreamCreate(&s[k]), cudaEventCreate(&done[k]);
    int failed = 0;
    for (int round = 0; round < 50; round++)      // copy in, kernel, copy out, record: on 4 streams in turn
        for (int k = 0; k < 4; k++) {
            float *xk = x + k * n, *yk = y + k * n;
            failed += cudaMemcpyAsync(xk, in + k * n, n * sizeof(float), cudaMemcpyHostToDevice, s[k]) != cudaSuccess;
            axpy<<<1, n, 0, s[k]>>>(2.0f, xk, yk, n);
            failed += cudaGetLastError() != cudaSuccess;
            failed += cudaMemcpyAsync(out + k * n, yk, n * sizeof(float), cudaMemcpyDeviceToHost, s[k]) != cudaSuccess;
            failed += cudaEventRecord(done[k], s[k]) != cudaSuccess;
        }
    cudaError_t synced = cudaDeviceSynchronize();
    printf("%g %g %d %s\n", out[0], out[4 * n - 1], failed, cudaGetErrorName(synced));
    cudaStreamDestroy(s[3]);                      // the launch and the record on it are refused at their call
    axpy<<<1, n, 0, s[3]>>>(2.0f, x, y, n);
    cudaError_t launched = cudaGetLastError();
    cudaEventDestroy(done[2]);
    cudaError_t recorded = cudaEventRecord(done[2], s[2]);
    printf("%s %s\n", cudaGetErrorName(launched), cudaGetErrorName(recorded));
    crash<<<1, 1, 0, s[0]>>>(nullptr);            // a fault: asynchronous, told by the synchronization
    for (int i = 0; i < 20; i++) axpy<<<1, n, 0, s[1]>>>(2.0f, x + n, y + n, n);
    printf("%s\n", cudaGetErrorName(cudaDeviceSynchronize()));
}
"""


def requests_sent_unanswered(monkeypatch) -> list:
    """The first word of each request the program's shim sent without waiting for an answer, as the
    server reads them (a list that fills while the program runs)."""
    from cudalab.programs.server import Server
    unanswered = []
    real = Server._answer

    def answer(self, msg, nested=False, answered=True):
        if not answered:
            unanswered.append(msg.split()[0])
        return real(self, msg, nested, answered)
    monkeypatch.setattr(Server, "_answer", answer)
    return unanswered


def test_a_streams_loop_sends_its_repeated_launches_copies_and_records_without_waiting(monkeypatch):
    """A streams-and-overlap exercise queues copy, kernel, copy and an event record on each of 4 streams
    in turn. A launch, an event record or an asynchronous copy in emulated memory whose request text
    succeeded before goes unanswered while only launches, records and asynchronous copies came between
    (the emulator then moves the copy's bytes in its turn): a round trip to the emulator fewer each,
    with every result, a destroyed stream's or event's error at its own call and a fault's at the
    synchronization as on a GPU (y = 2x + y with x = 1, 50 times over, is 100)."""
    from cudalab.programs import run_program_source
    unanswered = requests_sent_unanswered(monkeypatch)
    r = run_program_source(STREAMS_PROGRAM, timeout=120)
    assert r.stdout.splitlines() == ["100 100 0 cudaSuccess",
                                     "cudaErrorInvalidResourceHandle cudaErrorInvalidResourceHandle",
                                     "cudaErrorIllegalAddress"]
    # the first round's launches, records and copies are answered; nearly all of the next 49 rounds' go
    # without waiting (a call or two more may be answered, by when the shim reads the emulator's replies:
    # runs here gave 195 or 196 records of 196, 390 or 391 copies of 391)
    assert unanswered.count(b"launch") >= 49 * 4 and unanswered.count(b"event_record") >= 48 * 4
    # (the very first copy was asked before the kernel's parameters were, a request that forgets them)
    assert 48 * 8 <= unanswered.count(b"copy") <= 49 * 8 - 1      # and the emulator moved their bytes


MANY_STREAMS_PROGRAM = r"""#include <cstdio>
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
int main() {
    const int streams = 300, n = 64;        // NCI's axpy_overlapped: one stream per chunk, 306 of them
    cudaStream_t s[streams];
    for (int k = 0; k < streams; k++) cudaStreamCreate(&s[k]);
    float *x, *y, *hx, *hy;
    cudaMalloc(&x, streams * n * sizeof(float));
    cudaMalloc(&y, streams * n * sizeof(float));
    cudaMallocHost(&hx, streams * n * sizeof(float));
    cudaMallocHost(&hy, streams * n * sizeof(float));
    for (int i = 0; i < streams * n; i++) hx[i] = 1, hy[i] = 0;
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    for (int round = 0; round < 5; round++) {
        cudaDeviceSynchronize();
        cudaEventRecord(start);
        for (int k = 0; k < streams; k++) {
            cudaMemcpyAsync(x + k * n, hx + k * n, n * sizeof(float), cudaMemcpyHostToDevice, s[k]);
            cudaMemcpyAsync(y + k * n, hy + k * n, n * sizeof(float), cudaMemcpyHostToDevice, s[k]);
            axpy<<<1, n, 0, s[k]>>>(2.0f, x + k * n, y + k * n, n);
            cudaMemcpyAsync(hy + k * n, y + k * n, n * sizeof(float), cudaMemcpyDeviceToHost, s[k]);
        }
        cudaDeviceSynchronize();
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float ms;
        cudaEventElapsedTime(&ms, start, stop);
    }
    printf("%g %g %s\n", hy[0], hy[streams * n - 1], cudaGetErrorName(cudaGetLastError()));
}
"""


def test_a_loop_over_hundreds_of_streams_timed_with_synchronizations_goes_unanswered_after_its_first_round(monkeypatch):
    """NCI's axpy_overlapped times 1,000 rounds of copy, copy, kernel, copy on each of 306 streams, a
    cudaDeviceSynchronize and an event pair around each round: 1,224 different requests a round, which
    a shim that kept 64 texts and forgot them at every synchronization answered one by one. Known texts
    are kept across synchronizations, queries and allocations that succeed, so every round after the
    first goes without waiting (y = 2x + y with x = 1, five times over, is 10)."""
    from cudalab.programs import run_program_source
    unanswered = requests_sent_unanswered(monkeypatch)
    r = run_program_source(MANY_STREAMS_PROGRAM, timeout=120)
    assert r.stdout == "10 10 cudaSuccess\n", r.stdout + r.stderr
    # (a few more may be answered, by when the shim reads the emulator's replies: runs here left 0 to 3
    # copies of 3,600 answered; before, every launch and copy was)
    assert unanswered.count(b"launch") >= 4 * 300 - 10
    assert unanswered.count(b"copy") >= 4 * 900 - 10


def test_a_kernel_launched_on_each_chunk_in_turn_reads_its_pointers_kinds_once_per_chunk(ctx_and_scale, monkeypatch):
    """A streams exercise launches one kernel on chunk after chunk of an array, round after round: which
    of its pointer arguments are mapped host memory (the timeline's zero-copy traffic) is worked out
    once per argument list while no allocation changes, not at every launch."""
    ctx, fn = ctx_and_scale
    n, chunks = 256, 8
    x = ctx.malloc(4 * n * chunks, "device")
    ctx.memory.arena.write(x, np.ones(n * chunks, np.float32))
    worked_out = []
    real = Context._mapped_traffic
    monkeypatch.setattr(Context, "_mapped_traffic", lambda self, f, args: worked_out.append(args) or real(self, f, args))
    for _ in range(3):
        for c in range(chunks):
            launch(ctx, fn, x + 4 * n * c, n, 2, (1, 1, 1), (256, 1, 1), 1024)
    assert len(worked_out) == chunks
    np.testing.assert_array_equal(ctx.memory.arena.read(x, 4 * n * chunks).view(np.float32), 8)
    ctx.malloc(64, "device")                    # a new allocation: asked again
    launch(ctx, fn, x, n, 2, (1, 1, 1), (256, 1, 1), 1024)
    assert len(worked_out) == chunks + 1
