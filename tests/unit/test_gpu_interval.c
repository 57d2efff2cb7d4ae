// SPDX-License-Identifier: MIT
/* Unit tests of the GPU busy-time interval union (report/model/gpu_interval.c). */
#include <string.h>

#include "model/gpu_interval.h"
#include "unit.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t union_of(struct gpu_interval *iv, size_t n)
{
	gpu_intervals_sort(iv, n);
	return gpu_intervals_union(iv, n);
}

int main(void)
{
	struct gpu_interval disjoint[] = { { 30, 40, 0 }, { 0, 10, 0 }, { 15, 20, 0 } };
	struct gpu_interval nested[] = { { 0, 100, 0 }, { 10, 20, 0 }, { 50, 60, 0 } };
	struct gpu_interval overlap[] = { { 0, 10, 0 }, { 5, 15, 0 }, { 12, 30, 0 } };
	struct gpu_interval touching[] = { { 10, 20, 0 }, { 0, 10, 0 } };
	struct gpu_interval empty[] = { { 10, 10, 0 }, { 20, 5, 0 }, { 0, 3, 0 } };
	struct gpu_interval same[] = { { 5, 9, 0 }, { 5, 9, 0 }, { 5, 7, 0 } };
	struct gpu_interval keyed[] = { { 0, 10, 1 }, { 5, 20, 0 }, { 0, 10, 0 }, { 8, 9, 1 } };
	struct gpu_interval big[] = { { UINT64_MAX - 10, UINT64_MAX, 0 }, { 0, 1, 0 } };

	CHECK(gpu_intervals_union(NULL, 0) == 0, "no intervals");
	CHECK(union_of(disjoint, N(disjoint)) == 25, "disjoint: %llu",
	      (unsigned long long)gpu_intervals_union(disjoint, N(disjoint)));
	CHECK(union_of(nested, N(nested)) == 100, "nested");
	CHECK(union_of(overlap, N(overlap)) == 30, "chained overlaps");
	CHECK(union_of(touching, N(touching)) == 20, "touching");
	CHECK(union_of(empty, N(empty)) == 3, "empty and inverted intervals add nothing");
	CHECK(union_of(same, N(same)) == 4, "duplicates");
	CHECK(union_of(big, N(big)) == 11, "near UINT64_MAX");

	/* sorted by key first: each key's run is unioned on its own */
	gpu_intervals_sort(keyed, N(keyed));
	CHECK(keyed[0].key == 0 && keyed[1].key == 0 && keyed[2].key == 1, "sort by key");
	CHECK(keyed[0].start == 0 && keyed[1].start == 5, "sort by start within a key");
	CHECK(gpu_intervals_union(keyed, 2) == 20, "key 0");
	CHECK(gpu_intervals_union(keyed + 2, 2) == 10, "key 1");
	return unit_finish();
}
