/* device_types.h -- cuda2tile parse stub: the types live in driver_types.h. */
#pragma once
#pragma clang system_header
#include <driver_types.h>
