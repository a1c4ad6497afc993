/* cudalab's front for cuRAND's device header (NVIDIA's own, found next on the include path, is used
 * unchanged but for one thing): XORWOW's skip-ahead, the loops over curand_precalc.h's jump matrices in
 * curand_init, skipahead and skipahead_sequence, becomes one call of cudalab_xorwow_jump. A GPU runs that
 * function's body, the same loops over the same matrices; the emulator knows the function by name and
 * applies the matrices natively (emulator/xorwow_jump.py), since interpreted the loops cost each thread
 * about 21,000 instructions. The state's words are still loaded and stored by the inlined code around
 * the call, at curand_init's line, so memcheck and racecheck see the same accesses.
 *
 * How: the overloads of _skipahead_inplace and _skipahead_sequence_inplace declared here take a
 * curandStateXORWOW pointer where NVIDIA's templates take any T; both are called with explicit template
 * arguments, and C++'s partial ordering picks the more specialized one, these.
 *
 * -DCUDALAB_CURAND_LOOPS leaves NVIDIA's header as it is (the tests compare both ways). */
#ifdef CUDALAB_CURAND_LOOPS
#include_next <curand_kernel.h>
#elif !defined(CUDALAB_CURAND_KERNEL_H)
#define CUDALAB_CURAND_KERNEL_H

#include <curand.h>   /* (NVIDIA's header includes it first too) the CUDA keywords, also for a host compiler's .cpp */

/* NVIDIA's default, which a program may have set otherwise (host and device): these functions take the same */
#if !defined(QUALIFIERS)
#define QUALIFIERS static __forceinline__ __device__
#endif

struct curandStateXORWOW;

template <typename T, int N>
QUALIFIERS void _skipahead_inplace(const unsigned long long x,
                                                                   curandStateXORWOW *state);
template <typename T, int N>
QUALIFIERS void _skipahead_sequence_inplace(unsigned long long x,
                                                                            curandStateXORWOW *state);

/* MRG32k3a jumps with curand_MRGmatPow3x3(table, out, modulus, n): the product of the table's matrices
 * for the set bits of n. The macro sends NVIDIA's calls to cudalab_mrg_pow3x3 below, and makes NVIDIA's own
 * definition an overload of it whose last parameter (a pointer to a function returning the tag) no call
 * of NVIDIA's matches. */
struct cudalab_mrg_tag {};
QUALIFIERS void cudalab_mrg_pow3x3(unsigned int in[][3][3], unsigned int o[][3],
                                                                   double m, unsigned long long pow,
                                                                   cudalab_mrg_tag);
#define curand_MRGmatPow3x3(in, o, m, pow) cudalab_mrg_pow3x3(in, o, m, pow, cudalab_mrg_tag())

#include_next <curand_kernel.h>

struct cudalab_mrg_matrix { unsigned int e[9]; };

/* table[i] (3x3, row by row) for each set bit i of n, multiplied on the left in turn, modulo m: NVIDIA's
 * code (what a GPU runs); the emulator answers the call natively (emulator/mrg_jump.py). */
#ifdef __CUDACC__     /* (a host compiler's .cpp has no device code: only the host branches below) */
extern "C" __device__ __noinline__ inline cudalab_mrg_matrix
cudalab_mrg_power(const unsigned int *table, unsigned long long n, double m)
{
    cudalab_mrg_matrix r;
    cudalab_mrg_pow3x3((unsigned int (*)[3][3])table, (unsigned int (*)[3])r.e, m, n, (cudalab_mrg_tag (*)())0);
    return r;
}
#endif

QUALIFIERS void cudalab_mrg_pow3x3(unsigned int in[][3][3], unsigned int o[][3],
                                                                   double m, unsigned long long pow,
                                                                   cudalab_mrg_tag)
{
#ifdef __CUDA_ARCH__
    cudalab_mrg_matrix r = cudalab_mrg_power(&in[0][0][0], pow, m);
    for (int i = 0; i < 9; i++) {
        o[i / 3][i % 3] = r.e[i];
    }
#else
    cudalab_mrg_pow3x3(in, o, m, pow, (cudalab_mrg_tag (*)())0);
#endif
}

struct cudalab_xorwow_words { unsigned int v[5]; };

/* The state's five words after skipping n subsequences of 2^67 numbers (numbers == 0) or n numbers
 * (numbers == 1): the matrix of base-4 digit i applied as many times as the digit says. Being called, it
 * comes first in the PTX, so this header is the PTX's file 1 (ptx/parser.py looks past it for the program's). */
#ifdef __CUDACC__     /* (a host compiler's .cpp has no device code: only the host branches below) */
extern "C" __device__ __noinline__ inline cudalab_xorwow_words
cudalab_xorwow_jump(unsigned int v0, unsigned int v1, unsigned int v2, unsigned int v3, unsigned int v4,
                    unsigned long long n, unsigned int numbers)
{
    cudalab_xorwow_words s = {{v0, v1, v2, v3, v4}};
    for (int level = 0; n; n >>= PRECALC_BLOCK_SIZE, level++) {
        for (unsigned int t = 0; t < (n & PRECALC_BLOCK_MASK); t++) {
            __curand_matvec_inplace<5>(s.v, numbers ? precalc_xorwow_offset_matrix[level]
                                                    : precalc_xorwow_matrix[level]);
        }
    }
    return s;
}
#endif

template <typename T, int N>
QUALIFIERS void cudalab_xorwow_skip(unsigned long long n, T *state,
                                                                    unsigned int numbers)
{
#ifdef __CUDA_ARCH__
    cudalab_xorwow_words s = cudalab_xorwow_jump(state->v[0], state->v[1], state->v[2], state->v[3],
                                                 state->v[4], n, numbers);
    for (int i = 0; i < 5; i++) {
        state->v[i] = s.v[i];
    }
#else
    for (int level = 0; n; n >>= PRECALC_BLOCK_SIZE, level++) {
        for (unsigned int t = 0; t < (n & PRECALC_BLOCK_MASK); t++) {
            __curand_matvec_inplace<N>(state->v, numbers ? precalc_xorwow_offset_matrix_host[level]
                                                         : precalc_xorwow_matrix_host[level]);
        }
    }
#endif
}

template <typename T, int N>
QUALIFIERS void _skipahead_inplace(const unsigned long long x,
                                                                   curandStateXORWOW *state)
{
    cudalab_xorwow_skip<curandStateXORWOW, N>(x, state, 1);
    state->d += 362437 * (unsigned int)x;
}

template <typename T, int N>
QUALIFIERS void _skipahead_sequence_inplace(unsigned long long x,
                                                                            curandStateXORWOW *state)
{
    cudalab_xorwow_skip<curandStateXORWOW, N>(x, state, 0);   /* d moves by a multiple of 2^32: unchanged */
}

#endif
