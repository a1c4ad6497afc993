"""A host-code crash that is a stack overflow is named as one, not as a bad pointer.

A course's helper class whose ``data()`` and ``device_ptr()`` call each other for pinned memory (a
Chinese practice repository's ``Memory<T, kPinned>``) recurses until the stack runs out, and a student's
``float big[1 << 24]`` inside main is 64 MB on an 8 MB stack: both end with SIGSEGV, as on any Linux
machine, and "a bad host pointer" sent the reader to look for an array too small. The program's
runtime now notes where the stack pointer was when the fault came (shim/stackguard.c).
"""
import resource

import pytest

from cudalab.programs import run_program_source


@pytest.fixture(autouse=True)
def linux_default_stack():
    """The program inherits this process's stack limit: pinned to Linux's usual 8 MB, as the examples assume
    (with `ulimit -s unlimited`, as some machines and one CI run had, the 64 MB array fits and a recursion
    runs until the memory is gone)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_STACK)
    if hard != resource.RLIM_INFINITY and hard < 8 << 20:
        pytest.skip("this machine's hard stack limit is under 8 MB")
    resource.setrlimit(resource.RLIMIT_STACK, (8 << 20, hard))
    yield
    resource.setrlimit(resource.RLIMIT_STACK, (soft, hard))

ENDLESS = r"""#include <cstdio>
struct Buffer {
    float *raw = nullptr;
    float *data() { return device_ptr(); }         // each asks the other, and nothing stops
    float *device_ptr() { return data(); }
};
__global__ void touch(float *p) { if (p) p[threadIdx.x] = 1; }
int main() {
    Buffer b;
    float *d = b.data();
    touch<<<1, 1>>>(d);
    printf("%p\n", (void *)d);
}
"""

LOCAL_ARRAY = r"""#include <cstdio>
__global__ void noop() {}
int main() {
    float big[1 << 24];                              // 64 MB on the stack
    for (int i = 0; i < (1 << 24); ++i) big[i] = i;
    noop<<<1, 1>>>();
    printf("%f\n", big[12345]);
}
"""

NULL_POINTER = r"""#include <cstdio>
__global__ void noop() {}
int main(int argc, char **argv) {
    int *p = argc > 5 ? new int[4] : nullptr;
    noop<<<1, 1>>>();
    p[3] = 7;
    printf("%d\n", p[3]);
}
"""


def test_a_recursion_that_never_stops_is_told_as_a_stack_overflow():
    r = run_program_source(ENDLESS, options=["-O0"], timeout=120)
    assert r.returncode == -11
    assert "cudalab: the program crashed (SIGSEGV). It ran out of stack" in r.stderr
    assert "a recursion that does not end" in r.stderr
    assert "bad host pointer" not in r.stderr


def test_a_local_array_larger_than_the_stack_is_told_as_a_stack_overflow():
    r = run_program_source(LOCAL_ARRAY, timeout=120)
    assert r.returncode == -11
    assert "It ran out of stack" in r.stderr and "large local array" in r.stderr


def test_a_null_pointer_is_still_a_bad_pointer():
    r = run_program_source(NULL_POINTER, timeout=120)
    assert r.returncode == -11
    assert "usually means a bad host pointer" in r.stderr
    assert "ran out of stack" not in r.stderr
