// SPDX-License-Identifier: MIT
/*
 * The mapping reader as a part of the recorder (part.h): it reads the traced processes'
 * mappings into the process table and the trace (c->pm; the drain drives it), from the
 * kernel's mmap events too, opened before the command runs: its short-lived children's
 * mappings come from those. An attached process is described as it is, among the first
 * records: its threads, then its mappings. Its rows: the reader's counters.
 */
#include <stdio.h>

#include "part.h"
#include "procmaps.h"
#include "stat_sink.h"
#include "target.h"

static int procmaps_part__setup(struct rec_ctx *c, void **state)
{
	struct procmaps *pm = procmaps__new(c->wt, c->pt);

	if (!pm)
		return -1;
	procmaps__use_kernel_events(pm);
	c->pm = pm;
	*state = pm;
	return 0;
}

static void procmaps_part__first_records(void *state, struct rec_ctx *c)
{
	struct procmaps *pm = state;
	unsigned int i;

	for (i = 0; i < c->cfg->nattach; i++) {
		target__describe_threads(c->cfg->attach_pids[i], c->wt, c->start_mono_ns);
		procmaps__scan(pm, c->cfg->attach_pids[i], c->start_mono_ns);
	}
}

static void procmaps_part__stats(void *state, const struct rec_ctx *c, struct stat_sink *sink)
{
	struct procmaps_stats ps = { 0 };

	procmaps__get_stats(state, &ps);
	stat_sink__put(sink, XPU_STAT_MAPPING_SCANS, ps.scans);
	stat_sink__put(sink, XPU_STAT_MAPPING_SCAN_FAILURES, ps.scan_failures);
	stat_sink__put(sink, XPU_STAT_MAPPINGS_FROM_EVENTS, ps.from_events);
	stat_sink__put(sink, XPU_STAT_MMAP_EVENTS_LOST, ps.events_lost + ps.events_dropped);
	stat_sink__put(sink, XPU_STAT_MAPPING_QUERIES, ps.queries);
	stat_sink__put(sink, XPU_STAT_MAPPING_ENTRIES, ps.entries);
	stat_sink__put(sink, XPU_STAT_MAPPING_READ_FAILURES, ps.read_failures);
	stat_sink__put(sink, XPU_STAT_MAPPINGS_INHERITED, ps.inherited);
}

static void procmaps_part__summary(void *state, struct rec_summary *sum)
{
	struct procmaps_stats ps = { 0 };

	procmaps__get_stats(state, &ps);
	sum->mappings = ps.mappings;
	sum->unreadable = ps.scan_failures;
}

static void procmaps_part__free(void *state)
{
	procmaps__free(state);
}

const struct rec_part procmaps_part = {
	.name = "procmaps",
	.required = true,
	.setup = procmaps_part__setup,
	.first_records = procmaps_part__first_records,
	.stats = procmaps_part__stats,
	.summary = procmaps_part__summary,
	.free = procmaps_part__free,
};
