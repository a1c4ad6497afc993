"""Shuffle ladders as one 32-wide vector per warp (emulator/warpvec.py) give the interpreter's bytes.

Every kernel here runs under ``CUDALAB_TIER=interp`` and ``CUDALAB_TIER=compiled``; the arrays must
come back with the same bytes and the same count of thread-instructions. ``runs_built`` builds a
kernel's native code afresh and lists the warp runs it holds (their segments' first pcs), so a test
can say whether the vector path or the usual one ran.
"""
import numpy as np
import pytest

import cudalab
from cudalab.emulator import warpvec


def runs_built(source, kernel, tmp_path, monkeypatch, grid, block, args):
    """The warp runs (a list of first pcs of their segments) built into ``kernel``'s native code."""
    runs = []
    real = warpvec.emit

    def recording(rb, run):
        if rb.b.module.name != "scratch":
            runs.append([seg["first"] for seg in run])
        return real(rb, run)
    monkeypatch.setattr(warpvec, "emit", recording)
    monkeypatch.setenv("CUDALAB_CACHE", str(tmp_path))        # built here, not loaded
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    fresh = f"{kernel}_{tmp_path.name.replace('-', '_')}"      # (a kernel this process has not built)
    cudalab.compile(source.replace(kernel, fresh)).get_kernel(fresh)[grid, block](*args)
    return runs


def same_in_both_tiers(monkeypatch, source, kernel, grid, block, make):
    """Both tiers on fresh arguments: the same bytes and thread-instruction counts. Returns the
    compiled tier's arguments."""
    m = cudalab.compile(source)
    out = {}
    for tier in ("interp", "compiled"):
        monkeypatch.setenv("CUDALAB_TIER", tier)
        args = make()
        rec = m.get_kernel(kernel)[grid, block](*args)
        out[tier] = ([a.tobytes() for a in args if isinstance(a, np.ndarray)], rec.thread_instructions)
    assert out["compiled"] == out["interp"]
    return args


LADDER = r"""
__global__ void ladder(const int* x, int* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = i < n ? x[i] : 0;
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffff, v, offset);
    if ((threadIdx.x & 31) == 0) out[i / 32] = v;
}
"""


def test_a_reduction_ladder_runs_as_one_warp_vector_with_the_same_bytes_and_counts(tmp_path, monkeypatch):
    """The five shuffle segments of ``v += __shfl_down_sync(m, v, o)`` are one run; n = 1000 leaves
    the last warp's upper lanes adding zeros, which the out-of-range lanes of each shuffle keep."""
    x = np.random.default_rng(1).integers(-1000, 1000, 1000).astype(np.int32)
    runs = runs_built(LADDER, "ladder", tmp_path, monkeypatch, 4, 256, [x, np.zeros(32, np.int32), np.int32(1000)])
    assert runs and all(len(r) == 5 for r in runs)
    got = same_in_both_tiers(monkeypatch, LADDER, "ladder", 4, 256,
                             lambda: [x, np.zeros(32, np.int32), np.int32(1000)])
    want = np.add.reduceat(np.concatenate([x, np.zeros(24, np.int32)]), np.arange(0, 1024, 32))
    assert np.array_equal(got[1], want)


def test_turned_off_the_ladder_runs_segment_by_segment_with_the_same_bytes(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDALAB_WARP_VECTORS", "0")
    x = np.arange(512, dtype=np.int32)
    assert runs_built(LADDER, "ladder", tmp_path, monkeypatch, 2, 256, [x, np.zeros(16, np.int32), np.int32(512)]) == []
    same_in_both_tiers(monkeypatch, LADDER, "ladder", 2, 256, lambda: [x, np.zeros(16, np.int32), np.int32(512)])


MODES = r"""
__global__ void modes(const int* x, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    v += __shfl_xor_sync(0xffffffff, v, 1, WIDTH);
    v ^= __shfl_up_sync(0xffffffff, v, 3, WIDTH);
    v -= __shfl_down_sync(0xffffffff, v, 5, WIDTH);
    v |= __shfl_sync(0xffffffff, v, 6, WIDTH) << 3;
    v += __shfl_xor_sync(0xffffffff, v, 18, WIDTH);
    out[i] = v;
}
"""


@pytest.mark.parametrize("width", [32, 16, 8, 4, 2])
def test_every_shuffle_mode_and_width_gives_the_same_bytes(width, tmp_path, monkeypatch):
    """xor, up, down and an index, in segments of ``width`` lanes: a source lane past its segment's
    bounds as the ISA's pseudo-code sets them (up 3 in a segment of 2, down 5 in one of 4) reads the
    lane's own value."""
    source = MODES.replace("WIDTH", str(width))
    x = np.random.default_rng(width).integers(-2**31, 2**31 - 1, 512, dtype=np.int64).astype(np.int32)
    assert runs_built(source, "modes", tmp_path, monkeypatch, 2, 256, [x, np.zeros(512, np.int32)])
    same_in_both_tiers(monkeypatch, source, "modes", 2, 256, lambda: [x, np.zeros(512, np.int32)])


HALVES = r"""
__global__ void halves(const float* x, float* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned mask = (threadIdx.x & 16) ? 0xffff0000u : 0x0000ffffu;   // each half-warp its own mask
    float v = x[i];
    for (int offset = 8; offset > 0; offset >>= 1)
        v += __shfl_down_sync(mask, v, offset, 16);
    out[i] = v;
}
"""


def test_a_float_ladder_in_half_warps_with_their_own_masks_gives_the_same_bits(tmp_path, monkeypatch):
    """Float32 adds round as the interpreter's; NaNs come out as the GPU's one NaN (0x7fffffff),
    infinities of both signs meet in a lane, and subnormals are kept (no .ftz)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(256).astype(np.float32) * np.float32(1e30)
    x[5], x[40], x[41], x[70] = np.nan, np.inf, -np.inf, np.float32(1e-40)
    x[100:116] = np.float32(3e38)                                     # overflow to inf
    assert runs_built(HALVES, "halves", tmp_path, monkeypatch, 1, 256, [x, np.zeros(256, np.float32)])
    got = same_in_both_tiers(monkeypatch, HALVES, "halves", 1, 256, lambda: [x, np.zeros(256, np.float32)])
    assert got[1].view(np.uint32)[0] == 0x7FFFFFFF                   # lane 0's sum took lane 5's NaN


@pytest.mark.parametrize("block", [48, 40, 96])
def test_a_partial_last_warp_reads_its_missing_lanes_as_the_interpreter_does(block, monkeypatch):
    """Blocks of 48 or 40 threads end in a partial warp: the shuffles of its last lanes name lanes
    that do not exist (inactive), which the interpreter answers, native code giving way to it."""
    x = np.random.default_rng(block).integers(-50, 50, 3 * block).astype(np.int32)
    same_in_both_tiers(monkeypatch, LADDER, "ladder", 3, block,
                       lambda: [x, np.zeros(3 * block // 32 + 3, np.int32), np.int32(3 * block)])


INACTIVE = r"""
__global__ void inactive(const int* x, int* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = x[i];
    v += __shfl_down_sync(0xffffffff, v, 16);
    v += __shfl_down_sync(0xffffffff, v, 8);
    if ((threadIdx.x & 31) < 20)                  // lanes 20..31 sit this one out
        v += __shfl_down_sync(0x000fffff, v, 4);  // lanes 16..19 read lanes 20..23's values
    v += __shfl_xor_sync(0xffffffff, v, 2);
    v += __shfl_xor_sync(0xffffffff, v, 1);
    out[i] = v;
}
"""


def test_a_shuffle_of_a_value_from_an_inactive_lane_gives_the_same_bytes(tmp_path, monkeypatch):
    """A guarded shuffle is no cut (its lanes go the interpreter's way, in lock step), whatever
    becomes of the unguarded ones around it; lanes 16..19 read the registers of lanes that skipped it."""
    x = np.random.default_rng(11).integers(-100, 100, 256).astype(np.int32)
    runs_built(INACTIVE, "inactive", tmp_path, monkeypatch, 2, 128, [x, np.zeros(256, np.int32)])
    same_in_both_tiers(monkeypatch, INACTIVE, "inactive", 2, 128, lambda: [x, np.zeros(256, np.int32)])


MIXED = r"""
__global__ void mixed(const unsigned* x, unsigned* out) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = x[i];
    unsigned long long w = v;
    v = max(v, __shfl_down_sync(0xffffffff, v, 16));      // max: not in a run
    v += __shfl_down_sync(0xffffffff, v, 8);
    v = (v >> 3) + __shfl_xor_sync(0xffffffff, v, 4);
    v += __shfl_xor_sync(0xffffffff, v, 2) << 40 % 32;
    w += __shfl_down_sync(0xffffffff, w, 1);              // 64 bits: two shuffles and a mov of a pair
    out[2 * i] = v;
    out[2 * i + 1] = (unsigned)(w >> 7);
}
"""


def test_instructions_a_run_does_not_take_leave_their_segments_to_the_usual_path(tmp_path, monkeypatch):
    x = np.random.default_rng(13).integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32)
    runs_built(MIXED, "mixed", tmp_path, monkeypatch, 1, 256, [x, np.zeros(512, np.uint32)])
    same_in_both_tiers(monkeypatch, MIXED, "mixed", 1, 256, lambda: [x, np.zeros(512, np.uint32)])


def test_the_lane_map_is_the_isa_s_for_each_mode():
    """shfl.sync's source lanes (PTX ISA): c = ((32 - width) << 8) | clamp."""
    down16 = warpvec.lane_map("down", 4, (16 << 8) | 31)          # width 16: segments of 16 lanes
    assert down16[11] == (15, True) and down16[12] == (12, False) and down16[28] == (28, False)
    up8 = warpvec.lane_map("up", 3, 24 << 8)                       # width 8, clamp 0
    assert up8[10] == (10, False) and up8[11] == (8, True)
    idx = warpvec.lane_map("idx", 6, (16 << 8) | 31)
    assert idx[3] == (6, True) and idx[20] == (22, True)
    bfly = warpvec.lane_map("bfly", 18, (16 << 8) | 31)        # the ISA checks the upper bound only
    assert bfly[1] == (1, False) and bfly[16] == (2, True)
