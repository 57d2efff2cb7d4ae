// SPDX-License-Identifier: MIT
/*
 * Calls the launch marker of libxpu-cupti.so, xpu_cupti_api_enter(), N times, as the CUPTI
 * callback does once per CUDA launch, and prints the loop's elapsed time. Under xpu-record every
 * call is a uprobe hit that takes a stack, so the difference against an unprofiled run is the
 * recorder's cost per launch, measurable without a GPU.
 *
 *   marker_bench LIBXPU_CUPTI [CALLS]     (default 200000)
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef void (*marker_fn)(uint32_t corr_id, uint32_t cbid, uint32_t domain);

__attribute__((noinline)) static void launch_site(marker_fn marker, uint32_t i)
{
	marker(i + 1, 211, 1);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	unsigned long calls = argc > 2 ? strtoul(argv[2], NULL, 10) : 200000;
	struct timespec a, b;
	marker_fn marker;
	void *lib;

	if (argc < 2) {
		fprintf(stderr, "usage: marker_bench LIBXPU_CUPTI [CALLS]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "marker_bench: %s\n", dlerror());
		return 1;
	}
	marker = (marker_fn)dlsym(lib, "xpu_cupti_api_enter");
	if (!marker) {
		fprintf(stderr, "marker_bench: no xpu_cupti_api_enter in %s\n", argv[1]);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (unsigned long i = 0; i < calls; i++)
		launch_site(marker, (uint32_t)i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("calls %lu\nelapsed_ns %llu\n", calls,
	       (unsigned long long)((b.tv_sec - a.tv_sec) * 1000000000ull + b.tv_nsec - a.tv_nsec));
	return 0;
}
