// SPDX-License-Identifier: MIT
/*
 * Two functions with a known split of the CPU time, for tests/e2e/test_diff.sh:
 *
 *   split PERCENT_A SECONDS
 *
 * Every 10 ms of this thread's CPU time, work_a() burns PERCENT_A% of it and work_b() the
 * rest, each in its own loop (no shared callee, so each owns its self time), for SECONDS of
 * its CPU time. CPU time, not wall time or iterations: the split and the number of samples
 * hold however loaded the machine is (a run of 1.5 s of the clock beside busy processes got
 * a fraction of the samples, at 299 Hz too few for the test's 10-point margin).
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define CYCLE_NS 10000000ull
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
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end) {
		work_a(CYCLE_NS * pct / 100);
		work_b(CYCLE_NS * (100 - pct) / 100);
	}
	return 0;
}
