// SPDX-License-Identifier: MIT
/* Interval union for GPU busy time (see gpu_interval.h). */
#include <stdbool.h>
#include <stdlib.h>

#include "base/sort.h"
#include "model/gpu_interval.h"

static int cmp_interval(const void *a, const void *b)
{
	const struct gpu_interval *x = a, *y = b;

	if (x->key != y->key)
		return CMP(x->key, y->key);
	if (x->start != y->start)
		return CMP(x->start, y->start);
	return CMP(x->end, y->end);
}

void gpu_intervals_sort(struct gpu_interval *iv, size_t n)
{
	if (n > 1)
		qsort(iv, n, sizeof(*iv), cmp_interval);
}

uint64_t gpu_intervals_union(const struct gpu_interval *iv, size_t n)
{
	uint64_t total = 0, cur_start = 0, cur_end = 0;
	bool open = false;
	size_t i;

	for (i = 0; i < n; i++) {
		if (iv[i].end <= iv[i].start)
			continue;
		if (open && iv[i].start <= cur_end) {
			/* overlapping or touching: extend the current run */
			if (iv[i].end > cur_end)
				cur_end = iv[i].end;
			continue;
		}
		if (open)
			total += cur_end - cur_start;
		cur_start = iv[i].start;
		cur_end = iv[i].end;
		open = true;
	}
	if (open)
		total += cur_end - cur_start;
	return total;
}
