// SPDX-License-Identifier: MIT
/*
 * Fixed CPU work for overhead benchmarks: a number of iterations (not a duration), spread over
 * a few frames of call depth, single-threaded. Prints its own elapsed time, so the benchmark
 * measures the target's slowdown and not the profiler's start-up.
 *
 *   workload [MILLION_ITERATIONS [STACK_KIB]]   (default 600, 0)
 *
 * STACK_KIB puts a frame of that size between main and the work, so that every sample's stack
 * reaches that far: how -g dwarf,SIZE,TOP costs when the copy does not reach the stack top.
 */
#include <stdint.h>
#include <stdio.h>
#include <alloca.h>
#include <stdlib.h>
#include <string.h>
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

__attribute__((noinline)) static uint64_t work(uint64_t millions)
{
	uint64_t x = 1;

	for (uint64_t m = 0; m < millions; m++)
		x = outer(x, 1000000);
	return x;
}

/* touched, so every page is mapped when a sampler reads the stack */
__attribute__((noinline)) static uint64_t below_frame(uint64_t millions, size_t kib)
{
	char *pad = alloca(kib * 1024);

	memset(pad, 1, kib * 1024);
	__asm__ volatile("" : : "r"(pad) : "memory");
	return work(millions) + (uint64_t)pad[kib * 512];
}

int main(int argc, char **argv)
{
	uint64_t millions = argc > 1 ? strtoull(argv[1], NULL, 10) : 600;
	size_t kib = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;
	struct timespec a, b;

	if (kib > 4096) {
		fprintf(stderr, "workload: STACK_KIB at most 4096\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	sink = kib ? below_frame(millions, kib) : work(millions);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("elapsed_ns %llu\n",
	       (unsigned long long)((b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec));
	return 0;
}
