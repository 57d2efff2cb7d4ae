// SPDX-License-Identifier: MIT
/* Calls nocfi_burn (nocfi_leaf.c) for SECS seconds of CPU time: nocfi_main [SECS] */
#include <stdlib.h>
#include <time.h>

void nocfi_burn(unsigned long n);

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void outer_caller(void)
{
	nocfi_burn(1000000);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0, t0 = cpu_s();

	while (cpu_s() - t0 < secs)
		outer_caller();
	return 0;
}
