/* SPDX-License-Identifier: MIT */
/*
 * The report session: the loaded trace, the options, the symbolizer with its frame names,
 * the stacks the unwinder and the Python splicer derived, and the GPU-work join. Outputs that
 * need no aggregation (info, chrome, archive) read only this; the aggregation (profile.h) is
 * built on top of it.
 */
#ifndef XPU_REPORT_MODEL_SESSION_H
#define XPU_REPORT_MODEL_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "model/filter.h"
#include "model/gpu_join.h"
#include "model/opts.h"
#include "sym/pyframes.h"
#include "sym/symbolize.h"
#include "sym/unwind.h"
#include "trace/trace.h"

struct session {
	struct trace *t;
	const struct report_opts *opts;
	struct filter filter;		/* the one filter every output applies */
	struct strpool pool;		/* frame names */
	struct symbolizer sym;
	uint32_t freq_hz;		/* sampling frequency used to convert GPU time */
	struct unwind_stats uw;		/* -g dwarf traces */
	struct pyframes_stats py;	/* Python frames spliced in */
	struct gpu_join gpu;		/* valid once session__gpu() succeeded */
	bool gpu_built;
};

/*
 * Sets up the filter and the symbolizer, then derives the stacks every output sees: DWARF-unwound user
 * stacks (-g dwarf), then Python frames spliced in. 0 or negative errno (-EINVAL: a bad
 * --comm); teardown either way.
 */
int session__setup(struct session *s, struct trace *t, const struct report_opts *opts);
/* The GPU-work join with the filter applied, built on first use. NULL when out of memory. */
const struct gpu_join *session__gpu(struct session *s);
void session__teardown(struct session *s);

#endif
