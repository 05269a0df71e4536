/* cub/block/block_store.cuh -- CUB's block-wide stores (cuda2tile parse stub).  The methods are
 * declared only: the analysis lowers `BlockStore(temp_storage).Store(dst, items[, valid])` to the loop
 * over a thread's items that its algorithm's arrangement writes (analysis/prepare/cub_moves.py). */
#ifndef __CUDA2TILE_CUB_BLOCK_STORE_CUH
#define __CUDA2TILE_CUB_BLOCK_STORE_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
enum BlockStoreAlgorithm {
  BLOCK_STORE_DIRECT,
  BLOCK_STORE_STRIPED,
  BLOCK_STORE_VECTORIZE,
  BLOCK_STORE_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE,
  BLOCK_STORE_WARP_TRANSPOSE_TIMESLICED
};

template <typename T, int BLOCK_DIM_X, int ITEMS_PER_THREAD, BlockStoreAlgorithm ALGORITHM = BLOCK_STORE_DIRECT,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockStore {
 public:
  struct TempStorage {
    T __c2t_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z * ITEMS_PER_THREAD];
  };
  __device__ BlockStore();
  __device__ BlockStore(TempStorage &temp_storage);
  template <typename OutputIteratorT> __device__ void Store(OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename OutputIteratorT>
  __device__ void Store(OutputIteratorT block_itr, T (&items)[ITEMS_PER_THREAD], int valid_items) __C2T_BODY
};
}  // namespace cub
#endif
