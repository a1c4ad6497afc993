"""An -rdc=true source may declare a kernel of another file where it launches it, inside the
launching kernel's body (PyCUDA's own test of linked modules does). cudalab asks NVRTC for the lowered
name of every kernel it finds in the text; a name declared only in a function's scope is not visible
where NVRTC reads the request, which was a compile error ('identifier ... is undefined'). Such
declarations are skipped; braces inside comments and string or character literals do not count."""
import cudalab

SOURCE = r'''// a comment with an open brace {
/* and { another */
__global__ void first(int *p) { printf("{%d\n", *p); char c = '{'; p[0] = c; }
__global__ void launcher(int *p) {
    extern __global__ void elsewhere(int *);     // defined in another file
    elsewhere<<<1, 1>>>(p);
}
__global__ void last(int *p) { p[0] = 3; }
'''


def test_kernels_declared_inside_a_function_are_not_the_modules_kernels():
    module = cudalab.compile(SOURCE, options=("-rdc=true",))
    assert sorted(module.kernels) == ["first", "last", "launcher"]
