// SPDX-License-Identifier: MIT
/*
 * Clock pairs let the report convert CLOCK_MONOTONIC (what BPF and CUPTI stamp) to wall time.
 * The narrowest bracket bounds the error; preemption between reads only widens a bracket.
 */
#include <stdint.h>
#include <time.h>

#include "clock.h"

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t clock_realtime_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

void clock_sync__measure(struct xpu_rec_clock_sync *cs, int n)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < n; i++) {
		uint64_t t1 = read_ns(CLOCK_MONOTONIC);
		uint64_t rt = read_ns(CLOCK_REALTIME);
		uint64_t bt = read_ns(CLOCK_BOOTTIME);
		uint64_t t2 = read_ns(CLOCK_MONOTONIC);

		if (t2 - t1 < best) {
			best = t2 - t1;
			cs->mono_ns = t1 + (t2 - t1) / 2;
			cs->realtime_ns = rt;
			cs->boottime_ns = bt;
			cs->uncertainty_ns = t2 - t1;
		}
	}
}
