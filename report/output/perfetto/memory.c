// SPDX-License-Identifier: MIT
/*
 * The perfetto output's GPU memory counter: per device, the bytes allocated and not yet freed,
 * from the same allocations and releases as the chrome output's (output/chrome/memory.c):
 * those that pass the filter and the releases paired with them, all processes together.
 * Changes at one instant make one value (the last).
 */
#include <errno.h>
#include <stdlib.h>

#include "model/gpu_mem.h"
#include "output/perfetto/perfetto.h"

static int counter(struct perfetto *pf, uint64_t track, uint64_t ts, uint64_t bytes)
{
	int err;

	pf__use_machine(pf, pf__track_machine(pf, track));
	pf__packet_begin(pf, ts);
	pb__begin(&pf->pkt, PKT_TRACK_EVENT);
	pb__varint(&pf->pkt, TE_TYPE, TE_TYPE_COUNTER);
	pb__varint(&pf->pkt, TE_TRACK_UUID, track);
	pb__sint(&pf->pkt, TE_COUNTER_VALUE, (int64_t)(bytes > INT64_MAX ? INT64_MAX : bytes));
	pb__end(&pf->pkt);
	err = pf__packet_end(pf, true);
	pf->n.counters += !err;
	return err;
}

/* A device's running total, and the value waiting at its last instant. */
struct dev_mem {
	uint32_t device;
	uint64_t track, cur, pend_ts;
};

int pf__emit_memory(struct perfetto *pf)
{
	const struct gpu_mem *m = session__gpu_mem(pf->ses);
	const struct xpu_rec_gpu_memory *recs = pf->t->memories;
	struct dev_mem *dev = NULL;
	size_t i, k, n = 0, ndev = 0, dev_cap = 0;
	uint32_t *by = NULL;
	struct kmap idx = { 0 };
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
	for (i = 0; i < n; i++) {
		const struct xpu_rec_gpu_memory *x = &recs[by[i]];
		uint64_t b = x->op == XPU_GPU_MEM_ALLOC ? x->bytes : recs[m->r[by[i]].pair - 1].bytes;
		struct dev_mem *d;
		uint32_t *v;
		bool ins;

		/* a map, not a scan: a hostile file may name many devices */
		v = kmap__put(&idx, x->device, 0, (uint32_t)ndev, &ins);
		if (!v)
			goto out;
		if (ins) {
			struct dev_mem nd = { .device = x->device };

			nd.track = pf__memory_track(pf, x->device);
			if (!nd.track || VEC_PUSH(dev, ndev, dev_cap, nd))
				goto out;
		}
		d = &dev[*v];
		/* a value waiting at an earlier instant is final now */
		if (d->pend_ts && d->pend_ts != x->ts_ns && (err = counter(pf, d->track, d->pend_ts, d->cur)))
			goto out;
		err = -ENOMEM;
		if (x->op == XPU_GPU_MEM_ALLOC)
			d->cur += b;
		else
			d->cur -= b <= d->cur ? b : d->cur;
		d->pend_ts = x->ts_ns ? x->ts_ns : 1;
	}
	err = 0;
	for (k = 0; k < ndev && !err; k++)
		if (dev[k].pend_ts)
			err = counter(pf, dev[k].track, dev[k].pend_ts, dev[k].cur);
out:
	kmap__free(&idx);
	free(by);
	free(dev);
	return err;
}
