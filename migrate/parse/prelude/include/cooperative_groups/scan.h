/* cooperative_groups/scan.h -- cg::inclusive_scan / exclusive_scan (cuda2tile parse stub). */
#ifndef __CUDA2TILE_CG_SCAN_H
#define __CUDA2TILE_CG_SCAN_H
#pragma clang system_header
#include <cooperative_groups.h>
#include <cooperative_groups/details_functional.h>
namespace cooperative_groups {
template <class Group, class T, class Op>
__device__ auto inclusive_scan(const Group &group, T &&val, Op &&op) -> decltype(op(val, val)) __C2T_BODY
template <class Group, class T>
__device__ typename details::remove_qual<T>::type inclusive_scan(const Group &group, T &&val) __C2T_BODY
template <class Group, class T, class Op>
__device__ auto exclusive_scan(const Group &group, T &&val, Op &&op) -> decltype(op(val, val)) __C2T_BODY
template <class Group, class T>
__device__ typename details::remove_qual<T>::type exclusive_scan(const Group &group, T &&val) __C2T_BODY
}
#endif
