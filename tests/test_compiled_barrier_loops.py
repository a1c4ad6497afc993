"""Small barrier-heavy kernels run as native regions end to end.

A Monte Carlo course assignment (9 blocks of 100 threads, a thousand steps of a hundred
``__syncthreads()`` rounds, each with two tree reductions in shared memory and an ``expf``) left native
code at every round: libdevice's ``expf`` takes ``floor`` with an ``fma.rm.f32`` and ends with
``ex2.approx.ftz.f32``, neither of which the compiled tier built, so the interpreter ran them for the
whole batch and the region around them stopped at each turn. These tests run such kernels under both
tiers and compare every byte.
"""
import numpy as np
import pytest

import cudalab
from test_compiled import F32_EDGE_BITS, assert_native, both_tiers

DIRECTED_FMA = r"""
__global__ void fma_directed(const float* a, const float* b, const float* c, float* o) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float r;
    asm("fma.rm.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a[i]), "f"(b[i]), "f"(c[i])); o[4 * i] = r;
    asm("fma.rp.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a[i]), "f"(b[i]), "f"(c[i])); o[4 * i + 1] = r;
    asm("fma.rz.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a[i]), "f"(b[i]), "f"(c[i])); o[4 * i + 2] = r;
    asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(a[i]), "f"(b[i]), "f"(c[i])); o[4 * i + 3] = r;
}
"""


def test_fma_rounded_down_up_and_toward_zero_gives_the_interpreters_bits_natively(monkeypatch):
    """fma.rm/rp/rz.f32 (libdevice's expf floors with fma.rm): exact and inexact sums, a product that
    cancels the addend (-0 rounding down), products that underflow or overflow, subnormals,
    infinities and NaN."""
    m = cudalab.compile(DIRECTED_FMA)
    rng = np.random.default_rng(17)
    edges = np.array(F32_EDGE_BITS, np.uint32).view(np.float32)
    n = 4608
    k = len(edges)
    a = np.repeat(edges, k * k)                                  # every triple of edge values
    b = np.tile(np.repeat(edges, k), k)
    c = np.tile(edges, k * k)
    wide = lambda size: (rng.standard_normal(size) * 2.0 ** rng.integers(-70, 70, size)).astype(np.float32)  # noqa: E731
    rest = n - len(a)
    a, b, c = (np.concatenate([v, wide(rest)]) for v in (a, b, c))
    tail = slice(n - 64, n)
    c[tail] = -(a[tail].astype(np.float64) * b[tail]).astype(np.float32)   # near and exact cancellation
    c[n - 8:] = -(a[n - 8:] * b[n - 8:])
    a[n - 8:] = np.float32(0.5)
    b[n - 8:] = np.float32(4.0)
    c[n - 8:] = np.float32(-2.0)                                 # 0.5 * 4 - 2: an exact zero

    def run():
        o = np.zeros(4 * n, np.float32)
        m.fma_directed[n // 128, 128](a, b, c, o)
        return o.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1], np.float32).reshape(n, 4)
    assert np.signbit(o[-1, 0]) and not np.signbit(o[-1, 1])     # exact zero: -0 down, +0 up
    inexact = o[len(edges) ** 3:n - 64]
    moved = inexact[:, 0] != inexact[:, 1]
    assert moved.mean() > 0.9 and (np.nextafter(inexact[moved, 0], np.float32(np.inf)) == inexact[moved, 1]).all()
    assert_native(m, "fma_directed", ("fma",))


ANNEAL = r"""
#define TURNS 40
__global__ void anneal(const float* x, float* state, int* taken, float kT, int bad_turn, float* probe) {
    __shared__ float part[128];
    __shared__ float dice;
    int t = threadIdx.x;
    int me = blockIdx.x * blockDim.x + t;
    float mine = x[me];
    int kept = 0;
    unsigned seed = 12345u + blockIdx.x;
    for (int turn = 0; turn < TURNS; turn++) {
        float trial = mine + 0.25f * (float)((t * 7 + turn * 13) % 9 - 4);
        part[t] = trial * trial - mine * mine;
        if (t < 128 - (int)blockDim.x) part[blockDim.x + t] = 0.0f;
        __syncthreads();
        for (int s = 64; s > 0; s >>= 1) {
            if (t < s) part[t] += part[t + s];
            __syncthreads();
        }
        float dE = part[0];
        if (turn == bad_turn && t == 37) probe[1 << 26] = dE;
        if (t == 0) {
            seed = seed * 1664525u + 1013904223u;
            dice = (seed >> 8) * (1.0f / 16777216.0f);
        }
        __syncthreads();
        if (dE < 0.0f || dice < expf(-dE / kT)) {
            mine = trial;
            kept++;
        }
        __syncthreads();
    }
    state[me] = mine;
    taken[me] = kept;
}
"""
BAD_LINE = 1 + ANNEAL.split("\n").index("        if (turn == bad_turn && t == 37) probe[1 << 26] = dE;")


def anneal_runs(monkeypatch, blocks, threads, bad_turn=-1, source=ANNEAL):
    """Both tiers' (error, bytes) of the annealing kernel; counts the compiled tier's native calls."""
    from cudalab.emulator import regions
    m = cudalab.compile(source, options=("-lineinfo",))
    rng = np.random.default_rng(blocks * threads)
    x = (rng.standard_normal(blocks * threads) * 3).astype(np.float32)
    calls = []
    run_native = regions.Runner._run
    monkeypatch.setattr(regions.Runner, "_run", lambda self, *a: calls.append(self) or run_native(self, *a))

    def run():
        calls.clear()
        state, taken = np.zeros_like(x), np.zeros(x.size, np.int32)
        probe = np.zeros(4, np.float32)
        m.anneal[blocks, threads](x, state, taken, np.float32(0.7), np.int32(bad_turn), probe)
        return state.tobytes() + taken.tobytes()
    return m, both_tiers(run, monkeypatch), calls


@pytest.mark.parametrize("blocks, threads", [(9, 100), (3, 96), (2, 128)])
def test_a_barrier_loop_with_reductions_and_expf_runs_whole_blocks_in_one_native_call(monkeypatch, blocks, threads):
    """Forty turns of a tree reduction (eight __syncthreads() rounds), a draw shared through shared memory
    and an expf per turn, in blocks of 100 threads (a partial last warp), 96 and 128: the interpreter's
    bytes, every ex2 and barrier inside native code, and the whole launch one native call."""
    m, got, calls = anneal_runs(monkeypatch, blocks, threads)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    taken = np.frombuffer(got["interp"][1][-blocks * threads * 4:], np.int32)
    assert 0 < taken.mean() < 40                      # some moves were refused: expf decided them
    assert_native(m, "anneal", ("ex2", "bar", "fma"))
    assert len(calls) == 1


def test_a_fault_inside_the_barrier_loop_is_named_at_its_line(monkeypatch):
    """An out-of-bounds store by one thread in the 23rd turn: both tiers stop with the same message, which
    names the line and the thread (the native region hands the lane to the interpreter, which reports)."""
    _, got, _ = anneal_runs(monkeypatch, 9, 100, bad_turn=22)
    error = got["interp"][0]
    assert error is not None and f"line {BAD_LINE}" in error and "by thread (37,0,0) in block (0,0,0)" in error
    # (the same words up to the address: each tier's run allocates its own arrays, and what lies 46 MB past
    # them, nothing or an array freed before, depends on what earlier tests left: both seen in CI)
    upto = lambda message: message.split(" 0x...")[0]     # noqa: E731
    assert " 0x..." in error and upto(got["compiled"][0]) == upto(error)


def test_what_a_region_with_cuts_takes_beyond_the_generators_own_comes_from_the_hook_list(monkeypatch, tmp_path):
    """compiled.CUT_HOOKS: each hook gets the kernel, its cuts and the instruction table so far and adds what only
    a region with cuts runs natively (cp.async's queue, ex2 from a table). Without the table hook the annealing
    kernel's expf ends its region at every turn: many native calls where there was one, the same bytes."""
    from cudalab.emulator import compiled
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))          # (planned afresh, not loaded from disk)
    seen = []

    def watch(df, d, info, cuts):
        seen.append(sorted(cuts))
        return info
    monkeypatch.setattr(compiled, "CUT_HOOKS", tuple(h for h in compiled.CUT_HOOKS
                                                     if h is not compiled._with_table_lookups) + (watch,))
    m, got, calls = anneal_runs(monkeypatch, 2, 128, source=ANNEAL.replace("TURNS 40", "TURNS 39"))
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    assert seen and seen[0]                             # the hook saw the kernel's barriers as cuts
    assert len(calls) > 39                              # a native call per turn at least: the ex2 interpreted


RSQRT_TURNS = r"""
__global__ void rsqrt_turns(const float* x, unsigned* o, int turns) {
    __shared__ float s[128];
    int t = threadIdx.x, i = blockIdx.x * blockDim.x + t, n = gridDim.x * blockDim.x;
    for (int turn = 0; turn < turns; turn++) {
        s[t] = x[(i + turn * 37) % n];
        __syncthreads();
        float v = s[(t + turn) % blockDim.x], r, q, w;
        asm("rsqrt.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
        asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(q) : "f"(v));
        asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(w) : "f"(v));
        o[3 * (turn * n + i)] = __float_as_uint(r);
        o[3 * (turn * n + i) + 1] = __float_as_uint(q);
        o[3 * (turn * n + i) + 2] = __float_as_uint(w);
        __syncthreads();
    }
}
"""


def test_rsqrt_and_rcp_in_a_barrier_loop_read_the_units_tables_natively_with_their_bits(monkeypatch):
    """rsqrtf inside a loop of __syncthreads() (a tiled n-body's force loop): both forms, with and without .ftz,
    and rcp.approx.ftz (--use_fast_math's 1.0f / x), natively from the H100's tables and the interpreter's bits
    for zeros, negatives, subnormals (scaled by 2^24 without .ftz), infinities, NaN and 2,000 floats over the
    whole range."""
    from test_compiled import F32_EDGE_BITS
    m = cudalab.compile(RSQRT_TURNS)
    rng = np.random.default_rng(29)
    edges = np.array(F32_EDGE_BITS + [0x00000400, 0x80000400, 0x007FFFFF, 0x00400001], np.uint32).view(np.float32)
    wide = (rng.standard_normal(2048) * 2.0 ** rng.integers(-140, 120, 2048)).astype(np.float32)
    x = np.concatenate([edges, wide])[:2048]
    x[:len(edges)] = edges

    def run():
        o = np.zeros(3 * 3 * x.size, np.uint32)
        m.rsqrt_turns[16, 128](x, o, np.int32(3))
        return o.tobytes()
    got = both_tiers(run, monkeypatch)
    assert got["compiled"] == got["interp"] and got["interp"][0] is None
    o = np.frombuffer(got["interp"][1], np.uint32).reshape(3, x.size, 3)
    assert (o[..., 0] != o[..., 1]).any()              # the subnormals tell the two forms apart
    assert_native(m, "rsqrt_turns", ("rsqrt", "rcp", "bar"))
