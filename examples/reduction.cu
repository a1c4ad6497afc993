// Parallel reduction, several versions (after Mark Harris's "Optimizing Parallel Reduction"):
// 1 interleaved addressing (divergent), 2 sequential addressing, 3 first add during load,
// 4 warp shuffles for the last 32, 5 one atomicAdd per block. Integers, so every sum is exact.
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

__global__ void reduce1(const int *in, int *out, int n)
{
    extern __shared__ int s[];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned int stride = 1; stride < blockDim.x; stride *= 2) {
        if (t % (2 * stride) == 0) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce2(const int *in, int *out, int n)
{
    extern __shared__ int s[];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    s[t] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__global__ void reduce3(const int *in, int *out, int n)
{
    extern __shared__ int s[];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x * 2 + threadIdx.x;
    int v = i < n ? in[i] : 0;
    if (i + blockDim.x < n) v += in[i + blockDim.x];
    s[t] = v;
    __syncthreads();
    for (unsigned int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
        if (t < stride) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

__device__ int warpSum(int v)
{
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffff, v, offset);
    return v;
}

__global__ void reduce4(const int *in, int *out, int n)
{
    __shared__ int warpSums[32];
    unsigned int t = threadIdx.x, i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = warpSum(i < n ? in[i] : 0);
    if (t % 32 == 0) warpSums[t / 32] = v;
    __syncthreads();
    if (t < 32) {
        v = t < blockDim.x / 32 ? warpSums[t] : 0;
        v = warpSum(v);
        if (t == 0) out[blockIdx.x] = v;
    }
}

__global__ void reduce5(const int *in, int *total, int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    int v = warpSum(i < n ? in[i] : 0);
    if (threadIdx.x % 32 == 0) atomicAdd(total, v);
}

int main()
{
    const int n = 1 << 16, threads = 256, blocks = (n + threads - 1) / threads;
    int *h = (int *)malloc(n * sizeof(int)), *partial = (int *)malloc(blocks * sizeof(int));
    long long ref = 0;
    for (int i = 0; i < n; ++i) h[i] = (i * 37) % 101 - 50, ref += h[i];
    int *din, *dout;
    CHECK(cudaMalloc(&din, n * sizeof(int)));
    CHECK(cudaMalloc(&dout, blocks * sizeof(int)));
    CHECK(cudaMemcpy(din, h, n * sizeof(int), cudaMemcpyHostToDevice));

    bool ok = true;
    for (int version = 1; version <= 5; ++version) {
        int nb = version == 3 ? blocks / 2 : blocks;
        CHECK(cudaMemset(dout, 0, blocks * sizeof(int)));
        switch (version) {
        case 1: reduce1<<<nb, threads, threads * sizeof(int)>>>(din, dout, n); break;
        case 2: reduce2<<<nb, threads, threads * sizeof(int)>>>(din, dout, n); break;
        case 3: reduce3<<<nb, threads, threads * sizeof(int)>>>(din, dout, n); break;
        case 4: reduce4<<<nb, threads>>>(din, dout, n); break;
        case 5: reduce5<<<nb, threads>>>(din, dout, n); nb = 1; break;
        }
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpy(partial, dout, nb * sizeof(int), cudaMemcpyDeviceToHost));
        long long sum = 0;
        for (int b = 0; b < nb; ++b) sum += partial[b];
        printf("reduce%d: %d blocks, sum = %lld %s\n", version, nb, sum, sum == ref ? "ok" : "WRONG");
        ok &= sum == ref;
    }
    CHECK(cudaFree(din)); CHECK(cudaFree(dout));
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
