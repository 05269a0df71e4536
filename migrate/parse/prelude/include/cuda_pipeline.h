/* cuda_pipeline.h -- pipeline primitives plus nvcuda::experimental::pipeline (cuda2tile stub). */
#ifndef __CUDA2TILE_CUDA_PIPELINE_H
#define __CUDA2TILE_CUDA_PIPELINE_H
#pragma clang system_header
#include <cuda_pipeline_primitives.h>
namespace nvcuda {
namespace experimental {
class pipeline {
 public:
  __device__ pipeline();
  __device__ unsigned int commit();
  __device__ void commit_and_wait();
  __device__ void wait(unsigned int batch);
  template <unsigned int N> __device__ void wait_prior();
};
template <class T> __device__ void memcpy_async(T &dst_shared, const T &src_global, pipeline &pipe) __C2T_BODY
template <class T, unsigned int DstN, unsigned int SrcN>
__device__ void memcpy_async(T *dst_shared, const T *src_global, pipeline &pipe) __C2T_BODY
}
}
#endif
