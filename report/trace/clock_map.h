/* SPDX-License-Identifier: MIT */
/* CLOCK_MONOTONIC to CLOCK_REALTIME through a trace's clock-sync pairs. */
#ifndef XPU_REPORT_TRACE_CLOCK_MAP_H
#define XPU_REPORT_TRACE_CLOCK_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct clock_map {
	struct { uint64_t mono, real; } *p;	/* sorted by mono */
	size_t n;
	int64_t fixed_offset;			/* realtime - mono with fewer than two pairs */
};

/* From t's CLOCK_SYNC records, else its session's start pair. 0 or -ENOMEM. */
int clock_map__init(struct clock_map *c, const struct trace *t);
/* Realtime of a monotonic time: the offset interpolated between the two nearest pairs. */
uint64_t clock_map__realtime(const struct clock_map *c, uint64_t mono);
void clock_map__free(struct clock_map *c);

#endif
