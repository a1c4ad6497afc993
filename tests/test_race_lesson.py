"""A kernel that increments one global variable without an atomic loses updates, as on a GPU.

Race lessons (Professional CUDA C Programming's atomic-ordering, chapter 7) compare atomicAdd with a
plain `*shared_var += 1` by every thread: on an H200 the plain kernel's 64 threads all read 0 and the
total is 100,001 instead of 6,400,064, because a warp's threads all load before any stores. The
compiled tier's regions run one thread from its load to its store before the next thread starts,
which made every update land (6,400,064, thread k reading k x 100,000); such a store is now left to
the interpreter (regions.shared_updates), so the threads load and store in lock step.
"""
import numpy as np

import cudalab

SRC = r"""
extern "C" __global__ void unsafe(int *shared_var, int *values_read, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    int old = *shared_var;                  // every thread reads the same variable ...
    for (int i = 0; i < iters; i++)
        old = old + 1;
    *shared_var = old;                      // ... and writes it back without an atomic
    values_read[tid] = old - iters;
}

extern "C" __global__ void own_element(int *counts, int iters)
{
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < iters; i++)
        counts[tid] = counts[tid] + 1;      // each thread its own element: no race, native as before
}
"""


def test_a_plain_increment_of_one_variable_loses_the_other_threads_updates(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")       # (a launch this small would stay interpreted)
    mod = cudalab.compile(SRC)
    total = cudalab.to_device(np.zeros(1, np.int32))
    seen = cudalab.to_device(np.full(64, -1, np.int32))
    for _ in range(3):
        total.copy_to_device(np.zeros(1, np.int32))
        mod.unsafe[2, 32](total, seen, np.int32(1000))
    assert total.copy_to_host()[0] == 1000         # one thread's 1,000 increments survive
    assert (seen.copy_to_host() == 0).all()        # every thread read the variable before any wrote it


def test_threads_updating_their_own_elements_still_get_every_update(monkeypatch):
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    mod = cudalab.compile(SRC)
    counts = cudalab.to_device(np.zeros(4096, np.int32))
    for _ in range(3):
        mod.own_element[16, 256](counts, np.int32(50))
    assert (counts.copy_to_host() == 150).all()


def test_numbas_unguarded_sum_into_one_element_loses_updates_too(monkeypatch):
    """The same lesson in numba.cuda (a GPU tutorial's ``naive_sum`` beside its ``atomic_sum``): numba's
    PTX makes ``out``'s global address inside the ``if``, after the kernel's first branch, and it
    must still count as one address for the whole block: the plain sum comes out wrong, the atomic one
    right (a GPU printed -2.45 where the array's sum was -846.6)."""
    monkeypatch.setenv("CUDALAB_TIER", "compiled")
    import cudalab.numba
    cudalab.numba.install()
    try:
        from numba import cuda

        @cuda.jit
        def naive_sum(values, out):
            i = cuda.grid(1)
            if i < len(values):
                out[0] += values[i]

        @cuda.jit
        def atomic_sum(values, out):
            i = cuda.grid(1)
            if i < len(values):
                cuda.atomic.add(out, 0, values[i])

        values = np.ones(4096)
        plain, atomic = np.zeros(1), np.zeros(1)
        naive_sum[4, 1024](values, plain)
        atomic_sum[4, 1024](values, atomic)
        assert plain[0] < 4096 and atomic[0] == 4096
    finally:
        cudalab.numba.uninstall()
