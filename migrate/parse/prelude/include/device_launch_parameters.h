/* device_launch_parameters.h -- cuda2tile parse stub: the builtin variables are declared by the prelude. */
#pragma once
#pragma clang system_header
#include <cuda_runtime.h>
