/* stdlib.h -- cuda2tile parse stub.  malloc/free/abs are __host__ __device__ as in CUDA. */
#ifndef __CUDA2TILE_STDLIB_H
#define __CUDA2TILE_STDLIB_H
#pragma clang system_header
#include <stddef.h>
#include <sys/types.h>
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
#define MB_CUR_MAX 1
extern "C" {
typedef struct { int quot, rem; } div_t;
typedef struct { long quot, rem; } ldiv_t;
typedef struct { long long quot, rem; } lldiv_t;
/* memory: device-side malloc/free exist in CUDA */
__host__ __device__ void *malloc(size_t size);
__host__ __device__ void free(void *ptr);
void *calloc(size_t nmemb, size_t size);
void *realloc(void *ptr, size_t size);
void *aligned_alloc(size_t alignment, size_t size);
int posix_memalign(void **memptr, size_t alignment, size_t size);
/* process */
void abort(void) __attribute__((__noreturn__));
void exit(int status) __attribute__((__noreturn__));
void _Exit(int status) __attribute__((__noreturn__));
void quick_exit(int status) __attribute__((__noreturn__));
int atexit(void (*func)(void));
char *getenv(const char *name);
int setenv(const char *name, const char *value, int overwrite);
int system(const char *command);
/* conversions */
int atoi(const char *nptr);
long atol(const char *nptr);
long long atoll(const char *nptr);
double atof(const char *nptr);
long strtol(const char *__restrict__ nptr, char **__restrict__ endptr, int base);
unsigned long strtoul(const char *__restrict__ nptr, char **__restrict__ endptr, int base);
long long strtoll(const char *__restrict__ nptr, char **__restrict__ endptr, int base);
unsigned long long strtoull(const char *__restrict__ nptr, char **__restrict__ endptr, int base);
float strtof(const char *__restrict__ nptr, char **__restrict__ endptr);
double strtod(const char *__restrict__ nptr, char **__restrict__ endptr);
long double strtold(const char *__restrict__ nptr, char **__restrict__ endptr);
/* random numbers */
int rand(void);
void srand(unsigned int seed);
long random(void);
void srandom(unsigned int seed);
double drand48(void);
void srand48(long seedval);
int rand_r(unsigned int *seed);
/* integer arithmetic */
__host__ __device__ int abs(int j);
__host__ __device__ long labs(long j);
__host__ __device__ long long llabs(long long j);
div_t div(int numer, int denom);
ldiv_t ldiv(long numer, long denom);
lldiv_t lldiv(long long numer, long long denom);
/* searching and sorting */
void qsort(void *base, size_t nmemb, size_t size, int (*compar)(const void *, const void *));
void *bsearch(const void *key, const void *base, size_t nmemb, size_t size,
              int (*compar)(const void *, const void *));
}
/* C++ overloads of abs (<cstdlib>) */
__host__ __device__ long abs(long j);
__host__ __device__ long long abs(long long j);
#endif
