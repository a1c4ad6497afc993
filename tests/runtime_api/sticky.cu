// After a kernel breaks the context (an illegal address here; the watchdog's launch timeout with
// -DWATCHDOG, which a GPU without a display never gives), which calls still answer, and which
// repeat the error. cudaDeviceReset gives the program a working context again.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

static const char *what(const void *now, const void *before) {
    return now == before ? "untouched" : now ? "set" : "NULL";
}

__global__ void breaks(int *p) {
#ifdef WATCHDOG
    while (p[0] != 1) {}            // p[0] is 0: spins until the watchdog stops it
#else
    p[4] = 1;                       // p is NULL: an illegal address
#endif
}
__global__ void fill(int *p) { *p = 7; }

int main() {
    int *d, *p = (int *)0x10, *before, dev = -1, count = -1, value = -1, h = 0;
    cudaStream_t s = (cudaStream_t)0x1;
    cudaEvent_t e = (cudaEvent_t)0x1;
    cudaFuncAttributes fa;
    cudaPointerAttributes pa;
    cudaMalloc(&d, 64);
    cudaMemset(d, 0, 64);
#ifdef WATCHDOG
    breaks<<<1, 1>>>(d);
#else
    breaks<<<1, 1>>>(nullptr);
#endif
    SHOW(cudaGetLastError());
    SHOW(cudaDeviceSynchronize());
    SHOW(cudaGetLastError());
    SHOW(cudaGetLastError());
    SHOW(cudaPeekAtLastError());
    SHOW(cudaGetDevice(&dev));
    printf("device %d\n", dev);
    SHOW(cudaGetDeviceCount(&count));
    printf("count %d\n", count);
    SHOW(cudaSetDevice(0));
    SHOW(cudaDeviceGetAttribute(&value, cudaDevAttrMaxSharedMemoryPerBlock, 0));
    printf("attribute %d\n", value > 0);
    SHOW(cudaFuncGetAttributes(&fa, fill));
    SHOW(cudaPointerGetAttributes(&pa, d));
    SHOW(cudaStreamCreate(&s));
    printf("stream: %s\n", what(s, (cudaStream_t)0x1));
    SHOW(cudaEventCreate(&e));
    printf("event: %s\n", what(e, (cudaEvent_t)0x1));
    SHOW(cudaMalloc(&p, 16));
    printf("pointer: %s\n", what(p, (int *)0x10));
    SHOW(cudaMemcpy(&h, nullptr, 4, cudaMemcpyDeviceToHost));
    SHOW(cudaMalloc(&p, (size_t)1 << 50));
    SHOW(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
    SHOW(cudaMemset(d, 0, 4));
    fill<<<1, 1>>>(d);
    SHOW(cudaGetLastError());
    SHOW(cudaStreamSynchronize(0));
    SHOW(cudaFree(d));
    SHOW(cudaDeviceReset());
    SHOW(cudaGetLastError());
    before = d;
    SHOW(cudaMalloc(&d, 64));
    printf("pointer: %s\n", what(d, before));
    fill<<<1, 1>>>(d);
    SHOW(cudaDeviceSynchronize());
    SHOW(cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost));
    printf("value %d\n", h);
    return 0;
}
