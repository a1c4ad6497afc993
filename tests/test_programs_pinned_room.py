"""Page-locked host memory does not use up the emulated device's memory.

cudaMallocHost's buffers live in the arena a whole program shares with the emulator (so kernels
and copies reach them at the same addresses), but on a GPU they are host memory: a bandwidth test
that takes 1 GiB with cudaMalloc and 1 GiB with cudaMallocHost, twice, fits a 4 GiB device.
Before, its third 1 GiB allocation was refused as out of device memory.
"""
import pytest

from cudalab.programs import run_program_source

pytestmark = pytest.mark.skipif(not hasattr(__import__("os"), "memfd_create"), reason="whole programs need Linux")

PROGRAM = r"""
#include <cstdio>
#include <cuda_runtime.h>
int main() {
    const size_t GiB = size_t(1) << 30;
    char *d1, *d2, *h1, *h2, *d3;
    size_t free0, free1, total;
    cudaMemGetInfo(&free0, &total);
    cudaError_t a = cudaMalloc(&d1, GiB);
    cudaError_t b = cudaMallocHost(&h1, GiB);
    cudaError_t c = cudaMalloc(&d2, GiB);
    cudaError_t d = cudaHostAlloc(&h2, GiB, cudaHostAllocDefault);
    cudaMemGetInfo(&free1, &total);
    printf("allocations: %s %s %s %s\n", cudaGetErrorName(a), cudaGetErrorName(b), cudaGetErrorName(c),
           cudaGetErrorName(d));
    printf("device memory used: %.2f GiB of %.2f\n", (free0 - free1) / double(GiB), total / double(GiB));
    cudaError_t e = cudaMalloc(&d3, 3 * GiB);        // more than the device has left
    printf("3 GiB more: %s\n", cudaGetErrorName(e));
    cudaGetLastError();
    cudaMemcpy(d1, h1, 4096, cudaMemcpyHostToDevice);   // both still usable
    printf("copy: %s\n", cudaGetErrorName(cudaGetLastError()));
    return 0;
}
"""


def test_a_bandwidth_tests_pinned_buffers_leave_the_device_its_memory():
    r = run_program_source(PROGRAM, timeout=120)
    assert r.ok, r.stdout + r.stderr
    assert "allocations: cudaSuccess cudaSuccess cudaSuccess cudaSuccess" in r.stdout
    assert "device memory used: 2.00 GiB of 4.00" in r.stdout
    assert "3 GiB more: cudaErrorMemoryAllocation" in r.stdout
    assert "copy: cudaSuccess" in r.stdout
