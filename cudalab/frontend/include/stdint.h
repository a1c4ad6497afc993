#pragma once
/* cudalab: libcu++'s fixed-width integers. In extern "C++": PyCUDA's SourceModule puts the whole source,
   its #includes too, inside extern "C" { }, where libcu++'s templates may not be declared; a GPU's
   nvcc takes the host's <stdint.h> there. */
extern "C++" {
#include <cuda/std/cstdint>
}
using cuda::std::int8_t; using cuda::std::uint8_t; using cuda::std::int16_t; using cuda::std::uint16_t;
using cuda::std::int32_t; using cuda::std::uint32_t; using cuda::std::int64_t; using cuda::std::uint64_t;
using cuda::std::intptr_t; using cuda::std::uintptr_t; using cuda::std::intmax_t; using cuda::std::uintmax_t;
