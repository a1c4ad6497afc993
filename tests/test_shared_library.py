"""A CUDA shared library that a course builds first (``nvcc -shared -Xcompiler -fPIC -o libX.so X.cu``)
and a program that links it (``nvcc app.cu -L. -lX``): the library's kernels run on the emulator as the
program's own."""
import subprocess

import pytest

from cudalab import cli
from cudalab.errors import CompileError
from cudalab.programs import run_program
from cudalab.programs.build import nvcc

LIBRARY = r"""#include <cstdio>
#include "scale.h"
__device__ float factor = 2.5f;
__global__ void scale(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= factor;
    if (i == 0) printf("scaled by the library's kernel\n");
}
void scale_on_gpu(float *host, int n) {
    float *d;
    cudaMalloc(&d, n * sizeof(float));
    cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice);
    scale<<<(n + 127) / 128, 128>>>(d, n);
    cudaMemcpy(host, d, n * sizeof(float), cudaMemcpyDeviceToHost);
    cudaFree(d);
}
"""
PROGRAM = r"""#include <cstdio>
#include "scale.h"
__global__ void add_one(float *x) { x[threadIdx.x] += 1; }
int main() {
    float h[300];
    for (int i = 0; i < 300; i++) h[i] = i;
    scale_on_gpu(h, 300);
    float *d;
    cudaMalloc(&d, 4 * sizeof(float));
    cudaMemcpy(d, h, 4 * sizeof(float), cudaMemcpyHostToDevice);
    add_one<<<1, 4>>>(d);
    cudaMemcpy(h, d, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%g %g %g\n", h[1], h[3], h[299] * 1.0f);
    return 0;
}
"""


def _write(folder):
    (folder / "scale.h").write_text("void scale_on_gpu(float *host, int n);\n")
    (folder / "scale.cu").write_text(LIBRARY)
    (folder / "app.cu").write_text(PROGRAM)


def test_a_program_runs_the_kernels_of_a_shared_library_built_with_nvcc_shared(tmp_path):
    _write(tmp_path)
    lib = run_program("scale.cu", options=["-Xcompiler", "-fPIC", "-shared", "-o", "libscale.so"], cwd=tmp_path)
    assert lib.returncode == 0 and (tmp_path / "libscale.so").is_file(), lib.stderr
    assert "shared library libscale.so" in lib.stderr
    r = run_program("app.cu", options=["-I.", "-L.", "-lscale", "-o", "app"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "scaled by the library's kernel\n3.5 8.5 747.5\n"


def test_cudalab_nvcc_shared_builds_the_library_for_the_emulator(tmp_path, monkeypatch):
    _write(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CUDALAB_DEVICE", raising=False)
    assert cli.main(["nvcc", "-shared", "-o", "libscale.so", "scale.cu"]) == 0    # (-fPIC added, as needed)
    r = run_program("app.cu", options=["libscale.so"], cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.endswith("3.5 8.5 747.5\n")


def test_a_library_built_by_nvidias_nvcc_is_named_with_the_command_that_builds_it_for_cudalab(tmp_path):
    _write(tmp_path)
    made = subprocess.run([nvcc(), "-shared", "-Xcompiler", "-fPIC", "-o", "libscale.so", "scale.cu"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    with pytest.raises(CompileError, match=r"libscale.so holds CUDA kernels built by NVIDIA's nvcc.*-shared"):
        run_program("app.cu", options=["-L.", "-lscale"], cwd=tmp_path)
