/* cudalab's stand-in for surface_functions.h, a header of old toolkits that CUDA 13's no longer has: the functions of surface references; those of surface objects are surface_indirect_functions.h.
 * (given only to a unit that includes it; see programs/removed_headers.py) */
#pragma once
#include <cuda_runtime.h>
