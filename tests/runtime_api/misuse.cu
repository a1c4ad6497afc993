// Mistakes a program can make with the runtime API, and the error code a GPU answers each with.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

int main() {
    int can = -1, x = 0;
    float *d, *h;
    cudaMalloc(&d, 64);
    cudaMallocHost(&h, 64);
    SHOW(cudaDeviceCanAccessPeer(&can, 0, 1));
    SHOW(cudaDeviceEnablePeerAccess(1, 0));
    SHOW(cudaGetLastError());
    SHOW(cudaFree(&x));
    SHOW(cudaFree(d + 1));
    SHOW(cudaFreeHost(d));
    SHOW(cudaGetLastError());
    SHOW(cudaMemcpy(d, h, 16, (cudaMemcpyKind)7));
    SHOW(cudaMemcpy(d, h, 128, cudaMemcpyHostToDevice));
    SHOW(cudaMemcpy(&x, d, 4, cudaMemcpyHostToDevice));
    SHOW(cudaMemset(&x, 0, 4));
    SHOW(cudaMemset(d, 0, 65));
    SHOW(cudaGetLastError());
    SHOW(cudaMalloc(&d, (size_t)1 << 50));
    SHOW(cudaGetLastError());
    SHOW(cudaHostRegister(&x, sizeof x, 0));
    SHOW(cudaHostRegister(&x, sizeof x, 0));
    SHOW(cudaHostUnregister(&x));
    SHOW(cudaHostUnregister(&x));
    SHOW(cudaGetLastError());
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    float ms;
    SHOW(cudaEventQuery(a));
    SHOW(cudaEventSynchronize(a));
    SHOW(cudaEventElapsedTime(&ms, a, b));
    SHOW(cudaEventRecord(a, 0));
    SHOW(cudaEventElapsedTime(&ms, a, b));
    SHOW(cudaEventRecord(b, 0));
    SHOW(cudaEventSynchronize(b));
    SHOW(cudaEventElapsedTime(nullptr, a, b));
    cudaEvent_t nt;
    cudaEventCreateWithFlags(&nt, cudaEventDisableTiming);
    SHOW(cudaEventRecord(nt, 0));
    SHOW(cudaEventSynchronize(nt));
    SHOW(cudaEventElapsedTime(&ms, a, nt));
    SHOW(cudaEventCreateWithFlags(&nt, 0x100));
    cudaStream_t s;
    SHOW(cudaStreamCreateWithFlags(&s, 0x10));
    SHOW(cudaStreamCreateWithPriority(&s, 0, -100));
    int prio = 7;
    SHOW(cudaStreamGetPriority(s, &prio));
    printf("a priority beyond the range is clamped to %d\n", prio);
    SHOW(cudaStreamWaitEvent(s, b, 5));
    SHOW(cudaGetLastError());
    SHOW(cudaGraphLaunch(nullptr, s));
    SHOW(cudaGraphDestroy(nullptr));
    SHOW(cudaGraphInstantiate(nullptr, nullptr, 0));
    SHOW(cudaGetLastError());
    SHOW(cudaDeviceSynchronize());
    printf("Result = PASS\n");
}
