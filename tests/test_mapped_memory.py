"""Kernels on mapped (zero-copy) host memory are timed at the host link's rate, not DRAM's.

cudaHostAlloc(..., cudaHostAllocMapped) memory stays in the host: a kernel that reads it pulls every
byte over PCIe (or NVLink-C2C). The CUDA Handbook's stream5MappedXfer, a saxpy reading two mapped
arrays of 128M floats, took 21.3 ms on an H100 (50 GB/s, the H100 profile's host link), where the
timing model used to charge those bytes at DRAM speed (1.42 ms).
"""
import re

import pytest

import cudalab
from cudalab.programs import run_program_source
from cudalab.ptx import parse
from cudalab.ptx.mix import access_sources

SAXPY = r"""
__global__ void saxpy(float *out, const float *x, const float *y, size_t n, float a) {
    for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = a * x[i] + y[i];
}
"""

PROGRAM = SAXPY + r"""
#include <cstdio>
float time_it(float *out, const float *x, const float *y, size_t n) {
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    cudaEventRecord(start);
    saxpy<<<264, 256>>>(out, x, y, n, 2.0f);
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float ms;
    cudaEventElapsedTime(&ms, start, stop);
    return ms;
}

int main() {
    size_t n = 1 << 21, bytes = n * sizeof(float);
    float *out, *x, *y, *hx, *hy;
    cudaMalloc(&out, bytes);
    cudaMalloc(&x, bytes);
    cudaMalloc(&y, bytes);
    cudaHostAlloc(&hx, bytes, cudaHostAllocMapped);
    cudaHostAlloc(&hy, bytes, cudaHostAllocMapped);
    printf("device memory: %.4f ms\n", time_it(out, x, y, n));
    printf("mapped host memory: %.4f ms\n", time_it(out, hx, hy, n));
    printf("one mapped array: %.4f ms\n", time_it(out, hx, y, n));
}
"""


def test_the_parameters_behind_each_access_are_read_from_the_ptx():
    f = parse(cudalab.compile("extern \"C\" " + SAXPY.strip()).ptx).functions["saxpy"]
    sources = {tuple(sorted(k)): v for k, v in access_sources(f).items()}
    # the loop's loads come through x and y (parameters 1 and 2), its store through out (parameter 0)
    assert set(sources) == {("saxpy_param_0",), ("saxpy_param_1",), ("saxpy_param_2",)}
    assert sources[("saxpy_param_1",)][0] == sources[("saxpy_param_2",)][0] == sources[("saxpy_param_0",)][1] > 0
    assert sources[("saxpy_param_0",)][0] == 0


def test_a_kernel_reading_mapped_host_memory_takes_the_host_links_time():
    before = cudalab.device.current()
    cudalab.set_device("H100")
    try:
        r = run_program_source(PROGRAM, timeout=120)
    finally:
        cudalab.set_device(before)
    assert r.returncode == 0, r.stderr
    ms = {k: float(v) for k, v in re.findall(r"(.+): ([\d.]+) ms", r.stdout)}
    link_ms = 16 * 2**20 / 50e9 * 1e3      # x and y, 8 MiB each, over the H100's 50 GB/s: 0.34 ms
    # (the model scales the loop's bytes per instruction by every instruction, set-up too: 5% more here)
    assert ms["mapped host memory"] == pytest.approx(link_ms, rel=0.1)
    assert ms["one mapped array"] == pytest.approx(link_ms / 2, rel=0.1)
    assert ms["device memory"] < ms["mapped host memory"] / 4      # DRAM (and issue) bound
