// Copy bandwidth, pageable vs pinned host memory (NVIDIA's bandwidthTest in small): pinned
// (page-locked) memory lets the copy engine read the host's memory directly, so it is faster.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(err_), __LINE__,  \
                   cudaGetErrorString(err_));                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

float timeCopy(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind, int reps)
{
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaEventRecord(a));
    for (int r = 0; r < reps; ++r) CHECK(cudaMemcpy(dst, src, bytes, kind));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    CHECK(cudaEventDestroy(a));
    CHECK(cudaEventDestroy(b));
    return ms / reps;
}

int main()
{
    const size_t bytes = 8 << 20;
    const int reps = 4;
    unsigned char *pageable = (unsigned char *)malloc(bytes), *pinned, *back = (unsigned char *)malloc(bytes);
    unsigned char *d, *d2;
    CHECK(cudaMallocHost(&pinned, bytes));
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMalloc(&d2, bytes));
    for (size_t i = 0; i < bytes; ++i) pageable[i] = (unsigned char)(i * 31), pinned[i] = (unsigned char)(i * 17);

    const char *names[] = {"pageable host to device", "pinned host to device", "pageable device to host",
                           "pinned device to host", "device to device"};
    float ms[5];
    ms[0] = timeCopy(d, pageable, bytes, cudaMemcpyHostToDevice, reps);
    ms[1] = timeCopy(d, pinned, bytes, cudaMemcpyHostToDevice, reps);
    ms[2] = timeCopy(pageable, d, bytes, cudaMemcpyDeviceToHost, reps);
    ms[3] = timeCopy(pinned, d, bytes, cudaMemcpyDeviceToHost, reps);
    ms[4] = timeCopy(d2, d, bytes, cudaMemcpyDeviceToDevice, reps);
    for (int k = 0; k < 5; ++k) printf("time: %-24s %8.2f GB/s\n", names[k], bytes / (ms[k] * 1e6));

    CHECK(cudaMemcpy(back, d2, bytes, cudaMemcpyDeviceToHost));     // d2 = d = pinned's pattern
    bool ok = memcmp(back, pinned, bytes) == 0;
    printf("%zu bytes copied %d times each way; data intact: %s\n", bytes, reps, ok ? "yes" : "no");
    CHECK(cudaFreeHost(pinned)); CHECK(cudaFree(d)); CHECK(cudaFree(d2));
    free(pageable); free(back);
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
