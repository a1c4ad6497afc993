// Textures and surfaces: an image in a CUDA array, read through a texture object (the texture
// unit filters between texels and handles coordinates outside the image), then changed in place
// through a surface object, and a stack of images read as a layered texture.
#include <cmath>
#include <cstdio>
#include <cstring>

#define CHECK(call)                                                                         \
    do {                                                                                    \
        cudaError_t err_ = (call);                                                          \
        if (err_ != cudaSuccess) {                                                          \
            printf("CUDA error %s at line %d\n", cudaGetErrorName(err_), __LINE__);         \
            return 1;                                                                       \
        }                                                                                   \
    } while (0)

// Each output pixel asks the texture for the point it came from before a rotation.
__global__ void rotate(float *out, int w, int h, float angle, cudaTextureObject_t image)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float u = x - w / 2.0f, v = y - h / 2.0f;
    float tu = u * cosf(angle) - v * sinf(angle), tv = v * cosf(angle) + u * sinf(angle);
    out[y * w + x] = tex2D<float>(image, tu / w + 0.5f, tv / h + 0.5f);   // normalized coordinates
}

// Surfaces address x in bytes: texel x of a float image is at 4 * x.
__global__ void negate(cudaSurfaceObject_t image, int w, int h)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float v = surf2Dread<float>(image, 4 * x, y);
    surf2Dwrite(-v, image, 4 * x, y);
}

__global__ void sumLayers(float *out, cudaTextureObject_t stack, int w, int h, int layers)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float s = 0.0f;
    for (int l = 0; l < layers; ++l) s += tex2DLayered<float>(stack, x + 0.5f, y + 0.5f, l);
    out[y * w + x] = s;
}

static unsigned hashBits(const float *a, int n)   // FNV-1a over the bits: one number for bit-exactness
{
    unsigned h = 2166136261u, b;
    for (int i = 0; i < n; ++i) memcpy(&b, &a[i], 4), h = (h ^ b) * 16777619u;
    return h;
}

static float texel(const float *img, int w, int h, int x, int y)    // wrap addressing
{
    return img[((y % h + h) % h) * w + (x % w + w) % w];
}

int main()
{
    const int w = 64, h = 48, layers = 3;
    static float img[h][w], out[h][w], stack[layers][h][w];
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) img[y][x] = sinf(x * 0.2f) * cosf(y * 0.15f) + 0.01f * x;

    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t array;
    CHECK(cudaMallocArray(&array, &desc, w, h, cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(array, 0, 0, img, w * sizeof(float), w * sizeof(float), h, cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = array;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeWrap;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, NULL));

    float *d_out;
    CHECK(cudaMalloc(&d_out, sizeof out));
    dim3 block(16, 8), grid((w + 15) / 16, (h + 7) / 8);
    const float angle = 0.5f;
    rotate<<<grid, block>>>(d_out, w, h, angle, tex);
    CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));

    // The same rotation on the CPU, with exact weights: the texture's 8-bit weights differ a little.
    float worst = 0.0f;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float u = x - w / 2.0f, v = y - h / 2.0f;
            float tu = u * cosf(angle) - v * sinf(angle), tv = v * cosf(angle) + u * sinf(angle);
            float px = (tu / w + 0.5f) * w - 0.5f, py = (tv / h + 0.5f) * h - 0.5f;
            int x0 = (int)floorf(px), y0 = (int)floorf(py);
            float a = px - x0, b = py - y0;
            float want = (1 - a) * (1 - b) * texel(&img[0][0], w, h, x0, y0) + a * (1 - b) * texel(&img[0][0], w, h, x0 + 1, y0) +
                         (1 - a) * b * texel(&img[0][0], w, h, x0, y0 + 1) + a * b * texel(&img[0][0], w, h, x0 + 1, y0 + 1);
            worst = fmaxf(worst, fabsf(out[y][x] - want));
        }
    printf("rotated: out[0][0] = %.9g, out[24][32] = %.9g, out[47][63] = %.9g\n", out[0][0], out[24][32], out[47][63]);
    printf("rotated: bits hash 0x%08x, largest difference from exact weights %s 0.02\n", hashBits(&out[0][0], w * h),
           worst < 0.02f ? "<" : ">=");

    cudaSurfaceObject_t surf;
    CHECK(cudaCreateSurfaceObject(&surf, &res));
    negate<<<grid, block>>>(surf, w, h);
    CHECK(cudaMemcpy2DFromArray(out, w * sizeof(float), array, 0, 0, w * sizeof(float), h, cudaMemcpyDeviceToHost));
    int wrong = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) wrong += out[y][x] != -img[y][x];
    printf("negated through a surface: %d wrong\n", wrong);

    for (int l = 0; l < layers; ++l)
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) stack[l][y][x] = (float)(l + 1) * img[y][x];
    cudaArray_t layered;
    CHECK(cudaMalloc3DArray(&layered, &desc, make_cudaExtent(w, h, layers), cudaArrayLayered));
    cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = make_cudaPitchedPtr(stack, w * sizeof(float), w, h);
    p.dstArray = layered;
    p.extent = make_cudaExtent(w, h, layers);
    p.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&p));
    res.res.array.array = layered;
    td.filterMode = cudaFilterModePoint;
    td.normalizedCoords = 0;
    cudaTextureObject_t layeredTex;
    CHECK(cudaCreateTextureObject(&layeredTex, &res, &td, NULL));
    sumLayers<<<grid, block>>>(d_out, layeredTex, w, h, layers);
    CHECK(cudaMemcpy(out, d_out, sizeof out, cudaMemcpyDeviceToHost));
    int off = 0;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) off += fabsf(out[y][x] - 6.0f * img[y][x]) > 1e-5f;
    printf("layers summed: out[10][20] = %.9g (6 x %.9g), %d off\n", out[10][20], img[10][20], off);

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaDestroyTextureObject(layeredTex));
    CHECK(cudaDestroySurfaceObject(surf));
    CHECK(cudaFreeArray(array));
    CHECK(cudaFreeArray(layered));
    CHECK(cudaFree(d_out));
    bool pass = worst < 0.02f && wrong == 0 && off == 0;
    printf("Result = %s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}
