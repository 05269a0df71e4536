/* nvToolsExt.h -- cuda2tile parse stub: see nvtx3/nvToolsExt.h. */
#pragma once
#pragma clang system_header
#include <nvtx3/nvToolsExt.h>
