// Unified memory: cudaMallocManaged gives one pointer that the host and the kernels both use;
// a __managed__ variable is the same for globals. Synchronize before the host reads results.
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

__managed__ int launches = 0;

__global__ void square(float *x, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i];
    if (i == 0) launches++;
}

int main()
{
    const int n = 4096;
    float *x;
    CHECK(cudaMallocManaged(&x, n * sizeof(float)));
    for (int i = 0; i < n; ++i) x[i] = (float)(i % 50) * 0.5f;      // the host writes directly

    int device;
    CHECK(cudaGetDevice(&device));
    cudaMemLocation where = {cudaMemLocationTypeDevice, device};
    CHECK(cudaMemPrefetchAsync(x, n * sizeof(float), where, 0, 0));   // a hint: move it before use
    square<<<(n + 255) / 256, 256>>>(x, n);
    square<<<(n + 255) / 256, 256>>>(x, n);
    CHECK(cudaDeviceSynchronize());                                  // then the host may read

    int wrong = 0;
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        float v = (float)(i % 50) * 0.5f, ref = (v * v) * (v * v);
        wrong += x[i] != ref;
        sum += x[i];
    }
    printf("x[3] = %.4f, x[49] = %.4f, sum = %.2f, kernels counted by a __managed__ variable: %d\n", x[3], x[49],
           sum, launches);
    CHECK(cudaFree(x));
    bool ok = wrong == 0 && launches == 2;
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
