/* stdio.h -- cuda2tile parse stub.  printf is __host__ __device__ (device printf). */
#ifndef __CUDA2TILE_STDIO_H
#define __CUDA2TILE_STDIO_H
#pragma clang system_header
#include <stddef.h>
#include <stdarg.h>
typedef struct _IO_FILE FILE;
typedef struct { long long __pos; } fpos_t;
#define EOF (-1)
#define BUFSIZ 8192
#define FILENAME_MAX 4096
#define FOPEN_MAX 16
#define L_tmpnam 20
#define TMP_MAX 238328
#define _IOFBF 0
#define _IOLBF 1
#define _IONBF 2
#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2
extern "C" {
extern FILE *stdin;
extern FILE *stdout;
extern FILE *stderr;
#define stdin stdin
#define stdout stdout
#define stderr stderr
/* formatted output; printf also in device code */
__host__ __device__ int printf(const char *__restrict__ format, ...) __attribute__((format(printf, 1, 2)));
int fprintf(FILE *__restrict__ stream, const char *__restrict__ format, ...) __attribute__((format(printf, 2, 3)));
int sprintf(char *__restrict__ s, const char *__restrict__ format, ...);
int snprintf(char *__restrict__ s, size_t n, const char *__restrict__ format, ...);
int vprintf(const char *__restrict__ format, va_list arg);
int vfprintf(FILE *__restrict__ stream, const char *__restrict__ format, va_list arg);
int vsprintf(char *__restrict__ s, const char *__restrict__ format, va_list arg);
int vsnprintf(char *__restrict__ s, size_t n, const char *__restrict__ format, va_list arg);
/* formatted input */
int scanf(const char *__restrict__ format, ...);
int fscanf(FILE *__restrict__ stream, const char *__restrict__ format, ...);
int sscanf(const char *__restrict__ s, const char *__restrict__ format, ...);
/* character I/O */
int fgetc(FILE *stream);
char *fgets(char *__restrict__ s, int n, FILE *__restrict__ stream);
int fputc(int c, FILE *stream);
int fputs(const char *__restrict__ s, FILE *__restrict__ stream);
int getc(FILE *stream);
int getchar(void);
int putc(int c, FILE *stream);
int putchar(int c);
int puts(const char *s);
int ungetc(int c, FILE *stream);
/* files */
FILE *fopen(const char *__restrict__ filename, const char *__restrict__ mode);
FILE *freopen(const char *__restrict__ filename, const char *__restrict__ mode, FILE *__restrict__ stream);
FILE *tmpfile(void);
FILE *popen(const char *command, const char *type);
int pclose(FILE *stream);
int fclose(FILE *stream);
int fflush(FILE *stream);
void setbuf(FILE *__restrict__ stream, char *__restrict__ buf);
int setvbuf(FILE *__restrict__ stream, char *__restrict__ buf, int mode, size_t size);
size_t fread(void *__restrict__ ptr, size_t size, size_t nmemb, FILE *__restrict__ stream);
size_t fwrite(const void *__restrict__ ptr, size_t size, size_t nmemb, FILE *__restrict__ stream);
int fgetpos(FILE *__restrict__ stream, fpos_t *__restrict__ pos);
int fsetpos(FILE *stream, const fpos_t *pos);
int fseek(FILE *stream, long offset, int whence);
long ftell(FILE *stream);
void rewind(FILE *stream);
void clearerr(FILE *stream);
int feof(FILE *stream);
int ferror(FILE *stream);
int fileno(FILE *stream);
void perror(const char *s);
int remove(const char *filename);
int rename(const char *oldname, const char *newname);
char *tmpnam(char *s);
}
#endif
