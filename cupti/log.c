// SPDX-License-Identifier: MIT
/* Diagnostics of the injected library: it must never be chatty inside someone else's program. */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "xpu_cupti.h"

bool xc_verbose;

void xc_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	n = snprintf(line, sizeof(line), "xpu-cupti: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write() so lines of several processes do not interleave */
	if (write(STDERR_FILENO, line, n) < 0)
		return;
}
