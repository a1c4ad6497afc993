"""Branches a whole block takes alike, decided once per block (regions.uniform_jumps).

In a region with cuts (a barrier loop run block by block), a forward branch whose guard every
thread of the block holds alike, computed from block-uniform arithmetic only, becomes a *jump*: the
block takes it as one, its compares run once per block (regiongen ``_once``), and each thread runs
only the arm it lands in. cuda::pipeline's ``consumer_wait`` is the case that matters (a ``switch``
over ``cp.async.wait_group 0..8``, globalToShmemAsyncCopy). A branch on the thread index stays inside
its segment, thread by thread, and so does a uniform branch under it.
"""
import sys
from pathlib import Path

import numpy as np

import cudalab

sys.path.insert(0, str(Path(__file__).parent))
from test_compiled import same_in_both_tiers  # noqa: E402


def _jumps(source, kernel):
    """(skeleton's jumps, uniform_jumps' jumps) of the kernel's first region with cuts, as PTX texts."""
    from cudalab.emulator import compiled
    from cudalab.emulator import regions as rg
    from cudalab.emulator.engine import DeviceMemory, Program, _DecodeContext
    m = cudalab.compile(source)
    prog = Program(m.ptx_module, DeviceMemory())
    df = prog.function(m.get_kernel(kernel).mangled)
    d = _DecodeContext(df.func, prog.module, df.param_offsets)
    info = compiled._compilable(df, d)
    live = compiled.liveness(df)[1]
    cuts = rg.cuts(df, info)
    (s, e), = rg.find(df, compiled._cut_info(df, d, info, cuts), live, cuts)
    held = [p for p in cuts if s <= p < e]
    plain = rg.skeleton(df.code, s, e, held)[1]
    more = rg.uniform_jumps(df, s, e, held, live)[1]
    return [df.code[p][2].text for p in plain], [df.code[p][2].text for p in more]


# each turn of the tile loop picks one of four updates by the turn's number: a switch every thread
# of the block takes alike, between two barriers
ROUNDS = r"""
__global__ void rounds(const int* in, int* out, int turns) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    for (int k = 0; k < turns; ++k) {
        int v = s[(t + 1) % 128];
        switch ((k * 7 + blockIdx.x) % 4) {
            case 0: v += 3; break;
            case 1: v ^= 0x55; break;
            case 2: v = v * 5 - t; break;
            default: v -= k; break;
        }
        __syncthreads();
        s[t] = v;
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = s[t];
}
"""

# the same switch, but on the thread's own index: threads of one block go different ways
BY_THREAD = ROUNDS.replace("switch ((k * 7 + blockIdx.x) % 4)", "switch ((k + t) % 4)").replace(
    "rounds", "by_thread")

# a block-uniform test under one on the thread index: the inner branch must not become a jump
NESTED = r"""
__global__ void nested(const int* in, int* out, int turns) {
    __shared__ int s[128];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 128 + t];
    __syncthreads();
    for (int k = 0; k < turns; ++k) {
        int v = s[127 - t];
        if (t < 40) {
            if (k & 1) v += 11; else v -= 7;
        }
        __syncthreads();
        s[t] = v;
        __syncthreads();
    }
    out[blockIdx.x * 128 + t] = s[t];
}
"""


def _expected(data, turns, pick):
    s = data.reshape(-1, 128).astype(np.int64)
    t = np.arange(128)
    for k in range(turns):
        v = np.roll(s, -1, axis=1)
        out = np.empty_like(v)
        for b in range(s.shape[0]):
            case = pick(k, b, t)
            out[b] = np.select([case == 0, case == 1, case == 2],
                               [v[b] + 3, v[b] ^ 0x55, v[b] * 5 - t], v[b] - k)
        s = (out + 2**31) % 2**32 - 2**31
    return s.astype(np.int32).ravel()


def test_a_switch_on_the_turn_number_becomes_jumps_and_keeps_the_interpreters_bytes(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    plain, more = _jumps(ROUNDS, "rounds")
    assert len(more) > len(plain) + 2           # the switch's compares are the block's now
    data = np.random.default_rng(4).integers(-1000, 1000, 6 * 128).astype(np.int32)
    args = same_in_both_tiers(monkeypatch, ROUNDS, "rounds", 6, 128,
                              lambda: [data, np.zeros_like(data), np.int32(9)])
    assert np.array_equal(args[1], _expected(data, 9, lambda k, b, t: np.full(128, (k * 7 + b) % 4)))


def test_a_switch_on_the_thread_index_stays_thread_by_thread(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    plain, more = _jumps(BY_THREAD, "by_thread")
    assert more == plain
    data = np.random.default_rng(5).integers(-1000, 1000, 3 * 128).astype(np.int32)
    args = same_in_both_tiers(monkeypatch, BY_THREAD, "by_thread", 3, 128,
                              lambda: [data, np.zeros_like(data), np.int32(6)])
    assert np.array_equal(args[1], _expected(data, 6, lambda k, b, t: (k + t) % 4))


def test_a_uniform_test_inside_one_on_the_thread_index_is_no_jump(monkeypatch, tmp_path):
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))
    plain, more = _jumps(NESTED, "nested")
    assert more == plain
    data = np.random.default_rng(6).integers(-1000, 1000, 2 * 128).astype(np.int32)
    args = same_in_both_tiers(monkeypatch, NESTED, "nested", 2, 128,
                              lambda: [data, np.zeros_like(data), np.int32(5)])
    s = data.reshape(2, 128).copy()
    for k in range(5):
        v = s[:, ::-1].copy()
        v[:, :40] += 11 if k & 1 else -7
        s = v
    assert np.array_equal(args[1], s.ravel())
