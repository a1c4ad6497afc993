"""Python kernels in numba.cuda's dialect (cudalab.jit): numba's documentation kernels give numpy's
answers on the emulator, and the very bits numba-cuda got on an H100 (tests/python_kernels/recorded);
errors, the profile and the sanitizers speak of Python lines.

Tests marked ``gpu`` run the same kernels with real numba-cuda next to cudalab's GPU backend and the
emulator (skipped without a GPU)."""
import json
from pathlib import Path

import numpy as np
import pytest
from numba import cuda, float32

import cudalab
from cudalab.errors import CompileError, KernelError, LaunchError
from python_kernels import CASES, case_inputs

RECORDED = Path(__file__).parent / "python_kernels" / "recorded"
gpu = pytest.mark.gpu


def arrays(args):
    return [a for a in args if isinstance(a, np.ndarray)]


def run_case(case, args):
    """Launch a case with cudalab (numpy arrays are copied in and back); returns the LaunchRecord."""
    return cudalab.jit(case.kernel)[case.grid, case.block](*args)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_numba_docs_kernel_gives_numpys_answer(case):
    args = case_inputs(case)
    before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    rec = run_case(case, args)
    assert rec.kernel == case.kernel.__name__ and rec.instructions > 0
    for got, want in zip(arrays(args), case.expect(before)):
        if case.tol:
            np.testing.assert_allclose(got, want, rtol=case.tol, atol=case.tol)
        else:
            np.testing.assert_array_equal(got, want)


def _recorded():
    path = RECORDED / "h100.npz"
    return np.load(path) if path.exists() else None


@pytest.fixture
def h100_profile():
    """numba-cuda on an H100 compiles for compute capability 9.0: so must cudalab, to get its PTX."""
    from cudalab.device import current
    before = current().name
    cudalab.set_device("H100")
    yield
    cudalab.set_device(before)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_bit_exact_against_numba_cuda_on_an_h100(case, h100_profile):
    rec = _recorded()
    if rec is None or f"{case.name}/out0" not in rec:
        pytest.skip("no recording of this case from a GPU (tests/python_kernels/record.py)")
    args = [rec[f"{case.name}/in{k}"] for k in range(len(case_inputs(case)))]
    args = [a if a.ndim else a[()] for a in args]
    fresh = case_inputs(case)
    for a, b in zip(args, fresh):          # the recording was made from these very inputs
        np.testing.assert_array_equal(a, b)
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    run_case(case, args)
    for k, got in enumerate(arrays(args)):
        want = rec[f"{case.name}/out{k}"]
        assert got.tobytes() == want.tobytes(), f"{case.name}: array {k} differs from the H100's"


def test_recording_covers_every_case():
    rec = _recorded()
    if rec is None:
        pytest.skip("no GPU recording yet")
    provenance = json.loads((RECORDED / "provenance.json").read_text())
    assert "H100" in provenance["gpu"]
    assert {c.name for c in CASES} <= {k.split("/")[0] for k in rec.files}


# ------------------------------------------------------------------ launching as numba does

@cudalab.jit
def scale(a, k):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= k


def test_specializes_per_argument_types():
    a32, a64 = np.ones(100, np.float32), np.ones(100)
    scale[1, 128](a32, 3)
    scale[1, 128](a64, 2.5)
    scale[1, 128](a32, 2)        # int64 again: no new compile
    assert (a32 == 6).all() and (a64 == 2.5).all()
    assert len(scale.overloads) == 2


def test_device_arrays_stream_and_dynamic_shared_memory():
    @cudalab.jit
    def reverse(a):
        s = cuda.shared.array(0, float32)       # dynamic shared memory, sized by the launch
        t = cuda.threadIdx.x
        s[t] = a[t]
        cuda.syncthreads()
        a[t] = s[cuda.blockDim.x - 1 - t]

    d = cudalab.to_device(np.arange(64, dtype=np.float32))
    stream = cudalab.stream()
    rec = reverse[1, 64, stream, 64 * 4](d)
    assert rec.shared_bytes == 256
    np.testing.assert_array_equal(d.copy_to_host(), np.arange(64)[::-1])


def test_explicit_signature_compiles_at_once_and_checks_launches():
    k = cudalab.jit("void(float32[:], float32)")(scale.py_func)
    assert len(k.overloads) == 1
    a = np.ones(10, np.float32)
    k[1, 32](a, 4)
    assert (a == 4).all()
    with pytest.raises(LaunchError, match=r"compiled for \(array\(float32, 1d, A\), float32\)"):
        k[1, 32](np.ones(10), 4.0)


def test_device_function_with_cudalab_jit():
    @cudalab.jit(device=True)
    def square(x):
        return x * x

    @cudalab.jit
    def squares(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = square(a[i])

    a = np.arange(10, dtype=np.int64)
    squares[1, 32](a)
    np.testing.assert_array_equal(a, np.arange(10) ** 2)


# ------------------------------------------------------------------ errors in Python terms

def test_bad_index_names_the_python_line():
    @cudalab.jit
    def off_by_one(a):
        i = cuda.grid(1)
        a[i + 1] = 1.0         # the last thread writes past the end

    line = off_by_one.py_func.__code__.co_firstlineno + 3
    with pytest.raises(KernelError, match=rf"(?s)Invalid __global__ write.*at line {line} in kernel off_by_one"
                                          r".*thread \(63,0,0\)"), cudalab.check("memcheck"):
        off_by_one[1, 64](np.zeros(64, np.float32))


def test_typing_error_is_numbas_message_short():
    @cudalab.jit
    def typo(a):
        a[0] = a.sizee

    with pytest.raises(CompileError) as e:
        typo[1, 1](np.zeros(4))
    msg = str(e.value)
    assert "Unknown attribute 'sizee'" in msg and "a[0] = a.sizee" in msg
    assert "During:" not in msg and "Traceback" not in msg and len(msg.splitlines()) < 12


def test_arguments_numba_cannot_pass_are_named():
    with pytest.raises(LaunchError, match="argument 1 of scale: a Python kernel takes numpy arrays"):
        scale[1, 32]([1.0, 2.0], 2)
    with pytest.raises(LaunchError, match="launched as kernel"):
        scale(np.ones(3), 2)


# ------------------------------------------------------------------ the toolbox on Python lines

@cudalab.jit
def neighbours(a, out):
    s = cuda.shared.array(64, float32)
    t = cuda.threadIdx.x
    s[t] = a[t]
    out[t] = s[(t + 1) % 64]       # no syncthreads: reads a value another warp writes


def test_racecheck_names_python_lines():
    first = neighbours.py_func.__code__.co_firstlineno
    with cudalab.check("racecheck"):
        rec = neighbours[1, 64](np.ones(64, np.float32), np.zeros(64, np.float32))
    race = rec.findings[0]
    assert race.kind == "racecheck" and race.details["lines"] == (first + 4, first + 5)   # the decorator is line first


def test_profile_lists_python_source_lines():
    rec = cudalab.profile(neighbours, 1, 64, (np.ones(64, np.float32), np.zeros(64, np.float32)))
    report = rec.reports["profile"]
    text = repr(report)
    assert "s[t] = a[t]" in text and "out[t] = s[(t + 1) % 64]" in text
    rows = {r["line"]: r for r in rec.reports["per_line"]}
    assert rows[neighbours.py_func.__code__.co_firstlineno + 4]["instructions"] > 0


def test_widgets_trace_names_python_parameters():
    from cudalab import widgets
    rec = widgets.trace(neighbours, 1, 64, (np.ones(64, np.float32), np.zeros(64, np.float32)))
    trace = rec.reports["threads"]
    assert {"a", "out"} <= set(trace.arrays)


def test_registers_come_from_ptxas():
    k = neighbours.specialize(np.ones(64, np.float32), np.zeros(64, np.float32))
    assert 0 < k.resources().registers <= 255


# ------------------------------------------------------------------ on a real GPU

def _numba_cuda_run(case, args):
    """Real numba-cuda (its own dispatcher and driver) runs the case; numpy arrays copied back."""
    from numba import cuda as real
    from cudalab.pykernels.compiler import numpy_compat
    numpy_compat()                  # numba-cuda 0.30 on numpy 2.5 (as on the H100 machine)
    real.jit(case.kernel)[case.grid, case.block](*args)
    real.synchronize()


@gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_numba_cuda_and_the_emulator_agree_bit_for_bit(case, h100_profile):
    on_gpu, on_emu = case_inputs(case), case_inputs(case)
    _numba_cuda_run(case, on_gpu)
    run_case(case, on_emu)
    for g, e in zip(arrays(on_gpu), arrays(on_emu)):
        assert g.tobytes() == e.tobytes()


@gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_cudalab_gpu_backend_runs_the_same_ptx(case, h100_profile):
    on_numba, on_cudalab = case_inputs(case), case_inputs(case)
    _numba_cuda_run(case, on_numba)
    cudalab.use("gpu")
    try:
        rec = run_case(case, on_cudalab)
    finally:
        cudalab.use("emu")
    assert rec.backend == "gpu"
    for g, e in zip(arrays(on_numba), arrays(on_cudalab)):
        assert g.tobytes() == e.tobytes()


# ------------------------------------------------------------------ the drop-in for numba.cuda

def test_unmodified_numba_cuda_code_runs_on_cudalab_after_install():
    import cudalab.numba
    from numba.cuda.random import create_xoroshiro128p_states
    cudalab.numba.install()
    try:
        @cuda.jit
        def increment(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] += 1

        d = cuda.to_device(np.arange(10.0))
        assert increment.forall(10)(d) is None                   # numba's launch returns nothing
        cuda.synchronize()
        assert isinstance(d, cudalab.DeviceArray) and cudalab.last_launch().backend == "emu"
        np.testing.assert_array_equal(d.copy_to_host(), np.arange(10.0) + 1)
        assert cuda.device_array(3).dtype == np.float64          # numba's default, not cudalab's
        states = create_xoroshiro128p_states(64, seed=1)          # numba's own code, on cudalab's arrays
        assert isinstance(states, cudalab.DeviceArray) and states.shape == (64,)
        dev = cuda.get_current_device()                           # the selected profile, as programs see it
        assert (dev.MULTIPROCESSOR_COUNT, dev.MAX_THREADS_PER_BLOCK, dev.WARP_SIZE) == (
            cudalab.device_attribute("MultiProcessorCount"), 1024, 32)
    finally:
        cudalab.numba.uninstall()
    assert not cudalab.numba.installed() and cuda.jit is not cudalab.jit


# ------------------------------------------------------------------ notebook 15's puzzles: wrong answers get hints

def test_puzzle_without_a_guard_is_told_to_guard():
    from cudalab.exercise import check

    def guarded_add10(a, out):          # a plain function: the check compiles it
        i = cuda.grid(1)
        out[i] = a[i] + 10

    result = check("15-guards", kernel=guarded_add10)
    assert not result and "if i < out.size" in result.hint and "line" in result.message


def test_puzzle_race_is_told_in_numba_words():
    from cudalab.exercise import check

    def reverse_blocks(a, out):
        s = cuda.shared.array(256, float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        s[t] = a[i]
        out[i] = s[255 - t]               # no cuda.syncthreads(): reads what another warp has not written

    result = check("15-shared", kernel=reverse_blocks)
    assert not result and "racecheck" in result.message
    assert "cuda.syncthreads()" in result.hint and "__syncthreads" not in result.hint


@pytest.mark.parametrize("barrier, message", [
    ("cuda.syncthreads()", r"cuda.syncthreads\(\) at line \d+ .* some threads of block \(0,0,0\); thread \(48,0,0\)"),
    ("cuda.cg.this_grid().sync()", r"grid.sync\(\) at line \d+ .* some threads of the grid; thread \(48,0,0\) of "
                                   r"block \(0,0,0\)"),
])
def test_a_barrier_only_some_threads_reach_is_named(barrier, message):
    # the if splits warp 1 (threads 32-47 reach the barrier, 48-63 do not); whole warps that skip a
    # barrier and end are let through, as on an H100 (test_async.py)
    source = f"""
from numba import cuda
def half(x):
    if cuda.threadIdx.x < 48:
        x[cuda.threadIdx.x] += 1.0
        {barrier}
    x[cuda.threadIdx.x] *= 2.0
"""
    import linecache
    name = f"<half {barrier}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)    # as IPython keeps a cell
    ns = {}
    exec(compile(source, name, "exec"), ns)
    # (a GPU since Volta runs the split warp of __syncthreads(): the emulator warns, synccheck asked for stops)
    with cudalab.check("synccheck"), pytest.raises(KernelError, match=message):
        cudalab.jit(ns["half"])[2, 128](np.zeros(256, np.float32))


def test_3d_arrays_and_grids():
    @cudalab.jit
    def add_index(a):
        x, y, z = cuda.grid(3)
        if x < a.shape[0] and y < a.shape[1] and z < a.shape[2]:
            a[x, y, z] += x * 100 + y * 10 + z

    a = np.zeros((5, 6, 7), np.int64)
    add_index[(1, 2, 2), (8, 4, 4)](a)
    x, y, z = np.indices(a.shape)
    np.testing.assert_array_equal(a, x * 100 + y * 10 + z)


def test_cuda_profile_magic_on_a_python_kernel(capsys):
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "cudalab")
    ip.run_cell("""
import numpy as np, cudalab
from numba import cuda

@cudalab.jit
def double(a):
    i = cuda.grid(1)
    if i < a.size:
        a[i] *= 2
a = np.ones(1000, np.float32)
""").raise_error()
    ip.run_line_magic("cuda_profile", "double[4, 256](a)")
    shown = capsys.readouterr().out
    assert "a[i] *= 2" in shown and (ip.user_ns["a"] == 2).all()


def test_an_array_in_a_real_gpus_memory_is_refused_by_the_emulator():
    class GpuArray:          # what numba's and CuPy's device arrays offer
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (0x7000_0000, False), "version": 3,
                                    "strides": None}
        shape, dtype = (4,), np.dtype(np.float32)

    with pytest.raises(LaunchError, match="argument 1 of scale is an array in a real GPU's memory"):
        scale[1, 32](GpuArray(), 2.0)


def test_device_functions_after_install():
    import cudalab.numba
    cudalab.numba.install()
    try:
        @cuda.jit(device=True)
        def cube(x):
            return x * x * x

        @cuda.jit
        def cubes(a):
            i = cuda.grid(1)
            if i < a.size:
                a[i] = cube(a[i])

        a = np.arange(8, dtype=np.int32)
        cubes[1, 32](a)
        np.testing.assert_array_equal(a, np.arange(8) ** 3)
    finally:
        cudalab.numba.uninstall()


def test_unmodified_script_and_environment_variable(tmp_path):
    import os
    import subprocess
    import sys
    script = tmp_path / "program.py"
    script.write_text("import numpy as np\nfrom numba import cuda\n\n@cuda.jit\ndef inc(a):\n    a[cuda.grid(1)] += 1\n\n"
                      "a = np.zeros(64, np.int32)\ninc[2, 32](a)\nprint(a.sum(), type(inc).__module__)\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    run = subprocess.run([sys.executable, "-m", "cudalab.numba", str(script)], capture_output=True, text=True, env=env)
    assert run.stdout.split() == ["64", "cudalab.pykernels.dispatcher"], run.stderr
    env["CUDALAB_NUMBA"] = "1"
    probe = "import cudalab.pykernels as p, numba.cuda as c; print(c.jit is p.dispatcher.numba_jit)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert run.stdout.strip() == "True", run.stderr


def test_environment_variable_reaches_a_program_that_imports_only_numba(tmp_path):
    """pip puts cudalab-numba.pth into site-packages (setup.py); Python runs its line at start-up, as
    site.addsitedir does here for a folder holding it. With CUDALAB_NUMBA=1 the program's own
    ``from numba import cuda`` gets cudalab's jit; without it, cudalab is not even imported."""
    import os
    import shutil
    import subprocess
    import sys
    root = Path(__file__).parent.parent
    site_packages = tmp_path / "site-packages"
    site_packages.mkdir()
    shutil.copy(root / "cudalab-numba.pth", site_packages)
    program = tmp_path / "program.py"
    program.write_text("import numpy as np\nfrom numba import cuda\n\n@cuda.jit\ndef twice(a):\n"
                       "    a[cuda.grid(1)] *= 2\n\na = np.arange(64, dtype=np.int32)\ntwice[2, 32](a)\n"
                       "print(a.sum(), type(twice).__module__)\n")
    start = f"import runpy, site, sys; site.addsitedir({str(site_packages)!r}); "
    env = dict(os.environ, PYTHONPATH=str(root), CUDALAB_NUMBA="1")
    run = subprocess.run([sys.executable, "-c", start + f"runpy.run_path({str(program)!r}, run_name='__main__')"],
                         capture_output=True, text=True, env=env)
    assert run.stdout.split() == [str(2 * sum(range(64))), "cudalab.pykernels.dispatcher"], run.stderr
    del env["CUDALAB_NUMBA"]
    run = subprocess.run([sys.executable, "-c", start + "print('cudalab' in sys.modules)"],
                         capture_output=True, text=True, env=env)
    assert run.stdout.strip() == "False", run.stderr
