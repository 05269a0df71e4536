/* cublas.h -- cuda2tile parse stub: only the v2 API is provided. */
#pragma once
#pragma clang system_header
#include <cublas_v2.h>
