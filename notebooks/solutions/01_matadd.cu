// 01-matadd: C = A + B for a width x height row-major matrix, one thread per element.
__global__ void MatAdd(const float* A, const float* B, float* C, int width, int height)
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < width && row < height)
        C[row * width + col] = A[row * width + col] + B[row * width + col];
}
