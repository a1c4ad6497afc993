// Linear and pitched memory bound to texture objects: which ranges cudaCreateTextureObject accepts
// (NVIDIA's convolutionFFT2D binds more bytes than its allocation holds, and passes on a GPU) and what
// fetches inside the allocation read. Fetches past the allocation are not printed: what a GPU reads
// there is whatever lies in memory.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define SHOW(call) printf("%s -> %s\n", #call, cudaGetErrorName(call))

__global__ void fetch(cudaTextureObject_t tex, const int *at, float *out, int n) {
    int i = threadIdx.x;
    if (i < n) out[i] = tex1Dfetch<float>(tex, at[i]);
}

__global__ void fetch2d(cudaTextureObject_t tex, float *out) {
    int x = threadIdx.x, y = threadIdx.y;
    out[y * blockDim.x + x] = tex2D<float>(tex, x + 0.5f, y + 0.5f);
}

static cudaError_t linear(cudaTextureObject_t *tex, void *ptr, size_t bytes) {
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = ptr;
    res.res.linear.sizeInBytes = bytes;
    res.res.linear.desc = cudaCreateChannelDesc<float>();
    cudaTextureDesc desc = {};
    desc.readMode = cudaReadModeElementType;
    return cudaCreateTextureObject(tex, &res, &desc, nullptr);
}

static cudaError_t pitched(cudaTextureObject_t *tex, void *ptr, size_t width, size_t height, size_t pitch) {
    cudaResourceDesc res = {};
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = ptr;
    res.res.pitch2D.width = width;
    res.res.pitch2D.height = height;
    res.res.pitch2D.pitchInBytes = pitch;
    res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    cudaTextureDesc desc = {};
    desc.readMode = cudaReadModeElementType;
    return cudaCreateTextureObject(tex, &res, &desc, nullptr);
}

int main() {
    const int n = 1 << 16;                       // 256 KiB of floats
    float *d = nullptr, *out = nullptr;
    int *at = nullptr;
    cudaMalloc(&d, n * sizeof(float));
    cudaMalloc(&out, 64 * sizeof(float));
    cudaMalloc(&at, 64 * sizeof(int));
    float *h = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = i * 0.5f;
    cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice);

    cudaTextureObject_t tex = 0;
    cudaError_t e = linear(&tex, d, n * sizeof(float) + 65536);       // 64 KiB past the allocation
    printf("linear texture 64 KiB past its allocation -> %s\n", cudaGetErrorName(e));
    int h_at[4] = {0, 1, n / 2, n - 1};
    cudaMemcpy(at, h_at, sizeof(h_at), cudaMemcpyHostToDevice);
    fetch<<<1, 32>>>(tex, at, out, 4);
    SHOW(cudaDeviceSynchronize());
    float got[64];
    cudaMemcpy(got, out, 4 * sizeof(float), cudaMemcpyDeviceToHost);
    printf("texels 0, 1, n/2, n-1 inside the allocation: %g %g %g %g\n", got[0], got[1], got[2], got[3]);
    SHOW(cudaDestroyTextureObject(tex));

    e = linear(&tex, d, (size_t)64 << 20);                            // 64 MiB over 256 KiB
    printf("linear texture of 64 MiB over a 256 KiB allocation -> %s\n", cudaGetErrorName(e));
    if (e == cudaSuccess) SHOW(cudaDestroyTextureObject(tex));
    e = linear(&tex, d + 1024, n * sizeof(float));                    // starts inside, runs 4 KiB past
    printf("linear texture from 4 KiB into its allocation, as long as it -> %s\n", cudaGetErrorName(e));
    if (e == cudaSuccess) SHOW(cudaDestroyTextureObject(tex));
    e = pitched(&tex, d, 32, 4096, 512);                              // 2 MiB of rows over 256 KiB
    printf("pitched texture past its allocation -> %s\n", cudaGetErrorName(e));
    if (e == cudaSuccess) {
        fetch2d<<<1, dim3(32, 2)>>>(tex, out);
        SHOW(cudaDeviceSynchronize());
        cudaMemcpy(got, out, 64 * sizeof(float), cudaMemcpyDeviceToHost);
        printf("pitched texels (0,0) (31,0) (0,1) (31,1): %g %g %g %g\n", got[0], got[31], got[32], got[63]);
        SHOW(cudaDestroyTextureObject(tex));
    }
    SHOW(cudaGetLastError());
    cudaFree(d);
    cudaFree(out);
    cudaFree(at);
    free(h);
    return 0;
}
