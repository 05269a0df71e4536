/* cuda_runtime.h -- cuda2tile parse stub.  nvcc includes it implicitly (so does the prelude):
 * vector types, the runtime API with its C++ template overloads, the device functions and the
 * math API, plus the C library headers CUDA's own headers pull in. */
#ifndef __CUDA2TILE_CUDA_RUNTIME_H
#define __CUDA2TILE_CUDA_RUNTIME_H
/* the include-guard name code tests to see whether this header was included */
#define __CUDA_RUNTIME_H__
#pragma clang system_header

/* C/C++ library headers that CUDA's headers bring along (nvcc users rely on std::min, std::max,
 * std::swap, std::numeric_limits, ... without including anything) */
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <float.h>
#include <string.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <assert.h>
#include <new>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <type_traits>
#include <limits>
#include <__cuda2tile/algobase.h>

#include <vector_types.h>
#include <driver_types.h>
#include <cuda_runtime_api.h>
#include <vector_functions.h>
#include <device_functions.h>
#include <math_functions.h>
#include <texture_indirect_functions.h>
#include <surface_indirect_functions.h>

/* ---- driver_functions.h helpers ------------------------------------------------------------ */
static inline __host__ struct cudaPitchedPtr make_cudaPitchedPtr(void *d, size_t p, size_t xsz, size_t ysz) {
  return cudaPitchedPtr{d, p, xsz, ysz};
}
static inline __host__ struct cudaPos make_cudaPos(size_t x, size_t y, size_t z) { return cudaPos{x, y, z}; }
static inline __host__ struct cudaExtent make_cudaExtent(size_t w, size_t h, size_t d) {
  return cudaExtent{w, h, d};
}

/* ---- C++ overloads of the runtime API (templates over the pointer / symbol / kernel type) -- */
__host__ cudaError_t cudaEventCreate(cudaEvent_t *event, unsigned int flags) __C2T_BODY
__host__ cudaError_t cudaMallocHost(void **ptr, size_t size, unsigned int flags) __C2T_BODY
template <class T> __host__ cudaError_t cudaMalloc(T **devPtr, size_t size) __C2T_BODY
template <class T> __host__ cudaError_t cudaMallocHost(T **ptr, size_t size, unsigned int flags = 0) __C2T_BODY
template <class T> __host__ cudaError_t cudaHostAlloc(T **ptr, size_t size, unsigned int flags) __C2T_BODY
template <class T> __host__ cudaError_t cudaHostGetDevicePointer(T **pDevice, void *pHost, unsigned int flags) __C2T_BODY
template <class T> __host__ cudaError_t cudaMallocManaged(T **devPtr, size_t size, unsigned int flags = cudaMemAttachGlobal) __C2T_BODY
template <class T> __host__ cudaError_t cudaMallocPitch(T **devPtr, size_t *pitch, size_t width, size_t height) __C2T_BODY
template <class T> __host__ cudaError_t cudaMallocAsync(T **devPtr, size_t size, cudaStream_t stream) __C2T_BODY
template <class T> __host__ cudaError_t cudaMallocAsync(T **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) __C2T_BODY
template <class T> __host__ cudaError_t cudaMallocFromPoolAsync(T **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream) __C2T_BODY
template <class T>
__host__ cudaError_t cudaMemcpyToSymbol(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                                      enum cudaMemcpyKind kind = cudaMemcpyHostToDevice) __C2T_BODY
template <class T>
__host__ cudaError_t cudaMemcpyToSymbolAsync(const T &symbol, const void *src, size_t count, size_t offset = 0,
                                                           enum cudaMemcpyKind kind = cudaMemcpyHostToDevice,
                                                           cudaStream_t stream = 0) __C2T_BODY
template <class T>
__host__ cudaError_t cudaMemcpyFromSymbol(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                                        enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost) __C2T_BODY
template <class T>
__host__ cudaError_t cudaMemcpyFromSymbolAsync(void *dst, const T &symbol, size_t count, size_t offset = 0,
                                                             enum cudaMemcpyKind kind = cudaMemcpyDeviceToHost,
                                                             cudaStream_t stream = 0) __C2T_BODY
template <class T> __host__ cudaError_t cudaGetSymbolAddress(void **devPtr, const T &symbol) __C2T_BODY
template <class T> __host__ cudaError_t cudaGetSymbolSize(size_t *size, const T &symbol) __C2T_BODY
template <class T>
__host__ cudaError_t cudaLaunchKernel(const T *func, dim3 gridDim, dim3 blockDim, void **args,
                                                    size_t sharedMem = 0, cudaStream_t stream = 0) __C2T_BODY
template <class T>
__host__ cudaError_t cudaLaunchCooperativeKernel(const T *func, dim3 gridDim, dim3 blockDim, void **args,
                                                               size_t sharedMem = 0, cudaStream_t stream = 0) __C2T_BODY
/* CUDA 13 signatures of calls that changed (the 12.x C forms are in cuda_runtime_api.h) */
__host__ cudaError_t cudaMemPrefetchAsync(const void *devPtr, size_t count, struct cudaMemLocation location,
                                          unsigned int flags, cudaStream_t stream = 0) __C2T_BODY
__host__ cudaError_t cudaMemAdvise(const void *devPtr, size_t count, enum cudaMemoryAdvise advice,
                                   struct cudaMemLocation location) __C2T_BODY
/* graph calls with edge data (CUDA 12.3+ "_v2" forms, the only forms in CUDA 13) */
__host__ cudaError_t cudaGraphAddNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
                                      const struct cudaGraphEdgeData *dependencyData, size_t numDependencies,
                                      struct cudaGraphNodeParams *nodeParams) __C2T_BODY
__host__ cudaError_t cudaGraphAddDependencies(cudaGraph_t graph, const cudaGraphNode_t *from, const cudaGraphNode_t *to,
                                              const struct cudaGraphEdgeData *edgeData, size_t numDependencies) __C2T_BODY
__host__ cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
                                              unsigned long long *id_out, cudaGraph_t *graph_out,
                                              const cudaGraphNode_t **dependencies_out,
                                              const struct cudaGraphEdgeData **edgeData_out,
                                              size_t *numDependencies_out) __C2T_BODY
/* pre-12.0 signatures, still accepted from C++ */
__host__ cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, cudaGraphNode_t *hErrorNode_out,
                                         enum cudaGraphExecUpdateResult *updateResult_out) __C2T_BODY
__host__ cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphNode_t *pErrorNode,
                                          char *pLogBuffer, size_t bufferSize) __C2T_BODY
/* clang cannot deduce `const T *` from a kernel name, so kernels passed uncast get these: */
template <class... P>
__host__ cudaError_t cudaLaunchKernel(void (*func)(P...), dim3 gridDim, dim3 blockDim, void **args,
                                      size_t sharedMem = 0, cudaStream_t stream = 0) __C2T_BODY
template <class... P>
__host__ cudaError_t cudaLaunchCooperativeKernel(void (*func)(P...), dim3 gridDim, dim3 blockDim, void **args,
                                                 size_t sharedMem = 0, cudaStream_t stream = 0) __C2T_BODY
template <class T>
__host__ cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config, const T *func, void **args) __C2T_BODY
template <class... ExpTypes, class... ActTypes>
__host__ cudaError_t cudaLaunchKernelEx(const cudaLaunchConfig_t *config, void (*kernel)(ExpTypes...),
                                                      ActTypes &&...args) __C2T_BODY
template <class T> __host__ cudaError_t cudaFuncSetCacheConfig(T *func, enum cudaFuncCache cacheConfig) __C2T_BODY
template <class T> __host__ cudaError_t cudaFuncSetSharedMemConfig(T *func, enum cudaSharedMemConfig config) __C2T_BODY
template <class T> __host__ cudaError_t cudaFuncGetAttributes(struct cudaFuncAttributes *attr, T *entry) __C2T_BODY
template <class T> __host__ cudaError_t cudaFuncSetAttribute(T *entry, enum cudaFuncAttribute attr, int value) __C2T_BODY
template <class T> __host__ cudaError_t cudaFuncGetName(const char **name, const T *func) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, T func, int blockSize,
                                                                                 size_t dynamicSMemSize) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, T func, int blockSize,
                                                                                          size_t dynamicSMemSize, unsigned int flags) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, T func,
                                                                      size_t dynamicSMemSize = 0, int blockSizeLimit = 0) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, T func,
                                                                               size_t dynamicSMemSize = 0,
                                                                               int blockSizeLimit = 0, unsigned int flags = 0) __C2T_BODY
template <class UnaryFunction, class T>
__host__ cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int *minGridSize, int *blockSize, T func,
                                                                                  UnaryFunction blockSizeToDynamicSMemSize,
                                                                                  int blockSizeLimit = 0) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyAvailableDynamicSMemPerBlock(size_t *dynamicSmemSize, T func, int numBlocks,
                                                                             int blockSize) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyMaxPotentialClusterSize(int *clusterSize, T *func,
                                                                        const cudaLaunchConfig_t *config) __C2T_BODY
template <class T>
__host__ cudaError_t cudaOccupancyMaxActiveClusters(int *numClusters, T *func, const cudaLaunchConfig_t *config) __C2T_BODY
template <class T> __host__ struct cudaChannelFormatDesc cudaCreateChannelDesc(void) __C2T_BODY
#endif
