/* dirent.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_DIRENT_H
#define __CUDA2TILE_DIRENT_H
#pragma clang system_header
#include <sys/types.h>
struct dirent { unsigned long d_ino; long d_off; unsigned short d_reclen; unsigned char d_type; char d_name[256]; };
typedef struct __dirstream DIR;
#define DT_UNKNOWN 0
#define DT_DIR 4
#define DT_REG 8
extern "C" {
DIR *opendir(const char *name);
struct dirent *readdir(DIR *dirp);
int closedir(DIR *dirp);
void rewinddir(DIR *dirp);
}
#endif
