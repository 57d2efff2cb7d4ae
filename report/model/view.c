// SPDX-License-Identifier: MIT
/* The table of views (see view.h). */
#include <stdio.h>
#include <string.h>

#include "model/view.h"

/* in the order --help and a refusal list them */
static const struct view_def views[] = {
	{ .view = VIEW_MERGED, .name = "merged", .adds = VIEW_ADDS_SAMPLES | VIEW_ADDS_GPU,
	  .auto_weight = VIEW_AUTO_TIME_WITH_GPU,
	  .pprof = { { "samples", "count", VIEW_VALUE_SAMPLES },
		     { "cpu", "nanoseconds", VIEW_VALUE_CPU_NS },
		     { "gpu", "nanoseconds", VIEW_VALUE_GPU_NS },
		     { "time", "nanoseconds", VIEW_VALUE_TIME_NS } },
	  .npprof = 4, .pprof_def_samples = 3, .pprof_def_time = 3, .pprof_sampled = true },
	{ .view = VIEW_CPU, .name = "cpu", .adds = VIEW_ADDS_SAMPLES,
	  .auto_weight = VIEW_AUTO_SAMPLES, .svg_title = "CPU samples",
	  .pprof = { { "samples", "count", VIEW_VALUE_SAMPLES },
		     { "cpu", "nanoseconds", VIEW_VALUE_CPU_NS } },
	  .npprof = 2, .pprof_def_samples = 0, .pprof_def_time = 1, .pprof_sampled = true },
	{ .view = VIEW_GPU, .name = "gpu", .adds = VIEW_ADDS_GPU,
	  .auto_weight = VIEW_AUTO_TIME_WITH_GPU, .svg_title = "GPU work under its launch stacks",
	  .pprof = { { "gpu", "nanoseconds", VIEW_VALUE_GPU_NS },
		     { "gpu_records", "count", VIEW_VALUE_RECORDS } },
	  .npprof = 2 },
	{ .view = VIEW_MEMORY, .name = "memory", .adds = VIEW_ADDS_MEMORY,
	  .auto_weight = VIEW_AUTO_TIME_WITH_GPU,
	  .svg_title = "GPU memory held at the peak (bytes) under its allocating stacks",
	  .pprof = { { "space", "bytes", VIEW_VALUE_BYTES },
		     { "allocations", "count", VIEW_VALUE_RECORDS } },
	  .npprof = 2 },
	{ .view = VIEW_OFF_CPU, .name = "off-cpu", .adds = VIEW_ADDS_OFF_CPU,
	  .auto_weight = VIEW_AUTO_TIME, .svg_title = "Off-CPU time under the stacks that blocked",
	  .pprof = { { "off_cpu", "nanoseconds", VIEW_VALUE_OFF_NS },
		     { "blocks", "count", VIEW_VALUE_BLOCKS } },
	  .npprof = 2 },
	{ .view = VIEW_WALL, .name = "wall", .adds = VIEW_ADDS_SAMPLES | VIEW_ADDS_OFF_CPU,
	  .auto_weight = VIEW_AUTO_TIME, .svg_title = "Wall time: CPU samples and off-CPU time",
	  .pprof = { { "samples", "count", VIEW_VALUE_SAMPLES },
		     { "cpu", "nanoseconds", VIEW_VALUE_CPU_NS },
		     { "off_cpu", "nanoseconds", VIEW_VALUE_OFF_NS },
		     { "wall", "nanoseconds", VIEW_VALUE_TIME_NS } },
	  .npprof = 4, .pprof_def_samples = 3, .pprof_def_time = 3, .pprof_sampled = true },
};

#define NVIEWS (sizeof(views) / sizeof(views[0]))

const struct view_def *view__def(enum report_view view)
{
	size_t i;

	for (i = 0; i < NVIEWS; i++) {
		if (views[i].view == view)
			return &views[i];
	}
	return &views[0];
}

const struct view_def *view__by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NVIEWS; i++) {
		if (!strcmp(views[i].name, name))
			return &views[i];
	}
	return NULL;
}

const char *view__names(void)
{
	static char buf[128];
	size_t i, at = 0;

	for (i = 0; i < NVIEWS && at < sizeof(buf); i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s",
				       !i ? "" : i + 1 < NVIEWS ? ", " : " or ", views[i].name);
	return buf;
}
