/* unistd.h -- cuda2tile parse stub (the few POSIX calls test programs use). */
#ifndef __CUDA2TILE_UNISTD_H
#define __CUDA2TILE_UNISTD_H
#pragma clang system_header
#include <stddef.h>
#include <sys/types.h>
#define F_OK 0
#define X_OK 1
#define W_OK 2
#define R_OK 4
#define _SC_NPROCESSORS_ONLN 84
#define _SC_PAGESIZE 30
extern "C" {
unsigned int sleep(unsigned int seconds);
int usleep(unsigned int usec);
pid_t getpid(void);
pid_t getppid(void);
long sysconf(int name);
int access(const char *pathname, int mode);
char *getcwd(char *buf, size_t size);
int close(int fd);
ssize_t read(int fd, void *buf, size_t count);
ssize_t write(int fd, const void *buf, size_t count);
int gethostname(char *name, size_t len);
int getopt(int argc, char *const argv[], const char *optstring);
extern char *optarg;
extern int optind, opterr, optopt;
}
#endif
