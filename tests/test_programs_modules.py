"""Module files a driver-API program loads: which ones carry the PTX the emulator runs, and what it says
about the others.

A GPU runs the machine code (SASS) of a cubin or fat binary; cudalab runs PTX. A fat binary with a PTX
entry (``code=compute_90``: nvcc compresses it) is read as it is; one of SASS only, or a cubin, runs when
``cudalab nvcc`` built it (the same nvcc command, whose PTX cudalab keeps); any other is refused with
CUDA_ERROR_NO_BINARY_FOR_GPU and a line saying how to build it.
"""
import subprocess
import sys
from pathlib import Path

import pytest

from cudalab.programs import images, run_program
from cudalab.programs.build import nvcc

KERNEL = r"""
extern "C" __global__ void fill(int *x, int value, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value + i;
}
"""

LOADER = r"""
// Loads the module file named on the command line and fills 300 ints with it.
#include <cstdio>
#include <cuda.h>
int main(int argc, char **argv) {
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fill;
    CUctxCreateParams params = {};
    cuInit(0);
    cuDeviceGet(&dev, 0);
    cuCtxCreate(&ctx, &params, 0, dev);
    CUresult r = cuModuleLoad(&mod, argv[1]);
    const char *name;
    cuGetErrorName(r, &name);
    printf("load: %s\n", name);
    if (r) return 1;
    cuModuleGetFunction(&fill, mod, "fill");
    int n = 300, value = 1000, host[300];
    CUdeviceptr x;
    cuMemAlloc(&x, sizeof host);
    void *args[] = {&x, &value, &n};
    cuLaunchKernel(fill, 3, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr);
    cuMemcpyDtoH(host, x, sizeof host);
    printf("x[299] = %d\n", host[299]);
    return 0;
}
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("modules")
    (d / "kernel.cu").write_text(KERNEL)
    (d / "loader.cpp").write_text(LOADER)
    return d


def cudalab_nvcc(folder, *words):
    return subprocess.run([sys.executable, "-m", "cudalab.cli", "nvcc", *words], cwd=folder, capture_output=True,
                          text=True)


def load(folder, module):
    return run_program(folder / "loader.cpp", args=[module], options=["-lcuda"], cwd=folder, timeout=120)


def test_a_fat_binary_of_machine_code_built_by_cudalab_nvcc_runs(folder):
    r = cudalab_nvcc(folder, "-gencode=arch=compute_80,code=sm_80", "-gencode=arch=compute_90,code=sm_90",
                     "-o", "sass.fatbin", "-fatbin", "kernel.cu")
    assert r.returncode == 0, r.stderr
    ran = load(folder, "sass.fatbin")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == ["load: CUDA_SUCCESS", "x[299] = 1299"]


def test_a_cubin_built_by_cudalab_nvcc_runs(folder):
    assert cudalab_nvcc(folder, "-arch=sm_90", "-cubin", "-o", "kernel.cubin", "kernel.cu").returncode == 0
    ran = load(folder, "kernel.cubin")
    assert ran.stdout.splitlines() == ["load: CUDA_SUCCESS", "x[299] = 1299"]


def test_a_fat_binary_with_nvccs_compressed_ptx_runs_as_it_is(folder):
    subprocess.run([nvcc(), "-gencode=arch=compute_75,code=compute_75", "-fatbin", "-o", "ptx.fatbin",
                    "kernel.cu"], cwd=folder, check=True)
    image = (folder / "ptx.fatbin").read_bytes()
    assert [packed for kind, _, packed, _ in images.fatbin_entries(image)] == [False]     # unpacked by libzstd
    assert ".entry fill" in images.ptx_of(image)
    assert load(folder, "ptx.fatbin").stdout.splitlines() == ["load: CUDA_SUCCESS", "x[299] = 1299"]


def test_machine_code_that_cudalab_did_not_build_is_refused_saying_how_to_build_it(folder):
    subprocess.run([nvcc(), "-gencode=arch=compute_90,code=sm_90", "-fatbin", "-o", "plain.fatbin", "kernel.cu"],
                   cwd=folder, check=True)
    ran = load(folder, "plain.fatbin")
    assert ran.stdout.splitlines() == ["load: CUDA_ERROR_NO_BINARY_FOR_GPU"]
    assert "GPU machine code (SASS) only" in ran.stderr and "cudalab nvcc" in ran.stderr
