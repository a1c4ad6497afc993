"""tools/pycourses_check.py runs numba.cuda scripts and notebooks as their readers do, and writes the table.

A course's notebook is run the way a student's *Run All* runs it: one cell after the other in one
IPython shell, a failing cell reported and the next one run. The tool must tell a notebook that
fails in one cell from one that passes, say which cell and why, and count what passed per set.
"""
import json
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")     # (with nbval, in the test extra; not on every GPU machine)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import pycourses_check  # noqa: E402

KERNEL = """import numpy as np
from numba import cuda

@cuda.jit
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2

a = cuda.to_device(np.arange(256, dtype=np.float32))
double[2, 128](a)
"""


def course(root: Path) -> Path:
    """A small course of our own: a script that checks its kernel's result, and a notebook whose
    third cell uses a name no cell defines (a student's exercise left blank)."""
    (root / "lesson").mkdir(parents=True)
    (root / "lesson" / "double.py").write_text(KERNEL + "assert (a.copy_to_host() == 2 * np.arange(256)).all()\n")
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_markdown_cell("# Doubling"),
                      nbformat.v4.new_code_cell(KERNEL),
                      nbformat.v4.new_code_cell("%matplotlib inline\n%timeit -n1 -r1 double[2, 128](a)"),   # magics
                      nbformat.v4.new_code_cell("result = a.copy_to_host()\nprint(result[answer])"),
                      nbformat.v4.new_code_cell("print(result.sum())"),
                      # a cell's `!python` is the notebook's own Python (numba installed), as in its kernel
                      nbformat.v4.new_code_cell("import sys\nran = !python -c 'import sys; print(sys.prefix)'\n"
                                                "assert ran[-1] == sys.prefix, ran")]    # (python or python3: one venv)
    nbformat.write(notebook, root / "lesson" / "Doubling (exercise).ipynb")
    return root


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    root = course(tmp_path_factory.mktemp("checkout"))
    out = tmp_path_factory.mktemp("results") / "results.json"
    assert pycourses_check.main(["--checkout", str(root), "--set", "ours", "lesson/*.py", "lesson/*.ipynb",
                                 "--json", str(out), "--timeout", "120"]) == 0
    return json.loads(out.read_text())


def test_a_script_whose_kernel_is_right_passes(results):
    script = results["ours/double"]
    assert (script["status"], script["kind"]) == ("pass", "script")
    assert script["cpu_seconds"] > 0            # the child's CPU time, compiling the kernel included


def test_a_notebook_runs_every_cell_and_names_the_one_that_failed(results):
    notebook = results["ours/Doubling_exercise"]      # the file's name, as a table can show it
    assert (notebook["status"], notebook["kind"]) == ("fail", "notebook")
    assert (notebook["failing_cells"], notebook["cells"]) == (1, 5)      # cells 4-5 ran after cell 3 failed
    assert notebook["detail"] == "failing cells 3; cell 3: NameError: name 'answer' is not defined"


def test_merge_writes_the_column_of_passes_per_set_and_the_table_of_programs(results, tmp_path):
    doc = tmp_path / "programs.md"
    doc.write_text("# Programs\n\n| set | programs | pass before |\n|---|---|---|\n| ours | 2 | 0 |\n| all | 2 | 0 |\n")
    source = tmp_path / "r.json"
    source.write_text(json.dumps(results))
    reasons = tmp_path / "reasons.json"
    reasons.write_text(json.dumps({"ours/Doubling_exercise": "the exercise is left to the student"}))
    pycourses_check.main(["--merge", str(source), "--column", "pass, 7th pass", "--reasons", str(reasons),
                          "--doc", str(doc)])
    text = doc.read_text()
    assert "| set | programs | pass before | pass, 7th pass |" in text
    assert "| ours | 2 | 0 | 1 of 2 |" in text and "| all | 2 | 0 | 1 of 2 run |" in text
    assert "| ours/Doubling_exercise | fail |" in text and "the exercise is left to the student |" in text
    # merged again, the column and the table are rewritten in place, not added twice
    pycourses_check.main(["--merge", str(source), "--column", "pass, 7th pass", "--doc", str(doc)])
    again = doc.read_text()
    assert again.count("pass, 7th pass |") == 1 and again.count("<!-- pycourses_check: pass, 7th pass -->") == 1
    assert "NameError: name 'answer' is not defined" in again      # without --reasons: the run's own error


def test_merge_adds_a_row_for_a_set_the_table_lacks(results, tmp_path):
    doc = tmp_path / "programs.md"
    doc.write_text("| set | programs | pass before |\n|---|---|---|\n| older | 3 | 1 |\n| all | 3 | 1 |\n")
    source = tmp_path / "r.json"
    source.write_text(json.dumps(results))
    pycourses_check.main(["--merge", str(source), "--column", "8th pass", "--doc", str(doc)])
    text = doc.read_text()
    assert "| older | 3 | 1 | - |\n| ours | 2 | - | 1 of 2 |\n| all | 5 | 1 | 1 of 2 run |" in text


def test_a_kernel_too_large_for_a_cpu_is_gpu_sized_not_a_failure():
    out = ("numba_cuda_program.py:9: in <module>\ncudalab.errors.KernelError: The kernel spin was stopped early: "
           "it would run far beyond the 150 s left. It had finished 2 of its 65,536 blocks after 3.1 s. The whole grid "
           "needs about 4.1 trillion thread-instructions: about 2.5 days on the emulator.\n")
    status, detail, _, _ = pycourses_check.judge("script", 1, out, 3.5, 150)
    assert status == "GPU-sized" and "about 2.5 days on the emulator" in detail


def test_a_notebook_whose_first_failure_is_out_of_device_memory_is_gpu_sized():
    out = ("@@pycourses cell 1 runs\n@@pycourses cell 2 runs\nCudaError: cudaErrorMemoryAllocation: out of device memory: "
           "asked for 1,600,000,000 bytes, but the largest allocation that fits is now 1,094,965,760 bytes.\n"
           "@@pycourses cell 2 failed: CudaError: cudaErrorMemoryAllocation: out of device memory: asked for ...\n"
           "@@pycourses cell 3 runs\n@@pycourses cell 3 failed: NameError: name 'd_z' is not defined\n"
           "@@pycourses cells 3\n")
    status, detail, failing, cells = pycourses_check.judge("notebook", 0, out, 30.0, 150)
    assert (status, failing, cells) == ("GPU-sized", 2, 3)      # cell 3 lacks what cell 2 could not make
    assert detail.startswith("failing cells 2, 3; cell 2: CudaError: cudaErrorMemoryAllocation: out of device memory")


def test_a_colab_notebooks_pip_install_is_not_run_and_the_pycuda_stand_in_answers(tmp_path):
    """A Colab notebook starts with ``!pip install pycuda``: the runner installs nothing (the
    environment is what the table judges) and says so; PyCUDA's names are cudalab's stand-in."""
    (tmp_path / "colab").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("!pip install pycuda"),
                      nbformat.v4.new_code_cell("import numpy as np\nimport pycuda.autoinit\nfrom pycuda import gpuarray\n"
                                                "assert (2 * gpuarray.to_gpu(np.arange(3))).get().tolist() == [0, 2, 4]")]
    nbformat.write(notebook, tmp_path / "colab" / "sum.ipynb")
    out, logs = tmp_path / "results.json", tmp_path / "logs"
    assert pycourses_check.main(["--checkout", str(tmp_path / "colab"), "--set", "colab", "*.ipynb",
                                 "--json", str(out), "--logs", str(logs), "--timeout", "120"]) == 0
    assert json.loads(out.read_text())["colab/sum"]["status"] == "pass"
    assert "not run (the runner installs nothing): !pip install pycuda" in (logs / "colab__sum.txt").read_text()


def test_a_failure_is_sorted_into_missing_packages_and_exercise_blanks(tmp_path):
    """A lesson that imports a package not installed here and leaves a line for the student
    (``blocks = # TODO``) fails on a GPU too: the results say so before a person reads the log."""
    (tmp_path / "lesson").mkdir()
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("import a_package_nobody_installed"),
                      nbformat.v4.new_code_cell("threads = 128\nblocks = # TODO: enough blocks for n\n"),
                      nbformat.v4.new_code_cell("print(1 +)")]           # a typo, not a blank
    nbformat.write(notebook, tmp_path / "lesson" / "exercise.ipynb")
    out = tmp_path / "results.json"
    pycourses_check.main(["--checkout", str(tmp_path / "lesson"), "--set", "blanks", "*.ipynb",
                          "--json", str(out), "--timeout", "120"])
    result = json.loads(out.read_text())["blanks/exercise"]
    assert result["status"] == "fail" and result["failing_cells"] == 3
    assert result["cause"] == "package: a_package_nobody_installed; exercise blanks: cell 2"


def test_a_part_of_cupy_or_pycuda_that_is_missing_is_the_stand_ins_not_a_package():
    """A course's ``import cupyx.scipy.linalg`` runs wherever CuPy is installed: when it fails here the
    table must not send the reader to install a package, but say what cudalab's stand-in lacks."""
    out = ("ModuleNotFoundError: No module named 'cupyx.scipy'\n"
           "ImportError: cannot import name 'get_linear_combination_kernel' from 'pycuda.elementwise' "
           "(unknown location)\nModuleNotFoundError: No module named 'skcuda'\n")
    assert pycourses_check.cause("fail", out) == (
        "package: skcuda; stand-in lacks: cupyx.scipy, pycuda.elementwise.get_linear_combination_kernel")
    python2 = "    print 'GPU time', t\nSyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?"
    assert pycourses_check.cause("fail", python2) == "Python 2"
    assert pycourses_check.cause("pass", out) == ""
    assert pycourses_check.gone_api_p17("TypeError: only 0-dimensional arrays can be converted to Python scalars") \
        == ["gone: a one-element array as a Python number (deprecated in numpy 1.25, an error by 2.4)"]


# ---------------------------------------------------------------------------------------- pycourses16
def test_run_from_checkout_runs_a_script_in_the_repositorys_root(tmp_path):
    """A set whose author runs every script from the repository's root (``src/x.py`` opening the
    ``data.json`` that lies at the root) fails in the script's own folder and passes with
    ``--run-from checkout``."""
    root = tmp_path / "course"
    (root / "src").mkdir(parents=True)
    (root / "data.json").write_text("[1, 2, 3]")
    (root / "src" / "reads.py").write_text("import json\nassert json.load(open('data.json')) == [1, 2, 3]\n")
    out = tmp_path / "results.json"
    for where in ("folder", "checkout"):
        pycourses_check.main(["--checkout", str(root), "--set", where, "src/*.py", "--run-from", where,
                              "--json", str(out), "--timeout", "60"])
    results = json.loads(out.read_text())
    assert results["folder/reads"]["status"] == "fail" and "FileNotFoundError" in results["folder/reads"]["detail"]
    assert results["checkout/reads"]["status"] == "pass"
    copy = tmp_path / "w"
    assert pycourses_check.run_folder_p16(copy / "src" / "x.py", copy, "folder") == copy / "src"


# pycourses17
def test_a_name_todays_python_or_numpy_removed_is_sorted_as_gone():
    out = ("Traceback (most recent call last):\n  File \"x.py\", line 3\nAttributeError: module 'time' has no "
           "attribute 'clock'\n")
    assert pycourses_check.cause("fail", out) == "gone: time.clock (Python 3.8)"
    out = ("AttributeError: module 'numpy' has no attribute 'float'.\n"
           "ImportError: cannot import name 'imread' from 'scipy.misc' (/usr/lib/scipy/misc/__init__.py)\n")
    assert pycourses_check.gone_api_p17(out) == ["gone: np.float (numpy 1.24)", "gone: scipy.misc.imread (SciPy 1.2-1.3)"]
    assert pycourses_check.cause("pass", out) == ""
    assert pycourses_check.gone_api_p17("TypeError: only 0-dimensional arrays can be converted to Python scalars") \
        == ["gone: a one-element array as a Python number (deprecated in numpy 1.25, an error by 2.4)"]


# pycourses18
def test_a_notebook_out_of_time_says_which_cell_was_running():
    out = "@@pycourses cell 1 runs\n@@pycourses cell 2 runs\nTypeError: x\n@@pycourses cell 2 failed: TypeError: x\n" \
          "@@pycourses cell 3 runs\n"
    assert pycourses_check.running_cell_p18(out) == ", in cell 3"
    assert pycourses_check.judge("notebook", -9, out, 151.0, 150) == \
        ("time", "still running after 150 s of CPU, in cell 3", 0, 0)
    assert pycourses_check.judge("script", -9, "counting...\n", 151.0, 150)[1] == "still running after 150 s of CPU"


def test_an_import_of_a_removed_name_is_sorted_as_gone_too():
    out = "ImportError: cannot import name 'clock' from 'time' (unknown location)\n"
    assert pycourses_check.gone_api_p18(out) == ["gone: time.clock (Python 3.8)"]
    assert pycourses_check.cause("fail", out) == "gone: time.clock (Python 3.8)"
