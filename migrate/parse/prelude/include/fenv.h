/* fenv.h -- cuda2tile parse stub (x86-64 values). */
#ifndef __CUDA2TILE_FENV_H
#define __CUDA2TILE_FENV_H
#pragma clang system_header
typedef struct { unsigned short __control, __status; unsigned int __mxcsr; char __reserved[24]; } fenv_t;
typedef unsigned short fexcept_t;
#define FE_INVALID 0x01
#define FE_DIVBYZERO 0x04
#define FE_OVERFLOW 0x08
#define FE_UNDERFLOW 0x10
#define FE_INEXACT 0x20
#define FE_ALL_EXCEPT 0x3d
#define FE_TONEAREST 0x000
#define FE_DOWNWARD 0x400
#define FE_UPWARD 0x800
#define FE_TOWARDZERO 0xc00
#define FE_DFL_ENV ((const fenv_t *)-1)
extern "C" {
int feclearexcept(int excepts);
int fetestexcept(int excepts);
int feraiseexcept(int excepts);
int fegetround(void);
int fesetround(int round);
int fegetenv(fenv_t *envp);
int fesetenv(const fenv_t *envp);
}
#endif
