/* Pre-included in the PyCUDA stand-in's NVRTC builds (PyCUDA compiles with nvcc): the short unsigned
   type names glibc's <sys/types.h> declares, which nvcc's host headers bring into every .cu file on
   Linux (cuda_runtime.h includes <stdlib.h>), so code written for PyCUDA uses them without an #include
   (`const uint tx = threadIdx.x;`). CuPy and cudalab's cells compile with NVRTC, which lacks them, as
   CuPy's RawKernel does.
   Redeclaring the same typedef is allowed, so a program that declares them itself still compiles. */
#pragma once
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned long ulong;
