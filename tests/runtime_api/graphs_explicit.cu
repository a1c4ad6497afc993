// CUDA graphs built node by node: memset, kernel, memcpy (1D, 3D parameters, to a symbol), host,
// empty, event, child-graph and memory nodes; edges; reading and changing node parameters in the
// graph and in an instantiated graph; cloning; conditional (if / while) nodes.
#include <cstdio>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__device__ float bias[4];

__global__ void axpb(float *x, int n, float a) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + bias[i % 4];
}

__global__ void iota(float *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += i;
}

__global__ void set_condition(const int *flag, cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, *flag); }

__global__ void count_down(int *counter, cudaGraphConditionalHandle h) {
    int left = --*counter;
    printf("loop body, %d left\n", left);
    if (left == 0) cudaGraphSetConditional(h, 0);
}

__global__ void said(int what) { printf("the if body ran (%d)\n", what); }

void CUDART_CB show(void *p) {
    const float *h = (const float *)p;
    printf("host node: %g %g %g %g\n", h[0], h[1], h[2], h[63]);
}

size_t count_nodes(cudaGraph_t g) { size_t n = 0; cudaGraphGetNodes(g, nullptr, &n); return n; }

int main() {
    const int n = 64;
    float *x, *host;
    cudaMalloc(&x, n * sizeof(float));
    cudaMallocHost(&host, n * sizeof(float));
    float b[4] = {0.5f, 0.25f, 0.125f, 0.0625f};
    cudaStream_t s;
    cudaStreamCreate(&s);

    cudaGraph_t g;
    SHOW(cudaGraphCreate(&g, 0));
    cudaGraphNode_t memset_node, iota_node, axpb_node, copy_node, host_node, empty_node, bias_node;

    cudaMemsetParams mp = {};
    mp.dst = x; mp.value = 0; mp.elementSize = 4; mp.width = n; mp.height = 1; mp.pitch = 0;
    SHOW(cudaGraphAddMemsetNode(&memset_node, g, nullptr, 0, &mp));
    SHOW(cudaGraphAddMemcpyNodeToSymbol(&bias_node, g, nullptr, 0, bias, b, sizeof b, 0, cudaMemcpyHostToDevice));

    int nn = n;
    void *iota_args[] = {&x, &nn};
    cudaKernelNodeParams kp = {};
    kp.func = (void *)iota; kp.gridDim = dim3(1); kp.blockDim = dim3(n); kp.kernelParams = iota_args;
    SHOW(cudaGraphAddKernelNode(&iota_node, g, &memset_node, 1, &kp));

    float a = 2.0f;
    void *axpb_args[] = {&x, &nn, &a};
    kp.func = (void *)axpb; kp.kernelParams = axpb_args;
    cudaGraphNode_t both[] = {iota_node, bias_node};
    SHOW(cudaGraphAddKernelNode(&axpb_node, g, both, 2, &kp));

    float *x2;
    cudaMalloc(&x2, n * sizeof(float));
    cudaMemcpy3DParms p3 = {};
    p3.srcPtr = make_cudaPitchedPtr(x, n * sizeof(float), n, 1);
    p3.dstPtr = make_cudaPitchedPtr(x2, n * sizeof(float), n, 1);
    p3.extent = make_cudaExtent(n * sizeof(float), 1, 1);
    p3.kind = cudaMemcpyDeviceToDevice;
    cudaGraphNode_t copy3d_node;
    SHOW(cudaGraphAddMemcpyNode(&copy3d_node, g, &axpb_node, 1, &p3));
    SHOW(cudaGraphAddMemcpyNode1D(&copy_node, g, &copy3d_node, 1, host, x2, n * sizeof(float), cudaMemcpyDeviceToHost));
    cudaHostNodeParams hp = {show, host};
    SHOW(cudaGraphAddHostNode(&host_node, g, &copy_node, 1, &hp));
    SHOW(cudaGraphAddEmptyNode(&empty_node, g, nullptr, 0));
    SHOW(cudaGraphAddDependencies(g, &empty_node, &memset_node, nullptr, 1));
    SHOW(cudaGraphAddDependencies(g, &empty_node, &memset_node, nullptr, 1));   // the edge exists already

    size_t count = 0, roots = 0, edges = 0;
    cudaGraphGetNodes(g, nullptr, &count);
    cudaGraphGetRootNodes(g, nullptr, &roots);
    cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edges);
    printf("%zu nodes, %zu roots, %zu edges\n", count, roots, edges);
    size_t ndeps = 0, ndependents = 0;
    SHOW(cudaGraphNodeGetDependencies(axpb_node, nullptr, nullptr, &ndeps));
    SHOW(cudaGraphNodeGetDependentNodes(axpb_node, nullptr, nullptr, &ndependents));
    printf("axpb: %zu dependencies, %zu dependents\n", ndeps, ndependents);
    cudaGraphNode_t root_list[8];
    roots = 8;
    SHOW(cudaGraphGetRootNodes(g, root_list, &roots));
    cudaGraphNodeType t;
    cudaGraphNodeGetType(root_list[0], &t);
    printf("roots: %zu, the first is of type %d\n", roots, (int)t);

    cudaKernelNodeParams got = {};
    SHOW(cudaGraphKernelNodeGetParams(axpb_node, &got));
    printf("kernel node: grid %u block %u shared %u, same function %d, a = %g\n", got.gridDim.x, got.blockDim.x,
           got.sharedMemBytes, got.func == (void *)axpb, *(float *)got.kernelParams[2]);
    cudaMemcpy3DParms p3got = {};
    SHOW(cudaGraphMemcpyNodeGetParams(copy3d_node, &p3got));
    printf("memcpy node: %zu bytes, kind %d, same source %d\n", p3got.extent.width, (int)p3got.kind,
           p3got.srcPtr.ptr == x);
    cudaMemsetParams mgot = {};
    SHOW(cudaGraphMemsetNodeGetParams(memset_node, &mgot));
    printf("memset node: width %zu element %u value %u\n", mgot.width, mgot.elementSize, mgot.value);
    cudaHostNodeParams hgot = {};
    SHOW(cudaGraphHostNodeGetParams(host_node, &hgot));
    printf("host node: same function %d, same data %d\n", hgot.fn == show, hgot.userData == host);
    SHOW(cudaGraphKernelNodeGetParams(memset_node, &got));

    cudaGraphExec_t exec;
    SHOW(cudaGraphInstantiate(&exec, g, 0));
    SHOW(cudaGraphLaunch(exec, s));
    SHOW(cudaStreamSynchronize(s));

    // change a in the instantiated graph only
    a = 3.0f;
    kp.kernelParams = axpb_args;
    SHOW(cudaGraphExecKernelNodeSetParams(exec, axpb_node, &kp));
    SHOW(cudaGraphLaunch(exec, s));
    SHOW(cudaStreamSynchronize(s));
    SHOW(cudaGraphKernelNodeGetParams(axpb_node, &got));
    printf("the graph still has a = %g\n", *(float *)got.kernelParams[2]);

    // disable the host node, then enable it again
    unsigned enabled = 7;
    SHOW(cudaGraphNodeSetEnabled(exec, host_node, 0));      // only kernel, memcpy and memset nodes
    SHOW(cudaGraphNodeSetEnabled(exec, axpb_node, 0));
    SHOW(cudaGraphNodeGetEnabled(exec, axpb_node, &enabled));
    printf("axpb node enabled: %u\n", enabled);
    SHOW(cudaGraphLaunch(exec, s));
    SHOW(cudaStreamSynchronize(s));
    SHOW(cudaGraphNodeSetEnabled(exec, axpb_node, 1));

    // change the graph, then update the executable graph from it
    a = -1.0f;
    SHOW(cudaGraphKernelNodeSetParams(axpb_node, &kp));
    cudaGraphExecUpdateResultInfo info;
    SHOW(cudaGraphExecUpdate(exec, g, &info));
    printf("update result %d\n", (int)info.result);
    SHOW(cudaGraphLaunch(exec, s));
    SHOW(cudaStreamSynchronize(s));

    // a clone is independent of its original
    cudaGraph_t c;
    SHOW(cudaGraphClone(&c, g));
    cudaGraphNode_t cloned_axpb;
    SHOW(cudaGraphNodeFindInClone(&cloned_axpb, axpb_node, c));
    a = 1.0f;
    SHOW(cudaGraphKernelNodeSetParams(cloned_axpb, &kp));
    SHOW(cudaGraphDestroyNode(host_node));
    printf("original %zu nodes, clone %zu nodes\n", count_nodes(g), count_nodes(c));
    SHOW(cudaGraphKernelNodeGetParams(axpb_node, &got));
    printf("the original still has a = %g\n", *(float *)got.kernelParams[2]);
    SHOW(cudaGraphExecUpdate(exec, g, &info));
    printf("update after removing a node: result %d\n", (int)info.result);
    cudaGetLastError();

    // the clone as a child graph, then memory nodes and events around it
    cudaGraph_t outer;
    cudaGraphCreate(&outer, 0);
    cudaGraphNode_t alloc_node, child_node, free_node, record_node, wait_node;
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = 1 << 20;
    SHOW(cudaGraphAddMemAllocNode(&alloc_node, outer, nullptr, 0, &ap));
    printf("the allocation has its address already: %d\n", ap.dptr != nullptr);
    SHOW(cudaGraphAddChildGraphNode(&child_node, outer, &alloc_node, 1, c));
    SHOW(cudaGraphAddMemFreeNode(&free_node, outer, &child_node, 1, ap.dptr));
    cudaEvent_t ev;
    cudaEventCreate(&ev);
    SHOW(cudaGraphAddEventRecordNode(&record_node, outer, &free_node, 1, ev));
    SHOW(cudaGraphAddEventWaitNode(&wait_node, outer, &record_node, 1, ev));
    cudaGraph_t inner;
    SHOW(cudaGraphChildGraphNodeGetGraph(child_node, &inner));
    printf("child graph: %zu nodes\n", count_nodes(inner));
    void *freed = nullptr;
    SHOW(cudaGraphMemFreeNodeGetParams(free_node, &freed));
    printf("the free node frees the allocation: %d\n", freed == ap.dptr);
    cudaGraphExec_t outer_exec;
    SHOW(cudaGraphInstantiate(&outer_exec, outer, 0));
    SHOW(cudaGraphLaunch(outer_exec, s));
    SHOW(cudaStreamSynchronize(s));
    SHOW(cudaEventQuery(ev));
    printf("x[1] = %g\n", host[1]);
    SHOW(cudaGraphExecDestroy(outer_exec));
    SHOW(cudaGraphDestroy(outer));

    // misuse
    cudaGraph_t other;
    cudaGraphCreate(&other, 0);
    cudaGraphNode_t stray;
    SHOW(cudaGraphAddEmptyNode(&stray, other, &axpb_node, 1));     // a dependency from another graph
    kp.func = nullptr;
    SHOW(cudaGraphAddKernelNode(&stray, other, nullptr, 0, &kp));
    SHOW(cudaGraphAddDependencies(g, &axpb_node, &axpb_node, nullptr, 1));
    SHOW(cudaGraphRemoveDependencies(g, &empty_node, &axpb_node, nullptr, 1));
    SHOW(cudaGraphRemoveDependencies(g, &empty_node, &memset_node, nullptr, 1));
    SHOW(cudaGraphGetRootNodes(g, nullptr, &roots));
    printf("roots after removing the edge: %zu\n", roots);
    SHOW(cudaGetLastError());
    cudaGraphDestroy(other);

    // conditional nodes: an if whose condition a kernel sets, and a while loop
    int *flag;
    cudaMallocManaged(&flag, 2 * sizeof(int));
    cudaGraph_t cg;
    cudaGraphCreate(&cg, 0);
    cudaGraphConditionalHandle h;
    SHOW(cudaGraphConditionalHandleCreate(&h, cg, 0, 0));
    void *set_args[] = {&flag, &h};
    cudaGraphNodeParams np = {};
    np.type = cudaGraphNodeTypeKernel;
    np.kernel.func = (void *)set_condition; np.kernel.gridDim = dim3(1); np.kernel.blockDim = dim3(1);
    np.kernel.kernelParams = set_args;
    cudaGraphNode_t set_node, if_node;
    SHOW(cudaGraphAddNode(&set_node, cg, nullptr, nullptr, 0, &np));
    cudaGraphNodeParams cp = {};
    cp.type = cudaGraphNodeTypeConditional;
    cp.conditional.handle = h;
    cp.conditional.type = cudaGraphCondTypeIf;
    cp.conditional.size = 1;
    SHOW(cudaGraphAddNode(&if_node, cg, &set_node, nullptr, 1, &cp));
    cudaGraph_t body = cp.conditional.phGraph_out[0];
    int what = 42;
    void *said_args[] = {&what};
    np.kernel.func = (void *)said; np.kernel.kernelParams = said_args;
    cudaGraphNode_t said_node;
    SHOW(cudaGraphAddNode(&said_node, body, nullptr, nullptr, 0, &np));
    cudaGraphExec_t cexec;
    SHOW(cudaGraphInstantiate(&cexec, cg, 0));
    for (int v = 0; v < 2; ++v) {
        flag[0] = v;
        printf("flag %d:\n", v);
        SHOW(cudaGraphLaunch(cexec, s));
        SHOW(cudaStreamSynchronize(s));
    }
    cudaGraphExecDestroy(cexec);
    cudaGraphDestroy(cg);

    cudaGraph_t wg;
    cudaGraphCreate(&wg, 0);
    cudaGraphConditionalHandle wh;
    SHOW(cudaGraphConditionalHandleCreate(&wh, wg, 1, cudaGraphCondAssignDefault));
    cp.conditional.handle = wh;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cudaGraphNode_t while_node;
    SHOW(cudaGraphAddNode(&while_node, wg, nullptr, nullptr, 0, &cp));
    int *counter = flag + 1;
    void *down_args[] = {&counter, &wh};
    np.kernel.func = (void *)count_down; np.kernel.kernelParams = down_args;
    cudaGraphNode_t down_node;
    SHOW(cudaGraphAddNode(&down_node, cp.conditional.phGraph_out[0], nullptr, nullptr, 0, &np));
    cudaGraphExec_t wexec;
    SHOW(cudaGraphInstantiate(&wexec, wg, 0));
    for (int start = 3; start <= 4; ++start) {
        *counter = start;
        SHOW(cudaGraphLaunch(wexec, s));
        SHOW(cudaStreamSynchronize(s));
        printf("counter %d\n", *counter);
    }
    cudaGraphExecDestroy(wexec);
    cudaGraphDestroy(wg);

    // a while loop built by stream capture (the body captured into the conditional node's graph)
    cudaStream_t cs;
    cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    SHOW(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    said<<<1, 1, 0, cs>>>(7);
    cudaStreamCaptureStatus status;
    cudaGraph_t capturing;
    const cudaGraphNode_t *deps;
    size_t ndep = 0;
    SHOW(cudaStreamGetCaptureInfo(cs, &status, nullptr, &capturing, &deps, nullptr, &ndep));
    printf("capturing, %zu dependencies\n", ndep);
    cudaGraphConditionalHandle ch;
    SHOW(cudaGraphConditionalHandleCreate(&ch, capturing, 1, cudaGraphCondAssignDefault));
    cp.conditional.handle = ch;
    cp.conditional.type = cudaGraphCondTypeWhile;
    cudaGraphNode_t cond_node;
    SHOW(cudaGraphAddNode(&cond_node, capturing, deps, nullptr, ndep, &cp));
    cudaGraph_t loop_body = cp.conditional.phGraph_out[0];
    SHOW(cudaStreamUpdateCaptureDependencies(cs, &cond_node, nullptr, 1, cudaStreamSetCaptureDependencies));
    said<<<1, 1, 0, cs>>>(8);
    cudaGraph_t captured;
    SHOW(cudaStreamEndCapture(cs, &captured));
    cudaStream_t body_stream;
    cudaStreamCreateWithFlags(&body_stream, cudaStreamNonBlocking);
    SHOW(cudaStreamBeginCaptureToGraph(body_stream, loop_body, nullptr, nullptr, 0, cudaStreamCaptureModeGlobal));
    count_down<<<1, 1, 0, body_stream>>>(counter, ch);
    SHOW(cudaStreamEndCapture(body_stream, nullptr));
    printf("captured graph: %zu nodes, body %zu nodes\n", count_nodes(captured), count_nodes(loop_body));
    SHOW(cudaGraphInstantiate(&wexec, captured, 0));
    *counter = 2;
    SHOW(cudaGraphLaunch(wexec, cs));
    SHOW(cudaStreamSynchronize(cs));
    cudaGraphExecDestroy(wexec);
    cudaGraphDestroy(captured);

    SHOW(cudaGraphExecDestroy(exec));
    SHOW(cudaGraphDestroy(g));
    SHOW(cudaGraphDestroy(c));
    SHOW(cudaDeviceSynchronize());
    printf("Result = PASS\n");
}
