/* The warp votes of CUDA 1.2 to 8, __any, __all and __ballot, for programs written then.
 *
 * CUDA 9 replaced them with __any_sync, __all_sync and __ballot_sync. CUDA 13 still declares the old
 * names, but their PTX (vote without .sync) is refused by ptxas for compute 7.0 and up ("Instruction
 * 'vote' without '.sync' is not supported"), and nvcc 13 builds for nothing older: NVIDIA's 2015
 * Longstaff-Schwartz sample and cs344's warp reduction stop there. They voted among the warp's active
 * threads, which is what the _sync vote does with __activemask() as its mask.
 *
 * cudalab's build gives this header to a unit only when ptxas refused such a vote (build.py). The
 * toolkit's declarations of the names come before it, so the names are taken over by object-like
 * macros: a function-like `__any(p)` would also rewrite libcu++'s own `struct __any { __any(...); }`,
 * which the object-like ones rename consistently, in the host and the device pass alike.
 */
#pragma once
#if defined(__CUDACC__) && defined(__cplusplus)
__device__ inline int cudalab_legacy_any(int predicate) { return __any_sync(__activemask(), predicate); }
__device__ inline int cudalab_legacy_all(int predicate) { return __all_sync(__activemask(), predicate); }
__device__ inline unsigned int cudalab_legacy_ballot(int predicate) { return __ballot_sync(__activemask(), predicate); }
#define __any cudalab_legacy_any
#define __all cudalab_legacy_all
#define __ballot cudalab_legacy_ballot
#endif
