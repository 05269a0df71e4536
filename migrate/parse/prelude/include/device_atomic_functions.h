/* device_atomic_functions.h -- cuda2tile parse stub: the declarations live in device_functions.h. */
#pragma once
#pragma clang system_header
#include <device_functions.h>
