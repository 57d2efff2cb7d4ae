/* SPDX-License-Identifier: MIT */
/*
 * Sorting and searching, one way throughout the report: comparators are 3-way CMP()s chained
 * key by key and take their context as qsort_r()'s argument (no static sort state), and every
 * binary search is upper_bound() over a predicate.
 */
#ifndef XPU_REPORT_BASE_SORT_H
#define XPU_REPORT_BASE_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

/* -1, 0 or 1 as a is below, equal to or above b (scalars of one type; each read twice). */
#define CMP(a, b) (((a) > (b)) - ((a) < (b)))

/*
 * The first index in [0, n) at which at_most(i, arg) is false, else n. at_most must hold for
 * a prefix of the indexes and fail after it: "element i is at most the key" of an array sorted
 * by that key (arg holds the array and the key) makes it an upper bound, "below the key" a
 * lower bound. Inline, so that a static predicate is inlined into the search.
 */
static inline size_t upper_bound(size_t n, bool (*at_most)(size_t i, const void *arg),
				 const void *arg)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (at_most(mid, arg))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
