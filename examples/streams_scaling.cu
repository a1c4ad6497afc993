// The same chunked work in 1, 2 and 4 streams: each chunk's host-to-device copy, kernel and
// device-to-host copy go to its stream. With more streams, one chunk's copy in overlaps another's
// kernel and a third's copy out, so the whole job takes less time (CUDA C++ Programming Guide,
// "Overlapping Behavior"). Pinned host memory (cudaMallocHost) makes the copies asynchronous.
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
    const int n = 1 << 20;
    size_t bytes = n * sizeof(float);
    float *h, *d;
    CHECK(cudaMallocHost(&h, bytes));
    CHECK(cudaMalloc(&d, bytes));
    cudaStream_t streams[4];
    for (int s = 0; s < 4; ++s) CHECK(cudaStreamCreate(&streams[s]));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start)); CHECK(cudaEventCreate(&stop));
    float ms[3];
    double sums[3];
    const int counts[3] = {1, 2, 4};
    for (int run = 0; run < 3; ++run) {
        int nStreams = counts[run], chunk = n / nStreams;
        for (int i = 0; i < n; ++i) h[i] = (float)(i % 100);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaEventRecord(start));
        for (int s = 0; s < nStreams; ++s) {
            int off = s * chunk;
            CHECK(cudaMemcpyAsync(d + off, h + off, chunk * sizeof(float), cudaMemcpyHostToDevice, streams[s]));
            work<<<chunk / 256, 256, 0, streams[s]>>>(d, chunk, off);
            CHECK(cudaMemcpyAsync(h + off, d + off, chunk * sizeof(float), cudaMemcpyDeviceToHost, streams[s]));
        }
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&ms[run], start, stop));
        sums[run] = 0;
        for (int i = 0; i < n; ++i) sums[run] += h[i];
    }
    printf("%d elements in 1, 2 and 4 streams: sums %.4f %.4f %.4f\n", n, sums[0], sums[1], sums[2]);
    printf("time: 1 stream %.3f ms, 2 streams %.3f ms, 4 streams %.3f ms\n", ms[0], ms[1], ms[2]);
    printf("time: speed-up with 2 streams %.2fx, with 4 streams %.2fx\n", ms[0] / ms[1], ms[0] / ms[2]);
    for (int s = 0; s < 4; ++s) CHECK(cudaStreamDestroy(streams[s]));
    CHECK(cudaFreeHost(h)); CHECK(cudaFree(d));
    bool ok = sums[0] == sums[1] && sums[1] == sums[2];
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
