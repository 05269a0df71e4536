/* math_functions.h -- the CUDA-specific part of the math API (cuda2tile parse stub): functions
 * beyond C99 (rsqrt, sinpi, normcdf, erfinv, norm3d, ...) and the min/max overloads.  The C99
 * functions and their C++ overloads are in <math.h>. */
#ifndef __CUDA2TILE_MATH_FUNCTIONS_H
#define __CUDA2TILE_MATH_FUNCTIONS_H
#pragma clang system_header
#include <math.h>

/* ---- CUDA-only one-argument functions: C double and float forms, C++ float overload -------- */
#define __C2T_CUDA_MATH1(fn)                                                                   \
  extern "C" __device__ double fn(double __x);                                                 \
  extern "C" __device__ float fn##f(float __x);                                                \
  __device__ float fn(float __x);
__C2T_CUDA_MATH1(rsqrt)
__C2T_CUDA_MATH1(rcbrt)
__C2T_CUDA_MATH1(sinpi)
__C2T_CUDA_MATH1(cospi)
__C2T_CUDA_MATH1(normcdf)
__C2T_CUDA_MATH1(normcdfinv)
__C2T_CUDA_MATH1(erfinv)
__C2T_CUDA_MATH1(erfcinv)
__C2T_CUDA_MATH1(erfcx)
__C2T_CUDA_MATH1(cyl_bessel_i0)
__C2T_CUDA_MATH1(cyl_bessel_i1)
extern "C" {
__device__ void sincospi(double __x, double *__s, double *__c);
__device__ void sincospif(float __x, float *__s, float *__c);
__device__ double rhypot(double __x, double __y);
__device__ float rhypotf(float __x, float __y);
__device__ double norm3d(double __a, double __b, double __c);
__device__ float norm3df(float __a, float __b, float __c);
__device__ double rnorm3d(double __a, double __b, double __c);
__device__ float rnorm3df(float __a, float __b, float __c);
__device__ double norm4d(double __a, double __b, double __c, double __d);
__device__ float norm4df(float __a, float __b, float __c, float __d);
__device__ double rnorm4d(double __a, double __b, double __c, double __d);
__device__ float rnorm4df(float __a, float __b, float __c, float __d);
__device__ double norm(int __dim, const double *__p);
__device__ float normf(int __dim, const float *__p);
__device__ double rnorm(int __dim, const double *__p);
__device__ float rnormf(int __dim, const float *__p);
__host__ __device__ float fdividef(float __x, float __y);
}
__device__ void sincospi(float __x, float *__s, float *__c);
__device__ float rhypot(float __x, float __y);

/* ---- min / max: integer, mixed-signedness and floating-point overloads --------------------- */
extern "C" {
__host__ __device__ unsigned int umin(unsigned int __a, unsigned int __b);
__host__ __device__ long long int llmin(long long int __a, long long int __b);
__host__ __device__ unsigned long long int ullmin(unsigned long long int __a, unsigned long long int __b);
__host__ __device__ unsigned int umax(unsigned int __a, unsigned int __b);
__host__ __device__ long long int llmax(long long int __a, long long int __b);
__host__ __device__ unsigned long long int ullmax(unsigned long long int __a, unsigned long long int __b);
}
#define __C2T_MINMAX(fn)                                                                       \
  __host__ __device__ int fn(int __a, int __b);                                                \
  __host__ __device__ unsigned int fn(unsigned int __a, unsigned int __b);                     \
  __host__ __device__ unsigned int fn(int __a, unsigned int __b);                              \
  __host__ __device__ unsigned int fn(unsigned int __a, int __b);                              \
  __host__ __device__ long int fn(long int __a, long int __b);                                 \
  __host__ __device__ unsigned long int fn(unsigned long int __a, unsigned long int __b);      \
  __host__ __device__ unsigned long int fn(long int __a, unsigned long int __b);               \
  __host__ __device__ unsigned long int fn(unsigned long int __a, long int __b);               \
  __host__ __device__ long long int fn(long long int __a, long long int __b);                  \
  __host__ __device__ unsigned long long int fn(unsigned long long int __a, unsigned long long int __b); \
  __host__ __device__ unsigned long long int fn(long long int __a, unsigned long long int __b); \
  __host__ __device__ unsigned long long int fn(unsigned long long int __a, long long int __b); \
  __host__ __device__ float fn(float __a, float __b);                                          \
  __host__ __device__ double fn(double __a, double __b);                                       \
  __host__ __device__ double fn(float __a, double __b);                                        \
  __host__ __device__ double fn(double __a, float __b);
__C2T_MINMAX(min)
__C2T_MINMAX(max)
#endif
