/* cuda2tile_prelude.h -- force-included (-include) before every CUDA source the frontend parses.
 *
 * It stands in for what nvcc gives every translation unit implicitly: the CUDA keywords
 * (__global__, __device__, ...), the version macros, the builtin variables (threadIdx, ...),
 * the kernel-launch configuration call behind `<<<grid, block, shmem, stream>>>`, and an
 * implicit `#include <cuda_runtime.h>`.  The stub headers under include/ (passed with -isystem)
 * assume this file was included first.
 *
 * Parse-only: declarations, written from the documented CUDA API; nothing here is ever compiled.
 * Parse flags: -x cuda --cuda-device-only --cuda-gpu-arch=sm_90 -nocudainc -nocudalib -nostdinc
 *              -std=c++17 -Wno-unknown-cuda-version -include <this file> -isystem <include/>
 * --cuda-device-only is the better mode (clang defines __CUDA_ARCH__ = 900, so `#if __CUDA_ARCH__
 * >= 800` device paths are parsed; host code and <<<>>> launches are parsed too); everything
 * here also works with --cuda-host-only.
 */
#ifndef __CUDA2TILE_PRELUDE_H
#define __CUDA2TILE_PRELUDE_H
#pragma clang system_header

/* ---- nvcc leniencies: diagnostics clang makes errors by default but nvcc accepts ------------ */
#pragma clang diagnostic ignored "-Wc++11-narrowing"      /* dim3 g{n / 16, m / 16} with int n */
#pragma clang diagnostic ignored "-Wregister"             /* `register int x` (removed in C++17) */
#pragma clang diagnostic ignored "-Wdynamic-exception-spec"
#pragma clang diagnostic ignored "-Wunknown-pragmas"      /* #pragma nv_diag_suppress ... */

/* nvcc accepts `__shared__ alignas(16) float buf[N]`, but clang only takes `alignas` first in the
 * declaration, before the GNU attribute __shared__ expands to.  So alignas becomes the GNU aligned
 * attribute, which may follow it; the overload pair accepts a type or a constant, as alignas does. */
template <class __T> constexpr unsigned long __c2t_alignas(int) { return alignof(__T); }
template <unsigned long __N> constexpr unsigned long __c2t_alignas(long) { return __N; }
#define alignas(...) __attribute__((aligned(__c2t_alignas<__VA_ARGS__>(0))))

/* ---- Version macros: a recent toolkit (CUDA 12.8), so code gated on new versions parses ------ */
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#define __CUDACC_VER_BUILD__ 61
#define CUDART_VERSION 12080
#define CUDA_VERSION 12080
#define __CUDART_API_VERSION 12080
#define __CUDA_API_VER_MAJOR__ 12
#define __CUDA_API_VER_MINOR__ 8
#define __CUDA_ARCH_LIST__ 900
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900
#define __CUDA_ARCH_FEAT_SM90_ALL 1   /* the corpus targets sm_90a */
#endif
/* __CUDA_ARCH__ itself comes from clang (device compilation only). */

/* ---- Execution-space and memory-space qualifiers ------------------------------------------- */
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
/* clang 18 knows `managed` only for HIP: keep the variable a __device__ one and tag it. */
#define __managed__ __attribute__((device)) __attribute__((annotate("__managed__")))
#define __forceinline__ __inline__ __attribute__((always_inline))
/* __noinline__ is a keyword of clang's CUDA mode; a macro would break __attribute__((__noinline__)). */
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
/* __restrict__ is a keyword in clang; nothing to define. */
#define __align__(n) __attribute__((aligned(n)))
#define __builtin_align__(n) __align__(n)
#define __CUDA_ALIGN__(n) __align__(n)
/* Unknown to clang 18 in CUDA mode: kept as annotations the frontend can read. */
#define __grid_constant__ __attribute__((annotate("__grid_constant__")))
#define __cluster_dims__(...) __attribute__((annotate("__cluster_dims__")))
#define __maxnreg__(n) __attribute__((annotate("__maxnreg__")))
#define __nv_pure__
#define __device_builtin__
#define __cudart_builtin__
#define __device_builtin_texture_type__
#define __device_builtin_surface_type__
#define CUDARTAPI
#define CUDAAPI
#define CUDART_CB
#define CUDA_CB
#define __CUDA_DEPRECATED
#define __dv(v) = v

/* ---- Helper for the stub headers ------------------------------------------------------------
 * Body given to stub functions that clang must see defined: a template used with a lambda or a
 * local type (std::sort(..., [](...){}), std::vector<LocalStruct>::push_back, cudaMalloc on a
 * local struct type) is an error unless defined in the same translation unit. */
#define __C2T_BODY { __builtin_unreachable(); }

/* ---- Types the builtins and the launch configuration need ---------------------------------- */
#include <vector_types.h>   /* uint3, dim3, float4, ... */
#include <driver_types.h>   /* cudaError_t, cudaStream_t, ... */

/* ---- Builtin variables ---------------------------------------------------------------------
 * Plain extern __device__ objects, so `threadIdx.x` is DECL_REF_EXPR threadIdx + MEMBER_REF_EXPR x. */
extern const __device__ uint3 threadIdx;
extern const __device__ uint3 blockIdx;
extern const __device__ dim3 blockDim;
extern const __device__ dim3 gridDim;
extern const __device__ int warpSize;

/* ---- Kernel launch: kernel<<<grid, block, shmem, stream>>>(args) ---------------------------
 * clang lowers the <<<>>> configuration to a call of one of these (which one depends on the
 * CUDA version clang assumes: without a toolkit, device mode looks up cudaConfigureCall). */
extern "C" unsigned __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                                struct CUstream_st *stream = 0);
extern "C" cudaError_t cudaConfigureCall(dim3 gridDim, dim3 blockDim, size_t sharedMem = 0,
                                         cudaStream_t stream = 0);

/* ---- Implicit #include <cuda_runtime.h> (vector types, runtime API, device functions, math) -- */
#include <cuda_runtime.h>

#endif /* __CUDA2TILE_PRELUDE_H */
