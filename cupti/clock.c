// SPDX-License-Identifier: MIT
/*
 * GPU timestamps in the BPF clock. CUPTI's default clock on Linux is CLOCK_REALTIME, which NTP
 * steps and slews; BPF stamps events with bpf_ktime_get_ns() (CLOCK_MONOTONIC). CUPTI lets us
 * supply the clock, and then GPU times are interpolated into it. Where it refuses, measure the
 * offset between its clock and ours once and add it to every timestamp.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mono_clock.h"
#include "xpu_cupti.h"

int64_t xc_clock_offset_ns;

uint64_t xc_mono_ns(void)
{
	return clock_mono_ns();
}

static uint64_t CUPTIAPI mono_cb(void)
{
	return xc_mono_ns();
}

/* Narrowest of N brackets mono0 <= cupti <= mono1: offset = midpoint - cupti. */
static int64_t measure_offset(void)
{
	uint64_t best_width = UINT64_MAX;
	int64_t best = 0;
	int i;

	for (i = 0; i < 64; i++) {
		uint64_t m0, m1, c = 0;

		m0 = xc_mono_ns();
		if (cupti.cuptiGetTimestamp(&c) != CUPTI_SUCCESS)
			continue;
		m1 = xc_mono_ns();
		if (m1 - m0 < best_width) {
			best_width = m1 - m0;
			best = (int64_t)(m0 + (m1 - m0) / 2) - (int64_t)c;
		}
	}
	xc_info("clock fallback: offset %lld ns, bracket %llu ns", (long long)best,
		(unsigned long long)best_width);
	return best;
}

bool clock__setup(int64_t *offset_ns)
{
	const char *env = getenv("XPU_CUPTI_CLOCK");
	CUptiResult r;

	/* XPU_CUPTI_CLOCK=offset: CUPTI's own clock plus a measured offset (to measure the cost) */
	if (env && !strcmp(env, "offset")) {
		xc_clock_offset_ns = measure_offset();
		*offset_ns = xc_clock_offset_ns;
		return false;
	}
	r = cupti.cuptiActivityRegisterTimestampCallback(mono_cb);
	if (r == CUPTI_SUCCESS) {
		xc_clock_offset_ns = 0;
		*offset_ns = 0;
		return true;
	}
	xc_log("CUPTI refused the timestamp callback (%s): using a measured clock offset",
	       cupti_loader__strerror(r));
	xc_clock_offset_ns = measure_offset();
	*offset_ns = xc_clock_offset_ns;
	return false;
}
