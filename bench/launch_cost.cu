// N runtime calls of one kind, the shape of a program that times a kernel in a loop.
//   ./a.out KIND N      KIND: null (a kernel that does nothing), vadd (a 2^10-element vector add),
//                       memcpy (cudaMemcpyAsync of 4 KiB device to device), event (cudaEventRecord),
//                       graph (cudaGraphLaunch of a graph of one null kernel)
// bench/launch_cost.py runs it twice per kind, with N and with 0 calls, and divides the difference.
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void null_kernel() {}

__global__ void vadd(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
    const char* kind = argc > 1 ? argv[1] : "null";
    int calls = argc > 2 ? atoi(argv[2]) : 1000;
    const int n = 1 << 10;
    float *a, *b, *c;
    cudaMalloc(&a, n * sizeof(float));
    cudaMalloc(&b, n * sizeof(float));
    cudaMalloc(&c, n * sizeof(float));
    cudaMemset(a, 0, n * sizeof(float));
    cudaMemset(b, 0, n * sizeof(float));
    cudaStream_t stream;
    cudaStreamCreate(&stream);
    cudaEvent_t event;
    cudaEventCreate(&event);
    cudaGraphExec_t exec = nullptr;
    if (!strcmp(kind, "graph")) {
        cudaGraph_t graph;
        cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal);
        null_kernel<<<1, 1, 0, stream>>>();
        cudaStreamEndCapture(stream, &graph);
        cudaGraphInstantiate(&exec, graph, 0);
    }
    for (int i = 0; i < calls; i++) {
        if (!strcmp(kind, "null")) null_kernel<<<1, 1, 0, stream>>>();
        else if (!strcmp(kind, "vadd")) vadd<<<n / 256, 256, 0, stream>>>(a, b, c, n);
        else if (!strcmp(kind, "memcpy")) cudaMemcpyAsync(c, a, n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
        else if (!strcmp(kind, "event")) cudaEventRecord(event, stream);
        else if (!strcmp(kind, "graph")) cudaGraphLaunch(exec, stream);
    }
    cudaError_t err = cudaStreamSynchronize(stream);
    printf("%s x %d: %s\n", kind, calls, cudaGetErrorString(err));
    return err != cudaSuccess;
}
