"""The process serving a program keeps the memory a launch freed for the next launch (programs/heap.py)."""
import resource

import numpy as np
import pytest

from cudalab.programs import heap


def launch_like():
    """What a launch does with its register arrays: 25 of 4 MB written (100 MB, more than glibc
    ever keeps on its own), then all freed at its end."""
    arrays = [np.empty(4 << 20, np.uint8) for _ in range(25)]
    for a in arrays:
        a.fill(1)


def page_faults(work):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    work()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_a_second_launch_touches_the_pages_the_first_one_freed():
    if not heap.keep_freed_memory():
        pytest.skip("this C library has no mallopt (glibc's): freed memory goes back to the system")
    launch_like()
    assert page_faults(launch_like) < 2_000         # fresh pages: 25,600 faults
