// 2D arrays with cudaMallocPitch and cudaMemcpy2D: each row starts at an aligned address
// ("pitch" bytes apart), so rows of any width stay coalesced.
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

__global__ void transposeAdd(const float *in, size_t inPitch, float *out, size_t outPitch, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < w && y < h) {
        const float *row = (const float *)((const char *)in + y * inPitch);
        float *col = (float *)((char *)out + x * outPitch);
        col[y] = row[x] + 1.0f;
    }
}

int main()
{
    const int w = 100, h = 37;
    float a[h][w], t[w][h];
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) a[y][x] = (float)(y * 1000 + x);
    float *din, *dout;
    size_t pin, pout;
    CHECK(cudaMallocPitch(&din, &pin, w * sizeof(float), h));
    CHECK(cudaMallocPitch(&dout, &pout, h * sizeof(float), w));
    printf("rows of %zu bytes have a pitch of %s\n", w * sizeof(float),
           pin >= w * sizeof(float) && pin % 128 == 0 ? "at least that, a multiple of 128" : "WRONG");
    CHECK(cudaMemcpy2D(din, pin, a, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));
    dim3 block(16, 16), grid((w + 15) / 16, (h + 15) / 16);
    transposeAdd<<<grid, block>>>(din, pin, dout, pout, w, h);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy2D(t, h * sizeof(float), dout, pout, h * sizeof(float), w, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) wrong += t[x][y] != a[y][x] + 1.0f;
    printf("t[0][0] = %.0f, t[99][36] = %.0f, wrong = %d\n", t[0][0], t[99][36], wrong);
    CHECK(cudaFree(din)); CHECK(cudaFree(dout));
    printf("Result = %s\n", wrong ? "FAIL" : "PASS");
    return wrong != 0;
}
