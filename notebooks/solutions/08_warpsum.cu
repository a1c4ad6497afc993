// 08-warpsum: the last warp's steps are ordered by __syncwarp(), as Volta's independent thread
// scheduling requires (Programming Guide, compute capability 7.x).
__global__ void warpSum(const float* in, float* out)
{
    __shared__ float s[64];
    int t = threadIdx.x;
    s[t] = in[blockIdx.x * 64 + t];
    __syncthreads();
    if (t < 32) {
        float v = s[t] + s[t + 32];
        s[t] = v;
        __syncwarp();
        for (int offset = 16; offset > 0; offset /= 2) {
            v += s[t + offset];   // read ...
            __syncwarp();
            s[t] = v;             // ... then write, each step apart
            __syncwarp();
        }
        if (t == 0)
            out[blockIdx.x] = v;
    }
}
