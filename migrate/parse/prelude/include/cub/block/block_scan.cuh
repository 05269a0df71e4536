/* cub/block/block_scan.cuh -- CUB's block-wide prefix scans (cuda2tile parse stub).  The methods are
 * declared only: the analysis lowers `BlockScan(temp_storage).ExclusiveSum(x, y[, aggregate])` and its
 * kin to a shared-memory scan (analysis/prepare/cub_scans.py). */
#ifndef __CUDA2TILE_CUB_BLOCK_SCAN_CUH
#define __CUDA2TILE_CUB_BLOCK_SCAN_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };

template <typename T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING, int BLOCK_DIM_Y = 1,
          int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan {
 public:
  struct TempStorage {
    T __c2t_slots[BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z];
  };
  __device__ BlockScan();
  __device__ BlockScan(TempStorage &temp_storage);
  __device__ void ExclusiveSum(T input, T &output);
  __device__ void ExclusiveSum(T input, T &output, T &block_aggregate);
  __device__ void InclusiveSum(T input, T &output);
  __device__ void InclusiveSum(T input, T &output, T &block_aggregate);
  template <int ITEMS_PER_THREAD> __device__ void ExclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD]) __C2T_BODY
  template <int ITEMS_PER_THREAD>
  __device__ void ExclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], T &block_aggregate) __C2T_BODY
  template <int ITEMS_PER_THREAD> __device__ void InclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD]) __C2T_BODY
  template <int ITEMS_PER_THREAD>
  __device__ void InclusiveSum(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], T &block_aggregate) __C2T_BODY
  template <typename ScanOp> __device__ void ExclusiveScan(T input, T &output, T initial_value, ScanOp scan_op) __C2T_BODY
  template <typename ScanOp>
  __device__ void ExclusiveScan(T input, T &output, T initial_value, ScanOp scan_op, T &block_aggregate) __C2T_BODY
  template <typename ScanOp> __device__ void InclusiveScan(T input, T &output, ScanOp scan_op) __C2T_BODY
  template <typename ScanOp> __device__ void InclusiveScan(T input, T &output, ScanOp scan_op, T &block_aggregate) __C2T_BODY
  /* a thread's items (blocked arrangement), as CUB overloads each scan */
  template <int ITEMS_PER_THREAD, typename ScanOp>
  __device__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], T initial_value,
                                ScanOp scan_op) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename ScanOp>
  __device__ void ExclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], T initial_value,
                                ScanOp scan_op, T &block_aggregate) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename ScanOp>
  __device__ void InclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], ScanOp scan_op) __C2T_BODY
  template <int ITEMS_PER_THREAD, typename ScanOp>
  __device__ void InclusiveScan(T (&input)[ITEMS_PER_THREAD], T (&output)[ITEMS_PER_THREAD], ScanOp scan_op,
                                T &block_aggregate) __C2T_BODY
};
}  // namespace cub
#endif
