// Host functions in streams: cudaLaunchHostFunc and cudaStreamAddCallback run in stream order,
// after the work before them and before the work after them.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void put(int *p, int i, int v) { p[i] = v; }

int *shared_mem;

void CUDART_CB host_fn(void *tag) {
    printf("host function %s sees %d %d %d\n", (const char *)tag, shared_mem[0], shared_mem[1], shared_mem[2]);
}

void CUDART_CB callback(cudaStream_t s, cudaError_t status, void *tag) {
    printf("callback %s: status %s, on the stream it was added to: %d\n", (const char *)((void **)tag)[0],
           cudaGetErrorName(status), s == (cudaStream_t)((void **)tag)[1]);
}

int main() {
    cudaMallocManaged(&shared_mem, 3 * sizeof(int));
    shared_mem[0] = shared_mem[1] = shared_mem[2] = 0;
    cudaStream_t a, b;
    cudaStreamCreate(&a);
    cudaStreamCreate(&b);
    cudaEvent_t done_a;
    cudaEventCreate(&done_a);

    put<<<1, 1, 0, a>>>(shared_mem, 0, 1);
    SHOW(cudaLaunchHostFunc(a, host_fn, (void *)"A1"));
    put<<<1, 1, 0, a>>>(shared_mem, 1, 2);
    void *tag_a[] = {(void *)"A2", (void *)a};
    SHOW(cudaStreamAddCallback(a, callback, tag_a, 0));
    SHOW(cudaEventRecord(done_a, a));
    SHOW(cudaStreamWaitEvent(b, done_a, 0));
    put<<<1, 1, 0, b>>>(shared_mem, 2, 3);
    SHOW(cudaLaunchHostFunc(b, host_fn, (void *)"B1"));
    SHOW(cudaStreamSynchronize(b));
    SHOW(cudaStreamSynchronize(a));

    // on the legacy default stream
    put<<<1, 1>>>(shared_mem, 0, 10);
    SHOW(cudaLaunchHostFunc(0, host_fn, (void *)"legacy"));
    void *tag_0[] = {(void *)"legacy", (void *)0};
    SHOW(cudaStreamAddCallback(0, callback, tag_0, 0));
    SHOW(cudaDeviceSynchronize());

    // misuse
    SHOW(cudaStreamAddCallback(a, callback, tag_a, 1));
    SHOW(cudaGetLastError());
    SHOW(cudaLaunchHostFunc(a, nullptr, nullptr));
    SHOW(cudaGetLastError());
    SHOW(cudaDeviceSynchronize());
    printf("Result = PASS\n");
}
