/* cudalab's stand-in for sm_11_atomic_functions.h, a header of old toolkits that CUDA 13's no longer has: compute 1.1's 32-bit global atomics, declared for every CUDA unit by cuda_runtime.h.
 * (given only to a unit that includes it; see programs/removed_headers.py) */
#pragma once
#include <cuda_runtime.h>
