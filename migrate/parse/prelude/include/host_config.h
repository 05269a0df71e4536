/* host_config.h -- cuda2tile parse stub: nothing to configure. */
#pragma once
#pragma clang system_header
#include <cuda_runtime.h>
