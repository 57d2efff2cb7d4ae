// SPDX-License-Identifier: MIT
#include <stdio.h>

#include "human_bytes.h"

void human_bytes(char *buf, size_t size, uint64_t b)
{
	if (b >= 10ull << 20)
		snprintf(buf, size, "%.0f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 20)
		snprintf(buf, size, "%.1f MiB", (double)b / (1 << 20));
	else if (b >= 1 << 10)
		snprintf(buf, size, "%.1f KiB", (double)b / (1 << 10));
	else
		snprintf(buf, size, "%llu bytes", (unsigned long long)b);
}
