// 02-reverse: each block of 64 threads reverses its own 64 elements, through shared memory.
__global__ void reverseBlocks(int* d)
{
    __shared__ int s[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s[t] = d[i];
    __syncthreads();              // every element of the block is in s before anyone reads it
    d[i] = s[blockDim.x - 1 - t];
}
