// SPDX-License-Identifier: MIT
/*
 * Fixed CPU work for overhead benchmarks: a number of iterations (not a duration), spread over
 * a few frames of call depth, single-threaded. Prints its own elapsed time, so the benchmark
 * measures the target's slowdown and not the profiler's start-up.
 *
 *   workload [MILLION_ITERATIONS]   (default 600)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;

__attribute__((noinline)) static uint64_t leaf(uint64_t x, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noinline)) static uint64_t middle(uint64_t x, uint64_t n)
{
	return leaf(x, n / 2) ^ leaf(x + 1, n - n / 2);
}

__attribute__((noinline)) static uint64_t outer(uint64_t x, uint64_t n)
{
	return middle(x, n);
}

int main(int argc, char **argv)
{
	uint64_t millions = argc > 1 ? strtoull(argv[1], NULL, 10) : 600;
	struct timespec a, b;
	uint64_t x = 1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (uint64_t m = 0; m < millions; m++)
		x = outer(x, 1000000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sink = x;
	printf("elapsed_ns %llu\n",
	       (unsigned long long)((b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec));
	return 0;
}
