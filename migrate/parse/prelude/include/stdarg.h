/* stdarg.h -- cuda2tile parse stub (clang builtins). */
#ifndef __CUDA2TILE_STDARG_H
#define __CUDA2TILE_STDARG_H
#pragma clang system_header
typedef __builtin_va_list va_list;
typedef __builtin_va_list __gnuc_va_list;
#define va_start(ap, param) __builtin_va_start(ap, param)
#define va_end(ap) __builtin_va_end(ap)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_copy(dest, src) __builtin_va_copy(dest, src)
#define __va_copy(dest, src) __builtin_va_copy(dest, src)
#endif
