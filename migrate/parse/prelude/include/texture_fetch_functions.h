/* texture_fetch_functions.h -- cuda2tile parse stub: texture objects are in texture_indirect_functions.h. */
#pragma once
#pragma clang system_header
#include <texture_indirect_functions.h>
