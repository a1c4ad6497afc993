// PyCUDA's complex header as cudalab's PyCUDA stand-in gives it: pycuda::complex<T> is libcu++'s
// cuda::std::complex<T> (the CuPy stand-in's <cupy/complex.cuh>, with its mixed-type arithmetic), and
// pycuda::abs, exp, ... are libcu++'s functions of it. C++ linkage, as PyCUDA's own header has it:
// SourceModule puts a program's source, includes too, inside extern "C" { }.
#pragma once
extern "C++" {
#include <cupy/complex.cuh>

namespace pycuda {
template <typename T>
using complex = cuda::std::complex<T>;
using cuda::std::abs;
using cuda::std::arg;
using cuda::std::conj;
using cuda::std::cos;
using cuda::std::cosh;
using cuda::std::exp;
using cuda::std::imag;
using cuda::std::log;
using cuda::std::norm;
using cuda::std::polar;
using cuda::std::pow;
using cuda::std::real;
using cuda::std::sin;
using cuda::std::sinh;
using cuda::std::sqrt;
using cuda::std::tan;
using cuda::std::tanh;
}  // namespace pycuda
}  // extern "C++"
