"""A byte count computed in an int that overflowed: cudaMalloc is told what went wrong, not to free memory.

``int size = n * sizeof(float)`` with n near a billion wraps around to a negative int, which cudaMalloc's
size_t parameter reads as some 18 billion billion bytes. A GPU refuses it as out of memory; the student
should read that the size is a negative number, and how to compute it (books round 15: a PMPP reader's
vector sum of 999,999,999 floats).
"""
import textwrap

import pytest

from cudalab.emulator.memory import DeviceMemory
from cudalab.errors import CudaError
from cudalab.programs import run_program


def test_a_negative_size_read_as_size_t_is_named_as_such():
    mem = DeviceMemory(limit=1 << 30)
    wrapped = -294_967_300 + (1 << 64)           # 999,999,999 * 4 in a 32-bit int, as size_t
    with pytest.raises(CudaError, match="out of device memory") as refused:
        mem.alloc(wrapped)
    message = str(refused.value)
    assert "-294,967,300" in message and "32-bit int that overflowed" in message
    assert "(size_t)n * sizeof(float)" in message
    assert "Free arrays" not in message          # the advice for a real shortage would mislead here


def test_a_real_shortage_keeps_its_own_advice():
    mem = DeviceMemory(limit=1 << 30)
    with pytest.raises(CudaError, match="asked for 2,147,483,648 bytes") as refused:
        mem.alloc(2 << 30)
    assert "Free arrays you no longer need" in str(refused.value)
    assert "negative" not in str(refused.value)


def test_a_program_whose_int_size_overflowed_is_told_and_gets_the_gpus_error(tmp_path, monkeypatch):
    (tmp_path / "big.cu").write_text(textwrap.dedent("""\
        #include <cstdio>
        int main() {
            int n = 999999999;
            int size = n * sizeof(float);        // 3,999,999,996 does not fit an int
            float *d = nullptr;
            cudaError_t e = cudaMalloc((void **)&d, size);
            printf("%s\\n", cudaGetErrorName(e));
            return 0;
        }
        """))
    monkeypatch.chdir(tmp_path)
    r = run_program(["big.cu"], capture=True)
    assert (r.returncode, r.stdout) == (0, "cudaErrorMemoryAllocation\n"), r.stderr
    assert "is the negative number -294,967,300 read as an unsigned size_t" in r.stderr
