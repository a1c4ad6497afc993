"""A wrong numba.cuda program, run unchanged, is told what is wrong in a few lines that name its own
Python line, as numba's simulator would, not under numba's and cudalab's thirty frames."""
import os
import subprocess
import sys
import traceback
from pathlib import Path

import numpy as np
import pytest

import cudalab.numba
from cudalab.errors import CompileError, KernelError, LaunchError


@pytest.fixture
def cuda():
    cudalab.numba.install()
    from numba import cuda
    yield cuda
    cudalab.numba.uninstall()


def _files_in_traceback(e):
    return [os.path.basename(f.filename) for f in traceback.extract_tb(e.__traceback__)]


def test_a_read_past_the_end_quotes_the_kernels_line_and_stops_at_the_launch(cuda):
    @cuda.jit
    def add(a, b, out):                     # no `if i < out.size`: 28 threads too many
        i = cuda.grid(1)
        out[i] = a[i] + b[i]

    a = np.ones(100, np.float32)
    # (just past the end a GPU reads on, and cudalab warns; memcheck stops there, as compute-sanitizer does)
    with pytest.raises(KernelError, match=r"at line \d+ in kernel add:  out\[i\] = a\[i\] \+ b\[i\]\n"
                                          r"    by thread \(100,0,0\)") as caught, cudalab.check("memcheck"):
        add[1, 128](a, a, np.zeros_like(a))
    # the test's own frame and the launch that re-raised: no emulator, runtime or numba frames
    assert _files_in_traceback(caught.value) == ["test_numba_errors.py", "dispatcher.py"]


def test_an_array_deleted_after_a_failed_launch_is_freed_although_the_error_is_kept(cuda):
    """A notebook keeps the last error (IPython's sys.last_value) and goes on: a later cell that
    deletes the arrays the failed launch was given must get their memory back, as it does after a
    launch that worked. The error's frames of the runtime held them."""
    import gc
    import weakref

    @cuda.jit
    def scatter(a):
        a[cuda.grid(1) * 100_000_000] = 1       # far past the end: the launch fails

    d = cuda.to_device(np.zeros(1 << 20, np.float32))
    alive = weakref.ref(d)
    with pytest.raises(KernelError) as caught:
        scatter[1, 32](d)
    kept = caught.value                         # what the notebook keeps
    del d
    gc.collect()
    assert alive() is None
    assert "scatter" in str(kept) and _files_in_traceback(kept)[-1] == "dispatcher.py"


def test_a_launch_with_too_few_arguments_names_the_kernels_parameters(cuda):
    @cuda.jit
    def scale(x, factor, out):
        out[0] = x[0] * factor

    with pytest.raises(LaunchError, match=r"scale\(x, factor, out\) takes 3 arguments, but the launch passes 2"):
        scale[1, 1](np.ones(1), 2.0)
    assert not scale.overloads                      # said before numba was asked to compile anything
    with pytest.raises(TypeError):                  # numba says TypeError: a program may catch that
        scale[1, 1](np.ones(1))


def test_an_undefined_name_in_a_kernel_names_its_line(cuda):
    @cuda.jit
    def uses_a_typo(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = i * scale_factr              # noqa: F821 (the typo is the test)

    with pytest.raises(CompileError, match=r"name 'scale_factr' is not defined\n\n"
                                           r"In test_numba_errors.py, line \d+:\n\s+a\[i\] = i \* scale_factr"):
        uses_a_typo[1, 32](np.zeros(32))


def test_a_script_s_traceback_starts_at_the_script(tmp_path):
    (tmp_path / "program.py").write_text(
        "import numpy as np\nfrom numba import cuda\n\n@cuda.jit\ndef k(a):\n    a[cuda.grid(1) << 27] = 1\n\n"
        "k[2, 32](np.zeros(48))\n")         # 1 GiB apart: far from any allocation, a fault on a GPU too
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    run = subprocess.run([sys.executable, "-m", "cudalab.numba", str(tmp_path / "program.py")], capture_output=True,
                         text=True, env=env)
    assert run.returncode == 1
    lines = run.stderr.splitlines()
    lines = lines[lines.index("Traceback (most recent call last):"):]     # after numba's performance warnings
    assert lines[:3] == ["Traceback (most recent call last):",
                         f'  File "{tmp_path / "program.py"}", line 8, in <module>', "    k[2, 32](np.zeros(48))"]
    assert "runpy" not in run.stderr and "at line 6 in kernel k:  a[cuda.grid(1) << 27] = 1" in run.stderr


def test_a_python_list_argument_is_refused_with_the_fix(cuda):
    @cuda.jit
    def first(a):
        a[0] = 1

    with pytest.raises(LaunchError, match=r"argument 1 of first: .* not list\. Make it a numpy array first"):
        first[1, 1]([0, 0, 0])


def test_an_array_of_python_objects_is_refused_at_the_launch(cuda):
    @cuda.jit
    def first(a):
        a[0] = 1

    with pytest.raises(LaunchError, match=r"argument 1 of first is a numpy array of Python objects \(dtype=object\)"):
        first[1, 1](np.array([1, "two"], dtype=object))


@pytest.mark.parametrize("call, instead", [("np.sqrt(a[i])", "Use math.sqrt instead"),
                                           ("np.abs(a[i])", r"Write abs\(x\) instead")])
def test_a_numpy_function_numba_cuda_cannot_lower_names_the_math_one(cuda, tmp_path, call, instead):
    # numba-cuda types np.sqrt in a kernel, then fails while lowering it with a bare KeyError
    source = tmp_path / "kernel.py"
    source.write_text("import numpy as np\nfrom numba import cuda\n\n@cuda.jit\ndef root(a, out):\n"
                      f"    i = cuda.grid(1)\n    out[i] = {call}\n")
    namespace = {}
    exec(compile(source.read_text(), str(source), "exec"), namespace)
    a = np.arange(4.0)
    with pytest.raises(CompileError, match=instead) as caught:
        namespace["root"][1, 4](a, np.zeros_like(a))
    assert str(caught.value).endswith(f"In kernel.py, line 7:\n    out[i] = {call}")


@pytest.mark.parametrize("config, error, words", [
    ((1000 / 256, 256), TypeError, r"griddim must be a sequence of integers, got \[3.90625\]. n / 256 is a float"),
    ((4, 256.0), TypeError, r"blockdim must be a sequence of integers, got \[256.0\]"),
    (((1, 2, 3, 4), 32), ValueError, r"griddim must be a sequence of 1, 2 or 3 integers, got \[1, 2, 3, 4\]"),
])
def test_a_bad_launch_shape_is_numbas_error_at_the_brackets(cuda, config, error, words):
    @cuda.jit
    def fill(a):
        a[cuda.grid(1)] = 1

    with pytest.raises(error, match=words) as caught:
        fill[config]
    assert isinstance(caught.value, LaunchError)


def test_a_kernel_called_without_a_launch_shape_is_numbas_value_error(cuda):
    @cuda.jit("void(float64[:])")
    def fill(a):
        a[cuda.grid(1)] = 1

    with pytest.raises(ValueError, match=r"launch configuration was not specified.*fill\[grid, block\]\(\.\.\.\)"):
        fill(np.zeros(4))


def test_a_debug_kernel_reports_the_exception_a_thread_raised_as_numba_does(cuda):
    # numba-cuda 0.30.4 on an H200 gave these messages word for word (file and line aside)
    @cuda.jit(debug=True, opt=False)
    def checked(a, divisor):
        i = cuda.grid(1)
        if i >= 40:                 # (an assert works too; pytest rewrites the asserts of this file)
            raise IndexError("past the data")
        a[i] = 1.0 / divisor[0]

    a = np.zeros(64)
    checked[1, 32](a, np.ones(1))                    # no thread raises: it runs as without debug
    assert a[:32].sum() == 32
    with pytest.raises(IndexError, match=r"In function 'checked', file .*test_numba_errors.py, line \d+, "
                                         r"tid=\[0, 0, 8\] ctaid=\[0, 0, 1\]: past the data") as caught:
        checked[2, 32](a, np.ones(1))
    assert _files_in_traceback(caught.value) == ["test_numba_errors.py", "dispatcher.py"]
    with pytest.raises(ZeroDivisionError, match=r"tid=\[0, 0, \d+\] ctaid=\[0, 0, 0\]: division by zero"):
        checked[1, 32](a, np.zeros(1))

    @cuda.jit
    def unchecked(a, divisor):                         # without debug a GPU goes on: inf, no exception
        a[cuda.grid(1)] = 1.0 / divisor[0]

    unchecked[1, 32](a, np.zeros(1))
    assert np.isinf(a[:32]).all()


@pytest.mark.parametrize("body, hint", [
    ("s = cuda.shared.array(n, float32)\n    s[0] = n\n    a[0] = s[0]",
     r"cuda.shared.array needs a shape numba knows .* use dynamic shared memory: cuda.shared.array\(0, float32\)"),
    ("s = cuda.local.array(n, float32)\n    s[0] = n\n    a[0] = s[0]", r"cuda.local.array needs a shape numba knows"),
    ("t = [n, n]\n    a[0] = t[0]", r"cannot make new arrays, lists or strings .* cuda.local.array\(n, dtype\)"),
    ('print(f"n is {n}")', r"print\(\) in a kernel takes constant strings and numbers separated by commas"),
    ('print("n is " + str(a[0]))', r"cannot build strings: print\(\) .* f-strings, str\(\) and string \+ number"),
])
def test_a_common_typing_error_ends_with_what_to_write_instead(cuda, body, hint):
    from numba import float32
    ns = {"cuda": cuda, "float32": float32}
    exec(f"def kernel(a, n):\n    {body}\n", ns)
    with pytest.raises(CompileError, match=hint):
        cuda.jit(ns["kernel"])[1, 1](np.zeros(1, np.float32), 4)


def test_a_breakpoint_without_a_debugger_fails_the_launch_and_says_so(cuda):
    # numba compiles breakpoint() to PTX brkpt; an H200 with no debugger attached ends the launch
    # with CUDA_ERROR_LAUNCH_FAILED (numba-cuda's own debugging example, measured)
    @cuda.jit(debug=True, opt=False)
    def pause(out):
        i = cuda.grid(1)
        out[i] = i
        breakpoint()
        out[i] = -1

    out = cuda.device_array(8, np.int64)
    with pytest.raises(KernelError, match=r"cudaErrorLaunchFailure: a breakpoint \(brkpt: breakpoint\(\) in Python, "
                                          r"__brkpt\(\) in C\+\+\) was reached, with no debugger attached, at line "
                                          r"\d+ in kernel pause:  breakpoint\(\)"):
        pause[1, 8](out)


def test_numbapros_argtypes_keyword_is_numbas_deprecation_error(cuda):
    """Lessons written for NumbaPro declare ``cuda.jit(argtypes=[f8, f8], restype=u4, device=True)``;
    numba refuses the keywords with its DeprecationError (the signature is the first argument now),
    and so does the drop-in, rather than calling them options cudalab lacks."""
    from numba import float64, uint32
    from numba.core.errors import DeprecationError
    with pytest.raises(DeprecationError, match=r"Deprecated keyword argument `argtypes`.*cuda\.jit\('u4\(f8, f8\)'\)"):
        cuda.jit(argtypes=[float64, float64], restype=uint32, device=True)(lambda x, y: 0)
    with pytest.raises(DeprecationError, match="`restype`"):
        cuda.jit(restype=uint32)(lambda x: 0)
