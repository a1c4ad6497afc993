"""cudalab.profile: one launch, counted per source line as Nsight Compute's source page counts it."""
import numpy as np
import pytest

import cudalab
from cudalab.analysis.report import ProfileReport, profile

# The transposes of /work/shared/conformance/METRICS.md (an H100 under ncu: 65,536 shared-load
# wavefronts, 63,488 bank conflicts for the 32x32 tile; 2,048 and 0 for the padded 32x33 tile).
TRANSPOSE = """\
extern "C" __global__ void transpose(float* odata, const float* idata, int n) {
  __shared__ float tile[32][COLUMNS];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = idata[y * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  odata[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
"""
STRIDED = """\
__global__ void gather(const float* in, float* out, int stride)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[(long long)t * stride];
    out[t] = v;
}
"""


def transpose(columns):
    n = 256
    kernel = cudalab.compile(TRANSPOSE.replace("COLUMNS", str(columns))).get_kernel("transpose")
    a = np.arange(n * n, dtype=np.float32)
    out = np.zeros_like(a)
    rec = profile(kernel, (8, 8), (32, 32), (out, a, np.int32(n)))
    np.testing.assert_array_equal(out.reshape(n, n), a.reshape(n, n).T)     # it still transposes
    return rec


def row(rec, line):
    return next(r for r in rec.reports["per_line"] if r["line"] == line)


def test_naive_transpose_has_a_32_way_conflict_on_the_column_read():
    rec = transpose(32)
    read = row(rec, 7)                # odata[y * n + x] = tile[threadIdx.x][threadIdx.y];
    assert read["shared_wavefronts"] == 65_536 and read["bank_conflicts"] == 63_488
    assert row(rec, 4)["bank_conflicts"] == 0                 # the row-wise write is conflict-free
    assert read["advice"] == "32-way bank conflict: pad the shared array to 33 columns, tile[32][33]"
    assert [r["line"] for r in rec.reports["per_line"] if r["advice"]] == [7]
    assert rec.reports["advice"][0].startswith("line 7: 32-way bank conflict on a shared load")
    assert rec.metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 63_488


def test_padded_transpose_needs_no_advice():
    rec = transpose(33)
    assert row(rec, 7)["shared_wavefronts"] == 2_048 and row(rec, 7)["bank_conflicts"] == 0
    assert rec.reports["advice"] == []
    assert not any(r["advice"] for r in rec.reports["per_line"])
    assert "Worst lines" not in repr(rec.reports["profile"])


@pytest.mark.parametrize("stride, sectors_per_request", [(1, 4.0), (32, 32.0)])
def test_sectors_per_request_of_a_coalesced_and_a_strided_load(stride, sectors_per_request):
    kernel = cudalab.compile(STRIDED).get_kernel("gather")
    x = np.arange(2048 * stride, dtype=np.float32)
    out = np.zeros(2048, np.float32)
    rec = profile(kernel, 16, 128, (x, out, np.int32(stride)))
    load, store = row(rec, 4), row(rec, 5)
    assert load["global_requests"] == 64 and load["sectors_per_request"] == sectors_per_request
    assert store["sectors_per_request"] == 4.0
    assert bool(load["advice"]) == (stride == 32)
    np.testing.assert_array_equal(out, x[::stride])


def test_divergence_shows_as_active_lanes():
    kernel = cudalab.compile("""\
__global__ void odd(float* x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i % 2)
        x[i] = 2 * x[i];
}
""").get_kernel("odd")
    rec = profile(kernel, 4, 128, (np.ones(512, np.float32),))
    assert row(rec, 5)["active_lanes"] == 16.0         # half of each warp does the work
    assert row(rec, 5)["thread_instructions"] == 16 * row(rec, 5)["instructions"]
    assert "divergent branch" in row(rec, 4)["advice"]


def test_report_renders_as_a_text_table_and_as_html():
    report = transpose(32).reports["profile"]
    assert isinstance(report, ProfileReport)
    text = repr(report)
    assert text.splitlines()[0].startswith("transpose grid=8x8x1 block=32x32x1 on emu: 73,728 warp instructions")
    flagged = next(line for line in text.splitlines() if line.startswith("!     7"))
    assert "65,536" in flagged and "63,488" in flagged and "tile[threadIdx.x][threadIdx.y]" in flagged
    assert "! line 7: 32-way bank conflict: pad the shared array to 33 columns, tile[32][33]" in text
    page = report._repr_html_()
    assert page.count("background:#fde2dd") == 1                 # the one flagged line is highlighted
    assert "tile[32][33]" in page and "<table>" in page


def test_profile_needs_the_emulator(monkeypatch):
    from cudalab.runtime import device
    monkeypatch.setattr(device.current(), "kind", "gpu")
    with pytest.raises(cudalab.UnsupportedError, match="cudalab.use\\('emu'\\)"):
        profile(None, 1, 32)


def test_a_line_of_several_alike_accesses_is_advised_once():
    # one source line, three strided stores (a struct's fields, an inlined curand_init's state): the
    # student reads the advice once, not once per instruction
    src = """
    struct State { float a, b, c; };
    extern "C" __global__ void fill(State *s) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        s[i].a = 1.0f; s[i].b = 2.0f; s[i].c = 3.0f;
    }
    """
    kernel = cudalab.compile(src).get_kernel("fill")
    states = cudalab.device_array((256 * 3,), np.float32)
    rec = profile(kernel, 1, 256, (states,))
    text = rec.reports["profile"].text()
    worst = text.split("Worst lines, worst first:")[1]
    flagged = [l for l in worst.splitlines() if l.startswith("! line")]
    assert len(flagged) == 1
    assert flagged[0].count("uncoalesced global store") == 1
    assert worst.count("uncoalesced global store:") == 1
