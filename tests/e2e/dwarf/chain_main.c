// SPDX-License-Identifier: MIT
/*
 * tests/e2e/test_dwarf.sh: main -> dw_deep -> dw_loop -> dw_main_1 -> dw_main_2 -> dw_main_3
 * -> dw_lib_a -> dw_lib_b -> dw_lib_c -> dw_leaf (in libdwchain.so), all without frame pointers. With -g dwarf the
 * whole chain must show; with -g fp it cannot. argv[1]: seconds of CPU time to run (default 2;
 * CPU time, not wall time, so a loaded machine does not cut the sample count); argv[2]:
 * frames of 1 KiB each between main and dw_main_1 (default 0), for a stack deeper than half the
 * copy size, whose outermost frames lie near the mapped top of the stack.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NOINLINE __attribute__((noinline))

unsigned long dw_lib_a(unsigned long n);

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

NOINLINE unsigned long dw_main_3(unsigned long n)
{
	return dw_lib_a(n + 3) * 5;
}

NOINLINE unsigned long dw_main_2(unsigned long n)
{
	return dw_main_3(n << 1) + 11;
}

NOINLINE unsigned long dw_main_1(unsigned long n)
{
	return dw_main_2(n | 1) ^ 0xabc;
}

NOINLINE unsigned long dw_loop(double end)
{
	unsigned long acc = 0, i = 0;

	while (now_s() < end)
		acc += dw_main_1(i++);
	return acc;
}

/* touched, so every page of the deep stack is present when BPF copies it */
NOINLINE unsigned long dw_deep(int n, double end)
{
	volatile char pad[1024];

	memset((char *)pad, n, sizeof(pad));
	return (n > 0 ? dw_deep(n - 1, end) : dw_loop(end)) + pad[n & 1023];
}

int main(int argc, char **argv)
{
	double end = now_s() + (argc > 1 ? atof(argv[1]) : 2.0);
	int depth = argc > 2 ? atoi(argv[2]) : 0;

	return dw_deep(depth < 0 || depth > 100 ? 0 : depth, end) == 42;	/* never */
}
