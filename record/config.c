// SPDX-License-Identifier: MIT
/* The recorder's verbosity (config.h): main() sets it from -v, log_info() reads it. */
#include "config.h"

int xpu_verbose;
