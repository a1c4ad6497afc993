"""Processes a program starts with fork(), as a GPU treats them (an H200 answered the same program,
forked before and after the parent's first CUDA call): a child forked before the parent used CUDA has
a GPU of its own to use; a child forked after it gets cudaErrorInitializationError from every call
that needs a context, while device queries still answer."""
import pytest

from cudalab.programs import run_program_source




def run(source):
    return run_program_source(source, timeout=120)


def test_a_child_forked_before_the_first_cuda_call_uses_the_gpu_beside_its_parent():
    # both processes allocate (the same device addresses, each its own memory), and the child fills its
    # buffer while the parent's holds its own numbers: as on a GPU, neither sees the other's bytes
    r = run(r"""#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
__device__ int calls;
__global__ void fill(int *x, int v) { x[threadIdx.x] = v + threadIdx.x; atomicAdd(&calls, 1); }
__global__ void hello(int who) { if (threadIdx.x == 0) printf("kernel of the %s\n", who ? "child" : "parent"); }
int main() {
    int go[2], done[2];
    pipe(go), pipe(done);
    pid_t child = fork();
    int *d = nullptr, h[8], n = 0;
    char byte = 0;
    cudaMalloc(&d, sizeof h);
    if (child == 0) {
        read(go[0], &byte, 1);              // the parent has filled its buffer
        fill<<<1, 8>>>(d, 100);
        hello<<<1, 32>>>(1);
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        cudaMemcpyFromSymbol(&n, calls, sizeof n);
        printf("child: %s %d %d calls %d\n", cudaGetErrorName(cudaGetLastError()), h[0], h[7], n);
        fflush(stdout);
        write(done[1], &byte, 1);
        return 0;
    }
    fill<<<1, 8>>>(d, 0);
    cudaDeviceSynchronize();
    write(go[1], &byte, 1);
    read(done[0], &byte, 1);                // the child has run its kernels
    fill<<<1, 4>>>(d, 0);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpyFromSymbol(&n, calls, sizeof n);
    int status = 0;
    waitpid(child, &status, 0);
    printf("parent: %s %d %d calls %d, child exit %d\n", cudaGetErrorName(cudaGetLastError()), h[0], h[7], n,
           WEXITSTATUS(status));
    return 0;
}
""")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("kernel of the child\nchild: cudaSuccess 100 107 calls 8\n"
                        "parent: cudaSuccess 0 7 calls 12, child exit 0\n"), r.stdout + r.stderr


def test_a_child_forked_after_the_parent_used_cuda_gets_the_initialization_error_and_the_parent_runs_on():
    r = run(r"""#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
__global__ void square(int *x) { x[threadIdx.x] *= x[threadIdx.x]; }
int main() {
    cudaFree(0);                            // the parent's context exists
    pid_t child = fork();
    int *d = nullptr, h[8] = {0, 1, 2, 3, 4, 5, 6, 7}, count = 0;
    if (child == 0) {
        cudaError_t c = cudaGetDeviceCount(&count);
        cudaDeviceProp p;
        cudaError_t q = cudaGetDeviceProperties(&p, 0);
        cudaError_t m = cudaMalloc(&d, sizeof h);
        square<<<1, 8>>>(d);
        cudaError_t l = cudaGetLastError();
        printf("child: %s %d, %s %d, %s, %s, %s\n", cudaGetErrorName(c), count, cudaGetErrorName(q),
               p.multiProcessorCount > 0, cudaGetErrorName(m), cudaGetErrorName(l),
               cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    waitpid(child, nullptr, 0);
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    square<<<1, 8>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("parent: %s %d %d\n", cudaGetErrorName(cudaGetLastError()), h[3], h[7]);
    return 0;
}
""")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("child: cudaSuccess 1, cudaSuccess 1, cudaErrorInitializationError, "
                        "cudaErrorInitializationError, cudaErrorInitializationError\n"
                        "parent: cudaSuccess 9 49\n"), r.stdout + r.stderr
    assert "fork()" in r.stderr and "does not survive" in r.stderr


def test_a_forked_childs_emulator_runs_the_checks_the_program_runs_with():
    # cudalab run --check memcheck: a write one element past an array's end, which a GPU runs, stops the
    # child's kernel as it stops the parent's
    import cudalab
    with cudalab.check("memcheck"):
        r = run(r"""#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
__global__ void one_past(int *x) { x[threadIdx.x + 1] = 1; }
int main() {
    pid_t child = fork();
    int *d;
    cudaMalloc(&d, 64 * sizeof(int));
    one_past<<<1, 64>>>(d);
    cudaError_t e = cudaDeviceSynchronize();
    if (child == 0) {
        printf("child: %s\n", cudaGetErrorName(e));
        return 0;
    }
    waitpid(child, nullptr, 0);
    printf("parent: %s\n", cudaGetErrorName(e));
    return 0;
}
""")
    assert r.stdout == "child: cudaErrorIllegalAddress\nparent: cudaErrorIllegalAddress\n", r.stdout + r.stderr


def test_a_forked_childs_host_functions_run_on_its_own_driver_thread():
    # the child's cudaLaunchHostFunc is its emulator's to call back, and the parent's still runs its own
    r = run(r"""#include <cstdio>
#include <sys/wait.h>
#include <unistd.h>
static void CUDART_CB note(void *who) { printf("host function of the %s\n", (const char *)who); fflush(stdout); }
int main() {
    pid_t child = fork();
    if (child == 0) {                       // its first CUDA call starts the driver thread
        cudaLaunchHostFunc(0, note, (void *)"child");
        printf("child: %s\n", cudaGetErrorName(cudaStreamSynchronize(0)));
        return 0;
    }
    waitpid(child, nullptr, 0);
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaLaunchHostFunc(s, note, (void *)"parent");
    printf("parent: %s\n", cudaGetErrorName(cudaStreamSynchronize(s)));
    return 0;
}
""")
    assert r.returncode == 0, r.stderr
    assert r.stdout == ("host function of the child\nchild: cudaSuccess\n"
                        "host function of the parent\nparent: cudaSuccess\n"), r.stdout + r.stderr


def test_a_forked_child_that_outlives_its_programs_time_limit_is_ended_with_it():
    # the parent returns at once; its child runs on past the program's time limit, as an orphan would
    import subprocess
    import time
    from pathlib import Path
    r = run_program_source(r"""#include <cstdio>
#include <unistd.h>
__global__ void spin(volatile int *flag) { while (*flag == 0) {} }
int main() {
    pid_t child = fork();
    if (child == 0) {
        int *flag;
        cudaMalloc(&flag, sizeof(int));
        cudaMemset(flag, 0, sizeof(int));
        spin<<<1, 1>>>(flag);               // never ends
        printf("child: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
        return 0;
    }
    printf("%d\n", (int)child);
    return 0;
}
""", timeout=8)
    assert r.returncode == 0, r.stderr
    child = r.stdout.split()[0]
    time.sleep(12)          # past the limit: the child's emulator has stopped, and the child with it
    servers = subprocess.run(["pgrep", "-f", f"cudalab.programs.forked [0-9]+ {child}$"], capture_output=True,
                             text=True).stdout.split()
    assert not servers
    state = Path(f"/proc/{child}/stat")
    assert not state.exists() or state.read_text().split(") ")[1][0] == "Z"     # gone (or waiting to be reaped)
