"""A program that reads its size from the command line and is run without it is told so when it crashes.

Course programs often start ``int n = atoi(argv[1]);`` with no look at argc (Stanford CME 213's reduction
samples). Run bare, ``argv[1]`` is NULL and the host code crashes before any CUDA call: the student
should hear which argument the program wanted, not only that a host pointer was bad.
"""
from cudalab.programs import run_program_source

SIZED = r"""#include <cstdio>
#include <cstdlib>
__global__ void fill(int *a, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) a[i] = i; }
int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    int *a;
    cudaMalloc(&a, n * sizeof(int));
    fill<<<(n + 255) / 256, 256>>>(a, n);
    int last;
    cudaMemcpy(&last, a + n - 1, sizeof(int), cudaMemcpyDeviceToHost);
    printf("last %d\n", last);
}
"""


def test_a_program_run_without_the_size_it_reads_from_argv_is_told_which_argument_it_missed():
    r = run_program_source(SIZED, timeout=120)
    assert r.returncode != 0
    assert "cudalab: the program crashed (SIGSEGV)." in r.stderr
    assert "perhaps argv[1]: the program reads it, but was given no arguments, so it is NULL" in r.stderr
    assert "cudalab run prog.cu -- 1024" in r.stderr


def test_the_same_program_given_its_size_runs_and_says_nothing_of_arguments():
    r = run_program_source(SIZED, args=["1000"], timeout=120)
    assert (r.returncode, r.stdout) == (0, "last 999\n")
    assert "argv" not in r.stderr
