"""Profiling a long program: pick launches as Nsight Compute does (--kernel-name, --launch-skip,
--launch-count) so the rest run at full speed, and keep the counts of the picked ones exact."""
import numpy as np
import pytest

from cudalab.analysis import metrics as metrics_module
from cudalab.analysis.report import profile
from cudalab.analysis.selection import LaunchSelection, base_name
from cudalab.analysis.warps import distinct
from cudalab.cli import main
from cudalab.programs import run_program_source

# A program that times two kernels over several rounds, as course exercises do.
ROUNDS = r"""#include <cstdio>
__global__ void scale(float* x, int n, float f) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        x[i] = x[i] * f;
}
__global__ void shift(float* x, int n, int by) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += by;
}
int main() {
    const int n = 1 << 14;
    float* x;
    cudaMalloc(&x, n * sizeof(float));
    cudaMemset(x, 0, n * sizeof(float));
    for (int r = 0; r < 3; r++) {
        scale<<<4, 128>>>(x, n, 2.0f);
        shift<<<n / 128, 128>>>(x, n, r + 1);
    }
    float h;
    cudaMemcpy(&h, x, sizeof(float), cudaMemcpyDeviceToHost);
    printf("x[0] = %.0f\n", h);
    return 0;
}
"""


def test_a_selection_counts_matching_launches_as_ncu_does():
    pick = LaunchSelection("scale", skip=1, count=1)
    assert [pick.wants(k) for k in ["scale", "shift", "scale", "shift", "scale"]] == [False, False, True, False, False]
    assert LaunchSelection("reduce").names("reduce<256>") and LaunchSelection("reduce<256>").names("reduce<256>")
    assert not LaunchSelection("reduce").names("reduce_shared")
    assert LaunchSelection("regex:^reduce_").names("reduce_shared")
    assert base_name("ns::reduce<256, cub::Sum<int>>") == "reduce"


def test_only_the_picked_launch_is_profiled_and_its_counts_are_the_full_profiles():
    everything = run_program_source(ROUNDS, profile=True, timeout=120)
    picked = run_program_source(ROUNDS, profile=LaunchSelection("shift", skip=1, count=1), timeout=120)
    assert everything.stdout == picked.stdout == "x[0] = 11\n"      # ((0 * 2 + 1) * 2 + 2) * 2 + 3
    assert [rec.kernel for rec in picked.launches] == ["scale", "shift"] * 3
    profiled = [k for k, rec in enumerate(picked.launches) if "profile" in rec.reports]
    assert profiled == [3]                          # the second launch of shift
    assert "smsp__inst_executed.sum" not in picked.launches[0].metrics
    full, one = everything.launches[3].metrics, picked.launches[3].metrics
    for name in ("smsp__inst_executed.sum", "smsp__thread_inst_executed.sum",
                 "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "cudalab__footprint_bytes"):
        assert one[name] == full[name] > 0, name


def test_cudalab_profile_takes_ncus_options(tmp_path, capfd, monkeypatch):
    (tmp_path / "rounds.cu").write_text(ROUNDS)
    monkeypatch.chdir(tmp_path)
    assert main(["profile", "--kernel-name", "scale", "--launch-count", "1", "rounds.cu"]) == 0
    out = capfd.readouterr().out
    assert "--- launch 1 of 6 ---" in out and "--- launch 2 of 6 ---" not in out
    assert "5 of 6 launches were not profiled (--kernel-name scale --launch-count 1)" in out


def test_a_launch_count_must_be_a_number_and_go_with_a_profile(tmp_path, capsys):
    (tmp_path / "rounds.cu").write_text(ROUNDS)
    assert main(["profile", "--launch-count", "one", str(tmp_path / "rounds.cu")]) == 1
    assert "--launch-count one: expected a number of launches" in capsys.readouterr().err
    assert main(["run", "--launch-count", "1", str(tmp_path / "rounds.cu")]) == 1
    assert "use them with cudalab profile (or cudalab run --profile)" in capsys.readouterr().err


@pytest.mark.parametrize("values", [
    np.arange(1000, dtype=np.uint64) * 4 >> np.uint64(5),                 # a warp-group's ascending sectors
    np.random.default_rng(1).integers(0, 1 << 40, 5000),                   # scattered
    np.array([7, 7, 3, 3, 3, 9], np.int64), np.array([5], np.int64), np.array([], np.int64),
])
def test_distinct_is_numpys_unique(values):
    assert np.array_equal(distinct(values), np.unique(values))


def test_the_footprint_of_a_long_launch_is_the_same_when_merged_on_the_way(monkeypatch):
    """The sectors a launch loads are merged into one sorted array once they pile up; the footprint
    (distinct sectors) does not depend on when."""
    import cudalab
    kernel = cudalab.compile(r"""
extern "C" __global__ void gather(const float* a, float* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = a[(i * 7) % n] + a[i];
}""").get_kernel("gather")
    n = 1 << 13
    a, out = np.arange(n, dtype=np.float32), np.zeros(n, np.float32)
    once = profile(kernel, 2, 64, (a, out, np.int32(n))).metrics
    monkeypatch.setattr(metrics_module, "FOOTPRINT_MERGE", 100)
    merges = []
    merge = metrics_module.MetricsObserver._merge_footprint
    monkeypatch.setattr(metrics_module.MetricsObserver, "_merge_footprint", lambda obs: merges.append(1) or merge(obs))
    merged = profile(kernel, 2, 64, (a, out, np.int32(n))).metrics
    assert merged["cudalab__footprint_bytes"] == once["cudalab__footprint_bytes"] == n * 4
    assert merged == once
    # 128 loads (64 turns of the loop, two loads a turn): merged when what came since outgrows the merged array,
    # a few times in all, not at every load once the array is past the threshold
    assert 2 <= len(merges) <= 12, len(merges)


def _patterns():
    rng = np.random.default_rng(7)
    base = np.uint64(0x7F0000001000)
    lanes = np.arange(256, dtype=np.int64)
    some = np.flatnonzero(rng.random(256) < 0.6)                          # divergent: a few lanes of each warp
    yield lanes, base + np.arange(256, dtype=np.uint64) * 4, 4           # coalesced floats
    yield lanes, base + np.arange(256, dtype=np.uint64) * 128, 4         # one sector a lane
    yield lanes, base + (np.arange(256, dtype=np.uint64) // 8) * 4, 4    # broadcasts of 8 lanes
    yield some, base + some.astype(np.uint64) * 8, 8                      # doubles, some lanes
    yield lanes, base + np.arange(256, dtype=np.uint64)[::-1] * 4, 4     # going down: the general path
    yield lanes, base + np.arange(256, dtype=np.uint64) * 4 + 2, 4       # misaligned: the general path
    yield lanes, base + np.arange(256, dtype=np.uint64) * 16, 16         # float4
    yield lanes, base + ((np.arange(256, dtype=np.uint64) * 4) ^ np.uint64(512)), 4    # warps out of order


@pytest.mark.parametrize("lanes, addresses, size", list(_patterns()))
def test_counting_in_lane_order_agrees_with_the_general_count(lanes, addresses, size):
    from cudalab.analysis.global_sectors import dram_segments, global_sectors, in_lane_order
    quick = in_lane_order(lanes, addresses, size)
    going_down_in_a_warp = ((np.diff(addresses.astype(np.int64)) < 0) & (np.diff(lanes >> 5) == 0)).any()
    if quick is None:                            # the general count's cases
        assert going_down_in_a_warp or (addresses % size != 0).any()
        return
    assert not going_down_in_a_warp
    counted, segments, touched = quick
    assert (touched is None) == (np.diff(addresses.astype(np.int64)) < 0).any()
    general = global_sectors(lanes, addresses, size)
    for field in ("warps", "sectors", "requested_bytes", "ideal_sectors"):
        assert np.array_equal(getattr(counted, field), getattr(general, field)), field
    assert segments == dram_segments(lanes, addresses)
    assert touched is None or np.array_equal(touched, np.unique(addresses.astype(np.int64) >> 5))


def test_profiling_every_launch_of_a_long_program_says_how_to_pick_a_few(monkeypatch, capsys):
    from cudalab.programs import server
    monkeypatch.setattr(server, "PROFILE_HINT_SECONDS", 0.0)       # as if the first launch had taken long
    run_program_source(ROUNDS, profile=True, timeout=120)
    err = capsys.readouterr().err
    assert err.count("cudalab profile: 1 launch profiled so far") == 1      # said once, at the first
    assert "--kernel-name K, --launch-skip N and --launch-count N pick the launches to profile" in err
    run_program_source(ROUNDS, profile=LaunchSelection(count=2), timeout=120)
    assert "profiled so far" not in capsys.readouterr().err           # picked already: no advice
