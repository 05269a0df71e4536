/* cuda_profiler_api.h -- cuda2tile parse stub: cudaProfilerStart/Stop are in cuda_runtime_api.h. */
#pragma once
#pragma clang system_header
#include <cuda_runtime_api.h>
