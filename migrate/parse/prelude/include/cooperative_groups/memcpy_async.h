/* cooperative_groups/memcpy_async.h -- group-wide asynchronous copies (cuda2tile parse stub). */
#ifndef __CUDA2TILE_CG_MEMCPY_ASYNC_H
#define __CUDA2TILE_CG_MEMCPY_ASYNC_H
#pragma clang system_header
#include <stddef.h>
#include <cooperative_groups.h>
namespace cooperative_groups {
template <class Group> __device__ void memcpy_async(const Group &group, void *dst, const void *src, size_t count) __C2T_BODY
template <class Group, class T>
__device__ void memcpy_async(const Group &group, T *dst, size_t dst_count, const T *src, size_t src_count) __C2T_BODY
template <class Group> __device__ void wait(const Group &group) __C2T_BODY
template <unsigned int NumStages, class Group> __device__ void wait_prior(const Group &group) __C2T_BODY
}
#endif
