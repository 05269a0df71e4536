/* cub/warp/warp_scan.cuh -- CUB's warp-wide prefix scans (cuda2tile parse stub).  The methods are
 * declared only: the analysis lowers `WarpScan(temp_storage).ExclusiveSum(x, y[, aggregate])` and its
 * kin to a shared-memory scan per logical warp (analysis/prepare/cub_scans.py). */
#ifndef __CUDA2TILE_CUB_WARP_SCAN_CUH
#define __CUDA2TILE_CUB_WARP_SCAN_CUH
#pragma clang system_header
#include <cub/util_type.cuh>

namespace cub {
template <typename T, int LOGICAL_WARP_THREADS = 32, int LEGACY_PTX_ARCH = 0>
class WarpScan {
 public:
  struct TempStorage {
    T __c2t_slots[LOGICAL_WARP_THREADS];
  };
  __device__ WarpScan(TempStorage &temp_storage);
  __device__ void ExclusiveSum(T input, T &output);
  __device__ void ExclusiveSum(T input, T &output, T &warp_aggregate);
  __device__ void InclusiveSum(T input, T &output);
  __device__ void InclusiveSum(T input, T &output, T &warp_aggregate);
  template <typename ScanOp> __device__ void InclusiveScan(T input, T &output, ScanOp scan_op) __C2T_BODY
  template <typename ScanOp> __device__ void ExclusiveScan(T input, T &output, T initial_value, ScanOp scan_op) __C2T_BODY
};
}  // namespace cub
#endif
