// SPDX-License-Identifier: MIT
/*
 * The chrome output's GPU counters: per device, busy % of kernels and of copies and memsets,
 * from the intervals gpu.c drew (model/gpu_busy.h makes the points, as for perfetto's).
 */
#include "model/gpu_busy.h"
#include "output/chrome/chrome.h"

static int busy_point(void *ctx, uint32_t gpu, uint64_t ts, double kernels, double copies)
{
	struct chrome *c = ctx;

	chrome__begin(c, 'C', GPU_PID_BASE + gpu, 0, ts);
	chrome__put(c, ",\"name\":\"busy %%\",\"args\":{\"kernels\":%.1f,\"copies\":%.1f}", kernels,
		    copies);
	chrome__end(c);
	return 0;
}

int chrome__emit_counters(struct chrome *c)
{
	return gpu_busy__points(c->iv, c->niv, c->f->has_range, c->f->r0, c->f->r1, busy_point, c);
}
