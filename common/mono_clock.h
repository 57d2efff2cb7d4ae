/* SPDX-License-Identifier: MIT */
/*
 * CLOCK_MONOTONIC in nanoseconds: the clock of bpf_ktime_get_ns(), and so of every timestamp in
 * a trace. Header-only so the injected CUPTI library, which links no common object, shares it.
 */
#ifndef XPU_MONO_CLOCK_H
#define XPU_MONO_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
