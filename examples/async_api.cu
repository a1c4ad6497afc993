// The asynchronous API: the host keeps working while the GPU runs, and asks an event whether the
// GPU is done (NVIDIA's asyncAPI sample in small).
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

__global__ void increment(int *g, int value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    g[i] = g[i] + value;
}

int main()
{
    const int n = 16 * 1024 * 1024 / 64, value = 26;
    size_t bytes = n * sizeof(int);
    int *a, *d;
    CHECK(cudaMallocHost(&a, bytes));
    CHECK(cudaMalloc(&d, bytes));
    CHECK(cudaMemset(d, 255, bytes));
    memset(a, 0, bytes);

    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    CHECK(cudaDeviceSynchronize());

    // everything below is asynchronous with respect to the host
    CHECK(cudaEventRecord(start, 0));
    CHECK(cudaMemcpyAsync(d, a, bytes, cudaMemcpyHostToDevice, 0));
    increment<<<n / 512, 512, 0, 0>>>(d, value);
    CHECK(cudaMemcpyAsync(a, d, bytes, cudaMemcpyDeviceToHost, 0));
    CHECK(cudaEventRecord(stop, 0));

    unsigned long counter = 0;
    while (cudaEventQuery(stop) == cudaErrorNotReady) counter++;   // the host's own work
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    printf("time: GPU %.3f ms, the CPU counted to %lu meanwhile\n", ms, counter);

    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += a[i] != value;
    printf("%d elements incremented by %d, wrong = %d\n", n, value, wrong);
    CHECK(cudaEventDestroy(start)); CHECK(cudaEventDestroy(stop));
    CHECK(cudaFreeHost(a)); CHECK(cudaFree(d));
    printf("Result = %s\n", wrong ? "FAIL" : "PASS");
    return wrong != 0;
}
