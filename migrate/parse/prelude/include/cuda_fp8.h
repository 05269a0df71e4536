/* cuda_fp8.h -- 8-bit floating point types (cuda2tile parse stub). */
#ifndef __CUDA2TILE_CUDA_FP8_H
#define __CUDA2TILE_CUDA_FP8_H
/* the include-guard name code tests to see whether this header was included */
#define __CUDA_FP8_H__
#pragma clang system_header
#include <cuda_fp16.h>
#include <cuda_bf16.h>
typedef unsigned char __nv_fp8_storage_t;
typedef unsigned short __nv_fp8x2_storage_t;
typedef unsigned int __nv_fp8x4_storage_t;
enum __nv_saturation_t { __NV_NOSAT, __NV_SATFINITE };
enum __nv_fp8_interpretation_t { __NV_E4M3, __NV_E5M2 };
__host__ __device__ __nv_fp8_storage_t __nv_cvt_float_to_fp8(const float x, const __nv_saturation_t saturate, const __nv_fp8_interpretation_t fp8_interpretation);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_double_to_fp8(const double x, const __nv_saturation_t saturate, const __nv_fp8_interpretation_t fp8_interpretation);
__host__ __device__ __nv_fp8x2_storage_t __nv_cvt_float2_to_fp8x2(const float2 x, const __nv_saturation_t saturate, const __nv_fp8_interpretation_t fp8_interpretation);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_halfraw_to_fp8(const __half_raw x, const __nv_saturation_t saturate, const __nv_fp8_interpretation_t fp8_interpretation);
__host__ __device__ __nv_fp8_storage_t __nv_cvt_bfloat16raw_to_fp8(const __nv_bfloat16_raw x, const __nv_saturation_t saturate, const __nv_fp8_interpretation_t fp8_interpretation);
__host__ __device__ __half_raw __nv_cvt_fp8_to_halfraw(const __nv_fp8_storage_t x, const __nv_fp8_interpretation_t fp8_interpretation);
__host__ __device__ __half2_raw __nv_cvt_fp8x2_to_halfraw2(const __nv_fp8x2_storage_t x, const __nv_fp8_interpretation_t fp8_interpretation);
#define __C2T_FP8(name)                                                                        \
  struct __align__(1) name {                                                                   \
    __nv_fp8_storage_t __x;                                                                    \
    name() = default;                                                                          \
    __host__ __device__ explicit name(const __half f);                                         \
    __host__ __device__ explicit name(const __nv_bfloat16 f);                                  \
    __host__ __device__ explicit name(const float f);                                          \
    __host__ __device__ explicit name(const double f);                                         \
    __host__ __device__ explicit name(const int val);                                          \
    __host__ __device__ explicit name(const unsigned int val);                                 \
    __host__ __device__ explicit name(const long long val);                                    \
    __host__ __device__ explicit operator __half() const;                                      \
    __host__ __device__ explicit operator float() const;                                       \
    __host__ __device__ explicit operator double() const;                                      \
    __host__ __device__ explicit operator __nv_bfloat16() const;                               \
    __host__ __device__ explicit operator int() const;                                         \
    __host__ __device__ explicit operator bool() const;                                        \
  };
__C2T_FP8(__nv_fp8_e4m3)
__C2T_FP8(__nv_fp8_e5m2)
#undef __C2T_FP8
#define __C2T_FP8X(name, S, V)                                                                 \
  struct name {                                                                                \
    S __x;                                                                                     \
    name() = default;                                                                          \
    __host__ __device__ explicit name(const V f);                                              \
    __host__ __device__ explicit operator V() const;                                           \
  };
__C2T_FP8X(__nv_fp8x2_e4m3, __nv_fp8x2_storage_t, float2)
__C2T_FP8X(__nv_fp8x2_e5m2, __nv_fp8x2_storage_t, float2)
__C2T_FP8X(__nv_fp8x4_e4m3, __nv_fp8x4_storage_t, float4)
__C2T_FP8X(__nv_fp8x4_e5m2, __nv_fp8x4_storage_t, float4)
#undef __C2T_FP8X
#endif
