/* sys/time.h -- cuda2tile parse stub (gettimeofday for host timing). */
#ifndef __CUDA2TILE_SYS_TIME_H
#define __CUDA2TILE_SYS_TIME_H
#pragma clang system_header
#include <time.h>
struct timeval { time_t tv_sec; long tv_usec; };
struct timezone { int tz_minuteswest; int tz_dsttime; };
extern "C" int gettimeofday(struct timeval *__restrict__ tv, void *__restrict__ tz);
#endif
