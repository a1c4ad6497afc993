// 04-transpose: transpose through a padded shared tile: coalesced loads and stores, no bank conflicts.
#define T 32

__global__ void transposeShared(const float* in, float* out, int n)
{
    __shared__ float tile[T][T + 1];        // +1: column k of the tile spreads over all 32 banks
    int x = blockIdx.x * T + threadIdx.x;
    int y = blockIdx.y * T + threadIdx.y;
    tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    __syncthreads();
    x = blockIdx.y * T + threadIdx.x;       // the transposed block
    y = blockIdx.x * T + threadIdx.y;
    out[y * n + x] = tile[threadIdx.x][threadIdx.y];
}
