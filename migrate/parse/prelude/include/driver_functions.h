/* driver_functions.h -- cuda2tile parse stub: make_cudaExtent/make_cudaPitchedPtr/make_cudaPos are in cuda_runtime.h. */
#pragma once
#pragma clang system_header
#include <cuda_runtime.h>
