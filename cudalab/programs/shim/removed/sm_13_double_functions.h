/* cudalab's stand-in for sm_13_double_functions.h, a header of old toolkits that CUDA 13's no longer has: compute 1.3's double-precision intrinsics (__double_as_longlong, __dadd_rn, ...), now in device_double_functions.h, which cuda_runtime.h includes.
 * (given only to a unit that includes it; see programs/removed_headers.py) */
#pragma once
#include <cuda_runtime.h>
