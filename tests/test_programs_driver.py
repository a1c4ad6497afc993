"""The driver API's entry points that CCCL's host API asks for by name, answered by the runtime.

CCCL 3's cuda::stream, cuda::launch and cuda::device_buffer dlopen libcuda.so.1 and ask its
cuGetProcAddress_v2 for cu* functions (cuda/__driver/driver_api.h). The program below does the
same by hand, so the test needs no CCCL build: cudalab's libcuda.so.1 must be found, the functions it
hands out must work on the program's streams, memory and kernels, and a function cudalab does not
provide must be refused by name.
"""
import pytest

import cudalab

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


def test_a_driver_function_called_directly_that_cudalab_does_not_provide_returns_not_supported():
    """Graphics interop is out of reach: the program links, and the call says so when it is made."""
    r = run_program_source(r"""#include <cuda.h>
#include <cstdio>
int main() {
    CUgraphicsResource r = 0;
    printf("unregister: %d\n", (int)cuGraphicsUnregisterResource(r));
}""")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "unregister: 801\n"                         # CUDA_ERROR_NOT_SUPPORTED
    assert "cuGraphicsUnregisterResource is not emulated" in r.stderr


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


OLD_STYLE = r"""
// A program written for CUDA 3 and 4 that finds the driver at run time, as NVIDIA's matrixMulDynlinkJIT
// does: its own function pointers carry the driver's names, filled by dlsym from libcuda.so.1; its kernel
// is launched with the CUDA 3 launch API; a PTX module comes from the driver's linker.
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
// its own declarations of the driver's types, as cuda_drvapi_dynlink_cuda.h has them, not cuda.h's
typedef int CUresult, CUdevice, CUjit_option;
typedef void *CUcontext, *CUmodule, *CUfunction, *CUlinkState;
typedef unsigned long long CUdeviceptr;
enum CUjitInputType { CU_JIT_INPUT_PTX = 1 };

#define POINTER(name, ...) typedef CUresult (*t_##name)(__VA_ARGS__); t_##name my_##name;
POINTER(cuInit, unsigned)
POINTER(cuDeviceGet, CUdevice *, int)
POINTER(cuCtxCreate_v2, CUcontext *, unsigned, CUdevice)
POINTER(cuMemAlloc_v2, CUdeviceptr *, size_t)
POINTER(cuMemcpyDtoH_v2, void *, CUdeviceptr, size_t)
POINTER(cuModuleLoadData, CUmodule *, const void *)
POINTER(cuModuleGetFunction, CUfunction *, CUmodule, const char *)
POINTER(cuFuncSetBlockShape, CUfunction, int, int, int)
POINTER(cuParamSetv, CUfunction, int, void *, unsigned)
POINTER(cuParamSeti, CUfunction, int, unsigned)
POINTER(cuParamSetSize, CUfunction, unsigned)
POINTER(cuLaunchGrid, CUfunction, int, int)
POINTER(cuCtxSynchronize, void)
POINTER(cuLinkCreate_v2, unsigned, CUjit_option *, void **, CUlinkState *)
POINTER(cuLinkAddData_v2, CUlinkState, CUjitInputType, void *, size_t, const char *, unsigned, CUjit_option *, void **)
POINTER(cuLinkComplete, CUlinkState, void **, size_t *)
POINTER(cuMemAlloc, unsigned *, unsigned)             // CUDA 3.1's, of 32-bit device pointers

CUresult (*cuInit_)(unsigned);
void *cuGetErrorString;        // a variable of the program's own named like a driver function

static const char *PTX = ".version 7.0\n.target sm_75\n.address_size 64\n"
    ".visible .entry iota(.param .u64 out, .param .u32 base) {\n"
    "  .reg .b32 %r<4>; .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [out]; ld.param.u32 %r1, [base]; mov.u32 %r2, %tid.x;\n"
    "  add.u32 %r3, %r1, %r2; cvta.to.global.u64 %rd2, %rd1; mul.wide.u32 %rd3, %r2, 4;\n"
    "  add.s64 %rd2, %rd2, %rd3; st.global.u32 [%rd2], %r3; ret;\n}\n";

#define FIND(name) my_##name = (t_##name)dlsym(lib, #name); if (!my_##name) { printf("no %s\n", #name); return 1; }

int main() {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW);
    if (!lib) { printf("no driver: %s\n", dlerror()); return 1; }
    FIND(cuInit) FIND(cuDeviceGet) FIND(cuCtxCreate_v2) FIND(cuMemAlloc_v2) FIND(cuMemcpyDtoH_v2) FIND(cuModuleLoadData)
    FIND(cuModuleGetFunction) FIND(cuFuncSetBlockShape) FIND(cuParamSetv) FIND(cuParamSeti) FIND(cuParamSetSize)
    FIND(cuLaunchGrid) FIND(cuCtxSynchronize) FIND(cuLinkCreate_v2) FIND(cuLinkAddData_v2) FIND(cuLinkComplete)
    FIND(cuMemAlloc)
    CUdevice dev;
    CUcontext ctx;
    CUresult init = my_cuInit(0), got = my_cuDeviceGet(&dev, 0);
    printf("init %d, device %d, context %d\n", init, got, my_cuCtxCreate_v2(&ctx, 0, dev));

    CUlinkState link;
    void *image;
    size_t size;
    printf("link: %d", my_cuLinkCreate_v2(0, nullptr, nullptr, &link));
    printf(" %d", my_cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, (void *)PTX, strlen(PTX) + 1, "iota.ptx", 0, nullptr, nullptr));
    printf(" %d\n", my_cuLinkComplete(link, &image, &size));
    CUmodule mod;
    CUfunction iota;
    CUresult loaded = my_cuModuleLoadData(&mod, image);
    printf("module %d, function %d\n", loaded, my_cuModuleGetFunction(&iota, mod, "iota"));

    CUdeviceptr out;
    my_cuMemAlloc_v2(&out, 64 * sizeof(int));
    printf("block shape %d\n", my_cuFuncSetBlockShape(iota, 64, 1, 1));
    CUresult v = my_cuParamSetv(iota, 0, &out, sizeof out), i = my_cuParamSeti(iota, 8, 500);
    printf("parameters %d %d %d\n", v, i, my_cuParamSetSize(iota, 12));
    CUresult launched = my_cuLaunchGrid(iota, 1, 1);
    printf("launch %d, sync %d\n", launched, my_cuCtxSynchronize());
    int host[64];
    my_cuMemcpyDtoH_v2(host, out, sizeof host);
    printf("out[0] = %d, out[63] = %d\n", host[0], host[63]);
    unsigned small;
    printf("CUDA 3.1's cuMemAlloc: %d\n", my_cuMemAlloc(&small, 64));
    return 0;
}
"""


def test_a_program_that_dlsyms_the_driver_and_launches_the_cuda_3_way_runs():
    """Every driver symbol the shim defines is exported by cudalab's libcuda.so.1 (older versions' symbols
    too): the program's own cuGetErrorString variable does not get in the way, cuCtxCreate_v2 takes its
    CUDA 3.2 arguments, cuLinkComplete's PTX loads, cuParamSet*/cuLaunchGrid launch, and the 32-bit
    cuMemAlloc of CUDA 3.1 answers CUDA_ERROR_NOT_SUPPORTED (801) with a line saying why."""
    r = run_program_source(OLD_STYLE, filename="old_style.cpp", options=["-lcuda", "-ldl"], timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines() == ["init 0, device 0, context 0", "link: 0 0 0", "module 0, function 0",
                                     "block shape 0", "parameters 0 0 0", "launch 0, sync 0",
                                     "out[0] = 500, out[63] = 563", "CUDA 3.1's cuMemAlloc: 801"]
    assert "symbol of an older CUDA version" in r.stderr


def test_cuLaunchKernelEx_takes_the_parameters_packed_in_extra():
    """The launch configuration's attributes and one buffer of parameters, laid out as the kernel's."""
    r = run_program_source(r"""
#include <cstdio>
#include <cuda.h>
__global__ void axpy(float a, const float *x, float *y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}
int main() {
    const int n = 200;
    float host[n], *x, *y;
    for (int i = 0; i < n; i++) host[i] = i;
    cudaMalloc(&x, sizeof host);
    cudaMalloc(&y, sizeof host);
    cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
    cudaMemcpy(y, host, sizeof host, cudaMemcpyHostToDevice);
    cudaFunction_t f;
    cudaGetFuncBySymbol(&f, (const void *)axpy);
    struct { float a; const float *x; float *y; int n; } packed = {10.0f, x, y, n};
    size_t size = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    CUlaunchAttribute priority = {};
    priority.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    CUlaunchConfig config = {};
    config.gridDimX = 2; config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 128; config.blockDimY = config.blockDimZ = 1;
    config.attrs = &priority; config.numAttrs = 1;
    printf("launch %d\n", (int)cuLaunchKernelEx(&config, (CUfunction)f, nullptr, extra));
    size = 4;
    printf("too small a buffer %d\n", (int)cuLaunchKernelEx(&config, (CUfunction)f, nullptr, extra));
    cudaMemcpy(host, y, sizeof host, cudaMemcpyDeviceToHost);
    printf("y[199] = %g\n", host[199]);
    return 0;
}""", filename="launch_ex_extra.cu", options=["-lcuda"], timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["launch 0", "too small a buffer 1", "y[199] = 2189"]



RUNTIME_COMPILED_BUG = r"""
#include <cstdio>
#include <cuda.h>
#include <nvrtc.h>
static const char *SRC = "extern \"C\" __global__ void write_past(int *x, int n) {\n"
                         "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                         "    x[i] = i;   // no check against n\n"
                         "}\n";
int main() {
    CUdevice dev; CUcontext ctx; CUmodule mod; CUfunction f;
    cuInit(0); cuDeviceGet(&dev, 0); cuDevicePrimaryCtxRetain(&ctx, dev); cuCtxSetCurrent(ctx);
    nvrtcProgram p;
    nvrtcCreateProgram(&p, SRC, "write_past.cu", 0, nullptr, nullptr);
    const char *opts[] = {"-lineinfo"};
    nvrtcCompileProgram(p, 1, opts);
    size_t n; nvrtcGetPTXSize(p, &n);
    char *ptx = new char[n]; nvrtcGetPTX(p, ptx);
    cuModuleLoadData(&mod, ptx);
    cuModuleGetFunction(&f, mod, "write_past");
    CUdeviceptr x; int count = 100;
    cuMemAlloc(&x, count * sizeof(int));
    void *args[] = {&x, &count};
    CUresult r = cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr);
    CUresult s = cuCtxSynchronize();
    const char *name; cuGetErrorName(s, &name);
    printf("launch %d, synchronize %s\n", (int)r, name);
    return 0;
}
"""


def test_a_kernel_compiled_at_run_time_is_checked_as_the_programs_own_are():
    """NVRTC's kernel runs on the same path as built-in ones: memcheck names its source line (-lineinfo) and
    the fault is the sticky CUDA_ERROR_ILLEGAL_ADDRESS at the next synchronization, as on a GPU."""
    with cudalab.check("memcheck"):         # (one element past the end: a GPU runs it, memcheck stops it)
        r = run_program_source(RUNTIME_COMPILED_BUG, filename="oob.cpp", options=["-lcuda", "-lnvrtc"], timeout=120)
    assert r.stdout.splitlines() == ["launch 0, synchronize CUDA_ERROR_ILLEGAL_ADDRESS"]
    assert "Invalid __global__ write of size 4 bytes" in r.stderr
    assert "at line 3 in kernel write_past" in r.stderr and "by thread (100,0,0)" in r.stderr


def test_pitched_memsets_of_8_16_and_32_bit_values_fill_each_row_and_leave_the_padding():
    r = run_program_source(r"""
#include <cstdio>
#include <cuda.h>
int main() {
    CUdeviceptr d;
    size_t pitch;
    cuInit(0);
    cuMemAllocPitch(&d, &pitch, 12, 3, 4);         // 3 rows of 12 bytes, pitch >= 12
    unsigned char row[1024];
    cuMemsetD8(d, 0xee, pitch * 3);
    int ok8 = cuMemsetD2D8(d, pitch, 0x11, 12, 3), ok16 = cuMemsetD2D16(d + pitch, pitch, 0x2233, 6, 1);
    int ok32 = cuMemsetD2D32(d + 2 * pitch, pitch, 0x44556677, 3, 1);
    printf("%d %d %d\n", ok8, ok16, ok32);
    for (int y = 0; y < 3; y++) {
        cuMemcpyDtoH(row, d + y * pitch, 13);
        printf("%02x %02x %02x %02x .. %02x | %02x\n", row[0], row[1], row[2], row[3], row[11], row[12]);
    }
    return 0;
}""", filename="memset2d.cu", options=["-lcuda"], timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["0 0 0", "11 11 11 11 .. 11 | ee", "33 22 33 22 .. 22 | ee",
                                     "77 66 55 44 .. 44 | ee"]


def test_a_context_made_with_cuda_12s_three_argument_cuCtxCreate_builds_and_loads_a_module(tmp_path):
    """CSCS's 2013 driver-API example: cuCtxCreate(&ctx, flags, device), which CUDA 13 renamed to
    cuCtxCreate_v4 with a parameters struct, then a module from PTX text and a launch through it."""
    r = run_program_source(r"""
#include <cstdio>
#include <cuda.h>
static const char *ptx =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry seven(.param .u64 out) {\n .reg .b64 %rd<2>; .reg .b32 %r<2>;\n"
    " ld.param.u64 %rd1, [out]; cvta.to.global.u64 %rd1, %rd1; mov.u32 %r1, 7; st.global.u32 [%rd1], %r1; ret;\n}\n";
int main() {
    CUdevice device; CUcontext context; CUmodule module; CUfunction seven; CUdeviceptr out;
    cuInit(0);
    cuDeviceGet(&device, 0);
    CUresult made = cuCtxCreate(&context, 0, device);
    cuModuleLoadData(&module, ptx);
    cuModuleGetFunction(&seven, module, "seven");
    cuMemAlloc(&out, sizeof(int));
    void *args[] = {&out};
    cuLaunchKernel(seven, 1, 1, 1, 1, 1, 1, 0, 0, args, 0);
    int got = 0;
    cuMemcpyDtoH(&got, out, sizeof got);
    printf("%d %d %d\n", (int)made, got, (int)cuCtxDestroy(context));
    return 0;
}""", filename="context.cpp", options=["-lcuda"], timeout=120)
    assert (r.returncode, r.stdout) == (0, "0 7 0\n"), r.stderr
