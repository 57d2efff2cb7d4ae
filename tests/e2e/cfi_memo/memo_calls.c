// SPDX-License-Identifier: MIT
/*
 * Calls libxpu-cupti.so's launch marker N times through call chains that change in the ways
 * that can fool a walk reusing the previous one's outer frames: the recursion depth changes
 * (the match moves), and the outer caller changes between site_a() and site_b(), whose frames
 * have the same size, so that the frames below them stand at the same stack addresses with the
 * same return addresses and only a return-address word further out differs. Prints, per
 * (site, depth), how many calls it made: the launch stacks xpu-record took must say the same.
 *
 *   memo_calls LIBXPU_CUPTI N
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*marker_fn)(uint32_t corr_id, uint32_t cbid, uint32_t domain);

#define DEPTHS 3
static unsigned long made[2][DEPTHS];
static volatile int sink;

/* the empty asm after each call keeps it a call, not a jump (no tail calls) */
__attribute__((noinline)) static void leaf(marker_fn m, uint32_t i)
{
	m(i, 211, 1);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void descend(marker_fn m, uint32_t i, int d)
{
	if (d > 0)
		descend(m, i, d - 1);
	else
		leaf(m, i);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_a(marker_fn m, uint32_t i, int d)
{
	descend(m, i, d);
	sink = 1;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void site_b(marker_fn m, uint32_t i, int d)
{
	descend(m, i, d);
	sink = 2;
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long n, i;
	marker_fn m;
	void *lib;

	if (argc != 3) {
		fprintf(stderr, "usage: memo_calls LIBXPU_CUPTI N\n");
		return 2;
	}
	n = strtoul(argv[2], NULL, 10);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	m = lib ? (marker_fn)dlsym(lib, "xpu_cupti_api_enter") : NULL;
	if (!m) {
		fprintf(stderr, "memo_calls: %s\n", dlerror());
		return 1;
	}
	for (i = 0; i < n; i++) {
		/* the site changes every 4 calls, the depth every call */
		int site = (i / 4) % 2, d = (int)(i % DEPTHS);

		if (site)
			site_b(m, (uint32_t)i + 1, d);
		else
			site_a(m, (uint32_t)i + 1, d);
		made[site][d]++;
	}
	for (i = 0; i < 2 * DEPTHS; i++)
		printf("%s %lu %lu\n", i / DEPTHS ? "site_b" : "site_a", i % DEPTHS,
		       made[i / DEPTHS][i % DEPTHS]);
	return 0;
}
