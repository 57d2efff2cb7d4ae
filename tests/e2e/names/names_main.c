// SPDX-License-Identifier: MIT
/*
 * Four phases of CPU work, each naming frames a different way (tests/e2e/test_names.sh):
 * calls through a PLT stub, clock_gettime in the vdso, a function of a stripped library, and
 * a function with a callee inlined into it. Each phase runs for the seconds given (0.4 default).
 */
#include <stdlib.h>
#include <time.h>

int trivial(int x);
unsigned long stripped_entry(unsigned long n);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline __attribute__((always_inline)) unsigned long inner_work(unsigned long n)
{
	volatile unsigned long s = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		s += i * i % 13;
	return s;
}

__attribute__((noinline)) unsigned long outer_fn(unsigned long n)
{
	return inner_work(n) ^ 3;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.4, end;
	volatile unsigned long sink = 0;
	int i;

	for (end = now_s() + secs; now_s() < end;)
		for (i = 0; i < 100000; i++)
			sink += trivial(i);
	for (end = now_s() + secs; now_s() < end;)
		;
	for (end = now_s() + secs; now_s() < end;)
		sink += stripped_entry(100000);
	for (end = now_s() + secs; now_s() < end;)
		sink += outer_fn(100000);
	return sink == 42;
}
