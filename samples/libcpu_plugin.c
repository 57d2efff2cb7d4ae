// SPDX-License-Identifier: MIT
/*
 * Loaded by cpu_burn with dlopen(), so its samples can only be symbolized if xpu-record
 * notices the mapping that appears at run time.
 */
#include <stdint.h>
#include <time.h>

/* Burns ns of the calling thread's CPU time, like spin() in cpu_burn.c. */
__attribute__((noinline)) uint64_t plugin_work(uint64_t ns)
{
	volatile uint64_t x = 1;
	struct timespec ts;
	uint64_t start, now, i;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	start = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	do {
		for (i = 0; i < 20000; i++)
			x = x * 2862933555777941757ull + 3037000493ull;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
	} while (now - start < ns);
	return x;
}
