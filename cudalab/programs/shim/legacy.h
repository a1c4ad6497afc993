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

/* cudaThreadSynchronize and cudaThreadExit: the context calls of CUDA 3, removed in CUDA 13 */
static inline cudaError_t cudaThreadSynchronize(void) { return cudaDeviceSynchronize(); }
static inline cudaError_t cudaThreadExit(void) { return cudaDeviceReset(); }

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
#endif
