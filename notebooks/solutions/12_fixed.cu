// 12-fixed: neighbourSum with its three bugs fixed: the bounds of in[i] and in[i + 1] (memcheck), the
// missing __syncthreads() (racecheck), and the last element's unwritten neighbour (initcheck).
__global__ void neighbourSum(const int* in, int* out, int n)
{
    __shared__ int s[256];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i < n)
        s[t] = in[i];
    __syncthreads();
    if (i < n) {
        int right = 0;
        if (i + 1 < n)
            right = t + 1 < blockDim.x ? s[t + 1] : in[i + 1];
        out[i] = s[t] + right;
    }
}
