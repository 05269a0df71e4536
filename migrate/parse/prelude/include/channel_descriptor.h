/* channel_descriptor.h -- cuda2tile parse stub: cudaCreateChannelDesc<T>() is declared in cuda_runtime.h. */
#pragma once
#pragma clang system_header
#include <cuda_runtime.h>
