/* texture_indirect_functions.h -- texture-object fetches (cuda2tile parse stub).  Each fetch
 * exists as `T texXXX<T>(obj, coords...)` and as `void texXXX(T *ret, obj, coords...)`. */
#ifndef __CUDA2TILE_TEXTURE_INDIRECT_FUNCTIONS_H
#define __CUDA2TILE_TEXTURE_INDIRECT_FUNCTIONS_H
#pragma clang system_header
#include <driver_types.h>
#include <vector_types.h>
#define __C2T_TEX(fn, ...)                                                                     \
  template <class T> __device__ T fn(cudaTextureObject_t texObject, __VA_ARGS__) __C2T_BODY       \
  template <class T> __device__ void fn(T *retVal, cudaTextureObject_t texObject, __VA_ARGS__) __C2T_BODY
__C2T_TEX(tex1Dfetch, int x)
__C2T_TEX(tex1D, float x)
__C2T_TEX(tex2D, float x, float y)
__C2T_TEX(tex3D, float x, float y, float z)
__C2T_TEX(tex1DLayered, float x, int layer)
__C2T_TEX(tex2DLayered, float x, float y, int layer)
__C2T_TEX(texCubemap, float x, float y, float z)
__C2T_TEX(texCubemapLayered, float x, float y, float z, int layer)
__C2T_TEX(tex2Dgather, float x, float y, int comp = 0)
__C2T_TEX(tex1DLod, float x, float level)
__C2T_TEX(tex2DLod, float x, float y, float level)
__C2T_TEX(tex3DLod, float x, float y, float z, float level)
__C2T_TEX(tex1DLayeredLod, float x, int layer, float level)
__C2T_TEX(tex2DLayeredLod, float x, float y, int layer, float level)
__C2T_TEX(texCubemapLod, float x, float y, float z, float level)
__C2T_TEX(tex1DGrad, float x, float dPdx, float dPdy)
__C2T_TEX(tex2DGrad, float x, float y, float2 dPdx, float2 dPdy)
__C2T_TEX(tex3DGrad, float x, float y, float z, float4 dPdx, float4 dPdy)
__C2T_TEX(tex1DLayeredGrad, float x, int layer, float dPdx, float dPdy)
__C2T_TEX(tex2DLayeredGrad, float x, float y, int layer, float2 dPdx, float2 dPdy)
#endif
