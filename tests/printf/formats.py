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
  printf("ints: %lld %llu %llx %llX %#llx %llo %#o %ld %lu %hhd %hd %hu %x %X %#x %o\n", w[0], (unsigned long long)w[1],
         w[2], w[2], w[3], w[3], 8, (long)w[1], (unsigned long)w[0], 300, 70000, 70000, -1, 0xabcdef, 0, 0);
  printf("chars: [%c] [%5c] [%-5c] [%%] [%.2s] [%10s] [%-10s] [%s]\n", 'A', 'b', 'c', s, s, s, s + 3);
  printf("stars: [%*d] [%-*d] [%.*f] [%*.*e]\n", 6, 42, 6, 42, 2, 3.14159, 12, 3, 2.5e-5);
  printf("pointer: %p %p\n", (void*)0, (void*)0x1000);
  printf("sizes: %zu %zd %u %.3d %.0d| %5.3d\n", sizeof(double), (long long)-5, 4000000000u, 7, 0, -7);
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
    import cupy as cp
    mod = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=["formats"])
    mod.get_function("formats")((GRID,), (BLOCK,), tuple(cp.asarray(a) for a in arguments()))
    cp.cuda.Device().synchronize()
