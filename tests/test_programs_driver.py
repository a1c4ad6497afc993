"""The driver API's entry points that CCCL's host API asks for by name, answered by the runtime.

CCCL 3's cuda::stream, cuda::launch and cuda::device_buffer dlopen libcuda.so.1 and ask its
cuGetProcAddress_v2 for cu* functions (cuda/__driver/driver_api.h). The program below does the
same by hand, so the test needs no CCCL build: cudalab's libcuda.so.1 must be found, the functions it
hands out must work on the program's streams, memory and kernels, and a function cudalab does not
provide must be refused by name.
"""
import pytest

from cudalab.programs import run_program_source

PROGRAM = r"""
// The driver API as CCCL reaches it: dlopen the driver, ask cuGetProcAddress for each function by name.
#include <cstdio>
#include <cuda.h>
#include <dlfcn.h>

__global__ void add_one(int *x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1;
}

typedef CUresult (*GetProcAddress)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
static GetProcAddress get_proc;

template <class F> F driver(const char *name) {
    void *fn = nullptr;
    CUdriverProcAddressQueryResult found;
    CUresult r = get_proc(name, &fn, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    printf("%s: %d %s\n", name, (int)r, found == CU_GET_PROC_ADDRESS_SUCCESS ? "found" : "not found");
    return (F)fn;
}

int main() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    get_proc = lib ? (GetProcAddress)dlsym(lib, "cuGetProcAddress_v2") : nullptr;
    if (!get_proc) { printf("no driver\n"); return 1; }
    driver<decltype(&cuInit)>("cuInit")(0);
    auto create = driver<decltype(&cuStreamCreateWithPriority)>("cuStreamCreateWithPriority");
    auto memset32 = driver<decltype(&cuMemsetD32Async)>("cuMemsetD32Async");
    auto launch = driver<decltype(&cuLaunchKernelEx)>("cuLaunchKernelEx");
    auto sync = driver<decltype(&cuStreamSynchronize)>("cuStreamSynchronize");
    auto attribute = driver<decltype(&cuFuncGetAttribute)>("cuFuncGetAttribute");
    driver<void *>("cuTensorMapEncodeTiled");

    const int n = 300;
    CUstream stream;
    int *x, host[n];
    cudaMalloc(&x, n * sizeof(int));
    printf("create: %d\n", (int)create(&stream, CU_STREAM_NON_BLOCKING, 0));
    printf("memset: %d\n", (int)memset32((CUdeviceptr)x, 0x01020304, n, stream));
    cudaFunction_t f;
    cudaGetFuncBySymbol(&f, (const void *)add_one);
    int threads = 0;
    attribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, (CUfunction)f);
    printf("max threads per block: %d\n", threads);
    CUlaunchConfig config = {};
    config.gridDimX = 3; config.gridDimY = 1; config.gridDimZ = 1;
    config.blockDimX = 128; config.blockDimY = 1; config.blockDimZ = 1;
    config.hStream = stream;
    int count = n;
    void *args[] = {&x, &count};
    printf("launch: %d\n", (int)launch(&config, (CUfunction)f, args, nullptr));
    printf("sync: %d\n", (int)sync(stream));
    cudaMemcpy(host, x, sizeof host, cudaMemcpyDeviceToHost);
    printf("x[0] = %#x, x[%d] = %#x\n", host[0], n - 1, host[n - 1]);
    return 0;
}
"""


@pytest.fixture(scope="module")
def ran():
    return run_program_source(PROGRAM, filename="driver_by_name.cu", timeout=120)


def test_a_program_that_asks_the_driver_for_its_functions_by_name_runs(ran):
    r = ran
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    for name in ("cuInit", "cuStreamCreateWithPriority", "cuMemsetD32Async", "cuLaunchKernelEx",
                 "cuStreamSynchronize", "cuFuncGetAttribute"):
        assert f"{name}: 0 found" in lines
    assert lines[-6:] == ["create: 0", "memset: 0", "max threads per block: 1024", "launch: 0", "sync: 0",
                          # 300 ints set to the 32-bit word 0x01020304 on the stream, then one added by the kernel
                          "x[0] = 0x1020305, x[299] = 0x1020305"]


def test_a_driver_function_cudalab_does_not_provide_is_refused_by_name(ran):
    r = ran
    assert "cuTensorMapEncodeTiled: 500 not found" in r.stdout        # CUDA_ERROR_NOT_FOUND, SYMBOL_NOT_FOUND
    assert "the CUDA driver API's cuTensorMapEncodeTiled is not emulated" in r.stderr


def test_a_program_linked_with_the_driver_calls_the_functions_cudalab_answers():
    """libwb (the GPU Teaching Kit's lab library) calls cuInit before the runtime, linked -lcuda."""
    r = run_program_source(r"""
#include <cstdio>
#include <cuda.h>
int main() {
    char name[64];
    CUdevice dev;
    int count = 0, major = 0;
    printf("cuInit %d\n", (int)cuInit(0));
    CUresult got = cuDeviceGetCount(&count);
    printf("cuDeviceGetCount %d: %d\n", (int)got, count);
    printf("cuDeviceGet %d\n", (int)cuDeviceGet(&dev, 0));
    printf("cuDeviceGetName %d\n", (int)cuDeviceGetName(name, sizeof name, dev));
    cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    int runtime_major = 0;
    cudaDeviceGetAttribute(&runtime_major, cudaDevAttrComputeCapabilityMajor, 0);
    printf("same major: %d\n", major == runtime_major && major > 0);
    printf("cuDeviceGet(1) %d\n", (int)cuDeviceGet(&dev, 1));
    return 0;
}""", filename="libwb_like.cu", options=["-lcuda"], timeout=120)
    assert r.returncode == 0, r.stderr
    # CUDA_ERROR_INVALID_DEVICE (101) for a second GPU, as on a machine with one
    assert r.stdout.splitlines() == ["cuInit 0", "cuDeviceGetCount 0: 1", "cuDeviceGet 0", "cuDeviceGetName 0",
                                     "same major: 1", "cuDeviceGet(1) 101"]


def test_a_device_query_through_the_driver_reads_the_runtimes_answers():
    """What a driver-API device query asks first: the memory size, the driver's version (never older
    than the runtime a program was built with, or a GPU would refuse it) and the text of an error code."""
    r = run_program_source(r"""
#include <cstdio>
#include <cuda.h>
#include <cuda_runtime.h>
int main() {
    size_t bytes = 0;
    cudaDeviceProp p;
    cudaGetDeviceProperties(&p, 0);
    CUresult got = cuDeviceTotalMem(&bytes, 0);
    printf("cuDeviceTotalMem %d: %d\n", (int)got, bytes == p.totalGlobalMem && bytes > 0);
    int driver = 0, runtime = 0;
    cuDriverGetVersion(&driver);
    cudaRuntimeGetVersion(&runtime);
    printf("driver >= runtime: %d\n", driver >= runtime);
    const char *text = nullptr;
    got = cuGetErrorString(CUDA_ERROR_INVALID_DEVICE, &text);
    printf("cuGetErrorString %d: %s\n", (int)got, text);
    got = cuGetErrorString((CUresult)12345, &text);
    printf("unknown code %d: %s\n", (int)got, text ? text : "NULL");
    return 0;
}""", filename="device_query_driver.cu", options=["-lcuda"], timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["cuDeviceTotalMem 0: 1", "driver >= runtime: 1",
                                     "cuGetErrorString 0: invalid device ordinal", "unknown code 1: NULL"]
