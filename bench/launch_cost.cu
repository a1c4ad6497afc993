// N runtime calls of one kind, the shape of a program that times a kernel in a loop.
//   ./a.out KIND N      KIND: null (a kernel that does nothing), vadd (a 2^10-element vector add),
//                       memcpy (cudaMemcpyAsync of 4 KiB device to device), event (cudaEventRecord),
//                       graph (cudaGraphLaunch of a graph of one null kernel), streams (the shape of a
//                       streams-and-overlap exercise: on 4 streams in turn, a 1 KiB copy in from pinned
//                       memory, a 256-element axpy, a 1 KiB copy out; each is one call)
// bench/launch_cost.py runs it twice per kind, with N and with 0 calls, and divides the difference.
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void null_kernel() {}

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

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
    cudaStream_t streams[4];
    float* pinned = nullptr;
    if (!strcmp(kind, "streams")) {
        for (int s = 0; s < 4; s++) cudaStreamCreate(&streams[s]);
        cudaMallocHost(&pinned, 4 * 256 * sizeof(float));
        memset(pinned, 0, 4 * 256 * sizeof(float));
    }
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
        else if (!strcmp(kind, "streams")) {
            int s = (i / 3) % 4, step = i % 3;
            float* host = pinned + 256 * s;
            float* x = a + 256 * s;
            if (step == 0) cudaMemcpyAsync(x, host, 256 * sizeof(float), cudaMemcpyHostToDevice, streams[s]);
            else if (step == 1) axpy<<<1, 256, 0, streams[s]>>>(2.0f, x, b + 256 * s, 256);
            else cudaMemcpyAsync(host, b + 256 * s, 256 * sizeof(float), cudaMemcpyDeviceToHost, streams[s]);
        }
    }
    cudaError_t err = !strcmp(kind, "streams") ? cudaDeviceSynchronize() : cudaStreamSynchronize(stream);
    printf("%s x %d: %s\n", kind, calls, cudaGetErrorString(err));
    return err != cudaSuccess;
}
