#pragma once
/* cudalab: libcu++'s <cuda/std/cfloat> (NVRTC has no C library headers), in extern "C++" for a source
   PyCUDA wraps in extern "C" { }. */
extern "C++" {
#include <cuda/std/cfloat>
}
