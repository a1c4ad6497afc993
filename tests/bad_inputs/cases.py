"""Broken cells and calls a student will write, each with the error it must get.

One ``Case`` per line: a CUDA source (compiled first; None: nothing to compile), a Python call run with
``mod`` (the compiled module), ``k`` (its first kernel), ``np``, ``cudalab`` and the host arrays ``a``
(64 float32 ones), ``c`` (64 float32 zeros) and ``ia`` (64 int32 zeros), the error class a student
gets, and substrings of its message. ``error=None`` means the call must simply work. ``bad`` marks a
case whose message is not yet good enough (a Python internal error, a wrong diagnosis, or no error
at all): the test is an expected failure until the message is fixed, and ``bad`` says what is wrong.
"""
from __future__ import annotations

from dataclasses import dataclass

from cudalab import CompileError, CudaError, KernelError, LaunchError, UnsupportedError


@dataclass
class Case:
    name: str
    source: str | None
    call: str
    error: type | None
    contains: tuple = ()
    code: str | None = None          # CUDA's enum name, when the error has one
    bad: str = ""                    # why the current message is not good enough (xfail)
    slow: bool = False               # takes minutes today: not run while ``bad``


ADD = """__global__ void add(const float *a, const float *b, float *c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}"""
DYN = "__global__ void k(float *a) { extern __shared__ float s[]; s[threadIdx.x] = 1; a[threadIdx.x] = s[threadIdx.x]; }"
TEMPLATE = "template<int N> __global__ void scale(float *a) { a[threadIdx.x] *= N; }"
IL = "cudaErrorIllegalAddress"
CFG = "cudaErrorInvalidValue"   # what CUDA 13 answers on an H100 for bad launch shapes
VAL = "cudaErrorInvalidValue"

CASES = [
    # ---------------------------------------------------------------- the cell does not compile
    Case("missing semicolon", "__global__ void k(int *a) { a[0] = 1 }", "", CompileError, ("line 1", 'expected a ";"')),
    Case("unknown variable", "__global__ void k(int *a) { a[0] = x; }", "", CompileError, ('identifier "x" is undefined',)),
    Case("unknown function", "__global__ void k(int *a) { a[0] = foo(1); }", "", CompileError, ('identifier "foo" is undefined',)),
    Case("pointer types mixed", "__global__ void k(int *a, float *b) { a = b; }", "", CompileError,
         ('a value of type "float *" cannot be assigned to an entity of type "int *"',)),
    Case("host function called from a kernel", "int h() { return 1; }\n__global__ void k(int *a) { a[0] = h(); }", "",
         CompileError, ("host function",)),
    Case("missing closing brace", "__global__ void k(int *a) { a[0] = 1;", "", CompileError, ('expected a "}"',)),
    Case("C++ standard library header", "#include <vector>\n__global__ void k(int *a) { }", "", CompileError,
         ('cannot open source file "vector"',)),
    Case("own header file", '#include "mine.h"\n__global__ void k(int *a) { }', "", CompileError,
         ('cannot open source file "mine.h"',)),
    Case("static_assert fails", '__global__ void k(int *a) { static_assert(sizeof(int) == 8, "int must be 8 bytes"); }', "",
         CompileError, ('static assertion failed with "int must be 8 bytes"',)),
    Case("kernel returns a value", "__global__ int k(int *a) { return 1; }", "", CompileError,
         ("a __global__ function must have a void return type",)),
    Case("bad compiler option", "__global__ void k() {}", "cudalab.compile('__global__ void k(){}', options=('-arch=sm_999',))",
         CompileError, ("--gpu-architecture",)),
    Case("source is None", None, "cudalab.compile(None)", CudaError, ("CUDA C++ source", "str")),
    Case("source is bytes", None, "cudalab.compile(b'__global__ void k(){}')", CudaError, ("str",)),
    Case("options as one string", None, "assert cudalab.compile('__global__ void k(){}', options='-O3 -DN=4').kernels == ['k']",
         None),
    Case("function pointer (supported: it runs)", "__device__ int f1(int x){return x+1;} __device__ int f2(int x){return x*2;}\n"
         "__global__ void k(int *a) { int (*f)(int) = (a[0] ? f1 : f2); a[threadIdx.x] = f(threadIdx.x); }",
         "k[1, 32](ia); assert (ia == 2 * np.arange(64) * (np.arange(64) < 32)).all()", None),
    # ---------------------------------------------------------------- which kernel
    Case("kernel name typo", ADD, "mod.get_kernel('ad')", CudaError, ("no kernel called 'ad'", "its kernels: add"),
         code="cudaErrorInvalidDeviceFunction"),
    Case("kernel attribute typo", ADD, "mod.Add", CudaError, ("no kernel called 'Add'", "its kernels: add")),
    Case("empty cell", "", "mod.get_kernel('k')", CudaError, ("no kernel called 'k'", "its kernels: none")),
    Case("__device__ instead of __global__", "__device__ void k(int *a) { a[0] = 1; }", "mod.get_kernel('k')", CudaError,
         ("no kernel called 'k'", "Kernels need __global__")),
    Case("template without arguments", TEMPLATE, "mod.get_kernel('scale')", CudaError,
         ("no kernel called 'scale'", "templates are named with their arguments")),
    Case("template with a type for an int", TEMPLATE, "mod.get_kernel('scale<float>')", CompileError,
         ("scale<float>", "int N")),
    Case("kernel name not a string", ADD, "mod.get_kernel(123)", CudaError, ("123",)),
    Case("kernel called without [grid, block]", ADD, "k(a, a, c, 64)", LaunchError, ("kernel[grid, block]",)),
    # ---------------------------------------------------------------- arguments
    Case("too few arguments", ADD, "k[1, 64](a, a, c)", LaunchError,
         ("add takes 4 arguments (const float*, const float*, float*, int), but 3 were given",), code=VAL),
    Case("too many arguments", ADD, "k[1, 64](a, a, c, 64, 5)", LaunchError, ("but 5 were given",), code=VAL),
    Case("float where float* is declared", ADD, "k[1, 64](1.5, a, c, 64)", LaunchError,
         ("argument 1 of add (const float*) is a pointer", "not float 1.5"), code=VAL),
    Case("list where float* is declared", ADD, "k[1, 64]([1.0] * 64, a, c, 64)", LaunchError,
         ("argument 1 of add (const float*) is a pointer", "not list"), code=VAL),
    Case("0-d array where float* is declared", ADD, "k[1, 64](np.array(5.0, np.float32), a, c, 64)", LaunchError,
         ("is a pointer", "shape ()"), code=VAL),
    Case("string for an int", ADD, "k[1, 64](a, a, c, '64')", LaunchError, ("argument 4 of add (int) is a number", "str '64'")),
    Case("array for an int", ADD, "k[1, 64](a, a, c, np.arange(3))", LaunchError, ("argument 4 of add (int)", "numpy array")),
    Case("2.5 for an int", ADD, "k[1, 64](a, a, c, 2.5)", LaunchError, ("is an integer, but you passed 2.5",)),
    Case("int too big for int", ADD, "k[1, 64](a, a, c, 2**40)", LaunchError, ("does not fit", "2,147,483,647")),
    Case("negative for unsigned", "__global__ void k(int *a, unsigned n) { a[0] = n; }", "k[1, 1](ia, -1)", LaunchError,
         ("unsigned int: the value -1 does not fit",)),
    Case("dict for an int", ADD, "k[1, 64](a, a, c, {})", LaunchError, ("is a number, but you passed dict",)),
    Case("complex for an int", ADD, "k[1, 64](a, a, c, 1j)", LaunchError, ("is a number, but you passed complex",)),
    Case("int for a struct", "struct P { int x; float y; };\n__global__ void k(int *a, P p) { a[0] = p.x; }",
         "k[1, 1](ia, 5)", LaunchError, ("struct of 8 bytes",)),
    Case("float64 array for float*", ADD, "k[1, 64](np.ones(64), a, c, 64)", LaunchError, ("float64", "float*")),
    Case("int32 array for float*", ADD, "k[1, 64](np.ones(64, np.int32), a, c, 64)", LaunchError, ("int32", "float*")),
    Case("float64 device array for float*", ADD, "k[1, 64](cudalab.to_device(np.ones(64)), a, c, 64)", LaunchError,
         ("float64", "float*")),
    Case("non-contiguous output array", ADD,
         "x = np.zeros(128, np.float32); k[1, 64](a, a, x[::2], 64); assert (x[::2] == 2).all() and (x[1::2] == 0).all()", None),
    Case("non-contiguous array to_device", ADD,
         "d = cudalab.to_device(np.ones((64, 2), np.float32)[:, 0]); k[1, 64](d, a, c, 64); assert (c == 2).all()", None),
    Case("Fortran-order array", ADD, "k[1, 64](np.asfortranarray(np.ones((8, 8), np.float32)), a, c, 64); assert (c == 2).all()", None),
    Case("read-only input array", ADD, "r = np.ones(64, np.float32); r.setflags(write=False); k[1, 64](r, a, c, 64)", None),
    # ---------------------------------------------------------------- pointers and device arrays
    Case("null pointer", ADD, "k[1, 64](None, a, c, 64)", KernelError,
         ("Invalid __global__ read of size 4 bytes", "line 3", "null"), code=IL),
    Case("made-up address", ADD, "k[1, 64](12345, a, c, 64)", KernelError, ("Address 0x3039", "not in any allocation"),
         code=IL),
    Case("freed device array", ADD, "d = cudalab.to_device(a); d.free(); k[1, 64](d, a, c, 64)", KernelError,
         ("Invalid __global__ read", "already freed"), code=IL),
    Case("copy back from a freed array", None, "d = cudalab.to_device(np.ones(64)); d.free(); d.copy_to_host()", CudaError,
         ("already freed",), code=VAL),
    Case("negative array size", None, "cudalab.device_array(-5)", CudaError, ("negative size",), code=VAL),
    Case("huge array", None, "cudalab.device_array(1 << 40, np.float32)", CudaError, ("out of device memory",),
         code="cudaErrorMemoryAllocation"),
    Case("misspelled dtype", None, "cudalab.device_array(10, 'floot')", TypeError, ("data type 'floot' not understood",)),
    Case("copy of the wrong size", None, "cudalab.device_array(10).copy_to_device(np.ones(7))", CudaError,
         ("cannot copy 56 bytes (shape (7,), float64) into a device array of 40 bytes",), code=VAL),
    Case("copy to a host array of the wrong shape", None, "cudalab.to_device(np.ones(8)).copy_to_host(np.zeros(5))",
         CudaError, ("(8,)", "(5,)")),
    Case("array of Python objects", None, "cudalab.to_device(np.array(['a', 'b'], object))", CudaError, ("object",)),
    # ---------------------------------------------------------------- launch shapes and shared memory
    Case("block of 2048 threads", ADD, "k[1, 2048](a, a, c, 64)", LaunchError, ("at most 1024 threads", "2048"), code=CFG),
    Case("block (32, 32, 2)", ADD, "k[1, (32, 32, 2)](a, a, c, 64)", LaunchError, ("block (32, 32, 2) has 2048",), code=CFG),
    Case("block of 1025 threads", ADD, "k[1, 1025](a, a, c, 64)", LaunchError, ("at most 1024 threads",), code=CFG),
    Case("blockDim.z 128", ADD, "k[1, (1, 1, 128)](a, a, c, 64)", LaunchError, ("blockDim.z may be at most 64",), code=CFG),
    Case("block with a 0", ADD, "k[1, (32, 0)](a, a, c, 64)", LaunchError, ("every block dimension must be at least 1",), code=CFG),
    Case("grid 0", ADD, "k[0, 64](a, a, c, 64)", LaunchError, ("every grid dimension must be at least 1",), code=CFG),
    Case("grid -1", ADD, "k[-1, 64](a, a, c, 64)", LaunchError, ("every grid dimension must be at least 1",), code=CFG),
    Case("gridDim.y 70000", ADD, "k[(1, 70000), 64](a, a, c, 64)", LaunchError, ("gridDim.y may be at most 65,535",), code=CFG),
    Case("gridDim.z 70000", ADD, "k[(1, 1, 70000), 64](a, a, c, 64)", LaunchError, ("gridDim.z may be at most 65,535",), code=CFG),
    Case("gridDim.x 2^31", ADD, "k[2**31, 32](a, a, c, 64)", LaunchError, ("gridDim.x may be at most 2,147,483,647",), code=CFG),
    Case("4-d grid", ADD, "k[(1, 1, 1, 1), 32](a, a, c, 64)", LaunchError, ("tuple of 1 to 3 ints",), code=CFG),
    Case("block given as a float", ADD, "k[1, 64.0](a, a, c, 64)", LaunchError, ("the block must be an int", "64.0"), code=CFG),
    Case("grid given as a string", ADD, "k['1', 64](a, a, c, 64)", LaunchError, ("the grid must be an int",), code=CFG),
    Case("only a grid in the brackets", ADD, "k[64](a, a, c, 64)", LaunchError, ("kernel[grid, block]",), code=CFG),
    Case("five launch parameters", ADD, "k[1, 2, 3, 4, 5](a, a, c, 64)", LaunchError, ("kernel[grid, block]",), code=CFG),
    Case("shared bytes as a string", ADD, "k[1, 64, 0, 'big'](a, a, c, 64)", LaunchError, ("shared", "'big'")),
    Case("static shared memory over 48 KiB", "__global__ void k(float *a) { __shared__ float s[16384]; "
         "s[threadIdx.x] = 1; a[threadIdx.x] = s[threadIdx.x ^ 1]; }", "k[1, 32](a)", LaunchError,
         ("65,536 bytes of shared memory (65,536 static + 0 dynamic)", "49,152"), code=VAL),
    Case("dynamic shared memory over 48 KiB", DYN, "k[1, 32, 0, 65536](a)", LaunchError, ("(0 static + 65,536 dynamic)",), code=VAL),
    Case("negative dynamic shared memory", DYN, "k[1, 32, 0, -4](a)", LaunchError, ("cannot be negative",), code=VAL),
    Case("extern shared memory without bytes", DYN, "k[1, 32](a)", KernelError,
         ("Invalid __shared__ write", "0-byte shared memory"), code=IL),
    Case("dynamic shared memory too small", DYN, "k[1, 64, 0, 128](a)", KernelError,
         ("Invalid __shared__ write", "by thread (32,0,0)", "128-byte shared memory"), code=IL),
    # ---------------------------------------------------------------- the kernel goes wrong while running
    # (one element past the end runs on a GPU: memcheck asked for stops it, as compute-sanitizer does;
    # without it cudalab warns and goes on, tests/test_oob_slack.py)
    Case("out-of-bounds read under memcheck", ADD, "with cudalab.check('memcheck'): k[1, 128](a, a, c, 128)", KernelError,
         ("Invalid __global__ read of size 4 bytes", "line 3", "by thread (64,0,0)", "0 bytes after the end of a 256-byte allocation"),
         code=IL),
    # (without memcheck a warning: 4 bytes before a small allocation is mapped on a GPU, emulator/slack.py)
    Case("index -1", "__global__ void k(int *a) { int i = threadIdx.x; a[i - 1] = 1; }",
         "with cudalab.check('memcheck'): k[1, 32](ia)", KernelError,
         ("Invalid __global__ write", "by thread (0,0,0)", "4 bytes before a 256-byte allocation"), code=IL),
    Case("shared index out of bounds", "__global__ void k(int *a, int n) { __shared__ int s[32]; s[threadIdx.x + n] = 1; "
         "a[threadIdx.x] = s[threadIdx.x]; }", "k[1, 32](ia, 8)", KernelError,
         ("Invalid __shared__ write", "by thread (24,0,0)", "128-byte shared memory"), code=IL),
    Case("local array index out of bounds", "__global__ void k(int *a, int n) { int loc[4]; for (int i = 0; i < 4; i++) "
         "loc[i] = a[i]; a[threadIdx.x] = loc[n]; }", "k[1, 32](ia, 100000)", KernelError, ("Invalid __local__ read",), code=IL),
    Case("misaligned global int", "__global__ void k(char *a) { *(int *)(a + 1) = 1; }", "k[1, 1](np.zeros(64, np.int8))",
         KernelError, ("Misaligned __global__ write of size 4 bytes", "not aligned to 4 bytes"), code="cudaErrorMisalignedAddress"),
    Case("misaligned shared int", "__global__ void k(int *a) { __shared__ char s[64]; *(int *)(s + 2) = 1; a[0] = s[0]; }",
         "k[1, 1](ia)", KernelError, ("Misaligned __shared__ write",), code="cudaErrorMisalignedAddress"),
    Case("assert fails", "#include <cassert>\n__global__ void k(int *a) { assert(a[threadIdx.x] > 0); }", "k[1, 32](ia)",
         KernelError, ("block: [0,0,0], thread: [0,0,0] Assertion `a[threadIdx.x] > 0` failed.",), code="cudaErrorAssert"),
    Case("__trap()", "__global__ void k(int *a) { if (threadIdx.x == 5) __trap(); }", "k[1, 32](ia)", KernelError,
         ("__trap() was called at line 1", "thread (5,0,0)"), code="cudaErrorLaunchFailure"),
    Case("endless loop", "__global__ void k(int *a) { while (a[0] == 0) { a[1]++; } }", "k[1, 32](ia)", KernelError,
         ("stopped by the watchdog", "line 1", "cudalab.set_watchdog"), code="cudaErrorLaunchTimeout"),
    # (2^20 blocks of 1024 threads now finish in about the watchdog's 1 s: four times as many stay beyond it)
    Case("a huge grid of short blocks", ADD, "k[(1 << 20, 4), 1024](a, a, c, 64)", KernelError, ("stopped by the watchdog",),
         code="cudaErrorLaunchTimeout", slow=True),
    # (a warp split there runs on a GPU since Volta, and so here with a warning; synccheck asked for stops)
    Case("__syncthreads() in an if", "__global__ void k(int *a) { if (threadIdx.x < 16) { __syncthreads(); } a[threadIdx.x] = 1; }",
         "cudalab.check('synccheck'); k[1, 64](ia)", KernelError, ("Barrier error", "__syncthreads() at line 1", "thread (16,0,0) took another path"),
         code="cudaErrorLaunchFailure"),
    # half of each warp at one __syncthreads(), half at another, each side going on after it: ptxas branches
    # and an H100 waits forever (tests/kernels/split_barrier.py's if_else_barriers_with_their_own_tails)
    Case("__syncthreads() on both sides of an if", "__global__ void k(int *a) { if (threadIdx.x % 32 < 16) { __syncthreads(); "
         "a[threadIdx.x] = 2; } else { __syncthreads(); a[threadIdx.x] += 3; } }", "k[1, 64](ia)", KernelError,
         ("would hang", "__syncthreads() (line 1)", "waits at another barrier (line 1)"), code="cudaErrorLaunchTimeout"),
    Case("recursion too deep", "__device__ int f(int n) { return n < 2 ? n : f(n - 1) + f(n - 2); }\n"
         "__global__ void k(int *a) { a[threadIdx.x] = f(a[threadIdx.x] + 300); }", "k[1, 32](ia)", KernelError,
         ("called itself", "more than 200 levels deep", "base case"), code="cudaErrorLaunchOutOfResources"),
    Case("recursion with local arrays", "__device__ int f(int n, int *p) { int loc[16]; for (int i = 0; i < 16; i++) "
         "loc[i] = p[i] + n; return n == 0 ? loc[0] : loc[n & 15] + f(n - 1, loc); }\n"
         "__global__ void k(int *a) { a[threadIdx.x] = f(a[0] + 5000, a); }", "k[1, 32](ia)", KernelError,
         ("Stack overflow", "1024-byte stack is full"), code="cudaErrorLaunchOutOfResources"),
    Case("device free of a pointer twice", "__global__ void k(int *a) { int *p = (int *)malloc(16); free(p); free(p); }",
         "k[1, 1](ia)", KernelError, ("already freed", "line 1", "thread (0,0,0)")),
    Case("device free of a non-heap pointer", "__global__ void k(int *a) { free(a + 1); }", "k[1, 1](ia)", KernelError,
         ("not the start of an allocation", "line 1")),
    Case("4 MiB local array per thread", "__global__ void k(int *a) { int big[1 << 20]; for (int i = 0; i < (1 << 20); "
         "i += 4096) big[i] = i; a[0] = big[a[1]]; }", "k[1, 32](ia)", LaunchError, ("local memory",)),
    Case("texture handle that names no texture", "__global__ void k(cudaTextureObject_t t, float *a) { "
         "a[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }", "k[1, 32](7, a)", KernelError,
         ("7 is not a live texture object", "line 1"), code="cudaErrorIllegalAddress"),
    # (handle 0, what a failed cudaCreateTextureObject leaves, reads zeros with a warning, as on a GPU)
    Case("inline PTX the emulator does not know", '__global__ void k(int *a) { asm volatile("bogus.op 1;"); a[0] = 1; }',
         "k[1, 32](ia)", UnsupportedError, ("cannot run the PTX instruction `bogus.op 1`", "line 1"), code="cudaErrorNotSupported"),
    # ---------------------------------------------------------------- the session
    Case("unknown device", None, "cudalab.use('tpu')", CudaError, ("unknown device 'tpu'",), code="cudaErrorInvalidDevice"),
    Case("unknown check", None, "cudalab.check('racechek')", CudaError, ("unknown check 'racechek'",)),
    Case("negative watchdog", None, "cudalab.set_watchdog(-1)", CudaError, ("watchdog", "-1")),
    Case("watchdog as a string", None, "cudalab.set_watchdog('x')", CudaError, ("seconds",)),
    Case("unknown global variable", ADD, "mod.get_global('coef')", CudaError, ("no __constant__ or __device__ variable 'coef'",),
         code="cudaErrorInvalidSymbol"),
]
