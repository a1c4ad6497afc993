"""The memory metrics of docs METRICS.md, measured with Nsight Compute on an H100, reproduced exactly."""
import numpy as np
import pytest

import cudalab
from cudalab.analysis import MetricsObserver

SRC = r'''
extern "C" __global__ void smem_stride(float* out, int stride) {
  __shared__ float s[32 * 33 + 64];
  int t = threadIdx.x;
  for (int i = t; i < 32 * 33 + 64; i += blockDim.x) s[i] = i;
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = s[(t * stride) % (32 * 33)];
}
extern "C" __global__ void transpose_naive_tile(float* odata, const float* idata, int n) {
  __shared__ float tile[32][32];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  tile[threadIdx.y][threadIdx.x] = idata[y * n + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
  odata[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
extern "C" __global__ void gmem_stride(const float* in, float* out, int stride, int offset) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = in[(long long)t * stride + offset];
}
'''
# transpose_padded_tile: the same with `__shared__ float tile[32][33];`
NAIVE = SRC[SRC.index('extern "C" __global__ void transpose_naive_tile'):SRC.index('extern "C" __global__ void gmem_stride')]
SRC += NAIVE.replace("naive", "padded").replace("tile[32][32]", "tile[32][33]")

COLUMNS = ["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
           "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
           "smsp__sass_inst_executed_op_shared_ld.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
           "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
           "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]


def smem_stride(stride):
    return "smem_stride", 2, 128, lambda: [cudalab.device_array(256, np.float32), np.int32(stride)]


def transpose(name):
    n = 256
    return (name, (8, 8), (32, 32),
            lambda: [cudalab.device_array(n * n, np.float32),
                     cudalab.to_device(np.arange(n * n, dtype=np.float32)), np.int32(n)])


def gmem_stride(stride, offset):
    return ("gmem_stride", 16, 128,
            lambda: [cudalab.to_device(np.zeros(2048 * stride + offset, np.float32)),
                     cudalab.device_array(2048, np.float32), np.int32(stride), np.int32(offset)])


# the METRICS.md table, row by row
TABLE = {
    "smem_stride stride=1": (smem_stride(1), [8, 0, 8, 0, 0, 8, 32]),
    "smem_stride stride=2": (smem_stride(2), [16, 8, 8, 0, 0, 8, 32]),
    "smem_stride stride=32": (smem_stride(32), [256, 248, 8, 0, 0, 8, 32]),
    "smem_stride stride=33": (smem_stride(33), [8, 0, 8, 0, 0, 8, 32]),
    "transpose_naive_tile": (transpose("transpose_naive_tile"), [65536, 63488, 2048, 2048, 8192, 2048, 8192]),
    "transpose_padded_tile": (transpose("transpose_padded_tile"), [2048, 0, 2048, 2048, 8192, 2048, 8192]),
    "gmem_stride stride=1 offset=0": (gmem_stride(1, 0), [0, 0, 0, 64, 256, 64, 256]),
    "gmem_stride stride=1 offset=1": (gmem_stride(1, 1), [0, 0, 0, 64, 320, 64, 256]),
    "gmem_stride stride=32 offset=0": (gmem_stride(32, 0), [0, 0, 0, 64, 2048, 64, 256]),
}


@pytest.fixture(scope="module")
def module():
    return cudalab.compile(SRC)


def measure(module, kernel, grid, block, make_args):
    obs = MetricsObserver(source=SRC)
    module.get_kernel(kernel).launch(grid, block, make_args(), observers=[obs])
    return obs


@pytest.mark.parametrize("row", list(TABLE))
def test_metrics_match_nsight_compute(module, row):
    (kernel, grid, block, make_args), expected = TABLE[row]
    metrics = measure(module, kernel, grid, block, make_args).metrics
    assert [metrics[c] for c in COLUMNS] == expected


def test_smem_stride_fill_loop_stores(module):
    # METRICS.md notes: the fill loop does 70 conflict-free shared stores for these launches
    metrics = measure(module, *smem_stride(32)).metrics
    assert metrics["smsp__sass_inst_executed_op_shared_st.sum"] == 70
    assert metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 70
    assert metrics["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 0


def test_naive_transpose_report_points_at_the_line(module):
    obs = measure(module, *transpose("transpose_naive_tile"))
    line = SRC.splitlines().index("  odata[y * n + x] = tile[threadIdx.x][threadIdx.y];") + 1
    rows = {r["line"]: r for r in obs.per_line()}
    assert rows[line]["bank_conflicts"] == 63488
    assert rows[line]["source"] == "odata[y * n + x] = tile[threadIdx.x][threadIdx.y];"
    assert obs.findings()[0].startswith(f"line {line}: 32-way bank conflict on a shared load")
