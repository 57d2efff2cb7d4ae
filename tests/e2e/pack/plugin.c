// SPDX-License-Identifier: MIT
/* A plugin loaded with dlopen whose functions are static: once stripped, only its debug file names them. */
#include <time.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void plugin_inner_loop(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * i;
}

static __attribute__((noinline)) void plugin_outer(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		plugin_inner_loop(100000);
}

void plugin_work(double seconds)
{
	plugin_outer(seconds);
}
