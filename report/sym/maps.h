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
	uint64_t *maxend;		/* maxend[i]: largest end among m[0..i] */
	size_t n;
};

struct maps {
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
void maps__free(struct maps *ms);

#endif
