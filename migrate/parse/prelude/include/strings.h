/* strings.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_STRINGS_H
#define __CUDA2TILE_STRINGS_H
#pragma clang system_header
#include <string.h>
extern "C" {
void bzero(void *s, size_t n);
void bcopy(const void *src, void *dest, size_t n);
int bcmp(const void *s1, const void *s2, size_t n);
int ffs(int i);
char *index(const char *s, int c);
char *rindex(const char *s, int c);
}
#endif
