// SPDX-License-Identifier: MIT
/*
 * The perfetto output's GPU busy counters: per device, busy % of kernels and of copies and
 * memsets, two counter tracks, with the chrome output's values at its points (both drawn
 * from model/gpu_busy.h over the intervals gpu.c drew).
 */
#include <errno.h>

#include "model/gpu_busy.h"
#include "output/perfetto/perfetto.h"

static int value(struct perfetto *pf, uint64_t track, uint64_t ts, double v)
{
	int err;

	if (!track)
		return -ENOMEM;
	pf__use_machine(pf, pf__track_machine(pf, track));
	pf__packet_begin(pf, ts);
	pb__begin(&pf->pkt, PKT_TRACK_EVENT);
	pb__varint(&pf->pkt, TE_TYPE, TE_TYPE_COUNTER);
	pb__varint(&pf->pkt, TE_TRACK_UUID, track);
	pb__double(&pf->pkt, TE_DOUBLE_COUNTER_VALUE, v);
	pb__end(&pf->pkt);
	err = pf__packet_end(pf, true);
	pf->n.counters += !err;
	return err;
}

static int busy_point(void *ctx, uint32_t gpu, uint64_t ts, double kernels, double copies)
{
	struct perfetto *pf = ctx;
	uint32_t device = pf->devs[gpu];
	/* the descriptors first: each is its own packet */
	uint64_t k = pf__busy_track(pf, device, false), c = pf__busy_track(pf, device, true);
	int err = value(pf, k, ts, kernels);

	return err ? err : value(pf, c, ts, copies);
}

int pf__emit_counters(struct perfetto *pf)
{
	const struct filter *f = &pf->ses->filter;

	return gpu_busy__points(pf->iv, pf->niv, f->has_range, f->r0, f->r1, busy_point, pf);
}
