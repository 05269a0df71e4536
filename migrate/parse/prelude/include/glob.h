/* glob.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_GLOB_H
#define __CUDA2TILE_GLOB_H
#pragma clang system_header
#include <stddef.h>
typedef struct { size_t gl_pathc; char **gl_pathv; size_t gl_offs; int gl_flags; } glob_t;
#define GLOB_ERR 1
#define GLOB_MARK 2
#define GLOB_NOSORT 4
#define GLOB_NOCHECK 16
#define GLOB_NOSPACE 1
#define GLOB_ABORTED 2
#define GLOB_NOMATCH 3
extern "C" {
int glob(const char *pattern, int flags, int (*errfunc)(const char *epath, int eerrno), glob_t *pglob);
void globfree(glob_t *pglob);
}
#endif
