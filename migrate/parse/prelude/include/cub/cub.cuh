/* cub/cub.cuh -- CUB (cuda2tile parse stub): the block-wide collectives the analysis lowers. */
#ifndef __CUDA2TILE_CUB_CUH
#define __CUDA2TILE_CUB_CUH
#pragma clang system_header
#include <cub/util_type.cuh>
#include <cub/block/block_reduce.cuh>
#endif
