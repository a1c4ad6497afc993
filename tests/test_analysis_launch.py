"""MetricsObserver on real emulated launches: wide shared accesses, divergence, partial warps, advice."""
import numpy as np
import pytest

import cudalab
from cudalab.analysis import MetricsObserver

WIDE = r'''
extern "C" __global__ void wide(float* out, int stride) {
  __shared__ double d[64 * 16];
  __shared__ float4 v[32 * 16];
  int t = threadIdx.x;
  for (int i = t; i < 64 * 16; i += blockDim.x) d[i] = i;
  for (int i = t; i < 32 * 16; i += blockDim.x) v[i] = make_float4(i, i, i, i);
  __syncthreads();
  double a = d[t * stride];
  float4 b = v[t * stride];
  out[t] = (float)a + b.x + b.w;
}'''


def launch(src, kernel, grid, block, *args):
    obs = MetricsObserver(source=src)
    cudalab.compile(src).get_kernel(kernel).launch(grid, block, args, observers=[obs])
    return obs


def line_of(src, text):
    return next(i for i, line in enumerate(src.splitlines(), 1) if text in line)


@pytest.mark.parametrize("stride, double_wavefronts, float4_wavefronts", [
    (1, 2, 4),     # one half-warp (quarter-warp) fills the 32 banks exactly once
    (2, 4, 8),     # every phase 2-way
    (4, 8, 16),    # 4-way in every phase
    (16, 32, 32),  # double: 16 lanes on the same 2 banks; float4: 8 lanes on the same 4 banks
])
def test_wide_shared_loads_go_in_phases(stride, double_wavefronts, float4_wavefronts):
    obs = launch(WIDE, "wide", 1, 32, np.zeros(32, np.float32), np.int32(stride))
    rows = {r["line"]: r for r in obs.per_line()}
    assert rows[line_of(WIDE, "double a")]["shared_wavefronts"] == double_wavefronts
    assert rows[line_of(WIDE, "double a")]["ideal_wavefronts"] == 2
    assert rows[line_of(WIDE, "float4 b")]["shared_wavefronts"] == float4_wavefronts
    assert rows[line_of(WIDE, "float4 b")]["ideal_wavefronts"] == 4


ODDEVEN = r'''
extern "C" __global__ void oddeven(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int v = in[i];
  if (v & 1) v = 3 * v + 1;
  else       v = v / 2;
  out[i] = v;
}'''


def test_divergent_branch_is_found():
    n = 100   # 2 blocks of 64: warps 0-2 full, warp 3 has 4 live threads
    obs = launch(ODDEVEN, "oddeven", 2, 64, np.arange(128, dtype=np.int32), np.zeros(128, np.int32), np.int32(n))
    m = obs.metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 4
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 3 * 4 + 1
    assert m["smsp__thread_inst_executed_per_inst_executed.ratio"] < 32
    branch = line_of(ODDEVEN, "if (v & 1)")
    rows = {r["line"]: r for r in obs.per_line()}
    assert rows[branch]["split_warps"] == 4 and rows[branch]["divergence"] == 1.0
    assert any(f.startswith(f"line {branch}: divergent branch: 4 of 4 warps split") for f in obs.findings())
    hist = sum(r["lane_histogram"] for r in obs.per_instruction() if r["line"] == line_of(ODDEVEN, "out[i] = v"))
    assert hist[32] > 0 and hist[4] > 0


def test_uniform_code_has_full_warps_and_no_findings():
    src = 'extern "C" __global__ void copy(const float* a, float* b) { int i = blockIdx.x * blockDim.x + threadIdx.x; b[i] = a[i]; }'
    obs = launch(src, "copy", 4, 96, np.ones(384, np.float32), np.zeros(384, np.float32))
    m = obs.metrics
    assert m["smsp__thread_inst_executed_per_inst_executed.ratio"] == 32
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 12 * 4
    assert obs.findings() == []


def test_atomics_are_counted_apart():
    src = r'''
extern "C" __global__ void hist(const int* v, int* bins) {
  __shared__ int s[8];
  if (threadIdx.x < 8) s[threadIdx.x] = 0;
  __syncthreads();
  atomicAdd(&s[v[threadIdx.x] & 7], 1);
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&bins[threadIdx.x], s[threadIdx.x]);
}'''
    obs = launch(src, "hist", 1, 64, np.arange(64, dtype=np.int32), np.zeros(8, np.int32))
    m = obs.metrics
    assert m["smsp__sass_inst_executed_op_shared_atom.sum"] == 2
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2
    global_atomics = m["l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"] + \
        m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"]
    assert global_atomics == 1
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == 0
