"""Widgets: each picture's model from a real emulated launch, with the numbers it must show, and each
widget's static picture (what a saved notebook shows without a browser)."""
import numpy as np
import pytest

import cudalab
import cudalab.widgets
from cudalab.widgets import WIDGETS, show, trace
from cudalab.widgets.banks import banks_model, verdict
from cudalab.widgets.coalescing import coalescing_model
from cudalab.widgets.divergence import divergence_model
from cudalab.widgets.heatmap import heatmap_model
from cudalab.widgets.hierarchy import hierarchy_model
from cudalab.widgets.occupancy import occupancy_model
from cudalab.widgets.streams import timeline_model
from cudalab.widgets.tiling import phases, tiling_model, writer_of

STRIDED = r"""
__global__ void strided(const float* in, float* out, int stride)
{
    __shared__ float s[1024];
    int t = threadIdx.x;
    for (int k = t; k < 1024; k += blockDim.x) s[k] = in[k];
    __syncthreads();
    out[blockIdx.x * blockDim.x + t] = s[(t * stride) % 1024] + in[(t * stride) % 1024];
}
"""

MATMUL = r"""
#define TILE 16
__global__ void matmul(const float* A, const float* B, float* C, int n)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty, col = blockIdx.x * TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < n / TILE; ++t) {
        As[ty][tx] = A[row * n + t * TILE + tx];
        Bs[ty][tx] = B[(t * TILE + ty) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    C[row * n + col] = acc;
}
"""

BRANCHY = r"""
__global__ void branchy(float* x)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = x[i];
    if (threadIdx.x % 2 == 0)
        for (int k = 0; k < 4 + i % 3; ++k) v = v * v + 1.0f;
    else
        v = v + 100.0f;
    x[i] = v;
}
"""


def launch_strided(stride, blocks=2):
    mod = cudalab.compile(STRIDED)
    x = np.arange(1024, dtype=np.float32)
    out = np.zeros(32 * blocks, np.float32)
    return trace(mod.strided, blocks, 32, (x, out, np.int32(stride))).reports["threads"]


@pytest.fixture(scope="module")
def matmul():
    n = 64
    rng = np.random.default_rng(0)
    A, B = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    C = np.zeros((n, n), np.float32)
    rec = trace(cudalab.compile(MATMUL).matmul, (n // 16, n // 16), (16, 16), (A, B, C, np.int32(n)))
    assert np.allclose(C, A @ B, rtol=1e-4)
    return rec, A, B, C


# ---------------------------------------------------------------------- bank conflicts
@pytest.mark.parametrize("stride, ways, padded_ways", [(1, 1, 1), (2, 2, 1), (32, 32, 1), (33, 1, 2)])
def test_bank_widget_names_the_n_way_conflict(stride, ways, padded_ways):
    tr = launch_strided(stride)
    m = banks_model(tr, line=8)                         # s[(t * stride) % 1024]
    assert m["text"].startswith("ld.shared.f32")
    assert m["ways"] == ways and m["wavefronts"] == ways and m["ideal"] == 1
    assert m["launch_wavefronts"] == 2 * ways           # two blocks of one warp each
    assert sorted(m["lane"].tolist()) == list(range(32))
    assert np.array_equal(m["bank"][:, 0], (np.arange(32) * stride) % 1024 % 32)
    # what if each 32-word row were 33 words long
    assert banks_model(tr, line=8, padded=True)["ways"] == padded_ways
    if ways == 32:
        assert verdict(m) == "32-way bank conflict: 32 wavefronts where 1 would do"


def test_bank_widget_pads_a_2d_array_by_its_own_rows(matmul):
    tr = matmul[0].reports["threads"]
    # acc += As[ty][k] * Bs[k][tx]: every lane of a warp reads one As word (broadcast), Bs a row
    loads = [i for i, line, text in tr.instructions("shared") if line == 15 and text.startswith("ld")]
    assert len(loads) == 32                             # the k loop is unrolled: 16 x (As, Bs)
    for inst in loads:
        assert banks_model(tr, inst=inst)["ways"] == 1


# ---------------------------------------------------------------------- coalescing
@pytest.mark.parametrize("stride, sectors, lines", [(1, 4, 1), (2, 8, 2), (8, 32, 8), (32, 32, 32)])
def test_coalescing_widget_counts_sectors_per_request(stride, sectors, lines):
    tr = launch_strided(stride)
    load = [i for i, line, text in tr.instructions("global") if line == 8 and text.startswith("ld")][0]
    m = coalescing_model(tr, inst=load)                 # in[(t * stride) % 1024]
    assert m["sectors"] == sectors
    assert m["sectors_per_request"] == sectors and m["ideal_per_request"] == 4
    assert m["requested"] == 128
    assert m["wasted"] == sectors * 32 - 128
    assert m["lines"] == lines
    assert m["arrays"] == ["in"]


# ---------------------------------------------------------------------- thread hierarchy
def test_thread_explorer_says_who_a_thread_is_and_what_it_wrote(matmul):
    rec, A, B, C = matmul
    tr = rec.reports["threads"]
    # block (2, 1), thread (5, 3): linear block 1*4+2 = 6, linear thread 3*16+5 = 53
    m = hierarchy_model(tr, block=6, thread=53, colour="written C")
    assert m["block_idx"] == (2, 1, 0) and m["thread_idx"] == (5, 3, 0)
    assert m["global_xyz"] == (2 * 16 + 5, 1 * 16 + 3, 0)
    assert m["global_linear"] == 6 * 256 + 53
    assert (m["warp"], m["lane"]) == (1, 21)
    row, col = 19, 37
    assert m["writes"][-1][:3] == ("global", f"C[{row}][{col}]", 18)
    assert m["writes"][-1][3] == pytest.approx(float(C[row, col]))
    assert m["value"] == pytest.approx(float(C[row, col]))
    assert [line for line, _ in m["lines"]][-2:] == [18, 19]
    assert ("global", f"A[{row}][5]", 11, pytest.approx(float(A[row, 5]))) in m["reads"]


def test_thread_explorer_colours_by_your_values():
    tr = launch_strided(1, blocks=3)
    m = hierarchy_model(tr, block=2, thread=7, colour="yours", values=np.arange(96) * 10.0)
    assert m["value"] == 710.0                          # global thread 2 * 32 + 7
    assert m["values"][:3].tolist() == [640.0, 650.0, 660.0]


def test_big_launches_are_sampled_with_a_note():
    mod = cudalab.compile(BRANCHY)
    x = np.ones(100 * 64, np.float32)
    tr = trace(mod.branchy, 100, 64, (x,), max_blocks=8).reports["threads"]
    assert len(tr.blocks) == 8 and tr.blocks[0] == 0 and tr.blocks[-1] == 99
    assert "8 of 100 blocks" in tr.note
    assert tr.writes["x"].sum() == 6400                  # element counts cover every block
    assert not hierarchy_model(tr, block=1)["recorded"]


# ---------------------------------------------------------------------- tiling
def test_tiling_widget_shows_the_tile_each_phase_copies(matmul):
    tr = matmul[0].reports["threads"]
    assert phases(tr) == 9                              # 4 tiles x 2 __syncthreads() + the end
    # block (1, 2) is linear block 9: rows 32:48 of A, columns 16:32 of B
    k = int(np.flatnonzero(tr.blocks == 9)[0])
    m = tiling_model(tr, phase=0, block=k, thread=0)
    assert m["copied"] == ["A[32:48, 0:16]", "B[0:16, 16:32]"]
    assert m["filled"] == ["As[0:16, 0:16]", "Bs[0:16, 0:16]"]
    m = tiling_model(tr, phase=2, block=k, thread=0)
    assert m["copied"] == ["A[32:48, 16:32]", "B[16:32, 16:32]"]
    # between the barriers thread (tx=3, ty=2) reads row 2 of As and column 3 of Bs
    m = tiling_model(tr, phase=1, block=k, thread=2 * 16 + 3)
    assert m["read"] == ["As: 16 elements", "Bs: 16 elements"]
    As = [p for p in m["panels"] if p["name"] == "As"][0]
    assert np.array_equal(np.flatnonzero(As["thread"].any(axis=1)), [2])
    assert writer_of(tr, 0, k, "Bs", 5 * 16 + 7) == 5 * 16 + 7


# ---------------------------------------------------------------------- divergence
def test_divergence_widget_splits_even_and_odd_lanes():
    mod = cudalab.compile(BRANCHY)
    x = np.arange(64, dtype=np.float32)
    tr = trace(mod.branchy, 1, 64, (x,)).reports["threads"]
    assert x[1] == 101 and x[3] == 103
    m = divergence_model(tr, block=0, warp=1)
    assert m["paths"] == 2
    assert len(set(m["path"][0::2])) == 1 and len(set(m["path"][1::2])) == 1
    loop, odd = m["lines"].index(7), m["lines"].index(9)
    assert m["lanes"][loop].tolist() == [lane % 2 == 0 for lane in range(32)]
    assert m["lanes"][odd].tolist() == [lane % 2 == 1 for lane in range(32)]
    assert m["line_efficiency"][odd] == 0.5
    assert 0.5 < m["efficiency"] < 0.7
    assert (6, 2, 2) in m["branches"]                  # both warps split at the if
    uniform = divergence_model(launch_strided(1), block=0, warp=0)
    assert uniform["paths"] == 1 and uniform["efficiency"] == 1.0


# ---------------------------------------------------------------------- heatmap
def test_heatmap_counts_reads_and_writes_per_element(matmul):
    tr = matmul[0].reports["threads"]
    m = heatmap_model(tr, "A", "reads")
    assert m["grid"].shape == (64, 64) and np.all(m["grid"] == 4)       # each A element: 4 blocks
    assert m["total_reads"] == 64 * 64 * 4
    w = heatmap_model(tr, "C", "writer block")
    assert w["grid"][0, 0] == 0 and w["grid"][63, 63] == 15 and w["grid"][20, 40] == 1 * 4 + 2
    assert heatmap_model(tr, "C", "writes")["total_writes"] == 64 * 64


# ---------------------------------------------------------------------- streams and occupancy
def rows(streams, n=4, copy=1.0, kernel=1.0):
    """Synthetic timeline: n chunks (H2D, kernel, D2H) spread over ``streams`` streams, one copy engine
    per direction."""
    out, h2d, d2h, sm = [], 0.0, 0.0, {}
    for c in range(n):
        s = c % streams
        start = max(h2d, sm.get(s, 0.0) if streams == 1 else h2d)
        out.append(dict(stream=s, engine="H2D", kind="H2D", name=f"in{c}", start=start, end=start + copy))
        h2d = start + copy
        k0 = max(h2d, sm.get("k", 0.0))
        out.append(dict(stream=s, engine="", kind="kernel", name=f"k{c}", start=k0, end=k0 + kernel))
        d0 = max(k0 + kernel, d2h)
        out.append(dict(stream=s, engine="D2H", kind="D2H", name=f"out{c}", start=d0, end=d0 + copy))
        d2h = d0 + copy
        sm["k"] = k0 + kernel
        if streams == 1:
            h2d = sm[s] = d2h
    return out


def test_stream_overlap_model():
    one, four = timeline_model(rows(1), "1 stream"), timeline_model(rows(4), "4 streams")
    assert one["total"] == 12.0 and one["overlap"] == 0.0
    assert four["total"] == 6.0 and four["overlap"] == 4.0
    assert four["tracks"] == ["copy engine D2H", "copy engine H2D", "stream 0", "stream 1", "stream 2", "stream 3"]


def test_occupancy_model_names_the_limiter():
    m = occupancy_model(block_size=256, registers=64, shared=0, device="A100")
    assert (m["active_blocks"], m["active_warps"], m["limiter"]) == (4, 32, "registers")
    assert m["occupancy"] == 0.5
    assert occupancy_model(256, 32, 40 * 1024, "A100")["limiter"] == "shared memory"
    assert len(m["curve"]) == 32


# ---------------------------------------------------------------------- the widgets themselves
ASYNC_COPY = r"""
#include <cuda_pipeline.h>
__global__ void staged(const float* in, float* out) {
  __shared__ float s[2][64];
  for (int k = 0; k < 2; ++k) {
    __pipeline_memcpy_async(&s[k][threadIdx.x], &in[64 * k + threadIdx.x], sizeof(float));
    __pipeline_commit();
  }
  __pipeline_wait_prior(0);
  out[threadIdx.x] = s[0][threadIdx.x] + s[1][threadIdx.x];
}"""


def widget_cases(matmul):
    rec = matmul[0]
    staged = cudalab.compile(ASYNC_COPY).get_kernel("staged")
    pipe = cudalab.widgets.pipeline(staged, 1, 64, (np.arange(128, dtype=np.float32), np.zeros(64, np.float32)))
    return {"threads": (rec, {}), "tiling": (rec, {"phase": 1}), "banks": (rec, {"line": 15}),
            "coalescing": (rec, {"line": 11}), "divergence": (rec, {}), "heatmap": (rec, {"array": "B"}),
            "streams": ({"1 stream": rows(1), "4 streams": rows(4)}, {}), "occupancy": (rec, {}),
            "pipeline": (pipe, {})}


def test_every_widget_saves_a_static_picture(matmul):
    cases = widget_cases(matmul)
    assert set(cases) == set(WIDGETS)
    for what, (obj, options) in cases.items():
        w = show(obj, what, **options)
        bundle = w._repr_mimebundle_()
        assert "application/vnd.jupyter.widget-view+json" in bundle, what
        html = bundle["text/html"]
        assert html.count("<svg") == 1 and html.rstrip().endswith("</div>") and len(html) > 2000, what


def test_clicks_and_sliders_redraw(matmul):
    rec = matmul[0]
    w = show(rec, "threads")
    w.view.picked = "b:5|1"
    w.view.picked = "t:40|2"
    assert w.model["block_idx"] == (1, 1, 0) and w.model["thread_idx"] == (8, 2, 0)
    assert "threadIdx</td><td style='text-align:left;padding:1px 8px'>(8, 2, 0)" in w.info.value
    b = show(launch_strided(32), "banks", line=8)
    assert "32-way" in b.view.svg
    b.padded.value = True
    assert "no bank conflict" in b.view.svg
    o = show(rec, "occupancy")
    assert o.block_size.value == 256
    o.view.picked = "bs:1024|1"
    assert o.model["block_size"] == 1024
    t = show(rec, "tiling")
    t.phase.value = 2
    assert t.model["phase"] == 2


def test_show_explains_a_record_without_a_trace():
    mod = cudalab.compile(BRANCHY)
    rec = mod.branchy[1, 32](np.zeros(32, np.float32))
    with pytest.raises(ValueError, match="cudalab.widgets.trace"):
        show(rec, "banks")
