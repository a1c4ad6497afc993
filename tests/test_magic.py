"""The %%cuda cell magic, driven through a real IPython shell as a notebook would."""
import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

import cudalab

VEC_ADD = """\
__global__ void vecAdd(const float* A, const float* B, float* C, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}
"""


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "cudalab")
    return shell


def test_cell_binds_each_kernel_by_its_cpp_name(ip):
    ip.run_cell_magic("cuda", "", VEC_ADD)
    result = ip.run_cell("""
import numpy as np, cudalab
n = 1000
a = np.arange(n, dtype=np.float32)
d_a, d_b = cudalab.to_device(a), cudalab.to_device(2 * a)
d_c = cudalab.device_array(n, np.float32)
vecAdd[(n + 255) // 256, 256](d_a, d_b, d_c, n)
c = d_c.copy_to_host()
""")
    result.raise_error()
    np.testing.assert_array_equal(ip.user_ns["c"], 3 * np.arange(1000, dtype=np.float32))
    assert ip.user_ns["cuda_module"].kernels == ["vecAdd"]


def test_defines_and_module_name(ip):
    ip.run_cell_magic("cuda", "-D SCALE=3 -D UNUSED --module scaling --device emu", """\
template <int K> __global__ void times(int* x) { x[threadIdx.x] *= K; }
__global__ void scale(int* x) { x[threadIdx.x] *= SCALE; }
""")
    mod = ip.user_ns["scaling"]
    x = cudalab.to_device(np.arange(32, dtype=np.int32))
    ip.user_ns["scale"][1, 32](x)
    mod.get_kernel("times<2>")[1, 32](x)      # templates are reached through the module
    np.testing.assert_array_equal(x.copy_to_host(), 6 * np.arange(32))


def test_compile_error_is_a_short_message_with_the_cells_line(ip, capsys):
    ip.user_ns.pop("broken", None)
    result = ip.run_cell("%%cuda\n__global__ void broken(float* x)\n{\n    x[0] = y;\n}\n")
    out, err = capsys.readouterr()
    assert result.success                   # no exception reached the notebook
    assert "line 3" in err and "x[0] = y;" in err
    assert "Traceback" not in out + err
    assert "broken" not in ip.user_ns


@pytest.mark.parametrize("line", ["--arch banana", "-O 7"])
def test_bad_options_are_usage_errors(ip, line):
    with pytest.raises(UsageError):
        ip.run_cell_magic("cuda", line, VEC_ADD)


def test_help_lists_the_options(ip):
    doc = ip.find_cell_magic("cuda").__doc__
    for option in ("-D NAME[=VAL]", "-O N", "--arch sm_XX", "--module NAME", "--device", "--profile",
                   "%cuda_profile", "%cuda_show WHAT"):
        assert option in doc


TRANSPOSE = """\
__global__ void transpose(float* odata, const float* idata, int n)
{
    __shared__ float tile[32][32];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = idata[y * n + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x; y = blockIdx.x * 32 + threadIdx.y;
    odata[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
"""
MATRIX = """
import numpy as np
n = 64
a = np.arange(n * n, dtype=np.float32)
out = np.zeros_like(a)
"""


def test_profile_option_shows_the_report_of_every_launch(ip, capsys):
    ip.run_cell_magic("cuda", "--profile", TRANSPOSE)
    ip.run_cell(MATRIX + "rec = transpose[(2, 2), (32, 32)](out, a, n)\n").raise_error()
    shown = capsys.readouterr().out            # what the notebook displays: the report's text form
    assert "line  warp inst  thread inst  lanes  shared wf  conflicts" in shown
    assert "! line 8: 32-way bank conflict: pad the shared array to 33 columns, tile[32][33]" in shown
    rec = ip.user_ns["rec"]
    assert [r["line"] for r in rec.reports["per_line"] if r["bank_conflicts"]] == [8]
    np.testing.assert_array_equal(ip.user_ns["out"].reshape(64, 64), ip.user_ns["a"].reshape(64, 64).T)
    kernel = ip.user_ns["transpose"]           # still the kernel underneath: launch without a report
    assert kernel.mangled == "_Z9transposePfPKfi"
    kernel.launch((2, 2), (32, 32), (ip.user_ns["out"], ip.user_ns["a"], 64))
    assert capsys.readouterr().out == ""


def test_cuda_profile_runs_one_launch_and_shows_its_report(ip, capsys):
    ip.run_cell_magic("cuda", "", TRANSPOSE)
    ip.run_cell(MATRIX).raise_error()
    ip.run_line_magic("cuda_profile", "transpose[(2, 2), (32, 32)](out, a, n)")
    shown = capsys.readouterr().out
    flagged = next(line for line in shown.splitlines() if line.startswith("!     8"))
    assert "4,096" in flagged and "3,968" in flagged     # shared wavefronts, bank conflicts of 4 blocks
    assert cudalab.last_launch().reports["per_line"][0]["line"] == 1


def test_cuda_show_draws_a_widget_of_the_launch(ip, monkeypatch):
    pytest.importorskip("anywidget")
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)
    ip.run_cell_magic("cuda", "", TRANSPOSE)
    ip.run_cell(MATRIX).raise_error()
    ip.run_line_magic("cuda_show", "banks line=8 padded=True transpose[(2, 2), (32, 32)](out, a, n)")
    (widget,) = shown
    assert type(widget).__name__ == "BankConflicts" and widget.padded.value is True
    assert "threads" in cudalab.last_launch().reports       # the launch was traced thread by thread


@pytest.mark.parametrize("magic, line, message", [
    ("cuda_profile", "transpose(out)", "needs a launch"),
    ("cuda_profile", "", "needs a launch"),
    ("cuda_show", "bunks transpose[1, 32](out, a, n)", "not 'bunks'"),
    ("cuda_show", "banks transpose", "needs a launch"),
])
def test_line_magics_say_what_they_expect(ip, magic, line, message):
    with pytest.raises(UsageError, match=message):
        ip.run_line_magic(magic, line)


def test_a_whole_program_cell_can_be_profiled(ip):
    ip.run_cell_magic("cuda", "--profile", """
__global__ void twice(int* x) { x[threadIdx.x] *= 2; }
int main() {
    int* d; cudaMalloc(&d, 32 * sizeof(int)); cudaMemset(d, 0, 32 * sizeof(int));
    twice<<<1, 32>>>(d); cudaDeviceSynchronize(); return 0;
}
""")
    (rec,) = ip.user_ns["program_result"].launches
    report = rec.reports["profile"]
    assert rec.kernel == "twice(int *)" or "twice" in rec.kernel
    assert rec.metrics["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 1
    assert "twice" in repr(report)


def test_a_program_cell_profiles_the_launches_ncus_options_pick(ip):
    ip.run_cell_magic("cuda", "--profile --kernel-name twice --launch-skip 2 --launch-count 1", """
__global__ void twice(int* x) { x[threadIdx.x] *= 2; }
int main() {
    int* d; cudaMalloc(&d, 32 * sizeof(int)); cudaMemset(d, 0, 32 * sizeof(int));
    for (int r = 0; r < 4; r++) twice<<<1, 32>>>(d);
    cudaDeviceSynchronize(); return 0;
}
""")
    launches = ip.user_ns["program_result"].launches
    assert ["profile" in rec.reports for rec in launches] == [False, False, True, False]


def test_device_both_without_a_gpu_says_so(ip, capsys):
    from cudalab.gpu import backend
    if backend.available():
        pytest.skip("this machine has a GPU")
    ip.run_cell_magic("cuda", "--device both", VEC_ADD)
    assert "No NVIDIA GPU" in capsys.readouterr().err


def test_a_failing_launch_in_a_cell_shows_the_message_not_a_traceback(ip, capsys):
    ip.run_cell("import numpy as np, cudalab\n"
                "m = cudalab.compile('__global__ void k(int* a) { a[threadIdx.x + (1 << 28)] = 1; }')\n"
                "m.k[1, 4](np.zeros(4, np.int32))")
    err = capsys.readouterr().err
    assert "Invalid __global__ write of size 4 bytes" in err and "by thread (0,0,0)" in err
    assert "Traceback" not in err and "engine.py" not in err


def test_a_write_just_past_the_end_in_a_cell_warns_and_the_cell_goes_on(ip, capsys):
    """One element past the array's end: a GPU runs it, so the cell goes on, and memcheck's finding is
    shown as a warning (no traceback)."""
    ip.run_cell("import numpy as np, cudalab\n"
                "m = cudalab.compile('__global__ void k(int* a) { a[threadIdx.x + 1] = 1; }')\n"
                "a = np.zeros(4, np.int32)\n"
                "m.k[1, 4](a)\n"
                "print('after', a.tolist())")
    out = capsys.readouterr()
    assert "after [0, 1, 1, 1]" in out.out
    assert "cudalab memcheck warning: Invalid __global__ write of size 4 bytes" in out.err
    assert "by thread (3,0,0)" in out.err and "0 bytes after the end of a 16-byte allocation" in out.err
    assert "Traceback" not in out.err


def test_the_device_profile_decides_what_compiles():
    import cudalab
    from cudalab import CompileError
    src = "__global__ void k(int* a) { a[0] = __reduce_add_sync(0xffffffff, a[threadIdx.x]); }"
    before = cudalab.device.current()
    try:
        cudalab.set_device("T4")                  # sm_75: no redux.sync
        with pytest.raises(CompileError, match="__reduce_add_sync"):
            cudalab.compile(src)
    finally:
        cudalab.set_device(before)                # (an A100 by default, whatever ran before)
    assert cudalab.compile(src).kernels == ["k"]


def test_nvcc4jupyters_cu_cell_runs_a_whole_program_as_cuda_does(ip, capfd):
    # courses20: a Colab course's notebooks write %%cu (nvcc4jupyter's name) over every program
    ip.run_cell_magic("cu", "", """
#include <cstdio>
__global__ void twice(int* x) { x[threadIdx.x] *= 2; }
int main() {
    int h[32], *d;
    for (int i = 0; i < 32; i++) h[i] = i;
    cudaMalloc(&d, sizeof h); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    twice<<<1, 32>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("last %d\\n", h[31]);
    return 0;
}
""")
    assert "last 62" in capfd.readouterr().out
    assert len(ip.user_ns["program_result"].launches) == 1


def test_a_colab_notebooks_load_ext_nvcc_plugin_line_loads_cudalabs_magics(capsys):
    # Colab courses start with `%load_ext nvcc_plugin` (nvcc4jupyter's first module name) and write %%cu
    # over each program: with cudalab installed those two lines work unchanged
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "nvcc_plugin")
    assert "cudalab's %%cu and %%cuda magics are loaded" in capsys.readouterr().out
    shell.run_cell_magic("cu", "", '#include <cstdio>\nint main() { printf("from %%cu\\n"); return 0; }\n')
    assert "from %cu" in capsys.readouterr().out
