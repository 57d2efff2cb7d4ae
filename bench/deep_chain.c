// SPDX-License-Identifier: MIT
/*
 * Fixed CPU work at a chosen call depth, for bench/cfi_prog_cost.py: build it without frame
 * pointers (-O2 -fomit-frame-pointer) so only .eh_frame describes its frames. The chain
 * alternates between two functions with frames of different sizes, each calling the next in a
 * non-tail position, so every level keeps its own frame and return address.
 *
 *   deep_chain DEPTH MILLION_ITERATIONS      prints elapsed_ns N
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

static uint64_t level_b(int depth, uint64_t x, uint64_t n);

__attribute__((noinline)) static uint64_t level_a(int depth, uint64_t x, uint64_t n)
{
	volatile uint64_t pad[3] = { x, n, (uint64_t)depth };

	if (depth <= 0)
		return leaf(x, n) ^ pad[0];
	return level_b(depth - 1, x + pad[2], n) + 1;
}

__attribute__((noinline)) static uint64_t level_b(int depth, uint64_t x, uint64_t n)
{
	volatile uint64_t pad[7] = { x, n };

	if (depth <= 0)
		return leaf(x, n) ^ pad[1];
	return level_a(depth - 1, x ^ pad[0], n) * 3;
}

int main(int argc, char **argv)
{
	int depth = argc > 1 ? atoi(argv[1]) : 100;
	uint64_t millions = argc > 2 ? strtoull(argv[2], NULL, 10) : 600, x = 1;
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t m = 0; m < millions; m++)
		x = level_a(depth, x, 1000000);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	sink = x;
	printf("elapsed_ns %lld\n",
	       (long long)(t1.tv_sec - t0.tv_sec) * 1000000000ll + (t1.tv_nsec - t0.tv_nsec));
	return 0;
}
