/* fcntl.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_FCNTL_H
#define __CUDA2TILE_FCNTL_H
#pragma clang system_header
#include <sys/types.h>
#define O_RDONLY 00
#define O_WRONLY 01
#define O_RDWR 02
#define O_CREAT 0100
#define O_EXCL 0200
#define O_TRUNC 01000
#define O_APPEND 02000
extern "C" {
int open(const char *pathname, int flags, ...);
int fcntl(int fd, int cmd, ...);
}
#endif
