/* sys/types.h -- cuda2tile parse stub (POSIX types; <stdlib.h> includes it, as glibc's does). */
#ifndef __CUDA2TILE_SYS_TYPES_H
#define __CUDA2TILE_SYS_TYPES_H
#pragma clang system_header
#include <stddef.h>
#include <stdint.h>
typedef long ssize_t;
typedef long off_t;
typedef int pid_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef unsigned int mode_t;
typedef long time_t;
typedef long clock_t;
typedef unsigned char u_char;
typedef unsigned short u_short;
typedef unsigned int u_int;
typedef unsigned long u_long;
typedef __uint8_t u_int8_t;
typedef __uint16_t u_int16_t;
typedef __uint32_t u_int32_t;
typedef __uint64_t u_int64_t;
typedef unsigned int uint;
typedef unsigned long ulong;
typedef unsigned short ushort;
#endif
