/* stdbool.h -- cuda2tile parse stub (C++: bool is a keyword). */
#ifndef __CUDA2TILE_STDBOOL_H
#define __CUDA2TILE_STDBOOL_H
#pragma clang system_header
#ifndef __cplusplus
#define bool _Bool
#define true 1
#define false 0
#endif
#define __bool_true_false_are_defined 1
#endif
