// SPDX-License-Identifier: MIT
/*
 * Two functions with a known split of the CPU time, for tests/e2e/test_diff.sh:
 *
 *   split PERCENT_A SECONDS
 *
 * In cycles of 3 to 17 ms of this thread's CPU time (10 on average), work_a() burns
 * PERCENT_A% of each and work_b() the rest, each in its own loop (no shared callee, so each
 * owns its self time), for SECONDS of its CPU time. The cycle's length changes pseudo-randomly:
 * a fixed 10 ms cycle beat against the sampling period (299 Hz is 2.99 samples a cycle, so the
 * samples' phase crawled through a third of it in 1.5 s) and gave work_a 26% to 37% of the
 * samples at 30%. CPU time, not wall time or iterations: the split and the number of samples
 * hold however loaded the machine is (a run of 1.5 s of the clock beside busy processes got
 * a fraction of the samples, at 299 Hz too few for the test's 10-point margin).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define CYCLE_MIN_NS 3000000ull
#define CYCLE_SPAN_NS 14000000ull
#define CHUNK 20000

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

#define BURN(ns)                                                                         \
	do {                                                                             \
		uint64_t start = clock_ns(CLOCK_THREAD_CPUTIME_ID);                     \
		int i;                                                                   \
		do {                                                                     \
			for (i = 0; i < CHUNK; i++)                                      \
				x = x * 6364136223846793005ull + 1442695040888963407ull; \
		} while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - start < (ns));             \
	} while (0)

static volatile uint64_t x = 1;

__attribute__((noinline)) void work_a(uint64_t ns)
{
	BURN(ns);
}

__attribute__((noinline)) void work_b(uint64_t ns)
{
	BURN(ns);
}

int main(int argc, char **argv)
{
	int pct = argc > 1 ? atoi(argv[1]) : 50;
	double secs = argc > 2 ? atof(argv[2]) : 1;
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + (uint64_t)(secs * 1e9);

	if (pct < 0 || pct > 100)
		return 2;
	uint64_t seed = 88172645463325252ull;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
		uint64_t cycle;

		seed ^= seed << 13;	/* xorshift64: any sequence without a period near the sampling's */
		seed ^= seed >> 7;
		seed ^= seed << 17;
		cycle = CYCLE_MIN_NS + seed % CYCLE_SPAN_NS;
		work_a(cycle * pct / 100);
		work_b(cycle * (100 - pct) / 100);
	}
	return 0;
}
