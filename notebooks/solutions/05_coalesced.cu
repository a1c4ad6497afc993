// 05-coalesced: threadIdx.x picks the column, so a warp reads 32 neighbouring floats (4 sectors).
__global__ void scaleMatrix(float* M, int width, int height, float s)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height)
        M[row * width + col] *= s;
}
