// link: -lcuda
// The driver API as a program written for it uses it: a context, a module of PTX loaded at run time,
// kernels launched with kernelParams and with a packed buffer (`extra`), a module variable, virtual
// memory management; then the mistakes, each with the code a GPU answers.
#include <cstdio>
#include <cstring>
#include <cuda.h>

static const char *name(CUresult r) {
    const char *n = nullptr;
    cuGetErrorName(r, &n);
    return n ? n : "(no name)";
}
#define SHOW(call) printf("%s -> %s\n", #call, name(call))

// scale(data, factor, n): data[i] *= factor; thread 0 also counts the launch in `launches`
static const char *PTX = R"(
.version 7.0
.target sm_70
.address_size 64
.visible .global .align 4 .u32 launches;
.visible .entry scale(.param .u64 data, .param .f32 factor, .param .u32 n)
{
    .reg .pred %p<3>;
    .reg .b32 %r<8>;
    .reg .b64 %rd<5>;
    .reg .f32 %f<4>;
    ld.param.u64 %rd1, [data];
    ld.param.f32 %f1, [factor];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    setp.ge.u32 %p1, %r5, %r1;
    @%p1 bra DONE;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r5, 4;
    add.s64 %rd4, %rd2, %rd3;
    ld.global.f32 %f2, [%rd4];
    mul.f32 %f3, %f2, %f1;
    st.global.f32 [%rd4], %f3;
    setp.ne.u32 %p2, %r5, 0;
    @%p2 bra DONE;
    atom.global.add.u32 %r6, [launches], 1;
DONE:
    ret;
}
)";

static const char *BROKEN_PTX = ".version 7.0\n.target sm_70\n.address_size 64\n"
                                ".visible .entry broken() { frobnicate.u32 %r1; ret; }\n";

int main() {
    CUdevice dev;
    CUcontext ctx, current;
    CUmodule mod, bad;
    CUfunction scale, missing;
    SHOW(cuInit(0));
    SHOW(cuDeviceGet(&dev, 0));
    CUctxCreateParams params = {};
    SHOW(cuCtxCreate(&ctx, &params, 0, dev));
    SHOW(cuCtxGetCurrent(&current));
    printf("the new context is current: %s\n", current == ctx ? "yes" : "no");

    SHOW(cuModuleLoadData(&mod, PTX));
    SHOW(cuModuleGetFunction(&scale, mod, "scale"));
    int threads = 0;
    SHOW(cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, scale));
    printf("max threads per block: %d\n", threads);

    const unsigned n = 1000;
    float host[n];
    for (unsigned i = 0; i < n; i++) host[i] = (float)i;
    CUdeviceptr data;
    SHOW(cuMemAlloc(&data, sizeof host));
    SHOW(cuMemcpyHtoD(data, host, sizeof host));
    float factor = 2;
    unsigned count = n;
    void *args[] = {&data, &factor, &count};
    SHOW(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr));
    struct { CUdeviceptr data; float factor; unsigned n; } packed = {data, 3, n};
    size_t size = sizeof packed;
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END};
    SHOW(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr, extra));
    SHOW(cuCtxSynchronize());
    SHOW(cuMemcpyDtoH(host, data, sizeof host));
    printf("after x2 (kernelParams) and x3 (extra): host[1] = %g, host[999] = %g\n", host[1], host[999]);
    CUdeviceptr launches;
    size_t bytes = 0;
    unsigned counted = 0;
    SHOW(cuModuleGetGlobal(&launches, &bytes, mod, "launches"));
    SHOW(cuMemcpyDtoH(&counted, launches, sizeof counted));
    printf("launches counted by the kernel: %u (a %zu-byte variable)\n", counted, bytes);
    SHOW(cuMemsetD32(data, 0x3f800000, n));      // 1.0f
    SHOW(cuMemcpyDtoH(host, data, sizeof host));
    printf("after cuMemsetD32: host[500] = %g\n", host[500]);

    // virtual memory management: reserve, create, map, give access, use, take it all down
    CUmemAllocationProp prop = {};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t granularity = 0;
    SHOW(cuMemGetAllocationGranularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    printf("granularity: %zu\n", granularity);
    CUdeviceptr va;
    CUmemGenericAllocationHandle handle;
    SHOW(cuMemAddressReserve(&va, 2 * granularity, 0, 0, 0));
    SHOW(cuMemCreate(&handle, granularity, &prop, 0));
    SHOW(cuMemCreate(&handle, granularity + 1, &prop, 0));
    SHOW(cuMemMap(va, granularity, 0, handle, 0));
    CUmemAccessDesc access = {};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    SHOW(cuMemSetAccess(va, granularity, &access, 1));
    SHOW(cuMemSetAccess(va, 2 * granularity, &access, 1));    // half of it is not mapped
    SHOW(cuMemRelease(handle));                               // still mapped: it lives on
    SHOW(cuMemcpyHtoD(va, host, sizeof host));
    void *vargs[] = {&va, &factor, &count};
    SHOW(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, nullptr, vargs, nullptr));
    SHOW(cuMemcpyDtoH(host, va, sizeof host));
    printf("through the mapping: host[7] = %g\n", host[7]);
    SHOW(cuMemUnmap(va, granularity));
    SHOW(cuMemAddressFree(va, 2 * granularity));

    // mistakes
    SHOW(cuModuleGetFunction(&missing, mod, "no_such_kernel"));
    SHOW(cuModuleGetGlobal(&launches, &bytes, mod, "no_such_variable"));
    SHOW(cuModuleGetFunction(&missing, nullptr, "scale"));
    SHOW(cuLaunchKernel(nullptr, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr));
    SHOW(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, nullptr, args, extra));
    SHOW(cuLaunchKernel(scale, 1, 1, 1, 2048, 1, 1, 0, nullptr, args, nullptr));
    SHOW(cuCtxSynchronize());
    SHOW(cuModuleLoadData(&bad, "this is not a module"));
    SHOW(cuModuleLoadData(&bad, BROKEN_PTX));
    SHOW(cuModuleLoad(&bad, "no_such_file.ptx"));
    CUdeviceptr none;
    SHOW(cuMemAlloc(&none, 0));
    SHOW(cuDeviceGet(&dev, 1));
    const char *text = nullptr;
    SHOW(cuGetErrorName((CUresult)9999, &text));
    printf("name of 9999: %s\n", text ? text : "NULL");
    SHOW(cuGetErrorString(CUDA_ERROR_NOT_FOUND, &text));
    printf("CUDA_ERROR_NOT_FOUND says: %s\n", text);

    SHOW(cuMemFree(data));
    SHOW(cuModuleUnload(mod));
    SHOW(cuCtxDestroy(ctx));
    return 0;
}
