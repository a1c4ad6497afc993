"""The cycle collector while a program is served (programs/collector.py): what lives long is left out of
its walks, and a notebook that runs program after program gets the collector back as it was."""
import gc

from cudalab.programs.collector import FREEZE_EVERY, FrozenWhileServing
from cudalab.programs import run_program_source


def test_objects_that_outlive_the_first_requests_are_left_out_of_the_collectors_walks():
    before = gc.get_freeze_count()
    with FrozenWhileServing() as frozen:
        at_start = gc.get_freeze_count()
        assert at_start > before                 # cudalab, the parsed program: all there when serving begins
        kept = [[i] for i in range(5000)]        # a long program's launch records, say
        for _ in range(FREEZE_EVERY):
            frozen.answered()
        assert gc.get_freeze_count() >= at_start + len(kept)
    assert gc.get_freeze_count() == 0            # collected as before once the program has ended


def test_a_program_that_launches_in_a_loop_leaves_the_collector_as_it_found_it():
    r = run_program_source(r"""#include <cstdio>
__global__ void inc(int *x) { x[threadIdx.x] += 1; }
int main() {
    int *d, h[32];
    cudaMalloc(&d, sizeof h);
    cudaMemset(d, 0, sizeof h);
    for (int i = 0; i < 1500; i++) inc<<<1, 32>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    printf("%d %d\n", h[0], h[31]);
}
""", timeout=120)
    assert r.stdout == "1500 1500\n", r.stderr
    assert gc.get_freeze_count() == 0 and gc.isenabled()
