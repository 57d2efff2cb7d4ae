// SPDX-License-Identifier: MIT
/*
 * report/trace/clock_map.c: interpolation between clock-sync pairs, and pairs from a hostile
 * trace whose offsets lie further apart than an int64 holds (make test's sanitizer pass, with
 * float-cast-overflow, fails on an out-of-range conversion).
 */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "trace/clock_map.h"

static uint64_t at(uint64_t m0, uint64_t r0, uint64_t m1, uint64_t r1, uint64_t mono)
{
	struct trace t;
	struct xpu_rec_clock_sync cs[2] = { { m0, r0, 0, 0 }, { m1, r1, 0, 0 } };
	struct clock_map c;
	uint64_t v;

	memset(&t, 0, sizeof(t));
	t.clocks = cs;
	t.nclocks = 2;
	CHECK(!clock_map__init(&c, &t), "init");
	v = clock_map__realtime(&c, mono);
	clock_map__free(&c);
	return v;
}

int main(void)
{
	/* offsets 1000 and 3000: halfway between the pairs, 2000 */
	CHECK(at(1000, 2000, 3000, 6000, 2000) == 4000, "got %llu",
	      (unsigned long long)at(1000, 2000, 3000, 6000, 2000));
	/* outside the pairs: the nearest pair's offset */
	CHECK(at(1000, 2000, 3000, 6000, 10) == 1010, "before");
	CHECK(at(1000, 2000, 3000, 6000, 9000) == 12000, "after");
	/* offsets at both ends of the int64 range: no overflow, the earlier pair's offset */
	(void)at(1, UINT64_MAX / 2 + 1, 3, 1, 2);
	(void)at(1, 2, 3, UINT64_MAX, 2);
	(void)at(1, UINT64_MAX, 3, 2, 2);
	/*
	 * offsets 0 and INT64_MAX, at a time whose fraction of the way rounds to 1.0 in a double:
	 * the interpolated part is 2^63, past an int64 (the conversion the sanitizer catches)
	 */
	CHECK(at(1, 1, 1ull << 62, (1ull << 62) + (uint64_t)INT64_MAX, (1ull << 62) - 1) ==
	      (1ull << 62) - 1, "the earlier pair's offset, 0");
	return unit_finish();
}
