/* sys/stat.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_SYS_STAT_H
#define __CUDA2TILE_SYS_STAT_H
#pragma clang system_header
#include <sys/types.h>
#include <time.h>
struct stat {
  unsigned long st_dev, st_ino, st_nlink;
  mode_t st_mode;
  uid_t st_uid;
  gid_t st_gid;
  unsigned long st_rdev;
  off_t st_size;
  long st_blksize, st_blocks;
  struct timespec st_atim, st_mtim, st_ctim;
};
#define S_IRWXU 0700
#define S_IRUSR 0400
#define S_IWUSR 0200
#define S_IXUSR 0100
#define S_IFMT 0170000
#define S_IFDIR 0040000
#define S_IFREG 0100000
#define S_ISDIR(m) (((m) & S_IFMT) == S_IFDIR)
#define S_ISREG(m) (((m) & S_IFMT) == S_IFREG)
extern "C" {
int stat(const char *__restrict__ path, struct stat *__restrict__ buf);
int fstat(int fd, struct stat *buf);
int lstat(const char *__restrict__ path, struct stat *__restrict__ buf);
int mkdir(const char *path, mode_t mode);
int chmod(const char *path, mode_t mode);
mode_t umask(mode_t mask);
}
#endif
