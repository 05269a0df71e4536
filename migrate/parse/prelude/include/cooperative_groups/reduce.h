/* cooperative_groups/reduce.h -- cg::reduce and friends (cuda2tile parse stub). */
#ifndef __CUDA2TILE_CG_REDUCE_H
#define __CUDA2TILE_CG_REDUCE_H
#pragma clang system_header
#include <cooperative_groups.h>
#include <cooperative_groups/details_functional.h>
namespace cooperative_groups {
template <class Group, class T, class Op>
__device__ auto reduce(const Group &group, T &&val, Op &&op) -> decltype(op(val, val)) __C2T_BODY
template <class Group, class T, class U, class Op>
__device__ void reduce_store_async(const Group &group, T *dst, U &&val, Op &&op) __C2T_BODY
template <class Group, class T, class U, class Op>
__device__ void reduce_update_async(const Group &group, T &dst, U &&val, Op &&op) __C2T_BODY
}
#endif
