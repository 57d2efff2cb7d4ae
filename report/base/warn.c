// SPDX-License-Identifier: MIT
/* Warnings printed once per process (see warn.h). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base/progress.h"
#include "base/warn.h"
#include "fnv1a.h"

/*
 * Lines are remembered by a 64-bit hash, in a fixed table: a report prints a handful of
 * warnings, and past the table's end a line is printed again rather than memory growing.
 */
#define WARN_SEEN_MAX 256

static struct {
	uint64_t hash[WARN_SEEN_MAX];
	unsigned int n;
} seen;

/* Whether the line was printed before; remembers it if not. */
static bool seen_before(const char *line)
{
	uint64_t h = fnv1a64_str(FNV1A64_OFFSET, line);
	unsigned int i;

	for (i = 0; i < seen.n; i++) {
		if (seen.hash[i] == h)
			return true;
	}
	if (seen.n < WARN_SEEN_MAX)
		seen.hash[seen.n++] = h;
	return false;
}

void warn__once(const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (seen_before(line))
		return;
	progress__end();	/* the warning starts on a clean line */
	fprintf(stderr, "xpu-report: %s\n", line);
}
