/* cudalab's libcudart, continued: CUDA graphs and stream capture (included by cudart.c).
 *
 * The graph itself lives in the emulator (cudalab/runtime/core/graphs.py): graphs, nodes and
 * executable graphs are its handles. Kernel nodes carry their arguments packed as at a launch;
 * memcpy, memset and host nodes carry addresses and numbers. When a graph runs, the emulator hands
 * its copies and memsets back one by one (cudaGraphLaunch's loop below) where their memory may be
 * this process's host memory; its host nodes run on the driver thread, as host functions do.
 */

#define H(x) ((void *)(x))

static dim3 dim3_of(unsigned long long x, unsigned long long y, unsigned long long z) {
    dim3 d = {(unsigned)x, (unsigned)y, (unsigned)z};
    return d;
}

/* ------------------------------------------------------------------ node parameters to and from the emulator */
/* Kernel nodes: the request "node_add/node_set/exec_node_set ... name gx gy gz bx by bz shmem" + packed args. */
static cudaError_t kernel_request(const char *head, const void *func, dim3 g, dim3 b, unsigned shmem, void **args) {
    Func *f = find_func(func);
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    int code = load_params(f);
    if (code) return ret(code);
    if (f->n && !args) return ret(cudaErrorInvalidValue);
    size_t total;
    char *buf = pack_args(f, args, &total);
    code = rpc_blob(buf, total, "%s %s %u %u %u %u %u %u %u", head, f->name, g.x, g.y, g.z, b.x, b.y, b.z, shmem);
    free(buf);
    return ret(code);
}

/* cudaMemcpy3DParms over linear memory as the emulator's numbers: dst src width height depth dpitch
 * spitch dheight sheight kind. CUDA arrays in memcpy nodes are not supported yet. */
static cudaError_t memcpy3d_numbers(const struct cudaMemcpy3DParms *p, char *out, size_t room) {
    if (!p) return ret(cudaErrorInvalidValue);
    if (p->srcArray || p->dstArray) {
        say_once("cudalab: graph memcpy nodes with CUDA arrays are not supported by the emulated GPU yet.");
        return ret(cudaErrorNotSupported);
    }
    const struct cudaPitchedPtr *s = &p->srcPtr, *d = &p->dstPtr;
    size_t sp = s->pitch ? s->pitch : p->extent.width, dp = d->pitch ? d->pitch : p->extent.width;
    size_t sh = s->ysize ? s->ysize : p->extent.height, dh = d->ysize ? d->ysize : p->extent.height;
    const char *src = (const char *)s->ptr + (p->srcPos.z * sh + p->srcPos.y) * sp + p->srcPos.x;
    char *dst = (char *)d->ptr + (p->dstPos.z * dh + p->dstPos.y) * dp + p->dstPos.x;
    snprintf(out, room, "%p %p %zu %zu %zu %zu %zu %zu %zu %d", (void *)dst, (const void *)src, p->extent.width,
             p->extent.height ? p->extent.height : 1, p->extent.depth ? p->extent.depth : 1, dp, sp, dh, sh,
             (int)p->kind);
    return cudaSuccess;
}

static void memcpy1d_numbers(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, char *out, size_t room) {
    snprintf(out, room, "%p %p %zu 1 1 %zu %zu 1 1 %d", dst, src, n, n, n, (int)kind);
}

static void memset_numbers(const struct cudaMemsetParams *p, char *out, size_t room) {
    snprintf(out, room, "%p %u %u %zu %zu %zu", p->dst, p->value, p->elementSize, p->width, p->height ? p->height : 1,
             p->pitch);
}

static char *deps_text(const cudaGraphNode_t *deps, size_t n) {
    char *t = malloc(24 * n + 2);
    size_t k = 0;
    t[0] = 0;
    for (size_t i = 0; i < n; i++) k += (size_t)sprintf(t + k, "%p ", (void *)deps[i]);
    return t;
}

/* Add a node of ``kind`` (cudaGraphNodeType) with parameters already written as text. */
static cudaError_t add_node(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps, int kind,
                            const char *params) {
    if (!node || (ndeps && !deps)) return ret(cudaErrorInvalidValue);
    char *d = deps_text(deps, ndeps);
    int code = rpc("node_add %p %d %zu %s %s", H(g), kind, ndeps, d, params);
    free(d);
    if (!code) *node = (cudaGraphNode_t)R[1];
    return ret(code);
}

static cudaError_t add_kernel(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                              const void *func, dim3 grid, dim3 block, unsigned shmem, void **args) {
    if (!node || (ndeps && !deps)) return ret(cudaErrorInvalidValue);
    char *d = deps_text(deps, ndeps);
    char head[4096];
    snprintf(head, sizeof head, "node_add %p %d %zu %s", H(g), (int)cudaGraphNodeTypeKernel, ndeps, d);
    free(d);
    cudaError_t e = kernel_request(head, func, grid, block, shmem, args);
    if (!e) *node = (cudaGraphNode_t)R[1];
    return e;
}

/* Kernel node parameters read back: kernelParams point into storage kept per node. */
typedef struct { unsigned long long node; char *args; void *ptrs[64]; } KernelArgs;
static KernelArgs kargs[256];
static int nkargs;

static cudaError_t kernel_params_out(unsigned long long node, struct cudaKernelNodeParams *p) {
    const char *name = RB;
    size_t nl = strlen(name);
    Func *f = 0;
    for (int i = 0; i < nfuncs; i++)
        if (!strcmp(funcs[i].name, name)) f = &funcs[i];
    if (!f) return ret(cudaErrorInvalidDeviceFunction);
    load_params(f);
    KernelArgs *k = 0;
    for (int i = 0; i < nkargs; i++)
        if (kargs[i].node == node) k = &kargs[i];
    if (!k) k = &kargs[nkargs < 256 ? nkargs++ : 255];
    k->node = node;
    free(k->args);
    size_t n = RBN > nl + 1 ? RBN - nl - 1 : 0;
    k->args = malloc(n + 1);
    memcpy(k->args, RB + nl + 1, n);
    size_t off = 0;
    for (int i = 0; i < f->n; i++) {
        off = (off + f->align[i] - 1) / f->align[i] * f->align[i];
        k->ptrs[i] = k->args + off;
        off += f->size[i];
    }
    memset(p, 0, sizeof *p);
    p->func = (void *)f->host;
    p->gridDim = dim3_of(R[2], R[3], R[4]);
    p->blockDim = dim3_of(R[5], R[6], R[7]);
    p->sharedMemBytes = (unsigned)R[8];
    p->kernelParams = k->ptrs;
    return cudaSuccess;
}

/* ------------------------------------------------------------------ graphs */
cudaError_t cudaGraphCreate(cudaGraph_t *g, unsigned int flags) {
    if (!g || flags) return ret(cudaErrorInvalidValue);
    int code = rpc("graph_create");
    if (!code) *g = (cudaGraph_t)R[1];
    return ret(code);
}

cudaError_t cudaGraphDestroy(cudaGraph_t g) { return ret(rpc("graph_destroy %p", H(g))); }

cudaError_t cudaGraphClone(cudaGraph_t *clone, cudaGraph_t g) {
    if (!clone) return ret(cudaErrorInvalidValue);
    int code = rpc("graph_clone %p", H(g));
    if (!code) *clone = (cudaGraph_t)R[1];
    return ret(code);
}

static cudaError_t node_list(const char *which, cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n) {
    if (!n) return ret(cudaErrorInvalidValue);
    int code = rpc("graph_nodes %p %s", H(g), which);
    if (code) return ret(code);
    size_t have = (size_t)R[1];
    if (nodes)
        for (size_t i = 0; i < have && i < *n; i++) nodes[i] = (cudaGraphNode_t)R[2 + i];
    *n = nodes && *n < have ? *n : have;
    return cudaSuccess;
}

cudaError_t cudaGraphGetNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n) { return node_list("all", g, nodes, n); }
cudaError_t cudaGraphGetRootNodes(cudaGraph_t g, cudaGraphNode_t *nodes, size_t *n) { return node_list("roots", g, nodes, n); }

cudaError_t cudaGraphGetEdges(cudaGraph_t g, cudaGraphNode_t *from, cudaGraphNode_t *to, cudaGraphEdgeData *data,
                              size_t *n) {
    if (!n || (!from) != (!to)) return ret(cudaErrorInvalidValue);
    int code = rpc("graph_edges %p", H(g));
    if (code) return ret(code);
    size_t have = (size_t)R[1];
    for (size_t i = 0; from && i < have && i < *n; i++) {
        from[i] = (cudaGraphNode_t)R[2 + i], to[i] = (cudaGraphNode_t)R[2 + have + i];
        if (data) memset(&data[i], 0, sizeof *data);
    }
    *n = from && *n < have ? *n : have;
    return cudaSuccess;
}

static cudaError_t edges(const char *add, cudaGraph_t g, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                         size_t n) {
    if (n && (!from || !to)) return ret(cudaErrorInvalidValue);
    char *a = deps_text(from, n), *b = deps_text(to, n);
    int code = rpc("edges %p %s %zu %s %s", H(g), add, n, a, b);
    free(a), free(b);
    return ret(code);
}

cudaError_t cudaGraphAddDependencies(cudaGraph_t g, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                     const cudaGraphEdgeData *data, size_t n) {
    (void)data;
    return edges("1", g, from, to, n);
}

cudaError_t cudaGraphRemoveDependencies(cudaGraph_t g, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                        const cudaGraphEdgeData *data, size_t n) {
    (void)data;
    return edges("0", g, from, to, n);
}

cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node) { return ret(rpc("node_destroy %p", H(node))); }

cudaError_t cudaGraphNodeFindInClone(cudaGraphNode_t *found, cudaGraphNode_t node, cudaGraph_t clone) {
    if (!found) return ret(cudaErrorInvalidValue);
    int code = rpc("node_find %p %p", H(node), H(clone));
    if (!code) *found = (cudaGraphNode_t)R[1];
    return ret(code);
}

cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *type) {
    if (!type) return ret(cudaErrorInvalidValue);
    int code = rpc("node_info %p", H(node));
    if (!code) *type = (enum cudaGraphNodeType)R[1];
    return ret(code);
}

cudaError_t cudaGraphNodeGetContainingGraph(cudaGraphNode_t node, cudaGraph_t *g) {
    if (!g) return ret(cudaErrorInvalidValue);
    int code = rpc("node_info %p", H(node));
    if (!code) *g = (cudaGraph_t)R[2];
    return ret(code);
}

static cudaError_t neighbours(cudaGraphNode_t node, int dependents, cudaGraphNode_t *out, cudaGraphEdgeData *data,
                              size_t *n) {
    if (!n) return ret(cudaErrorInvalidValue);
    int code = rpc("node_info %p", H(node));
    if (code) return ret(code);
    size_t ndeps = (size_t)R[3], ndependents = (size_t)R[4];
    size_t have = dependents ? ndependents : ndeps, first = 5 + (dependents ? ndeps : 0);
    for (size_t i = 0; out && i < have && i < *n; i++) {
        out[i] = (cudaGraphNode_t)R[first + i];
        if (data) memset(&data[i], 0, sizeof *data);
    }
    *n = out && *n < have ? *n : have;
    return cudaSuccess;
}

cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *deps, cudaGraphEdgeData *data,
                                         size_t *n) { return neighbours(node, 0, deps, data, n); }
cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *deps, cudaGraphEdgeData *data,
                                           size_t *n) { return neighbours(node, 1, deps, data, n); }

/* ------------------------------------------------------------------ adding nodes */
cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                   const struct cudaKernelNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    return add_kernel(node, g, deps, ndeps, p->func, p->gridDim, p->blockDim, p->sharedMemBytes, p->kernelParams);
}

cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                   const struct cudaMemcpy3DParms *p) {
    char t[512];
    cudaError_t e = memcpy3d_numbers(p, t, sizeof t);
    return e ? e : add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemcpy, t);
}

cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                     void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
    char t[512];
    memcpy1d_numbers(dst, src, n, kind, t, sizeof t);
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemcpy, t);
}

cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                           size_t ndeps, const void *sym, const void *src, size_t n, size_t offset,
                                           enum cudaMemcpyKind kind) {
    char *dev, t[512];
    cudaError_t e = symbol(sym, n, offset, &dev);
    if (e) return e;
    memcpy1d_numbers(dev, src, n, kind == cudaMemcpyDefault ? kind : kind == cudaMemcpyDeviceToDevice ? kind
                     : cudaMemcpyHostToDevice, t, sizeof t);
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemcpy, t);
}

cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                             size_t ndeps, void *dst, const void *sym, size_t n, size_t offset,
                                             enum cudaMemcpyKind kind) {
    char *dev, t[512];
    cudaError_t e = symbol(sym, n, offset, &dev);
    if (e) return e;
    memcpy1d_numbers(dst, dev, n, kind == cudaMemcpyDefault ? kind : kind == cudaMemcpyDeviceToDevice ? kind
                     : cudaMemcpyDeviceToHost, t, sizeof t);
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemcpy, t);
}

cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                   const struct cudaMemsetParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    char t[512];
    memset_numbers(p, t, sizeof t);
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemset, t);
}

cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                 const struct cudaHostNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    char t[64];
    snprintf(t, sizeof t, "%p %p", (void *)p->fn, p->userData);
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeHost, t);
}

cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps) {
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeEmpty, "");
}

/* a node whose one parameter is a handle: a child graph, or an event to record or wait for */
static cudaError_t add_handle_node(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                   int kind, void *handle) {
    char t[32];
    snprintf(t, sizeof t, "%p", handle);
    return add_node(node, g, deps, ndeps, kind, t);
}

cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                       cudaGraph_t child) {
    return add_handle_node(node, g, deps, ndeps, cudaGraphNodeTypeGraph, H(child));
}

cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                        size_t ndeps, cudaEvent_t ev) {
    return add_handle_node(node, g, deps, ndeps, cudaGraphNodeTypeEventRecord, H(ev));
}

cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                                      size_t ndeps, cudaEvent_t ev) {
    return add_handle_node(node, g, deps, ndeps, cudaGraphNodeTypeWaitEvent, H(ev));
}

cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                     struct cudaMemAllocNodeParams *p) {
    if (!p || !p->bytesize) return ret(cudaErrorInvalidValue);
    if (p->poolProps.location.id != 0) return ret(cudaErrorInvalidDevice);
    char t[32];
    snprintf(t, sizeof t, "%zu", p->bytesize);
    cudaError_t e = add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemAlloc, t);
    if (!e) p->dptr = (void *)R[2];   /* the address is fixed when the node is made */
    return e;
}

cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps, size_t ndeps,
                                    void *dptr) {
    char t[32];
    snprintf(t, sizeof t, "%p", dptr);
    return add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemFree, t);
}

cudaError_t cudaGraphConditionalHandleCreate(cudaGraphConditionalHandle *h, cudaGraph_t g, unsigned int defaultValue,
                                             unsigned int flags) {
    if (!h) return ret(cudaErrorInvalidValue);
    int code = rpc("cond_create %p %u %u", H(g), defaultValue, flags);
    if (!code) *h = (cudaGraphConditionalHandle)R[1];
    return ret(code);
}

cudaError_t cudaGraphAddNode(cudaGraphNode_t *node, cudaGraph_t g, const cudaGraphNode_t *deps,
                             const cudaGraphEdgeData *data, size_t ndeps, struct cudaGraphNodeParams *p) {
    (void)data;
    if (!p) return ret(cudaErrorInvalidValue);
    char t[512];
    switch (p->type) {
    case cudaGraphNodeTypeKernel:
        return add_kernel(node, g, deps, ndeps, p->kernel.func, p->kernel.gridDim, p->kernel.blockDim,
                          p->kernel.sharedMemBytes, p->kernel.kernelParams);
    case cudaGraphNodeTypeMemcpy: {
        cudaError_t e = memcpy3d_numbers(&p->memcpy.copyParams, t, sizeof t);
        return e ? e : add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemcpy, t);
    }
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = {p->memset.dst, p->memset.pitch, p->memset.value, p->memset.elementSize,
                                     p->memset.width, p->memset.height};
        memset_numbers(&m, t, sizeof t);
        return add_node(node, g, deps, ndeps, cudaGraphNodeTypeMemset, t);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams hp = {p->host.fn, p->host.userData};
        return cudaGraphAddHostNode(node, g, deps, ndeps, &hp);
    }
    case cudaGraphNodeTypeGraph: return cudaGraphAddChildGraphNode(node, g, deps, ndeps, p->graph.graph);
    case cudaGraphNodeTypeEmpty: return cudaGraphAddEmptyNode(node, g, deps, ndeps);
    case cudaGraphNodeTypeEventRecord: return cudaGraphAddEventRecordNode(node, g, deps, ndeps, p->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent: return cudaGraphAddEventWaitNode(node, g, deps, ndeps, p->eventWait.event);
    case cudaGraphNodeTypeMemFree: return cudaGraphAddMemFreeNode(node, g, deps, ndeps, p->free.dptr);
    case cudaGraphNodeTypeMemAlloc: {
        struct cudaMemAllocNodeParams a = {p->alloc.poolProps, p->alloc.accessDescs, p->alloc.accessDescCount,
                                           p->alloc.bytesize, 0};
        cudaError_t e = cudaGraphAddMemAllocNode(node, g, deps, ndeps, &a);
        p->alloc.dptr = a.dptr;
        return e;
    }
    case cudaGraphNodeTypeConditional: {
        snprintf(t, sizeof t, "%llu %d %u", (unsigned long long)p->conditional.handle, (int)p->conditional.type,
                 p->conditional.size);
        cudaError_t e = add_node(node, g, deps, ndeps, cudaGraphNodeTypeConditional, t);
        if (e) return e;
        cudaGraph_t *bodies = malloc(sizeof *bodies * (p->conditional.size ? p->conditional.size : 1));
        for (unsigned i = 0; i < p->conditional.size; i++) bodies[i] = (cudaGraph_t)R[2 + i];
        p->conditional.phGraph_out = bodies;   /* owned by the node: valid as long as it is */
        return cudaSuccess;
    }
    default:
        say_once("cudalab: graph nodes of this type (external semaphores, batched copies) are not supported by "
                 "the emulated GPU.");
        return ret(cudaErrorNotSupported);
    }
}

/* ------------------------------------------------------------------ reading and changing node parameters */
static int node_params(cudaGraphNode_t node, enum cudaGraphNodeType kind) {
    return rpc("node_params %p %d", H(node), (int)kind);
}

cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = node_params(node, cudaGraphNodeTypeKernel);
    return code ? ret(code) : kernel_params_out((unsigned long long)H(node), p);
}

static cudaError_t set_kernel(const char *head, const struct cudaKernelNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    return kernel_request(head, p->func, p->gridDim, p->blockDim, p->sharedMemBytes, p->kernelParams);
}

cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node, const struct cudaKernelNodeParams *p) {
    char head[64];
    snprintf(head, sizeof head, "node_set %p", H(node));
    return set_kernel(head, p);
}

cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node,
                                             const struct cudaKernelNodeParams *p) {
    char head[96];
    snprintf(head, sizeof head, "exec_node_set %p %p", H(e), H(node));
    return set_kernel(head, p);
}

cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node, struct cudaMemcpy3DParms *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = node_params(node, cudaGraphNodeTypeMemcpy);
    if (code) return ret(code);
    memset(p, 0, sizeof *p);
    p->dstPtr = (struct cudaPitchedPtr){(void *)R[2], (size_t)R[7], (size_t)R[4], (size_t)R[9]};
    p->srcPtr = (struct cudaPitchedPtr){(void *)R[3], (size_t)R[8], (size_t)R[4], (size_t)R[10]};
    p->extent = (struct cudaExtent){(size_t)R[4], (size_t)R[5], (size_t)R[6]};
    p->kind = (enum cudaMemcpyKind)R[11];
    return cudaSuccess;
}

static cudaError_t set_simple(const char *how, const char *params) { return ret(rpc("%s %s", how, params)); }

/* The request that changes a node: in its graph (e == 0) or in the executable graph e. */
static void where(char *how, size_t room, cudaGraphExec_t e, cudaGraphNode_t node) {
    if (e) snprintf(how, room, "exec_node_set %p %p", H(e), H(node));
    else snprintf(how, room, "node_set %p", H(node));
}

/* a graph's node is set as an executable graph's is, without the executable graph (where() says which) */
cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node, const struct cudaMemcpy3DParms *p) {
    return cudaGraphExecMemcpyNodeSetParams(0, node, p);
}

cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst, const void *src, size_t n,
                                           enum cudaMemcpyKind kind) {
    return cudaGraphExecMemcpyNodeSetParams1D(0, node, dst, src, n, kind);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node, const struct cudaMemcpy3DParms *p) {
    char t[512], how[96];
    cudaError_t err = memcpy3d_numbers(p, t, sizeof t);
    where(how, sizeof how, e, node);
    return err ? err : set_simple(how, t);
}

cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t e, cudaGraphNode_t node, void *dst, const void *src,
                                               size_t n, enum cudaMemcpyKind kind) {
    char t[512], how[96];
    memcpy1d_numbers(dst, src, n, kind, t, sizeof t);
    where(how, sizeof how, e, node);
    return set_simple(how, t);
}

cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node, struct cudaMemsetParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = node_params(node, cudaGraphNodeTypeMemset);
    if (code) return ret(code);
    p->dst = (void *)R[2], p->value = (unsigned)R[3], p->elementSize = (unsigned)R[4];
    p->width = (size_t)R[5], p->height = (size_t)R[6], p->pitch = (size_t)R[7];
    return cudaSuccess;
}

cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node, const struct cudaMemsetParams *p) {
    return cudaGraphExecMemsetNodeSetParams(0, node, p);
}

cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node, const struct cudaMemsetParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    char t[512], how[96];
    memset_numbers(p, t, sizeof t);
    where(how, sizeof how, e, node);
    return set_simple(how, t);
}

cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node, struct cudaHostNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = node_params(node, cudaGraphNodeTypeHost);
    if (code) return ret(code);
    p->fn = (cudaHostFn_t)R[2], p->userData = (void *)R[3];
    return cudaSuccess;
}

cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node, const struct cudaHostNodeParams *p) {
    return cudaGraphExecHostNodeSetParams(0, node, p);
}

cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node, const struct cudaHostNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    char t[64], how[96];
    snprintf(t, sizeof t, "%p %p", (void *)p->fn, p->userData);
    where(how, sizeof how, e, node);
    return set_simple(how, t);
}

static cudaError_t node_handle(cudaGraphNode_t node, enum cudaGraphNodeType kind, void **out) {
    if (!out) return ret(cudaErrorInvalidValue);
    int code = node_params(node, kind);
    if (!code) *out = (void *)R[2];
    return ret(code);
}

cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *g) {
    return node_handle(node, cudaGraphNodeTypeGraph, (void **)g);
}
cudaError_t cudaGraphEventRecordNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *ev) {
    return node_handle(node, cudaGraphNodeTypeEventRecord, (void **)ev);
}
cudaError_t cudaGraphEventWaitNodeGetEvent(cudaGraphNode_t node, cudaEvent_t *ev) {
    return node_handle(node, cudaGraphNodeTypeWaitEvent, (void **)ev);
}
cudaError_t cudaGraphMemFreeNodeGetParams(cudaGraphNode_t node, void *dptr) {
    return node_handle(node, cudaGraphNodeTypeMemFree, (void **)dptr);
}

cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    int code = node_params(node, cudaGraphNodeTypeMemAlloc);
    if (code) return ret(code);
    memset(p, 0, sizeof *p);
    p->poolProps.allocType = cudaMemAllocationTypePinned;
    p->poolProps.location.type = cudaMemLocationTypeDevice;
    p->dptr = (void *)R[2], p->bytesize = (size_t)R[3];
    return cudaSuccess;
}

cudaError_t cudaGraphEventRecordNodeSetEvent(cudaGraphNode_t node, cudaEvent_t ev) {
    return cudaGraphExecEventRecordNodeSetEvent(0, node, ev);
}
cudaError_t cudaGraphEventWaitNodeSetEvent(cudaGraphNode_t node, cudaEvent_t ev) {
    return cudaGraphEventRecordNodeSetEvent(node, ev);
}
cudaError_t cudaGraphExecEventRecordNodeSetEvent(cudaGraphExec_t e, cudaGraphNode_t node, cudaEvent_t ev) {
    char how[96], t[32];
    where(how, sizeof how, e, node);
    snprintf(t, sizeof t, "%p", H(ev));
    return set_simple(how, t);
}
cudaError_t cudaGraphExecEventWaitNodeSetEvent(cudaGraphExec_t e, cudaGraphNode_t node, cudaEvent_t ev) {
    return cudaGraphExecEventRecordNodeSetEvent(e, node, ev);
}

cudaError_t cudaGraphExecChildGraphNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node, cudaGraph_t child) {
    char how[96], t[32];
    where(how, sizeof how, e, node);
    snprintf(t, sizeof t, "%p", H(child));
    return set_simple(how, t);
}

/* ------------------------------------------------------------------ executable graphs */
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags) {
    if (!e) return ret(cudaErrorInvalidValue);
    int code = rpc("instantiate %p %llu", H(g), flags);
    if (!code) *e = (cudaGraphExec_t)R[1];
    return ret(code);
}

cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags) {
    return cudaGraphInstantiate(e, g, flags);
}

cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *e, cudaGraph_t g, cudaGraphInstantiateParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    cudaError_t err = cudaGraphInstantiate(e, g, p->flags);
    p->result_out = err ? cudaGraphInstantiateError : cudaGraphInstantiateSuccess;
    p->errNode_out = 0;
    if (!err && (p->flags & cudaGraphInstantiateFlagUpload)) err = cudaGraphUpload(*e, p->uploadStream);
    return err;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e) { return ret(rpc("exec_destroy %p", H(e))); }

cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t e, unsigned long long *flags) {
    if (!flags || !e) return ret(cudaErrorInvalidValue);
    *flags = 0;
    return cudaSuccess;
}

cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info) {
    int code = rpc("exec_update %p %p", H(e), H(g));
    if (info) {
        memset(info, 0, sizeof *info);
        info->result = (enum cudaGraphExecUpdateResult)(NR > 1 ? R[1] : 1);
    }
    return ret(code);
}

cudaError_t cudaGraphNodeSetEnabled(cudaGraphExec_t e, cudaGraphNode_t node, unsigned int on) {
    return ret(rpc("node_enable %p %p %d", H(e), H(node), on != 0));
}

cudaError_t cudaGraphNodeGetEnabled(cudaGraphExec_t e, cudaGraphNode_t node, unsigned int *on) {
    if (!on) return ret(cudaErrorInvalidValue);
    int code = rpc("node_enable %p %p ?", H(e), H(node));
    if (!code) *on = (unsigned)R[1];
    return ret(code);
}

cudaError_t cudaGraphUpload(cudaGraphExec_t e, cudaStream_t s) {
    if (!e) return ret(cudaErrorInvalidValue);
    return ret(rpc("stream_info %p", (void *)s));
}

/* Run a graph: the emulator runs its kernels (and its host nodes, on the driver thread) and hands
 * back the copies and memsets that touch this process's memory, in dependency order. */
cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s) {
    if (!e) return ret(cudaErrorInvalidValue);
    start_driver_thread();
    flush_printf();
    int code = rpc("graph_launch %p %p", H(e), (void *)s);
    while (!code) {
        keep_printf();
        unsigned long long p[10];
        for (int i = 0; i < 10; i++) p[i] = i + 1 < NR ? R[i + 1] : 0;
        if (p[0] == 0) break;
        if (p[0] == 1) {            /* copy: dst src width height depth dpitch spitch dheight sheight */
            for (size_t z = 0; z < p[5]; z++)
                for (size_t y = 0; y < p[4]; y++)
                    memmove((char *)p[1] + (z * p[8] + y) * p[6], (const char *)p[2] + (z * p[9] + y) * p[7], p[3]);
        } else {                    /* memset: dst value element width height pitch */
            for (size_t y = 0; y < p[5]; y++) {
                char *row = (char *)p[1] + y * p[6];
                for (size_t x = 0; x < p[4]; x++) memcpy(row + x * p[3], &p[2], p[3]);
            }
        }
        shim_worked();      /* a node's bytes: the copy engine's time, not the host's */
        code = rpc("graph_next");
    }
    if (code) keep_printf();
    return ret(code);
}

cudaError_t cudaGraphDebugDotPrint(cudaGraph_t g, const char *path, unsigned int flags) {
    (void)flags;
    if (!path) return ret(cudaErrorInvalidValue);
    int code = rpc("graph_dot %p", H(g));
    if (code) return ret(code);
    FILE *f = fopen(path, "w");
    if (!f) return ret(cudaErrorOperatingSystem);
    fwrite(RB, 1, RBN, f);
    fclose(f);
    return cudaSuccess;
}

/* ------------------------------------------------------------------ stream capture */
cudaError_t cudaStreamBeginCaptureToGraph(cudaStream_t s, cudaGraph_t g, const cudaGraphNode_t *deps,
                                          const cudaGraphEdgeData *data, size_t ndeps, enum cudaStreamCaptureMode mode) {
    (void)data;
    if (ndeps && !deps) return ret(cudaErrorInvalidValue);
    char *d = deps_text(deps, ndeps);
    int code = rpc("capture_begin %p %d %p %s", (void *)s, (int)mode, H(g), d);
    free(d);
    return ret(code);
}

cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode mode) {
    return cudaStreamBeginCaptureToGraph(s, 0, 0, 0, 0, mode);
}

cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g) {
    int code = rpc("capture_end %p", (void *)s);
    if (g) *g = code ? 0 : (cudaGraph_t)R[1];
    return ret(code);
}

static __thread cudaGraphNode_t capture_deps[256];
static __thread cudaGraphEdgeData capture_edges[256];

cudaError_t cudaStreamGetCaptureInfo(cudaStream_t s, enum cudaStreamCaptureStatus *status, unsigned long long *id,
                                     cudaGraph_t *g, const cudaGraphNode_t **deps, const cudaGraphEdgeData **data,
                                     size_t *ndeps) {
    if (!status) return ret(cudaErrorInvalidValue);
    int code = rpc("capture_info %p", (void *)s);
    if (code) return ret(code);
    *status = (enum cudaStreamCaptureStatus)R[1];
    if (!R[1]) return cudaSuccess;
    size_t n = (size_t)R[4] < 256 ? (size_t)R[4] : 256;
    for (size_t i = 0; i < n; i++) capture_deps[i] = (cudaGraphNode_t)R[5 + i];
    memset(capture_edges, 0, sizeof capture_edges);
    if (id) *id = R[2];
    if (g) *g = (cudaGraph_t)R[3];
    if (deps) *deps = capture_deps;
    if (data) *data = capture_edges;
    if (ndeps) *ndeps = n;
    return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t s, enum cudaStreamCaptureStatus *status) {
    return cudaStreamGetCaptureInfo(s, status, 0, 0, 0, 0, 0);
}

cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t s, cudaGraphNode_t *deps, const cudaGraphEdgeData *data,
                                                size_t n, unsigned int flags) {
    (void)data;
    if (n && !deps) return ret(cudaErrorInvalidValue);
    if (flags > 1) return ret(cudaErrorInvalidValue);
    char *d = deps_text(deps, n);
    int code = rpc("capture_update %p %u %s", (void *)s, flags, d);
    free(d);
    return ret(code);
}

cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode) {
    if (!mode || (int)*mode < 0 || (int)*mode > 2) return ret(cudaErrorInvalidValue);
    int code = rpc("capture_mode %d", (int)*mode);
    if (!code) *mode = (enum cudaStreamCaptureMode)R[1];
    return ret(code);
}

/* ------------------------------------------------------------------ node parameters, any type (cudaGraphNodeParams) */
cudaError_t cudaGraphNodeGetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    enum cudaGraphNodeType type;
    cudaError_t e = cudaGraphNodeGetType(node, &type);
    if (e) return e;
    memset(p, 0, sizeof *p);
    p->type = type;
    switch (type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k;
        e = cudaGraphKernelNodeGetParams(node, &k);
        p->kernel.func = k.func, p->kernel.gridDim = k.gridDim, p->kernel.blockDim = k.blockDim;
        p->kernel.sharedMemBytes = k.sharedMemBytes, p->kernel.kernelParams = k.kernelParams;
        return e;
    }
    case cudaGraphNodeTypeMemcpy: return cudaGraphMemcpyNodeGetParams(node, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m;
        e = cudaGraphMemsetNodeGetParams(node, &m);
        p->memset.dst = m.dst, p->memset.pitch = m.pitch, p->memset.value = m.value;
        p->memset.elementSize = m.elementSize, p->memset.width = m.width, p->memset.height = m.height;
        return e;
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h;
        e = cudaGraphHostNodeGetParams(node, &h);
        p->host.fn = h.fn, p->host.userData = h.userData;
        return e;
    }
    case cudaGraphNodeTypeGraph: return cudaGraphChildGraphNodeGetGraph(node, &p->graph.graph);
    case cudaGraphNodeTypeEventRecord: return cudaGraphEventRecordNodeGetEvent(node, &p->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent: return cudaGraphEventWaitNodeGetEvent(node, &p->eventWait.event);
    case cudaGraphNodeTypeMemFree: return cudaGraphMemFreeNodeGetParams(node, &p->free.dptr);
    case cudaGraphNodeTypeMemAlloc: {
        struct cudaMemAllocNodeParams a;
        e = cudaGraphMemAllocNodeGetParams(node, &a);
        p->alloc.poolProps = a.poolProps, p->alloc.bytesize = a.bytesize, p->alloc.dptr = a.dptr;
        return e;
    }
    default: return cudaSuccess;      /* empty and conditional nodes: the type says it all */
    }
}

/* Set a node's parameters in the graph (exec == 0) or in an executable graph. */
static cudaError_t set_any(cudaGraphExec_t exec, cudaGraphNode_t node, struct cudaGraphNodeParams *p) {
    if (!p) return ret(cudaErrorInvalidValue);
    switch (p->type) {
    case cudaGraphNodeTypeKernel: {
        struct cudaKernelNodeParams k = {p->kernel.func, p->kernel.gridDim, p->kernel.blockDim,
                                         p->kernel.sharedMemBytes, p->kernel.kernelParams, 0};
        return exec ? cudaGraphExecKernelNodeSetParams(exec, node, &k) : cudaGraphKernelNodeSetParams(node, &k);
    }
    case cudaGraphNodeTypeMemcpy:
        return exec ? cudaGraphExecMemcpyNodeSetParams(exec, node, &p->memcpy.copyParams)
                    : cudaGraphMemcpyNodeSetParams(node, &p->memcpy.copyParams);
    case cudaGraphNodeTypeMemset: {
        struct cudaMemsetParams m = {p->memset.dst, p->memset.pitch, p->memset.value, p->memset.elementSize,
                                     p->memset.width, p->memset.height};
        return exec ? cudaGraphExecMemsetNodeSetParams(exec, node, &m) : cudaGraphMemsetNodeSetParams(node, &m);
    }
    case cudaGraphNodeTypeHost: {
        struct cudaHostNodeParams h = {p->host.fn, p->host.userData};
        return exec ? cudaGraphExecHostNodeSetParams(exec, node, &h) : cudaGraphHostNodeSetParams(node, &h);
    }
    case cudaGraphNodeTypeEventRecord:
        return exec ? cudaGraphExecEventRecordNodeSetEvent(exec, node, p->eventRecord.event)
                    : cudaGraphEventRecordNodeSetEvent(node, p->eventRecord.event);
    case cudaGraphNodeTypeWaitEvent:
        return exec ? cudaGraphExecEventWaitNodeSetEvent(exec, node, p->eventWait.event)
                    : cudaGraphEventWaitNodeSetEvent(node, p->eventWait.event);
    case cudaGraphNodeTypeGraph:
        if (exec) return cudaGraphExecChildGraphNodeSetParams(exec, node, p->graph.graph);
        /* fall through: a child graph node's graph cannot be replaced in the graph */
    default:
        say_once("cudalab: changing the parameters of this kind of graph node is not supported.");
        return ret(cudaErrorNotSupported);
    }
}

cudaError_t cudaGraphNodeSetParams(cudaGraphNode_t node, struct cudaGraphNodeParams *p) { return set_any(0, node, p); }
cudaError_t cudaGraphExecNodeSetParams(cudaGraphExec_t e, cudaGraphNode_t node, struct cudaGraphNodeParams *p) {
    return set_any(e, node, p);
}
