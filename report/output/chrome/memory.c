// SPDX-License-Identifier: MIT
/* The chrome output's GPU memory counter: per device, the bytes allocated and not yet freed. */
#include <errno.h>
#include <stdlib.h>

#include "model/gpu_mem.h"
#include "output/chrome/chrome.h"

static void memory_counter(struct chrome *c, uint32_t d, uint64_t mono, uint64_t bytes)
{
	chrome__begin(c, 'C', GPU_PID_BASE + d, 0, mono);
	chrome__put(c, ",\"name\":\"gpu memory\",\"args\":{\"allocated_bytes\":%llu}",
		    (unsigned long long)bytes);
	chrome__end(c);
}

/*
 * A counter per device of the bytes allocated and not yet freed: the allocations that pass
 * the filter and the releases paired with them (model/gpu_mem.h), all processes together.
 * Changes of a device that fall on one point of the output's time grid make one value there
 * (the last): a counter that shows two values at one time is one a viewer may draw either way.
 */
int chrome__emit_memory(struct chrome *c)
{
	const struct gpu_mem *m = session__gpu_mem(c->ses);
	const struct xpu_rec_gpu_memory *recs = c->t->memories;
	uint64_t *cur = NULL, *pend_grid = NULL, *pend_mono = NULL;
	uint32_t *by = NULL, d;
	size_t i, n = 0;
	int err = -ENOMEM;

	if (!m)
		return -ENOMEM;
	if (!m->n)
		return 0;
	by = calloc(m->n, sizeof(*by));
	if (!by)
		goto out;
	for (i = 0; i < m->n; i++)
		if (m->r[i].keep || (recs[i].op == XPU_GPU_MEM_FREE && m->r[i].pair &&
				     m->r[m->r[i].pair - 1].keep))
			by[n++] = (uint32_t)i;
	qsort_r(by, n, sizeof(*by), gpu_mem__cmp_time, (void *)recs);
	for (i = 0; i < n; i++)
		if (chrome__device(c, recs[by[i]].device, &d))
			goto out;
	cur = calloc(c->ndevs + 1, sizeof(*cur));
	pend_grid = calloc(c->ndevs + 1, sizeof(*pend_grid));
	pend_mono = calloc(c->ndevs + 1, sizeof(*pend_mono));
	if (!cur || !pend_grid || !pend_mono)
		goto out;
	for (i = 0; i < n; i++) {
		const struct xpu_rec_gpu_memory *x = &recs[by[i]];
		uint64_t b = x->op == XPU_GPU_MEM_ALLOC ? x->bytes : recs[m->r[by[i]].pair - 1].bytes;
		uint64_t g = grid_ns(chrome__realtime(c, x->ts_ns));

		if (out__failed(c->out)) {
			err = -EIO;
			goto out;
		}
		chrome__device(c, x->device, &d);
		/* a value waiting at an earlier grid point is final now */
		if (pend_mono[d] && pend_grid[d] != g)
			memory_counter(c, d, pend_mono[d], cur[d]);
		if (x->op == XPU_GPU_MEM_ALLOC)
			cur[d] += b;
		else
			cur[d] -= b <= cur[d] ? b : cur[d];
		pend_grid[d] = g;
		pend_mono[d] = x->ts_ns ? x->ts_ns : 1;
	}
	for (d = 0; d <= c->ndevs; d++)
		if (pend_mono[d])
			memory_counter(c, d, pend_mono[d], cur[d]);
	err = 0;
out:
	free(by);
	free(cur);
	free(pend_grid);
	free(pend_mono);
	return err;
}
