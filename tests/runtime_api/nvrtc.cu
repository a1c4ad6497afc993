// link: -lcuda -lnvrtc
// Compiling kernels while the program runs: NVRTC makes PTX and a cubin for this GPU, the driver loads
// either and launches from it; a template kernel is found by its lowered name; a compile error is
// reported with its log.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <nvrtc.h>

static const char *name(CUresult r) {
    const char *n = nullptr;
    cuGetErrorName(r, &n);
    return n ? n : "(no name)";
}
#define SHOW(call) printf("%s -> %s\n", #call, name(call))
#define NVRTC(call) printf("%s -> %s\n", #call, nvrtcGetErrorString(call))

static const char *SOURCE = R"(
__device__ int offset = 100;
extern "C" __global__ void square_plus(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * x[i] + offset;
}
template <int K> __global__ void times(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= K;
}
)";

static void run(CUfunction f, CUdeviceptr d, int n, int *host, const char *what) {
    for (int i = 0; i < n; i++) host[i] = i;
    cuMemcpyHtoD(d, host, n * sizeof(int));
    void *args[] = {&d, &n};
    CUresult r = cuLaunchKernel(f, (n + 127) / 128, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr);
    cuMemcpyDtoH(host, d, n * sizeof(int));
    printf("%s: launch %s, x[3] = %d, x[%d] = %d\n", what, name(r), host[3], n - 1, host[n - 1]);
}

int main() {
    CUdevice dev;
    CUcontext ctx;
    int major = 0, minor = 0;
    SHOW(cuInit(0));
    SHOW(cuDeviceGet(&dev, 0));
    SHOW(cuDevicePrimaryCtxRetain(&ctx, dev));
    SHOW(cuCtxSetCurrent(ctx));
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
    const char *options[] = {arch, "-std=c++17"};

    nvrtcProgram prog;
    NVRTC(nvrtcCreateProgram(&prog, SOURCE, "kernels.cu", 0, nullptr, nullptr));
    NVRTC(nvrtcAddNameExpression(prog, "times<7>"));
    NVRTC(nvrtcCompileProgram(prog, 2, options));
    size_t ptx_size = 0, cubin_size = 0;
    NVRTC(nvrtcGetPTXSize(prog, &ptx_size));
    NVRTC(nvrtcGetCUBINSize(prog, &cubin_size));
    char *ptx = (char *)malloc(ptx_size), *cubin = (char *)malloc(cubin_size);
    NVRTC(nvrtcGetPTX(prog, ptx));
    NVRTC(nvrtcGetCUBIN(prog, cubin));
    const char *lowered = nullptr;
    NVRTC(nvrtcGetLoweredName(prog, "times<7>", &lowered));
    printf("times<7> is %s\n", lowered);

    const int n = 1000;
    int host[n];
    CUdeviceptr d;
    SHOW(cuMemAlloc(&d, sizeof host));
    CUmodule from_ptx, from_cubin;
    CUfunction f;
    SHOW(cuModuleLoadData(&from_ptx, ptx));
    SHOW(cuModuleGetFunction(&f, from_ptx, "square_plus"));
    run(f, d, n, host, "square_plus from PTX");
    SHOW(cuModuleLoadDataEx(&from_cubin, cubin, 0, nullptr, nullptr));
    SHOW(cuModuleGetFunction(&f, from_cubin, "square_plus"));
    run(f, d, n, host, "square_plus from the cubin");
    SHOW(cuModuleGetFunction(&f, from_cubin, lowered));
    run(f, d, n, host, "times<7> from the cubin");
    SHOW(cuModuleGetFunction(&f, from_cubin, "times"));     // the C++ name is not the kernel's name

    CUdeviceptr offset;
    size_t bytes = 0;
    int seven = 7;
    SHOW(cuModuleGetGlobal(&offset, &bytes, from_cubin, "offset"));
    SHOW(cuMemcpyHtoD(offset, &seven, sizeof seven));
    SHOW(cuModuleGetFunction(&f, from_cubin, "square_plus"));
    run(f, d, n, host, "square_plus with offset 7");
    SHOW(cuModuleUnload(from_ptx));
    SHOW(cuModuleUnload(from_cubin));
    NVRTC(nvrtcDestroyProgram(&prog));

    nvrtcProgram broken;
    NVRTC(nvrtcCreateProgram(&broken, "__global__ void k() { undeclared_name = 1; }", "broken.cu", 0, nullptr, nullptr));
    NVRTC(nvrtcCompileProgram(broken, 1, options));
    size_t log_size = 0;
    NVRTC(nvrtcGetProgramLogSize(broken, &log_size));
    char *log = (char *)malloc(log_size);
    NVRTC(nvrtcGetProgramLog(broken, log));
    printf("the log names the mistake: %s\n", strstr(log, "undeclared_name") ? "yes" : "no");
    NVRTC(nvrtcDestroyProgram(&broken));

    SHOW(cuMemFree(d));
    SHOW(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
