// cudalab's <cupy/complex.cuh>: the complex type CuPy's kernels write as plain `complex<float>` and
// `complex<double>` (CuPy ships thrust's complex under this name; this one is libcu++'s
// cuda::std::complex, which NVRTC compiles). Functions of a complex value (exp, log, sqrt, abs, arg,
// conj, real, imag, pow, sin, ...) are found by argument-dependent lookup. What thrust's type has and
// libcu++'s lacks is added below: arithmetic between a complex value and a number of another type
// (`2.0 * z` for a complex<float> z), and isnan/isinf/isfinite of a complex value.
#pragma once

#include <cuda/std/complex>
#include <cuda/std/type_traits>

template <typename T>
using complex = cuda::std::complex<T>;

namespace cudalab_cupy {
template <typename A, typename B>
using mixed = cuda::std::enable_if_t<cuda::std::is_arithmetic<B>::value && !cuda::std::is_same<A, B>::value,
                                     cuda::std::complex<cuda::std::common_type_t<A, B>>>;
}

// z op x and x op z for a number x or a complex value of another type: both as complex values of the
// common type (thrust's rule: complex<float> * double is complex<double>)
#define CUDALAB_CUPY_MIXED(op)                                                          \
template <typename T, typename U>                                                       \
__host__ __device__ cudalab_cupy::mixed<T, U> operator op(const complex<T>& z, const U& x) { \
    using R = cuda::std::common_type_t<T, U>;                                           \
    return complex<R>(z.real(), z.imag()) op complex<R>(R(x));                          \
}                                                                                       \
template <typename T, typename U>                                                       \
__host__ __device__ cudalab_cupy::mixed<T, U> operator op(const U& x, const complex<T>& z) { \
    using R = cuda::std::common_type_t<T, U>;                                           \
    return complex<R>(R(x)) op complex<R>(z.real(), z.imag());                          \
}                                                                                       \
template <typename T, typename U>                                                       \
__host__ __device__ cuda::std::enable_if_t<!cuda::std::is_same<T, U>::value,            \
                                          complex<cuda::std::common_type_t<T, U>>>      \
operator op(const complex<T>& a, const complex<U>& b) {                                 \
    using R = cuda::std::common_type_t<T, U>;                                           \
    return complex<R>(a.real(), a.imag()) op complex<R>(b.real(), b.imag());            \
}
CUDALAB_CUPY_MIXED(+)
CUDALAB_CUPY_MIXED(-)
CUDALAB_CUPY_MIXED(*)
CUDALAB_CUPY_MIXED(/)
#undef CUDALAB_CUPY_MIXED

template <typename T>
__host__ __device__ bool isnan(const complex<T>& z) { return ::isnan(z.real()) || ::isnan(z.imag()); }
template <typename T>
__host__ __device__ bool isinf(const complex<T>& z) { return ::isinf(z.real()) || ::isinf(z.imag()); }
template <typename T>
__host__ __device__ bool isfinite(const complex<T>& z) { return ::isfinite(z.real()) && ::isfinite(z.imag()); }
