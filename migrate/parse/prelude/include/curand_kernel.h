/* curand_kernel.h -- cuRAND device API (cuda2tile parse stub): generator states, curand_init and
 * the per-state generation functions. */
#ifndef __CUDA2TILE_CURAND_KERNEL_H
#define __CUDA2TILE_CURAND_KERNEL_H
/* the include-guard name code tests to see whether this header was included */
#define CURAND_KERNEL_H_
#pragma clang system_header
#include <vector_types.h>
#include <curand.h>
struct curandStateXORWOW { unsigned int d, v[5]; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
struct curandStatePhilox4_32_10 { uint4 ctr; uint4 output; uint2 key; unsigned int STATE; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
struct curandStateMRG32k3a { unsigned int s1[3], s2[3]; int boxmuller_flag, boxmuller_flag_double; float boxmuller_extra; double boxmuller_extra_double; };
struct curandStateSobol32 { unsigned int i, x, c; unsigned int direction_vectors[32]; };
struct curandStateSobol64 { unsigned long long i, x, c; unsigned long long direction_vectors[64]; };
struct curandStateScrambledSobol32 { unsigned int i, x, c; unsigned int direction_vectors[32]; };
typedef struct curandStateSobol64 curandStateSobol64_t;
typedef struct curandStateScrambledSobol32 curandStateScrambledSobol32_t;
typedef struct curandStateXORWOW curandStateXORWOW_t;
typedef struct curandStatePhilox4_32_10 curandStatePhilox4_32_10_t;
typedef struct curandStateMRG32k3a curandStateMRG32k3a_t;
typedef struct curandStateSobol32 curandStateSobol32_t;
typedef curandStateXORWOW_t curandState_t;
typedef curandState_t curandState;
#define __C2T_CURAND(S)                                                                        \
  __device__ void curand_init(unsigned long long seed, unsigned long long subsequence,         \
                              unsigned long long offset, S *state);                            \
  __device__ unsigned int curand(S *state);                                                    \
  __device__ float curand_uniform(S *state);                                                   \
  __device__ double curand_uniform_double(S *state);                                           \
  __device__ float curand_normal(S *state);                                                    \
  __device__ double curand_normal_double(S *state);                                            \
  __device__ float2 curand_normal2(S *state);                                                  \
  __device__ double2 curand_normal2_double(S *state);                                          \
  __device__ float curand_log_normal(S *state, float mean, float stddev);                      \
  __device__ double curand_log_normal_double(S *state, double mean, double stddev);            \
  __device__ unsigned int curand_poisson(S *state, double lambda);                             \
  __device__ void skipahead(unsigned long long n, S *state);                                   \
  __device__ void skipahead_sequence(unsigned long long n, S *state);
__C2T_CURAND(curandStateXORWOW_t)
__C2T_CURAND(curandStatePhilox4_32_10_t)
__C2T_CURAND(curandStateMRG32k3a_t)
#undef __C2T_CURAND
__device__ void curand_init(curandDirectionVectors32_t direction_vectors, unsigned int offset, curandStateSobol32_t *state);
__device__ void curand_init(curandDirectionVectors64_t direction_vectors, unsigned long long offset, curandStateSobol64_t *state);
__device__ unsigned int curand(curandStateSobol32_t *state);
__device__ unsigned long long curand(curandStateSobol64_t *state);
__device__ float curand_uniform(curandStateSobol32_t *state);
__device__ double curand_uniform_double(curandStateSobol64_t *state);
__device__ float curand_normal(curandStateSobol32_t *state);
__device__ double curand_normal_double(curandStateSobol64_t *state);
__device__ uint4 curand4(curandStatePhilox4_32_10_t *state);
__device__ float4 curand_uniform4(curandStatePhilox4_32_10_t *state);
__device__ float4 curand_normal4(curandStatePhilox4_32_10_t *state);
__device__ double2 curand_uniform2_double(curandStatePhilox4_32_10_t *state);
#endif
