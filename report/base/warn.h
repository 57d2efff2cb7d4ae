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

/* Prints "xpu-report: " and the formatted text as one line, unless that line was printed. */
void warn__once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
