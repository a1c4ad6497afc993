/* Runtime calls that CUDA 13 removed, as CUDA 12 and older declared them, for programs written then.
 *
 * cudalab builds with CUDA 13's headers, but most course programs and book listings were written
 * for CUDA 10 to 12: they prefetch and advise managed memory by device number and synchronize with
 * cudaThreadSynchronize. cudalab gives every translation unit this header first (nvcc -include), so
 * such a program builds unchanged; each call forwards to its CUDA 13 replacement, the way
 * cuda_runtime.h itself keeps the five-argument cudaGraphInstantiate.
 */
#pragma once
#include <cuda_runtime_api.h>

/* assert() in a kernel without #include <cassert>: CUDA 12's headers brought <assert.h> into the
 * device side of every .cu file, CUDA 13's bring it into the host side only (its device pass stops at
 * 'identifier "assert" is undefined'), and two Chinese tutorials' softmax and tiled matmul rely on it.
 * nvcc puts the runtime's headers before the program's first line, so NDEBUG set by the program did
 * not reach this include then either. */
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
#include <assert.h>
#endif

/* __shfl, __shfl_up, __shfl_down, __shfl_xor: the warp shuffles of CUDA 5 to 8, which CUDA 9 replaced
 * with the _sync forms and CUDA 13 declares only for compute capabilities below 7.0 (older than
 * nvcc 13 builds for). They exchanged values among the warp's active threads, which is what the
 * _sync form does with __activemask() as its mask (the votes of that time: legacy_votes.h). */
#if defined(__cplusplus) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
template <typename T> __device__ inline T __shfl(T var, int src_lane, int width = warpSize)
{ return __shfl_sync(__activemask(), var, src_lane, width); }
template <typename T> __device__ inline T __shfl_up(T var, unsigned int delta, int width = warpSize)
{ return __shfl_up_sync(__activemask(), var, delta, width); }
template <typename T> __device__ inline T __shfl_down(T var, unsigned int delta, int width = warpSize)
{ return __shfl_down_sync(__activemask(), var, delta, width); }
template <typename T> __device__ inline T __shfl_xor(T var, int lane_mask, int width = warpSize)
{ return __shfl_xor_sync(__activemask(), var, lane_mask, width); }
#endif

/* cudaThreadSynchronize and cudaThreadExit: the context calls of CUDA 3, removed in CUDA 13 */
static inline cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
static inline cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }
/* ... and their limits and cache preference, which became the cudaDevice* calls */
static inline cudaError_t cudaThreadSetLimit(enum cudaLimit limit, size_t value) { return cudaDeviceSetLimit(limit, value); }
static inline cudaError_t cudaThreadGetLimit(size_t *value, enum cudaLimit limit) { return cudaDeviceGetLimit(value, limit); }
static inline cudaError_t cudaThreadSetCacheConfig(enum cudaFuncCache c) { return cudaDeviceSetCacheConfig(c); }
static inline cudaError_t cudaThreadGetCacheConfig(enum cudaFuncCache *c) { return cudaDeviceGetCacheConfig(c); }

#ifdef __cplusplus
/* A device number, or cudaCpuDeviceId for the host, as a cudaMemLocation. */
static inline cudaMemLocation cudalab_location_of(int device) {
    cudaMemLocation location;
    location.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost : cudaMemLocationTypeDevice;
    location.id = device == cudaCpuDeviceId ? 0 : device;
    return location;
}

static inline cudaError_t cudaMemPrefetchAsync(const void *ptr, size_t count, int device, cudaStream_t stream = 0) {
    return cudaMemPrefetchAsync(ptr, count, cudalab_location_of(device), 0, stream);
}

static inline cudaError_t cudaMemAdvise(const void *ptr, size_t count, cudaMemoryAdvise advice, int device) {
    return cudaMemAdvise(ptr, count, advice, cudalab_location_of(device));
}

/* ... and the _v2 forms CUDA 12.2 added with a cudaMemLocation, which CUDA 13 renamed to the plain
 * names (NVIDIA's Grace Hopper talk at GTC 2025 still calls them) */
#if CUDART_VERSION >= 13000
static inline cudaError_t cudaMemPrefetchAsync_v2(const void *ptr, size_t count, cudaMemLocation location,
                                                  unsigned int flags, cudaStream_t stream = 0) {
    return cudaMemPrefetchAsync(ptr, count, location, flags, stream);
}

static inline cudaError_t cudaMemAdvise_v2(const void *ptr, size_t count, cudaMemoryAdvise advice,
                                           cudaMemLocation location) {
    return cudaMemAdvise(ptr, count, advice, location);
}

/* The graph calls that take a list of edges, as CUDA 10 to 12 declared them: without the per-edge
 * cudaGraphEdgeData that CUDA 12.3 added in _v2 forms and CUDA 13 made the only form. Course programs
 * that build a graph by hand (nodes, then cudaGraphAddDependencies(graph, &a, &b, 1)) and the
 * stream-capture helpers were written against these. Plain edges carry no data, so each call forwards
 * with none; the _v2 (and cudaStreamGetCaptureInfo's _v3) names of CUDA 12.3 are CUDA 13's calls. */
static inline cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                   const cudaGraphNode_t *to, size_t numDependencies) {
    return cudaGraphAddDependencies(graph, from, to, (const cudaGraphEdgeData *)0, numDependencies);
}
static inline cudaError_t cudaGraphRemoveDependencies(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                      const cudaGraphNode_t *to, size_t numDependencies) {
    return cudaGraphRemoveDependencies(graph, from, to, (const cudaGraphEdgeData *)0, numDependencies);
}
static inline cudaError_t cudaGraphGetEdges(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                            size_t *numEdges) {
    return cudaGraphGetEdges(graph, from, to, (cudaGraphEdgeData *)0, numEdges);
}
static inline cudaError_t cudaGraphNodeGetDependencies(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                                       size_t *pNumDependencies) {
    return cudaGraphNodeGetDependencies(node, pDependencies, (cudaGraphEdgeData *)0, pNumDependencies);
}
static inline cudaError_t cudaGraphNodeGetDependentNodes(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                                         size_t *pNumDependentNodes) {
    return cudaGraphNodeGetDependentNodes(node, pDependentNodes, (cudaGraphEdgeData *)0, pNumDependentNodes);
}
static inline cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                           const cudaGraphNode_t *pDependencies, size_t numDependencies,
                                           struct cudaGraphNodeParams *nodeParams) {
    return cudaGraphAddNode(pGraphNode, graph, pDependencies, (const cudaGraphEdgeData *)0, numDependencies,
                            nodeParams);
}
static inline cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                   unsigned long long *id, cudaGraph_t *graph,
                                                   const cudaGraphNode_t **dependencies, size_t *numDependencies) {
    return cudaStreamGetCaptureInfo(stream, status, id, graph, dependencies, (const cudaGraphEdgeData **)0,
                                    numDependencies);
}
static inline cudaError_t cudaStreamGetCaptureInfo_v2(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                      unsigned long long *id = 0, cudaGraph_t *graph = 0,
                                                      const cudaGraphNode_t **dependencies = 0,
                                                      size_t *numDependencies = 0) {
    return cudaStreamGetCaptureInfo(stream, status, id, graph, dependencies, (const cudaGraphEdgeData **)0,
                                    numDependencies);
}
static inline cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                              size_t numDependencies, unsigned int flags = 0) {
    return cudaStreamUpdateCaptureDependencies(stream, dependencies, (const cudaGraphEdgeData *)0,
                                               numDependencies, flags);
}
/* CUDA 12.3's names for the forms with edge data */
static inline cudaError_t cudaGraphAddDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                      const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                      size_t numDependencies) {
    return cudaGraphAddDependencies(graph, from, to, edgeData, numDependencies);
}
static inline cudaError_t cudaGraphRemoveDependencies_v2(cudaGraph_t graph, const cudaGraphNode_t *from,
                                                         const cudaGraphNode_t *to, const cudaGraphEdgeData *edgeData,
                                                         size_t numDependencies) {
    return cudaGraphRemoveDependencies(graph, from, to, edgeData, numDependencies);
}
static inline cudaError_t cudaGraphGetEdges_v2(cudaGraph_t graph, cudaGraphNode_t *from, cudaGraphNode_t *to,
                                               cudaGraphEdgeData *edgeData, size_t *numEdges) {
    return cudaGraphGetEdges(graph, from, to, edgeData, numEdges);
}
static inline cudaError_t cudaGraphNodeGetDependencies_v2(cudaGraphNode_t node, cudaGraphNode_t *pDependencies,
                                                          cudaGraphEdgeData *edgeData, size_t *pNumDependencies) {
    return cudaGraphNodeGetDependencies(node, pDependencies, edgeData, pNumDependencies);
}
static inline cudaError_t cudaGraphNodeGetDependentNodes_v2(cudaGraphNode_t node, cudaGraphNode_t *pDependentNodes,
                                                            cudaGraphEdgeData *edgeData, size_t *pNumDependentNodes) {
    return cudaGraphNodeGetDependentNodes(node, pDependentNodes, edgeData, pNumDependentNodes);
}
static inline cudaError_t cudaGraphAddNode_v2(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies, const cudaGraphEdgeData *edgeData,
                                              size_t numDependencies, struct cudaGraphNodeParams *nodeParams) {
    return cudaGraphAddNode(pGraphNode, graph, pDependencies, edgeData, numDependencies, nodeParams);
}
static inline cudaError_t cudaStreamGetCaptureInfo_v3(cudaStream_t stream, enum cudaStreamCaptureStatus *status,
                                                      unsigned long long *id = 0, cudaGraph_t *graph = 0,
                                                      const cudaGraphNode_t **dependencies = 0,
                                                      const cudaGraphEdgeData **edgeData = 0,
                                                      size_t *numDependencies = 0) {
    return cudaStreamGetCaptureInfo(stream, status, id, graph, dependencies, edgeData, numDependencies);
}
static inline cudaError_t cudaStreamUpdateCaptureDependencies_v2(cudaStream_t stream, cudaGraphNode_t *dependencies,
                                                                 const cudaGraphEdgeData *dependencyData,
                                                                 size_t numDependencies, unsigned int flags = 0) {
    return cudaStreamUpdateCaptureDependencies(stream, dependencies, dependencyData, numDependencies, flags);
}
#endif
#endif

#if defined(__cplusplus) && defined(__has_include)
#if __has_include(<thrust/detail/config/host_device.h>)
#define CUDALAB_OLD_THRUST_ON_PATH 1
#endif
#endif
#if defined(__cplusplus) && CUDART_VERSION >= 13000 && !defined(CUDALAB_OLD_THRUST_ON_PATH)
/* thrust::unary_function and thrust::binary_function: the bases Thrust's own functors had up to
 * CUDA 12, removed in CUDA 13 (CCCL 3), as std::unary_function was in C++17. Course functors still
 * derive from them; all they gave was the argument_type and result_type typedefs. Not where the
 * program's include path finds an older Thrust first (a GTC workshop ships Thrust 1.7 beside its
 * exercises and builds with nvcc -I.): that Thrust defines them itself, and two definitions would
 * stop the build (the header below is Thrust 1.x's and 2.x's, gone from CCCL 3). */
namespace thrust {
template <typename Argument, typename Result> struct unary_function {
    typedef Argument argument_type;
    typedef Result result_type;
};
template <typename Argument1, typename Argument2, typename Result> struct binary_function {
    typedef Argument1 first_argument_type;
    typedef Argument2 second_argument_type;
    typedef Result result_type;
};
}
#endif
