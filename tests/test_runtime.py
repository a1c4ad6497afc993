"""The host API: compile, kernels by C++ name, device arrays, launch checks with CUDA's error names."""
import signal

import numpy as np
import pytest

import cudalab
from cudalab import CompileError, CudaError, KernelError, LaunchError

VECADD = r'''
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
template <int K> __global__ void scale(int* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= K;
}
extern "C" __global__ void plain(int* x) { x[threadIdx.x] = threadIdx.x; }
'''


@pytest.fixture(scope="module")
def mod():
    return cudalab.compile(VECADD)


def test_kernels_are_found_by_their_cxx_names(mod):
    assert set(mod.kernels) >= {"vecAdd", "plain"}
    assert mod.get_kernel("vecAdd") is mod.vecAdd
    x = np.arange(10, dtype=np.int32)
    mod.get_kernel("scale<3>")[1, 32](x, 10)         # a template instance, compiled on demand
    assert x.tolist() == [3 * i for i in range(10)]
    assert "scale<3>" in mod.kernels


def test_device_arrays_round_trip_and_launch(mod):
    a = cudalab.to_device(np.ones(100, np.float32))
    b = cudalab.to_device(np.full(100, 2, np.float32))
    c = cudalab.device_array(100, np.float32)
    rec = mod.vecAdd[1, 128](a, b, c, 100)
    assert np.all(c.copy_to_host() == 3)
    assert rec.kernel == "vecAdd" and rec.grid == (1, 1, 1) and rec.block == (128, 1, 1)
    assert cudalab.last_launch() is rec
    assert "vecAdd" in repr(rec) and "<table" in rec._repr_html_()


def test_recompiling_an_unchanged_source_is_cached():
    import time
    cudalab.compile(VECADD)
    t = time.perf_counter()
    cudalab.compile(VECADD)
    assert time.perf_counter() - t < 0.05


def test_compile_error_names_the_line_and_shows_it():
    with pytest.raises(CompileError) as e:
        cudalab.compile("__global__ void k(int* x) {\n  x[0] = undefined_thing;\n}\n")
    msg = str(e.value)
    assert "line 2" in msg and "undefined_thing" in msg and "identifier" in msg


def test_get_global_sets_constant_memory():
    m = cudalab.compile(r'''__constant__ float coef[2];
    __global__ void k(float* y) { y[threadIdx.x] = coef[0] * threadIdx.x + coef[1]; }''')
    m.get_global("coef").copy_to_device(np.array([2.0, 0.5], np.float32))
    y = np.zeros(4, np.float32)
    m.k[1, 4](y)
    assert y.tolist() == [0.5, 2.5, 4.5, 6.5]
    assert m.get_global("coef", dtype=np.float32).copy_to_host().tolist() == [2.0, 0.5]


@pytest.mark.parametrize("grid,block,code,words", [
    (1, 2048, "cudaErrorInvalidValue", "at most 1024 threads"),
    (0, 32, "cudaErrorInvalidValue", "at least 1"),
    ((1, 70000), 32, "cudaErrorInvalidValue", "gridDim.y may be at most 65,535"),
    (1, (1, 1, 65), "cudaErrorInvalidValue", "blockDim.z may be at most 64"),
    ("x", 32, "cudaErrorInvalidValue", "must be an int or a tuple"),
])
def test_bad_launch_shapes(mod, grid, block, code, words):
    with pytest.raises(LaunchError) as e:
        mod.vecAdd[grid, block](np.zeros(1, np.float32), np.zeros(1, np.float32), np.zeros(1, np.float32), 1)
    assert e.value.code == code and words in str(e.value)


@pytest.mark.parametrize("args,words", [
    ((np.zeros(4, np.float32),), "takes 4 arguments (const float*, const float*, float*, int), but 1 was given"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4)), "(int) is a int value, but you passed a numpy array"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), 3.5, 4), "is a pointer: pass a numpy array"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), 2**40), "does not fit"),
    ((np.zeros(4, np.float32), np.zeros(4, np.float32), np.zeros(4, np.float32), 2.5), "is an integer, but you passed 2.5"),
])
def test_bad_arguments_say_which_and_why(mod, args, words):
    with pytest.raises(LaunchError) as e:
        mod.vecAdd[1, 32](*args)
    assert words in str(e.value)


def test_a_block_past_the_kernels_launch_bounds_is_refused():
    m = cudalab.compile("__global__ void __launch_bounds__(128) twice(float* o) { o[threadIdx.x] *= 2.f; }")
    o = np.ones(256, np.float32)
    m.twice[1, 128](o)
    with pytest.raises(LaunchError, match=r"launch bounds allow at most 128 threads per block, but block \(256, 1, 1\)") as e:
        m.twice[1, 256](o)
    assert e.value.code == "cudaErrorInvalidValue" and o.tolist() == [2.0] * 128 + [1.0] * 128


def test_too_much_shared_memory(mod):
    m = cudalab.compile("__global__ void k(float* x) { __shared__ float s[16384]; s[threadIdx.x] = 1; x[0] = s[0]; }")
    with pytest.raises(LaunchError, match="65,536 bytes of shared memory"):
        m.k[1, 32](np.zeros(1, np.float32))
    with pytest.raises(LaunchError, match="dynamic"):
        mod.plain[1, 32, 0, 100_000](np.zeros(32, np.int32))


BIG_SHARED = r'''
__global__ void reverse(float* out, int n) {
  extern __shared__ float buf[];
  for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = i;
  __syncthreads();
  out[threadIdx.x] = buf[n - 1 - threadIdx.x];
}'''


def test_more_than_48_KiB_of_dynamic_shared_memory_after_opting_in():
    """cudaFuncSetAttribute(reverse, cudaFuncAttributeMaxDynamicSharedMemorySize, ...) as in a
    program, with the same checks: up to the device's opt-in limit (227 KiB on an H100)."""
    before = cudalab.device.current()
    cudalab.set_device("H100")
    try:
        k = cudalab.compile(BIG_SHARED).reverse
        n, out = 100 * 1024 // 4, np.zeros(32, np.float32)
        with pytest.raises(LaunchError, match="kernel.set_attribute"):
            k[1, 32, 0, n * 4](out, n)
        k.set_attribute("MaxDynamicSharedMemorySize", n * 4)
        k[1, 32, 0, n * 4](out, n)
        assert (out == np.arange(n - 1, n - 33, -1)).all()
        with pytest.raises(CudaError, match="at most 232,448 bytes") as e:
            k.set_attribute("cudaFuncAttributeMaxDynamicSharedMemorySize", 228 * 1024)
        assert e.value.code == "cudaErrorInvalidValue"
    finally:
        cudalab.set_device(before)


def test_out_of_bounds_read_is_reported_like_compute_sanitizer_and_next_launch_works(mod):
    a = np.zeros(100, np.float32)
    with pytest.raises(KernelError) as e, cudalab.check("memcheck"):
        mod.vecAdd[1, 128](a, a, a, 128)          # n larger than the arrays (a GPU runs it: memcheck stops it)
    err = e.value
    assert err.code == "cudaErrorIllegalAddress"
    f = err.findings[0]
    assert f.kind == "memcheck" and f.line == 4 and f.block == (0, 0, 0) and f.thread == (100, 0, 0)
    assert "Invalid __global__ read of size 4 bytes" in str(err)
    assert "0 bytes after the end of a 400-byte allocation" in str(err)
    c = np.zeros(100, np.float32)
    mod.vecAdd[1, 128](np.ones(100, np.float32), np.ones(100, np.float32), c, 100)
    assert np.all(c == 2)


def test_unknown_kernel_name_lists_the_known_ones(mod):
    with pytest.raises(CudaError, match="its kernels: vecAdd"):
        mod.get_kernel("vecadd")


def test_watchdog_stops_an_endless_loop():
    m = cudalab.compile("__global__ void spin(int* x) { while (x[0] == 0) { } }")
    cudalab.set_watchdog(0.5)
    try:
        with pytest.raises(KernelError) as e:
            m.spin[1, 32](np.zeros(1, np.int32))
    finally:
        cudalab.set_watchdog(10)
    assert e.value.code == "cudaErrorLaunchTimeout" and "line 1" in str(e.value) and "loop" in str(e.value)


def test_compare_reports_first_differing_elements():
    from cudalab.runtime.compare import diff
    emu = [np.array([1.0, np.nan, 3.0], np.float32), None]
    gpu = [np.array([1.0, np.nan, 4.0], np.float32), None]
    (d,) = diff(emu, gpu)
    assert d.argument == 0 and d.count == 1 and d.first == [(2, 3.0, 4.0)]
    # NaNs compare by their bits: the canonical 0x7fffffff is not the x86 default 0x7fc00000
    quiet = np.array([0x7FC00000], np.uint32).view(np.float32)
    canon = np.array([0x7FFFFFFF], np.uint32).view(np.float32)
    assert diff([quiet], [canon])[0].count == 1


def test_both_devices_without_a_gpu_says_why():
    from cudalab.gpu import backend
    if backend.available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(CudaError, match="No NVIDIA GPU"):
        cudalab.use("both")
    from cudalab.runtime import device
    assert not device.comparing()


@pytest.mark.gpu
def test_both_devices_agree_on_a_kernel(mod):
    cudalab.use("both")
    try:
        a, b = np.arange(100, dtype=np.float32), np.full(100, 0.5, np.float32)
        c = np.zeros(100, np.float32)
        result = mod.vecAdd[1, 128](a, b, c, 100)
        assert result.same and np.all(c == a + b)
    finally:
        cudalab.use("emu")


def test_launch_record_knows_the_registers_the_real_compiler_gives(mod):
    rec = mod.vecAdd[1, 32](np.ones(32, np.float32), np.ones(32, np.float32), np.zeros(32, np.float32), 32)
    assert isinstance(rec.registers, int) and 4 <= rec.registers <= 32


def test_an_interrupt_stops_a_running_kernel_cleanly():
    import _thread
    import threading
    m = cudalab.compile("__global__ void spin(int* x) { while (x[0] == 0) { } }")
    m.spin[1, 32](np.ones(1, np.int32))     # set up once (lazy imports, native code), so the stop lands in the loop
    # Python's own Ctrl-C handler, as in a terminal or Jupyter's kernel: interrupt_main does nothing
    # under a handler another library left in this test process (one CI run saw the watchdog instead)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, _thread.interrupt_main)     # what Jupyter's stop button does
    timer.start()
    try:
        with pytest.raises(KernelError, match="was interrupted"):
            m.spin[1, 32](np.zeros(1, np.int32))
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, handler)
    out = np.zeros(4, np.int32)
    cudalab.compile("__global__ void k(int* o) { o[threadIdx.x] = 7; }").k[1, 4](out)
    assert out.tolist() == [7, 7, 7, 7]


def test_an_array_the_garbage_collector_drops_is_freed_before_the_next_launch():
    """Freeing happens at a safe point (a launch or a new array), never in the middle of the
    emulator's own bookkeeping, where the collector may run."""
    import gc
    mod = cudalab.compile("__global__ void one(int* p) { p[threadIdx.x] = 1; }")
    kept = cudalab.device_array(32, np.int32)
    dropped = cudalab.device_array(32, np.int32)
    memory = kept.device.memory
    ptr = dropped.device_ptr
    del dropped
    gc.collect()
    assert not memory.allocs[ptr].freed                 # not yet: waiting for a safe point
    mod.one[1, 32](kept)
    assert memory.allocs[ptr].freed
    assert (kept.copy_to_host() == 1).all()


def test_a_dropped_module_gives_its_device_variables_back():
    """A notebook compiles a module per cell run, each with its __device__ and __constant__
    variables (the CUDA headers add dozens); they are freed when the module goes, as unloading a
    module does, at the next allocation (a safe point)."""
    import gc
    src = "__device__ int hits[4];\n__constant__ float coef[2];\n__global__ void k(int* o) { o[0] = hits[0] + (int)coef[0]; }"
    mod = cudalab.compile(src)
    out = cudalab.device_array(1, np.int32)
    mod.k[1, 1](out)
    memory = out.device.memory
    places = list(mod.program(out.device).globals.values())
    assert len(places) == 2 and not any(memory.allocs[p].freed for p in places)
    cudalab.compile("__global__ void other(int* o) { o[0] = 2; }").other[1, 1](out)  # last_launch() moves on
    del mod
    gc.collect()
    cudalab.device_array(1, np.int32)                   # the next allocation frees them
    assert all(memory.allocs[p].freed for p in places)


def test_an_array_over_a_module_variable_keeps_the_variable():
    import gc
    coef = cudalab.compile("__constant__ float coef[2];\n__global__ void k() {}").get_global("coef", np.float32)
    coef.copy_to_device(np.array([2.0, 0.5], np.float32))
    gc.collect()
    cudalab.device_array(1, np.int32)
    assert coef.copy_to_host().tolist() == [2.0, 0.5]


def test_a_launch_does_not_look_at_unrelated_live_allocations():
    """Device-side launches allocate and free a parameter buffer each; the sorted table of live
    allocations that address checks search is updated in place, not rebuilt from every allocation
    (which made 256 nested launches take 10x longer with 30,000 arrays alive)."""
    src = r'''
__global__ void dive(int* seen, int depth) {
  seen[depth] = 1;
  if (depth < 20) dive<<<1, 1>>>(seen, depth + 1);
}'''
    mod = cudalab.compile(src, options=["-arch=compute_90", "-rdc=true"])
    seen = cudalab.device_array(32, np.int32)
    memory = seen.device.memory

    class CountingTable(dict):
        lookups = 0

        def __getitem__(self, addr):
            CountingTable.lookups += 1
            return dict.__getitem__(self, addr)

        def values(self):
            CountingTable.lookups += len(self)
            return dict.values(self)

    def lookups_per_launch():
        memory.allocs = CountingTable(memory.allocs)
        CountingTable.lookups = 0
        try:
            mod.dive[1, 1](seen, 0)
        finally:
            memory.allocs = dict(memory.allocs)
        return CountingTable.lookups

    few = lookups_per_launch()
    unrelated = [cudalab.device_array(1, np.int32) for _ in range(10_000)]
    lookups_per_launch()                # the first launch after them marks them as written, once
    many = lookups_per_launch()
    assert (seen.copy_to_host()[:21] == 1).all()
    assert many <= few + 50, f"{few} lookups in the allocation table with few arrays alive, {many} with 10,000 more"
    del unrelated


def test_memory_freed_in_pieces_makes_room_for_one_larger_array():
    # a book's loop: cudaMalloc and cudaFree 1, 2, 3 ... GiB; with all of it freed, each new size fits
    from cudalab.emulator.memory import DeviceMemory
    memory = DeviceMemory(limit=8 << 20)
    for mib in range(1, 8):
        a = memory.alloc(mib << 20)
        memory.free(a)
    # and two freed neighbours between live arrays join into one hole (each block: 1 MiB with its red zone)
    memory = DeviceMemory(limit=4 << 20)
    first, middle1, middle2, last = (memory.alloc((1 << 20) - 512) for _ in range(4))
    memory.free(middle1)
    memory.free(middle2)
    assert memory.alloc((2 << 20) - 512) == middle1


def test_device_memory_grows_in_place_without_copying_its_bytes():
    # a CuPy program of 10 million options grows the arena to 2 GiB: it grows inside address space
    # reserved once, so the bytes already there stay where they are (nothing copied), the arena's
    # size still doubles as before, and what lies past it is still zeros
    from cudalab.emulator.memory import GLOBAL_BASE, DeviceMemory
    memory = DeviceMemory(limit=1 << 30)
    first = memory.alloc(1000)
    memory.write(first, np.arange(250, dtype=np.int32))
    base, size = memory.data.ctypes.data, memory.data.size
    big = memory.alloc(100 << 20)
    assert memory.data.size == 128 << 20 == 8 * size            # doubled three times
    assert memory.data.ctypes.data == base                      # grown where it was: nothing moved
    assert (memory.read(first, 1000).view(np.int32) == np.arange(250)).all()
    off = big - GLOBAL_BASE
    assert not memory.data[off:off + (100 << 20)].any()          # fresh memory reads as zeros


def test_out_of_memory_names_the_largest_allocation_that_still_fits():
    # each block is followed by a 512-byte red zone: a request for all that is left does not fit,
    # and the message says what would, not "asked for N bytes, but N are left"
    from cudalab.emulator.memory import DeviceMemory
    memory = DeviceMemory(limit=1 << 20)
    memory.alloc(1024)
    left = (1 << 20) - 1024 - 512          # less the first block and its red zone
    with pytest.raises(CudaError, match=f"asked for {left:,} bytes, but the largest allocation that fits .* is "
                                        f"now {left - 512:,} bytes"):
        memory.alloc(left)
    memory.alloc(left - 512)


def test_an_interrupt_before_the_first_block_runs_is_a_kernel_error_too(monkeypatch):
    """Jupyter's stop button can land while a launch is being set up (its native code loading
    from the disk cache): the student gets the launch's error, not a KeyboardInterrupt from inside."""
    from cudalab.emulator import engine
    m = cudalab.compile("__global__ void k(int* o) { o[threadIdx.x] = 7; }")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    monkeypatch.setattr(engine, "launch_plan", interrupted)      # one of the launch's set-up steps
    with pytest.raises(KernelError, match="interrupted before it began to run"):
        m.k[1, 4](np.zeros(4, np.int32))
    monkeypatch.undo()
    out = np.zeros(4, np.int32)
    m.k[1, 4](out)
    assert out.tolist() == [7, 7, 7, 7]


def test_a_negative_int_reaches_an_extern_c_kernels_int_parameter():
    """An ``extern "C"`` kernel (PyCUDA's SourceModule, CuPy's RawKernel) has no C++ types in its name,
    only PTX's, and NVVM declares an ``int`` parameter ``.u32``: a negative value such as -1 (a parent
    id of 'none') must arrive as C passes it, while a value too large for 32 bits is still refused."""
    mod = cudalab.compile('extern "C" __global__ void keep(int value, long long *out) { out[0] = value; }')
    out = cudalab.device_array((1,), np.int64)
    mod.get_kernel("keep")[1, 1](np.int32(-1), out)
    assert out.copy_to_host()[0] == -1
    mod.get_kernel("keep")[1, 1](-7, out)
    assert out.copy_to_host()[0] == -7
    with pytest.raises(LaunchError, match="does not fit"):
        mod.get_kernel("keep")[1, 1](1 << 40, out)

