/* The three cufftResult codes CUDA 13's cuFFT dropped, for programs written for CUDA 12 and older.
 *
 * Up to CUDA 12, cufft.h numbered CUFFT_INCOMPLETE_PARAMETER_LIST 0xA, CUFFT_PARSE_ERROR 0xC and
 * CUFFT_LICENSE_ERROR 0xF; CUDA 13's leaves those numbers out. The helper_cuda.h that courses copied from
 * the CUDA samples names all three in its cuFFT error strings (the case labels under #ifdef _CUFFT_H_),
 * so a course program that includes cufft.h before it stops at 'identifier "CUFFT_INCOMPLETE_PARAMETER_LIST"
 * is undefined' with nvcc 13 (Oxford's CUDA course's simpleCUFFT practical).
 *
 * cudalab's build gives this header to a unit only when nvcc named one of them undefined (build.py), and
 * keeps the rebuild only if it compiles. Each name is its old value as a cufftResult, so the switch's case
 * labels stay constant expressions of the enum's type; cuFFT 13 returns none of them.
 */
#pragma once
#include <cufft.h>

#ifndef CUFFT_INCOMPLETE_PARAMETER_LIST
#define CUFFT_INCOMPLETE_PARAMETER_LIST ((cufftResult)0xA)
#endif
#ifndef CUFFT_PARSE_ERROR
#define CUFFT_PARSE_ERROR ((cufftResult)0xC)
#endif
#ifndef CUFFT_LICENSE_ERROR
#define CUFFT_LICENSE_ERROR ((cufftResult)0xF)
#endif
