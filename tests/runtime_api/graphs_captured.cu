// CUDA graphs from stream capture: fork and join through events, memcpy, kernel and host nodes,
// launching an instantiated graph again with new inputs, updating it, and what capture forbids.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void scale(float *x, int n, float f) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= f;
}

__global__ void add(float *x, const float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += y[i];
}

struct Report { const float *host; int launch; };

void CUDART_CB report(void *p) {
    Report *r = (Report *)p;
    printf("host node, launch %d: %g %g %g\n", r->launch, r->host[0], r->host[1], r->host[255]);
    r->launch++;
}

const char *status_name(cudaStreamCaptureStatus s) {
    return s == cudaStreamCaptureStatusNone ? "none" : s == cudaStreamCaptureStatusActive ? "active" : "invalidated";
}

const char *type_name(cudaGraphNodeType t) {
    switch (t) {
    case cudaGraphNodeTypeKernel: return "kernel";
    case cudaGraphNodeTypeMemcpy: return "memcpy";
    case cudaGraphNodeTypeMemset: return "memset";
    case cudaGraphNodeTypeHost: return "host";
    case cudaGraphNodeTypeGraph: return "graph";
    case cudaGraphNodeTypeEmpty: return "empty";
    case cudaGraphNodeTypeWaitEvent: return "wait event";
    case cudaGraphNodeTypeEventRecord: return "event record";
    case cudaGraphNodeTypeMemAlloc: return "mem alloc";
    case cudaGraphNodeTypeMemFree: return "mem free";
    default: return "other";
    }
}

void describe(cudaGraph_t g) {
    size_t nodes = 0, roots = 0, edges = 0;
    cudaGraphGetNodes(g, nullptr, &nodes);
    cudaGraphGetRootNodes(g, nullptr, &roots);
    cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges);
    printf("graph: %zu nodes, %zu roots, %zu edges\n", nodes, roots, edges);
    cudaGraphNode_t list[32];
    cudaGraphGetNodes(g, list, &nodes);
    int count[16] = {0};
    for (size_t i = 0; i < nodes; ++i) {
        cudaGraphNodeType t;
        cudaGraphNodeGetType(list[i], &t);
        count[t < 16 ? t : 15]++;
    }
    for (int t = 0; t < 16; ++t)
        if (count[t]) printf("  %d %s node%s\n", count[t], type_name((cudaGraphNodeType)t), count[t] > 1 ? "s" : "");
}

int main() {
    const int n = 256;
    float *x, *y, *host;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMallocHost(&host, n * sizeof(float));
    float init[n];
    for (int i = 0; i < n; ++i) init[i] = i;
    cudaStream_t s1, s2;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
    cudaEvent_t forked, joined;
    cudaEventCreate(&forked);
    cudaEventCreate(&joined);
    Report rep = {host, 1};

    cudaStreamCaptureStatus st;
    SHOW(cudaStreamIsCapturing(s1, &st));
    printf("before: %s\n", status_name(st));
    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    SHOW(cudaStreamIsCapturing(s1, &st));
    printf("during: %s\n", status_name(st));
    SHOW(cudaStreamIsCapturing(s2, &st));
    printf("s2 before the fork: %s\n", status_name(st));
    SHOW(cudaMemcpyAsync(x, init, sizeof init, cudaMemcpyHostToDevice, s1));
    SHOW(cudaEventRecord(forked, s1));
    SHOW(cudaStreamWaitEvent(s2, forked, 0));
    SHOW(cudaStreamIsCapturing(s2, &st));
    printf("s2 after the fork: %s\n", status_name(st));
    SHOW(cudaMemsetAsync(y, 0, n * sizeof(float), s2));
    scale<<<1, n, 0, s1>>>(x, n, 2.0f);
    SHOW(cudaGetLastError());
    add<<<1, n, 0, s2>>>(y, x, 0);       // n = 0: does nothing, but it is a node
    SHOW(cudaEventRecord(joined, s2));
    SHOW(cudaStreamWaitEvent(s1, joined, 0));
    add<<<1, n, 0, s1>>>(x, y, n);
    SHOW(cudaMemcpyAsync(host, x, n * sizeof(float), cudaMemcpyDeviceToHost, s1));
    SHOW(cudaLaunchHostFunc(s1, report, &rep));
    unsigned long long id;
    cudaGraph_t capturing;
    const cudaGraphNode_t *deps;
    size_t ndeps;
    SHOW(cudaStreamGetCaptureInfo(s1, &st, &id, &capturing, &deps, nullptr, &ndeps));
    printf("capture info: %s, %zu dependencies\n", status_name(st), ndeps);
    printf("the host function has not run yet: %d\n", rep.launch == 1);
    cudaGraph_t graph = nullptr;
    SHOW(cudaStreamEndCapture(s1, &graph));
    printf("the graph is the one being captured: %d\n", graph == capturing);
    SHOW(cudaStreamIsCapturing(s1, &st));
    printf("after: %s\n", status_name(st));
    describe(graph);

    cudaGraphExec_t exec;
    SHOW(cudaGraphInstantiate(&exec, graph, 0));
    for (int launch = 0; launch < 3; ++launch) {
        for (int i = 0; i < n; ++i) init[i] = i + 100 * launch;   // the memcpy node reads init at launch
        SHOW(cudaGraphLaunch(exec, s1));
    }
    SHOW(cudaStreamSynchronize(s1));
    SHOW(cudaGraphUpload(exec, s1));

    // capture the same work with another factor and update the executable graph in place
    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    cudaMemcpyAsync(x, init, sizeof init, cudaMemcpyHostToDevice, s1);
    cudaEventRecord(forked, s1);
    cudaStreamWaitEvent(s2, forked, 0);
    cudaMemsetAsync(y, 0, n * sizeof(float), s2);
    scale<<<1, n, 0, s1>>>(x, n, 10.0f);
    add<<<1, n, 0, s2>>>(y, x, 0);
    cudaEventRecord(joined, s2);
    cudaStreamWaitEvent(s1, joined, 0);
    add<<<1, n, 0, s1>>>(x, y, n);
    cudaMemcpyAsync(host, x, n * sizeof(float), cudaMemcpyDeviceToHost, s1);
    cudaLaunchHostFunc(s1, report, &rep);
    cudaGraph_t graph2;
    SHOW(cudaStreamEndCapture(s1, &graph2));
    cudaGraphExecUpdateResultInfo info;
    SHOW(cudaGraphExecUpdate(exec, graph2, &info));
    printf("update result %d\n", (int)info.result);
    SHOW(cudaGraphLaunch(exec, s1));
    SHOW(cudaStreamSynchronize(s1));

    // a graph of another shape cannot update it
    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    scale<<<1, n, 0, s1>>>(x, n, 3.0f);
    cudaGraph_t graph3;
    SHOW(cudaStreamEndCapture(s1, &graph3));
    describe(graph3);
    SHOW(cudaGraphExecUpdate(exec, graph3, &info));
    printf("update result %d\n", (int)info.result);
    SHOW(cudaGetLastError());

    // stream-ordered allocation inside a capture becomes memory nodes
    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    float *tmp = nullptr;
    SHOW(cudaMallocAsync(&tmp, n * sizeof(float), s1));
    SHOW(cudaMemcpyAsync(tmp, x, n * sizeof(float), cudaMemcpyDeviceToDevice, s1));
    scale<<<1, n, 0, s1>>>(tmp, n, 0.5f);
    SHOW(cudaMemcpyAsync(host, tmp, n * sizeof(float), cudaMemcpyDeviceToHost, s1));
    SHOW(cudaFreeAsync(tmp, s1));
    cudaGraph_t mem_graph;
    SHOW(cudaStreamEndCapture(s1, &mem_graph));
    describe(mem_graph);
    cudaGraphExec_t mem_exec;
    SHOW(cudaGraphInstantiate(&mem_exec, mem_graph, 0));
    for (int launch = 0; launch < 2; ++launch) {
        SHOW(cudaGraphLaunch(mem_exec, s1));
        SHOW(cudaStreamSynchronize(s1));
        printf("half of x: %g %g\n", host[0], host[255]);
    }
    unsigned long long used = 0, reserved = 0;
    SHOW(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
    SHOW(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved));
    printf("graph memory: used %llu, reserved %llu\n", used, reserved);
    SHOW(cudaGraphExecDestroy(mem_exec));
    SHOW(cudaGraphDestroy(mem_graph));
    SHOW(cudaDeviceGraphMemTrim(0));
    SHOW(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrUsedMemCurrent, &used));
    SHOW(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &reserved));
    printf("after trim: used %llu, reserved %llu\n", used, reserved);

    // what capture forbids
    SHOW(cudaStreamEndCapture(s1, &graph3));
    SHOW(cudaStreamBeginCapture(0, cudaStreamCaptureModeGlobal));
    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    SHOW(cudaStreamSynchronize(s1));
    SHOW(cudaStreamIsCapturing(s1, &st));
    printf("after a synchronize: %s\n", status_name(st));
    cudaGraph_t broken = (cudaGraph_t)1;
    SHOW(cudaStreamEndCapture(s1, &broken));
    printf("no graph: %d\n", broken == nullptr);
    SHOW(cudaGetLastError());

    SHOW(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal));
    cudaEventRecord(forked, s1);
    cudaStreamWaitEvent(s2, forked, 0);
    scale<<<1, n, 0, s2>>>(x, n, 1.0f);
    SHOW(cudaStreamEndCapture(s1, &broken));     // s2 never joined back
    SHOW(cudaStreamIsCapturing(s2, &st));
    printf("s2 after the failed end: %s\n", status_name(st));
    SHOW(cudaGetLastError());

    for (int mode = 0; mode < 3; ++mode) {
        SHOW(cudaStreamBeginCapture(s1, (cudaStreamCaptureMode)mode));
        float *tmp = nullptr;
        cudaError_t e = cudaMalloc(&tmp, 64);
        printf("mode %d: cudaMalloc during capture -> %s\n", mode, cudaGetErrorName(e));
        e = cudaMemcpy(host, x, 16, cudaMemcpyDeviceToHost);
        printf("mode %d: cudaMemcpy during capture -> %s\n", mode, cudaGetErrorName(e));
        e = cudaStreamQuery(s1);
        printf("mode %d: cudaStreamQuery during capture -> %s\n", mode, cudaGetErrorName(e));
        cudaGraph_t g = nullptr;
        e = cudaStreamEndCapture(s1, &g);
        printf("mode %d: end -> %s, graph %d\n", mode, cudaGetErrorName(e), g != nullptr);
        if (g) cudaGraphDestroy(g);
        if (tmp) cudaFree(tmp);
        cudaGetLastError();
    }
    cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
    SHOW(cudaThreadExchangeStreamCaptureMode(&mode));
    printf("previous mode %d\n", (int)mode);
    SHOW(cudaThreadExchangeStreamCaptureMode(&mode));
    printf("previous mode %d\n", (int)mode);

    SHOW(cudaGraphExecDestroy(exec));
    SHOW(cudaGraphDestroy(graph));
    SHOW(cudaGraphDestroy(graph2));
    SHOW(cudaGraphDestroy(graph3));
    SHOW(cudaDeviceSynchronize());
    SHOW(cudaGetLastError());
    printf("Result = PASS\n");
}
