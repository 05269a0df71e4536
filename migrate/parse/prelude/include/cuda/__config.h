/* Common part of the libcu++ stubs (cuda2tile parse stub): cuda::thread_scope, aligned_size_t,
 * and cuda::std as an alias of the std stubs. */
#ifndef __CUDA2TILE_CUDA_CONFIG_H
#define __CUDA2TILE_CUDA_CONFIG_H
#pragma clang system_header
#include <cstddef>
#include <cstdint>
namespace std {}
namespace cuda {
namespace std {
using namespace ::std;
}
enum thread_scope { thread_scope_system = 0, thread_scope_device = 1, thread_scope_block = 2, thread_scope_thread = 3 };
template <::std::size_t Align> struct aligned_size_t {
  static constexpr ::std::size_t align = Align;
  ::std::size_t value;
  __host__ __device__ constexpr explicit aligned_size_t(::std::size_t s) : value(s) {}
  __host__ __device__ constexpr operator ::std::size_t() const { return value; }
};
}
#endif
