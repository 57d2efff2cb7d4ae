// SPDX-License-Identifier: MIT
/*
 * What the in-process walk's system-facing calls cost on this host (issue 38): clock_gettime
 * (CLOCK_MONOTONIC, the launch event's stamp) and sched_getcpu, each a vDSO call where the
 * clock source allows it and a system call otherwise. Prints ns per call and the clock source.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <time.h>

static double ns_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e9 + (double)(b->tv_nsec - a->tv_nsec);
}

int main(void)
{
	enum { N = 1000000 };
	struct timespec a, b, t;
	char src[64] = "?";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	long s = 0;
	int i;

	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = 0;
		fclose(f);
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < N; i++)
		clock_gettime(CLOCK_MONOTONIC, &t);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("clocksource %sclock_gettime %.1f ns\n", src, ns_between(&a, &b) / N);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < N; i++)
		s += sched_getcpu();
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("sched_getcpu %.1f ns (%ld)\n", ns_between(&a, &b) / N, s > 0 ? 1L : 0L);
	return 0;
}
