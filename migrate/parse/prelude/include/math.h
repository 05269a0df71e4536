/* math.h -- cuda2tile parse stub: the C99 math library plus the C++ overloads that CUDA and
 * <cmath> provide (float, long double, integral arguments).  The C and float/double forms are
 * __host__ __device__, as in CUDA's math API; long double forms are host-only. */
#ifndef __CUDA2TILE_MATH_H
#define __CUDA2TILE_MATH_H
#pragma clang system_header

typedef float float_t;
typedef double double_t;
#define HUGE_VAL __builtin_huge_val()
#define HUGE_VALF __builtin_huge_valf()
#define HUGE_VALL __builtin_huge_vall()
#define INFINITY __builtin_inff()
#define NAN __builtin_nanf("")
#define MAXFLOAT 3.40282347e+38F
#define FP_NAN 0
#define FP_INFINITE 1
#define FP_ZERO 2
#define FP_SUBNORMAL 3
#define FP_NORMAL 4
#define FP_ILOGB0 (-2147483647 - 1)
#define FP_ILOGBNAN (-2147483647 - 1)
#define MATH_ERRNO 1
#define MATH_ERREXCEPT 2
#define math_errhandling (MATH_ERRNO | MATH_ERREXCEPT)
/* POSIX / GNU constants */
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define M_Ef 2.7182818284590452354f
#define M_PIf 3.14159265358979323846f
#define M_PI_2f 1.57079632679489661923f
#define M_SQRT2f 1.41421356237309504880f

/* ---- helpers for the C++ overload templates ------------------------------------------------ */
template <bool, class _T = void> struct __c2t_enable_if {};
template <class _T> struct __c2t_enable_if<true, _T> { typedef _T type; };
template <class _T> struct __c2t_promote { typedef double type; };
template <> struct __c2t_promote<float> { typedef float type; };
template <> struct __c2t_promote<long double> { typedef long double type; };
template <class _A, class _B> struct __c2t_promote2 {
  typedef decltype(typename __c2t_promote<_A>::type() + typename __c2t_promote<_B>::type()) type;
};
#define __C2T_IF_INT(_T, _R) typename __c2t_enable_if<__is_integral(_T), _R>::type
#define __C2T_IF_MIXED(_A, _B, _R)                                                              \
  typename __c2t_enable_if<__is_arithmetic(_A) && __is_arithmetic(_B) &&                        \
                               !(__is_same(_A, _B) && __is_floating_point(_A)),                 \
                           typename __c2t_promote2<_A, _B>::type>::type

/* ---- declaration generators ---------------------------------------------------------------- */
#define __C2T_MATH1(fn)                                                                        \
  extern "C" __host__ __device__ double fn(double __x);                                        \
  extern "C" __host__ __device__ float fn##f(float __x);                                       \
  extern "C" long double fn##l(long double __x);                                               \
  __host__ __device__ float fn(float __x);                                                     \
  long double fn(long double __x);                                                             \
  template <class _T> __host__ __device__ __C2T_IF_INT(_T, double) fn(_T __x);
#define __C2T_MATH2(fn)                                                                        \
  extern "C" __host__ __device__ double fn(double __x, double __y);                            \
  extern "C" __host__ __device__ float fn##f(float __x, float __y);                            \
  extern "C" long double fn##l(long double __x, long double __y);                              \
  __host__ __device__ float fn(float __x, float __y);                                          \
  long double fn(long double __x, long double __y);                                            \
  template <class _A, class _B> __host__ __device__ __C2T_IF_MIXED(_A, _B, double) fn(_A __x, _B __y);
/* one floating argument, result of another type */
#define __C2T_MATH_TO(R, fn)                                                                   \
  extern "C" __host__ __device__ R fn(double __x);                                             \
  extern "C" __host__ __device__ R fn##f(float __x);                                           \
  extern "C" R fn##l(long double __x);                                                         \
  __host__ __device__ R fn(float __x);                                                         \
  R fn(long double __x);                                                                       \
  template <class _T> __host__ __device__ __C2T_IF_INT(_T, R) fn(_T __x);
/* a floating argument plus one extra parameter of type P */
#define __C2T_MATH_P(fn, P)                                                                    \
  extern "C" __host__ __device__ double fn(double __x, P);                                     \
  extern "C" __host__ __device__ float fn##f(float __x, P);                                    \
  extern "C" long double fn##l(long double __x, P);                                            \
  __host__ __device__ float fn(float __x, P);                                                  \
  long double fn(long double __x, P);
#define __C2T_CLASSIFY(R, fn)                                                                  \
  __host__ __device__ R fn(float __x);                                                         \
  __host__ __device__ R fn(double __x);                                                        \
  R fn(long double __x);                                                                       \
  template <class _T> __host__ __device__ __C2T_IF_INT(_T, R) fn(_T __x);
#define __C2T_COMPARE(fn)                                                                      \
  __host__ __device__ bool fn(float __x, float __y);                                           \
  __host__ __device__ bool fn(double __x, double __y);                                         \
  bool fn(long double __x, long double __y);

/* Name lists (also used by <cmath> to bring the names into std). */
#define __C2T_MATH1_NAMES(X)                                                                   \
  X(acos) X(asin) X(atan) X(cos) X(sin) X(tan) X(acosh) X(asinh) X(atanh) X(cosh) X(sinh)      \
  X(tanh) X(exp) X(exp2) X(expm1) X(log) X(log10) X(log1p) X(log2) X(logb) X(cbrt) X(sqrt)    \
  X(erf) X(erfc) X(lgamma) X(tgamma) X(ceil) X(floor) X(nearbyint) X(rint) X(round) X(trunc)   \
  X(fabs)
#define __C2T_MATH2_NAMES(X)                                                                   \
  X(atan2) X(pow) X(hypot) X(fmod) X(remainder) X(copysign) X(nextafter) X(fdim) X(fmax) X(fmin)
#define __C2T_MATH_OTHER_NAMES(X)                                                              \
  X(fma) X(frexp) X(ldexp) X(modf) X(scalbn) X(scalbln) X(ilogb) X(lrint) X(llrint) X(lround)  \
  X(llround) X(remquo) X(nan)
#define __C2T_CLASSIFY_NAMES(X)                                                                \
  X(isnan) X(isinf) X(isfinite) X(signbit) X(isnormal) X(fpclassify) X(isgreater)              \
  X(isgreaterequal) X(isless) X(islessequal) X(islessgreater) X(isunordered)

/* ---- one-argument functions: acos ... fabs ------------------------------------------------- */
__C2T_MATH1_NAMES(__C2T_MATH1)
/* GNU extensions CUDA also provides */
__C2T_MATH1(exp10)
__C2T_MATH1(j0)
__C2T_MATH1(j1)
__C2T_MATH1(y0)
__C2T_MATH1(y1)

/* ---- two-argument functions: atan2 ... fmin ------------------------------------------------ */
__C2T_MATH2_NAMES(__C2T_MATH2)

/* ---- fused multiply-add -------------------------------------------------------------------- */
extern "C" __host__ __device__ double fma(double __x, double __y, double __z);
extern "C" __host__ __device__ float fmaf(float __x, float __y, float __z);
extern "C" long double fmal(long double __x, long double __y, long double __z);
__host__ __device__ float fma(float __x, float __y, float __z);
long double fma(long double __x, long double __y, long double __z);

/* ---- other signatures ---------------------------------------------------------------------- */
__C2T_MATH_P(frexp, int *__e)
__C2T_MATH_P(ldexp, int __e)
__C2T_MATH_P(scalbn, int __e)
__C2T_MATH_P(scalbln, long __e)
__C2T_MATH_TO(int, ilogb)
__C2T_MATH_TO(long, lrint)
__C2T_MATH_TO(long long, llrint)
__C2T_MATH_TO(long, lround)
__C2T_MATH_TO(long long, llround)
extern "C" __host__ __device__ double modf(double __x, double *__i);
extern "C" __host__ __device__ float modff(float __x, float *__i);
extern "C" long double modfl(long double __x, long double *__i);
__host__ __device__ float modf(float __x, float *__i);
long double modf(long double __x, long double *__i);
extern "C" __host__ __device__ double remquo(double __x, double __y, int *__q);
extern "C" __host__ __device__ float remquof(float __x, float __y, int *__q);
extern "C" long double remquol(long double __x, long double __y, int *__q);
__host__ __device__ float remquo(float __x, float __y, int *__q);
long double remquo(long double __x, long double __y, int *__q);
extern "C" __host__ __device__ double nan(const char *__tag);
extern "C" __host__ __device__ float nanf(const char *__tag);
extern "C" long double nanl(const char *__tag);
extern "C" __host__ __device__ double jn(int __n, double __x);
extern "C" __host__ __device__ float jnf(int __n, float __x);
extern "C" __host__ __device__ double yn(int __n, double __x);
extern "C" __host__ __device__ float ynf(int __n, float __x);
extern "C" __host__ __device__ void sincos(double __x, double *__s, double *__c);
extern "C" __host__ __device__ void sincosf(float __x, float *__s, float *__c);
__host__ __device__ void sincos(float __x, float *__s, float *__c);

/* ---- abs for floating point (integer forms are in <stdlib.h>) ------------------------------ */
__host__ __device__ float abs(float __x);
__host__ __device__ double abs(double __x);
long double abs(long double __x);

/* ---- classification and comparison (functions in C++) -------------------------------------- */
__C2T_CLASSIFY(bool, isnan)
__C2T_CLASSIFY(bool, isinf)
__C2T_CLASSIFY(bool, isfinite)
__C2T_CLASSIFY(bool, signbit)
__C2T_CLASSIFY(bool, isnormal)
__C2T_CLASSIFY(int, fpclassify)
__C2T_COMPARE(isgreater)
__C2T_COMPARE(isgreaterequal)
__C2T_COMPARE(isless)
__C2T_COMPARE(islessequal)
__C2T_COMPARE(islessgreater)
__C2T_COMPARE(isunordered)
extern "C" {
__host__ __device__ int __isnan(double __x);
__host__ __device__ int __isnanf(float __x);
__host__ __device__ int __isinf(double __x);
__host__ __device__ int __isinff(float __x);
__host__ __device__ int __finite(double __x);
__host__ __device__ int __finitef(float __x);
__host__ __device__ int __signbit(double __x);
__host__ __device__ int __signbitf(float __x);
}
#endif
