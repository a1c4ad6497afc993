"""Programs written on a Chinese or Russian Windows are not UTF-8, and nvcc's messages quote them.

Visual Studio saves a Chinese course's sources in GBK (a Russian one's in CP1251): the comments are
fine for the compilers, but a warning that gcc gives on such a line quotes the line as it is, bytes
and all. Decoded strictly as UTF-8, that message stopped the build with Python's UnicodeDecodeError
instead of building the program; an error on such a line must reach the student as nvcc's own message.
"""
import uuid

import pytest

from cudalab.errors import CompileError
from cudalab.programs import run_program

CHINESE = "结果".encode("gbk")          # "result", as a GBK editor stores it: b'\xbd\xe1\xb9\xfb'

HOST = (b"#include <cstdio>\n"
        b"void run(const char *label);\n"
        b"int main() {\n"
        b"    char *label = \"last\";  // " + CHINESE + b"\n"      # gcc: ISO C++ forbids ... [-Wwrite-strings]
        b"    run(label);\n"
        b"    return 0;\n"
        b"}\n")

DEVICE = (b"#include <cstdio>\n"
          b"__global__ void number(int *p) { p[threadIdx.x] = threadIdx.x; }  // " + CHINESE + b"\n"
          b"void run(const char *label) {\n"
          b"    int *p, h[16];\n"
          b"    cudaMalloc(&p, sizeof h);\n"
          b"    number<<<1, 16>>>(p);\n"
          b"    cudaMemcpy(h, p, sizeof h, cudaMemcpyDeviceToHost);\n"
          b"    printf(\"%s %d\\n\", label, h[15]);\n"
          b"}\n")


def _fresh(source: bytes) -> bytes:
    """The source with a line of its own, so that the build cache cannot answer for nvcc."""
    return source + f"// {uuid.uuid4()}\n".encode()


def test_a_gbk_host_file_whose_line_gcc_warns_about_builds_and_runs(tmp_path):
    (tmp_path / "main.cpp").write_bytes(_fresh(HOST))
    (tmp_path / "number.cu").write_bytes(DEVICE)
    r = run_program([tmp_path / "main.cpp", tmp_path / "number.cu"], timeout=120)
    assert (r.returncode, r.stdout) == (0, "last 15\n")


def test_a_gbk_string_nvcc_rejects_is_told_as_nvccs_error(tmp_path):
    source = DEVICE.replace(b"\"%s %d\\n\"", b"\"" + CHINESE + b" %d\\n\"").replace(b"label, h[15]", b"h[15]")
    (tmp_path / "main.cpp").write_bytes(HOST)
    (tmp_path / "number.cu").write_bytes(_fresh(source))
    with pytest.raises(CompileError, match="invalid multibyte character sequence"):
        run_program([tmp_path / "main.cpp", tmp_path / "number.cu"], timeout=120)
