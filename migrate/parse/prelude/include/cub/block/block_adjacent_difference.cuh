/* cub/block/block_adjacent_difference.cuh -- CUB's block-wide differences of neighbouring items
 * (cuda2tile parse stub).  The methods are declared only: the analysis lowers
 * `BlockAdjacentDifference(temp_storage).SubtractLeft(in, out, op)` and its kin to the exchange of
 * each thread's edge item through a __shared__ array (analysis/prepare/cub_adjacent.py). */
#ifndef __CUDA2TILE_CUB_BLOCK_ADJACENT_DIFFERENCE_CUH
#define __CUDA2TILE_CUB_BLOCK_ADJACENT_DIFFERENCE_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
template <typename T, int BLOCK_DIM_X, int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockAdjacentDifference {
 public:
  struct TempStorage {
    T __c2t_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z];
  };
  __device__ BlockAdjacentDifference();
  __device__ BlockAdjacentDifference(TempStorage &temp_storage);
  template <int ITEMS_PER_THREAD, typename OutputType, typename DifferenceOpT>
  __device__ void SubtractLeft(T (&input)[ITEMS_PER_THREAD], OutputType (&output)[ITEMS_PER_THREAD],
                               DifferenceOpT difference_op) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename OutputType, typename DifferenceOpT>
  __device__ void SubtractLeft(T (&input)[ITEMS_PER_THREAD], OutputType (&output)[ITEMS_PER_THREAD],
                               DifferenceOpT difference_op, T tile_predecessor_item) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename OutputType, typename DifferenceOpT>
  __device__ void SubtractRight(T (&input)[ITEMS_PER_THREAD], OutputType (&output)[ITEMS_PER_THREAD],
                                DifferenceOpT difference_op) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename OutputType, typename DifferenceOpT>
  __device__ void SubtractRight(T (&input)[ITEMS_PER_THREAD], OutputType (&output)[ITEMS_PER_THREAD],
                                DifferenceOpT difference_op, T tile_successor_item) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename OutputType, typename DifferenceOpT>
  __device__ void SubtractLeftPartialTile(T (&input)[ITEMS_PER_THREAD], OutputType (&output)[ITEMS_PER_THREAD],
                                          DifferenceOpT difference_op, int valid_items) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename OutputType, typename DifferenceOpT>
  __device__ void SubtractRightPartialTile(T (&input)[ITEMS_PER_THREAD], OutputType (&output)[ITEMS_PER_THREAD],
                                           DifferenceOpT difference_op, int valid_items) __C2T_BODY
};
}  // namespace cub
#endif
