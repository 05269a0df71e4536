/* device_atomic_functions.hpp -- cuda2tile parse stub: see device_functions.h. */
#pragma once
#pragma clang system_header
#include <device_functions.h>
