// CUDA arrays, textures and surfaces from the host: what each call gives back, and the error
// codes for misuse (the same on the emulator as on an H100). Each line: a call, then its result.
#include <cstdio>
#include <cstring>

static void show(const char *what, cudaError_t e)
{
    printf("%-58s %s\n", what, cudaGetErrorName(e));
    fflush(stdout);
    cudaGetLastError();
}

static void info(const char *what, cudaArray_t a)
{
    cudaChannelFormatDesc d;
    cudaExtent e;
    unsigned int flags;
    cudaError_t err = cudaArrayGetInfo(&d, &e, &flags, a);
    printf("%-58s %s desc (%d,%d,%d,%d,kind %d) extent (%zu,%zu,%zu) flags 0x%x\n", what, cudaGetErrorName(err),
           d.x, d.y, d.z, d.w, (int)d.f, e.width, e.height, e.depth, flags);
}

__global__ void readOutside(cudaSurfaceObject_t s, float *out)
{
    out[0] = surf2Dread<float>(s, 4 * 1000, 0, cudaBoundaryModeTrap);
}

int main()
{
    cudaChannelFormatDesc f1 = cudaCreateChannelDesc<float>(), f4 = cudaCreateChannelDesc<float4>();
    cudaChannelFormatDesc u8x4 = cudaCreateChannelDesc<uchar4>(), i16x2 = cudaCreateChannelDesc<short2>();
    printf("cudaCreateChannelDesc<float4>() = (%d,%d,%d,%d,kind %d), <uchar4> = (%d,%d,%d,%d,kind %d)\n", f4.x, f4.y,
           f4.z, f4.w, (int)f4.f, u8x4.x, u8x4.y, u8x4.z, u8x4.w, (int)u8x4.f);
    cudaChannelFormatDesc h1 = cudaCreateChannelDescHalf();
    printf("cudaCreateChannelDescHalf() = (%d,%d,%d,%d,kind %d)\n", h1.x, h1.y, h1.z, h1.w, (int)h1.f);

    // ---- cudaMallocArray and cudaMalloc3DArray
    cudaArray_t a1d, a2d, bad;
    show("cudaMallocArray float 16 (1D)", cudaMallocArray(&a1d, &f1, 16));
    info("  info", a1d);
    show("cudaMallocArray float4 7 x 5 surface|gather",
         cudaMallocArray(&a2d, &f4, 7, 5, cudaArraySurfaceLoadStore | cudaArrayTextureGather));
    info("  info", a2d);
    show("cudaMallocArray width 0", cudaMallocArray(&bad, &f1, 0, 4));
    cudaChannelFormatDesc three = cudaCreateChannelDesc(32, 32, 32, 0, cudaChannelFormatKindFloat);
    show("cudaMallocArray 3 channels of float", cudaMallocArray(&bad, &three, 8, 8));
    cudaChannelFormatDesc mixed = cudaCreateChannelDesc(8, 16, 0, 0, cudaChannelFormatKindUnsigned);
    show("cudaMallocArray channels of 8 and 16 bits", cudaMallocArray(&bad, &mixed, 8, 8));
    cudaChannelFormatDesc odd = cudaCreateChannelDesc(24, 0, 0, 0, cudaChannelFormatKindUnsigned);
    show("cudaMallocArray 24-bit channel", cudaMallocArray(&bad, &odd, 8, 8));
    cudaChannelFormatDesc f8 = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindFloat);
    show("cudaMallocArray 8-bit float", cudaMallocArray(&bad, &f8, 8, 8));
    cudaChannelFormatDesc gap = cudaCreateChannelDesc(0, 32, 0, 0, cudaChannelFormatKindFloat);
    show("cudaMallocArray channel y without x", cudaMallocArray(&bad, &gap, 8, 8));
    cudaChannelFormatDesc none = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindNone);
    show("cudaMallocArray kind None", cudaMallocArray(&bad, &none, 8, 8));
    show("cudaMallocArray 1D wider than the limit (131073)", cudaMallocArray(&bad, &f1, 131073));
    show("cudaMallocArray 2D 131072 x 65537", cudaMallocArray(&bad, &f1, 131072, 65537));
    show("cudaMallocArray with cudaArrayLayered", cudaMallocArray(&bad, &f1, 8, 8, cudaArrayLayered));
    show("cudaMallocArray NULL array", cudaMallocArray(NULL, &f1, 8, 8));
    show("cudaMallocArray NULL desc", cudaMallocArray(&bad, NULL, 8, 8));

    cudaArray_t cube, layered1d, layered2d, vol, cubes;
    show("cudaMalloc3DArray cubemap 8 x 8 x 6", cudaMalloc3DArray(&cube, &f1, make_cudaExtent(8, 8, 6), cudaArrayCubemap));
    info("  info", cube);
    show("cudaMalloc3DArray cubemap 8 x 4 x 6", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(8, 4, 6), cudaArrayCubemap));
    show("cudaMalloc3DArray cubemap 8 x 8 x 5", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(8, 8, 5), cudaArrayCubemap));
    show("cudaMalloc3DArray layered cubemap 8 x 8 x 12",
         cudaMalloc3DArray(&cubes, &f1, make_cudaExtent(8, 8, 12), cudaArrayCubemap | cudaArrayLayered));
    show("cudaMalloc3DArray layered cubemap 8 x 8 x 13",
         cudaMalloc3DArray(&bad, &f1, make_cudaExtent(8, 8, 13), cudaArrayCubemap | cudaArrayLayered));
    show("cudaMalloc3DArray layered 1D 16 x 0 x 4",
         cudaMalloc3DArray(&layered1d, &u8x4, make_cudaExtent(16, 0, 4), cudaArrayLayered));
    info("  info", layered1d);
    show("cudaMalloc3DArray layered 16 x 0 x 0", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(16, 0, 0), cudaArrayLayered));
    show("cudaMalloc3DArray layered 2D 5 x 4 x 3",
         cudaMalloc3DArray(&layered2d, &i16x2, make_cudaExtent(5, 4, 3), cudaArrayLayered | cudaArraySurfaceLoadStore));
    info("  info", layered2d);
    show("cudaMalloc3DArray 3D 6 x 5 x 4", cudaMalloc3DArray(&vol, &f1, make_cudaExtent(6, 5, 4)));
    info("  info", vol);
    show("cudaMalloc3DArray 3D 0 x 4 x 4", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(0, 4, 4)));
    show("cudaMalloc3DArray 3D 4 x 0 x 4", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(4, 0, 4)));
    show("cudaMalloc3DArray 3D 16385 x 4 x 4", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(16385, 4, 4)));
    show("cudaMalloc3DArray unknown flag 0x100", cudaMalloc3DArray(&bad, &f1, make_cudaExtent(4, 4, 0), 0x100));

    cudaMipmappedArray_t mip, badmip;
    cudaArray_t level;
    show("cudaMallocMipmappedArray 64 x 32, 0 levels", cudaMallocMipmappedArray(&badmip, &f1, make_cudaExtent(64, 32, 0), 0));
    show("cudaMallocMipmappedArray 64 x 32, 8 levels", cudaMallocMipmappedArray(&badmip, &f1, make_cudaExtent(64, 32, 0), 8));
    show("cudaMallocMipmappedArray 64 x 32, 7 levels", cudaMallocMipmappedArray(&mip, &f1, make_cudaExtent(64, 32, 0), 7));
    show("cudaGetMipmappedArrayLevel 6", cudaGetMipmappedArrayLevel(&level, mip, 6));
    info("  info", level);
    show("cudaGetMipmappedArrayLevel 3", cudaGetMipmappedArrayLevel(&level, mip, 3));
    info("  info", level);
    show("cudaGetMipmappedArrayLevel 7", cudaGetMipmappedArrayLevel(&level, mip, 7));

    // ---- copies to, from and between arrays
    float host[8 * 5 * 4], back[8 * 5 * 4];
    for (int i = 0; i < 8 * 5 * 4; ++i) host[i] = (float)i, back[i] = -1.0f;
    show("cudaMemcpyToArray 16 floats", cudaMemcpyToArray(a1d, 0, 0, host, 16 * sizeof(float), cudaMemcpyHostToDevice));
    show("cudaMemcpyToArray at x 8 bytes, 15 floats",
         cudaMemcpyToArray(a1d, 8, 0, host, 15 * sizeof(float), cudaMemcpyHostToDevice));
    show("cudaMemcpyFromArray at x 8 bytes, 14 floats",
         cudaMemcpyFromArray(back, a1d, 8, 0, 14 * sizeof(float), cudaMemcpyDeviceToHost));
    printf("  back[0] = %g, back[13] = %g\n", back[0], back[13]);
    show("cudaMemcpy2DToArray 7 x 5 float4",
         cudaMemcpy2DToArray(a2d, 0, 0, host, 7 * 16, 7 * 16, 5, cudaMemcpyHostToDevice));
    show("cudaMemcpy2DToArray at (16 bytes, 1), 6 x 4",
         cudaMemcpy2DToArray(a2d, 16, 1, host, 8 * 16, 6 * 16, 4, cudaMemcpyHostToDevice));
    show("cudaMemcpy2DToArray at (16 bytes, 1), 7 x 4",
         cudaMemcpy2DToArray(a2d, 16, 1, host, 8 * 16, 7 * 16, 4, cudaMemcpyHostToDevice));
    show("cudaMemcpy2DToArray width 6 bytes (not whole texels)",
         cudaMemcpy2DToArray(a2d, 0, 0, host, 8 * 16, 6, 2, cudaMemcpyHostToDevice));
    show("cudaMemcpy2DToArray at x 4 bytes (not a texel boundary)",
         cudaMemcpy2DToArray(a2d, 4, 0, host, 8 * 16, 16, 2, cudaMemcpyHostToDevice));
    show("cudaMemcpy2DToArray source pitch < width",
         cudaMemcpy2DToArray(a2d, 0, 0, host, 16, 32, 2, cudaMemcpyHostToDevice));
    show("cudaMemcpy2DFromArray 7 x 5", cudaMemcpy2DFromArray(back, 8 * 16, a2d, 0, 0, 7 * 16, 5, cudaMemcpyDeviceToHost));
    printf("  back[0..3] = %g %g %g %g, back[8*4*1+4] = %g, back[8*4*4+27] = %g\n", back[0], back[1], back[2], back[3],
           back[8 * 4 * 1 + 4], back[8 * 4 * 4 + 27]);
    cudaArray_t a2d_copy;
    cudaMallocArray(&a2d_copy, &f4, 7, 5);
    show("cudaMemcpy2DArrayToArray 3 x 2 at (2,1) -> (0,0)",
         cudaMemcpy2DArrayToArray(a2d_copy, 0, 0, a2d, 2 * 16, 1, 3 * 16, 2, cudaMemcpyDeviceToDevice));
    show("cudaMemcpy2DArrayToArray past the end",
         cudaMemcpy2DArrayToArray(a2d_copy, 5 * 16, 0, a2d, 0, 0, 3 * 16, 2, cudaMemcpyDeviceToDevice));
    show("cudaMemcpyFromArray float4 (0,0) 3 texels", cudaMemcpyFromArray(back, a2d_copy, 0, 0, 48, cudaMemcpyDeviceToHost));
    printf("  back[0] = %g, back[11] = %g\n", back[0], back[11]);

    cudaPitchedPtr pitched;
    show("cudaMalloc3D 100 bytes x 3 x 2", cudaMalloc3D(&pitched, make_cudaExtent(100, 3, 2)));
    printf("  pitch %s, xsize %zu, ysize %zu\n", pitched.pitch >= 100 && pitched.pitch % 128 == 0 ? "ok" : "BAD",
           pitched.xsize, pitched.ysize);
    show("cudaMemset3D 0x5a over 100 x 3 x 2", cudaMemset3D(pitched, 0x5a, make_cudaExtent(100, 3, 2)));
    cudaMemcpy3DParms p = {0};
    p.srcArray = vol;
    p.dstPtr = pitched;
    p.extent = make_cudaExtent(6, 3, 2);
    p.kind = cudaMemcpyDeviceToDevice;
    float volume[4][5][6];
    for (int i = 0; i < 120; ++i) (&volume[0][0][0])[i] = (float)(i * 3);
    cudaMemcpy3DParms in = {0};
    in.srcPtr = make_cudaPitchedPtr(volume, 6 * sizeof(float), 6, 5);
    in.dstArray = vol;
    in.extent = make_cudaExtent(6, 5, 4);
    in.kind = cudaMemcpyHostToDevice;
    show("cudaMemcpy3D host -> 3D array", cudaMemcpy3D(&in));
    p.srcPos = make_cudaPos(0, 1, 2);
    show("cudaMemcpy3D array (0,1,2) -> pitched, 6 x 3 x 2", cudaMemcpy3D(&p));
    unsigned char bytes[2][3][100];
    cudaMemcpy3DParms out = {0};
    out.srcPtr = pitched;
    out.dstPtr = make_cudaPitchedPtr(bytes, 100, 100, 3);
    out.extent = make_cudaExtent(100, 3, 2);
    out.kind = cudaMemcpyDeviceToHost;
    show("cudaMemcpy3D pitched -> host, 100 x 3 x 2", cudaMemcpy3D(&out));
    float first, last;
    memcpy(&first, &bytes[0][0][0], 4);
    memcpy(&last, &bytes[1][2][20], 4);
    printf("  first %g, last %g, byte after the copied texels 0x%x\n", first, last, bytes[1][2][24]);
    p.srcPos = make_cudaPos(1, 3, 3);
    show("cudaMemcpy3D array region past the end", cudaMemcpy3D(&p));
    p.srcPos = make_cudaPos(0, 0, 0);
    p.srcPtr = pitched;
    show("cudaMemcpy3D with both srcArray and srcPtr", cudaMemcpy3D(&p));
    cudaMemcpy3DParms zero = {0};
    show("cudaMemcpy3D all zero", cudaMemcpy3D(&zero));
    in.extent = make_cudaExtent(0, 5, 4);
    show("cudaMemcpy3D empty extent", cudaMemcpy3D(&in));
    in.extent = make_cudaExtent(6, 5, 4);
    show("cudaMemcpy3DAsync host -> 3D array", cudaMemcpy3DAsync(&in, 0));
    show("cudaMemcpy2DToArrayAsync", cudaMemcpy2DToArrayAsync(a2d, 0, 0, host, 7 * 16, 7 * 16, 5, cudaMemcpyHostToDevice, 0));
    show("cudaDeviceSynchronize", cudaDeviceSynchronize());

    // ---- texture objects
    cudaResourceDesc res;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a2d;
    cudaTextureDesc td;
    memset(&td, 0, sizeof td);
    td.addressMode[0] = cudaAddressModeWrap;
    td.addressMode[1] = cudaAddressModeMirror;
    td.addressMode[2] = cudaAddressModeBorder;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeNormalizedFloat;
    td.normalizedCoords = 1;
    td.borderColor[0] = 0.5f;
    td.maxAnisotropy = 4;
    td.mipmapLevelBias = 1.5f;
    td.maxMipmapLevelClamp = 3.0f;
    cudaTextureObject_t tex = 0;
    show("cudaCreateTextureObject array, linear, normalized read", cudaCreateTextureObject(&tex, &res, &td, NULL));
    printf("  handle is %s\n", tex ? "nonzero" : "zero");
    cudaTextureDesc got;
    memset(&got, 0x7f, sizeof got);
    show("cudaGetTextureObjectTextureDesc", cudaGetTextureObjectTextureDesc(&got, tex));
    printf("  address %d %d %d, filter %d, read %d, normalized %d, sRGB %d, border %g %g %g %g, aniso %u, "
           "mipmap filter %d, bias %g, clamp %g..%g, trilinear-opt-off %d, seamless %d\n",
           got.addressMode[0], got.addressMode[1], got.addressMode[2], got.filterMode, got.readMode,
           got.normalizedCoords, got.sRGB, got.borderColor[0], got.borderColor[1], got.borderColor[2],
           got.borderColor[3], got.maxAnisotropy, got.mipmapFilterMode, got.mipmapLevelBias, got.minMipmapLevelClamp,
           got.maxMipmapLevelClamp, got.disableTrilinearOptimization, got.seamlessCubemap);
    cudaResourceDesc gotres;
    memset(&gotres, 0, sizeof gotres);
    show("cudaGetTextureObjectResourceDesc", cudaGetTextureObjectResourceDesc(&gotres, tex));
    printf("  type %d, same array %d\n", gotres.resType, gotres.res.array.array == a2d);
    show("cudaDestroyTextureObject", cudaDestroyTextureObject(tex));
    cudaTextureObject_t t2;
    show("cudaCreateTextureObject NULL resource", cudaCreateTextureObject(&t2, NULL, &td, NULL));
    show("cudaCreateTextureObject NULL texture desc", cudaCreateTextureObject(&t2, &res, NULL, NULL));
    show("cudaCreateTextureObject NULL handle", cudaCreateTextureObject(NULL, &res, &td, NULL));
    td.readMode = cudaReadModeElementType;
    show("cudaCreateTextureObject float4, element read, linear", cudaCreateTextureObject(&t2, &res, &td, NULL));
    cudaDestroyTextureObject(t2);

    cudaArray_t ints;
    cudaChannelFormatDesc i32 = cudaCreateChannelDesc<int>();
    cudaMallocArray(&ints, &i32, 8, 8);
    res.res.array.array = ints;
    td.filterMode = cudaFilterModeLinear;
    show("cudaCreateTextureObject int, element read, linear filter", cudaCreateTextureObject(&t2, &res, &td, NULL));
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeNormalizedFloat;
    show("cudaCreateTextureObject int32, normalized read", cudaCreateTextureObject(&t2, &res, &td, NULL));
    td.readMode = cudaReadModeElementType;
    res.resType = (cudaResourceType)7;
    show("cudaCreateTextureObject resource type 7", cudaCreateTextureObject(&t2, &res, &td, NULL));

    float *lin;
    cudaMalloc(&lin, 4096);
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = lin;
    res.res.linear.desc = f1;
    res.res.linear.sizeInBytes = 4096;
    show("cudaCreateTextureObject linear 4096 bytes", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.linear.devPtr = lin + 1;
    res.res.linear.sizeInBytes = 4092;
    show("cudaCreateTextureObject linear at +4 bytes", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.linear.devPtr = lin + 64;
    res.res.linear.sizeInBytes = 3840;
    show("cudaCreateTextureObject linear at +256 bytes", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.linear.devPtr = lin + 128;
    res.res.linear.sizeInBytes = 3584;
    show("cudaCreateTextureObject linear at +512 bytes", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.linear.devPtr = lin;
    res.res.linear.sizeInBytes = 0;
    show("cudaCreateTextureObject linear 0 bytes", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.linear.sizeInBytes = 4094;
    show("cudaCreateTextureObject linear 4094 bytes (not whole texels)", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.linear.sizeInBytes = 4096;
    res.res.linear.desc = three;
    show("cudaCreateTextureObject linear 3 channels", cudaCreateTextureObject(&t2, &res, &td, NULL));

    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = lin;
    res.res.pitch2D.desc = f1;
    res.res.pitch2D.width = 10;
    res.res.pitch2D.height = 8;
    res.res.pitch2D.pitchInBytes = 64;
    show("cudaCreateTextureObject pitch2D 10 x 8, pitch 64", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.pitch2D.pitchInBytes = 48;
    show("cudaCreateTextureObject pitch2D pitch 48", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.pitch2D.pitchInBytes = 36;
    show("cudaCreateTextureObject pitch2D pitch 36 (< width)", cudaCreateTextureObject(&t2, &res, &td, NULL));
    res.res.pitch2D.pitchInBytes = 64;
    res.res.pitch2D.height = 0;
    show("cudaCreateTextureObject pitch2D height 0", cudaCreateTextureObject(&t2, &res, &td, NULL));

    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeMipmappedArray;
    res.res.mipmap.mipmap = mip;
    td.filterMode = cudaFilterModeLinear;
    td.mipmapFilterMode = cudaFilterModeLinear;
    show("cudaCreateTextureObject mipmapped", cudaCreateTextureObject(&t2, &res, &td, NULL));
    show("cudaDestroyTextureObject(0)", cudaDestroyTextureObject(0));

    // ---- surface objects
    cudaSurfaceObject_t surf;
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a1d;
    show("cudaCreateSurfaceObject without cudaArraySurfaceLoadStore", cudaCreateSurfaceObject(&surf, &res));
    res.res.array.array = layered2d;
    show("cudaCreateSurfaceObject layered, with the flag", cudaCreateSurfaceObject(&surf, &res));
    cudaResourceDesc sres;
    memset(&sres, 0, sizeof sres);
    show("cudaGetSurfaceObjectResourceDesc", cudaGetSurfaceObjectResourceDesc(&sres, surf));
    printf("  type %d, same array %d\n", sres.resType, sres.res.array.array == layered2d);
    show("cudaDestroySurfaceObject", cudaDestroySurfaceObject(surf));
    memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = lin;
    res.res.linear.desc = f1;
    res.res.linear.sizeInBytes = 4096;
    show("cudaCreateSurfaceObject over linear memory", cudaCreateSurfaceObject(&surf, &res));
    show("cudaCreateSurfaceObject NULL resource", cudaCreateSurfaceObject(&surf, NULL));

    // ---- freeing
    show("cudaFreeArray(NULL)", cudaFreeArray(NULL));
    show("cudaFreeArray a mipmap level", cudaFreeArray(level));
    show("cudaFreeMipmappedArray", cudaFreeMipmappedArray(mip));
    show("cudaFreeArray 1D", cudaFreeArray(a1d));
    show("cudaFree on a CUDA array", cudaFree((void *)a2d_copy));
    show("cudaFreeArray cubemap", cudaFreeArray(cube));

    // ---- a surface read outside the array with cudaBoundaryModeTrap
    float *d_out;
    cudaMalloc(&d_out, sizeof(float));
    res.resType = cudaResourceTypeArray;
    res.res.array.array = a2d;
    cudaCreateSurfaceObject(&surf, &res);
    readOutside<<<1, 1>>>(surf, d_out);
    show("launch reading a surface out of bounds (trap)", cudaGetLastError());
    show("cudaDeviceSynchronize after it", cudaDeviceSynchronize());
    show("cudaMalloc after it", cudaMalloc(&lin, 16));
    printf("Result = PASS\n");
    return 0;
}
