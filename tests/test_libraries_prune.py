"""cuSPARSE's prune routines in whole programs, against what an H200's cuSPARSE answered.

tools/prune_gpu_probe.cu prunes one 4 x 5 dense matrix (column-major, lda 6, the rows past m holding 99)
and one CSR matrix with an explicit zero stored, in half, float and double: by thresholds 0, 0.5,
0.75, 1 and 10 (entries equal to a threshold are there, to tell > from >=) and by percentages 0 to
100, into base 0 and base 1, with the threshold and count behind host and device pointers. Its lines
"LABEL value" were recorded on an H200 (cuSPARSE 12.6, tests/libraries/prune_h200.txt); the emulator
must print the same, but for the differences listed below with their reasons. What the recording
taught: an entry is kept when its absolute value is strictly above the threshold; by percentage p the
threshold is the entry at position ceil(count * p / 100) - 1 of the absolute values in rising order
(a dense matrix's zeros counted); C's row offsets and columns follow descrC's index base.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from cudalab.programs import run_program_source
from cudalab.programs.build import cuda_home

needs_cusparse = pytest.mark.skipif(not (cuda_home() / "include" / "cusparse.h").exists(),
                                    reason="cuSPARSE's header comes with the nvidia-cusparse wheel (cudalab[cusparse])")

ROOT = Path(__file__).resolve().parents[1]
PROBE = ROOT / "tools" / "prune_gpu_probe.cu"
RECORDED = Path(__file__).parent / "libraries" / "prune_h200.txt"

# where cuSPARSE 12.6 crashed (a segmentation fault), cudalab refuses with a status and a message
CRASHED = {"size_null_size": "3", "nnz_null_threshold": "6", "nnz_null_descr": "3", "p_nnz_null_info": "3",
           "p_size_null_info": "0"}


def answers(text: str) -> dict:
    """label -> value from "LABEL status N" / "LABEL rows 0 1 ..." lines (the status or the output's kind
    joins the label); the misuse cases' numbers stand for their names where a GPU crashed on one."""
    found = {}
    for line in text.splitlines():
        if not line or line.startswith(("#", "cudalab:", " **")) or line in ("done",):
            continue
        label, kind, *value = line.split(" ")
        found[f"{label} {kind}"] = " ".join(value)
    return found


@pytest.fixture(scope="module")
def emulated():
    positive = run_program_source(PROBE.read_text(), options=["-lcusparse"], timeout=300)
    assert positive.returncode == 0, positive.stderr
    got = answers(positive.stdout)
    for kind in "HSD":
        misuse = run_program_source(PROBE.read_text(), options=["-lcusparse"], args=["misuse", kind, "all"],
                                    timeout=300)
        assert misuse.returncode == 0, misuse.stderr
        got.update(answers(misuse.stdout))
    return got


@needs_cusparse
def test_every_pruned_matrix_is_the_one_an_h200_made(emulated):
    recorded = answers(RECORDED.read_text())
    outputs = {k: v for k, v in recorded.items() if k.split()[1] in ("rows", "cols", "vals", "nnz")}
    assert len(outputs) == 3 * 2 * 18 * 4 + 3   # H/S/D, dense and CSR, 18 cases, 4 lines each; misuse's empty one
    assert {k: emulated.get(k) for k in outputs} == outputs
    # the threshold is strict: |1| is not above 1, so the dense matrix keeps 7 of its 16 nonzeros
    assert recorded["S_dense_t1_b0 vals"] == "2 -3 1.5 4 -2 -4 2.5"
    # the explicit zero of the CSR matrix goes at threshold 0
    assert recorded["D_csr_t0_b0 nnz"] == "7"
    # an empty matrix (m = n = 0) writes nothing, not even the count
    assert recorded["S_misuse_nnz_empty nnz"] == "-7"


@needs_cusparse
def test_every_status_is_an_h200s_but_where_it_crashed(emulated):
    recorded = answers(RECORDED.read_text())
    statuses = {k: v for k, v in recorded.items() if k.endswith(" status")}
    assert len(statuses) == 3 * (2 * 18 * 3 + 22 - len(CRASHED))      # size, nnz and fill steps; misuse
    assert {k: emulated.get(k) for k in statuses} == statuses
    crashed = {k: v for k, v in recorded.items() if k.split()[1] == "exit"}
    assert len(crashed) == 3 * len(CRASHED) and set(crashed.values()) == {"139"}
    for kind in "HSD":
        for case, status in CRASHED.items():
            assert emulated[f"{kind}_misuse_{case} status"] == status


@needs_cusparse
def test_buffer_sizes_are_cusparses_for_a_threshold_not_for_a_percentage(emulated):
    """cudalab needs no work area; it answers 512 bytes, what cuSPARSE asked for these sizes by threshold
    (by percentage it asked 1056 to 1440, its own sort's scratch)."""
    recorded = answers(RECORDED.read_text())
    sizes = {k: v for k, v in recorded.items() if k.endswith("_size bytes")}
    assert {emulated[k] for k in sizes} == {"512"}
    by_threshold = {v for k, v in sizes.items() if k.split("_")[2].startswith("t")}
    by_percentage = {int(v) for k, v in sizes.items() if k.split("_")[2].startswith("p")}
    assert by_threshold == {"512"} and min(by_percentage) == 1056 and max(by_percentage) == 1440
