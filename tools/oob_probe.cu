// Which out-of-bounds accesses does a GPU run without a fault? (cudalab's "would not fault" rules,
// emulator/slack.py). One access per process: a fault breaks the context for good.
//
//   oob_probe g SIZE OFFSET [w]   cudaMalloc(SIZE), then one thread reads (w: writes) 4 bytes at p + OFFSET
//   oob_probe gap SIZE            the distance between two cudaMalloc(SIZE) in a row
//   oob_probe s N OFFSET          static __shared__ char s[N] (N one of 100, 1296, 4096), a read at s + OFFSET
//   oob_probe d N OFFSET          extern __shared__, launched with N dynamic bytes, a read at OFFSET
//   oob_probe l OFFSET            a read OFFSET bytes into a 32-byte local array
//   oob_probe c OFFSET            a read OFFSET bytes into a 64-byte __constant__ array
//
// Prints "ok" (the access ran) or the error's name. Built with nvcc -arch=sm_90; run by
// tools/oob_probe.sh, whose output on an H100 is summarized in emulator/slack.py.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__global__ void global_read(const char *p, long long off, int *out) { *out = *(const int *)(p + off); }
__global__ void global_write(char *p, long long off) { *(int *)(p + off) = 7; }

template <int N>
__global__ void shared_read(long long off, int *out, unsigned *where) {
    __shared__ __align__(16) char s[N];
    for (int i = threadIdx.x; i < N; i += blockDim.x) s[i] = (char)i;
    __syncthreads();
    where[0] = (unsigned)__cvta_generic_to_shared(s);
    unsigned total, dyn;
    asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(total));
    asm volatile("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dyn));
    where[1] = total, where[2] = dyn;
    *out = *(volatile int *)(s + off);
}

__global__ void dynamic_read(long long off, int *out, unsigned *where) {
    extern __shared__ __align__(16) char d[];
    where[0] = (unsigned)__cvta_generic_to_shared(d);
    unsigned total;
    asm volatile("mov.u32 %0, %%total_smem_size;" : "=r"(total));
    where[1] = total;
    *out = *(volatile int *)(d + off);
}

__global__ void local_read(long long off, int *out) {
    volatile int a[8];
    for (int i = 0; i < 8; i++) a[i] = i;
    *out = *(volatile int *)((volatile char *)a + off);
}

__constant__ int table[16];
__global__ void constant_read(long long off, int *out) { *out = *(const int *)((const char *)table + off); }

static int report(cudaError_t e) {
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    printf("%s\n", e == cudaSuccess ? "ok" : cudaGetErrorName(e));
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    const char *mode = argv[1];
    int *out;
    unsigned *where;
    cudaMalloc(&out, 4);
    cudaMallocManaged(&where, 16);
    if (!strcmp(mode, "gap")) {
        size_t size = strtoull(argv[2], 0, 0);
        char *a, *b;
        cudaMalloc(&a, size);
        cudaMalloc(&b, size);
        printf("%lld (a %p b %p)\n", (long long)(b - a), a, b);
        return 0;
    }
    if (!strcmp(mode, "g")) {
        size_t size = strtoull(argv[2], 0, 0);
        long long off = strtoll(argv[3], 0, 0);
        char *p;
        cudaMalloc(&p, size);
        cudaMemset(p, 1, size);
        if (argc > 4) global_write<<<1, 1>>>(p, off);
        else global_read<<<1, 1>>>(p, off, out);
        return report(cudaGetLastError());
    }
    if (!strcmp(mode, "s") || !strcmp(mode, "d")) {
        int n = atoi(argv[2]);
        long long off = strtoll(argv[3], 0, 0);
        if (mode[0] == 'd') dynamic_read<<<1, 32, n>>>(off, out, where);
        else if (n == 100) shared_read<100><<<1, 32>>>(off, out, where);
        else if (n == 1296) shared_read<1296><<<1, 32>>>(off, out, where);
        else shared_read<4096><<<1, 32>>>(off, out, where);
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e == cudaSuccess) printf("ok (shared at %u, total_smem_size %u, dynamic %u)\n", where[0], where[1], where[2]);
        else printf("%s\n", cudaGetErrorName(e));
        return 0;
    }
    long long off = strtoll(argv[2], 0, 0);
    if (!strcmp(mode, "l")) local_read<<<1, 1>>>(off, out);
    else constant_read<<<1, 1>>>(off, out);
    return report(cudaGetLastError());
}
