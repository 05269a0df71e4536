/* cuda_bf16.h -- bfloat16 precision types and intrinsics (cuda2tile parse stub).
 * What __nv_bfloat16 shares with __half (the types, operators, conversions, arithmetic, comparisons,
 * math, atomics, shuffles, loads/stores) is declared once, in __cuda2tile/half_like.inc; this header
 * holds what is bf16's own: its constants and its type aliases. */
#ifndef __CUDA2TILE_CUDA_BF16_H
#define __CUDA2TILE_CUDA_BF16_H
/* the include-guard name code tests to see whether this header was included */
#define __CUDA_BF16_H__
#pragma clang system_header
#include <vector_types.h>
#define __CUDA_BF16_TYPES_EXIST__
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)

/* ---- Types, operators, conversions, arithmetic, ... (shared with cuda_fp16.h) --------------- */
#define __C2T_H __nv_bfloat16
#define __C2T_H2 __nv_bfloat162
#define __C2T_H_RAW __nv_bfloat16_raw
#define __C2T_H2_RAW __nv_bfloat162_raw
#define __C2T_H_NAME bfloat16
#define __C2T_H_OTHER __half
#include <__cuda2tile/half_like.inc>

/* ---- bf16's own type aliases ------------------------------------------------------------------ */
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
#endif
