"""A program that times runtime calls with the host's clock is told what that clock measured.

Benchmarks time launches and copies with std::chrono or gettimeofday as often as with CUDA events
(the CUDA Handbook's launch and memcpy latencies, Professional CUDA C's ``seconds()``). On the
emulator that clock sees the emulator's own pace: milliseconds a call where a GPU takes
microseconds. The clock stays the host's; the program is told at exit.
"""
from cudalab.programs import run_program_source

NOTE = "read the host's clock (std::chrono, clock_gettime or gettimeofday) around CUDA calls"


def run(source):
    return run_program_source("#include <cstdio>\n" + source, timeout=120)


def test_launches_timed_with_chrono_and_gettimeofday_are_called_the_emulators_pace():
    r = run(r"""#include <chrono>
#include <sys/time.h>
__global__ void nothing() {}
int main() {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; i++) nothing<<<1, 1>>>();
    cudaDeviceSynchronize();
    auto t1 = std::chrono::steady_clock::now();
    struct timeval a, b;
    gettimeofday(&a, 0);
    cudaDeviceSynchronize();
    gettimeofday(&b, 0);
    printf("%d %d\n", t1 > t0, b.tv_sec * 1000000 + b.tv_usec >= a.tv_sec * 1000000 + a.tv_usec);
}""")
    assert r.returncode == 0 and r.stdout == "1 1\n"       # the clock itself is the host's, untouched
    # 10 launches (the first also asks for the kernel's parameters) and a synchronization between
    # chrono's readings, one between gettimeofday's
    assert f"cudalab: this program {NOTE}: between those readings the emulator answered 13 requests in" in r.stderr
    assert "CUDA events (cudaEventElapsedTime) give the modelled GPU's time" in r.stderr


def test_a_host_loop_timed_with_no_runtime_call_inside_gets_no_note():
    r = run(r"""#include <chrono>
int main() {
    int *d;
    cudaMalloc(&d, 4);
    auto t0 = std::chrono::steady_clock::now();
    volatile double x = 0;
    for (int i = 0; i < 100000; i++) x = x + 1;
    auto t1 = std::chrono::steady_clock::now();
    cudaFree(d);
    printf("%d\n", t1 > t0);
}""")
    assert r.returncode == 0 and r.stdout == "1\n"
    assert NOTE not in r.stderr
