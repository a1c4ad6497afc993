// Overlapping copies and kernels with streams: the work is cut into chunks, each chunk's
// host-to-device copy, kernel and device-to-host copy go to its own stream, so the copy engines
// and the SMs work at the same time. Pinned host memory (cudaMallocHost) makes the copies async.
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            printf("CUDA error %s at line %d: %s\n", cudaGetErrorName(err_), __LINE__,  \
                   cudaGetErrorString(err_));                                        \
            exit(1);                                                                 \
        }                                                                            \
    } while (0)

__global__ void work(float *x, int n, int offset)
{
    int i = offset + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < offset + n) {
        float v = x[i];
        for (int k = 0; k < 16; ++k) v = v * 0.5f + 1.0f;     // converges towards 2
        x[i] = v;
    }
}

int main()
{
    const int nStreams = 4, n = 1 << 18, chunk = n / nStreams;
    size_t bytes = n * sizeof(float);
    float *h, *d;
    CHECK(cudaMallocHost(&h, bytes));
    CHECK(cudaMalloc(&d, bytes));
    cudaStream_t streams[nStreams];
    for (int s = 0; s < nStreams; ++s) CHECK(cudaStreamCreate(&streams[s]));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start)); CHECK(cudaEventCreate(&stop));

    // 1. everything in the default stream, one after the other
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
    CHECK(cudaEventRecord(start));
    CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    work<<<n / 256, 256>>>(d, n, 0);
    CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float serial;
    CHECK(cudaEventElapsedTime(&serial, start, stop));
    double sum1 = 0;
    for (int i = 0; i < n; ++i) sum1 += h[i];

    // 2. chunks in streams: copy, kernel, copy per stream
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
    CHECK(cudaEventRecord(start));
    for (int s = 0; s < nStreams; ++s) {
        int off = s * chunk;
        CHECK(cudaMemcpyAsync(d + off, h + off, chunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
        work<<<chunk / 256, 256, 0, streams[s]>>>(d, chunk, off);
        CHECK(cudaMemcpyAsync(h + off, d + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
    }
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float overlapped;
    CHECK(cudaEventElapsedTime(&overlapped, start, stop));
    double sum2 = 0;
    for (int i = 0; i < n; ++i) sum2 += h[i];

    printf("%d streams, %d elements: sum serial = %.4f, sum with streams = %.4f\n", nStreams, n, sum1, sum2);
    printf("time: serial %.3f ms, with %d streams %.3f ms\n", serial, nStreams, overlapped);
    for (int s = 0; s < nStreams; ++s) CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFreeHost(h)); CHECK(cudaFree(d));
    bool ok = sum1 == sum2;
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
