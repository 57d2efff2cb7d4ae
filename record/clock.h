/* SPDX-License-Identifier: MIT */
#ifndef XPU_RECORD_CLOCK_H
#define XPU_RECORD_CLOCK_H

#include <stdint.h>

#include "mono_clock.h"
#include "xpu_format.h"

uint64_t clock_realtime_ns(void);
/* Best (narrowest) of n brackets: realtime and boottime read between two monotonic reads. */
void clock_sync__measure(struct xpu_rec_clock_sync *cs, int n);

#endif
