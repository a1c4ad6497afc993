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

/* Every other driver function the shim defines, exported under its symbol (cuInit, cuMemAlloc_v2, ...) for a
 * program that dlsyms them (matrixMulDynlinkJIT): libcuda_exports.S (build.py writes it from the shim's symbols)
 * jumps through cudalab_slots, which this library fills from the program when it is loaded. */
void *cudalab_driver_symbol(const char *symbol);
#include "libcuda_exports.inc"     /* EXPORTS[]: the symbols, in the order of the slots */
__attribute__((visibility("hidden"))) void *cudalab_slots[sizeof EXPORTS / sizeof *EXPORTS];

#include <stdio.h>
/* an older version of a function whose arguments changed since (cuMemAlloc's 32-bit device pointers) */
static CUresult CUDAAPI not_in_program(void) {
    static int said;
    if (!said++)
        fprintf(stderr, "cudalab: the program called a CUDA driver function by the symbol of an older CUDA version "
                "(before its _v2), which cudalab does not emulate; it answers CUDA_ERROR_NOT_SUPPORTED\n");
    return CUDA_ERROR_NOT_SUPPORTED;
}

__attribute__((constructor)) static void fill_slots(void) {
    for (size_t i = 0; EXPORTS[i]; i++) {      /* (EXPORTS ends with NULL) */
        cudalab_slots[i] = cudalab_driver_symbol(EXPORTS[i]);
        if (!cudalab_slots[i]) cudalab_slots[i] = (void *)not_in_program;
    }
}
