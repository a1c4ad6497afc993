// Symbols: __constant__ and __device__ variables written and read from the host with
// cudaMemcpyToSymbol / cudaMemcpyFromSymbol, and used through cudaGetSymbolAddress.
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

__constant__ float coeffs[4];          // a polynomial, the same for every thread: constant memory
__device__ int evaluated;              // a counter in global memory

__global__ void polynomial(const float *x, float *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        y[i] = ((coeffs[3] * v + coeffs[2]) * v + coeffs[1]) * v + coeffs[0];
        atomicAdd(&evaluated, 1);
    }
}

int main()
{
    const int n = 300;
    float hc[4] = {1.0f, -2.0f, 0.5f, 0.25f}, x[n], y[n];
    for (int i = 0; i < n; ++i) x[i] = (i - 150) / 16.0f;
    CHECK(cudaMemcpyToSymbol(coeffs, hc, sizeof hc));
    int zero = 0;
    CHECK(cudaMemcpyToSymbol(evaluated, &zero, sizeof zero));

    float *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x));
    CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    polynomial<<<(n + 127) / 128, 128>>>(dx, dy, n);
    polynomial<<<(n + 127) / 128, 128>>>(dx, dy, n);
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));

    int count;
    CHECK(cudaMemcpyFromSymbol(&count, evaluated, sizeof count));
    int *counter;
    CHECK(cudaGetSymbolAddress((void **)&counter, evaluated));
    int again;
    CHECK(cudaMemcpy(&again, counter, sizeof again, cudaMemcpyDeviceToHost));
    float back[4];
    CHECK(cudaMemcpyFromSymbol(back, coeffs, sizeof back));

    int wrong = 0;
    for (int i = 0; i < n; ++i) {
        float v = x[i], ref = ((hc[3] * v + hc[2]) * v + hc[1]) * v + hc[0];
        wrong += y[i] != ref;
    }
    printf("y[0] = %.5f, y[150] = %.5f, y[299] = %.5f, wrong = %d\n", y[0], y[150], y[299], wrong);
    printf("evaluated = %d (read twice: %d), coeffs read back: %.2f %.2f %.2f %.2f\n", count, again, back[0],
           back[1], back[2], back[3]);
    bool ok = wrong == 0 && count == 2 * n && again == count && back[3] == 0.25f;
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
