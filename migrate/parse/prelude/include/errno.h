/* errno.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_ERRNO_H
#define __CUDA2TILE_ERRNO_H
#pragma clang system_header
extern "C" int *__errno_location(void);
#define errno (*__errno_location())
#define EPERM 1
#define ENOENT 2
#define EINTR 4
#define EIO 5
#define EBADF 9
#define EAGAIN 11
#define ENOMEM 12
#define EACCES 13
#define EBUSY 16
#define EEXIST 17
#define EINVAL 22
#define ENOSPC 28
#define EDOM 33
#define ERANGE 34
#define ETIMEDOUT 110
#endif
