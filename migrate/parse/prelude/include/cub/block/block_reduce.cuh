/* cub/block/block_reduce.cuh -- CUB's block-wide reduction (cuda2tile parse stub).  The methods are
 * declared only: the analysis lowers `BlockReduce(temp_storage).Sum(x)` and `.Reduce(x, op)` to a
 * shared-memory reduction tree (analysis/prepare/cub_blocks.py). */
#ifndef __CUDA2TILE_CUB_BLOCK_REDUCE_CUH
#define __CUDA2TILE_CUB_BLOCK_REDUCE_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
enum BlockReduceAlgorithm {
  BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
  BLOCK_REDUCE_RAKING,
  BLOCK_REDUCE_WARP_REDUCTIONS,
  BLOCK_REDUCE_WARP_REDUCTIONS_NONDETERMINISTIC
};

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
 public:
  struct TempStorage {
    T __c2t_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z];
  };
  __device__ BlockReduce();
  __device__ BlockReduce(TempStorage &temp_storage);
  __device__ T Sum(T input);
  __device__ T Sum(T input, int num_valid);
  template <int ITEMS_PER_THREAD> __device__ T Sum(T (&inputs)[ITEMS_PER_THREAD]) __C2T_BODY
  template <typename ReductionOp> __device__ T Reduce(T input, ReductionOp reduction_op) __C2T_BODY
  template <typename ReductionOp> __device__ T Reduce(T input, ReductionOp reduction_op, int num_valid) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename ReductionOp>
  __device__ T Reduce(T (&inputs)[ITEMS_PER_THREAD], ReductionOp reduction_op) __C2T_BODY
};
}  // namespace cub
#endif
