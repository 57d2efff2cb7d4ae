// SPDX-License-Identifier: MIT
/*
 * record/stat_sink.c: the counters come back in xpu_stats.def's order whatever the order they
 * were put in, only those put, the last value of each; and every row's PART column names a
 * part of record/parts.c (or none).
 */
#include <string.h>

#include "parts.h"
#include "stat_sink.h"
#include "unit.h"

static const uint32_t table_ids[] = {
#define XPU_STAT(name, id, info_name, part) id,
#include "xpu_stats.def"
#undef XPU_STAT
};

static const char *const table_parts[] = {
#define XPU_STAT(name, id, info_name, part) #part,
#include "xpu_stats.def"
#undef XPU_STAT
};

static bool known_part(const char *name)
{
	size_t i;

	if (!strcmp(name, "none"))
		return true;
	for (i = 0; i < rec_parts_nr; i++) {
		if (!strcmp(rec_parts[i]->name, name))
			return true;
	}
	return false;
}

int main(void)
{
	static struct stat_sink sink;
	struct xpu_stat_entry out[XPU_STATS_MAX];
	unsigned int n, i, k;

	/* every other row, put last row first */
	for (i = XPU_STATS_MAX; i-- > 0;) {
		if (i % 2 == 0)
			stat_sink__put(&sink, (enum xpu_stat_id)table_ids[i], 1);
	}
	stat_sink__put(&sink, (enum xpu_stat_id)table_ids[0], 7);	/* the last value wins */
	stat_sink__put(&sink, (enum xpu_stat_id)100000, 1);	/* no such row: ignored */
	n = stat_sink__entries(&sink, out, XPU_STATS_MAX);
	CHECK(n == (XPU_STATS_MAX + 1) / 2, "%u entries, want %u", n, (XPU_STATS_MAX + 1) / 2);
	for (i = 0, k = 0; i < n; i++, k += 2)
		CHECK(out[i].id == table_ids[k], "entry %u: id %u, want row %u's %u", i,
		      out[i].id, k, table_ids[k]);
	CHECK(n && out[0].value == 7, "first value %llu, want the last put, 7",
	      n ? (unsigned long long)out[0].value : 0ull);
	CHECK(stat_sink__entries(&sink, out, 3) == 3, "room respected");
	for (i = 0; i < XPU_STATS_MAX; i++)
		CHECK(known_part(table_parts[i]), "row %u (id %u): no part named %s", i,
		      table_ids[i], table_parts[i]);
	return unit_finish();
}
