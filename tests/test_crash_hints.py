"""A program that crashes in its host code is told what the signal usually means there.

A Spanish course's timing loop tries block sizes from 0 upward, and its first grid size,
``(n + block - 1) / block``, divides by zero: x86 raises SIGFPE for an integer division, which a
student reads as a floating-point error. An ``assert`` on a wrong result (a notebook's exercise left
blank) ends the program with SIGABRT; the message that says why is the assert's own line.
"""
from cudalab.programs import run_program_source

BLOCK_SIZES = r"""#include <cstdio>
#include <cstdlib>
__global__ void add(float *c, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] += 1; }
int main(int argc, char **argv) {
    int n = 1 << 20;
    float *c;
    cudaMalloc(&c, n * sizeof(float));
    for (int block = atoi(argc > 1 ? argv[1] : "0"); block <= 1024; block += 256) {
        int grid = (n + block - 1) / block;
        add<<<grid, block>>>(c, n);
    }
    cudaDeviceSynchronize();
    printf("done\n");
}
"""

CHECKED = r"""#include <cassert>
__global__ void fill(int *a) { a[threadIdx.x] = 0; }
int main() {
    int *a, h[32];
    cudaMalloc(&a, sizeof h);
    fill<<<1, 32>>>(a);
    cudaMemcpy(h, a, sizeof h, cudaMemcpyDeviceToHost);
    assert(h[31] == 31);
}
"""


def test_an_integer_division_by_a_zero_block_size_is_named_as_such():
    r = run_program_source(BLOCK_SIZES, timeout=120)
    assert "cudalab: the program crashed (SIGFPE)." in r.stderr
    assert "integer division (or remainder) by zero, not a floating-point error" in r.stderr


def test_the_same_loop_started_at_a_real_block_size_runs():
    r = run_program_source(BLOCK_SIZES, args=["256"], timeout=120)
    assert (r.returncode, r.stdout) == (0, "done\n")


def test_a_failed_assert_points_at_its_own_message():
    r = run_program_source(CHECKED, timeout=120)
    assert "Assertion `h[31] == 31' failed" in r.stderr
    assert "cudalab: the program crashed (SIGABRT). The program aborted itself: an assert()" in r.stderr


HEAP_OVERRUN = r"""#include <cstdio>
#include <cstdlib>
__global__ void show(const int *a) { printf("%d\\n", a[threadIdx.x]); }
int main() {
    int n = 48;
    int bytes = n * sizeof(int);
    int *h = (int *)malloc(bytes);
    for (int i = 0; i < bytes; i++) h[i] = i;       // bytes used as a count of ints: 4 times too far
    int *d;
    cudaMalloc(&d, bytes);
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    show<<<1, 2>>>(d);
    cudaDeviceSynchronize();
    free(h);
    return 0;
}
"""


def test_a_heap_overrun_that_glibc_stops_is_explained():
    # glibc finds its heap damaged at a later malloc or free and aborts: the note says what that means
    r = run_program_source(HEAP_OVERRUN, timeout=120)
    assert r.returncode != 0 and "cudalab: the program crashed (SIGABRT)." in r.stderr, r.stderr
    assert "wrote past the end of an array it allocated" in r.stderr
