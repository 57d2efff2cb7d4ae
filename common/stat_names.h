/* SPDX-License-Identifier: MIT */
#ifndef XPU_STAT_NAMES_H
#define XPU_STAT_NAMES_H

#include <stdint.h>

/* A STATS counter's name in `info` (xpu_stats.def), "unknown" for an id it does not hold. */
const char *xpu_stat_name(uint32_t id);

#endif
