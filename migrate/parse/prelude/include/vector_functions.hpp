/* vector_functions.hpp -- cuda2tile parse stub: see vector_functions.h. */
#pragma once
#pragma clang system_header
#include <vector_functions.h>
