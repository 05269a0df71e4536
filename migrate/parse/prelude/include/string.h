/* string.h -- cuda2tile parse stub.  memcpy/memset are __host__ __device__ as in CUDA. */
#ifndef __CUDA2TILE_STRING_H
#define __CUDA2TILE_STRING_H
#pragma clang system_header
#include <stddef.h>
extern "C" {
__host__ __device__ void *memcpy(void *__restrict__ dest, const void *__restrict__ src, size_t n);
__host__ __device__ void *memset(void *s, int c, size_t n);
void *memmove(void *dest, const void *src, size_t n);
int memcmp(const void *s1, const void *s2, size_t n);
void *memchr(const void *s, int c, size_t n);
char *strcpy(char *__restrict__ dest, const char *__restrict__ src);
char *strncpy(char *__restrict__ dest, const char *__restrict__ src, size_t n);
char *strcat(char *__restrict__ dest, const char *__restrict__ src);
char *strncat(char *__restrict__ dest, const char *__restrict__ src, size_t n);
int strcmp(const char *s1, const char *s2);
int strncmp(const char *s1, const char *s2, size_t n);
int strcasecmp(const char *s1, const char *s2);
int strncasecmp(const char *s1, const char *s2, size_t n);
int strcoll(const char *s1, const char *s2);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t maxlen);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
char *strstr(const char *haystack, const char *needle);
char *strpbrk(const char *s, const char *accept);
size_t strspn(const char *s, const char *accept);
size_t strcspn(const char *s, const char *reject);
char *strtok(char *__restrict__ s, const char *__restrict__ delim);
char *strtok_r(char *__restrict__ s, const char *__restrict__ delim, char **__restrict__ saveptr);
char *strerror(int errnum);
char *strdup(const char *s);
char *strndup(const char *s, size_t n);
}
#endif
