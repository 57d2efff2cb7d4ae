// SPDX-License-Identifier: MIT
/* Loaded by cpu_burn with dlopen(), so its samples can only be symbolized if xpu-record
 * notices the mapping that appears at run time. */
#include <stdint.h>

__attribute__((noinline)) uint64_t plugin_work(uint64_t n)
{
	volatile uint64_t x = 1;
	uint64_t i;

	for (i = 0; i < n; i++)
		x = x * 2862933555777941757ull + 3037000493ull;
	return x;
}
