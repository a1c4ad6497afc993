/* Pre-included in every NVRTC build: the short unsigned type names glibc's <sys/types.h> declares,
   which nvcc's host headers bring into every .cu file on Linux (cuda_runtime.h includes <stdlib.h>),
   so CUDA code written for nvcc uses them without an #include (`const uint tx = threadIdx.x;`).
   Redeclaring the same typedef is allowed, so a program that declares them itself still compiles. */
#pragma once
typedef unsigned int uint;
typedef unsigned short ushort;
typedef unsigned long ulong;
