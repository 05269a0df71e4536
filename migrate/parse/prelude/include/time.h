/* time.h -- cuda2tile parse stub.  clock() is __host__ __device__ as in CUDA. */
#ifndef __CUDA2TILE_TIME_H
#define __CUDA2TILE_TIME_H
#pragma clang system_header
#include <stddef.h>
#include <sys/types.h>
typedef int clockid_t;
struct tm {
  int tm_sec, tm_min, tm_hour, tm_mday, tm_mon, tm_year, tm_wday, tm_yday, tm_isdst;
  long tm_gmtoff;
  const char *tm_zone;
};
struct timespec { time_t tv_sec; long tv_nsec; };
#define CLOCKS_PER_SEC ((clock_t)1000000)
#define CLOCK_REALTIME 0
#define CLOCK_MONOTONIC 1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_MONOTONIC_RAW 4
#define TIME_UTC 1
extern "C" {
__host__ __device__ clock_t clock(void);
time_t time(time_t *tloc);
double difftime(time_t time1, time_t time0);
time_t mktime(struct tm *tm);
struct tm *localtime(const time_t *timep);
struct tm *gmtime(const time_t *timep);
struct tm *localtime_r(const time_t *timep, struct tm *result);
char *asctime(const struct tm *tm);
char *ctime(const time_t *timep);
size_t strftime(char *__restrict__ s, size_t max, const char *__restrict__ format, const struct tm *__restrict__ tm);
int clock_gettime(clockid_t clockid, struct timespec *tp);
int clock_getres(clockid_t clockid, struct timespec *res);
int nanosleep(const struct timespec *req, struct timespec *rem);
int timespec_get(struct timespec *ts, int base);
}
#endif
