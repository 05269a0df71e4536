/* cuda_stdint.h -- cuda2tile parse stub: fixed-width integer types. */
#pragma once
#pragma clang system_header
#include <stdint.h>
