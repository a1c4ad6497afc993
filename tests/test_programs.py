"""Whole CUDA programs (int main) run unchanged on the emulated GPU through cudalab's libcudart.

The first build of each program runs nvcc (several seconds); builds are cached by content in
~/.cache/cudalab (or $CUDALAB_CACHE), so later runs take about a second each.
"""
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from cudalab.errors import CompileError
from cudalab.programs import has_main, run_program, run_program_source
from cudalab.programs.build import build, shim_library
from cudalab.programs.command import parse_nvcc
from cudalab.programs.compare import comparable

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
PROGRAMS = [p for p in sorted(EXAMPLES.glob("*.cu")) if has_main(p.read_text())]


def run(source, args=(), **kw):
    return run_program_source("#include <cstdio>\n" + source, args, timeout=120, line_offset=1, **kw)


def test_there_are_at_least_15_example_programs():
    assert len(PROGRAMS) >= 15
    assert not has_main((EXAMPLES / "vector_add.cu").read_text())     # a kernel file with // cudalab: lines


@pytest.fixture(scope="module")
def built_examples():
    """Build every example at once (nvcc is the slow part; builds are cached afterwards). Each is
    built as ``run_program(path)`` builds it, the file where it lies from this folder: the cache
    knows a unit by its path and folder, so a copy built elsewhere would be built again."""
    shim_library()
    with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        list(pool.map(lambda p: build(parse_nvcc([str(p)]), os.getcwd()), PROGRAMS))


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_example_program_prints_what_it_printed_before(path, built_examples):
    result = run_program(path, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Result = PASS" in result.stdout
    expected = (EXAMPLES / "expected" / f"{path.stem}.out").read_text()
    assert comparable(result.stdout, keep_device=True) == expected


def test_vector_add_in_a_cell_returns_output_exit_code_and_launches():
    r = run("""
__global__ void add(const int *a, const int *b, int *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
int main(int argc, char **argv) {
    int n = 1000, a[1000], b[1000], c[1000];
    for (int i = 0; i < n; ++i) a[i] = i, b[i] = 10 * i;
    int *da, *db, *dc;
    cudaMalloc(&da, sizeof a); cudaMalloc(&db, sizeof b); cudaMalloc(&dc, sizeof c);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    add<<<4, 256>>>(da, db, dc, n);
    cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    printf("c[999] = %d, argv[1] = %s\\n", c[999], argv[1]);
    return 7;
}
""", args=["hello"])
    assert r.stdout == "c[999] = 10989, argv[1] = hello\n"
    assert r.returncode == 7
    [launch] = r.launches
    assert (launch.kernel, launch.grid, launch.block) == ("add", (4, 1, 1), (256, 1, 1))


def test_device_printf_appears_at_the_next_synchronization_between_host_lines():
    r = run("""
__global__ void hi() { printf("device %d\\n", threadIdx.x); }
int main() {
    printf("host 1\\n");
    hi<<<1, 3>>>();
    printf("host 2 (the kernel's lines are still in the GPU's printf buffer)\\n");
    cudaDeviceSynchronize();
    printf("host 3\\n");
}
""")
    assert r.stdout.splitlines() == ["host 1", "host 2 (the kernel's lines are still in the GPU's printf buffer)",
                                     "device 0", "device 1", "device 2", "host 3"]


def test_errors_have_cuda_codes_and_texts_and_out_of_bounds_is_sticky():
    r = run("""
__global__ void poke(int *p) { p[1 << 28] = 1; }   // 1 GiB past: no allocation near (slack.py)
int main() {
    int *d;
    cudaMalloc(&d, 64);
    printf("%s\\n", cudaGetErrorString(cudaMemcpy(d, d, 128, cudaMemcpyDeviceToDevice)));
    printf("%s\\n", cudaGetErrorName(cudaGetLastError()));
    printf("%s\\n", cudaGetErrorName(cudaGetLastError()));
    poke<<<1, 1>>>(d);
    printf("launch: %s\\n", cudaGetErrorName(cudaGetLastError()));
    printf("sync: %s\\n", cudaGetErrorString(cudaDeviceSynchronize()));
    printf("later: %s\\n", cudaGetErrorName(cudaMalloc(&d, 4)));
}
""")
    assert r.stdout.splitlines() == ["invalid argument", "cudaErrorInvalidValue", "cudaSuccess",
                                     "launch: cudaSuccess", "sync: an illegal memory access was encountered",
                                     "later: cudaErrorIllegalAddress"]
    assert "poke" in r.stderr          # the emulator says where: kernel, thread, line


def test_streams_events_and_host_functions_keep_stream_order():
    r = run("""
__global__ void set(int *p, int v) { *p = v; }
void CUDART_CB show(void *p) { printf("host function sees %d\\n", *(int *)p); }
int main() {
    int *m; cudaStream_t s; cudaEvent_t a, b; float ms;
    cudaMallocManaged(&m, 4);
    cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, -1);
    cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a, s);
    set<<<1, 1, 0, s>>>(m, 42);
    cudaLaunchHostFunc(s, show, m);
    cudaEventRecord(b, s);
    cudaEventSynchronize(b);
    int prio; cudaStreamGetPriority(s, &prio);
    cudaError_t e = cudaEventElapsedTime(&ms, a, b);
    printf("%s %d %d\\n", cudaGetErrorName(e), ms > 0, prio);
}
""")
    assert r.stdout == "host function sees 42\ncudaSuccess 1 -1\n"


def test_host_code_between_two_events_takes_its_cpu_time_on_the_gpu_clock():
    """A course times its CPU version with the same CUDA events as its kernel: the events on an idle
    stream stand as far apart as the host's own work between them, as on a GPU (not 0 ms)."""
    r = run("""
#include <ctime>
int main() {
    cudaEvent_t a, b; float ms;
    cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a);
    clock_t t0 = clock();
    volatile double s = 0;
    while (clock() - t0 < CLOCKS_PER_SEC / 20) s += 1.0;      // about 50 ms of CPU
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    cudaEventElapsedTime(&ms, a, b);
    printf("%.0f\\n", ms);
}
""")
    assert 45 <= float(r.stdout) <= 80


def test_a_runtime_call_cudalab_lacks_links_and_answers_not_supported_naming_the_feature():
    r = run("""
int main() {
    int *d; cudaIpcMemHandle_t h;
    cudaMalloc(&d, 64);
    printf("%s\\n", cudaGetErrorName(cudaIpcGetMemHandle(&h, d)));
    printf("%s\\n", cudaGetErrorName(cudaGetLastError()));
    printf("%s\\n", cudaGetErrorName(cudaIpcGetMemHandle(&h, d)));
}""")
    assert r.stdout.splitlines() == ["cudaErrorNotSupported"] * 3
    assert r.stderr.count("cudaIpcGetMemHandle is not supported by the emulated GPU") == 1
    assert "(IPC)" in r.stderr


def test_compile_errors_point_at_the_cells_own_lines():
    with pytest.raises(CompileError) as e:
        run("int main() {\n    int x = undefined_thing;\n}")
    assert "cell.cu(2): error" in str(e.value) and "undefined_thing" in str(e.value)


def test_a_cuda_cell_with_main_runs_as_a_program(capsys):
    from IPython.core.interactiveshell import InteractiveShell
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "cudalab")
    capsys.readouterr()         # "already loaded" when another test loaded it in this shell first
    ip.run_cell_magic("cuda", "", """#include <cstdio>
__global__ void twice(int *x) { x[threadIdx.x] *= 2; }
int main() {
    int h[4] = {1, 2, 3, 4}, *d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %d %d %d\\n", h[0], h[1], h[2], h[3]);
}
""")
    assert capsys.readouterr().out == "2 4 6 8\n"
    assert ip.user_ns["program_result"].launches[0].kernel == "twice"
