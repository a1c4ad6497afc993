// Host functions in streams: cudaLaunchHostFunc runs a CPU function once everything before it
// in the stream is done (here: to check each chunk's result), and cudaStreamWaitEvent makes one
// stream wait for another's event.
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

__global__ void fill(int *x, int n, int value)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = value + i;
}

struct Chunk { int id; int *host; int n; int value; int wrong; };

void CUDART_CB check(void *data)
{
    Chunk *c = (Chunk *)data;
    for (int i = 0; i < c->n; ++i) c->wrong += c->host[i] != c->value + i;
    printf("callback: chunk %d checked, %d wrong\n", c->id, c->wrong);
}

int main()
{
    const int chunks = 3, n = 1024;
    int *host, *dev;
    CHECK(cudaMallocHost(&host, chunks * n * sizeof(int)));
    CHECK(cudaMalloc(&dev, chunks * n * sizeof(int)));
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    Chunk c[chunks];
    for (int k = 0; k < chunks; ++k) {
        c[k] = Chunk{k, host + k * n, n, 1000 * (k + 1), 0};
        fill<<<n / 256, 256, 0, s>>>(dev + k * n, n, c[k].value);
        CHECK(cudaMemcpyAsync(c[k].host, dev + k * n, n * sizeof(int), cudaMemcpyDeviceToHost, s));
        CHECK(cudaLaunchHostFunc(s, check, &c[k]));
    }
    cudaStream_t other;
    cudaEvent_t done;
    CHECK(cudaStreamCreate(&other));
    CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
    CHECK(cudaEventRecord(done, s));
    CHECK(cudaStreamWaitEvent(other, done, 0));
    fill<<<n / 256, 256, 0, other>>>(dev, n, -7);
    CHECK(cudaStreamSynchronize(other));
    CHECK(cudaStreamSynchronize(s));
    int first;
    CHECK(cudaMemcpy(&first, dev, sizeof first, cudaMemcpyDeviceToHost));
    printf("after the other stream waited: dev[0] = %d\n", first);
    float ms;
    cudaError_t e = cudaEventElapsedTime(&ms, done, done);
    printf("elapsed time of an event without timing: %s\n", cudaGetErrorName(e));
    int wrong = 0;
    for (int k = 0; k < chunks; ++k) wrong += c[k].wrong;
    CHECK(cudaStreamDestroy(s)); CHECK(cudaStreamDestroy(other)); CHECK(cudaEventDestroy(done));
    CHECK(cudaFreeHost(host)); CHECK(cudaFree(dev));
    bool ok = wrong == 0 && first == -7 && e == cudaErrorInvalidResourceHandle;
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
