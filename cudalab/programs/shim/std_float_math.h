/* cudalab: the float and long double math functions C++17's <cmath> declares in namespace std (std::sqrtf,
 * std::powf, ...), which Visual Studio's library has and g++'s libstdc++ gained only in version 14. Included
 * (by std_float_math.py) only in a unit that g++ or nvcc stopped at such a name: each is the C library's own
 * function, as libstdc++ 14 gives it, so a call means the same with either compiler. */
#pragma once
#include <math.h>
#include <cmath>
namespace std {
using ::acosf; using ::asinf; using ::atanf; using ::atan2f; using ::cosf; using ::sinf; using ::tanf;
using ::coshf; using ::sinhf; using ::tanhf; using ::acoshf; using ::asinhf; using ::atanhf;
using ::expf; using ::exp2f; using ::expm1f; using ::logf; using ::log10f; using ::log2f; using ::log1pf;
using ::frexpf; using ::ldexpf; using ::modff; using ::powf; using ::sqrtf; using ::cbrtf; using ::hypotf;
using ::ceilf; using ::floorf; using ::fabsf; using ::fmodf; using ::roundf; using ::truncf; using ::rintf;
using ::nearbyintf; using ::lroundf; using ::llroundf; using ::lrintf; using ::fminf; using ::fmaxf; using ::fmaf;
using ::fdimf; using ::remainderf; using ::copysignf; using ::erff; using ::erfcf; using ::tgammaf; using ::lgammaf;
using ::sqrtl; using ::powl; using ::fabsl; using ::expl; using ::logl; using ::sinl; using ::cosl;
}
