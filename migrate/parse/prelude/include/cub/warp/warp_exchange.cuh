/* cub/warp/warp_exchange.cuh -- CUB's warp-wide rearrangements (cuda2tile parse stub).  The methods are
 * declared only: the analysis lowers `WarpExchange(temp_storage).BlockedToStriped(in, out)` and
 * `.StripedToBlocked` to the exchange through a __shared__ array they make
 * (analysis/prepare/cub_moves.py). */
#ifndef __CUDA2TILE_CUB_WARP_EXCHANGE_CUH
#define __CUDA2TILE_CUB_WARP_EXCHANGE_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
enum WarpExchangeAlgorithm { WARP_EXCHANGE_SMEM, WARP_EXCHANGE_SHUFFLE };

template <typename InputT, int ITEMS_PER_THREAD, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0,
          WarpExchangeAlgorithm WARP_EXCHANGE_ALGORITHM = WARP_EXCHANGE_SMEM>
class WarpExchange {
 public:
  struct TempStorage {
    InputT __c2t_slots[LOGICAL_WARP_THREADS * ITEMS_PER_THREAD];
  };
  __device__ WarpExchange(TempStorage &temp_storage);
  template <typename OutputT>
  __device__ void StripedToBlocked(const InputT (&input_items)[ITEMS_PER_THREAD],
                                   OutputT (&output_items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputT>
  __device__ void BlockedToStriped(const InputT (&input_items)[ITEMS_PER_THREAD],
                                   OutputT (&output_items)[ITEMS_PER_THREAD]) __C2T_BODY
};
}  // namespace cub
#endif
