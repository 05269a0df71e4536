/* cub/cub.cuh -- CUB (cuda2tile parse stub): the block- and warp-wide collectives the analysis lowers. */
#ifndef __CUDA2TILE_CUB_CUH
#define __CUDA2TILE_CUB_CUH
#pragma clang system_header
#include <cub/util_type.cuh>
#include <cub/block/block_adjacent_difference.cuh>
#include <cub/block/block_exchange.cuh>
#include <cub/block/block_load.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/warp/warp_exchange.cuh>
#include <cub/warp/warp_scan.cuh>
#endif
