// SPDX-License-Identifier: MIT
#include <stddef.h>

#include "stat_sink.h"

/* The ids in the table's order: a row's index is its place in the STATS record. */
static const uint32_t row_ids[XPU_STATS_MAX] = {
#define XPU_STAT(name, id, info_name, part) id,
#include "xpu_stats.def"
#undef XPU_STAT
};

/* A search over a hundred rows, a few dozen times at the end of a recording: no index kept. */
static int row_of(uint32_t id)
{
	int i;

	for (i = 0; i < XPU_STATS_MAX; i++) {
		if (row_ids[i] == id)
			return i;
	}
	return -1;
}

void stat_sink__put(struct stat_sink *s, enum xpu_stat_id id, uint64_t value)
{
	int row = row_of((uint32_t)id);

	if (row < 0)
		return;
	s->value[row] = value;
	s->put[row] = true;
}

unsigned int stat_sink__entries(const struct stat_sink *s, struct xpu_stat_entry *out,
				unsigned int room)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < XPU_STATS_MAX && n < room; i++) {
		if (!s->put[i])
			continue;
		out[n].id = row_ids[i];
		out[n++].value = s->value[i];
	}
	return n;
}
