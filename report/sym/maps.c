// SPDX-License-Identifier: MIT
/*
 * Mappings of one pid can overlap over time (munmap + mmap, dlclose + dlopen, exec), so each
 * pid keeps all of them sorted by start with a running maximum of end: a lookup walks back from
 * the last start <= addr only while an earlier mapping could still reach addr.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sym/maps.h"

static int cmp_mapping(const void *a, const void *b)
{
	const struct xpu_rec_mapping *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->ts_ns != y->ts_ns)
		return x->ts_ns < y->ts_ns ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return 0;
}

int maps__build(struct maps *ms, const struct xpu_rec_mapping *m, size_t n)
{
	struct xpu_rec_mapping *all;
	uint64_t *maxend;
	size_t i, j, nv = 0;

	memset(ms, 0, sizeof(*ms));
	all = calloc(n ? n : 1, sizeof(*all));
	maxend = calloc(n ? n : 1, sizeof(*maxend));
	ms->pids = calloc(n ? n : 1, sizeof(*ms->pids));
	if (!all || !maxend || !ms->pids)
		goto nomem;
	for (i = 0; i < n; i++) {
		if (m[i].end <= m[i].start) {
			ms->invalid++;
			continue;
		}
		all[nv++] = m[i];
	}
	if (nv)
		qsort(all, nv, sizeof(*all), cmp_mapping);
	for (i = 0; i < nv; i = j) {
		struct pid_maps *pm = &ms->pids[ms->npids];
		uint64_t mx = 0;

		for (j = i; j < nv && all[j].pid == all[i].pid; j++) {
			if (all[j].end > mx)
				mx = all[j].end;
			maxend[j] = mx;
		}
		pm->pid = all[i].pid;
		pm->m = all + i;
		pm->maxend = maxend + i;
		pm->n = j - i;
		if (!kmap__put(&ms->pid_idx, pm->pid, 0, ms->npids, NULL))
			goto nomem;
		ms->npids++;
	}
	/* the first pid_maps owns the arrays (freed through pids[0]) */
	if (!ms->npids) {
		free(all);
		free(maxend);
	}
	return 0;
nomem:
	free(all);
	free(maxend);
	free(ms->pids);
	ms->pids = NULL;
	ms->npids = 0;
	return -ENOMEM;
}

static const struct xpu_rec_mapping *find_in(const struct pid_maps *pm, uint64_t addr, uint64_t ts)
{
	const struct xpu_rec_mapping *before = NULL, *after = NULL;
	size_t lo = 0, hi = pm->n;

	/* first index with start > addr */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (pm->m[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo > 0 && pm->maxend[lo - 1] > addr) {
		const struct xpu_rec_mapping *c = &pm->m[--lo];

		if (addr >= c->end)
			continue;
		if (c->ts_ns <= ts) {
			if (!before || c->ts_ns > before->ts_ns)
				before = c;
		} else if (!after || c->ts_ns < after->ts_ns) {
			after = c;
		}
	}
	return before ? before : after;
}

const struct xpu_rec_mapping *maps__find(const struct maps *ms, uint32_t pid, uint64_t addr,
					 uint64_t ts)
{
	const struct xpu_rec_mapping *r = NULL;
	uint32_t *v;

	v = kmap__get(&ms->pid_idx, pid, 0);
	if (v)
		r = find_in(&ms->pids[*v], addr, ts);
	if (!r && pid) {
		v = kmap__get(&ms->pid_idx, 0, 0);
		if (v)
			r = find_in(&ms->pids[*v], addr, ts);
	}
	return r;
}

void maps__free(struct maps *ms)
{
	if (ms->npids) {
		free(ms->pids[0].m);
		free(ms->pids[0].maxend);
	}
	free(ms->pids);
	kmap__free(&ms->pid_idx);
	memset(ms, 0, sizeof(*ms));
}
