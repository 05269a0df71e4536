/* nvToolsExtCudaRt.h -- cuda2tile parse stub: see nvtx3/nvToolsExtCudaRt.h. */
#pragma once
#pragma clang system_header
#include <nvtx3/nvToolsExtCudaRt.h>
