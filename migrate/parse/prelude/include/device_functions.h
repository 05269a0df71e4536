/* device_functions.h -- CUDA device intrinsics (cuda2tile parse stub): barriers, warp vote /
 * shuffle / match / reduce, atomics, integer and floating-point intrinsics, conversions,
 * cache-hinted loads and stores, timing, address-space queries, sm_90 cluster helpers.
 * The sm_*_intrinsics.h / *_atomic_functions.h headers include this one. */
#ifndef __CUDA2TILE_DEVICE_FUNCTIONS_H
#define __CUDA2TILE_DEVICE_FUNCTIONS_H
/* the include-guard name code tests to see whether this header was included */
#define __DEVICE_FUNCTIONS_H__
#pragma clang system_header
#include <stddef.h>
#include <vector_types.h>
#include <driver_types.h>

/* ---- Barriers and memory fences ------------------------------------------------------------ */
extern "C" {
__device__ void __syncthreads(void);
__device__ int __syncthreads_count(int predicate);
__device__ int __syncthreads_and(int predicate);
__device__ int __syncthreads_or(int predicate);
__device__ void __syncwarp(unsigned int mask = 0xffffffffu);
__device__ void __threadfence_block(void);
__device__ void __threadfence(void);
__device__ void __threadfence_system(void);
__device__ void __barrier_sync(unsigned int id);
__device__ void __barrier_sync_count(unsigned int id, unsigned int count);
}

/* ---- Warp vote, shuffle, match, reduce ----------------------------------------------------- */
extern "C" {
__device__ int __all_sync(unsigned int mask, int predicate);
__device__ int __any_sync(unsigned int mask, int predicate);
__device__ int __uni_sync(unsigned int mask, int predicate);
__device__ unsigned int __ballot_sync(unsigned int mask, int predicate);
__device__ unsigned int __activemask(void);
}
#define __C2T_SHFL(T)                                                                          \
  __device__ T __shfl_sync(unsigned int mask, T var, int srcLane, int width = warpSize);       \
  __device__ T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize); \
  __device__ T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = warpSize); \
  __device__ T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = warpSize);  \
  __device__ unsigned int __match_any_sync(unsigned int mask, T value);                        \
  __device__ unsigned int __match_all_sync(unsigned int mask, T value, int *pred);
/* the warp shuffles and votes before CUDA 9 (no mask: the whole warp; nvcc still takes them
   below sm_70); the frontend reads each as its _sync form with the full mask */
#define __C2T_SHFL_LEGACY(T)                                                                   \
  __device__ T __shfl(T var, int srcLane, int width = warpSize);                               \
  __device__ T __shfl_up(T var, unsigned int delta, int width = warpSize);                     \
  __device__ T __shfl_down(T var, unsigned int delta, int width = warpSize);                   \
  __device__ T __shfl_xor(T var, int laneMask, int width = warpSize);
#define __C2T_SHFLS(T) __C2T_SHFL(T) __C2T_SHFL_LEGACY(T)
__C2T_SHFLS(int)
__C2T_SHFLS(unsigned int)
__C2T_SHFLS(long)
__C2T_SHFLS(unsigned long)
__C2T_SHFLS(long long)
__C2T_SHFLS(unsigned long long)
__C2T_SHFLS(float)
__C2T_SHFLS(double)
extern "C" {
__device__ int __any(int predicate);
__device__ int __all(int predicate);
__device__ unsigned int __ballot(int predicate);
}
__device__ unsigned int __reduce_add_sync(unsigned int mask, unsigned int value);
__device__ int __reduce_add_sync(unsigned int mask, int value);
__device__ unsigned int __reduce_min_sync(unsigned int mask, unsigned int value);
__device__ int __reduce_min_sync(unsigned int mask, int value);
__device__ unsigned int __reduce_max_sync(unsigned int mask, unsigned int value);
__device__ int __reduce_max_sync(unsigned int mask, int value);
__device__ unsigned int __reduce_and_sync(unsigned int mask, unsigned int value);
__device__ unsigned int __reduce_or_sync(unsigned int mask, unsigned int value);
__device__ unsigned int __reduce_xor_sync(unsigned int mask, unsigned int value);

/* ---- Atomics (plus the _block and _system scoped forms) ------------------------------------ */
#define __C2T_ATOMIC(op, T)                                                                    \
  __device__ T atomic##op(T *address, T val);                                                  \
  __device__ T atomic##op##_block(T *address, T val);                                          \
  __device__ T atomic##op##_system(T *address, T val);
__C2T_ATOMIC(Add, int)
__C2T_ATOMIC(Add, unsigned int)
__C2T_ATOMIC(Add, unsigned long long int)
__C2T_ATOMIC(Add, float)
__C2T_ATOMIC(Add, double)
__C2T_ATOMIC(Add, float2)
__C2T_ATOMIC(Add, float4)
__C2T_ATOMIC(Sub, int)
__C2T_ATOMIC(Sub, unsigned int)
__C2T_ATOMIC(Exch, int)
__C2T_ATOMIC(Exch, unsigned int)
__C2T_ATOMIC(Exch, unsigned long long int)
__C2T_ATOMIC(Exch, float)
__C2T_ATOMIC(Min, int)
__C2T_ATOMIC(Min, unsigned int)
__C2T_ATOMIC(Min, long long int)
__C2T_ATOMIC(Min, unsigned long long int)
__C2T_ATOMIC(Max, int)
__C2T_ATOMIC(Max, unsigned int)
__C2T_ATOMIC(Max, long long int)
__C2T_ATOMIC(Max, unsigned long long int)
__C2T_ATOMIC(Inc, unsigned int)
__C2T_ATOMIC(Dec, unsigned int)
__C2T_ATOMIC(And, int)
__C2T_ATOMIC(And, unsigned int)
__C2T_ATOMIC(And, unsigned long long int)
__C2T_ATOMIC(Or, int)
__C2T_ATOMIC(Or, unsigned int)
__C2T_ATOMIC(Or, unsigned long long int)
__C2T_ATOMIC(Xor, int)
__C2T_ATOMIC(Xor, unsigned int)
__C2T_ATOMIC(Xor, unsigned long long int)
#define __C2T_ATOMIC_CAS(T)                                                                    \
  __device__ T atomicCAS(T *address, T compare, T val);                                        \
  __device__ T atomicCAS_block(T *address, T compare, T val);                                  \
  __device__ T atomicCAS_system(T *address, T compare, T val);
__C2T_ATOMIC_CAS(int)
__C2T_ATOMIC_CAS(unsigned int)
__C2T_ATOMIC_CAS(unsigned long long int)
__C2T_ATOMIC_CAS(unsigned short int)

/* ---- Integer intrinsics -------------------------------------------------------------------- */
extern "C" {
__device__ int __popc(unsigned int x);
__device__ int __popcll(unsigned long long int x);
__device__ int __clz(int x);
__device__ int __clzll(long long int x);
__device__ int __ffs(int x);
__device__ int __ffsll(long long int x);
__device__ unsigned int __brev(unsigned int x);
__device__ unsigned long long int __brevll(unsigned long long int x);
__device__ unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s);
__device__ int __mul24(int x, int y);
__device__ unsigned int __umul24(unsigned int x, unsigned int y);
__device__ int __mulhi(int x, int y);
__device__ unsigned int __umulhi(unsigned int x, unsigned int y);
__device__ long long int __mul64hi(long long int x, long long int y);
__device__ unsigned long long int __umul64hi(unsigned long long int x, unsigned long long int y);
__device__ unsigned int __sad(int x, int y, unsigned int z);
__device__ unsigned int __usad(unsigned int x, unsigned int y, unsigned int z);
__device__ int __hadd(int x, int y);
__device__ int __rhadd(int x, int y);
__device__ unsigned int __uhadd(unsigned int x, unsigned int y);
__device__ unsigned int __urhadd(unsigned int x, unsigned int y);
__device__ unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift);
__device__ unsigned int __fns(unsigned int mask, unsigned int base, int offset);
}
__device__ int __dp4a(int srcA, int srcB, int c);
__device__ unsigned int __dp4a(unsigned int srcA, unsigned int srcB, unsigned int c);
__device__ int __dp4a(char4 srcA, char4 srcB, int c);
__device__ unsigned int __dp4a(uchar4 srcA, uchar4 srcB, unsigned int c);
__device__ int __dp2a_lo(int srcA, int srcB, int c);
__device__ unsigned int __dp2a_lo(unsigned int srcA, unsigned int srcB, unsigned int c);
__device__ int __dp2a_hi(int srcA, int srcB, int c);
__device__ unsigned int __dp2a_hi(unsigned int srcA, unsigned int srcB, unsigned int c);
/* SIMD-within-a-word (video) intrinsics */
#define __C2T_SIMD2(fn) extern "C" __device__ unsigned int fn(unsigned int a, unsigned int b);
#define __C2T_SIMD1(fn) extern "C" __device__ unsigned int fn(unsigned int a);
__C2T_SIMD2(__vadd2) __C2T_SIMD2(__vadd4) __C2T_SIMD2(__vaddss2) __C2T_SIMD2(__vaddss4)
__C2T_SIMD2(__vaddus2) __C2T_SIMD2(__vaddus4) __C2T_SIMD2(__vsub2) __C2T_SIMD2(__vsub4)
__C2T_SIMD2(__vsubss2) __C2T_SIMD2(__vsubss4) __C2T_SIMD2(__vsubus2) __C2T_SIMD2(__vsubus4)
__C2T_SIMD2(__vavgs2) __C2T_SIMD2(__vavgs4) __C2T_SIMD2(__vavgu2) __C2T_SIMD2(__vavgu4)
__C2T_SIMD2(__vhaddu2) __C2T_SIMD2(__vhaddu4) __C2T_SIMD2(__vmaxs2) __C2T_SIMD2(__vmaxs4)
__C2T_SIMD2(__vmaxu2) __C2T_SIMD2(__vmaxu4) __C2T_SIMD2(__vmins2) __C2T_SIMD2(__vmins4)
__C2T_SIMD2(__vminu2) __C2T_SIMD2(__vminu4) __C2T_SIMD2(__vsads2) __C2T_SIMD2(__vsads4)
__C2T_SIMD2(__vsadu2) __C2T_SIMD2(__vsadu4) __C2T_SIMD2(__vabsdiffs2) __C2T_SIMD2(__vabsdiffs4)
__C2T_SIMD2(__vabsdiffu2) __C2T_SIMD2(__vabsdiffu4) __C2T_SIMD2(__vcmpeq2) __C2T_SIMD2(__vcmpeq4)
__C2T_SIMD2(__vcmpne2) __C2T_SIMD2(__vcmpne4) __C2T_SIMD2(__vcmpges2) __C2T_SIMD2(__vcmpges4)
__C2T_SIMD2(__vcmpgeu2) __C2T_SIMD2(__vcmpgeu4) __C2T_SIMD2(__vcmpgts2) __C2T_SIMD2(__vcmpgts4)
__C2T_SIMD2(__vcmpgtu2) __C2T_SIMD2(__vcmpgtu4) __C2T_SIMD2(__vcmples2) __C2T_SIMD2(__vcmples4)
__C2T_SIMD2(__vcmpleu2) __C2T_SIMD2(__vcmpleu4) __C2T_SIMD2(__vcmplts2) __C2T_SIMD2(__vcmplts4)
__C2T_SIMD2(__vcmpltu2) __C2T_SIMD2(__vcmpltu4) __C2T_SIMD2(__vseteq2) __C2T_SIMD2(__vseteq4)
__C2T_SIMD2(__vsetne2) __C2T_SIMD2(__vsetne4) __C2T_SIMD2(__vsetges2) __C2T_SIMD2(__vsetges4)
__C2T_SIMD2(__vsetgeu2) __C2T_SIMD2(__vsetgeu4) __C2T_SIMD2(__vsetgts2) __C2T_SIMD2(__vsetgts4)
__C2T_SIMD2(__vsetgtu2) __C2T_SIMD2(__vsetgtu4) __C2T_SIMD2(__vsetles2) __C2T_SIMD2(__vsetles4)
__C2T_SIMD2(__vsetleu2) __C2T_SIMD2(__vsetleu4) __C2T_SIMD2(__vsetlts2) __C2T_SIMD2(__vsetlts4)
__C2T_SIMD2(__vsetltu2) __C2T_SIMD2(__vsetltu4)
__C2T_SIMD1(__vabs2) __C2T_SIMD1(__vabs4) __C2T_SIMD1(__vabsss2) __C2T_SIMD1(__vabsss4)
__C2T_SIMD1(__vneg2) __C2T_SIMD1(__vneg4) __C2T_SIMD1(__vnegss2) __C2T_SIMD1(__vnegss4)
/* sm_90 DPX */
extern "C" {
__device__ int __vimax_s32_relu(int a, int b);
__device__ int __vimin_s32_relu(int a, int b);
__device__ int __vimax3_s32(int a, int b, int c);
__device__ int __vimin3_s32(int a, int b, int c);
__device__ unsigned int __vimax3_u32(unsigned int a, unsigned int b, unsigned int c);
__device__ unsigned int __vimin3_u32(unsigned int a, unsigned int b, unsigned int c);
__device__ int __viaddmax_s32(int a, int b, int c);
__device__ int __viaddmin_s32(int a, int b, int c);
__device__ unsigned int __viaddmax_u32(unsigned int a, unsigned int b, unsigned int c);
__device__ unsigned int __viaddmin_u32(unsigned int a, unsigned int b, unsigned int c);
__device__ int __vibmax_s32(int a, int b, bool *pred);
__device__ int __vibmin_s32(int a, int b, bool *pred);
__device__ int __viaddmax_s32_relu(int a, int b, int c);
__device__ int __viaddmin_s32_relu(int a, int b, int c);
__device__ int __vimax3_s32_relu(int a, int b, int c);
__device__ int __vimin3_s32_relu(int a, int b, int c);
__device__ unsigned int __vibmax_u32(unsigned int a, unsigned int b, bool *pred);
__device__ unsigned int __vibmin_u32(unsigned int a, unsigned int b, bool *pred);
__device__ unsigned int __vimax_s16x2_relu(unsigned int a, unsigned int b);
__device__ unsigned int __vimin_s16x2_relu(unsigned int a, unsigned int b);
__device__ unsigned int __vibmax_s16x2(unsigned int a, unsigned int b, bool *pred_hi, bool *pred_lo);
__device__ unsigned int __vibmin_s16x2(unsigned int a, unsigned int b, bool *pred_hi, bool *pred_lo);
__device__ unsigned int __vibmax_u16x2(unsigned int a, unsigned int b, bool *pred_hi, bool *pred_lo);
__device__ unsigned int __vibmin_u16x2(unsigned int a, unsigned int b, bool *pred_hi, bool *pred_lo);
}
/* the DPX functions on two 16-bit halves of a word: (a, b, c) -> word */
#define __C2T_DPX3(fn) extern "C" __device__ unsigned int fn(unsigned int a, unsigned int b, unsigned int c);
__C2T_DPX3(__viaddmax_s16x2) __C2T_DPX3(__viaddmax_s16x2_relu) __C2T_DPX3(__viaddmax_u16x2)
__C2T_DPX3(__viaddmin_s16x2) __C2T_DPX3(__viaddmin_s16x2_relu) __C2T_DPX3(__viaddmin_u16x2)
__C2T_DPX3(__vimax3_s16x2) __C2T_DPX3(__vimax3_s16x2_relu) __C2T_DPX3(__vimax3_u16x2)
__C2T_DPX3(__vimin3_s16x2) __C2T_DPX3(__vimin3_s16x2_relu) __C2T_DPX3(__vimin3_u16x2)

/* ---- Floating-point intrinsics: fast approximations, explicit rounding modes --------------- */
#define __C2T_ROUND1(R, fn, A)                                                                 \
  extern "C" __device__ R fn##_rn(A x);                                                        \
  extern "C" __device__ R fn##_rz(A x);                                                        \
  extern "C" __device__ R fn##_ru(A x);                                                        \
  extern "C" __device__ R fn##_rd(A x);
#define __C2T_ROUND2(T, fn)                                                                    \
  extern "C" __device__ T fn##_rn(T x, T y);                                                   \
  extern "C" __device__ T fn##_rz(T x, T y);                                                   \
  extern "C" __device__ T fn##_ru(T x, T y);                                                   \
  extern "C" __device__ T fn##_rd(T x, T y);
#define __C2T_ROUND3(T, fn)                                                                    \
  extern "C" __device__ T fn##_rn(T x, T y, T z);                                              \
  extern "C" __device__ T fn##_rz(T x, T y, T z);                                              \
  extern "C" __device__ T fn##_ru(T x, T y, T z);                                              \
  extern "C" __device__ T fn##_rd(T x, T y, T z);
extern "C" {
__device__ float __fdividef(float x, float y);
__device__ float __expf(float x);
__device__ float __exp10f(float x);
__device__ float __logf(float x);
__device__ float __log2f(float x);
__device__ float __log10f(float x);
__device__ float __sinf(float x);
__device__ float __cosf(float x);
__device__ float __tanf(float x);
__device__ float __tanhf(float x);
__device__ void __sincosf(float x, float *sptr, float *cptr);
__device__ float __powf(float x, float y);
__device__ float __saturatef(float x);
__device__ float __frsqrt_rn(float x);
__device__ float __fmaf_ieee_rn(float x, float y, float z);
__device__ float __fmaf_ieee_rz(float x, float y, float z);
__device__ float __fmaf_ieee_ru(float x, float y, float z);
__device__ float __fmaf_ieee_rd(float x, float y, float z);
}
__C2T_ROUND2(float, __fadd)
__C2T_ROUND2(float, __fsub)
__C2T_ROUND2(float, __fmul)
__C2T_ROUND2(float, __fdiv)
__C2T_ROUND1(float, __frcp, float)
__C2T_ROUND1(float, __fsqrt, float)
__C2T_ROUND3(float, __fmaf)
__C2T_ROUND2(double, __dadd)
__C2T_ROUND2(double, __dsub)
__C2T_ROUND2(double, __dmul)
__C2T_ROUND2(double, __ddiv)
__C2T_ROUND1(double, __drcp, double)
__C2T_ROUND1(double, __dsqrt, double)
__C2T_ROUND3(double, __fma)

/* ---- Type conversions and bit reinterpretation --------------------------------------------- */
__C2T_ROUND1(int, __float2int, float)
__C2T_ROUND1(unsigned int, __float2uint, float)
__C2T_ROUND1(long long int, __float2ll, float)
__C2T_ROUND1(unsigned long long int, __float2ull, float)
__C2T_ROUND1(float, __int2float, int)
__C2T_ROUND1(float, __uint2float, unsigned int)
__C2T_ROUND1(float, __ll2float, long long int)
__C2T_ROUND1(float, __ull2float, unsigned long long int)
__C2T_ROUND1(float, __double2float, double)
__C2T_ROUND1(int, __double2int, double)
__C2T_ROUND1(unsigned int, __double2uint, double)
__C2T_ROUND1(long long int, __double2ll, double)
__C2T_ROUND1(unsigned long long int, __double2ull, double)
__C2T_ROUND1(double, __ll2double, long long int)
__C2T_ROUND1(double, __ull2double, unsigned long long int)
extern "C" {
__device__ double __int2double_rn(int x);
__device__ double __uint2double_rn(unsigned int x);
__device__ int __float_as_int(float x);
__device__ float __int_as_float(int x);
__device__ unsigned int __float_as_uint(float x);
__device__ float __uint_as_float(unsigned int x);
__device__ long long int __double_as_longlong(double x);
__device__ double __longlong_as_double(long long int x);
__device__ int __double2hiint(double x);
__device__ int __double2loint(double x);
__device__ double __hiloint2double(int hi, int lo);
}

/* ---- Cache-hinted loads and stores --------------------------------------------------------- */
#define __C2T_LDST(T)                                                                          \
  __device__ T __ldg(const T *ptr);                                                            \
  __device__ T __ldcg(const T *ptr);                                                           \
  __device__ T __ldca(const T *ptr);                                                           \
  __device__ T __ldcs(const T *ptr);                                                           \
  __device__ T __ldlu(const T *ptr);                                                           \
  __device__ T __ldcv(const T *ptr);                                                           \
  __device__ void __stwb(T *ptr, T value);                                                     \
  __device__ void __stcg(T *ptr, T value);                                                     \
  __device__ void __stcs(T *ptr, T value);                                                     \
  __device__ void __stwt(T *ptr, T value);
__C2T_LDST(char) __C2T_LDST(signed char) __C2T_LDST(short) __C2T_LDST(int) __C2T_LDST(long)
__C2T_LDST(long long) __C2T_LDST(unsigned char) __C2T_LDST(unsigned short) __C2T_LDST(unsigned int)
__C2T_LDST(unsigned long) __C2T_LDST(unsigned long long) __C2T_LDST(float) __C2T_LDST(double)
__C2T_LDST(char2) __C2T_LDST(char4) __C2T_LDST(short2) __C2T_LDST(short4) __C2T_LDST(int2)
__C2T_LDST(int4) __C2T_LDST(longlong2) __C2T_LDST(uchar2) __C2T_LDST(uchar4) __C2T_LDST(ushort2)
__C2T_LDST(ushort4) __C2T_LDST(uint2) __C2T_LDST(uint4) __C2T_LDST(ulonglong2) __C2T_LDST(float2)
__C2T_LDST(float4) __C2T_LDST(double2)

/* ---- Scoped atomics (CUDA 12.8): a relaxed load reads its element -------------------------- */
#define __NV_ATOMIC_RELAXED 0
#define __NV_ATOMIC_CONSUME 1
#define __NV_ATOMIC_ACQUIRE 2
#define __NV_ATOMIC_RELEASE 3
#define __NV_ATOMIC_ACQ_REL 4
#define __NV_ATOMIC_SEQ_CST 5
template <typename T> __device__ T __nv_atomic_load_n(const T *ptr, int order, int scope = 0);

/* ---- Timing, traps, address spaces --------------------------------------------------------- */
extern "C" {
__device__ long long int clock64(void);
__device__ void __nanosleep(unsigned int ns);
__device__ void __trap(void) __attribute__((noreturn));
__device__ void __brkpt(void);
__device__ void __prof_trigger(int counter);
__device__ unsigned int __isGlobal(const void *ptr);
__device__ unsigned int __isShared(const void *ptr);
__device__ unsigned int __isConstant(const void *ptr);
__device__ unsigned int __isLocal(const void *ptr);
__device__ unsigned int __isGridConstant(const void *ptr);
__device__ size_t __cvta_generic_to_global(const void *ptr);
__device__ size_t __cvta_generic_to_shared(const void *ptr);
__device__ size_t __cvta_generic_to_constant(const void *ptr);
__device__ size_t __cvta_generic_to_local(const void *ptr);
__device__ void *__cvta_global_to_generic(size_t rawbits);
__device__ void *__cvta_shared_to_generic(size_t rawbits);
__device__ void *__cvta_constant_to_generic(size_t rawbits);
__device__ void *__cvta_local_to_generic(size_t rawbits);
__device__ void *__nv_aligned_device_malloc(size_t size, size_t align);
}

/* ---- Conditional graph nodes ------------------------------------------------------------- */
extern "C" __device__ void cudaGraphSetConditional(cudaGraphConditionalHandle handle, unsigned int value);

/* ---- sm_90 thread-block clusters ----------------------------------------------------------- */
extern "C" {
__device__ unsigned int __clusterDimIsSpecified(void);
__device__ dim3 __clusterDim(void);
__device__ dim3 __clusterRelativeBlockIdx(void);
__device__ dim3 __clusterGridDimInClusters(void);
__device__ dim3 __clusterIdx(void);
__device__ unsigned int __clusterRelativeBlockRank(void);
__device__ unsigned int __clusterSizeInBlocks(void);
__device__ void __cluster_barrier_arrive(void);
__device__ void __cluster_barrier_arrive_relaxed(void);
__device__ void __cluster_barrier_wait(void);
__device__ void __threadfence_cluster(void);
__device__ void *__cluster_map_shared_rank(void *ptr, unsigned int target_block_rank);
__device__ unsigned int __cluster_query_shared_rank(const void *ptr);
__device__ uint2 __cluster_map_shared_multicast(const void *ptr, unsigned int cluster_cta_mask);
}
#endif
