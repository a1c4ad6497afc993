/* cudalab's stand-in for cuda_texture_types.h, a header of old toolkits that CUDA 13's no longer has: the texture<T, dim, mode> reference template; cudalab builds a unit that declares one with legacy_textures.h.
 * (given only to a unit that includes it; see programs/removed_headers.py) */
#pragma once
#include <cuda_runtime.h>
