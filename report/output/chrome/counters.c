// SPDX-License-Identifier: MIT
/*
 * The chrome output's GPU counters: per device, busy % of kernels and of copies and memsets,
 * from the intervals gpu.c drew (model/gpu_interval.h sorts them by device and kind).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "output/chrome/chrome.h"

/* Adds [s, e) to buckets of width w starting at base. */
static void bucket_add(double *b, size_t nb, uint64_t base, uint64_t w, uint64_t s, uint64_t e)
{
	size_t i;

	if (e <= base)
		return;
	if (s < base)
		s = base;
	for (i = (s - base) / w; i < nb && s < e; i++) {
		uint64_t be = base + (i + 1) * w, x = e < be ? e : be;

		b[i] += (double)(x - s);
		s = x;
	}
}

/*
 * Busy % per device: the union of kernel (and of copy/memset) intervals over fixed buckets,
 * at most COUNTER_BUCKETS of them; a point is written only where the value changes.
 */
int chrome__emit_counters(struct chrome *c)
{
	uint64_t lo = UINT64_MAX, hi = 0, w, base;
	double *b[2] = { NULL, NULL };
	size_t nb, i, j;
	int err = 0;

	if (!c->niv)
		return 0;
	for (i = 0; i < c->niv; i++) {
		lo = c->iv[i].start < lo ? c->iv[i].start : lo;
		hi = c->iv[i].end > hi ? c->iv[i].end : hi;
	}
	if (c->f->has_range) {
		lo = lo < c->f->r0 ? c->f->r0 : lo;
		hi = hi > c->f->r1 ? c->f->r1 : hi;
	}
	if (hi <= lo)
		hi = lo + 1;
	w = (hi - lo) / COUNTER_BUCKETS + 1;
	w = w < COUNTER_MIN_BUCKET_NS ? COUNTER_MIN_BUCKET_NS : w;
	base = lo;
	nb = (hi - lo) / w + 1;
	b[0] = calloc(nb, sizeof(double));
	b[1] = calloc(nb, sizeof(double));
	if (!b[0] || !b[1]) {
		err = -ENOMEM;
		goto out;
	}
	gpu_intervals_sort(c->iv, c->niv);
	for (i = 0; i < c->niv; i = j) {
		uint32_t gpu = c->iv[i].key >> 1;
		double last[2] = { -1, -1 };
		size_t k;

		memset(b[0], 0, nb * sizeof(double));
		memset(b[1], 0, nb * sizeof(double));
		for (j = i; j < c->niv && c->iv[j].key >> 1 == gpu;) {
			/* merge overlapping intervals of one kind, then add the union */
			uint32_t key = c->iv[j].key, kind = key & 1;
			uint64_t s = c->iv[j].start, e = c->iv[j].end;

			for (j++; j < c->niv && c->iv[j].key == key && c->iv[j].start <= e; j++)
				e = c->iv[j].end > e ? c->iv[j].end : e;
			if (c->f->has_range) {
				s = s < c->f->r0 ? c->f->r0 : s;
				e = e > c->f->r1 ? c->f->r1 : e;
			}
			if (e > s)
				bucket_add(b[kind], nb, base, w, s, e);
		}
		for (k = 0; k <= nb; k++) {
			double v0 = k < nb ? 100.0 * b[0][k] / w : 0, v1 = k < nb ? 100.0 * b[1][k] / w : 0;

			/* one decimal is what a counter track can show */
			v0 = (double)(long long)(v0 * 10 + 0.5) / 10;
			v1 = (double)(long long)(v1 * 10 + 0.5) / 10;
			if (v0 == last[0] && v1 == last[1])
				continue;
			last[0] = v0;
			last[1] = v1;
			chrome__begin(c, 'C', GPU_PID_BASE + gpu, 0, base + k * w);
			chrome__put(c, ",\"name\":\"busy %%\",\"args\":{\"kernels\":%.1f,\"copies\":%.1f}",
				    v0, v1);
			chrome__end(c);
		}
	}
out:
	free(b[0]);
	free(b[1]);
	return err;
}
