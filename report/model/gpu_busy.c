// SPDX-License-Identifier: MIT
/* Busy % of each GPU over fixed buckets (gpu_busy.h), for the timelines' counters. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/gpu_busy.h"

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

int gpu_busy__points(struct gpu_interval *iv, size_t n, bool has_range, uint64_t r0, uint64_t r1,
		     gpu_busy_point_fn point, void *ctx)
{
	uint64_t lo = UINT64_MAX, hi = 0, w, base;
	double *b[2] = { NULL, NULL };
	size_t nb, i, j;
	int err = 0;

	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		lo = iv[i].start < lo ? iv[i].start : lo;
		hi = iv[i].end > hi ? iv[i].end : hi;
	}
	if (has_range) {
		lo = lo < r0 ? r0 : lo;
		hi = hi > r1 ? r1 : hi;
	}
	if (hi <= lo)
		hi = lo + 1;
	w = (hi - lo) / GPU_BUSY_BUCKETS + 1;
	w = w < GPU_BUSY_MIN_BUCKET_NS ? GPU_BUSY_MIN_BUCKET_NS : w;
	base = lo;
	nb = (hi - lo) / w + 1;
	b[0] = calloc(nb, sizeof(double));
	b[1] = calloc(nb, sizeof(double));
	if (!b[0] || !b[1]) {
		err = -ENOMEM;
		goto out;
	}
	gpu_intervals_sort(iv, n);
	for (i = 0; i < n && !err; i = j) {
		uint32_t gpu = iv[i].key >> 1;
		double last[2] = { -1, -1 };
		size_t k;

		memset(b[0], 0, nb * sizeof(double));
		memset(b[1], 0, nb * sizeof(double));
		for (j = i; j < n && iv[j].key >> 1 == gpu;) {
			/* merge overlapping intervals of one kind, then add the union */
			uint32_t key = iv[j].key, kind = key & 1;
			uint64_t s = iv[j].start, e = iv[j].end;

			for (j++; j < n && iv[j].key == key && iv[j].start <= e; j++)
				e = iv[j].end > e ? iv[j].end : e;
			if (has_range) {
				s = s < r0 ? r0 : s;
				e = e > r1 ? r1 : e;
			}
			if (e > s)
				bucket_add(b[kind], nb, base, w, s, e);
		}
		for (k = 0; k <= nb && !err; k++) {
			double v0 = k < nb ? 100.0 * b[0][k] / w : 0, v1 = k < nb ? 100.0 * b[1][k] / w : 0;

			/* one decimal is what a counter track can show */
			v0 = (double)(long long)(v0 * 10 + 0.5) / 10;
			v1 = (double)(long long)(v1 * 10 + 0.5) / 10;
			if (v0 == last[0] && v1 == last[1])
				continue;
			last[0] = v0;
			last[1] = v1;
			err = point(ctx, gpu, base + k * w, v0, v1);
		}
	}
out:
	free(b[0]);
	free(b[1]);
	return err;
}
