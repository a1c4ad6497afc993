"""shim/legacy_textures.h builds with NVIDIA's own nvcc, as courses_check's GPU staging uses it.

tools/courses_check.py confirms a course's answers on a real GPU by building it with nvcc and the header
forced into every source (`-include legacy_textures.h`). A program's host-only `.cpp` files get the header
too, but not the `cuda_runtime.h` that nvcc forces into `.cu` files, and the header named
`cudaCreateChannelDesc<T>()` without including where it is declared: g++ read it as a comparison
("expected primary-expression before '>' token") and the texture matrix product never reached the H200.
"""
import shutil
import subprocess
import textwrap

import pytest

from cudalab.programs import run_program
from cudalab.programs.build import LEGACY_TEXTURES

FILES = {
    # the kernel, its texture reference and the binding live in the .cu file ...
    "ramp.cu": """\
        texture<float, 1, cudaReadModeElementType> ramp;

        __global__ void twice(float *out) { out[threadIdx.x] = 2 * tex1Dfetch(ramp, threadIdx.x); }

        void run_twice(const float *host, float *result, int n) {
            float *d, *out;
            cudaMalloc(&d, n * sizeof(float));
            cudaMalloc(&out, n * sizeof(float));
            cudaMemcpy(d, host, n * sizeof(float), cudaMemcpyHostToDevice);
            cudaBindTexture(0, ramp, d, n * sizeof(float));        // the format from the reference's type
            twice<<<1, n>>>(out);
            cudaMemcpy(result, out, n * sizeof(float), cudaMemcpyDeviceToHost);
            cudaUnbindTexture(ramp);
        }
    """,
    # ... and main in a .cpp file that g++ compiles with the same forced include
    "main.cpp": """\
        #include <cstdio>
        void run_twice(const float *host, float *result, int n);
        int main() {
            float h[8], got[8];
            for (int i = 0; i < 8; i++) h[i] = 0.5f * i;
            run_twice(h, got, 8);
            for (int i = 0; i < 8; i++) printf("%g ", got[i]);
            printf("\\n");
        }
    """,
}
EXPECTED = "0 1 2 3 4 5 6 7 \n"


def _write(folder):
    for name, text in FILES.items():
        (folder / name).write_text(textwrap.dedent(text))


def _nvcc_build(folder):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("no nvcc on this machine")
    _write(folder)
    return subprocess.run([nvcc, "-std=c++17", "-include", str(LEGACY_TEXTURES), "main.cpp", "ramp.cu", "-o", "ramp"],
                          cwd=folder, capture_output=True, text=True)


def test_nvcc_builds_a_program_whose_cpp_file_gets_the_header_too(tmp_path):
    built = _nvcc_build(tmp_path)
    assert built.returncode == 0, built.stderr


def test_the_emulator_runs_the_same_program(tmp_path, monkeypatch):
    _write(tmp_path)
    monkeypatch.chdir(tmp_path)
    r = run_program(["main.cpp", "ramp.cu"])
    assert r.returncode == 0, r.stderr
    assert r.stdout == EXPECTED


@pytest.mark.gpu
def test_the_nvcc_build_prints_on_a_gpu_what_the_emulator_prints(tmp_path):
    built = _nvcc_build(tmp_path)
    assert built.returncode == 0, built.stderr
    ran = subprocess.run(["./ramp"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout == EXPECTED
