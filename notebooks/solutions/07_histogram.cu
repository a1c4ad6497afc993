// 07-histogram: each block counts into shared bins with atomics, then adds them to the global bins.
#define NBINS 64

__global__ void histogram(const unsigned int* data, int n, unsigned int* bins)
{
    __shared__ unsigned int local[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        local[b] = 0;
    __syncthreads();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        atomicAdd(&local[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        atomicAdd(&bins[b], local[b]);
}
