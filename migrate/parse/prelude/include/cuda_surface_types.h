/* cuda_surface_types.h -- cuda2tile parse stub: surface objects are in surface_indirect_functions.h. */
#pragma once
#pragma clang system_header
#include <surface_indirect_functions.h>
