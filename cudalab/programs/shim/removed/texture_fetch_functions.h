/* cudalab's stand-in for texture_fetch_functions.h, a header of old toolkits that CUDA 13's no longer has: the fetch functions of texture references; tex1Dfetch and tex2D of texture objects are texture_indirect_functions.h.
 * (given only to a unit that includes it; see programs/removed_headers.py) */
#pragma once
#include <cuda_runtime.h>
