/* cuda_fp16.h -- half precision types and intrinsics (cuda2tile parse stub).
 * What __half shares with __nv_bfloat16 (the types, operators, conversions, arithmetic, comparisons,
 * math, atomics, shuffles, loads/stores) is declared once, in __cuda2tile/half_like.inc; this header
 * holds what is fp16's own: its constants and its type aliases. */
#ifndef __CUDA2TILE_CUDA_FP16_H
#define __CUDA2TILE_CUDA_FP16_H
/* the include-guard name code tests to see whether this header was included */
#define __CUDA_FP16_H__
#pragma clang system_header
#include <vector_types.h>
#define __CUDA_FP16_TYPES_EXIST__
#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)

/* ---- Types, operators, conversions, arithmetic, ... (shared with cuda_bf16.h) --------------- */
#define __C2T_H __half
#define __C2T_H2 __half2
#define __C2T_H_RAW __half_raw
#define __C2T_H2_RAW __half2_raw
#define __C2T_H_NAME half
#define __C2T_H_OTHER __nv_bfloat16
#include <__cuda2tile/half_like.inc>

/* ---- fp16's own type aliases ------------------------------------------------------------------ */
typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
#endif
