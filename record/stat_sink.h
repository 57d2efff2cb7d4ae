/* SPDX-License-Identifier: MIT */
/*
 * The counters of one STATS record as the parts put them (by id, in any order, each at most
 * once), given back in the order of common/xpu_stats.def's rows: the record lists what was
 * put, in the table's order, whatever the order of the parts that put it.
 */
#ifndef XPU_RECORD_STAT_SINK_H
#define XPU_RECORD_STAT_SINK_H

#include <stdbool.h>
#include <stdint.h>

#include "xpu_format.h"

struct stat_sink {
	uint64_t value[XPU_STATS_MAX];	/* by row of the table */
	bool put[XPU_STATS_MAX];
};

/* A counter's value; put again, the last value wins. An id of no row is ignored. */
void stat_sink__put(struct stat_sink *s, enum xpu_stat_id id, uint64_t value);
/* Writes the entries put, in the table's order, at most room of them; returns how many. */
unsigned int stat_sink__entries(const struct stat_sink *s, struct xpu_stat_entry *out,
				unsigned int room);

#endif
