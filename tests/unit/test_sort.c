// SPDX-License-Identifier: MIT
/*
 * report/base/sort.h: CMP() on signed, unsigned and 64-bit values at their extremes (where a
 * subtraction would overflow or wrap), and upper_bound() against a linear scan over every key
 * of arrays with runs of equal values, empty and one-element arrays included.
 */
#include <stdint.h>

#include "base/sort.h"
#include "unit.h"

struct at {
	const uint64_t *v;
	uint64_t key;
};

static bool at_most(size_t i, const void *arg)
{
	const struct at *at = arg;

	return at->v[i] <= at->key;
}

static bool below(size_t i, const void *arg)
{
	const struct at *at = arg;

	return at->v[i] < at->key;
}

static void bounds(const uint64_t *v, size_t n)
{
	uint64_t key;

	for (key = 0; key <= 12; key++) {
		size_t up = 0, low = 0;

		while (up < n && v[up] <= key)
			up++;
		while (low < n && v[low] < key)
			low++;
		CHECK(upper_bound(n, at_most, &(struct at){ v, key }) == up, "n %zu key %llu: upper",
		      n, (unsigned long long)key);
		CHECK(upper_bound(n, below, &(struct at){ v, key }) == low, "n %zu key %llu: lower",
		      n, (unsigned long long)key);
	}
}

int main(void)
{
	static const uint64_t runs[] = { 1, 1, 3, 3, 3, 5, 8, 8, 11 };
	volatile int32_t smin = INT32_MIN, smax = INT32_MAX;
	volatile uint64_t zero = 0, umax = UINT64_MAX;
	size_t n;

	CHECK(CMP(smin, smax) == -1 && CMP(smax, smin) == 1, "int extremes");
	CHECK(CMP(umax, zero) == 1 && CMP(zero, umax) == -1, "uint64 extremes");
	CHECK(CMP(umax, umax) == 0 && CMP(smin, smin) == 0, "equal values");
	for (n = 0; n <= sizeof(runs) / sizeof(runs[0]); n++)
		bounds(runs, n);
	return unit_finish();
}
