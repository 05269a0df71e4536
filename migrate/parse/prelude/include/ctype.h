/* ctype.h -- cuda2tile parse stub. */
#ifndef __CUDA2TILE_CTYPE_H
#define __CUDA2TILE_CTYPE_H
#pragma clang system_header
extern "C" {
int isalnum(int c); int isalpha(int c); int isblank(int c); int iscntrl(int c);
int isdigit(int c); int isgraph(int c); int islower(int c); int isprint(int c);
int ispunct(int c); int isspace(int c); int isupper(int c); int isxdigit(int c);
int tolower(int c); int toupper(int c);
}
#endif
