// SPDX-License-Identifier: MIT
/*
 * Calls nocfi_burn (nocfi_leaf.c) for SECS seconds of CPU time, or with "nap" nocfi_nap (5 ms
 * sleeps) for SECS seconds of wall time; with "expr" or "exprnap" the same through
 * cfiexpr_call (cfiexpr_call.S), whose frame the walk in BPF cannot step out of:
 *   nocfi_main [SECS] [nap|expr|exprnap]
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void nocfi_burn(unsigned long n);
void nocfi_nap(long ms);
void cfiexpr_call(void (*fn)(unsigned long), unsigned long arg);

static double clock_s(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void outer_caller(void)
{
	nocfi_burn(1000000);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void outer_napper(void)
{
	nocfi_nap(5);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void outer_expr(int nap)
{
	if (nap)
		cfiexpr_call((void (*)(unsigned long))nocfi_nap, 5);
	else
		cfiexpr_call(nocfi_burn, 1000000);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	const char *mode = argc > 2 ? argv[2] : "";
	bool nap = strstr(mode, "nap"), expr = !strncmp(mode, "expr", 4);
	clockid_t clock = nap ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID;
	double t0 = clock_s(clock);

	while (clock_s(clock) - t0 < secs) {
		if (expr)
			outer_expr(nap);
		else if (nap)
			outer_napper();
		else
			outer_caller();
	}
	return 0;
}
