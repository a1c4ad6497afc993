/* cudalab's libcuda.so.1: what a program that dlopens the CUDA driver finds (not included by cudart.c).
 *
 * CCCL's host API (cuda::stream, cuda::launch, memory pools) dlopens libcuda.so.1 and asks it for
 * cuGetProcAddress_v2 only. The functions it then hands out are the program's own shim (driver.c),
 * reached through the one symbol the program exports: this library holds no state of its own, so
 * it needs no second connection to the emulator. build.py builds it beside libcudart_cudalab.a and
 * gives programs that folder as their RUNPATH, which dlopen searches before the system's folders.
 */
#include <cuda.h>

CUresult cudalab_driver_entry_point(const char *name, void **fn, int version, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *status);

CUresult CUDAAPI cuGetProcAddress(const char *name, void **fn, int version, cuuint64_t flags,
                                  CUdriverProcAddressQueryResult *status) {
    return cudalab_driver_entry_point(name, fn, version, flags, status);
}
