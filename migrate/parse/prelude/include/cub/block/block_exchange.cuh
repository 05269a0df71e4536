/* cub/block/block_exchange.cuh -- CUB's block-wide rearrangements (cuda2tile parse stub).  The methods
 * are declared only: the analysis lowers `BlockExchange(temp_storage).BlockedToStriped(in, out)` and its
 * kin to the exchange through a __shared__ array they make (analysis/prepare/cub_moves.py). */
#ifndef __CUDA2TILE_CUB_BLOCK_EXCHANGE_CUH
#define __CUDA2TILE_CUB_BLOCK_EXCHANGE_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
template <typename InputT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, bool WARP_TIME_SLICING = false,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockExchange {
 public:
  struct TempStorage {
    InputT __c2t_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z * ITEMS_PER_THREAD];
  };
  __device__ BlockExchange();
  __device__ BlockExchange(TempStorage &temp_storage);
  template <typename OutputT>
  __device__ void StripedToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD],
                                   OutputT (&output_items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputT>
  __device__ void BlockedToStriped(const InputT (&input_items)[ITEMS_PER_THREAD],
                                   OutputT (&output_items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputT>
  __device__ void WarpStripedToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD],
                                       OutputT (&output_items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputT>
  __device__ void BlockedToWarpStriped(const InputT (&input_items)[ITEMS_PER_THREAD],
                                       OutputT (&output_items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputT, typename OffsetT>
  __device__ void ScatterToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD], OutputT (&output_items)[ITEMS_PER_THREAD],
                                   OffsetT (&ranks)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputT, typename OffsetT>
  __device__ void ScatterToStriped(const InputT (&input_items)[ITEMS_PER_THREAD], OutputT (&output_items)[ITEMS_PER_THREAD],
                                   OffsetT (&ranks)[ITEMS_PER_THREAD]) __C2T_BODY
};
}  // namespace cub
#endif
