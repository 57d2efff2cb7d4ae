// SPDX-License-Identifier: MIT
/* For test_pack_gone.sh: a library whose one function (named by -DSPIN=...) works CPU time. */
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) void SPIN(double cpu_s)
{
	clock_t end = clock() + (clock_t)(cpu_s * CLOCKS_PER_SEC);

	while (clock() < end)
		for (int i = 0; i < 10000; i++)
			sink += i;
}
