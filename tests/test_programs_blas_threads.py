"""The process serving a program runs numpy's BLAS on one thread (cudalab/programs/blas_threads.py).

cuBLAS calls are numpy calls in that process; a solver's thousands of cublasDdot calls on 16,384
doubles each woke OpenBLAS's threads, which spun between calls and multiplied the CPU time a
program is charged. These tests run in a fresh interpreter, so the test process's BLAS is untouched.
"""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ASK = textwrap.dedent("""
    import ctypes
    from cudalab.programs.blas_threads import loaded_blas, one_blas_thread
    told = one_blas_thread()
    counts = []
    for path in loaded_blas():
        lib = ctypes.CDLL(path)
        for name in ("openblas_get_num_threads", "openblas_get_num_threads64_", "scipy_openblas_get_num_threads64_",
                     "scipy_openblas_get_num_threads"):
            get = getattr(lib, name, None)
            if get is not None:
                get.restype = ctypes.c_int
                counts.append(get())
    print(told, sorted(set(counts)))
""")


def _ask(**env):
    clean = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                                "MKL_NUM_THREADS")}
    out = subprocess.run([sys.executable, "-c", ASK], capture_output=True, text=True, timeout=120,
                         env=dict(clean, PYTHONPATH=ROOT, **env))
    assert out.returncode == 0, out.stderr
    return out.stdout.split(None, 1)


def _openblas_with_threads():
    from cudalab.programs.blas_threads import loaded_blas
    return any("openblas" in os.path.basename(p).lower() for p in loaded_blas()) and (os.cpu_count() or 1) > 1


@pytest.mark.skipif(not _openblas_with_threads(), reason="numpy's BLAS here is not a threaded OpenBLAS")
def test_the_serving_process_tells_numpys_openblas_to_use_one_thread():
    told, counts = _ask()
    assert told == "True"
    assert counts.strip() == "[1]"


@pytest.mark.skipif(not _openblas_with_threads(), reason="numpy's BLAS here is not a threaded OpenBLAS")
def test_a_thread_count_the_user_set_is_kept():
    told, counts = _ask(OPENBLAS_NUM_THREADS="2")
    assert told == "False"
    assert counts.strip() == "[2]"
