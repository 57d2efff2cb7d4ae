/* SPDX-License-Identifier: MIT */
/* Per-process address -> mapping lookup over time. */
#ifndef XPU_REPORT_SYM_MAPS_H
#define XPU_REPORT_SYM_MAPS_H

#include <stddef.h>
#include <stdint.h>

#include "trace/trace.h"

struct pid_maps {
	uint32_t pid;
	struct xpu_rec_mapping *m;	/* sorted by start, then ts */
	size_t n;
	/* the interval index (maps.c): a segment tree over the slots between distinct ends */
	uint64_t *xs;			/* the distinct starts and ends, sorted */
	size_t nx;
	size_t *first;			/* node i's mappings: ids[first[i] .. first[i + 1]) */
	uint32_t *ids;			/* indexes into m, by (ts_ns, index) in each node */
};

struct maps {
	struct xpu_rec_mapping *all;	/* every valid mapping; pids[i].m point into it */
	struct pid_maps *pids;
	size_t npids;
	struct kmap pid_idx;
	uint64_t invalid;		/* mappings with end <= start, skipped */
};

int maps__build(struct maps *ms, const struct xpu_rec_mapping *m, size_t n);
/*
 * The mapping of pid that holds addr at time ts: among those containing addr, the latest with
 * ts_ns <= ts; if all are later (the /proc scan came after the sample), the earliest of them.
 * Mappings of pid 0 are shared by every process (kernel, vdso). NULL when none.
 */
const struct xpu_rec_mapping *maps__find(const struct maps *ms, uint32_t pid, uint64_t addr,
					 uint64_t ts);
/* The mappings of pid (not those of pid 0), or NULL. */
const struct pid_maps *maps__pid(const struct maps *ms, uint32_t pid);
void maps__free(struct maps *ms);

#endif
