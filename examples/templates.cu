// Templates: one kernel source, instantiated for int, float and double; the runtime launches
// each instantiation by its own mangled name.
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

template <typename T>
__global__ void axpy(T a, const T *x, T *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

template <typename T>
bool run(const char *name, T a)
{
    const int n = 1000;
    T x[n], y[n];
    for (int i = 0; i < n; ++i) x[i] = (T)(i % 10), y[i] = (T)1;
    T *dx, *dy;
    CHECK(cudaMalloc(&dx, sizeof x));
    CHECK(cudaMalloc(&dy, sizeof y));
    CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, y, sizeof y, cudaMemcpyHostToDevice));
    axpy<T><<<(n + 127) / 128, 128>>>(a, dx, dy, n);
    CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    bool ok = true;
    double sum = 0;
    for (int i = 0; i < n; ++i) ok &= y[i] == a * (T)(i % 10) + (T)1, sum += (double)y[i];
    printf("axpy<%s>: sum = %.2f %s\n", name, sum, ok ? "ok" : "WRONG");
    return ok;
}

int main()
{
    bool ok = run<int>("int", 3) & run<float>("float", 0.5f) & run<double>("double", -1.25);
    printf("Result = %s\n", ok ? "PASS" : "FAIL");
    return !ok;
}
