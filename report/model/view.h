/* SPDX-License-Identifier: MIT */
/*
 * The views (--view), a row each: what a view is, in one place. Its name, the records its
 * profile adds, how --weight's default resolves for it, the svg's subtitle and pprof's sample
 * types. A new view is a row here and the adder of its records (model/profile.c).
 */
#ifndef XPU_REPORT_MODEL_VIEW_H
#define XPU_REPORT_MODEL_VIEW_H

#include <stdbool.h>

#include "model/opts.h"

/* The records a view's profile holds; profile__build adds them in this order. */
enum view_adds {
	VIEW_ADDS_MEMORY = 1 << 0,	/* GPU memory held at the peak, by allocating stack */
	VIEW_ADDS_SAMPLES = 1 << 1,	/* CPU samples */
	VIEW_ADDS_OFF_CPU = 1 << 2,	/* off-CPU blocks, by the stack that blocked */
	VIEW_ADDS_GPU = 1 << 3,		/* GPU work, under its launch stacks */
};

/* What --weight's default (WEIGHT_AUTO) is in a view. */
enum view_auto_weight {
	VIEW_AUTO_SAMPLES = 0,
	VIEW_AUTO_TIME_WITH_GPU,	/* time when the trace holds GPU work, else samples */
	VIEW_AUTO_TIME,			/* blocked time is time */
};

/* What a pprof sample type counts, from an entry of the profile (output/out_pprof.c). */
enum view_value {
	VIEW_VALUE_SAMPLES,	/* CPU samples */
	VIEW_VALUE_CPU_NS,	/* CPU samples times the sampling period */
	VIEW_VALUE_GPU_NS,	/* GPU work's duration */
	VIEW_VALUE_TIME_NS,	/* both: the merged view's weight */
	VIEW_VALUE_RECORDS,	/* GPU records (kernels, copies, memsets; allocations in memory) */
	VIEW_VALUE_BYTES,	/* the memory view's bytes held at the peak */
	VIEW_VALUE_OFF_NS,	/* off-CPU blocks' time */
	VIEW_VALUE_BLOCKS,	/* off-CPU blocks */
};

#define VIEW_PPROF_TYPES_MAX 4

struct view_def {
	enum report_view view;
	const char *name;		/* --view=NAME */
	unsigned int adds;		/* enum view_adds */
	enum view_auto_weight auto_weight;
	const char *svg_title;		/* the svg's subtitle; NULL: the merged view's (svg) */
	/*
	 * pprof's sample types; def_samples and def_time pick the default type for
	 * --weight=samples and time: the one whose shares folded output shows
	 */
	struct view_pprof_type {
		const char *type, *unit;
		enum view_value v;
	} pprof[VIEW_PPROF_TYPES_MAX];
	int npprof, pprof_def_samples, pprof_def_time;
	bool pprof_sampled;		/* its period is the CPU sampling period */
};

/* The row of a view: never NULL for an enum report_view value (the merged view's else). */
const struct view_def *view__def(enum report_view view);
/* The row of --view=NAME, NULL if none. */
const struct view_def *view__by_name(const char *name);
/* "merged, cpu, ... or wall": every view's name, in the table's order, for a refusal. */
const char *view__names(void);

#endif
