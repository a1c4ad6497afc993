"""The timing model: which pipe limits a launch, and the teaching pairs ranked as on an H100."""
import csv
import pathlib
from types import SimpleNamespace

import numpy as np
import pytest

import cudalab
from cudalab.analysis import MetricsObserver
from cudalab.device import current
from cudalab.device.timing import estimate

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


def record(grid, block, **metrics):
    base = {"smsp__inst_executed.sum": 0}
    base.update(metrics)
    return SimpleNamespace(grid=grid, block=block, shared_bytes=0, metrics=base)


def test_a_streaming_kernel_is_limited_by_dram():
    # 16 M floats read and written once: 2 x 64 MB = 4 M sectors of 32 bytes
    rec = record((65536, 1, 1), (256, 1, 1), **{"smsp__inst_executed.sum": 8 * 524288,
                                                "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 2**21,
                                                "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": 2**21})
    est = estimate(rec, "H100", registers=16)
    assert est.limiter == "global"
    assert est.parts_us["global"] == pytest.approx(2**22 * 32 / (3350e9 * 0.75) * 1e6)
    assert est.waves == 63 and est.occupancy == 1.0     # 65536 blocks, 8 per SM x 132 SMs a wave and "H100" in est.summary()


def test_bank_conflicts_make_shared_memory_the_limit():
    rec = record((1024, 1, 1), (256, 1, 1), **{"smsp__inst_executed.sum": 100_000,
                                               "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": 32 * 500_000})
    assert estimate(rec, "A100", registers=32).limiter == "shared"


def test_tiny_blocks_are_limited_by_block_dispatch():
    rec = record((1 << 19, 1, 1), (32, 1, 1), **{"smsp__inst_executed.sum": 10 << 19,
                                                 "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 8 << 19})
    est = estimate(rec, "H100", registers=16)
    assert est.limiter == "dispatch" and est.blocks_per_sm == 3972


def test_tiny_launches_are_launch_overhead():
    est = estimate(record((1, 1, 1), (32, 1, 1), **{"smsp__inst_executed.sum": 10}), "H100")
    assert est.limiter == "launch" and est.assumptions == ("32 registers per thread assumed",)


def test_it_needs_metrics_and_a_gpu():
    with pytest.raises(ValueError, match="MetricsObserver"):
        estimate(SimpleNamespace(grid=(1, 1, 1), block=(1, 1, 1), shared_bytes=0, metrics={}), "H100")
    with pytest.raises(ValueError, match="Pick a GPU"):
        estimate(record((1, 1, 1), (32, 1, 1)), "sm_80")


def test_from_an_emulated_launch():
    src = r"""
    __global__ void scale(float* x, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) x[i] *= 2.0f;
    }"""
    k = cudalab.compile(src).get_kernel("scale")
    x = np.ones(4096, np.float32)
    rec = k.launch(16, 256, (x, np.int32(4096)), observers=[MetricsObserver()])
    est = estimate(rec, "T4", kernel=k)
    assert est.limiter == "launch" and est.time_us > 2.0 and est.waves == 1


def test_teaching_pairs_ranked_like_the_h100():
    """docs/timing_h100.csv: 23 kernels timed with CUDA events on an H100 and estimated from emulated
    counts (tools/timing_gpu.py compare). The model ranks them as the GPU did."""
    with open(DOCS / "timing_h100.csv") as fh:
        rows = list(csv.DictReader(fh))
    measured = np.array([float(r["measured_us"]) for r in rows])
    predicted = np.array([float(r["predicted_us"]) for r in rows])
    ranks = [np.argsort(np.argsort(v)) for v in (measured, predicted)]
    assert len(rows) >= 20 and np.corrcoef(*ranks)[0, 1] > 0.9
    by = {r["case"]: float(r["predicted_us"]) for r in rows}
    assert by["mm_tiled"] < by["mm_naive"] < by["mm_naive_uncoalesced"]
    assert by["tr_padded"] < by["tr_shared"] < by["tr_naive"]
    assert by["branch_warp_uniform"] < by["branch_divergent"] and by["smem_stride1"] < by["smem_stride32"]


def test_the_model_ranks_the_measured_h100_kernels_and_gets_every_pair_within_2x(tmp_path):
    """Recompute the model's estimates for the 23 kernels timed on an H100 (docs/timing_h100.csv) and
    hold it to the issue's bar: Spearman >= 0.9 and each teaching pair's speed ratio within 2x."""
    import csv
    import itertools
    import shutil
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "tools"))
    import timing_gpu
    path = tmp_path / "timing.csv"
    shutil.copy(root / "docs" / "timing_h100.csv", path)
    timing_gpu.compare(str(path))
    rows = list(csv.DictReader(open(path)))
    measured = [float(r["measured_us"]) for r in rows]
    predicted = [float(r["predicted_us"]) for r in rows]
    assert timing_gpu.spearman(measured, predicted) >= 0.9
    groups = {}
    for r in rows:
        groups.setdefault(r["pair"], []).append(r)
    for group in groups.values():
        for a, b in itertools.combinations(group, 2):
            m = float(a["measured_us"]) / float(b["measured_us"])
            p = float(a["predicted_us"]) / float(b["predicted_us"])
            assert max(m / p, p / m) <= 2.0, (a["case"], b["case"], m, p)


COPY = r"""
extern "C" __global__ void copy(float4 *out, const float4 *in, size_t n) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        out[i] = in[i];
}"""


def test_a_kernels_ptx_says_how_many_global_bytes_each_instruction_moves():
    from cudalab.ptx.mix import global_bytes_per_instruction, hot_range
    from cudalab.ptx.parser import parse
    f = parse(cudalab.compile(COPY).ptx).functions["copy"]
    loop = hot_range(f)
    assert 0 < len(loop) < len(f.insts)                   # the grid-stride loop, not the set-up before it
    assert global_bytes_per_instruction(f) == pytest.approx(32 / len(loop))   # a float4 read and written


def test_a_copy_kernel_without_metrics_is_timed_by_the_bytes_it_moves():
    """A whole program's kernel (or a Python launch outside record_timeline) has no metrics; a copy
    timed by its events used to come out issue-bound at several times the DRAM bandwidth."""
    n = 1 << 20
    k = cudalab.compile(COPY).get_kernel("copy")
    src, out = cudalab.to_device(np.ones(4 * n, np.float32)), cudalab.device_array(4 * n, np.float32)
    cudalab.timeline(reset=True)
    rec = k[264, 256](out, src, np.uint64(n))
    row = next(r for r in cudalab.timeline(reset=True) if r["kind"] == "kernel")
    assert not rec.metrics and row["limiter"] == "global"
    moved = 2 * 16 * n                                    # bytes read and written
    achieved = moved / ((row["end"] - row["start"]) * 1e-6)
    dram = current().sized().memory_bandwidth_gbs * 1e9
    assert 0.5 * dram < achieved < dram                   # under the device's DRAM bandwidth, not far below it
    assert (out.copy_to_host() == 1).all()
