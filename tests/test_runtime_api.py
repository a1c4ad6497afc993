"""The CUDA runtime API of whole programs, checked against an H100.

Each program in tests/runtime_api/ exercises one part of the runtime (every device attribute,
limits, memory pools, graphs captured and built node by node, host callbacks, launch attributes,
misuse) and prints each call's result. tests/runtime_api/h100/NAME.out is what the program printed
on an H100 (driver 580, CUDA 13.0; recorded with tools/runtime_api_gpu.py; host_order.out,
texture_bounds.out, events.out and the driver API's driver.out and nvrtc.out (libnvrtc 13.0) on an H200, the device
call's card: what they check is no board's own); the
emulator, set to the H100 profile, must
print the same lines. Two things may differ and are normalized away:

* lines starting ``device:`` (register counts, the GPU's name) and values that belong to one
  physical board (PCI ids, its 80 GB of memory);
* where a host function's line lands: on a GPU it runs on a driver thread whenever the stream
  reaches it, so its output may come out before or after the host's next lines; CUDA only
  promises it runs before the next synchronization. Such lines are moved to just before the
  next synchronizing call's line on both sides.

test_memory_pools below also spells out, line by line, the pool model that pools.cu's recording shows.
"""
import re
import shutil
import tempfile
from pathlib import Path

import pytest

import cudalab
from cudalab.programs import run_program
from cudalab.programs.compare import comparable, link_options

HERE = Path(__file__).resolve().parent / "runtime_api"
RECORDED = HERE / "h100"
PROGRAMS = sorted(p.stem for p in HERE.glob("*.cu"))
HOST_SIDE = re.compile(r"^(host function|callback|host node)\b")
SYNCHRONIZING = re.compile(r"^cuda(Stream|Device|Event)Synchronize\(")
# values of one physical board: PCI bus/device/domain ids, the PCI device and subsystem ids, memory size
BOARD = re.compile(r"^(attr (33|34|50|139|140):|prop (pciBusID|pciDeviceID|pciDomainID|gpuPciDeviceID|"
                   r"gpuPciSubsystemID|totalGlobalMem) )")
OPTIONS = {"clusters": ["-arch=sm_90"]}      # %cluster_ctarank needs sm_90 PTX


def normalized(stdout: str) -> list:
    """The lines that must agree, with host functions' lines moved down to the next synchronization."""
    lines, held = [], []
    for line in comparable(stdout).splitlines():
        if BOARD.match(line):
            continue
        if HOST_SIDE.match(line):
            held.append(line)
            continue
        if SYNCHRONIZING.match(line):
            lines += held
            held = []
        lines.append(line)
    return lines + held


@pytest.fixture(scope="module")
def h100():
    """The emulated device is an H100, as the recordings' GPU was."""
    before = cudalab.device.current()
    cudalab.set_device("H100")
    yield
    cudalab.set_device(before)


def emulate(name):
    return run_program(HERE / f"{name}.cu", timeout=300,
                       options=[*OPTIONS.get(name, ()), *link_options(HERE / f"{name}.cu")])


@pytest.mark.parametrize("name", [n for n in PROGRAMS if (RECORDED / f"{n}.out").exists()])
def test_program_prints_what_an_h100_printed(name, h100):
    r = emulate(name)
    assert r.returncode == 0, r.stderr
    assert normalized(r.stdout) == normalized((RECORDED / f"{name}.out").read_text())


def test_a_watchdog_stop_breaks_the_context_as_an_illegal_address_does_on_an_h100(h100):
    """A headless H100 has no watchdog, so the recording is of an illegal address; a launch timeout is
    the same kind of error (sticky: the context is broken), so after the emulator's watchdog a program
    sees the same calls answer, and cudaDeviceReset repairs nothing."""
    from cudalab.runtime import device
    before = device.WATCHDOG_SECONDS
    cudalab.set_watchdog(1)
    try:
        r = run_program(HERE / "sticky.cu", options=["-DWATCHDOG"])
    finally:
        cudalab.set_watchdog(before)
    recorded = (RECORDED / "sticky.out").read_text().replace("cudaErrorIllegalAddress", "cudaErrorLaunchTimeout")
    assert r.returncode == 0 and normalized(r.stdout) == normalized(recorded)
    assert "stream: set" in r.stdout            # cudaStreamCreate answers the error and still gives a stream
    assert "cudaDeviceReset cannot repair a context that a kernel broke (cudaErrorLaunchTimeout)" in r.stderr


def test_every_device_attribute_answers_like_an_h100(h100):
    """The attributes findCudaDevice and deviceQuery ask first, and the ends of the range."""
    out = {int(m.group(1)): (m.group(2), int(m.group(3))) for m in
           re.finditer(r"attr (\d+): (\w+) (-?\d+)", emulate("attributes").stdout)}
    assert out[20] == ("cudaSuccess", 0)             # cudaDevAttrComputeMode: default
    assert out[15] == ("cudaSuccess", 1)             # cudaDevAttrGpuOverlap
    assert out[16] == ("cudaSuccess", 132)           # SMs of an H100 SXM
    assert out[13] == ("cudaSuccess", 1_980_000)     # clock rate, kHz
    assert out[81] == ("cudaSuccess", 233_472)       # shared memory per SM
    assert sum(code == "cudaSuccess" for code, _ in out.values()) == 147
    assert out[0][0] == out[148][0] == out[162][0] == "cudaErrorInvalidValue"


def test_every_attribute_follows_the_selected_profile():
    """With an A100 profile the same program reports the A100's sizes."""
    before = cudalab.device.current()
    cudalab.set_device("A100")
    try:
        out = dict(re.findall(r"attr (\d+): cudaSuccess (-?\d+)", emulate("attributes").stdout))
    finally:
        cudalab.set_device(before)
    assert (out["16"], out["75"], out["76"], out["81"], out["38"]) == ("108", "8", "0", str(164 * 1024), str(40 << 20))
    assert out["120"] == "0"                         # no thread block clusters before sm_90


def test_memory_pools(h100):
    """cudaMallocAsync from the default pool and an explicit one: 32 MiB granules, memory given back at
    a synchronization when the release threshold is 0, a freed block reused in stream order."""
    r = emulate("pools")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "after cudaMallocAsync: reserved 33554432 (high 33554432), used 1048576 (high 1048576)" in out
    assert "after synchronize (threshold 0 gives memory back): reserved 0 (high 33554432), used 0" in out
    assert "a freed block is reused in stream order: 1" in out
    assert "after cudaMemPoolTrimTo(0): reserved 0" in out
    assert "values 262145 262146 262147 262148" in out and "values 846 847 848 849" in out
    for call, code in [("cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &one)", "cudaErrorInvalidValue"),
                       ("cudaMemPoolDestroy(pool)", "cudaErrorInvalidValue"),
                       ("cudaDeviceGetDefaultMemPool(&pool, 1)", "cudaErrorInvalidDevice"),
                       ("cudaFreeAsync(&x, s)", "cudaErrorInvalidValue"),
                       ("cudaMallocAsync((void **)&z, (size_t)1 << 50, s)", "cudaErrorMemoryAllocation")]:
        assert f"{call} -> {code}" in out
    assert out.endswith("Result = PASS\n")


def run_source(source, timeout=120, options=()):
    return cudalab.programs.run_program_source("#include <cstdio>\n" + source, timeout=timeout, line_offset=1,
                                               options=options)


def test_a_host_callback_that_starts_a_thread_which_calls_the_runtime():
    """NVIDIA's simpleCallback pattern: the callback's own thread calls CUDA while main does too."""
    r = run_source(r"""
#include <pthread.h>
__global__ void inc(int *p) { atomicAdd(p, 1); }
int *counter;
void *worker(void *) {
    for (int i = 0; i < 50; ++i) { int *t; cudaMalloc(&t, 64); cudaFree(t); }
    return 0;
}
pthread_t thread;
void CUDART_CB start(void *) { pthread_create(&thread, 0, worker, 0); }
int main() {
    cudaMallocManaged(&counter, 4);
    *counter = 0;
    cudaLaunchHostFunc(0, start, 0);
    for (int i = 0; i < 50; ++i) inc<<<1, 32>>>(counter);
    pthread_join(thread, 0);
    printf("%d %s\n", *counter, cudaGetErrorName(cudaDeviceSynchronize()));
}""")
    assert r.stdout == "1600 cudaSuccess\n" and r.returncode == 0, r.stderr


def test_a_time_limit_stops_a_kernel_that_is_running_and_the_next_program_works():
    spin = r"""
__global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
int main() {
    printf("before\n");
    fflush(stdout);
    spin<<<1, 32>>>(1LL << 50);
    cudaDeviceSynchronize();
    printf("after\n");
}"""
    import time
    saved = cudalab.runtime.device.WATCHDOG_SECONDS
    cudalab.set_watchdog(600)                 # the program's limit must stop it, not the watchdog
    try:
        t0 = time.monotonic()
        r = run_source(spin, timeout=3)
        took = time.monotonic() - t0
    finally:
        cudalab.set_watchdog(saved)
    assert r.stdout == "before\n" and r.returncode != 0
    # 3 s of limit; the rest is building (a cold build on a loaded machine took 12 s) and stopping.
    # Without the stop the kernel would spin for days.
    assert took < 3 + 60
    assert "time limit (3 s) ran out while kernel spin was running" in r.stderr
    assert ("threads were still running" in r.stderr or "It was stopped at line" in r.stderr)
    assert "--timeout SECONDS" in r.stderr
    again = run_source('__global__ void k(int *p) { *p = 7; }\n'
                       'int main() { int *p; cudaMallocManaged(&p, 4); k<<<1, 1>>>(p); cudaDeviceSynchronize(); '
                       'printf("%d\\n", *p); }', timeout=60)
    assert again.stdout == "7\n"


def test_unsupported_features_say_so_and_return_not_supported():
    r = run_source(r"""
int main() {
    int *d; cudaIpcMemHandle_t h; cudaGraphicsResource_t res = 0; void *p;
    cudaMalloc(&d, 64);
    printf("%s\n", cudaGetErrorName(cudaIpcGetMemHandle(&h, d)));
    printf("%s\n", cudaGetErrorName(cudaGraphicsMapResources(1, &res, 0)));
    printf("%s\n", cudaGetErrorName(cudaMemcpyPeer(&p, 1, d, 0, 4)));
    int can = -1;
    printf("%s %d\n", cudaGetErrorName(cudaDeviceCanAccessPeer(&can, 0, 1)), can);
    printf("%s\n", cudaGetErrorName(cudaSetDevice(1)));
}""")
    # a peer copy to a second GPU: cudaErrorInvalidDevice, as on a machine with one GPU
    assert r.stdout.splitlines() == ["cudaErrorNotSupported", "cudaErrorNotSupported", "cudaErrorInvalidDevice",
                                     "cudaErrorInvalidDevice -1", "cudaErrorInvalidDevice"]
    assert "cudaIpcGetMemHandle is not supported by the emulated GPU (sharing memory or events with another " \
           "process (IPC))" in r.stderr
    assert "graphics interoperability" in r.stderr
    assert "a peer copy from device 0 to device 1 needs a second GPU" in r.stderr


def test_a_peer_copy_within_the_one_gpu_is_a_device_to_device_copy():
    """p2pBandwidthLatencyTest on a machine with one GPU copies from device 0 to device 0."""
    r = run_source(r"""
int main() {
    int h[4] = {1, 2, 3, 4}, *a, *b;
    cudaMalloc(&a, sizeof h); cudaMalloc(&b, sizeof h);
    cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
    cudaStream_t s;
    cudaStreamCreate(&s);
    printf("%s ", cudaGetErrorName(cudaMemcpyPeerAsync(b, 0, a, 0, sizeof h, s)));
    cudaStreamSynchronize(s);
    printf("%s ", cudaGetErrorName(cudaMemcpyPeer(a, 0, b, 0, 8)));
    cudaMemcpy(h, b, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %d %d %d\n", h[0], h[1], h[2], h[3]);
}""")
    assert r.stdout == "cudaSuccess cudaSuccess 1 2 3 4\n"


def test_every_runtime_function_of_the_headers_links():
    """The shim defines or falls back for every host function cuda_runtime_api.h declares."""
    from cudalab.programs.build import cuda_home
    from cudalab.programs.shimgen import declarations, defined_in_shim, fallbacks
    include = cuda_home() / "include"
    declared = set(declarations(include))
    generated = set(re.findall(r"^\S.*?\b(cuda\w+)\(", fallbacks(include), re.M))
    assert len(declared) > 320
    assert declared <= defined_in_shim() | generated
    assert {"cudaGraphLaunch", "cudaMallocAsync", "cudaDeviceGetAttribute"} <= defined_in_shim()
    assert {"cudaIpcGetMemHandle", "cudaGLGetDevices"} & generated


MODEL_SPECIFIC = {"attributes", "limits"}   # cudaDevAttr* values, L2 sizes: only another H100 prints the recording


@pytest.mark.gpu
def test_the_programs_print_on_a_gpu_what_was_recorded_and_what_the_emulator_prints(h100):
    """Live: each program built with nvcc and NVIDIA's runtime, run on the GPU, against the recording
    (or, for a program not recorded yet, against the emulator)."""
    import sys
    sys.path.insert(0, str(HERE.parent.parent / "tools"))
    from runtime_api_gpu import run_on_gpu
    from cudalab.gpu.backend import device_info
    work = Path(tempfile.mkdtemp(prefix="cudalab-rt-"))
    try:
        for name in PROGRAMS:
            code, out, err = run_on_gpu(HERE / f"{name}.cu", work)
            assert code == 0, f"{name}: {err}"
            recorded = RECORDED / f"{name}.out"
            if name in MODEL_SPECIFIC and "H100" not in device_info().name:
                continue        # an H200's memory clock and size are not an H100's: it ran, that is all
            expected = recorded.read_text() if recorded.exists() else emulate(name).stdout
            assert normalized(out) == normalized(expected), name
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_python_and_programs_share_one_runtime():
    """cudalab.device_properties() and a program's cudaGetDeviceProperties are the same table, and a
    Python stream's priority is clamped to CUDA's range as a program's is."""
    before = cudalab.device.current()
    cudalab.set_device("RTX 4090")
    try:
        r = run_source(r"""
int main() {
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
    int clock; cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
    printf("%s|%d|%d|%zu|%d|%d\n", p.name, p.multiProcessorCount, p.l2CacheSize, p.sharedMemPerBlockOptin,
           p.maxBlocksPerMultiProcessor, clock);
}""")
        props = cudalab.device_properties()
        assert r.stdout.strip().split("|") == [str(props[k]) for k in (
            "name", "multiProcessorCount", "l2CacheSize", "sharedMemPerBlockOptin", "maxBlocksPerMultiProcessor")] \
            + [str(cudalab.device_attribute("ClockRate"))]
        assert props["multiProcessorCount"] == 128 and cudalab.device_attribute("ClockRate") == 2_520_000
    finally:
        cudalab.set_device(before)
    assert cudalab.stream(priority=-9).priority == -5 and cudalab.stream(priority=3).priority == 0
    with pytest.raises(cudalab.CudaError, match="not a device attribute"):
        cudalab.device_attribute("Warpsize")


DEVICE_SEEN = r"""
__global__ void seen(long long *out) {
    unsigned sms; asm("mov.u32 %0, %%nsmid;" : "=r"(sms));
    int v; size_t heap;
    out[0] = sms;
    cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, 0); out[1] = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrClockRate, 0); out[2] = v;
    cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0); out[3] = v;
    cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize); out[4] = heap;
    out[5] = cudaDeviceGetAttribute(&v, (cudaDeviceAttr)200, 0);      // not an attribute: as on the host
}
"""


def test_a_kernel_sees_the_same_device_from_python_and_from_a_program():
    """%nsmid, and the device runtime's cudaDeviceGetAttribute and cudaDeviceGetLimit, answer from
    the selected profile and the context's limits, for a Python launch as for a program's kernel."""
    import numpy as np
    before = cudalab.device.current()
    cudalab.set_device("RTX 4090")
    try:
        r = run_source(DEVICE_SEEN + r"""
int main() {
    long long *out; cudaMallocManaged(&out, 6 * sizeof(long long));
    cudaDeviceSetLimit(cudaLimitMallocHeapSize, 16 << 20);
    seen<<<1, 1>>>(out);
    cudaDeviceSynchronize();
    printf("%lld %lld %lld %lld %lld %lld\n", out[0], out[1], out[2], out[3], out[4], out[5]);
}""", options=["-rdc=true"])
        cudalab.set_device_limit("MallocHeapSize", 16 << 20)
        out = np.zeros(6, np.int64)
        cudalab.compile(DEVICE_SEEN, options=["-rdc=true"]).seen[1, 1](out)
        assert r.stdout.split() == [str(v) for v in out] == ["128", "128", "2520000", str(99 * 1024), str(16 << 20), "1"]
        assert cudalab.device_limit("cudaLimitMallocHeapSize") == 16 << 20
    finally:
        cudalab.set_device(before)
    # another device starts with its own defaults
    assert cudalab.device_limit("MallocHeapSize") == 8 << 20
    with pytest.raises(cudalab.CudaError, match="not a device limit"):
        cudalab.set_device_limit("HeapSize", 1)


def test_the_device_runtime_answers_with_the_runtimes_error_numbers():
    """emulator/devrt.py cannot import the runtime's table (imports point down), so it names the
    numbers it returns; they must be the table's."""
    from cudalab.emulator import devrt
    from cudalab.runtime.core.errors import CODE
    names = {"SUCCESS": "cudaSuccess", "INVALID_VALUE": "cudaErrorInvalidValue",
             "MEMORY_ALLOCATION": "cudaErrorMemoryAllocation", "INVALID_CONFIGURATION": "cudaErrorInvalidConfiguration",
             "INVALID_DEVICE_FUNCTION": "cudaErrorInvalidDeviceFunction",
             "INVALID_RESOURCE_HANDLE": "cudaErrorInvalidResourceHandle", "NOT_SUPPORTED": "cudaErrorNotSupported",
             "MAX_DEPTH_EXCEEDED": "cudaErrorLaunchMaxDepthExceeded",
             "PENDING_COUNT_EXCEEDED": "cudaErrorLaunchPendingCountExceeded"}
    assert {k: getattr(devrt, k) for k in names} == {k: CODE[v] for k, v in names.items()}


def test_node_parameters_set_on_a_graph_and_on_its_executable_graph():
    """cudaGraph*NodeSetParams change the graph (a later instantiation sees it); cudaGraphExec*NodeSetParams
    change only the executable graph."""
    r = run_source(r"""
static void note(void *p) { printf("host node %d\n", *(int *)p); }
int main() {
    int *d, h[4] = {0}, one = 1, two = 2, three = 3;
    cudaMalloc(&d, 16);
    cudaGraph_t g; cudaGraphCreate(&g, 0);
    cudaMemsetParams m = {}; m.dst = d; m.value = 7; m.elementSize = 4; m.width = 4; m.height = 1;
    cudaGraphNode_t set, copy, host;
    cudaGraphAddMemsetNode(&set, g, nullptr, 0, &m);
    cudaGraphAddMemcpyNode1D(&copy, g, &set, 1, h, d, 16, cudaMemcpyDeviceToHost);
    cudaHostNodeParams hp = {note, &one};
    cudaGraphAddHostNode(&host, g, &copy, 1, &hp);
    m.value = 8; hp.userData = &two;
    printf("%d %d\n", cudaGraphMemsetNodeSetParams(set, &m), cudaGraphHostNodeSetParams(host, &hp));
    cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, 0); cudaStreamSynchronize(0);
    printf("after the graph's set: %d\n", h[3]);
    m.value = 9; hp.userData = &three;
    printf("%d %d\n", cudaGraphExecMemsetNodeSetParams(e, set, &m), cudaGraphExecHostNodeSetParams(e, host, &hp));
    cudaGraphLaunch(e, 0); cudaStreamSynchronize(0);
    printf("after the executable graph's set: %d\n", h[3]);
    cudaGraphMemsetNodeGetParams(set, &m);
    printf("the graph still says %u\n", m.value);
}""")
    assert r.stdout == ("0 0\nhost node 2\nafter the graph's set: 8\n0 0\nhost node 3\n"
                        "after the executable graph's set: 9\nthe graph still says 8\n"), r.stderr


def test_a_graphs_kernels_print_once_per_run_between_the_programs_own_launches():
    r = run_source(r"""
__global__ void hi(int v) { printf("kernel %d\n", v); }
int main() {
    hi<<<1, 1>>>(1);
    cudaDeviceSynchronize();
    cudaStream_t s; cudaGraph_t g; cudaGraphExec_t e;
    cudaStreamCreate(&s);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    hi<<<1, 1, 0, s>>>(2);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    cudaGraphLaunch(e, s);
    hi<<<1, 1, 0, s>>>(3);
    cudaStreamSynchronize(s);
}""")
    assert r.stdout == "kernel 1\nkernel 2\nkernel 2\nkernel 3\n"
    assert [rec.kernel for rec in r.launches] == ["hi"] * 4


def test_a_fault_in_a_graphs_kernel_is_explained_as_a_launchs_is():
    r = run_source(r"""
__global__ void past_the_end(int *x) { x[threadIdx.x + (1 << 30)] = 1; }   // 4 GiB on: no allocation near
int main() {
    int *x; cudaMalloc(&x, 32 * sizeof(int));
    cudaStream_t s; cudaGraph_t g; cudaGraphExec_t e;
    cudaStreamCreate(&s);
    cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
    past_the_end<<<1, 32, 0, s>>>(x);
    cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&e, g, 0);
    cudaGraphLaunch(e, s);
    printf("%s\n", cudaGetErrorName(cudaStreamSynchronize(s)));
}""")
    assert r.stdout == "cudaErrorIllegalAddress\n"
    assert "cudalab: Invalid __global__ write of size 4 bytes" in r.stderr and "past_the_end" in r.stderr


def test_a_program_for_several_gpus_hears_that_the_emulator_has_one():
    r = run_source(r"""
int main() {
    int n; cudaGetDeviceCount(&n);
    cudaError_t second = cudaSetDevice(1), first = cudaSetDevice(0);
    printf("%d %s %s\n", n, cudaGetErrorName(second), cudaGetErrorName(first));
}""")
    assert r.stdout == "1 cudaErrorInvalidDevice cudaSuccess\n"
    assert "the emulated machine has one GPU, device 0" in r.stderr


def test_a_kernel_that_waits_clock_ticks_lasts_about_as_long_as_on_the_gpu():
    """NVIDIA's simpleHyperQ pattern: spin until clock() has advanced by clockRate * 20 ms. The
    emulator's clock ticks at the device's clock rate as time passes (plus 4 per instruction), so
    the wait lasts about 20 ms here too, not the 1000 times longer that a 1 MHz clock would take."""
    import time
    start = time.process_time()
    r = run_source(r"""
__global__ void wait(long long ticks, long long *took) {
    long long t0 = clock64();
    while (clock64() - t0 < ticks) { }
    *took = clock64() - t0;
}
int main() {
    int khz; cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0);
    long long *took; cudaMallocManaged(&took, 8);
    for (int i = 0; i < 4; i++) wait<<<1, 1>>>(khz * 20LL, took);     // 20 ms each on a GPU
    cudaDeviceSynchronize();
    printf("%s %d\n", *took >= khz * 20LL ? "waited" : "too short", *took < khz * 2000LL);
}""")
    assert r.stdout == "waited 1\n", r.stderr
    assert time.process_time() - start < 5
