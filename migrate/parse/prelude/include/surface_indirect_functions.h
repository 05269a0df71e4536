/* surface_indirect_functions.h -- surface-object reads and writes (cuda2tile parse stub). */
#ifndef __CUDA2TILE_SURFACE_INDIRECT_FUNCTIONS_H
#define __CUDA2TILE_SURFACE_INDIRECT_FUNCTIONS_H
#pragma clang system_header
#include <driver_types.h>
#define __C2T_SURF(fn, ...)                                                                    \
  template <class T>                                                                           \
  __device__ T fn##read(cudaSurfaceObject_t surfObject, __VA_ARGS__,                           \
                        cudaSurfaceBoundaryMode boundaryMode = cudaBoundaryModeTrap) __C2T_BODY \
  template <class T>                                                                           \
  __device__ void fn##read(T *data, cudaSurfaceObject_t surfObject, __VA_ARGS__,               \
                           cudaSurfaceBoundaryMode boundaryMode = cudaBoundaryModeTrap) __C2T_BODY \
  template <class T>                                                                           \
  __device__ void fn##write(T data, cudaSurfaceObject_t surfObject, __VA_ARGS__,               \
                            cudaSurfaceBoundaryMode boundaryMode = cudaBoundaryModeTrap) __C2T_BODY
__C2T_SURF(surf1D, int x)
__C2T_SURF(surf2D, int x, int y)
__C2T_SURF(surf3D, int x, int y, int z)
__C2T_SURF(surf1DLayered, int x, int layer)
__C2T_SURF(surf2DLayered, int x, int y, int layer)
__C2T_SURF(surfCubemap, int x, int y, int face)
__C2T_SURF(surfCubemapLayered, int x, int y, int layerFace)
#endif
