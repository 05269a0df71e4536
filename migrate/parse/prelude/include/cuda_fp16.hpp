/* cuda_fp16.hpp -- cuda2tile parse stub: see cuda_fp16.h. */
#pragma once
#pragma clang system_header
#include <cuda_fp16.h>
