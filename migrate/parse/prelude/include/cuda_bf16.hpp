/* cuda_bf16.hpp -- cuda2tile parse stub: see cuda_bf16.h. */
#pragma once
#pragma clang system_header
#include <cuda_bf16.h>
