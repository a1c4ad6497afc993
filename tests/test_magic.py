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


@pytest.mark.parametrize("line", ["--arch banana", "--device both", "-O 7"])
def test_bad_options_are_usage_errors(ip, line):
    with pytest.raises(UsageError):
        ip.run_cell_magic("cuda", line, VEC_ADD)


def test_help_lists_the_options(ip):
    doc = ip.find_cell_magic("cuda").__doc__
    for option in ("-D NAME[=VAL]", "-O N", "--arch sm_XX", "--module NAME", "--device"):
        assert option in doc
