/* cub/util_type.cuh -- CUB's reduction operators and type traits (cuda2tile parse stub). */
#ifndef __CUDA2TILE_CUB_UTIL_TYPE_CUH
#define __CUDA2TILE_CUB_UTIL_TYPE_CUH
#pragma clang system_header
#include <cuda_runtime.h>

namespace cub {
struct Sum {
  template <typename T, typename U> __host__ __device__ auto operator()(const T &a, const U &b) const -> decltype(a + b) {
    return a + b;
  }
};
struct Difference {
  template <typename T, typename U> __host__ __device__ auto operator()(const T &a, const U &b) const -> decltype(a - b) {
    return a - b;
  }
};
struct Max {
  template <typename T, typename U> __host__ __device__ auto operator()(const T &a, const U &b) const -> decltype(a + b) {
    return a < b ? b : a;
  }
};
struct Min {
  template <typename T, typename U> __host__ __device__ auto operator()(const T &a, const U &b) const -> decltype(a + b) {
    return b < a ? b : a;
  }
};
}  // namespace cub
#endif
