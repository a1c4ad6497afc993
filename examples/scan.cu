// Prefix sums (scan): an inclusive Hillis-Steele scan of each block in shared memory, then the
// block totals are scanned and added back (a three-kernel scan of a whole array).
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

#define BLOCK 256

__global__ void scanBlocks(const int *in, int *out, int *blockSums, int n)
{
    __shared__ int buf[2][BLOCK];
    int t = threadIdx.x, i = blockIdx.x * BLOCK + t, cur = 0;
    buf[0][t] = i < n ? in[i] : 0;
    __syncthreads();
    for (int offset = 1; offset < BLOCK; offset *= 2) {
        int v = buf[cur][t];
        if (t >= offset) v += buf[cur][t - offset];
        buf[1 - cur][t] = v;
        cur = 1 - cur;
        __syncthreads();
    }
    if (i < n) out[i] = buf[cur][t];
    if (t == BLOCK - 1) blockSums[blockIdx.x] = buf[cur][t];
}

__global__ void scanSums(int *sums, int m)        // one block: a serial-looking but tiny scan
{
    if (threadIdx.x == 0)
        for (int k = 1; k < m; ++k) sums[k] += sums[k - 1];
}

__global__ void addOffsets(int *out, const int *sums, int n)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (blockIdx.x > 0 && i < n) out[i] += sums[blockIdx.x - 1];
}

int main()
{
    const int n = 10000, blocks = (n + BLOCK - 1) / BLOCK;
    int *h = (int *)malloc(n * sizeof(int)), *r = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; ++i) h[i] = (i % 7) - 2;
    int *din, *dout, *dsums;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, n * sizeof(int)));
    CHECK(cudaMalloc(&dsums, blocks * sizeof(int)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));
    scanBlocks<<<blocks, BLOCK>>>(din, dout, dsums, n);
    scanSums<<<1, 32>>>(dsums, blocks);
    addOffsets<<<blocks, BLOCK>>>(dout, dsums, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(r, dout, n * sizeof(int), cudaMemcpyDeviceToHost));
    int wrong = 0, acc = 0;
    for (int i = 0; i < n; ++i) acc += h[i], wrong += r[i] != acc;
    printf("scan of %d elements in %d blocks: out[0]=%d out[%d]=%d out[%d]=%d, wrong = %d\n", n, blocks, r[0],
           BLOCK, r[BLOCK], n - 1, r[n - 1], wrong);
    CHECK(cudaFree(din)); CHECK(cudaFree(dout)); CHECK(cudaFree(dsums));
    printf("Result = %s\n", wrong ? "FAIL" : "PASS");
    return wrong != 0;
}
