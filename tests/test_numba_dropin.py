"""numba.cuda programs written for a GPU run unchanged after cudalab.numba.install(): what they do with
device arrays on the host (slices, element reads, views passed to kernels), numba's host API
(mapped memory, streams, events, the device), explicit signatures, foreign CUDA C++ functions and the
kernel attributes numba's documentation reads."""
import numpy as np
import pytest

import cudalab.numba


@pytest.fixture
def cuda():
    cudalab.numba.install()
    from numba import cuda
    yield cuda
    cudalab.numba.uninstall()


def test_slices_are_views_that_kernels_write_through(cuda):
    @cuda.jit
    def add_100(x):
        i, j = cuda.grid(2)
        if i < x.shape[0] and j < x.shape[1]:
            x[i, j] += 100

    d = cuda.to_device(np.arange(12.0).reshape(3, 4))
    add_100[(1, 1), (8, 8)](d[1:, ::2])           # rows 1-2, columns 0 and 2
    expected = np.arange(12.0).reshape(3, 4)
    expected[1:, ::2] += 100
    np.testing.assert_array_equal(d.copy_to_host(), expected)
    assert d[2, 2] == 110.0 and d[-1, -1] == 11.0
    np.testing.assert_array_equal(d[:, 1].copy_to_host(), [1.0, 5.0, 9.0])
    np.testing.assert_array_equal(d.T.copy_to_host(), expected.T)
    assert list(d.reshape(12)[:3]) == [0.0, 1.0, 2.0]


def test_host_writes_into_a_slice_and_device_to_device_copies(cuda):
    d = cuda.to_device(np.zeros((2, 3), np.int32))
    d[0, :] = 7
    d[1, 1:] = np.array([8, 9])
    other = cuda.device_array(6, np.int32)
    other.copy_to_device(d.reshape(6))
    np.testing.assert_array_equal(other.copy_to_host(), [7, 7, 7, 0, 8, 9])
    with pytest.raises(IndexError, match="out of bounds"):
        d[2, 0]


def test_numbas_own_reduce_runs_on_slices_of_device_arrays(cuda):
    total = cuda.reduce(lambda a, b: a + b)
    assert total(np.arange(1000, dtype=np.float64)) == 499500.0
    assert total(cuda.to_device(np.arange(300, dtype=np.int64)), size=200) == 19900


def test_a_tuple_signature_and_a_raw_pointer_argument(cuda):
    from numba.cuda import int32, types

    @cuda.jit((int32[:, ::1],))
    def fill(m):
        i, j = cuda.grid(2)
        if i < m.shape[0] and j < m.shape[1]:
            m[i, j] = i * 10 + j

    m = np.zeros((3, 4), np.int32)
    fill[(1, 1), (4, 4)](m)
    np.testing.assert_array_equal(m, np.add.outer(np.arange(3) * 10, np.arange(4)))

    @cuda.jit(types.void(types.CPointer(types.uint8), types.uint32))
    def add_one(x, n):
        i = cuda.grid(1)
        if i < n:
            x[i] += 1

    x = cuda.to_device(np.arange(10, dtype=np.uint8))
    add_one[1, 32](x.__cuda_array_interface__["data"][0], len(x))
    np.testing.assert_array_equal(x.copy_to_host(), np.arange(1, 11))


def test_a_kernel_reads_a_global_device_array_by_pointer(cuda):
    prices = cuda.to_device(np.array([10.0, 25.0], np.float32))

    @cuda.jit
    def totals(q, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = q[i] * prices[i]

    out = np.zeros(2, np.float32)
    prices.copy_to_device(np.array([20.0, 50.0], np.float32))      # the kernel sees what is there at launch
    totals[1, 32](np.ones(2, np.float32), out)
    np.testing.assert_array_equal(out, [20.0, 50.0])


def test_a_foreign_cuda_cpp_function_is_linked(cuda, tmp_path):
    cu = tmp_path / "mul.cu"
    cu.write_text('extern "C" __device__ int mul(float *ret, float x, float y) { *ret = x * y; return 0; }\n')
    mul = cuda.declare_device("mul", "float32(float32, float32)", link=str(cu))

    @cuda.jit
    def multiply(r, x, y):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = mul(x[i], y[i])

    x, y, r = np.arange(8, dtype=np.float32), np.full(8, 1.5, np.float32), np.zeros(8, np.float32)
    multiply[1, 32](r, x, y)
    np.testing.assert_array_equal(r, x * y)


def test_kernel_attributes_numbas_documentation_reads(cuda):
    from numba.cuda import float32

    @cuda.jit((float32[::1],))
    def scale(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    sig = (float32[::1],)
    assert scale.overloads[sig].max_cooperative_grid_blocks(32) == 32 * cuda.get_current_device().MULTIPROCESSOR_COUNT
    assert ".entry" in scale.inspect_asm(sig)
    # one signature makes numba's kernel 'specialized': its questions need no signature
    assert scale.specialized and 0 < scale.get_regs_per_thread() <= 255
    assert scale.get_regs_per_thread() == scale.get_regs_per_thread(sig)
    assert list(scale.inspect_asm()) == [sig]           # numba's inspect_* answer per signature even then


def test_a_list_of_signatures_answers_per_signature_and_specialize_gives_one(cuda):
    from numba.cuda import float32, float64

    @cuda.jit([(float32[::1],), (float64[::1],)])
    def scale(a):
        sm = cuda.shared.array(64, float32)
        sm[cuda.threadIdx.x] = cuda.threadIdx.x
        cuda.syncthreads()
        a[cuda.grid(1)] *= sm[cuda.blockDim.x - 1 - cuda.threadIdx.x]

    assert not scale.specialized
    shared = scale.get_shared_mem_per_block()
    assert shared == {(float32[::1],): 256, (float64[::1],): 256}
    one = scale.specialize(np.ones(4, np.float64))
    assert one.specialized and one.get_shared_mem_per_block() == 256
    a = np.ones(4)
    one[1, 4](a)
    assert a.tolist() == [3.0, 2.0, 1.0, 0.0]


def test_mapped_memory_streams_events_and_argument_hints(cuda):
    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= 2

    a = cuda.mapped_array(64, np.float32)
    a[:] = 1
    s = cuda.stream()
    start, end = cuda.event(), cuda.event()
    with s.auto_synchronize():
        start.record(s)
        double[1, 64, s](a)
        double[1, 64, s](cuda.InOut(a))
        end.record(s)
    np.testing.assert_array_equal(a, 4)
    assert cuda.event_elapsed_time(start, end) > 0
    free, total = cuda.current_context().get_memory_info()
    assert 0 < free <= total
    assert cuda.detect() is True


def test_memory_info_reads_by_index_by_name_and_shrinks_by_what_an_array_takes(cuda):
    """numba's get_memory_info() is a named tuple: a lesson prints ``ctx.get_memory_info()[0]`` before
    and after an allocation to show the device filling up."""
    import gc
    gc.collect()
    warm = cuda.device_array(1)     # an allocation frees what earlier tests dropped, so it is not counted below
    ctx = cuda.current_context()
    before = ctx.get_memory_info()
    d = cuda.device_array(1 << 20, np.float32)
    after = ctx.get_memory_info()
    assert before[0] - after[0] >= 4 << 20 and after.free == after[0] and after[1] == after.total == before.total
    del d, warm


def test_stream_callbacks_run_on_a_thread_of_the_runtimes_and_async_done_awaits_them(cuda):
    import asyncio
    import threading
    s = cuda.stream()
    seen = []
    s.add_callback(lambda stream, status, arg: seen.append(
        (stream is s, status, arg, threading.current_thread() is threading.main_thread())), "tag")
    assert seen == [(True, 0, "tag", False)]

    async def until_done():
        return await s.async_done()
    assert asyncio.run(until_done()) == (s, 0)


def test_uninstall_gives_numba_its_functions_back():
    from numba import cuda
    own = cuda.to_device, cuda.mapped_array
    cudalab.numba.install()
    assert cuda.to_device is not own[0]
    cudalab.numba.uninstall()
    assert (cuda.to_device, cuda.mapped_array) == own


def test_cuda_ufuncs_from_vectorize_and_guvectorize(cuda):
    from numba import guvectorize, vectorize

    @vectorize(["float32(float32, float32)", "float64(float64, float64)"], target="cuda")
    def hypot2(x, y):
        return x * x + y * y

    a = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(hypot2(a, a), 2 * a * a)
    d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(hypot2(d, 1.0).copy_to_host(), np.arange(6.0).reshape(2, 3) ** 2 + 1)

    @vectorize(["int64(int64, int64)"], target="cuda")
    def add(x, y):
        return x + y

    assert add.reduce(np.arange(101, dtype=np.int64)) == 5050        # numba halves the array on the device

    @guvectorize(["void(float32[:], float32, float32[:])"], "(n),()->(n)", target="cuda")
    def scale(x, s, out):
        for i in range(x.shape[0]):
            out[i] = x[i] * s

    m = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(scale(m, np.float32(2)), 2 * m)


def test_device_function_with_a_signature_compiles_without_a_gpu(cuda):
    @cuda.jit("float32(float32, float32)", device=True)
    def mul(x, y):
        return x * y

    @cuda.jit
    def double(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] = mul(a[i], 2)

    a = np.arange(4, dtype=np.float32)
    double[1, 32](a)
    np.testing.assert_array_equal(a, [0, 2, 4, 6])
    assert ".target sm_80" in mul.inspect_asm(mul.signatures[0])     # numba's own device function, no driver asked


def test_inspect_types_and_llvm_show_numbas_typing(cuda):
    import io

    @cuda.jit
    def add_two(a):
        i = cuda.grid(1)
        if i < a.size:
            a[i] += 2.0

    add_two[1, 32](np.zeros(4, np.float32))
    shown = io.StringIO()
    add_two.inspect_types(file=shown)
    assert "a[i] += 2.0" in shown.getvalue() and ":: float64" in shown.getvalue()
    (llvm,) = add_two.inspect_llvm().values()
    assert 'target triple = "nvptx64-nvidia-cuda"' in llvm


def test_a_script_imports_the_modules_next_to_it(tmp_path):
    import os
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "helpers.py").write_text("SIZE = 48\n")
    (tmp_path / "program.py").write_text(
        "import numpy as np\nfrom numba import cuda\nfrom helpers import SIZE\n\n@cuda.jit\ndef one(a):\n"
        "    i = cuda.grid(1)\n    if i < a.size:\n        a[i] = 1\n\na = np.zeros(SIZE, np.int32)\n"
        "one.forall(SIZE)(a)\nprint(a.sum())\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    run = subprocess.run([sys.executable, "-m", "cudalab.numba", str(tmp_path / "program.py")], capture_output=True,
                         text=True, env=env, cwd=Path(__file__).parent)
    assert run.stdout.split() == ["48"], run.stderr


def test_an_import_inside_a_kernel_is_numbas_short_message(cuda):
    from cudalab.errors import CompileError

    @cuda.jit
    def debug_me(a):
        from pdb import set_trace           # works only in numba's simulator
        set_trace()
        a[0] = 1

    with pytest.raises(CompileError, match=r"unsupported opcode \(IMPORT_NAME\) found\.\n\n"
                                           r"In test_numba_dropin\.py, line \d+:\n\s+from pdb import set_trace"):
        debug_me[1, 1](np.zeros(1))


def test_a_0d_array_is_a_result_the_kernel_writes(cuda):
    @cuda.jit
    def total(r, x):
        s = 0.0
        for i in range(x.size):
            s += x[i]
        r[()] = s

    r = np.ndarray((), dtype=np.float32)             # as numba's documentation passes a result
    total[1, 1](r, np.arange(10, dtype=np.float32))
    assert r[()] == 45.0
    d = cuda.to_device(np.float64(0.0))
    total[1, 1](d, np.arange(4, dtype=np.float32))
    assert d[()] == 6.0


def test_a_fortran_ordered_host_array_keeps_its_order(cuda):
    @cuda.jit("void(int32[::1, :])")                 # numba's type for np.asfortranarray
    def fill(a):
        i, j = cuda.grid(2)
        if i < a.shape[0] and j < a.shape[1]:
            a[i, j] = i * 10 + j + 100 * a.strides[1]

    a = np.asfortranarray(np.zeros((3, 4), np.int32))
    fill[(1, 1), (4, 4)](a)
    np.testing.assert_array_equal(a, np.add.outer(np.arange(3) * 10, np.arange(4)) + 1200)   # stride 3 * 4 bytes


def test_a_typing_error_is_still_numbas_typing_error(cuda):
    from numba.core.errors import TypingError

    from cudalab.errors import CompileError

    def grid_of_a_variable(n):
        cuda.grid(n)

    with pytest.raises(TypingError, match="RequireLiteralValue") as caught:
        cuda.jit("void(int32)")(grid_of_a_variable)
    assert isinstance(caught.value, CompileError)
    assert "RequireLiteralValue" in caught.value.msg         # numba's own words, where numba keeps them


def test_transpose_is_a_new_array_as_in_numba(cuda):
    d = cuda.to_device(np.arange(6.0).reshape(2, 3))
    t = d.T
    assert t.shape == (3, 2) and t.is_c_contiguous()
    t[0, 1] = 100.0                                   # numba's transpose copies: d keeps its values
    assert d[1, 0] == 3.0 and t[0, 1] == 100.0


def test_array_like_follows_numbas_layout_rule(cuda):
    view = cuda.device_array((10, 12), order="F")[::2, ::2]
    like = cuda.device_array_like(view)
    assert like.strides == np.zeros((10, 12), order="F")[::2, ::2].copy(order="K").strides
    assert cuda.pinned_array_like(np.zeros((4, 5), order="F")).flags.f_contiguous


def test_reshape_inside_a_kernel_links_numbas_helper(cuda):
    @cuda.jit
    def rows(a, out):
        b = a.reshape((2, 3))
        out[0] = b[1, 2]

    out = np.zeros(1)
    rows[1, 1](np.arange(6.0), out)
    assert out[0] == 5.0


def test_a_record_argument_is_passed_by_address_and_written_back(cuda):
    rec = np.dtype([("a", np.float64), ("b", np.int32)])
    table = np.zeros(3, rec)
    table["a"] = [1.5, 2.5, 3.5]

    @cuda.jit
    def double_a(r, out):
        out[0] = r.a * 2
        r.b = 7

    out = np.zeros(1)
    double_a[1, 1](table[1], out)
    assert out[0] == 5.0 and table["b"].tolist() == [0, 7, 0]


def test_install_gives_kernels_a_minute_and_uninstall_gives_the_notebook_limit_back():
    from cudalab.runtime import device
    before = device.WATCHDOG_SECONDS
    cudalab.numba.install()
    try:
        assert device.WATCHDOG_SECONDS == 60          # doc examples at their size fit; a `while True` still stops
    finally:
        cudalab.numba.uninstall()
    assert device.WATCHDOG_SECONDS == before


def test_profiling_region_context_and_pending_frees_need_no_driver(cuda):
    @cuda.require_context
    def make():
        return cuda.to_device(np.arange(4, dtype=np.int32))

    with cuda.profiling():
        d = make()
    cuda.current_context().deallocations.clear()
    with cuda.current_context().deallocations.disable():
        assert len(cuda.current_context().deallocations) == 0
    np.testing.assert_array_equal(d.copy_to_host(), [0, 1, 2, 3])


def test_inspect_sass_disassembles_the_cubin_ptxas_builds(cuda, monkeypatch):
    import numba.cuda.codegen as codegen
    from cuda import pathfinder

    @cuda.jit
    def double(a):
        a[cuda.grid(1)] *= 2

    double[1, 32](np.zeros(32, np.float32))
    seen = []
    monkeypatch.setattr(codegen, "run_nvdisasm", lambda cubin, flags: seen.append((cubin.code[:4], flags)) or "SASS")
    assert list(double.inspect_sass().values()) == ["SASS"]
    assert seen == [(b"\x7fELF", ["-gi"])]         # a cubin, with line info asked for, as numba asks
    monkeypatch.undo()
    monkeypatch.setattr(pathfinder, "find_nvidia_binary_utility", lambda name: None)
    with pytest.raises(RuntimeError, match="nvdisasm was not found"):
        double.inspect_sass()


@pytest.mark.parametrize("profile, target", [("A100", "sm_80"), ("H100", "sm_90")])
def test_compile_ptx_without_cc_targets_the_selected_profile(cuda, profile, target):
    def store_one(a):
        a[0] = 1

    previous = cudalab.device.current().name
    cudalab.set_device(profile)
    try:
        ptx, _ = cuda.compile_ptx(store_one, "void(float32[:])")
        code, _ = cuda.compile(store_one, "void(float32[:])", device=True)
        assert f".target {target}" in ptx and f".target {target}" in code
        assert ".target sm_75" in cuda.compile_ptx(store_one, "void(float32[:])", cc=(7, 5))[0]
        from numba.cuda.compiler import compile_ptx, compile_ptx_for_current_device     # numba's tests do so
        assert f".target {target}" in compile_ptx_for_current_device(store_one, "void(float32[:])")[0]
        assert f".target {target}" in compile_ptx(store_one, "void(float32[:])")[0]       # sm_90a on an H100
    finally:
        cudalab.set_device(previous)


def test_an_ipc_handle_is_refused_with_the_reason(cuda):
    d = cuda.to_device(np.arange(4))
    with pytest.raises(cudalab.UnsupportedError, match="another process .*real GPU"):
        d.get_ipc_handle()


def test_a_kernel_of_one_signature_reads_an_array_of_the_same_element_size_bit_for_bit(cuda):
    from cudalab.errors import LaunchError

    @cuda.jit("void(uint32[:])")            # numba launches its one signature with what it gets
    def ballot(out):
        out[cuda.threadIdx.x] = cuda.ballot_sync(0xFFFFFFFF, cuda.threadIdx.x % 2 == 1)

    out = np.zeros(32, np.int32)
    ballot[1, 32](out)
    assert (out == np.int32(np.uint32(0xAAAAAAAA).view(np.int32))).all()
    with pytest.raises(LaunchError, match=r"No matching definition for argument type\(s\) array\(float64, 1d, C\): "
                                          r"ballot was compiled for \(array\(uint32, 1d, A\)\)"):
        ballot[1, 32](np.zeros(32))


def add_kernel(r, x, y):
    r[0] = x + y


@pytest.mark.parametrize("x, y, picked", [(1, 2, "int64"), (1, 2.5, "float64"), (np.float32(1), np.float32(2), "float32")])
def test_several_signatures_pick_the_one_numba_picks(cuda, x, y, picked):
    add = cuda.jit(["void(float64[::1], float64, float64)", "void(float64[::1], int64, int64)",
                    "void(float64[::1], float32, float32)"])(add_kernel)
    r = np.zeros(1)
    add[1, 1](r, x, y)
    assert r[0] == x + y
    assert [str(t) for t in add.specialize(r, x, y).argtypes[1:]] == [picked, picked]


def test_a_tie_between_signatures_and_a_complex_for_an_int_are_numbas_type_errors(cuda):
    tied = cuda.jit(["(float64[::1], float32, float64)", "(float64[::1], float64, float32)"])(add_kernel)
    with pytest.raises(TypeError, match=r"Ambiguous overloading for <function add_kernel"):
        tied[1, 1](np.zeros(1), 1.0, 2.0)
    ints = cuda.jit("(int32[::1], int32, int32)")(add_kernel)
    with pytest.raises(TypeError, match="No matching definition for argument type"):
        ints[1, 1](np.zeros(1, np.int32), 12.3, 45.6j)


def test_numba_typeof_a_device_array_is_its_kernel_type(cuda):
    import numba
    d = cuda.to_device(np.zeros((3, 4), np.float32))
    assert str(numba.typeof(d)) == "array(float32, 2d, C)"
    assert str(numba.typeof(d[:, ::2])) == "array(float32, 2d, A)"


def test_inspect_sass_with_nvdisasm_shows_the_add(cuda):
    from cuda import pathfinder
    if pathfinder.find_nvidia_binary_utility("nvdisasm") is None:
        pytest.skip("nvdisasm is not installed (pip install cudalab[sass])")

    @cuda.jit
    def add(r, x):
        i = cuda.grid(1)
        if i < r.size:
            r[i] = x[i] + 2.5

    add[1, 32](np.zeros(8, np.float32), np.ones(8, np.float32))
    sass = list(add.inspect_sass().values())[0]
    assert ".target\tsm_80" in sass and "FADD" in sass      # the A100 profile's cubin, the float add


def test_launch_bounds_reach_the_ptx_and_refuse_bigger_blocks(cuda):
    @cuda.jit(launch_bounds=(128, 2))
    def fill(a):
        a[cuda.grid(1)] = 1

    a = np.zeros(256)
    fill[2, 128](a)
    assert a.sum() == 256
    ptx = fill.inspect_asm(fill.signatures[0])
    assert ".maxntid 128" in ptx and ".minnctapersm 2" in ptx
    with pytest.raises(cudalab.LaunchError, match="at most 128 threads per block"):    # an H200: INVALID_VALUE
        fill[1, 256](a)


@pytest.mark.parametrize("carveout", [-2, 101, "InvalidOption"])
def test_a_bad_shared_memory_carveout_is_numbas_value_error(cuda, carveout):
    with pytest.raises(ValueError):
        cuda.jit(shared_memory_carveout=carveout)(add_kernel)


def test_const_memory_size_counts_the_const_arrays(cuda):
    table = np.arange(64, dtype=np.float32)

    @cuda.jit("void(float32[::1])")
    def lookup(out):
        c = cuda.const.array_like(table)
        out[cuda.grid(1)] = c[cuda.grid(1) % 64]

    out = np.zeros(128, np.float32)
    lookup[1, 128](out)
    assert out.tolist() == table.tolist() * 2
    assert lookup.get_const_mem_size() == table.nbytes


def test_a_kernel_that_syncs_its_grid_is_launched_cooperatively(cuda):
    @cuda.jit
    def shift(a, out):
        i = cuda.grid(1)
        a[i] = i
        cuda.cg.this_grid().sync()              # every block's writes are seen after this
        out[i] = a[(i + 1) % a.size]

    a, out = np.zeros(256, np.int32), np.zeros(256, np.int32)
    shift[2, 128](a, out)
    assert out.tolist() == list(range(1, 256)) + [0]
    k = shift.specialize(a, out)
    assert k.cooperative and not cuda.jit(add_kernel).specialize(np.zeros(1), 1.0, 2.0).cooperative
    too_many = k.max_cooperative_grid_blocks(128) + 1      # more than fit at once: a GPU would wait forever
    big = np.zeros(too_many * 128, np.int32)
    # numba (cuda.core) refuses it with a ValueError, measured on an H200
    with pytest.raises(ValueError, match=rf"The specified grid size \({too_many} \* 1 \* 1\) exceeds the limit "
                                         rf"\({too_many - 1}\)") as e:
        shift[too_many, 128](big, big.copy())
    assert e.value.code == "cudaErrorCooperativeLaunchTooLarge"


def test_numbas_driver_object_answers_for_the_emulated_driver(cuda):
    from numba.cuda.cudadrv import driver
    assert driver.driver.is_available and driver.driver.get_version() == (13, 0) == driver.get_version()


def test_an_exercise_kernel_that_is_only_a_docstring_launches_and_does_nothing(cuda):
    # numba-cuda's def-line search for line info fails on such a body; a GPU build (no line info) runs it
    @cuda.jit
    def matmul(A, B, C):
        """The student writes the kernel here."""

    c = np.full((4, 4), 7.0, np.float32)
    matmul[(1, 1), (4, 4)](c, c, c)
    np.testing.assert_array_equal(c, 7.0)


def test_a_helper_written_as_a_kernel_is_called_by_another_kernel_as_a_device_function(cuda):
    # numba-cuda compiles any @cuda.jit function that a kernel calls as a device function
    @cuda.jit
    def square(x):
        return x * x

    @cuda.jit
    def squares_plus_one(out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = square(i) + 1

    out = np.zeros(6, np.int64)
    squares_plus_one[1, 8](out)
    np.testing.assert_array_equal(out, [1, 2, 5, 10, 17, 26])


def test_a_tuple_of_empty_tuples_compiles_as_without_line_info(cuda):
    # numba-cuda's line info divides by the element size of an empty tuple; a GPU build has no line info
    @cuda.jit
    def lengths(r, x):
        r[0] = len(x)
        r[1] = len(x[0])

    r = np.ones(2, np.int64)
    lengths[1, 1](r, ((), (), ()))
    np.testing.assert_array_equal(r, [3, 0])


def test_enum_members_are_passed_by_value(cuda):
    import enum

    class Color(enum.IntEnum):
        RED = 1
        GREEN = 2

    class Shape(enum.Enum):
        CIRCLE = 1
        SQUARE = 2

    @cuda.jit
    def compare(a, b, shape, out):
        out[0] = a == b
        out[1] = shape == Shape.SQUARE
        out[2] = a + 10

    out = np.zeros(3, np.int64)
    compare[1, 1](Color.GREEN, Color.GREEN, Shape.SQUARE, out)
    np.testing.assert_array_equal(out, [1, 1, 12])
    compare[1, 1](Color.RED, Color.GREEN, Shape.CIRCLE, out)
    np.testing.assert_array_equal(out, [0, 0, 11])


def test_a_contiguous_vector_fits_a_fortran_ordered_vector_in_a_signature(cuda):
    # CSCS's gemv lesson declares Array(float64, 1, "F") and passes cuda.to_device of a numpy vector
    @cuda.jit('void(Array(float64, 1, "F"), Array(float64, 2, "F"))')
    def first_column(x, a):
        i = cuda.grid(1)
        if i < x.shape[0]:
            x[i] = a[i, 0]

    a = np.asfortranarray(np.arange(6.0).reshape(3, 2))
    x = cuda.to_device(np.zeros(3))
    first_column[1, 4](x, cuda.to_device(a))
    np.testing.assert_array_equal(x.copy_to_host(), [0.0, 2.0, 4.0])
    with pytest.raises(TypeError, match="No matching definition"):
        first_column[1, 4](x, cuda.to_device(np.zeros((3, 2))))      # a C-ordered matrix reads transposed


def test_launches_warn_as_numbas_do_only_where_numba_stands_in(cuda):
    import warnings
    from numba.cuda.core.errors import NumbaPerformanceWarning

    @cuda.jit
    def inc(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] += 1

    a = np.zeros(4)
    with pytest.warns(NumbaPerformanceWarning) as seen:
        inc[1, 32](a)
    assert {str(w.message) for w in seen} == {
        "Grid size 1 will likely result in GPU under-utilization due to low occupancy.",
        "Host array used in CUDA kernel will incur copy overhead to/from device."}
    assert seen[0].filename == __file__            # the program's launch line, not cudalab's
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        inc[128, 32](cuda.to_device(a))           # a device array, 128 blocks: nothing to say
        inc[128, 32](cuda.mapped_array(4)[1:])    # mapped and managed memory: read where it is
        inc[128, 32](cuda.managed_array(4))
        cudalab.numba.uninstall()
        cudalab.jit(inc.py_func)[1, 32](a)        # cudalab's own kernels launch small grids quietly
    np.testing.assert_array_equal(a, 2.0)


def test_a_c_abi_function_that_returns_nothing_is_called(cuda):
    # numba declares a void C-ABI function as returning a word that the definition never writes
    source = cuda.CUSource('extern "C" __device__ void consume(int a) { asm volatile("" : : "r"(a) : "memory"); }')
    consume = cuda.declare_device("consume", "void(int32)", link=source, abi="c")

    @cuda.jit
    def kernel(r, x):
        i = cuda.grid(1)
        if i < r.size:
            consume(x[i])
            r[i] = x[i] * 2

    x = np.arange(10, dtype=np.int32)
    r = np.zeros_like(x)
    kernel[1, 32](r, x)
    np.testing.assert_array_equal(r, x * 2)
    assert "[retval0+0]" in "".join(kernel.inspect_asm().values())      # the word read after the call


def test_debug_with_optimization_warns_as_numba_does(cuda):
    from numba.cuda.core.errors import NumbaInvalidConfigWarning

    def store(a):
        a[0] = 1

    with pytest.warns(NumbaInvalidConfigWarning, match="debug=True with opt=True is not supported by CUDA"):
        checked = cuda.jit(debug=True)(store)
    a = np.zeros(1)
    checked[1, 1](cuda.to_device(a))          # it still builds, unoptimized, as a debug kernel


def test_opt_false_reaches_nvvm_for_kernels_and_device_functions(cuda):
    def body(r, x):
        r[0] = x[0] * x[1] + x[2]

    @cuda.jit(device=True, opt=False)
    def fma_like(a, b, c):
        return a * b + c

    unoptimized, optimized = cuda.jit(opt=False)(body), cuda.jit(body)
    r, x = np.zeros(1), np.array([1.5, 2.0, 0.25])
    for k in (unoptimized, optimized):
        k[128, 1](r, x)
        assert r[0] == 3.25
    ptx = lambda k: "".join(k.inspect_asm().values())      # noqa: E731
    assert "__local_depot" in ptx(unoptimized) and "__local_depot" not in ptx(optimized)
    doubles = (cuda.float64,) * 3
    fma_like.compile_device(doubles)
    assert "fma.rn.f64" not in fma_like.inspect_asm(doubles)       # unoptimized: a mul and an add


def test_python_m_cudalab_numba_says_nothing_of_its_own_when_cudalab_numba_is_set(tmp_path):
    """With CUDALAB_NUMBA=1 cudalab imports cudalab.numba at start-up; ``python -m cudalab.numba``
    then ran that module a second time as ``__main__``, and Python warned about it ('found in
    sys.modules ... unpredictable behaviour') above every program's output."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    (tmp_path / "program.py").write_text("from numba import cuda\nprint(cuda.is_available())\n")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent), CUDALAB_NUMBA="1")
    run = subprocess.run([sys.executable, "-m", "cudalab.numba", str(tmp_path / "program.py")], capture_output=True,
                         text=True, env=env, cwd=tmp_path)
    assert run.stdout.split() == ["True"], run.stderr
    assert "RuntimeWarning" not in run.stderr, run.stderr


def test_in_out_and_inout_copy_a_host_array_only_the_ways_they_say(cuda):
    """numba's hints for a host array: ``cuda.In`` is copied to the device and not back (the kernel's
    writes are lost, as on a GPU), ``cuda.Out`` is not copied in (the kernel finds zeros here) and is
    copied back, ``cuda.InOut`` both ways, like a bare host array. cudalab copied all of them back."""
    @cuda.jit
    def bump(a):
        a[0] += 3

    given = {}
    for hint in (cuda.In, cuda.Out, cuda.InOut, lambda a: a):
        host = np.full(1, 10, np.int64)
        bump[1, 1](hint(host))
        given[getattr(hint, "__name__", "bare")] = int(host[0])
    assert given == {"In": 10, "Out": 3, "InOut": 13, "<lambda>": 13}


def test_dispatcher_extensions_prepare_a_launchs_arguments(cuda):
    """numba's ``extensions``: objects whose ``prepare_args`` turn an argument into what the kernel gets
    (numba-examples' cuRAND states, a library's own array type) and may add write-backs run after the
    launch. Given as ``jit(extensions=[...])`` or appended to ``kernel.extensions``."""
    from numba import float32
    from numba.core.extending import typeof_impl

    class Temperatures:                      # a library's object that holds its values on the device
        def __init__(self, celsius):
            self.device = cuda.to_device(np.asarray(celsius, np.float32))
            self.read_back = None

    @typeof_impl.register(Temperatures)      # numba types it as the array it stands for
    def typeof_temperatures(val, c):
        return float32[::1]

    class PassTheDeviceArray:
        def prepare_args(self, ty, val, stream=0, retr=None):
            if isinstance(val, Temperatures):
                retr.append(lambda: setattr(val, "read_back", val.device.copy_to_host()))
                return ty, val.device
            return ty, val

    class CopyInOnly:
        def prepare_args(self, ty, val, stream=0, retr=None):
            return ty, cuda.In(val) if isinstance(val, np.ndarray) else val

    def warm(t):
        t[cuda.grid(1)] += 1

    kernel = cuda.jit(extensions=[PassTheDeviceArray()])(warm)
    t = Temperatures([20.0, 21.5])
    kernel[1, 2](t.device)                   # typed as the device array it stands for
    kernel[1, 2](t)
    assert t.read_back.tolist() == [22.0, 23.5]
    no_copy_back = cuda.jit(warm)
    no_copy_back.extensions.append(CopyInOnly())
    host = np.zeros(2, np.float32)
    no_copy_back[1, 2](host)
    assert host.tolist() == [0.0, 0.0]       # the extension made it cuda.In(host)


def test_an_extension_may_pass_a_librarys_object_as_an_address(cuda):
    """numba-examples' cuRAND example registers its state array with numba's typeof as a pointer type
    and its extension hands the kernel ``(uint64, address)``: the launch packs what the extension says,
    not the kernel's parameter type (cudalab refused the object as an argument)."""
    from numba import types
    from numba.core.extending import typeof_impl

    class Tally:                                     # a library's counters, living on the device
        def __init__(self, n):
            self.counts = cuda.to_device(np.zeros(n, np.int32))

    @typeof_impl.register(Tally)
    def typeof_tally(val, c):
        return types.CPointer(types.int32)

    class AsAddress:
        def prepare_args(self, ty, val, **kwargs):
            if isinstance(val, Tally):
                return types.uint64, val.counts.__cuda_array_interface__["data"][0]
            return ty, val

    @cuda.jit(extensions=[AsAddress()])
    def count(tally, n):
        i = cuda.grid(1)
        if i < n:
            tally[i] += 10 * i         # through the pointer: one counter per thread

    tally = Tally(3)
    count[1, 32](tally, 3)
    count[1, 32](tally, 2)
    assert tally.counts.copy_to_host().tolist() == [0, 20, 20]


def test_a_record_of_a_device_array_stays_on_the_device(cuda):
    # numba's DeviceRecord: d[i]["a"] = v writes the device's bytes (it was a host copy, and lost)
    rec = np.dtype([("a", np.float64), ("n", np.int32), ("h", np.float32, (2,)),
                    ("inner", [("i", np.int32), ("m", np.float32, (2, 2))])])
    d = cuda.device_array(3, dtype=rec)
    for i in range(3):
        d[i]["a"] = (i + 1) / 2
        d[i]["n"] = i + 1
    d[0]["h"][1] = 7.0
    d[0]["inner"]["i"] = 5
    d[0]["inner"]["m"][1, 0] = 2.5
    assert (d[1]["a"], d[2]["n"], d[0]["inner"]["i"], d[0]["inner"]["m"][1, 0]) == (1.0, 3, 5, 2.5)
    host = d.copy_to_host()
    np.testing.assert_array_equal(host["a"], [0.5, 1.0, 1.5])
    np.testing.assert_array_equal(host["h"][0], [0.0, 7.0])

    @cuda.jit
    def scale(r):
        r.n = r.n * 10

    scale[1, 1](d[2])                          # a kernel given the record writes it in place
    one = np.zeros(1, rec)[0]
    one["n"] = 4
    on_device = cuda.to_device(one)            # a record goes to the device as a record
    scale[1, 1](on_device)
    assert (d[2]["n"], on_device["n"]) == (30, 40)
    with pytest.raises(KeyError, match="no field 'b'"):
        on_device["b"]


def test_device_array_shapes_reshapes_and_copies_as_numbas(cuda):
    with pytest.raises(TypeError, match="shape must be an integer or tuple of integers.*n // 2"):
        cuda.device_array(10 / 2)
    with pytest.raises(TypeError):
        cuda.device_array((2, 1.5))
    assert cuda.device_array(np.array([2, 3]), dtype=np.int8).shape == (2, 3)
    d = cuda.to_device(np.arange(10))
    f = d.reshape(2, 5, order="F").copy_to_host()
    np.testing.assert_array_equal(f, np.arange(10).reshape(2, 5, order="F"))
    assert f.flags.f_contiguous                 # as numba gives it back: the device array's strides
    np.testing.assert_array_equal(d.ravel(order="A").copy_to_host(), np.arange(10))
    with pytest.raises(NotImplementedError):
        d.reshape(2, 5).ravel(order="F")        # a copy would be needed (numba refuses too)


def test_viewing_a_device_array_as_another_dtype_follows_numbas_rules(cuda):
    d = cuda.to_device(np.arange(32, dtype=np.int16).reshape(4, 8))
    np.testing.assert_array_equal(d[:, ::2].view(np.uint16).copy_to_host(),
                                  np.arange(32, dtype=np.int16).reshape(4, 8)[:, ::2].view(np.uint16))
    with pytest.raises(ValueError, match="To change to a dtype of a different size, the last axis must be contiguous"):
        d[:, ::2].view(np.int32)
    with pytest.raises(ValueError, match="When changing to a larger dtype, its size must be a divisor"):
        cuda.to_device(np.zeros((4, 3), np.int16)).view(np.int32)
    with pytest.raises(ValueError, match="`copy=False` is not supported"):
        np.array(d, copy=False)
    np.testing.assert_array_equal(np.array(d, dtype=np.int32)[1], np.arange(8, 16))


def test_a_copy_into_a_strided_view_is_refused_as_numba_refuses_it(cuda):
    # a copy is one block of memory: numba refuses a strided destination or a differently laid-out
    # source; assignment writes any view
    d = cuda.to_device(np.arange(25).reshape(5, 5, order="F"))
    with pytest.raises(ValueError, match="Array contains non-contiguous buffer.*assign to it instead"):
        d[2].copy_to_device(np.full(5, 7))
    d[2] = np.full(5, 7)
    assert d.copy_to_host()[2].tolist() == [7] * 5
    c = cuda.to_device(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"incompatible strides: \(32, 8\) vs. \(8, 24\)"):
        c.copy_to_device(cuda.to_device(np.asfortranarray(np.ones((3, 4)))))
    c.copy_to_device(cuda.to_device(np.ones((3, 4))))            # the same layout: one block
    c[:, 1].copy_to_host()                                       # reading a strided view is fine
    assert c.copy_to_host().sum() == 12


def test_to_device_of_a_host_view_with_gaps_is_refused_as_numba_refuses_it(cuda):
    a = np.arange(12.0).reshape(3, 4)
    with pytest.raises(ValueError, match=r"non-contiguous buffer.*np.ascontiguousarray"):
        cuda.to_device(a[:, 0])                  # a column of a C-ordered matrix: one block it is not
    np.testing.assert_array_equal(cuda.to_device(np.ascontiguousarray(a[:, 0])).copy_to_host(), [0.0, 4.0, 8.0])
    assert cuda.to_device(a[1]).shape == (4,)    # a row is one block
    assert cuda.to_device(np.broadcast_to(np.float32(2), (5,))).copy_to_host().tolist() == [2.0] * 5

    @cuda.jit
    def double(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] *= 2
    column = a[:, 1]
    double[1, 32](cuda.InOut(column))            # numba's argument hints gather a view's values
    np.testing.assert_array_equal(a[:, 1], [2.0, 10.0, 18.0])


def test_a_launch_returns_none_as_numbas_does_and_last_launch_keeps_the_record(cuda):
    import pickle

    import cudalab

    @cuda.jit
    def bump(a):
        a[0] += 1

    a = np.zeros(1)
    assert bump[1, 1](a) is None                 # numba.cuda's launch returns nothing
    assert bump.forall(1)(a) is None
    assert cudalab.last_launch().kernel == "bump"  # what cudalab ran is still at hand
    again = pickle.loads(pickle.dumps(bump))     # a rebuilt kernel launches as numba's too
    assert again[1, 1](a) is None and a[0] == 3

    @cudalab.jit                                 # cudalab's own jit: the lessons read the record
    def bump_too(a):
        a[0] += 1
    assert bump_too[1, 1](a).grid == (1, 1, 1)


def test_numbas_device_runtime_lets_a_kernel_make_arrays(cuda, monkeypatch):
    from numba.cuda import config
    monkeypatch.setattr(config, "CUDA_ENABLE_NRT", True, raising=False)   # NUMBA_CUDA_ENABLE_NRT=1

    @cuda.jit
    def sums(out):
        i = cuda.grid(1)
        if i < out.size:
            scratch = np.zeros(4, dtype=np.float64)   # numba's NRT allocates it on the device
            for k in range(4):
                scratch[k] = i * k
            out[i] = scratch.sum()

    out = np.zeros(6)
    sums[1, 6](out)
    np.testing.assert_array_equal(out, [6.0 * i for i in range(6)])


def test_a_strided_int32_parameter_reads_the_int64_arrays_a_python_list_gives(cuda):
    from cudalab.errors import LaunchError

    @cuda.jit("void(float32[:, :], int32[:, :])")    # as a course's Sobel filter declares its stencil
    def weigh(out, stencil):
        i, j = cuda.grid(2)
        if i < out.shape[0] and j < out.shape[1]:
            out[i, j] = stencil[i, j] * 0.5

    stencil = cuda.to_device([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]])     # int64, numba's strides in bytes
    out = cuda.device_array((3, 3), np.float32)
    weigh[1, (3, 3)](out, stencil)
    np.testing.assert_array_equal(out.copy_to_host(), np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]) * 0.5)

    @cuda.jit("void(int32[::1])")                    # a contiguous parameter indexes by its own size
    def first(a):
        a[0] = 1
    with pytest.raises(LaunchError, match="No matching definition"):
        first[1, 1](np.zeros(3, np.int64))


def test_cache_true_keeps_the_compiled_kernel_in_pycache_for_the_next_run(cuda, tmp_path, monkeypatch):
    import importlib.util
    import sys

    from cudalab.pykernels import dispatcher
    program = tmp_path / "doubling.py"
    program.write_text("from numba import cuda\n\nFACTOR = 2\n\n"
                       "@cuda.jit(cache=True)\n"
                       "def double(x):\n"
                       "    i = cuda.grid(1)\n"
                       "    if i < x.size:\n"
                       "        x[i] *= FACTOR\n")

    def load():                          # a fresh import, as a second run of the program has
        spec = importlib.util.spec_from_file_location("doubling", program)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    x = np.arange(4.0)
    load().double[1, 4](x)
    kept = sorted(p.suffix for p in (tmp_path / "__pycache__").iterdir() if p.name.startswith("doubling.double"))
    assert kept == [".nbc", ".nbi"]      # numba's index and one data file, where numba writes them

    def no_compiling(*args, **kwargs):
        raise AssertionError("compiled again")
    monkeypatch.setattr(dispatcher, "compile_kernel", no_compiling)
    second = load()
    second.double[1, 4](x)               # the second run loads the PTX
    np.testing.assert_array_equal(x, [0.0, 4.0, 8.0, 12.0])
    stats = second.double.stats          # numba's counts: one compile answered by the cache
    assert (sum(stats.cache_hits.values()), sum(stats.cache_misses.values())) == (1, 0)
    assert stats.cache_path == str(tmp_path / "__pycache__")
    with pytest.raises(AssertionError, match="compiled again"):
        load().double[1, 4](x.astype(np.float32))      # another signature compiles (and is kept)
    monkeypatch.undo()
    second.FACTOR = 3                    # a global the cache key does not see: recompile() replaces the PTX
    second.double.recompile()
    x = np.ones(4)
    load().double[1, 4](x)
    np.testing.assert_array_equal(x, [3.0] * 4)
    sys.modules.pop("doubling", None)


def test_numbas_nrt_statistics_count_a_kernels_allocations(cuda, monkeypatch):
    from numba.cuda import config
    from numba.cuda.memory_management import rtsys
    monkeypatch.setattr(config, "CUDA_ENABLE_NRT", True, raising=False)     # NUMBA_CUDA_ENABLE_NRT=1
    monkeypatch.setattr(config, "CUDA_NRT_STATS", True, raising=False)      # NUMBA_CUDA_NRT_STATS=1

    @cuda.jit
    def first_of_a_range(out):
        out[0] = np.arange(10)[3]            # one array, made and freed on the device

    rtsys.initialize()
    assert rtsys.memsys_stats_enabled()
    before = rtsys.get_allocation_stats()
    out = np.zeros(1, np.int64)
    first_of_a_range[1, 1](out)
    after = rtsys.get_allocation_stats()
    assert out[0] == 3
    assert [a - b for a, b in zip(after, before)] == [1, 1, 1, 1]     # alloc, free, mi_alloc, mi_free
    rtsys.memsys_disable_stats()
    assert not rtsys.memsys_stats_enabled()
    with pytest.raises(RuntimeError, match="NRT stats are disabled"):
        rtsys.get_allocation_stats()


def test_numbas_driver_helpers_take_cudalabs_device_arrays(cuda):
    from numba.cuda.cudadrv.driver import device_ctypes_pointer, device_pointer, is_device_memory
    d = cuda.to_device(np.arange(8, dtype=np.float32))
    assert is_device_memory(d) and not is_device_memory(np.zeros(2))
    assert device_pointer(d) == d.device_ptr == device_ctypes_pointer(d).value     # the emulator's address
    assert device_pointer(d[2:]) == d.device_ptr + 8                                 # a view's own address


def test_an_event_never_recorded_has_happened_as_cuda_says(cuda):
    # cudaEventQuery/cudaEventSynchronize/cudaStreamWaitEvent of an event that was never recorded
    # succeed at once; only a time between events needs both recorded
    idle = cuda.event()
    assert idle.query() is True
    idle.synchronize()
    idle.wait(cuda.stream())
    with pytest.raises(Exception, match="never recorded"):
        cuda.event_elapsed_time(idle, idle)


def test_a_child_forked_after_cuda_started_is_refused_as_numbas_driver_refuses_it(cuda):
    import concurrent.futures
    import multiprocessing
    import os

    from numba.cuda.cudadrv.error import CudaDriverError
    if os.name != "posix":
        pytest.skip("fork is a Unix call")
    cuda.to_device(np.arange(3))                 # the parent starts CUDA
    with concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        child = pool.submit(cuda.to_device, np.arange(3))
        with pytest.raises(CudaDriverError, match="CUDA initialized before forking.*'spawn'"):
            child.result()
    assert cuda.to_device(np.arange(3)).copy_to_host().sum() == 3        # the parent goes on


def test_cuda_gpus_is_numbas_device_list():
    """Programs count and pick devices with ``len(cuda.gpus)``, ``cuda.gpus[0]`` and ``cuda.gpus.current``;
    the drop-in's fork check had wrapped the list in a function, which has no length, items or current."""
    cudalab.numba.install()
    try:
        from numba import cuda
        assert len(cuda.gpus) == 1 and [d.id for d in cuda.gpus] == [0]
        with cuda.gpus[0]:
            assert cuda.gpus.current.id == 0
    finally:
        cudalab.numba.uninstall()


def test_a_simulator_switch_set_after_numbas_import_is_named_in_the_message(cuda, monkeypatch):
    """A lesson that sets os.environ["NUMBA_ENABLE_CUDASIM"] = "1" after ``from numba import cuda``, to
    reach pdb inside a kernel, gets a GPU kernel (numba read the variable at its import, on a GPU too):
    the message says why, and where to set it instead."""
    from cudalab.errors import CompileError

    @cuda.jit
    def stop_here(a):
        from pdb import set_trace
        set_trace()
        a[0] = 1

    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    with pytest.raises(CompileError, match=r"A kernel cannot import: put the import at the top of the file\. .*"
                                           r"NUMBA_ENABLE_CUDASIM=1 was set after numba was imported") as caught:
        stop_here[1, 1](np.zeros(1))
    assert "Set it before `from numba import cuda`" in str(caught.value)


def test_numbas_driver_device_is_the_emulated_gpu(cuda):
    # a lesson prints cuda.cudadrv.driver.Device(0).name and .compute_capability (numba's own asks libcuda)
    device = cuda.cudadrv.driver.Device(0)
    assert device.name == cuda.get_current_device().name
    assert device.compute_capability == cuda.get_current_device().compute_capability
    with pytest.raises(Exception, match="cudaErrorInvalidDevice"):
        cuda.cudadrv.driver.Device(1)
