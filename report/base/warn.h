/* SPDX-License-Identifier: MIT */
/*
 * Warnings on stderr, each at most once per process. One run can reach the same warning
 * several times: diff and multi-trace reports read several traces (and maybe one trace
 * twice), one archive can have several damaged entries, and fuzzers and tests run several
 * outputs in one process. A repeated line tells the user nothing new, so a line whose text
 * was already printed is dropped. One report at a time (process-wide state).
 */
#ifndef XPU_REPORT_BASE_WARN_H
#define XPU_REPORT_BASE_WARN_H

#include "base/containers.h"

/* Prints "xpu-report: " and the formatted text as one line, unless that line was printed. */
void warn__once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Strings from a trace (paths, names) are cut at this many bytes in messages: a hostile trace
 * names one 1 MiB path in each of thousands of records, and a message per record once wrote
 * gigabytes on stderr.
 */
#define WARN_STR_MAX 160
/* s for a message: s itself when it fits, else its head (whole characters) and "..." in buf. */
static inline const char *warn__cut(const char *s, char buf[WARN_STR_MAX + 4])
{
	return str__cut(s, WARN_STR_MAX, buf);
}

#endif
