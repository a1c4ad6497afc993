"""Every launch of docs/ncu_comparison.csv replayed on the emulator: its memory metrics must equal
the numbers Nsight Compute read on an H100 (tools/ncu_gpu.py made the table; no GPU needed here)."""
import csv
import sys
from pathlib import Path

import numpy as np
import pytest

import cudalab
from cudalab.analysis import MetricsObserver

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import ncu_gpu  # noqa: E402

# (launch, metric) pairs where cudalab still differs from the H100, and why
KNOWN_GAPS = {
    ("atomicAdd histogram, 256 random bins", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"):
        "ncu counts 86 sectors, the rule (per sector, its most-updated address's update count) gives 85; "
        "the same rule is exact for the 8-bin histogram (26) and every regular atomic pattern",
}


def ncu_rows():
    """{launch: {memory metric: ncu's value}}; the CSV leaves out metrics that are 0 on both sides."""
    rows = {}
    with open(ROOT / "docs" / "ncu_comparison.csv", newline="") as f:
        for r in csv.DictReader(f):
            zeros = dict.fromkeys(ncu_gpu.MEMORY_METRICS, 0)
            if r["metric"] in zeros:
                rows.setdefault(r["case"], zeros)[r["metric"]] = int(r["ncu"])
    return rows


NCU = ncu_rows()
CASES = {c.name: c for c in ncu_gpu.CASES}


def test_the_table_covers_at_least_40_launches_of_every_kind():
    assert len(NCU) >= 40 and set(NCU) <= set(CASES)
    kinds = ("shared ld", "shared st", "global ld", "global st", "transpose", "gather", "atomic", "branch")
    assert all(any(k in name for name in NCU) for k in kinds)


@pytest.mark.parametrize("case", list(NCU))
def test_memory_metrics_match_nsight_compute(case):
    ours = ncu_gpu.emulate(CASES[case])
    expected = NCU[case]
    exact = {m: v for m, v in expected.items() if (case, m) not in KNOWN_GAPS}
    assert {m: ours[m] for m in exact} == exact
    gaps = [(m, expected[m], ours[m]) for m in expected if (case, m) in KNOWN_GAPS and ours[m] != expected[m]]
    if gaps:
        pytest.xfail("; ".join(f"{m}: ncu {n}, cudalab {c}: {KNOWN_GAPS[case, m]}" for m, n, c in gaps))


# The rules the table taught, as small examples (numbers read with ncu on an H100).
WIDE = r'''
extern "C" __global__ void wide(double* out, int div) {
  __shared__ double s[64];
  int t = threadIdx.x;
  s[t] = t;
  __syncthreads();
  out[t] = s[t / div];
}
extern "C" __global__ void count(int* c, int* old, int stride) {
  int t = threadIdx.x;
  atomicAdd(&c[t * stride], 1);               // result unused: a RED in SASS
  old[t] = atomicAdd(&c[64 + t * stride], 1); // result used: an ATOM
}
'''


def launch(name, *args):
    obs = MetricsObserver()
    cudalab.compile(WIDE).get_kernel(name).launch(1, 32, list(args), observers=[obs])
    return obs.metrics


@pytest.mark.parametrize("div, wavefronts", [(1, 2), (2, 1), (32, 1)])
def test_double_loads_by_lane_pairs_on_one_address_take_one_wavefront(div, wavefronts):
    # s[t]: 2 half-warp phases; s[t / 2] and s[0]: neighbouring lanes share, one 32-lane phase
    m = launch("wide", cudalab.device_array(32, np.float64), np.int32(div))
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] == wavefronts
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0


@pytest.mark.parametrize("stride, sectors", [(0, 32), (1, 4), (8, 32)])
def test_atomics_count_a_sector_per_update_of_one_address(stride, sectors):
    m = launch("count", cudalab.device_array(64 + 32 * 8 + 1, np.int32), cudalab.device_array(32, np.int32),
               np.int32(stride))
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == 1
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] == sectors
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] == 1
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"] == sectors
