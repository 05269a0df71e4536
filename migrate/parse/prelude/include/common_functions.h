/* common_functions.h -- cuda2tile parse stub: the declarations live in cuda_runtime.h and the C headers. */
#pragma once
#pragma clang system_header
#include <cuda_runtime.h>
