// SPDX-License-Identifier: MIT
/* Monotonic to realtime (see clock_map.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/sort.h"
#include "trace/clock_map.h"

static int cmp_pair(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;	/* mono is first */

	return CMP(x, y);
}

struct at {
	const struct clock_map *c;
	uint64_t mono;
};

static bool pair_at_most(size_t i, const void *arg)
{
	const struct at *at = arg;

	return at->c->p[i].mono <= at->mono;
}

int clock_map__init(struct clock_map *c, const struct trace *t)
{
	size_t i, n = 0;

	memset(c, 0, sizeof(*c));
	c->p = calloc(t->nclocks ? t->nclocks : 1, sizeof(*c->p));
	if (!c->p)
		return -ENOMEM;
	for (i = 0; i < t->nclocks; i++) {
		if (!t->clocks[i].mono_ns || !t->clocks[i].realtime_ns)
			continue;	/* a zero read is a writer bug, not a time */
		c->p[n].mono = t->clocks[i].mono_ns;
		c->p[n].real = t->clocks[i].realtime_ns;
		n++;
	}
	if (n)
		qsort(c->p, n, sizeof(*c->p), cmp_pair);
	/* equal monotonic reads: keep the first, interpolation needs distinct points */
	for (i = 1, c->n = n ? 1 : 0; i < n; i++)
		if (c->p[i].mono != c->p[c->n - 1].mono)
			c->p[c->n++] = c->p[i];
	if (c->n == 1)
		c->fixed_offset = (int64_t)(c->p[0].real - c->p[0].mono);
	else if (!c->n && t->has_session && t->session.start_realtime_ns)
		c->fixed_offset = (int64_t)(t->session.start_realtime_ns - t->session.start_mono_ns);
	return 0;
}

uint64_t clock_map__realtime(const struct clock_map *c, uint64_t mono)
{
	size_t lo, hi;
	int64_t oa, ob, d, off;
	double part;

	if (c->n < 2)
		return mono + c->fixed_offset;
	if (mono <= c->p[0].mono)
		return mono + (int64_t)(c->p[0].real - c->p[0].mono);
	if (mono >= c->p[c->n - 1].mono)
		return mono + (int64_t)(c->p[c->n - 1].real - c->p[c->n - 1].mono);
	/* p[lo].mono <= mono < p[hi].mono, in the middle of the pairs */
	hi = upper_bound(c->n, pair_at_most, &(struct at){ c, mono });
	lo = hi - 1;
	oa = (int64_t)(c->p[lo].real - c->p[lo].mono);
	ob = (int64_t)(c->p[hi].real - c->p[hi].mono);
	/*
	 * A hostile trace's offsets may be further apart than an int64 holds, and a double out of
	 * an int64's range may not be converted (undefined): then the earlier pair's offset holds.
	 */
	if (__builtin_sub_overflow(ob, oa, &d))
		d = 0;
	part = (double)d * (double)(mono - c->p[lo].mono) / (double)(c->p[hi].mono - c->p[lo].mono);
	if (!(part < 0x1p62 && part > -0x1p62) || __builtin_add_overflow(oa, (int64_t)part, &off))
		off = oa;
	return mono + (uint64_t)off;
}

void clock_map__free(struct clock_map *c)
{
	free(c->p);
	memset(c, 0, sizeof(*c));
}
