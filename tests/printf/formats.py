"""A kernel that prints one line per printf conversion a student reaches for, and how its output
was recorded on an H100 (python tests/printf/formats.py > tests/printf/formats_h100.txt, with CuPy).

Device printf is formatted by the driver on the host, with its own rules (CUDA C++ Programming
Guide, "Formatted Output"): the test compares the emulator's text line by line with the GPU's.
"""
SOURCE = r'''
__global__ void formats(const double* d, const float* f, const long long* w, const char* s) {
  if (threadIdx.x != 0) {
    printf("thread %2d of %-3d| %05d %+d % d %i\n", threadIdx.x, blockDim.x, -(int)threadIdx.x, threadIdx.x, 7, -8);
    return;
  }
  for (int k = 0; k < 13; ++k)
    printf("%d: %e %E %g %G %a %f\n", k, d[k], d[k], d[k], d[k], d[k], d[k]);
  for (int k = 0; k < 4; ++k)
    printf("float %d: %.3e %10.4g|%-12.3f|%+.2e %#g %#.0f %.0e %.10g %A %.3a\n", k, f[k], f[k], f[k], f[k], f[k],
           f[k], f[k], f[k], f[k], f[k]);
  printf("a: %.0a %.1a %.13a %20a|%-20a|%+a %#a\n", d[4], d[4], d[4], d[3], d[3], d[3], d[2]);
  printf("lld: %lld %llu %llx %llX\n", w[0], (unsigned long long)w[1], w[2], w[2]);
  printf("alt hex: %#llx\n", w[3]);
  printf("octal: %llo\n", w[3]);
  printf("alt octal: %#o\n", 8);
  printf("alt octal zero: %#o\n", 0);
  printf("alt hex zero: %#x\n", 0);
  printf("long: %ld %lu\n", (long)w[1], (unsigned long)w[0]);
  printf("short: %hhd %hd %hu\n", 300, 70000, 70000);
  printf("hex: %x %X\n", -1, 0xabcdef);
  printf("octal zero: %o\n", 0);
  printf("chars: [%c] [%5c] [%-5c] [%%]\n", 'A', 'b', 'c');
  printf("strings: [%.2s] [%10s] [%-10s] [%s]\n", s, s, s, s + 3);
  printf("null string: [%s]\n", (const char*)0);
  printf("star width: [%*d] [%-*d]\n", 6, 42, 6, 42);
  printf("star precision: [%.*f]\n", 2, 3.14159);
  printf("star both: [%*.*e]\n", 12, 3, 2.5e-5);
  printf("pointer: %p %p\n", (void*)0, (void*)0x1000);
  printf("size_t: %zu\n", sizeof(double));
  printf("ssize: %zd\n", (long long)-5);
  printf("unsigned: %u\n", 4000000000u);
  printf("int precision: %.3d %5.3d\n", 7, -7);
  printf("zero precision zero: [%.0d]\n", 0);
  printf("intmax: %jd\n", (long long)-3);
  printf("ptrdiff: %td\n", (long long)-4);
  printf("%s and %d%%: the end\n", "text", 100);
}'''

DOUBLES = [0.0, -0.0, 1.0, 1.5, 0.1, 1e-310, 123456789.0, 1e100, float("inf"), float("-inf"), float("nan"), -2.5e-7, -float("nan")]
FLOATS = [3.14159265, -0.0001234, 65504.0, 1e-40]
WIDE = [-9223372036854775807 - 1, 18446744073709551615 - 2 ** 64, 0x1234ABCD5678, 255]
TEXT = b"hello, printf\0"
GRID, BLOCK = 1, 4


def arguments():
    import numpy as np
    return [np.array(DOUBLES, np.float64), np.array(FLOATS, np.float32), np.array(WIDE, np.int64),
            np.frombuffer(TEXT, np.uint8).copy()]


if __name__ == "__main__":          # on a machine with a GPU: print what the GPU prints
    import os
    import sys

    import cupy as cp
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from kernels.record import compile_like_cudalab
    compile_like_cudalab()           # CuPy's -ftz=true would flush the subnormal float's promotion to double
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=["formats"])
    mod.get_function("formats")((GRID,), (BLOCK,), tuple(cp.asarray(a) for a in arguments()))
    cp.cuda.Device().synchronize()
