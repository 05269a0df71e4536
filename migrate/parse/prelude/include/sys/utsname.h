/* sys/utsname.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_SYS_UTSNAME_H
#define __CUDA2TILE_SYS_UTSNAME_H
#pragma clang system_header
struct utsname { char sysname[65], nodename[65], release[65], version[65], machine[65], domainname[65]; };
extern "C" int uname(struct utsname *buf);
#endif
