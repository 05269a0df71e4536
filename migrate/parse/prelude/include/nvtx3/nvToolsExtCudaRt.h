/* nvtx3/nvToolsExtCudaRt.h -- naming CUDA runtime objects in NVTX (cuda2tile parse stub). */
#ifndef __CUDA2TILE_NVTOOLSEXTCUDART_H
#define __CUDA2TILE_NVTOOLSEXTCUDART_H
#pragma clang system_header
#include <nvtx3/nvToolsExt.h>
#include <driver_types.h>
extern "C" {
void nvtxNameCudaDeviceA(int device, const char *name);
void nvtxNameCudaStreamA(cudaStream_t stream, const char *name);
void nvtxNameCudaEventA(cudaEvent_t event, const char *name);
}
#define nvtxNameCudaDevice nvtxNameCudaDeviceA
#define nvtxNameCudaStream nvtxNameCudaStreamA
#define nvtxNameCudaEvent nvtxNameCudaEventA
#endif
