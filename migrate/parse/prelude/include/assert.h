/* assert.h -- cuda2tile parse stub.  No include guard: NDEBUG is honoured at every inclusion.
 * __assert_fail is __host__ __device__, so assert() works in kernels as with nvcc. */
#pragma clang system_header
#include <stddef.h>
#undef assert
#ifndef __CUDA2TILE_ASSERT_FAIL_DECLARED
#define __CUDA2TILE_ASSERT_FAIL_DECLARED
extern "C" __host__ __device__ void __assert_fail(const char *__assertion, const char *__file,
                                                  unsigned int __line, const char *__function)
    __attribute__((__noreturn__));
extern "C" __device__ void __assertfail(const char *__assertion, const char *__file,
                                        unsigned int __line, const char *__function, size_t __charsize);
#endif
#ifdef NDEBUG
#define assert(expr) (static_cast<void>(0))
#else
#define assert(expr) \
  (static_cast<bool>(expr) ? static_cast<void>(0) : __assert_fail(#expr, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#endif
