/* stddef.h -- cuda2tile parse stub (types from clang's predefined macros). */
#ifndef __CUDA2TILE_STDDEF_H
#define __CUDA2TILE_STDDEF_H
#pragma clang system_header
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef struct { long long __a __attribute__((aligned(16))); } max_align_t;
#ifdef __cplusplus
typedef decltype(nullptr) nullptr_t;
#endif
#undef NULL
#define NULL __null
#define offsetof(type, member) __builtin_offsetof(type, member)
#endif
