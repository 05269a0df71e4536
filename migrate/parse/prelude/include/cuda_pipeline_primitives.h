/* cuda_pipeline_primitives.h -- asynchronous global->shared copies (sm_80+) (cuda2tile stub). */
#ifndef __CUDA2TILE_CUDA_PIPELINE_PRIMITIVES_H
#define __CUDA2TILE_CUDA_PIPELINE_PRIMITIVES_H
#pragma clang system_header
#include <stddef.h>
typedef unsigned long long __mbarrier_t;
typedef unsigned long long __mbarrier_token_t;
__device__ void __pipeline_memcpy_async(void *__restrict__ dst_shared, const void *__restrict__ src_global,
                                        size_t size_and_align, size_t zfill = 0);
__device__ void __pipeline_commit(void);
__device__ void __pipeline_wait_prior(size_t prior);
__device__ void __pipeline_arrive_on(__mbarrier_t *bar);
__device__ void __mbarrier_init(__mbarrier_t *bar, unsigned int expected_count);
__device__ void __mbarrier_inval(__mbarrier_t *bar);
__device__ __mbarrier_token_t __mbarrier_arrive(__mbarrier_t *bar);
__device__ __mbarrier_token_t __mbarrier_arrive_and_drop(__mbarrier_t *bar);
__device__ bool __mbarrier_test_wait(__mbarrier_t *bar, __mbarrier_token_t token);
__device__ unsigned int __mbarrier_pending_count(__mbarrier_token_t token);
#endif
