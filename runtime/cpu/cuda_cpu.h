// cuda_cpu.h - the CUDA execution model on the CPU, for cuda2tile's CPU executor.
//
// Compiled with the host C++ compiler as a forced include (-include cuda_cpu.h) in front of an
// original CUDA program whose `<<<>>>` launches and `extern __shared__` declarations the runtime
// has rewritten (runtime/source.py) and whose main() is renamed (-Dmain=cuda2tile_host_main).
// The whole program is one translation unit: this header, the program, and a generated
// launcher with `extern "C"` entry points (see c2t_launcher.h).
//
//   c2t_types.h     vector types, dim3, __half, __nv_bfloat16
//   c2t_math.h      the CUDA math API and intrinsics (precision table inside)
//   c2t_sched.h     threads as fibers, barriers, warp shuffles and votes, the grid loop
//   c2t_device.h    atomics, cooperative groups, misc device functions
//   c2t_wmma.h      nvcuda::wmma fragments, load/store/mma (whole tile in every lane)
//   c2t_host.h      the host runtime API (cudaMalloc, cudaMemcpy, events...) and launches
//   c2t_launcher.h  argument conversion and launch entry points, shared with the GPU build
//   c2t_cpu_api.h   guarded buffers, fault reports, worker entry points
//
// CUDA keywords: __global__, __device__, __host__, __forceinline__, __noinline__, __constant__,
// __managed__ vanish; __shared__ makes a block-shared static in section c2t_shared (blocks run
// one at a time, and the section is poisoned before each block); __launch_bounds__ and friends
// are dropped; __align__(n) is an alignment attribute; __restrict__ is native to GCC and Clang.
#ifndef CUDA2TILE_CUDA_CPU_H
#define CUDA2TILE_CUDA_CPU_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <cfloat>
#include <climits>
#include <cassert>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <algorithm>
#include <limits>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>
#include <initializer_list>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define C2T_CPU_EXECUTOR 1
#ifndef __CUDACC__
#define __CUDACC__ 1
#endif
#ifndef __NVCC__
#define __NVCC__ 1
#endif
#define __CUDACC_VER_MAJOR__ 12
#define __CUDACC_VER_MINOR__ 8
#define __CUDACC_VER_BUILD__ 0
#define CUDART_VERSION 12080
#define CUDA_VERSION 12080

#define __global__
#define __device__
#define __host__
#define __forceinline__
#define __noinline__
#define __inline_hint__
#define __constant__
#define __managed__
#define __grid_constant__
#define __shared__ static __attribute__((section("c2t_shared")))
#define __launch_bounds__(...)
#define __cluster_dims__(...)
#define __maxnreg__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __cudart_builtin__
#define __device_builtin__
#define CUDART_CB

#include "c2t_types.h"
#include "c2t_math.h"
#include "c2t_sched.h"
#include "c2t_device.h"
#include "c2t_wmma.h"
#include "c2t_host.h"
#include "c2t_launcher.h"
#include "c2t_cpu_api.h"

#endif  // CUDA2TILE_CUDA_CPU_H
