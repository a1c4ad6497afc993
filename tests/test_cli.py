"""`cudalab run` / `cudalab compile` from a terminal."""
import subprocess
import sys
from pathlib import Path

import pytest

from cudalab.cli import UsageError, main, parse_launch_spec

ROOT = Path(__file__).resolve().parents[1]
SCALE = """\
__global__ void scale(float* x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


def test_run_vector_add_example():
    cudalab = Path(sys.executable).with_name("cudalab")     # the console script pip installed
    out = subprocess.run([str(cudalab), "run", "examples/vector_add.cu"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "vecAdd<<<256, 256>>>(A, B, C, n)" in out.stdout
    assert "C[:8] = " in out.stdout                       # the array the kernel wrote
    assert "check np.array_equal(C, A + B): ok" in out.stdout


def test_the_command_returns_the_programs_exit_code_with_its_output(tmp_path):
    # the command leaves without interpreter teardown (cli.entry): output and exit code must survive it
    (tmp_path / "ends.cu").write_text(
        "#include <cstdio>\n__global__ void k(int *x) { x[threadIdx.x] = threadIdx.x; }\n"
        "int main() { int *x; cudaMallocManaged(&x, 1 << 18); k<<<1, 64>>>(x); cudaDeviceSynchronize();\n"
        "  printf(\"x[63] = %d\\n\", x[63]); return 3; }\n")
    cudalab = Path(sys.executable).with_name("cudalab")
    out = subprocess.run([str(cudalab), "run", "ends.cu"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 3, out.stderr
    assert out.stdout == "x[63] = 63\n"


def test_run_launches_from_comment_lines(tmp_path, capsys):
    f = tmp_path / "scale.cu"
    f.write_text(SCALE + "// cudalab: n = int32 1000\n"
                         "// cudalab: x = arange float32[n]\n"
                         "// cudalab: a = float32 2.5\n"
                         "// cudalab: launch scale<<<(4), dim3(256)>>>(x, a, n)\n"
                         "// cudalab: check np.all(x == 2.5 * np.arange(1000))\n")
    assert main(["run", str(f)]) == 0
    out = capsys.readouterr().out
    assert "x[:8] = [ 0.   2.5  5.   7.5 10.  12.5 15.  17.5] ..." in out
    assert "check np.all(x == 2.5 * np.arange(1000)): ok" in out


def test_failed_check_exits_1(tmp_path, capsys):
    f = tmp_path / "scale.cu"
    f.write_text(SCALE + "// cudalab: x = zeros float32[32]\n// cudalab: a = float32 2\n"
                         "// cudalab: n = int32 32\n// cudalab: launch scale<<<1, 32>>>(x, a, n)\n"
                         "// cudalab: check np.all(x == 1)\n")
    assert main(["run", str(f)]) == 1
    assert "check np.all(x == 1): FAILED" in capsys.readouterr().out


def test_run_without_launch_line_lists_kernels(tmp_path, capsys):
    f = tmp_path / "scale.cu"
    f.write_text(SCALE)
    assert main(["run", str(f)]) == 0
    assert "kernels scale" in capsys.readouterr().out


def test_whole_programs_run_with_their_arguments(tmp_path, capfd):
    f = tmp_path / "prog.cu"
    f.write_text(SCALE + "#include <cstdio>\nint main(int argc, char** argv) { printf(\"%d %s\\n\", argc, argv[2]); return 3; }\n")
    assert main(["run", str(f), "--", "1", "2"]) == 3
    assert capfd.readouterr().out == "3 2\n"


def test_compile_prints_ptx(tmp_path, capsys):
    f = tmp_path / "scale.cu"
    f.write_text(SCALE)
    assert main(["compile", str(f), "--ptx", "--arch", "sm_75"]) == 0
    ptx = capsys.readouterr().out
    assert ".target sm_75" in ptx and ".entry" in ptx


def test_compile_error_is_a_message_with_the_line(tmp_path, capsys):
    f = tmp_path / "bad.cu"
    f.write_text("__global__ void k(float* x)\n{\n    x[0] = y;\n}\n")
    assert main(["compile", str(f)]) == 1
    err = capsys.readouterr().err
    assert "line 3" in err and "Traceback" not in err


@pytest.mark.parametrize("line, message", [
    ("x = ones float32[8]", "unknown initializer 'ones'"),
    ("x = zeros float33[8]", "float33"),
    ("launch scale<<<1>>>(x)", "expected <<<grid, block>>>"),
    ("launch scale<<<1, 32>>>(x, y)", "defines x, y"),
    ("frobnicate", "not understood"),
])
def test_bad_comment_lines_say_which_line(line, message):
    with pytest.raises(UsageError, match=message):
        parse_launch_spec(SCALE + "// cudalab: " + line + "\n")


def test_profile_prints_the_per_line_table():
    cudalab = Path(sys.executable).with_name("cudalab")
    out = subprocess.run([str(cudalab), "profile", "examples/vector_add.cu"], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("vecAdd grid=256x1x1 block=256x1x1 on emu: 45,056 warp instructions")
    assert "line  warp inst  thread inst  lanes  shared wf  conflicts  requests  sectors  sect/req  source" in out.stdout
    # C[i] = A[i] + B[i]: 3 arrays x 2,048 warps = 6,144 requests of 4 sectors each, fully coalesced
    assert any(line.split()[:8] == ["16", "16,384", "524,288", "32.0", "6,144", "24,576", "4.0", "C[i]"]
               for line in lines)
    assert "Worst lines" not in out.stdout


def test_profile_flags_the_worst_line(tmp_path, capsys):
    f = tmp_path / "column.cu"
    f.write_text("__global__ void column(float* x, int n)\n{\n    x[threadIdx.x * n] += 1;\n}\n"
                 "// cudalab: n = int32 32\n// cudalab: x = zeros float32[1024]\n"
                 "// cudalab: launch column<<<1, 32>>>(x, n)\n")
    assert main(["profile", str(f)]) == 0
    out = capsys.readouterr().out
    assert "! line 3: uncoalesced global load, 32.0 sectors per request (ideal 4.0)" in out


def test_profile_a_whole_program_prints_a_report_per_launch(capfd):
    assert main(["profile", str(ROOT / "examples" / "matrix_mul_shared.cu")]) == 0
    out = capfd.readouterr().out        # the program itself writes to the terminal (file descriptor 1)
    assert "--- launch 1 of 1 ---" in out and "acc += As[ty][k] * Bs[k][tx];" in out and "Result = PASS" in out


@pytest.mark.parametrize("source, message", [
    (SCALE, "no `// cudalab: launch ...` line"),
])
def test_profile_says_what_it_cannot_do(tmp_path, capsys, source, message):
    f = tmp_path / "prog.cu"
    f.write_text(source)
    assert main(["profile", str(f)]) == 1
    assert message in capsys.readouterr().err


def test_run_a_program_under_racecheck_reports_the_race(tmp_path, capfd):
    f = tmp_path / "race.cu"
    f.write_text("""#include <cstdio>
__global__ void shift(int* out) {
  __shared__ int s[64];
  s[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = s[(threadIdx.x + 32) % 64];
}
int main() { int* d; cudaMalloc(&d, 256); shift<<<1, 64>>>(d); cudaDeviceSynchronize(); printf("done\\n"); }
""")
    import cudalab
    try:
        assert main(["run", "--check", "racecheck", str(f)]) == 0
    finally:
        cudalab.check()
    out, err = capfd.readouterr()
    assert "done" in out
    assert "Race reported between Write access at line 4 and Read access at line 5" in out + err


def test_a_program_run_from_a_terminal_gives_its_kernels_two_minutes(tmp_path, monkeypatch):
    # programs from courses are sized for a GPU: a kernel of 30 s here is normal, so the terminal's
    # watchdog is 2 minutes (a notebook cell keeps 10 s), and --timeout, when given, is what counts
    import cudalab.emulator.engine as engine
    from cudalab.runtime import device
    seen = []
    real = engine.launch

    def spy(*args, **kwargs):
        seen.append(kwargs["timeout"])
        return real(*args, **kwargs)

    monkeypatch.setattr(engine, "launch", spy)
    (tmp_path / "one.cu").write_text("__global__ void k(int *x) { *x = 1; }\n"
                                     "int main() { int *x; cudaMalloc(&x, 4); k<<<1, 1>>>(x); return cudaDeviceSynchronize(); }\n")
    monkeypatch.chdir(tmp_path)
    before = device.WATCHDOG_SECONDS
    assert main(["run", "one.cu"]) == 0
    assert main(["run", "--timeout", "30", "one.cu"]) == 0
    assert seen == [120, 30]
    assert device.WATCHDOG_SECONDS == before            # the notebook's limit is untouched afterwards


@pytest.mark.parametrize("archs, printed", [("", "8.0 108\n"), ("-arch=sm_90", "9.0 132\n"),
                                           ("-gencode=arch=compute_90a,code=sm_90a", "9.0 132\n"),
                                           ("-arch=sm_89", "8.9 128\n")])
def test_a_program_built_only_for_a_newer_gpu_runs_on_one(tmp_path, monkeypatch, capfd, archs, printed):
    # NVIDIA's GTC 2025 PDL example says "nvcc -arch=sm_90" and stops on a GPU older than 9.0, as
    # a real A100 (the emulator's default) would refuse its sm_90 code: from a terminal, where
    # cudalab.set_device cannot be called, such a program is emulated on an H100 (an sm_89 one on
    # an RTX 4090); the emulated GPU is the default again afterwards
    import cudalab
    (tmp_path / "cc.cu").write_text(
        "#include <cstdio>\n__global__ void k() {}\n"
        "int main() { cudaDeviceProp p; cudaGetDeviceProperties(&p, 0); k<<<1, 1>>>();\n"
        "  printf(\"%d.%d %d\\n\", p.major, p.minor, p.multiProcessorCount); return cudaDeviceSynchronize(); }\n")
    monkeypatch.chdir(tmp_path)
    assert main(["run", *archs.split(), "cc.cu"]) == 0
    assert capfd.readouterr().out == printed
    assert cudalab.device.current().name == "A100"
