/* cub/block/block_load.cuh -- CUB's block-wide loads (cuda2tile parse stub).  The methods are declared
 * only: the analysis lowers `BlockLoad(temp_storage).Load(src, items[, valid[, default]])` to the loop
 * over a thread's items that its algorithm's arrangement reads (analysis/prepare/cub_moves.py). */
#ifndef __CUDA2TILE_CUB_BLOCK_LOAD_CUH
#define __CUDA2TILE_CUB_BLOCK_LOAD_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
enum BlockLoadAlgorithm {
  BLOCK_LOAD_DIRECT,
  BLOCK_LOAD_STRIPED,
  BLOCK_LOAD_VECTORIZE,
  BLOCK_LOAD_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE,
  BLOCK_LOAD_WARP_TRANSPOSE_TIMESLICED
};

template <typename InputT, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockLoadAlgorithm ALGORITHM = BLOCK_LOAD_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockLoad {
 public:
  struct TempStorage {
    InputT __c2t_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z * ITEMS_PER_THREAD];
  };
  __device__ BlockLoad();
  __device__ BlockLoad(TempStorage &temp_storage);
  template <typename InputIteratorT> __device__ void Load(InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename InputIteratorT>
  __device__ void Load(InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD], int valid_items) __C2T_BODY
  template <typename InputIteratorT, typename DefaultT>
  __device__ void Load(InputIteratorT block_itr, InputT (&items)[ITEMS_PER_THREAD], int valid_items,
                       DefaultT oob_default) __C2T_BODY
};
}  // namespace cub
#endif
