"""Asynchronous copies, mbarriers and named barriers, by example: when the bytes land, who waits for
whom, what racecheck says, and the errors a student gets. Bit-exactness against the H100 is checked by
the async_copy corpus (tests/kernels/async_copy.py); these tests cover what a recording cannot show.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.errors import KernelError

sys.path.insert(0, str(Path(__file__).parent))
from kernels import cases  # noqa: E402
from kernels.async_copy import PTX90  # noqa: E402

SRC = r"""
#include <cuda_pipeline.h>
#include <cuda/barrier>
__global__ void read_before_wait(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = -1;
  __syncthreads();
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));   // line 9
  __pipeline_commit();
  __syncthreads();                                        // a barrier is not a wait
  out[t] = s[63 - t];                                     // line 12: the copy may still be in flight
  __pipeline_wait_prior(0);
}
__global__ void wait_then_sync(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[63 - t];
}
__global__ void wait_without_sync(const int* in, int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &in[t], sizeof(int));    // line 27
  __pipeline_commit();
  __pipeline_wait_prior(0);                               // completes this thread's copy only
  out[t] = s[63 - t];                                     // line 30: another warp's copy
}
__global__ void barrier_copy(const int* in, int* out, int early) {
  __shared__ int s[64];
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  int t = threadIdx.x;
  if (t == 0) init(&bar, blockDim.x);
  __syncthreads();
  cuda::memcpy_async(&s[t], &in[t], sizeof(int), bar);    // line 38
  auto token = bar.arrive();
  int v = early ? s[63 - t] : 0;                          // line 40: before the wait
  bar.wait(std::move(token));
  out[t] = early ? v : s[63 - t];
}
__global__ void refill_too_soon(const int* in, int* out) {
  __shared__ int s[2][64];
  int t = threadIdx.x, acc = 0;
  __pipeline_memcpy_async(&s[0][t], &in[t], sizeof(int));
  __pipeline_commit();
  for (int k = 0; k < 4; ++k) {
    __pipeline_memcpy_async(&s[(k + 1) & 1][t], &in[64 * (k + 1) + t], sizeof(int));   // line 50
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    acc += s[k & 1][63 - t];                              // line 54
    // missing: __syncthreads() before the next iteration refills the other buffer
  }
  out[t] = acc;
  __pipeline_wait_prior(0);
}
"""


@pytest.fixture(scope="module")
def mod():
    return cudalab.compile(SRC)


@pytest.fixture(autouse=True)
def checks_off():
    yield
    cudalab.check()


def findings(kernel, *args, block=64):
    with cudalab.check("racecheck"):
        rec = kernel[1, block](*args)
    return [(f.details["hazard"], f.details["lines"], f.details.get("async")) for f in rec.findings]


IN = np.arange(100, 420, dtype=np.int32)


# ---------------------------------------------------------------- when the bytes land

def test_a_read_before_the_wait_sees_the_old_bytes(mod):
    """The copy lands at the wait. On an H100 the same kernel (512 blocks, 20 runs) read the old value
    in every thread: the emulator shows what the GPU did, and racecheck says why."""
    out = np.zeros(64, np.int32)
    assert findings(mod.read_before_wait, IN, out) == [("RAW", (9, 12), "flight")]
    assert out.tolist() == [-1] * 64


def test_wait_then_barrier_is_right_and_clean(mod):
    out = np.zeros(64, np.int32)
    assert findings(mod.wait_then_sync, IN, out) == []
    assert out.tolist() == IN[:64][::-1].tolist()


def test_a_wait_only_completes_the_threads_own_copies(mod):
    """Another warp's copy is that warp's write: reading it needs a __syncthreads() after the waits."""
    assert findings(mod.wait_without_sync, IN, np.zeros(64, np.int32)) == [("RAW", (27, 30), None)]


@pytest.mark.parametrize("early, hazards, first", [(1, [("RAW", (38, 40), "flight")], -1), (0, [], 163)])
def test_cuda_barrier_tracks_the_copies(mod, early, hazards, first):
    out = np.full(64, -1, np.int32)
    mod.barrier_copy[1, 64](IN, out, np.int32(early))      # shared memory starts as zeros here
    assert findings(mod.barrier_copy, IN, out, np.int32(early)) == hazards
    assert out[0] == (0 if early else first)


def test_refilling_a_buffer_that_is_still_read_is_a_hazard(mod):
    found = findings(mod.refill_too_soon, IN, np.zeros(64, np.int32))
    assert ("WAR", (54, 50), None) in found


def test_mbarrier_data_needs_the_wait_in_every_reader():
    src = PTX90 + r"""
__global__ void partial_wait(const int* in, int* out) {
  __shared__ alignas(16) int s[64];
  __shared__ unsigned long long bar;
  int t = threadIdx.x;
  if (t == 0) mbar_init(&bar, 1);
  __syncthreads();
  if (t == 0) { mbar_arrive_tx(&bar, 256); bulk_g2s(s, in, 256, &bar); }
  if (t < 32) mbar_wait_parity(&bar, 0);       // only warp 0 waits
  out[t] = s[63 - t];                            // warp 1 reads what it never waited for
}"""
    k = cudalab.compile(src, "-arch=compute_90").get_kernel("partial_wait")
    out = np.zeros(64, np.int32)
    found = findings(k, IN, out)
    line = next(n for n, text in enumerate(src.splitlines(), 1) if "never waited" in text)
    assert found == [("RAW", (0, line), "unseen")]
    assert out.tolist() == IN[:64][::-1].tolist()


RACE_FREE = [c for c in cases(["async_copy"]) if c["name"] not in (
    "cuda_barrier_completion_function",              # a barrier built from atomics: racecheck cannot see it
    "bulk_copy_shared_to_shared_cluster", "bulk_reduce_shared_cluster_mbarrier")]   # need a cluster launch


@pytest.mark.parametrize("case", RACE_FREE, ids=[c["name"] for c in RACE_FREE])
def test_correct_corpus_kernels_have_no_hazards(case):
    args = case["make"]()
    k = cudalab.compile(case["src"], list(case["options"])).get_kernel(case["kernel"])
    with cudalab.check("racecheck"):
        rec = k[case["grid"], case["block"], 0, case["shared"]](*args)
    assert rec.findings == []


# ---------------------------------------------------------------- named barriers really wait

PRODUCER_CONSUMER = r"""
__global__ void consumers_first(const int* in, int* out) {
  __shared__ int buf[64];
  int t = threadIdx.x;
  if (t >= 64) {                       // the consumers' path comes first in the code ...
    asm volatile("bar.sync 1, 128;" ::: "memory");
    out[t - 64] = buf[127 - t] * 2;
  } else {                             // ... so they run first and must wait for the producers
    buf[t] = in[t] + 1;
    asm volatile("bar.arrive 1, 128;" ::: "memory");
  }
}
__global__ void too_few(int* out) {
  if (threadIdx.x < 64) asm volatile("bar.sync 1, 128;" ::: "memory");   // only 64 threads ever arrive
  out[threadIdx.x] = 1;
}
__global__ void half_warp(int* out) {
  if (threadIdx.x < 16) asm volatile("bar.sync 1, 32;" ::: "memory");
  out[threadIdx.x] = 1;
}
"""


def test_consumers_wait_for_the_producers_whatever_the_path_order():
    k = cudalab.compile(PRODUCER_CONSUMER).get_kernel("consumers_first")
    out = np.zeros(64, np.int32)
    k[2, 128](IN, out)
    assert out.tolist() == ((IN[:64][::-1] + 1) * 2).tolist()


def test_a_named_barrier_that_can_never_complete_is_a_hang():
    k = cudalab.compile(PRODUCER_CONSUMER).get_kernel("too_few")
    with pytest.raises(KernelError, match=r"would hang: .*bar.sync 1, 128.* for 128 threads at barrier 1, but only "
                                          r"64 arrived") as e:
        k[1, 128](np.zeros(128, np.int32))
    assert e.value.code == "cudaErrorLaunchTimeout"


def test_a_named_barrier_that_skips_part_of_a_warp_is_synccheck_s_error(capsys):
    # ptxas predicates the one-line branch: the warp arrives whole (the skipping threads wait to rejoin),
    # so the barrier completes, as the H100 ran the same shape (tests/kernels/split_barrier.py); the
    # emulator says what compute-sanitizer's synccheck says, and stops there when asked to
    k = cudalab.compile(PRODUCER_CONSUMER).get_kernel("half_warp")
    out = np.zeros(64, np.int32)
    k[1, 64](out)
    assert out.tolist() == [1] * 64
    assert "synccheck warning: `bar.sync 1, 32` at line 18 in kernel half_warp" in capsys.readouterr().err
    with cudalab.check("synccheck"):
        with pytest.raises(KernelError, match=r"Barrier error: .*only some threads of a warp.*thread \(16,0,0\)"):
            k[1, 64](out)


# ------------------------------------------------- __syncthreads() reached by whole warps at two places

HALVES = r"""
__global__ void halves(int* out) {
  __shared__ int buf[2][32];
  int t = threadIdx.x, lane = t % 32, sum = 0;
  for (int step = 0; step < 4; step++) {
    if (t < 32) {                      // warp 0 fills this step's buffer ...
      buf[step % 2][lane] = 100 * step + lane;
      __syncthreads();
    } else {                           // ... warp 1 waits for it at a __syncthreads() of its own
      __syncthreads();
      sum += buf[step % 2][31 - lane];
    }
  }
  out[t] = sum;
}
__global__ void one_warp_leaves(int* out) {
  if (threadIdx.x < 32) __syncthreads();     // warp 1 never gets to a barrier: it ends
  out[threadIdx.x] = 1;
}
"""


def test_whole_warps_meet_at_different_syncthreads_as_on_a_gpu():
    # bar.sync 0 counts warps wherever they reach it (PTX ISA 9.7.13.1); SGEMM's double-buffered
    # kernel lets half of the block load the next tile while the other half computes this way
    out = np.zeros(64, np.int32)
    cudalab.compile(HALVES).get_kernel("halves")[1, 64](out)
    assert out.tolist() == [0] * 32 + [600 + 4 * (31 - lane) for lane in range(32)]


SKIPPED_LOOP = r"""
__global__ void count_loop(int* out, const int* in, int n) {   // threads >= n skip the loop and end
  int s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += __syncthreads_count(in[i] & 1);
  if (threadIdx.x == 0) *out = s;
}
"""


def test_warps_that_end_without_meeting_a_barrier_let_it_complete_as_on_an_h100():
    # a barrier waits for live threads only: whole warps that skip it and end let it complete.
    # Measured on an H100 (the same kernels, 64 threads), where compute-sanitizer's synccheck is silent.
    out = np.zeros(64, np.int32)
    cudalab.compile(HALVES).get_kernel("one_warp_leaves")[1, 64](out)
    assert out.tolist() == [1] * 64
    x = np.arange(64, dtype=np.int32)
    cudalab.compile(SKIPPED_LOOP).get_kernel("count_loop")[1, 64](out, x, 32)
    assert out[0] == 16                     # the odd values among x[0..31]; warp 1 skipped the loop


def test_threads_of_a_warp_that_skip_its_barrier_and_end_let_it_complete_silently(capsys):
    # ptxas puts a WARPSYNC before a barrier in a loop: the threads that skip the loop end first and
    # the others pass the barrier without them. The H100 ran the same shape (split_barrier's
    # barrier_in_loop_thread_trip_counts) bit for bit as the emulator does, and compute-sanitizer's
    # synccheck found nothing in it, so neither does cudalab, even when asked
    out = np.zeros(1, np.int32)
    cudalab.compile(SKIPPED_LOOP).get_kernel("count_loop")[1, 64](out, np.arange(64, dtype=np.int32), 8)
    assert out[0] == 4                      # the odd values among x[0..7]
    assert "synccheck" not in capsys.readouterr().err
    with cudalab.check("synccheck"):
        rec = cudalab.compile(SKIPPED_LOOP).get_kernel("count_loop")[1, 64](out, np.arange(64, dtype=np.int32), 8)
    assert out[0] == 4 and rec.findings == []


TREE_AND_TWO = r"""
__global__ void tree(const int* in, int* out) {     // a book's reduction: threads leave the loop one by one
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = in[t];
  __syncthreads();
  int step = 1;
  while ((t | step) < blockDim.x && (t & step) == 0) {
    s[t] += s[t | step];
    step *= 2;
    __syncthreads();
  }
  if (t == 0) *out = s[0];
}
__global__ void two_barriers(int* out) {            // half a warp skips a barrier and meets the next one
  __shared__ int s[32];
  int t = threadIdx.x;
  s[t] = t;
  if (t < 16) { __syncthreads(); out[t] = s[31 - t]; }
  __syncthreads();
  if (t >= 16) out[t] = s[31 - t];
}
"""


def test_a_warp_split_at_a_barrier_runs_as_an_h200_ran_it(capsys):
    # measured on an H200 (nvcc 13, -arch=native): "tree 2016" and out[0], out[20] = 31, 11, no error
    mod = cudalab.compile(TREE_AND_TWO)
    out = np.zeros(32, np.int32)
    mod.get_kernel("tree")[1, 64](np.arange(64, dtype=np.int32), out)
    assert out[0] == 2016
    mod.get_kernel("two_barriers")[1, 32](out)
    assert out.tolist() == [31 - t for t in range(32)]
    err = capsys.readouterr().err
    # the tree's threads leave the loop and end first (silent, as compute-sanitizer is); half a warp
    # skipping a barrier to rejoin the others after it is synccheck's warning
    assert "kernel tree" not in err and "kernel two_barriers was reached by only some threads of a warp" in err


def test_threads_of_a_warp_that_skip_a_barrier_and_write_wait_to_rejoin_the_others():
    # ptxas predicates `if (t < 16) __syncthreads();`: the warp arrives whole and the skipping threads
    # store after the others have passed (the H100's half_warp_waits_while_others_write read the old
    # values). A warning; compute-sanitizer's synccheck reports it, and so does cudalab when asked
    src = r"""
__global__ void k(int* a) {
  if (threadIdx.x < 16) __syncthreads();
  a[threadIdx.x] = 1;
  __syncthreads();
}
"""
    a = np.zeros(32, np.int32)
    cudalab.compile(src).get_kernel("k")[1, 32](a)
    assert a.tolist() == [1] * 32
    with cudalab.check("synccheck"):
        with pytest.raises(KernelError, match=r"Barrier error: __syncthreads\(\) at line 3 .* thread \(16,0,0\)"):
            cudalab.compile(src).get_kernel("k")[1, 32](a)


ENDED_APART = r"""
__global__ void ended_apart(int* out) {
  int t = threadIdx.x;
  if (t >= 64) {                          // warps 2 to 7 loop 0 to 40 times, then end one by one
    for (int i = 0; i < t % 41; i++) out[t] += i;
    return;
  }
  __shared__ int s[64];
  s[t] = t;
  __syncthreads();                        // the threads that ended no longer count (as on a GPU)
  out[t] = s[63 - t];
  __syncthreads();
}
"""


def test_threads_that_ended_apart_do_not_count_at_a_later_syncthreads():
    # eigenvalues' bisection ends its threads at many different times: each group waits at the
    # kernel's end as an entry of its own, and every barrier of the others looks past all of them
    out = np.zeros(256, np.int32)
    cudalab.compile(ENDED_APART).get_kernel("ended_apart")[1, 256](out)
    assert out[:64].tolist() == list(range(63, -1, -1))
    assert out[64:].tolist() == [(t % 41) * (t % 41 - 1) // 2 for t in range(64, 256)]


# ---------------------------------------------------------------- mbarrier mistakes, worded for a student

MISTAKES = PTX90 + r"""
__global__ void no_init(int* out) {
  __shared__ unsigned long long bar;
  out[threadIdx.x] = (int)mbar_arrive(&bar);
}
__global__ void too_many(int* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) mbar_init(&bar, 32);
  __syncthreads();
  out[threadIdx.x] = (int)mbar_arrive(&bar);      // 64 threads, 32 expected
}
__global__ void bytes_never_come(int* out) {
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) mbar_init(&bar, 1);
  __syncthreads();
  if (threadIdx.x == 0) mbar_arrive_tx(&bar, 128);  // no copy will ever complete these bytes
  mbar_wait_parity(&bar, 0);
  out[threadIdx.x] = 1;
}
__global__ void odd_size(const int* in, int* out) {
  __shared__ alignas(16) int s[64];
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) { mbar_init(&bar, 1); mbar_arrive_tx(&bar, 20); bulk_g2s(s, in, 20, &bar); }
}
__global__ void misaligned(const int* in, int* out) {
  __shared__ int4 s[64];
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(SMEM(&s[threadIdx.x])), "l"(GMEM(in + 1)) : "memory");
  asm volatile("cp.async.wait_all;" ::: "memory");
}
"""


@pytest.fixture(scope="module")
def mistakes():
    return cudalab.compile(MISTAKES, "-arch=compute_90")


@pytest.mark.parametrize("kernel, words, code", [
    ("no_init", r"mbarrier at shared offset 0 is used at line \d+ .* before it was initialized", None),
    ("too_many", r"got 64 arrivals while only 32 were pending", None),
    ("bytes_never_come", r"would hang: .* waits .* on the mbarrier at shared offset 0, but its current phase still "
                         r"waits for 0 arrival\(s\) and 128 byte\(s\) of async copies", "cudaErrorLaunchTimeout"),
    ("odd_size", r"asked to move 20 bytes: the size must be a positive multiple of 16", "cudaErrorInvalidValue"),
    ("misaligned", r"Misaligned __global__ read of size 16 bytes", "cudaErrorMisalignedAddress"),
])
def test_mbarrier_and_bulk_mistakes(mistakes, kernel, words, code):
    args = [np.zeros(64, np.int32)] * (2 if kernel in ("odd_size", "misaligned") else 1)
    with pytest.raises(KernelError, match=words) as e:
        mistakes.get_kernel(kernel)[1, 64](*args)
    if code:
        assert e.value.code == code


# ---------------------------------------------------------------- the pipeline widget

DOUBLE_BUFFER = r"""
#include <cuda_pipeline.h>
__global__ void double_buffer(const float* in, float* out, int tiles) {
  __shared__ float tile[2][64];
  int t = threadIdx.x;
  float acc = 0;
  __pipeline_memcpy_async(&tile[0][t], &in[t], sizeof(float));
  __pipeline_commit();
  for (int k = 0; k < tiles; ++k) {
    if (k + 1 < tiles) __pipeline_memcpy_async(&tile[(k + 1) & 1][t], &in[(k + 1) * 64 + t], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(1);
    __syncthreads();
    acc += tile[k & 1][63 - t];
    __syncthreads();
  }
  out[t] = acc;
}
"""


def test_pipeline_widget_shows_stages_by_warp():
    import cudalab.widgets as cw
    from cudalab.widgets.asyncpipe import details_html, pipeline_model, render_svg
    k = cudalab.compile(DOUBLE_BUFFER).get_kernel("double_buffer")
    x = np.arange(4 * 64, dtype=np.float32)
    out = np.zeros(64, np.float32)
    rec = cw.pipeline(k, 1, 64, (x, out, np.int32(4)))
    assert out[0] == x.reshape(4, 64)[:, 63].sum()            # the launch ran as usual
    m = pipeline_model(rec.reports["pipeline"])
    assert [s["label"] for s in m["stages"]] == [f"cp.async group {g}" for g in range(4)]
    assert [s["dst"] for s in m["stages"]] == ["tile[0][0:64]", "tile[1][0:64]"] * 2
    assert [s["bytes"] for s in m["stages"]] == [256] * 4
    cell = m["cells"][(1, 2)]                                   # warp 1, third stage
    assert [(c["line"], c["bytes"], c["copies"]) for c in cell["issued"]] == [(10, 128, 32)]
    assert cell["wait"][:2] == (12, "cp.async.wait_group 1")
    assert "stage 3" in render_svg(m) and "cp.async.wait_group 1" in details_html(m)
    widget = cw.show(rec, "pipeline")
    widget.pick("c:3:0")
    assert widget.model["chosen"] == (3, 0) and "stage 3" in widget.static_html()


def test_pipeline_widget_follows_mbarrier_phases():
    import cudalab.widgets as cw
    from cudalab.widgets.asyncpipe import pipeline_model
    case = next(c for c in cases(["async_copy"]) if c["name"] == "cuda_pipeline_block_scope_producer_consumer")
    k = cudalab.compile(case["src"]).get_kernel(case["kernel"])
    m = pipeline_model(cw.pipeline(k, 1, 96, case["make"]()).reports["pipeline"])
    assert len(m["stages"]) == 5 and all(" phase " in s["label"] for s in m["stages"])
    issued = {w for (w, s), c in m["cells"].items() if c["issued"]}
    waited = {w for (w, s), c in m["cells"].items() if c["wait"]}
    assert issued == {2} and waited == {0, 1}                  # warp 2 produces, warps 0 and 1 consume


def test_syncthreads_after_waits_that_split_the_block():
    """Warps 0-1 get through their mbarrier wait before warps 2-3 do: they reach __syncthreads()
    first and wait there for the others (no synccheck error), as on a GPU."""
    src = PTX90 + r"""
__global__ void split(const int* in, int* out) {
  __shared__ int s[128];
  __shared__ unsigned long long a, b;
  int t = threadIdx.x, w = t >> 5;
  if (t == 0) { mbar_init(&a, 64); mbar_init(&b, 64); }
  __syncthreads();
  if (w >= 2) mbar_arrive(&a);                  // warps 2, 3 complete a
  mbar_wait_parity(w < 2 ? &a : &b, 0);         // warps 0, 1 wait on a; warps 2, 3 on b
  if (w < 2) { s[t] = in[t] * 2; s[t + 64] = in[t + 64] + 1; mbar_arrive(&b); }
  __syncthreads();
  out[t] = s[127 - t];
}"""
    k = cudalab.compile(src, "-arch=compute_90").get_kernel("split")
    x = np.arange(128, dtype=np.int32)
    out = np.zeros(128, np.int32)
    k[2, 128](x, out)
    s = np.concatenate([x[:64] * 2, x[64:] + 1])
    assert out.tolist() == s[::-1].tolist()


WHOLE_ROWS = r"""
#include <cuda_pipeline.h>
__global__ void twice(const int4* a, const int4* b, int4* out) {
  __shared__ int4 s[64];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &a[t], sizeof(int4));           // 16 aligned bytes a lane
  __pipeline_memcpy_async(&s[63 - t], &b[t], sizeof(int4));      // the same rows again, issued later
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[t] = s[t];
}
"""


def test_whole_16_byte_copies_land_in_issue_order():
    """Two copies of every shared row in one group: when the group lands, each row holds the bytes of
    the copy issued later (the whole-row path writes 16 bytes a row at once)."""
    a = np.arange(256, dtype=np.int32)
    b = -np.arange(256, dtype=np.int32)
    out = np.zeros(256, np.int32)
    cudalab.compile(WHOLE_ROWS).twice[1, 64](a, b, out)
    assert (out.reshape(64, 4) == b.reshape(64, 4)[::-1]).all()


STAGES = r"""
#include <cuda_pipeline.h>
__global__ void stages(const int4* in, int4* out, int4* early) {
  __shared__ int4 s[3][64];
  int t = threadIdx.x;
  for (int k = 0; k < 3; ++k) s[k][t] = make_int4(-1, -1, -1, -1);
  __syncthreads();
  for (int k = 0; k < 3; ++k) {                                  // three groups in flight
    __pipeline_memcpy_async(&s[k][t], &in[64 * k + t], sizeof(int4));
    __pipeline_commit();
  }
  __pipeline_wait_prior(2);                                      // the first group only
  early[t] = s[1][t];                                            // still in flight: the old bytes
  if (t < 32) __pipeline_wait_prior(0);                          // the first warp's own copies land
  __syncwarp();
  out[t] = s[2][t];
  __pipeline_wait_prior(0);
  __syncthreads();
  out[64 + t] = s[2][63 - t];
  out[128 + t] = s[0][63 - t];
}
"""


def test_16_byte_copies_kept_as_issued_land_group_by_group_and_thread_by_thread(monkeypatch):
    """A GEMM's tile copies (16 aligned bytes a lane, no observers) stay as they were issued until a
    wait lands them (asyncops.Copies): a wait lands only the complete groups, and of those only the
    waiting threads' own rows; the rest land at a later wait, each in its place."""
    from cudalab.emulator import asyncops
    answered = []
    land = asyncops.land_copies

    def counted(*args):
        answered.append(land(*args))
        return answered[-1]
    monkeypatch.setattr(asyncops, "land_copies", counted)
    x = np.arange(3 * 64 * 4, dtype=np.int32).reshape(3, 64, 4)
    out, early = np.zeros((3, 64, 4), np.int32), np.zeros((64, 4), np.int32)
    cudalab.compile(STAGES).stages[1, 64](x, out, early)
    assert (early == -1).all()
    assert (out[0, :32] == x[2, :32]).all() and (out[0, 32:] == -1).all()
    assert (out[1] == x[2, ::-1]).all() and (out[2] == x[0, ::-1]).all()
    assert answered and all(answered)


TILES = r"""
#include <cuda_pipeline.h>
__global__ void tiles(const int4* in, int4* out, long long shift) {
  __shared__ int4 s[2][64];
  int t = threadIdx.x, b = blockIdx.x;
  for (int k = 0; k < 2; ++k) {                                           // two groups a block
    __pipeline_memcpy_async(&s[k][t], &in[(2 * b + k) * 64 + t + shift], sizeof(int4));   // line 7
    __pipeline_commit();
  }
  __pipeline_wait_prior(1);
  int4 a = s[0][t];
  __pipeline_wait_prior(0);
  __syncthreads();
  int4 c = s[1][63 - t];
  out[b * 64 + t] = make_int4(a.x + c.x, a.y + c.y, a.z + c.z, a.w + c.w);
}
"""


def test_copies_in_bounds_are_checked_in_one_look_and_faults_still_name_their_line(monkeypatch):
    """A pipeline's tile copies (every thread of the batch committing together) are checked by the
    lowest and highest address of the batch, not thread by thread, and their groups are counted once
    for the whole batch; a copy that reads outside every allocation still stops at its line."""
    from cudalab.emulator import asyncops
    calls, uniform = [], []
    for name in ("shared_offsets", "resolve"):
        real = getattr(asyncops, name)
        monkeypatch.setattr(asyncops, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    land = asyncops.land_copies

    def watched(ex, st, *rest):
        uniform.append(st._committed is None)
        return land(ex, st, *rest)
    monkeypatch.setattr(asyncops, "land_copies", watched)
    blocks = 40
    x = np.arange(blocks * 2 * 64 * 4, dtype=np.int32).reshape(blocks, 2, 64, 4)
    out = np.zeros((blocks, 64, 4), np.int32)
    k = cudalab.compile(TILES).tiles
    k[blocks, 64](x, out, np.int64(0))
    assert (out == x[:, 0] + x[:, 1, ::-1]).all()
    assert calls == [] and uniform and all(uniform)
    with pytest.raises(KernelError, match="read of size 16 bytes\n    at line 7"):
        k[blocks, 64](x, out, np.int64(1 << 30))
    assert "shared_offsets" in calls


TWO_SOURCES = r"""
#include <cuda_pipeline.h>
__global__ void two(const int4* a, const int4* b, int4* out, long long shift) {
  __shared__ int4 s[64];
  int t = threadIdx.x, w = t / 32, lane = t % 32;
  const int4* from = w == 0 ? a + blockIdx.x * 32 + lane + shift   // warp 0 copies a's rows,
                            : b + blockIdx.x * 32 + lane;          // warp 1 b's (a GEMM's A and B)
  __pipeline_memcpy_async(&s[t], from, sizeof(int4));              // line 8
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  out[blockIdx.x * 64 + t] = s[63 - t];
}
"""


def test_copies_from_two_arrays_in_one_instruction_are_checked_in_one_look(monkeypatch, capfd):
    """One cp.async whose warps read from two arrays (dmmaTensorCoreGemm's tile loop: warps 0-3 copy
    A, warps 4-7 B) takes the quick path too, each lane checked against its own array: a lane that
    reads past the end of the first array, though the batch's highest address is inside the second,
    takes the checked path, which warns of it at the copy's line."""
    from cudalab.emulator import asyncops
    monkeypatch.setenv("CUDALAB_TIER", "interp")      # (the compiled tier's regions copy in native code)
    calls = []
    for name in ("shared_offsets", "resolve"):
        real = getattr(asyncops, name)
        monkeypatch.setattr(asyncops, name, lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    launch = _two_sources()
    launch(0)
    assert calls == []
    capfd.readouterr()
    launch(1)                                   # the last block's lane 31: 16 bytes past a
    assert "shared_offsets" in calls
    warning = capfd.readouterr().err
    assert "Invalid __global__ read of size 16 bytes" in warning and "at line 8" in warning


def _two_sources(blocks=20):
    """A launcher of TWO_SOURCES (shift -> None) on ``blocks`` blocks; an unshifted launch is checked."""
    a = np.arange(blocks * 32 * 4, dtype=np.int32).reshape(blocks, 32, 4)
    b = -a - 1
    out = np.zeros((blocks, 64, 4), np.int32)
    k = cudalab.compile(TWO_SOURCES).two

    def launch(shift):
        k[blocks, 64](a, b, out, np.int64(shift))
        if not shift:
            assert (out[:, 32:] == a[:, ::-1]).all() and (out[:, :32] == b[:, ::-1]).all()
    return launch


def test_copies_are_checked_and_read_in_one_compiled_pass_once_numba_is_loaded(monkeypatch, capfd):
    """Where numba is already loaded (a tensor-core kernel's loops), a batch's 16-byte cp.async is checked
    and read in one compiled pass (async_loops.check_and_read): the same bytes as numpy's checks give,
    and a lane past its array still leaves it to the checked path, which warns at the copy's line."""
    import numba  # noqa: F401  (the condition for the compiled pass)
    from cudalab.emulator import async_loops, asyncops
    monkeypatch.setenv("CUDALAB_TIER", "interp")      # (the compiled tier's regions copy in native code)
    answers, calls = [], []
    quick = async_loops.quick
    monkeypatch.setattr(async_loops, "quick", lambda *a: answers.append(quick(*a)) or answers[-1])
    real = asyncops.shared_offsets
    monkeypatch.setattr(asyncops, "shared_offsets", lambda *a: calls.append(1) or real(*a))
    launch = _two_sources()
    launch(0)
    assert answers and all(x is not None for x in answers) and calls == []
    capfd.readouterr()
    answers.clear()
    launch(1)
    assert answers[0] is None and calls
    assert "at line 8" in capfd.readouterr().err


def test_each_cp_async_instruction_has_one_number_in_a_batch():
    """A batch numbers the instructions of its copies in flight by identity (racecheck's events name them
    by that number): two instructions that read alike are two numbers, and one asked again keeps its own."""
    from types import SimpleNamespace
    from cudalab.emulator.asyncops import AsyncState
    st = AsyncState(SimpleNamespace(n=32))
    first, second = ["cp.async", 16], ["cp.async", 16]        # equal, but two instructions
    assert [st.inst_id(x) for x in (first, second, first, second, first)] == [0, 1, 0, 1, 0]
    assert st.insts[0] is first and st.insts[1] is second


def test_a_whole_copy_lands_each_lane_s_sixteen_bytes_at_its_offset():
    """A wait lands a whole 16-byte cp.async in one compiled pass (async_loops.land): lane i's bytes go to
    byte dst[i] of the batch's shared buffer, and nothing else changes."""
    from cudalab.emulator import async_loops
    shared = np.zeros(256, np.uint8)
    dst = np.array([32, 0, 208], np.int64)
    data = np.arange(48, dtype=np.uint8).reshape(3, 16)
    async_loops.land(shared.view(np.uint64), dst, data.view(np.uint64))
    expected = np.zeros(256, np.uint8)
    for i, at in enumerate(dst):
        expected[at:at + 16] = data[i]
    assert (shared == expected).all()


def test_the_quick_cp_async_check_reads_every_lane_s_own_words():
    """check_and_read asks for lanes' sources ahead of reading them (async_loops.AHEAD); each lane still
    gets its own two words and shared offset, in a batch longer than that distance, with lanes that read
    from two allocations (as dmmaTensorCoreGemm's A and B) in any order."""
    from cudalab.emulator import async_loops
    base = np.uint64(1 << 32)
    words = np.arange(4096, dtype=np.uint64) * np.uint64(3)
    lanes = 3 * async_loops.AHEAD
    rng = np.random.default_rng(5)
    src = base + np.uint64(16) * rng.integers(0, 2048, lanes).astype(np.uint64)
    dst = np.uint64(16) * rng.integers(0, 8, lanes).astype(np.uint64)
    sel = np.arange(lanes, dtype=np.int64)
    shared_base = (np.arange(lanes) // 32 * 4096).astype(np.uint64)
    starts, ends = np.array([base, base + np.uint64(16384)]), np.array([base + np.uint64(16384), base + np.uint64(32768)])
    out_dst, out_words = np.empty(lanes, np.int64), np.empty((lanes, 2), np.uint64)
    assert async_loops.check_and_read(dst, src, sel, shared_base, np.uint64(4096), starts, ends, words, base,
                                      out_dst, out_words)
    at = ((src - base) // np.uint64(8)).astype(np.int64)
    assert (out_words[:, 0] == words[at]).all() and (out_words[:, 1] == words[at + 1]).all()
    assert (out_dst == (shared_base + dst).astype(np.int64)).all()
    src[-1] = base + np.uint64(32768)           # past the second allocation: the checked path's case
    assert not async_loops.check_and_read(dst, src, sel, shared_base, np.uint64(4096), starts, ends, words, base,
                                          out_dst, out_words)
